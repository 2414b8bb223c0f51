#!/usr/bin/env python3
"""The CPU backend's NN-engine additions against references no C code here
computes: strided convolutions and the 32-bit kernels on the image_classify
family (10014_*_image_classify_* in corpus/v1: one MobileNet-like network
compiled by one toolkit version for several targets).

1. Per operation, against numpy (check_cpu.py's reference, from the decoded
   fields alone; an operation whose subsampling the decoder infers from the
   output row pitch takes the convolution at even x and y): the first NN
   operations of the 0xe8 file (strided conv 3x3x3 -> 32 on 224x224, strided
   depthwise convolutions, 1x1 convolutions), the first of the 0x1000000e
   file (a row tile of the same layer) and of the 0xb9 file (first-pixel
   pooling, depthwise tiles).  Byte for byte, and no other byte of any buffer changes.
2. Across targets: the first layer (conv 3x3x3 -> 32, stride 2) is a
   strided convolution with no pooling field in the 0xe8 file and a
   convolution with first-pixel pooling (`pooling` 3) in the 0xbe and 0xb9
   files.  On the same synthesized inputs its output must be equal byte for
   byte on the three, and the output of layer 27 (1024 values, after 28
   layers, 6 of them strided) equal on 0xe8 and 0xbe.  The
   subsampling at odd x and y, which the same bytes would also allow, is
   computed too and must differ (the comparison can tell them apart).
3. The first 0x1000000e layer-0 tile equals row 0 of the 0xbe file's
   layer 0 (the other tiles, and the 0xb9 file's: tests/check_cpu_tiles.py).

Tiers (--tier, check_cpu.tier_of): corpus runs the first 4, 1 and 2 NN
operations of part 1 (PER_OP), part 2's layer 0 and part 3 on the first
input; slow the next operations of part 1, part 2's layer 0 and part 3 on
the second input, and part 2's layer 27 (most of the network).  No
--tier: both.

Usage: check_cpu_nn.py NBG DUMP --corpus DIR [--tier corpus|slow] (exit 77
when the files or Debian's python3-numpy are missing).
"""
import json
import os
import sys
import tempfile

import check_cpu as cc

SKIP = 77
E8 = "v1/10014_e8_image_classify_e8_T982.nb"
BE = "v1/10014_be_image_classify_be_C305X.nb"
B9 = "v1/10014_b9_image_classify_b9_T962.nb"
X2 = "v1/10014_1000000e_image_classify_1e_A311X2.nb"

_reference_op = cc.reference_op


def reference_op(op, f, w, bias, before, target):
    """check_cpu's reference, subsampled by 2 where the decoder infers a
    stride from the row pitch and no pooling field is set (doc/cpu-backend.md)."""
    out = _reference_op(op, f, w, bias, before, target)
    if op.get("output_subsample_inferred") and op["pooling"] == "none":
        if op["output_subsample"] != 2:
            raise ValueError("subsampling by %d has no reference here" % op["output_subsample"])
        px, py = op["output"][0], op["output"][1]
        out = out[:, ::2, ::2][:, :py, :px]
    return out


cc.reference_op = reference_op


def synth(tmp, count):
    """count 224x224x3 planar images: smoothed noise and gradients."""
    import numpy as np
    rng = np.random.default_rng(2028)
    paths = []
    for i in range(count):
        if i % 2 == 0:
            im = rng.integers(0, 256, (3, 224, 224)).astype(np.int64)
            im = (im + np.roll(im, 1, 1) + np.roll(im, 1, 2) + np.roll(im, (1, 1), (1, 2))) // 4
        else:
            yy, xx = np.mgrid[0:224, 0:224]
            im = np.stack([xx, yy, (xx + yy) // 2]) + rng.normal(0, 12, (3, 224, 224))
        p = os.path.join(tmp, "ic_in_%d.bin" % i)
        np.clip(np.rint(im), 0, 255).astype(np.uint8).tofile(p)
        paths.append(p)
    return paths


_DOCS = {}


def op_of(nbg, model, n):
    if (nbg, model) not in _DOCS:
        r = cc.run([nbg, "inspect", "--commands", "--json", model])
        if r.returncode != 0:
            sys.exit("nbg inspect failed: %s" % r.stderr)
        _DOCS[(nbg, model)] = json.loads(r.stdout)
    return [o for o in _DOCS[(nbg, model)]["commands"]["operations"] if o["operation"] == n][0]


def output_after(nbg, dumper, model, n, path, tmp):
    op = op_of(nbg, model, n)
    bufs = cc.dump(dumper, model, n + 1, [path], tmp)
    return op, cc.read_output(op, bufs), bufs


def check_cross_target(nbg, dumper, corpus, paths, tmp, failures, figures):
    import numpy as np
    e8, be, b9 = (os.path.join(corpus, f) for f in (E8, BE, B9))
    first = [(e8, 1), (be, 1), (b9, 1)]
    equal = total = odd_equal = nonzero = 0
    doc, weights, wdir = cc.model_info(nbg, e8, tmp)
    for p in paths:
        cc.prefetch(dumper, e8, [1, 2], [p], tmp)
        outs = [output_after(nbg, dumper, m, n, p, tmp) for m, n in first]
        op = outs[0][0]
        if not (op.get("output_subsample_inferred") and op["pooling"] == "none" and
                outs[1][0]["pooling"] == "first-pixel" and outs[2][0]["pooling"] == "first-pixel"):
            failures.append("image_classify: layer 0 is not strided on 0xe8 and first-pixel "
                            "pooled on 0xbe and 0xb9")
            return
        for _, q, _ in outs[1:]:
            total += 1
            equal += int(np.array_equal(outs[0][1], q))
        nonzero += int((outs[0][1] > 0).sum())
        # the other phase: the 0xe8 convolution (numpy reference, from the
        # decoded fields) at odd x and y
        wo = weights[1]
        f = dict(doc["commands"]["nn"]["commands"][op["command"]]["fields"])
        f["coef_zero_point"] = wo["zero_point"]
        f["_interleaved"] = cc.interleaved(doc, op)
        w = np.load(os.path.join(wdir, wo["files"]["weights"]))
        b = np.load(os.path.join(wdir, wo["files"]["bias"]))
        before = cc.dump(dumper, e8, 1, [p], tmp)
        full = _reference_op(op, f, w, b, before, doc["target"])
        odd = full[:, 1::2, 1::2]
        odd_equal += int(np.array_equal(odd, outs[1][1][:, :odd.shape[1], :odd.shape[2]]))
    figures.append("image_classify layer 0 (conv 3x3x3 -> 32, stride 2), %d inputs: the 0xe8 "
                   "strided convolution equals the 0xbe and 0xb9 first-pixel pooled one in %d of "
                   "%d comparisons (%d non-zero values); the odd-phase subsampling equals it in %d" %
                   (len(paths), equal, total, nonzero, odd_equal))
    if equal != total or nonzero < 500 * len(paths):
        failures.append("image_classify layer 0: %d of %d equal across targets, %d non-zero" %
                        (equal, total, nonzero))
    if odd_equal:
        failures.append("image_classify layer 0: the odd-phase subsampling also matches, so the "
                        "comparison does not fix the phase")

def check_layer27(nbg, dumper, corpus, paths, tmp, failures, figures):
    """Part 2's layer 27 (after 28 layers: most of the network)."""
    import numpy as np
    e8, be = (os.path.join(corpus, f) for f in (E8, BE))
    same = 0
    values = set()
    for p in paths:
        _, a, _ = output_after(nbg, dumper, e8, 33, p, tmp)
        _, c, _ = output_after(nbg, dumper, be, 35, p, tmp)
        same += int(np.array_equal(a, c))
        values |= set(a.ravel().tolist())
    figures.append("image_classify layer 27 (1024 values after 28 layers, 6 of them strided: 7 "
                   "operations of 0xe8 subsampled by the inferred rule), 0xe8 against 0xbe: equal byte for byte on %d of %d inputs (%d "
                   "distinct values)" % (same, len(paths), len(values)))
    if same != len(paths) or len(values) < 16:
        failures.append("image_classify layer 27: equal on %d of %d inputs, %d distinct values" %
                        (same, len(paths), len(values)))


def check_tiles(nbg, dumper, corpus, paths, tmp, failures, figures):
    """The 0x1000000e file cuts layer 0 into row tiles; its first tile
    (output row 0, nothing before it) must equal row 0 of the 0xbe file's
    layer 0."""
    import numpy as np
    x2, be = (os.path.join(corpus, f) for f in (X2, BE))
    same = 0
    for p in paths:
        _, t, _ = output_after(nbg, dumper, x2, 1, p, tmp)
        _, ref, _ = output_after(nbg, dumper, be, 1, p, tmp)
        same += int(t.shape[1] == 1 and np.array_equal(t[:, 0], ref[:, 0]))
    figures.append("image_classify 0x1000000e: the first layer-0 tile (output row 0) equals the "
                   "0xbe file's row 0 on %d of %d inputs" % (same, len(paths)))
    if same != len(paths):
        failures.append("0x1000000e first tile: equal to 0xbe row 0 on %d of %d inputs" %
                        (same, len(paths)))


# (file, NN operations checked per operation against numpy: the corpus
# tier the first of them, the slow tier the others)
PER_OP = ((E8, 10, 4), (X2, 1, 1), (B9, 4, 2))


def main():
    argv, tier = cc.tier_of(sys.argv)
    if len(argv) != 5 or argv[3] != "--corpus":
        sys.exit("usage: check_cpu_nn.py NBG DUMP --corpus DIR [--tier corpus|slow]")
    nbg, dumper, corpus = argv[1], argv[2], argv[4]
    for need in (E8, BE, B9, X2):
        if not os.path.exists(os.path.join(corpus, need)):
            print("check_cpu_nn: skipped: %s does not exist (the meson option corpus_dir "
                  "points at the real files)" % os.path.join(corpus, need))
            sys.exit(SKIP)
    from check_weights_lenet import imports
    imports()
    failures, figures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        paths = synth(tmp, 2)
        for name, n, first in PER_OP:
            lo, hi = {"corpus": (0, first), "slow": (first, n), "all": (0, n)}[tier]
            if lo == hi:
                continue
            cc.check_ops(nbg, dumper, os.path.join(corpus, name), [[paths[0]]], tmp, failures,
                         figures, max_ops=hi, skip=lo)
            checked = int(figures[-1].split(" of ")[1].split()[0])
            if checked != hi - lo:
                failures.append("%s: %d NN operations checked, expected %d" % (name, checked, hi - lo))
        # layer 0 across targets and the first tile: the corpus tier on the
        # first input, the slow tier on the second; layer 27 in the slow tier
        some = cc.split(paths, tier, paths[:1])
        check_cross_target(nbg, dumper, corpus, some, tmp, failures, figures)
        check_tiles(nbg, dumper, corpus, some, tmp, failures, figures)
        if cc.in_tier(tier, "slow"):
            check_layer27(nbg, dumper, corpus, paths, tmp, failures, figures)
    print("\n".join(figures + ["FAIL: " + f for f in failures]))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
