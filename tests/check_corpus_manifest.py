#!/usr/bin/env python3
"""check_corpus_manifest.py - the committed file lists match the corpus.

tests/corpus/MANIFEST.tsv is the source of truth of scripts/fetch-corpus.sh
on a clone without the corpus; it must stay byte for byte the corpus's own
MANIFEST.tsv.  Then every file either list (MANIFEST.tsv, META.tsv) names
must be in the corpus with that size and SHA-256 (computed here with
hashlib), and every *.nb and *.meta.json of the corpus must be listed.
When the corpus directory does not exist the check is skipped: exit 77 with
the reason and how to get the files.

usage: check_corpus_manifest.py COMMITTED_LISTS_DIR CORPUS_DIR
Prints 'N passed, N failed' and exits non-zero on any failure.
"""
import hashlib
import os
import sys

import tc_corpus


def rows(path):
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    head = lines[0]
    return [dict(zip(head, l)) for l in lines[1:]]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    lists, corpus = sys.argv[1], sys.argv[2]
    tc_corpus.need("check_corpus_manifest.py", "comparing the file lists", corpus)
    passed = failed = 0

    def result(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL %s" % what)

    committed = os.path.join(lists, "MANIFEST.tsv")
    theirs = os.path.join(corpus, "MANIFEST.tsv")
    with open(committed, "rb") as a:
        mine = a.read()
    try:
        with open(theirs, "rb") as b:
            same = b.read() == mine
    except OSError as e:
        same = False
        print("cannot read %s: %s" % (theirs, e))
    result(same, "%s differs from %s: copy the corpus's manifest into the repository"
           % (committed, theirs))

    listed = set()
    for name in ("MANIFEST.tsv", "META.tsv"):
        for r in rows(os.path.join(lists, name)):
            f = r["file"]
            listed.add(f)
            p = os.path.join(corpus, f)
            if not os.path.isfile(p):
                result(False, "%s (listed in %s) is not in %s" % (f, name, corpus))
                continue
            size, digest = os.path.getsize(p), sha256(p)
            result(size == int(r["bytes"]) and digest == r["sha256"],
                   "%s: %d bytes, SHA-256 %s; %s says %s bytes, %s"
                   % (f, size, digest, name, r["bytes"], r["sha256"]))
    for sub in ("v1", "v2"):
        d = os.path.join(corpus, sub)
        for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if n.endswith(".nb") or n.endswith(".meta.json"):
                result(sub + "/" + n in listed, "%s/%s is in the corpus but in no list"
                       % (sub, n))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
