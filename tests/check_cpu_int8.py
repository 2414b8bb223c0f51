#!/usr/bin/env python3
"""The CPU backend on int8 data against the same network's uint8 build.

A corpus file whose NN operations decode int8 kernels is run beside its
twin, the file of another target carrying the same network in uint8
(found by the weights, check_weights_int8.find_twin: never a list of
files), on one synthetic image: smooth gradients and two rectangles,
x in [0, 1], quantized by each file's input record (dynamic fixed point
q = round(x 2^fl), affine q = round(x / scale) + zero point).  This is
corroboration, not bit-exactness: the two builds quantize differently.

Both run (nbg-cpu-dump) up to their first SH operation; when the two are
of one layer, the images it reads are compared: each of the int8 file's
with the twin's image of the same byte size it correlates with best
(Pearson, free of either build's scale and zero point).  Every such image
must correlate at 0.9 or more with a partner of its own, and better than
with any other image of that size.  When both files run whole (nbg run
--backend cpu), each output record is compared with the twin's of the same
index, dequantized by its record and put in the twin's axis order (equal
sizes keeping their order): their Pearson correlation must be 0.98 or
more, and of the twin's 1 % largest values at least 60 % must be among the
file's 1 % largest (a top-k agreement).  Where one does not run whole, the
test prints why.  An int8 file with no twin, or whose first SH operations differ, is
printed as not judged.  At least one int8 file must be judged.

Tiers (--tier): corpus compares the first SH operation's inputs (two
partial runs), slow the whole outputs (two whole runs: minutes under
ASan); no --tier: both.

Usage: check_cpu_int8.py NBG DUMP CORPUS_DIR [--tier corpus|slow]   (exit
77, SKIP, when CORPUS_DIR is absent or Debian's python3-numpy cannot be
imported).
"""
import json
import os
import sys
import tempfile

import check_cpu as cc
from check_weights_int8 import corpus_weights, find_twin, loader

MIN_CORR = 0.9
# whole outputs (corroboration bounds: yolov8n gives 0.991 to 0.995 and
# 0.78 to 0.88)
MIN_OUT_CORR, MIN_TOP_OVERLAP = 0.98, 0.6


def synthetic_image():
    """The test's image, [3][640][640] in [0, 1]."""
    import numpy as np
    y, x = np.mgrid[0:640, 0:640] / 639.0
    img = np.stack([0.5 + 0.5 * np.sin(6 * x + 2 * y), y, 0.5 + 0.5 * np.cos(9 * x * y)])
    img[:, 200:400, 250:420] = [[[0.9]], [[0.2]], [[0.1]]]
    img[:, 450:600, 50:200] = [[[0.1]], [[0.8]], [[0.9]]]
    return img


def quantized_input(rec, img, path):
    """img quantized by input record rec into path; False when the record
    is neither 3x640x640 nor of a quantization the test knows."""
    import numpy as np
    q = rec["quantization"]
    if rec["dimensions_outermost_first"][-3:] != list(img.shape):
        return False
    if rec["data_format_name"] == "INT8" and q["interpretation"] == "dynamic_fixed_point":
        v = np.clip(np.round(img * 2.0 ** q["fixed_point_position"]), -128, 127).astype(np.int8)
    elif rec["data_format_name"] == "UINT8" and q["interpretation"] == "affine":
        v = np.clip(np.round(img / q["scale"]) + q["zero_point"], 0, 255).astype(np.uint8)
    else:
        return False
    v.tofile(path)
    return True


def first_sh(nbg, model):
    """(operation, layer, [(source, index, offset, bytes) it reads]) of the
    model's first SH operation, None when it has none."""
    r = cc.run([nbg, "inspect", "--commands", "--only", "--json", model])
    if r.returncode != 0:
        sys.exit("nbg inspect --commands %s failed: %s" % (model, r.stderr))
    others = [o for o in json.loads(r.stdout)["commands"]["other_operations"] if o["type_name"] == "SH"]
    if not others:
        return None
    o = min(others, key=lambda o: o["operation"])
    reads = [(cc.key(ref), ref["offset"], ref["image_bytes"]) for ref in o["references"] if ref["role"] == "reads"]
    return o["operation"], o["layer_name"], reads


def dequantized(rec, raw):
    """An output record's bytes as values, shaped outermost first; None for
    a record of another kind."""
    import numpy as np
    q = rec["quantization"]
    if rec["data_format_name"] == "INT8" and q["interpretation"] == "dynamic_fixed_point":
        v = np.frombuffer(raw, dtype=np.int8).astype(np.float64) * 2.0 ** -q["fixed_point_position"]
    elif rec["data_format_name"] == "UINT8" and q["interpretation"] == "affine":
        v = (np.frombuffer(raw, dtype=np.uint8).astype(np.float64) - q["zero_point"]) * q["scale"]
    else:
        return None
    return v.reshape(rec["dimensions_outermost_first"])


def aligned(a, b):
    """a transposed to b's axis order when b's dimensions are a permutation
    of a's: each axis of b takes the first unused axis of a of its size
    (equal sizes keep their order); None when they are not."""
    left, perm = list(range(a.ndim)), []
    for n in b.shape:
        i = next((i for i in left if a.shape[i] == n), None)
        if i is None:
            return None
        left.remove(i)
        perm.append(i)
    return a.transpose(perm) if not left else None


def compare_outputs(name, twin, f, g, docs, inputs, nbg, tmp, failures, figures):
    """Both files run whole: each output record against the twin's of the
    same index: Pearson correlation at least MIN_OUT_CORR, and of the 1 %
    largest values of the twin's, at least MIN_TOP_OVERLAP among the 1 %
    largest of the file's."""
    import numpy as np
    outs = {}
    for m in (f, g):
        d = tempfile.mkdtemp(dir=tmp)
        r = cc.run([nbg, "run", "--backend", "cpu", m, "--input", inputs[m], "--output-dir", d])
        if r.returncode != 0:
            failures.append("%s: nbg run --backend cpu failed (%d): %s" % (m, r.returncode, r.stderr))
            return
        outs[m] = [open(os.path.join(d, "output_%d.bin" % rec["index"]), "rb").read() for rec in docs[m]["outputs"]]
    if len(outs[f]) != len(outs[g]):
        print("%s: outputs not compared: %d records against %s's %d" % (name, len(outs[f]), twin, len(outs[g])))
        return
    for k, (ra, rb) in enumerate(zip(docs[f]["outputs"], docs[g]["outputs"])):
        a, b = dequantized(ra, outs[f][k]), dequantized(rb, outs[g][k])
        a = aligned(a, b) if a is not None and b is not None else None
        if a is None:
            print("%s output %d: not compared: its record and %s's are not int8 and uint8 of one shape up "
                  "to the axes' order" % (name, k, twin))
            continue
        a, b = a.ravel(), b.ravel()
        c = float(np.corrcoef(a, b)[0, 1])
        n = max(1, a.size // 100)
        top = len(set(np.argsort(a)[-n:]) & set(np.argsort(b)[-n:])) / n
        figures.append("%s output %d against %s's: correlation %.4f, the 1%% largest values (%d) shared "
                       "%.3f, largest value at the same place: %s" % (name, k, twin, c, n, top,
                                                                      a.argmax() == b.argmax()))
        if not (c >= MIN_OUT_CORR and top >= MIN_TOP_OVERLAP):
            failures.append("%s output %d: correlation %.4f (at least %.2f) and top 1%% shared %.3f (at "
                            "least %.2f) against %s" % (name, k, c, MIN_OUT_CORR, top, MIN_TOP_OVERLAP,
                                                        twin))


def runs_whole(nbg, model):
    r = cc.run([nbg, "run", "--backend", "cpu", "--check", "--json", model])
    d = json.loads(r.stdout)
    return d.get("runs_whole"), (d.get("refusal") or {}).get("message")


def compare_reads(name, twin, a, b, bufs_a, bufs_b, failures, figures):
    """The images the first SH operation reads in a (int8) against b's."""
    import numpy as np
    imgs_b = [(k, off, n, bufs_b[k][off:off + n].astype(np.float64)) for k, off, n in b[2]]
    used = set()
    for k, off, n in a[2]:
        x = bufs_a[k][off:off + n].view(np.int8).astype(np.float64)
        cands = [(float(np.corrcoef(x, y)[0, 1]), i) for i, (_, _, m, y) in enumerate(imgs_b)
                 if m == n and x.std() > 0 and y.std() > 0]
        if not cands:
            failures.append("%s op %d: no image of %d bytes read by %s op %d" % (name, a[0], n, twin, b[0]))
            continue
        cands.sort(reverse=True)
        best, i = cands[0]
        others = ", ".join("%.3f" % c for c, _ in cands[1:])
        figures.append("%s op %d (%s) reads %s+0x%x: correlation with %s op %d's %s+0x%x %.4f (others %s)" %
                       (name, a[0], a[1], k[0], off, twin, b[0], imgs_b[i][0][0], imgs_b[i][1], best,
                        others or "none"))
        if best < MIN_CORR or i in used:
            failures.append("%s op %d: image at %s+0x%x correlates %.4f at best (with an image %s), "
                            "below %.2f or shared" % (name, a[0], k[0], off, best,
                                                      "already paired" if i in used else "of its own",
                                                      MIN_CORR))
        used.add(i)


def judge(nbg, dumper, corpus, f, g, tmp, failures, figures, tier):
    """One int8 file f against its twin g; False when not judged."""
    name, twin = os.path.relpath(f, corpus), os.path.relpath(g, corpus)
    docs = {}
    for m in (f, g):
        r = cc.run([nbg, "inspect", "--json", m])
        docs[m] = json.loads(r.stdout)
    img = synthetic_image()
    inputs = {}
    for m in (f, g):
        recs = docs[m]["inputs"]
        path = os.path.join(tmp, "%d.bin" % len(inputs))
        if len(recs) != 1 or not quantized_input(recs[0], img, path):
            print("%s: not judged: %s's input is not one 3x640x640 INT8 (dynamic fixed point) or UINT8 "
                  "(affine) record" % (name, os.path.relpath(m, corpus)))
            return False
        inputs[m] = path
    whole = {m: runs_whole(nbg, m) for m in (f, g)}
    for m in (f, g):
        if not whole[m][0]:
            print("%s: outputs not compared: %s does not run whole (%s)" %
                  (name, os.path.relpath(m, corpus), whole[m][1]))
    if whole[f][0] and whole[g][0] and cc.in_tier(tier, "slow"):
        compare_outputs(name, twin, f, g, docs, inputs, nbg, tmp, failures, figures)
    elif whole[f][0] and whole[g][0]:
        print("%s: outputs compared in the slow tier (two whole runs)" % name)
    a, b = first_sh(nbg, f), first_sh(nbg, g)
    if a is None or b is None or a[1] != b[1]:
        print("%s: not judged: its first SH operation (%s) and %s's (%s) are not of one layer" %
              (name, a and a[1], twin, b and b[1]))
        return False
    if cc.in_tier(tier, "corpus"):
        bufs_a = cc.dump(dumper, f, a[0], [inputs[f]], tmp)
        bufs_b = cc.dump(dumper, g, b[0], [inputs[g]], tmp)
        compare_reads(name, twin, a, b, bufs_a, bufs_b, failures, figures)
    return True


def main():
    argv, tier = cc.tier_of(sys.argv)
    if len(argv) != 4:
        sys.exit("usage: check_cpu_int8.py NBG DUMP CORPUS_DIR [--tier corpus|slow]")
    nbg, dumper, corpus = argv[1:]
    files, docs, int8_files = corpus_weights(nbg, corpus, "check_cpu_int8")
    failures, figures, judged = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        load = loader(nbg, tmp)
        for f in int8_files:
            twin = find_twin(f, files, docs, load)
            if twin is None:
                print("%s: not judged: no file of another target carries its weights in uint8" %
                      os.path.relpath(f, corpus))
                continue
            judged += judge(nbg, dumper, corpus, f, twin[0], tmp, failures, figures, tier)
    if not judged:
        failures.append("no int8 file of the corpus could be judged against a uint8 twin")
    cc.finish(figures, failures)


if __name__ == "__main__":
    main()
