#!/usr/bin/env python3
"""Whole corpus models on every way the CPU backend computes, byte for byte.

Every corpus file whose plan runs whole (`nbg run --backend cpu --check
--json`: runs_whole) is run on one input of deterministic random bytes
(each input record's byte size, Python's generator seeded by the CRC-32
of the file's name) four ways: `--kernels portable --threads 1`, the reference, and the
default kernels (the CPU's vector instructions where this build and CPU
have them: lib/cpu/ops/conv_fast.h) on 1, 2 and 3 threads.  Every output
record of the three must be the reference's bytes.  The expected bytes
come from the portable kernels, an independent implementation (scalar
loops, one thread) that the tests cpu-conv and cpu-nn check against a
direct convolution and numpy.  A file that does not run whole is printed
with the backend's reason, never silently passed over.

Tiers (--tier): corpus, the files whose plan's work (totals.work) is at
most 2^26 steps, cheap under ASan; slow, the others (the image
classification networks, yolov8n, retinaface: seconds each natively);
no --tier: both.

Usage: check_cpu_paths.py NBG CORPUS_DIR [--tier corpus|slow]   (exit 77,
SKIP, when CORPUS_DIR is absent).
"""
import glob
import json
import os
import random
import sys
import tempfile
import zlib

import check_cpu as cc

CORPUS_WORK = 1 << 26
WAYS = [("portable kernels, 1 thread", ["--kernels", "portable", "--threads", "1"]),
        ("default kernels, 1 thread", ["--threads", "1"]),
        ("default kernels, 2 threads", ["--threads", "2"]),
        ("default kernels, 3 threads", ["--threads", "3"])]


def outputs(nbg, model, inputs, extra, tmp):
    """{record index: bytes} of one run, or the failure's text."""
    od = tempfile.mkdtemp(dir=tmp)
    args = [nbg, "run", "--backend", "cpu", model, "--output-dir", od] + extra
    for p in inputs:
        args += ["--input", p]
    r = cc.run(args)
    if r.returncode != 0:
        return "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])
    got = {}
    for f in sorted(glob.glob(os.path.join(od, "output_*.bin"))):
        with open(f, "rb") as fh:
            got[os.path.basename(f)] = fh.read()
    return got if got else "no output_*.bin written"


def judge(nbg, corpus, model, tmp, failures, figures):
    name = os.path.relpath(model, corpus)
    doc = json.loads(cc.run([nbg, "inspect", "--json", model]).stdout)
    rng = random.Random(zlib.crc32(name.encode()))
    inputs = []
    for rec in doc["inputs"]:
        p = os.path.join(tmp, "in_%d.bin" % len(inputs))
        with open(p, "wb") as fh:
            fh.write(rng.randbytes(rec["byte_size"]))
        inputs.append(p)
    ref = None
    for what, extra in WAYS:
        got = outputs(nbg, model, inputs, extra, tmp)
        if isinstance(got, str):
            failures.append("%s: the run with %s failed: %s" % (name, what, got))
            return
        if ref is None:
            ref = got
            continue
        for rec in sorted(ref):
            if got.get(rec) != ref[rec]:
                a, b = ref[rec], got.get(rec, b"")
                first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
                failures.append("%s: %s with %s differs from the portable kernels' from byte %d on" %
                                (name, rec, what, first))
    figures.append("%s: %d output records, the same bytes four ways" % (name, len(ref)))


def main():
    argv, tier = cc.tier_of(sys.argv)
    if len(argv) != 3:
        sys.exit("usage: check_cpu_paths.py NBG CORPUS_DIR [--tier corpus|slow]")
    nbg, corpus = argv[1:]
    from tc_corpus import need
    need("check_cpu_paths", "the whole-model comparisons", corpus)
    models = sorted(glob.glob(os.path.join(corpus, "v*", "*.nb")))
    if not models:
        print("SKIP: no corpus files under %s" % corpus)
        sys.exit(cc.SKIP)
    failures, figures, judged = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            name = os.path.relpath(m, corpus)
            plan = json.loads(cc.run([nbg, "run", "--backend", "cpu", "--check", "--json", m]).stdout)
            if not plan.get("runs_whole"):
                print("%s: not judged: it does not run whole (%s)" %
                      (name, (plan.get("refusal") or {}).get("message")))
                continue
            part = "corpus" if plan["totals"]["work"] <= CORPUS_WORK else "slow"
            if not cc.in_tier(tier, part):
                print("%s: judged in the %s tier (work %d steps)" % (name, part, plan["totals"]["work"]))
                continue
            judge(nbg, corpus, m, tmp, failures, figures)
            judged += 1
    if not judged:
        failures.append("no corpus file of this tier runs whole")
    cc.finish(figures, failures)


if __name__ == "__main__":
    main()
