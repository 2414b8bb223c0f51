#!/usr/bin/env python3
"""check_goldens.py - the CPU backend against what real boards computed.

GOLDENS_DIR (../shared/goldens) holds, per folder, what a board's NPU wrote
for a model and an input, with the board's vpm_run job file (sample.txt);
its README.md names, in the folder's section, the corpus file the board ran
(`corpus/...nb`, byte for byte the board's model).  For every folder: `nbg
run --backend cpu MODEL --input ...` with the job's [input] files must
write each output byte for byte as the job's [golden] file holds it -- the
board's own output, an independent derivation of everything the CPU
backend computes, rounding included.

usage: check_goldens.py NBG_BIN GOLDENS_DIR CORPUS_DIR
Exit 77 (skip, with the reason) when the directories are absent.
"""
import os
import re
import subprocess
import sys
import tempfile

import tc_corpus
from exe_wrapper import command


def job(sample):
    """The first network's [input] and [golden] file names (without the
    board's directories) of a vpm_run job file."""
    sections, cur, networks = {}, None, 0
    for line in open(sample, encoding="utf-8", errors="replace"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"\[(\w+)\]", line)
        if m:
            cur = m.group(1).lower()
            networks += cur == "network"
            if networks > 1:
                break
            continue
        if cur:
            sections.setdefault(cur, []).append(os.path.basename(line))
    return sections.get("input", []), sections.get("golden", [])


def models(readme):
    """Folder name -> the corpus file its README section names."""
    out, folder = {}, None
    for line in open(readme, encoding="utf-8"):
        m = re.match(r"## (\S+)/\s*$", line)
        if m:
            folder = m.group(1)
        m = re.search(r"`corpus/([^`]+\.nb)`", line)
        if folder and m and folder not in out:
            out[folder] = m.group(1)
    return out


def main():
    nbg, goldens, corpus = command(sys.argv[1]), sys.argv[2], sys.argv[3]
    tc_corpus.need("check_goldens.py", "board goldens", goldens)
    tc_corpus.need("check_goldens.py", "board goldens", corpus)
    failed = judged = 0
    for folder, model in sorted(models(os.path.join(goldens, "README.md")).items()):
        d = os.path.join(goldens, folder)
        inputs, golden = job(os.path.join(d, "sample.txt"))
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([*nbg, "run", "--backend", "cpu", os.path.join(corpus, model),
                                "--input", *[os.path.join(d, i) for i in inputs],
                                "--output-dir", tmp], capture_output=True, text=True)
            if r.returncode != 0:
                print("FAIL %s: nbg run exit %d: %s" % (folder, r.returncode, r.stderr.strip()))
                failed += 1
                continue
            for i, g in enumerate(golden):
                got = open(os.path.join(tmp, "output_%d.bin" % i), "rb").read()
                want = open(os.path.join(d, g), "rb").read()
                same = sum(a == b for a, b in zip(got, want))
                ok = got == want
                print("%s %s: output %d, %d bytes, %d equal to the board's %s" %
                      ("ok  " if ok else "FAIL", folder, i, len(got), same, g))
                failed += not ok
                judged += 1
    if not judged:
        print("FAIL no golden judged: %s names no folder with a corpus model" % goldens)
        failed += 1
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
