#!/usr/bin/env python3
"""check_cpu_coverage_doc.py NBG CORPUS_DIR DOC - the CPU coverage table of
DOC (doc/cpu-coverage.md, between its "cpu coverage" markers) is what
scripts/cpu-coverage.py prints from this build's `nbg probe --json` over the
corpus: the table a user reads is the backend's current plan, not an old
copy.  Skips (77) without the corpus."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "scripts"))


def main():
    nbg, corpus, doc = sys.argv[1:4]
    if not os.path.isdir(os.path.join(corpus, "v1")):
        print("SKIP: the corpus directory %s does not exist (sh scripts/fetch-corpus.sh, or "
              "-Dcorpus_dir=DIR)" % corpus)
        return 77
    import importlib
    cov = importlib.import_module("cpu-coverage")
    want = cov.table(nbg, corpus)
    text = open(doc, encoding="utf-8").read()
    name = os.path.basename(doc)
    begin, end = "<!-- BEGIN cpu coverage ../shared/corpus -->\n", "<!-- END cpu coverage ../shared/corpus -->"
    if begin not in text or end not in text:
        print("FAIL: %s has no cpu coverage block" % name)
        return 1
    have = text.split(begin, 1)[1].split(end, 1)[0]
    if have != want:
        hl, wl = have.splitlines(), want.splitlines()
        for i in range(max(len(hl), len(wl))):
            a = hl[i] if i < len(hl) else "(none)"
            b = wl[i] if i < len(wl) else "(none)"
            if a != b:
                print("FAIL: %s's CPU coverage table is stale at line %d:\n  doc:   %s\n  build: %s\n"
                      "run scripts/gen-docs.sh" % (name, i + 1, a, b))
                break
        return 1
    print("ok: %s's CPU coverage table matches this build over %d files" % (name, len(want.splitlines()) - 4))
    return 0


if __name__ == "__main__":
    sys.exit(main())
