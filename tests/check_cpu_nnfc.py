#!/usr/bin/env python3
"""Target 0x7d's NN fully connected commands (doc/weights.md "Fully connected
commands of target 0x7d", doc/cpu-backend.md) against references no C code
here computes.

The emotion family of corpus/v1 is one network compiled for several
targets. Where 0x88 (and 0x99, 0xa1) compile a 1x1 convolution of x*y
pixels, 0x7d compiles an NN command of layer_type 1 (fully connected) over
the same bytes read as x*y columns of 2 rows, with 2x2 kernels.

1. Weights: every such command's decoded kernels, shape [out][z][2][1],
   flattened to [out][z*2 + y], equal the 0x88 file's 1x1 convolution of the
   same layer ([out][in][1][1]; 0x99's where 0x88 compiles it otherwise) code for code, and the biases (corrected for
   the input zero point) are equal.
2. Per operation: the machine's buffers before and after each such
   operation of one file (nbg-cpu-dump) against numpy: the written image is
   sum over z and y of (w - coef zp) x (in - in zp) + bias, the column
   kernel over the command's x by 2 rows input (read with its own strides),
   requantized as check_cpu.py's requant does; no other byte changes.
3. Cross-target: on the same synthesized input images, the image each such
   operation writes (x*y by 1 by out) equals the image the 0x88 file's 1x1
   convolution of that layer writes (x by y by out), value for value.

Tiers (--tier, check_cpu.tier_of): corpus runs parts 1 and 2 and part 3
on the newest compilation's 0x7d file; slow part 3 on the others.  No
--tier: both.

Usage: check_cpu_nnfc.py NBG DUMP --corpus DIR [--tier corpus|slow] (exit
77 when the corpus or Debian's python3-numpy is missing).
"""
import glob
import os
import sys
import tempfile

from check_cpu import (dump, finish, in_tier, key, model_info, prefetch, read_image, read_output, requant,
                       split, tier_of)

PER_OP_FILE = "v1/10009_7d_emotion_7d.nb"
# the corpus' 0x7d fully connected commands: 11 + 11 + 12 in three emotion files
MIN_FC = 34


def fc_ops(doc, weights):
    """The NN fully connected operations whose weights decoded."""
    return [o for o in doc["commands"]["operations"]
            if o["engine"] == "NN" and o["kind"] == "fully connected"
            and weights.get(o["operation"], {}).get("status") == "decoded"]


def nn_of_layer(doc, layer):
    return [o for o in doc["commands"]["operations"]
            if o["engine"] == "NN" and o["layer_id"] == layer]


def pairs(corpus):
    """(0x7d file, [its 0x88, 0x99, 0xa1 siblings]) of one compilation batch
    (the name's prefix)."""
    out = []
    for f in sorted(glob.glob(os.path.join(corpus, "v1", "*_7d_emotion_7d.nb"))):
        pre = os.path.join(os.path.dirname(f), os.path.basename(f).split("_")[0])
        sib = [pre + "_%s_emotion_%s.nb" % (t, t) for t in ("88", "99", "a1")]
        out.append((f, [g for g in sib if os.path.exists(g)]))
    return out


def conv_1x1(infos, siblings, layer):
    """The first sibling file whose layer is one NN 1x1 convolution: (file,
    operation record); None when none is."""
    for g in siblings:
        other = nn_of_layer(infos(g)[0], layer)
        if len(other) == 1 and other[0]["kind"] == "conv" and other[0]["kernel"][:2] == [1, 1]:
            return g, other[0]
    return None


def load(wdir, wo, part):
    import numpy as np
    return np.load(os.path.join(wdir, wo["files"][part]))


def check_weights(nbg, corpus, tmp, failures, figures, infos):
    import numpy as np
    n = equal = values = 0
    used = {}
    for f, sib in pairs(corpus):
        d7, w7, dir7 = infos(f)
        ops = [o for o in d7["commands"]["operations"]
               if o["engine"] == "NN" and o["kind"] == "fully connected"]
        for o in ops:
            wo = w7.get(o["operation"])
            if not wo or wo["status"] != "decoded":
                failures.append("%s op %d: a fully connected command not decoded (%s)" %
                                (os.path.basename(f), o["operation"], wo and wo["reason_id"]))
                continue
            found = conv_1x1(infos, sib, o["layer_id"])
            if not found:
                failures.append("%s layer %d: no sibling compiles it as one 1x1 conv" %
                                (os.path.basename(f), o["layer_id"]))
                continue
            g, other = found
            _, w8, dir8 = infos(g)
            wo8 = w8[other["operation"]]
            t = os.path.basename(g).split("_")[1]
            used[t] = used.get(t, 0) + 1
            a, b = load(dir7, wo, "weights"), load(dir8, wo8, "weights")
            n += 1
            same = (a.shape[3] == 1 and a.shape[2] == 2 and
                    np.array_equal(a.reshape(a.shape[0], -1), b.reshape(b.shape[0], -1)) and
                    np.array_equal(load(dir7, wo, "bias"), load(dir8, wo8, "bias")))
            equal += same
            values += b.size
            if not same:
                failures.append("%s op %d (layer %d): weights %s / biases differ from %s's 1x1 "
                                "conv %s" % (os.path.basename(f), o["operation"], o["layer_id"],
                                             a.shape, os.path.basename(g), b.shape))
    figures.append("weights: %d of %d fully connected commands of %d 0x7d files equal the same "
                   "layer's 1x1 convolution on another target (%s; %d codes, and every "
                   "corrected bias)" % (equal, n, len(pairs(corpus)),
                                        ", ".join("0x%s %d" % kv for kv in sorted(used.items())),
                                        values))
    if n < MIN_FC:
        failures.append("only %d fully connected commands compared, not the corpus' %d" %
                        (n, MIN_FC))


def fc_reference(op, f, w, bias, before, target):
    """The written image [out][1][x]: the column kernel over x by ky rows."""
    import numpy as np
    df = op["dataflow"]
    ix, iy = f["in_image_x_size"], f["in_image_y_size"]
    o, kz, ky, kx = w.shape
    assert kx == 1 and ky == iy
    img = read_image(before[key(op["input_ref"])], op["input_ref"]["offset"], ix, iy, kz,
                     df["input_row_stride"], df["input_slice_stride"])
    x = img - f.get("in_image_border_const", 0)
    wd = w[:, :, :, 0].astype(np.int64) - f["coef_zero_point"]
    acc = np.einsum("ozy,zyx->ox", wd, x) + bias.astype(np.int64)[:, None]
    q = np.array(requant(acc.ravel(), f, target), dtype=np.int64).reshape(o, 1, ix)
    return q


def check_per_op(nbg, dumper, corpus, tmp, failures, figures, infos):
    import numpy as np
    model = os.path.join(corpus, PER_OP_FILE)
    doc, weights, wdir = infos(model)
    nn = doc["commands"]["nn"]["commands"]
    rng = np.random.default_rng(7)
    inp = os.path.join(tmp, "nnfc_in.bin")
    rng.integers(0, 256, doc["inputs"][0]["byte_size"]).astype(np.uint8).tofile(inp)
    checked = same = written = 0
    prefetch(dumper, model, [op["operation"] + d for op in fc_ops(doc, weights) for d in (0, 1)], [inp], tmp)
    for op in fc_ops(doc, weights):
        n = op["operation"]
        wo = weights[n]
        before = dump(dumper, model, n, [inp], tmp)
        after = dump(dumper, model, n + 1, [inp], tmp)
        f = dict(nn[op["command"]]["fields"])
        f["coef_zero_point"] = wo["zero_point"]
        ref = fc_reference(op, f, load(wdir, wo, "weights"), load(wdir, wo, "bias"), before,
                           doc["target"])
        ob = key(op["output_ref"])
        expect = {k: v.copy() for k, v in before.items()}
        df = op["dataflow"]
        base = op["output_ref"]["offset"]
        for z in range(ref.shape[0]):
            s = base + z * df["output_slice_stride"]
            expect[ob][s:s + ref.shape[2]] = ref[z, 0]
        ok = True
        for k in expect:
            if not np.array_equal(expect[k], after[k]):
                ok = False
                diff = np.nonzero(expect[k] != after[k])[0]
                failures.append("%s op %d: %s differs from numpy at %d bytes (first at +0x%x)" %
                                (PER_OP_FILE, n, k[0], len(diff), diff[0]))
        # an input that leaves the image unchanged, or saturates it, proves little
        if len(np.unique(ref)) < 16:
            failures.append("%s op %d: only %d distinct output values" %
                            (PER_OP_FILE, n, len(np.unique(ref))))
        checked += 1
        same += ok
        written += ref.size
    figures.append("per operation: %d of %d fully connected operations of %s equal numpy's "
                   "column kernel byte for byte (%d values written), no other byte changed" %
                   (same, checked, PER_OP_FILE, written))
    if checked < 11:
        failures.append("only %d fully connected operations checked in %s" % (checked, PER_OP_FILE))


def check_cross_target(nbg, dumper, corpus, tmp, failures, figures, infos, tier):
    """Part 3: the corpus tier compares the newest compilation's 0x7d file
    (the last by name), the slow tier the others."""
    import numpy as np
    rng = np.random.default_rng(2029)
    imgs = [np.clip(rng.normal(128, 50, (64, 64)), 0, 255).astype(np.uint8),
            np.add.outer(np.arange(64) * 3, np.arange(64) * 2).clip(0, 255).astype(np.uint8)]
    paths = []
    for i, im in enumerate(imgs):
        paths.append(os.path.join(tmp, "nnfc_img_%d.bin" % i))
        im.tofile(paths[-1])
    ops = values = differ = expected = 0
    every = pairs(corpus)
    for f, sib in split(every, tier, every[-1:]):
        d7, w7, _ = infos(f)
        expected += 2 * sum(1 for o in d7["commands"]["operations"]
                            if o["engine"] == "NN" and o["kind"] == "fully connected")
        found = [(o, conv_1x1(infos, sib, o["layer_id"])) for o in fc_ops(d7, w7)]
        found = [(o, x) for o, x in found if x]
        for p in paths:
            # one run per file and input dumps every compared operation's output
            prefetch(dumper, f, [o["operation"] + 1 for o, _ in found], [p], tmp)
            for g in sorted({x[0] for _, x in found}):
                prefetch(dumper, g, [x[1]["operation"] + 1 for _, x in found if x[0] == g], [p], tmp,
                         keep=True)
            for o, (g, other) in found:
                a = read_output(o, dump(dumper, f, o["operation"] + 1, [p], tmp))
                b = read_output(other, dump(dumper, g, other["operation"] + 1, [p], tmp))
                a, b = a.reshape(a.shape[0], -1), b.reshape(b.shape[0], -1)
                if a.shape != b.shape:
                    failures.append("%s op %d: image %s, %s's %s" % (
                        os.path.basename(f), o["operation"], a.shape, os.path.basename(g), b.shape))
                    continue
                d = int((a != b).sum())
                ops += 1
                values += a.size
                differ += d
                if d:
                    failures.append("%s op %d (layer %d): %d of %d values differ from %s's "
                                    "1x1 conv" % (os.path.basename(f), o["operation"],
                                                  o["layer_id"], d, a.size, os.path.basename(g)))
    figures.append("cross-target: %d runs (fully connected operations x 2 inputs) of the 0x7d "
                   "files against the same layers' 1x1 convolutions on 0x88 (0x99 where 0x88 "
                   "compiles a 2x2 conv): %d of %d values differ" % (ops, differ, values))
    if ops < expected:
        failures.append("only %d cross-target runs compared, not %d operations x 2 inputs" %
                        (ops, expected // 2))


def main():
    argv, tier = tier_of(sys.argv)
    if len(argv) != 5 or argv[3] != "--corpus":
        sys.exit("usage: check_cpu_nnfc.py NBG DUMP --corpus DIR [--tier corpus|slow]")
    nbg, dumper, corpus = argv[1], argv[2], argv[4]
    from tc_corpus import need
    need("check_cpu_nnfc", "the 0x7d fully connected checks", corpus)
    from check_cpu_tp import need_numpy
    need_numpy("check_cpu_nnfc")
    failures, figures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        cache = {}

        def infos(model):
            if model not in cache:
                cache[model] = model_info(nbg, model, tmp)
            return cache[model]
        if in_tier(tier, "corpus"):
            check_weights(nbg, corpus, tmp, failures, figures, infos)
            check_per_op(nbg, dumper, corpus, tmp, failures, figures, infos)
        check_cross_target(nbg, dumper, corpus, tmp, failures, figures, infos, tier)
    finish(figures, failures)


if __name__ == "__main__":
    main()
