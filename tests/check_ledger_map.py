#!/usr/bin/env python3
"""check_ledger_map.py - `nbg map` draws valid SVG that shows every section.

For each file (every *.nb under the corpus directories given, plus single
files): `nbg ledger --json` gives the owner ranges and views; `nbg map
--svg` draws the picture; the SVG must parse as XML with an <svg> root, hold
one band per owner range in the log-scaled view, mark the final-512 view on
files of 512 bytes or more, and show every section name (sections that own
bytes and empty ones) in visible text.

usage: check_ledger_map.py NBG_BIN [--corpus DIR] PATH...
--corpus DIR adds DIR/v2 and DIR/v1 (the real corpus); when DIR does not
exist the check is skipped: exit 77 with the reason and how to get the files.
In a cross build nbg runs through the words of MESON_EXE_WRAPPER (qemu-user).
Prints 'N passed, N failed' and exits non-zero on any failure.
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import tc_corpus
from exe_wrapper import command

SVG = "{http://www.w3.org/2000/svg}"


def files_of(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in sorted(os.walk(p)):
                for n in sorted(names):
                    if n.endswith(".nb"):
                        yield os.path.join(root, n)
        else:
            yield p


def check(nbg, path, tmp):
    ledger = json.loads(subprocess.run([*nbg, "ledger", "--json", path], check=True,
                                       capture_output=True, text=True).stdout)
    out = os.path.join(tmp, "map.svg")
    subprocess.run([*nbg, "map", path, "--svg", out], check=True, capture_output=True)
    root = ET.parse(out).getroot()
    if root.tag != SVG + "svg":
        return "root element is %s, not svg" % root.tag
    texts = [
        "".join(t.itertext()) for t in root.iter(SVG + "text")
    ]
    alltext = "\n".join(texts)
    names = [r["owner"] for r in ledger["ranges"] if r["owner"].startswith("section ")]
    names += [v["name"] for v in ledger["views"] if v["kind"] == "empty-section"]
    missing = [n for n in names if n not in alltext]
    if missing:
        return "section names not shown: %s" % ", ".join(missing)
    bands = [g for g in root.iter(SVG + "g") if g.get("id") == "log"]
    if len(bands) != 1:
        return "no log-scaled band"
    owners = sum(1 for r in bands[0].findall(SVG + "rect") if r.get("class") == "owner")
    if owners != len(ledger["ranges"]):
        return "%d bands for %d owner ranges" % (owners, len(ledger["ranges"]))
    tail = [g for g in root.iter(SVG + "g") if g.get("id") == "tail-view"]
    if ledger["file_size"] >= 512 and len(tail) != 1:
        return "the final-512 view is not marked"
    for cls, t in ledger["totals"].items():
        if t["bytes"] and cls not in alltext:
            return "class %s missing from the legend" % cls
    return None


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    nbg = command(sys.argv[1])
    paths = tc_corpus.corpus_paths("check_ledger_map.py", sys.argv[2:])
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files_of(paths):
            try:
                problem = check(nbg, path, tmp)
            except (subprocess.CalledProcessError, ET.ParseError, ValueError) as e:
                problem = str(e)
            if problem:
                failed += 1
                print("FAIL %s: %s" % (path, problem))
            else:
                passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
