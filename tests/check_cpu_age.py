#!/usr/bin/env python3
"""The face-age network's deltas across its compilations (doc/cpu-backend.md,
"The uint8 product and the tanh shader", "Lookup tables into fp16").

A family is check_cpu_cross.py's (MANIFEST.tsv's names).  In each file, the
operations the plan executes as a tanh shader (`SH tanh` in `nbg run
--check --json`) or as a TP lookup table into fp16 (`TP lut ... -> fp16`:
the local deltas) with no refused operation before them write an fp16
output record (the data flow's output edge).  Each file runs up to past
each such operation (nbg-cpu-dump) on the same synthesized inputs (uniform
random, a smooth pattern with two rectangles, a ramp, five normal images;
the corpus tier the first two), and the halves written are compared with
the family's first such file's for the same output record: the two
compilations quantize their intermediate images differently (their
TensorMul scales differ) but share the output records, so the deltas must
agree within TOLERANCE; and the values must not be degenerate (fewer than
half zero).  Never a list of files: a file joins by its name and its plan.

Usage: check_cpu_age.py NBG DUMP CORPUS_DIR [--tier corpus|slow]  (exit 77
when CORPUS_DIR is absent or Debian's python3-numpy cannot be imported).
"""
import json
import os
import tempfile

import check_cpu as cc
import check_cpu_cross as cx

# The largest difference measured between the 0x7d and 0xe8 files' deltas
# (tanh values in [-1, 1]) on the slow tier's eight inputs is 0.101, the
# second stage's (output 7, the smooth pattern); the first stage's is
# 0.077, the local deltas' 0.00025 (doc/cpu-backend.md).
TOLERANCE = 0.15


def tanh_ops(nbg, path):
    """[(operation, output record index)] of the executed tanh shaders and
    lookup tables into fp16 with nothing refused before them."""
    r = cc.run([nbg, "run", "--backend", "cpu", "--check", "--json", path])
    doc = json.loads(r.stdout)
    edges = cc.inspect_many(nbg, [path], "--commands")[path]["commands"]["edges"]
    outs = {e["from"]: e["to"] for e in edges if e["kind"] == "output"}
    found = []
    for st in doc["steps"]:
        if st["verdict"] == "refused":
            break
        tanh = st["what"].startswith("SH tanh") or (st["what"].startswith("TP lut") and "-> fp16" in st["what"])
        if st["verdict"] == "execute" and tanh and st["operation"] in outs:
            found.append((st["operation"], outs[st["operation"]]))
    return found


def inputs(n, tier):
    import numpy as np
    rng = np.random.default_rng(2026)
    t = np.arange(n) / (n - 1)
    smooth = 0.5 + 0.5 * np.sin(40 * t) * np.cos(7 * t)
    smooth[n // 5:n // 3] = 0.9
    smooth[n // 2:2 * n // 3] = 0.1
    sets = [rng.integers(0, 256, n, dtype=np.uint8), np.round(smooth * 255).astype(np.uint8),
            np.round(t * 255).astype(np.uint8)]
    sets += [np.clip(rng.normal(128, 50, n), 0, 255).astype(np.uint8) for _ in range(5)]
    return sets[:2] if tier == "corpus" else sets


def main():
    nbg, dumper, corpus, tier = cx.start("check_cpu_age", "NBG_AGE_REEXEC",
                                         "the check needs Debian's python3-numpy")
    import numpy as np
    fams = {}
    for name, _ in cx.manifest(corpus):
        fams.setdefault(cx.family(name), []).append(os.path.join(corpus, name))
    failures, figures, pairs = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for fam in sorted(fams):
            files = [(p, tanh_ops(nbg, p)) for p in sorted(fams[fam]) if "face_age" in fam]
            files = [(p, t) for p, t in files if t]
            if len(files) < 2:
                continue
            recs = cx.records(nbg, [p for p, _ in files])
            n = recs[files[0][0]][0][0]["byte_size"]
            size = {path: {r["index"]: r["byte_size"] for r in recs[path][1]} for path, _ in files}
            values = {}
            for path, ops in files:
                if len(recs[path][0]) != 1 or recs[path][0][0]["byte_size"] != n:
                    print("%s: %s not judged: its input records differ" % (fam, cx.rel(path)))
                    continue
                for k, img in enumerate(inputs(n, tier)):
                    f = os.path.join(tmp, "in_%d.bin" % k)
                    img.tofile(f)
                    for op, rec in ops:
                        bufs = cc.dump(dumper, path, op + 1, [f], tmp)
                        v = np.frombuffer(bufs[("OUTPUT", rec)][:size[path][rec]].tobytes(), "<f2")
                        values.setdefault(rec, {}).setdefault(path, []).append(v.astype(np.float64))
            for rec in sorted(values):
                got = values[rec]
                first = sorted(got)[0]
                for path in sorted(got)[1:]:
                    a, b = np.array(got[first]), np.array(got[path])
                    d = float(np.abs(a - b).max())
                    pairs += 1
                    figures.append("%s: output %d (tanh, fp16, %d values) of %s against %s on %d inputs: "
                                   "largest difference %.4f, mean %.4f (values %.3f..%.3f, %d distinct "
                                   "over the inputs)" %
                                   (fam, rec, a.shape[1], cx.rel(path), cx.rel(first), len(a), d,
                                    float(np.abs(a - b).mean()), float(a.min()), float(a.max()),
                                    len({x.tobytes() for x in a})))
                    if d > TOLERANCE:
                        failures.append("%s: output %d of %s differs from %s's by %.4f" %
                                        (fam, rec, cx.rel(path), cx.rel(first), d))
                for path, v in got.items():
                    if int((np.array(v) == 0).sum()) * 2 > np.array(v).size:
                        failures.append("%s: output %d of %s is 0 on most inputs: degenerate" %
                                        (fam, rec, cx.rel(path)))
    if not pairs:
        failures.append("no two face-age files run up to a tanh shader or a lookup table into fp16")
    cc.finish(figures, failures)


if __name__ == "__main__":
    main()
