#!/usr/bin/env python3
"""The NN convolutions fused with an addition (target 0xe8's
ConvolutionReluPoolingAddLayer, lib/cpu/ops/add.c) against
references no C code here computes.

1. Per operation, against Python integers: each of the four fused additions
   of the two 0xe8 emotion files, on synthesized inputs: the machine's
   buffers before and after that one operation (nbg-cpu-dump), and a
   reference computed here from the command's raw words (`nbg inspect
   --commands --json`), the decoded kernels (`nbg weights --out`) and the
   patches (`nbg inspect --patches --json`): the convolution's sum times its
   scale, clamped to [word 30, word 29] (float32), plus (b - zp) times the
   float32 in word 23 bits 2-31, b the second image's byte (address: word
   26 relocated by its patch; row and y stride: word 32), zp the output
   zero point of the TP operation that wrote it, rounded half away from
   zero with exact fractions, plus out_zero_point, saturated.  The output
   image must be equal byte for byte and no other byte may change.
2. Across targets: the same network compiled for 0x88, 0x99, 0xa1, 0xb9
   and 0xbe (one file each per version, 1000e and 1000f) computes each
   addition as a separate NN operation (a convolution of the two images as
   two channels, one output channel).  On 4 synthesized 64x64 images, each
   of the 0xe8 file's four added images is compared with those operations'
   outputs, then the softmax's input (7 values) and its probabilities; the
   figures are printed and limits below apply.  For scale, the first
   addition is also computed here without the second image (the
   convolution alone, as the backend did before) and without the clamp.

3. Refusals: the first addition's command of the 1000e file mutated (its
   second image's address past VIP SRAM, a NaN bound, a circular buffer
   too small for the image, a row stride that carries it past the buffer):
   `nbg run --backend cpu --check` refuses that operation with the reason
   the plan's bounds checks give.

Tiers (--tier, check_cpu.tier_of): corpus runs sections 1 and 2 on the
oldest compilation (1000e, whose first additions the clamp changes) and
section 3; slow runs sections 1 and 2 on the others.  No --tier: both.

Usage: check_cpu_add.py NBG DUMP --corpus DIR [--tier corpus|slow] (exit 77
when the corpus or Debian's python3-numpy is missing).
"""
import json
import os
import struct
import sys
import tempfile
from fractions import Fraction

from check_cpu import (dump, finish, forget_dumps, in_tier, model_info, prefetch, read_image, read_output,
                       run, split, tier_of)
from check_cpu_tp import emotion_inputs, need_numpy
from check_cpu_ref import inspect, softmax_io

def emotion_versions(corpus):
    """{version prefix: (the 0xe8 emotion file, the other targets' emotion
    files of that version)}, found by rule in the corpus's file names (the
    fused addition is target 0xe8's; the others compute it as an operation
    of its own): every version with a 0xe8 compilation and another."""
    import glob
    out = {}
    for p in sorted(glob.glob(os.path.join(corpus, "v1", "*_emotion_*.nb"))):
        name = os.path.basename(p)
        ver, target = name.split("_")[:2]
        e8, others = out.setdefault(ver, [None, []])
        if target == "e8":
            out[ver][0] = name
        else:
            others.append(name)
    return {v: (e8, others) for v, (e8, others) in out.items() if e8 and others}


# limits (uint8 steps) of the 0xe8 images against the other targets'
# (above the other targets' own differences among themselves, which grow
# layer by layer: each compilation rounds its scales differently)
MAX_ADD_STEPS = 3        # any added image, any target
MAX_ADD_MEAN = 0.5       # mean absolute difference per image
MAX_SOFTMAX_STEPS = 3    # the softmax's 7 input values, above the other targets' own spread
MAX_PROB_DIFF = 0.1


def f32(v):
    return Fraction(struct.unpack("<f", struct.pack("<I", v & 0xffffffff))[0])


def conv_scale(f):
    """0xe8's requantization scale: a float32's mantissa bits and its biased
    exponent in post_shift (doc/cpu-backend.md, "The scale")."""
    m = (f["post_multiplier"] | f["post_multiplier_1_to_6"] << 1 | f["post_multiplier_7_to_14"] << 7 |
         f["post_multiplier_15_to_22"] << 15)
    e = f["post_shift"] | f["post_shift_bit_5_6"] << 5
    return Fraction((1 << 23) | m) * Fraction(2) ** (e - 150)


def rnd(x):
    """Half away from zero, exactly."""
    q = (abs(x.numerator) * 2 + x.denominator) // (2 * x.denominator)
    return -q if x < 0 else q


def add_ops(doc):
    return [o for o in doc["commands"]["operations"]
            if o["engine"] == "NN" and o["layer_name"] == "ConvolutionReluPoolingAddLayer"]


def second_image(doc, pdoc, op):
    """(buffer key, offset, row, slice, zero point) of an addition's second
    image, from the raw words, its patch and the TP operation that wrote it."""
    cmd = [c for c in doc["commands"]["nn"]["commands"] if c["operation"] == op["operation"]][0]
    w = cmd["words"]
    pat = [p for p in pdoc["patches"] if p["operation"] == op["operation"] and p["type"] == 1 and
           p["dest_offset"] == 26 * 4][0]
    io = pat["source_type_name"] in ("INPUT", "OUTPUT")
    key = (pat["source_type_name"], pat["index"] if io else -1)
    xs, ys = w[32] & 0xffff, w[32] >> 16
    writer = [e["from"] for e in doc["commands"]["edges"]
              if e.get("to") == op["operation"] and e["from"] != op["producer"]]
    assert len(writer) == 1, "one writer of the second image"
    tp = [c for c in doc["commands"]["tp"]["commands"] if c["operation"] == writer[0]][0]
    return key, pat["src_offset"] + w[26], xs, xs * ys, tp["fields"]["out_zp"]


def reference(doc, pdoc, weights, wdir, op, bufs, clamp=True, add=True):
    """The added image [z][y][x] as Python integers (section 1)."""
    import numpy as np
    cmd = [c for c in doc["commands"]["nn"]["commands"] if c["operation"] == op["operation"]][0]
    f, w = cmd["fields"], cmd["words"]
    wo = weights[op["operation"]]
    k = np.load(os.path.join(wdir, wo["files"]["weights"])).astype(np.int64)
    bias = np.load(os.path.join(wdir, wo["files"]["bias"])).astype(np.int64)
    assert k.shape[2:] == (1, 1), "the fused additions are 1x1 convolutions"
    df = op["dataflow"]
    x = read_image(bufs[("VIP_SRAM", -1) if op["input_ref"]["source_type_name"] == "VIP_SRAM" else
                        (op["input_ref"]["source_type_name"], op["input_ref"]["index"])],
                   op["input_ref"]["offset"], *op["input"][:2], k.shape[1],
                   df["input_row_stride"], df["input_slice_stride"])
    sub = op["output_subsample"]
    x = x[:, ::sub, ::sub] - f["in_image_border_const"]
    acc = np.einsum("oz,zyx->oyx", k[:, :, 0, 0] - wo["zero_point"], x) + bias[:, None, None]
    key, base, row, slc, zp = second_image(doc, pdoc, op)
    ox, oy, oz = op["output"]
    b = read_image(bufs[key], base, ox, oy, oz, row, slc)
    sc, sb, hi, lo = conv_scale(f), f32((w[23] >> 2) | (w[24] & 3) << 30), f32(w[29]), f32(w[30])
    out = np.zeros(acc.shape, dtype=np.int64)
    for i, a in np.ndenumerate(acc):
        t = int(a) * sc
        if clamp:
            t = min(max(t, lo), hi)
        if add:
            t += (int(b[i]) - zp) * sb
        out[i] = min(max(rnd(t) + f["out_zero_point"], 0), 255)
    return out


def tier_versions(corpus, tier):
    """The compilations a tier checks: the corpus tier the oldest (on whose
    first additions the clamp acts), the slow tier the others."""
    versions = emotion_versions(corpus)
    return split(sorted(versions), tier, [min(versions)]) if versions else []


def check_per_op(nbg, dumper, corpus, tmp, failures, figures, tier):
    """Section 1."""
    import numpy as np
    paths = emotion_inputs(tmp)
    n_ops = n_vals = n_equal = 0
    versions = emotion_versions(corpus)
    if not versions:
        failures.append("no version of the emotion network has a 0xe8 compilation and another")
    for ver in tier_versions(corpus, tier):
        e8 = versions[ver][0]
        model = os.path.join(corpus, "v1", e8)
        doc, weights, wdir = model_info(nbg, model, tmp)
        pdoc = inspect(nbg, model)
        for j, p in enumerate(paths):  # one run per input dumps around every addition
            prefetch(dumper, model, [op["operation"] + d for op in add_ops(doc) for d in (0, 1)], [p], tmp,
                     keep=j)
        for op in add_ops(doc):
            for p in paths:
                before = dump(dumper, model, op["operation"], [p], tmp)
                after = dump(dumper, model, op["operation"] + 1, [p], tmp)
                ref = reference(doc, pdoc, weights, wdir, op, before)
                got = read_output(op, after)
                n_ops += 1
                n_vals += ref.size
                n_equal += int((ref == got).sum())
                if not (ref == got).all():
                    failures.append("%s op %d: %d of %d values differ from the reference (by up to %d)" %
                                    (e8, op["operation"], int((ref != got).sum()), ref.size,
                                     int(np.abs(ref - got).max())))
                # no byte outside the output image changes
                key = ("VIP_SRAM", -1) if op["output_ref"]["source_type_name"] == "VIP_SRAM" else None
                for k in before:
                    diff = np.nonzero(before[k] != after[k])[0]
                    if k != key and len(diff):
                        failures.append("%s op %d changed %d bytes of %s" % (e8, op["operation"], len(diff), k))
                if key is not None:
                    mask = np.zeros(len(before[key]), dtype=bool)
                    df = op["dataflow"]
                    for z in range(op["output"][2]):
                        for y in range(op["output"][1]):
                            s = op["output_ref"]["offset"] + z * df["output_slice_stride"] + y * df["output_row_stride"]
                            mask[s:s + op["output"][0]] = True
                    outside = int(((before[key] != after[key]) & ~mask).sum())
                    if outside:
                        failures.append("%s op %d changed %d bytes outside its output" %
                                        (e8, op["operation"], outside))
    figures.append("per operation: %d runs of the 0xe8 files' fused additions (4 per file, 2 inputs) "
                   "against the exact reference from the raw words: %d of %d values equal" %
                   (n_ops, n_equal, n_vals))
    if n_ops != 8 * len(tier_versions(corpus, tier)):
        failures.append("%d fused additions checked, not %d" % (n_ops, 8 * len(tier_versions(corpus, tier))))


def tally(st, group, d):
    t = st.setdefault(group, [0, 0, 0, 0.0])
    t[0] += d.size
    t[1] += int((d > 0).sum())
    t[2] = max(t[2], int(d.max()))
    t[3] = max(t[3], float(d.mean()))


def other_adds(doc):
    """The other targets' additions: NN convolutions of two channels into one."""
    return [o for o in doc["commands"]["operations"]
            if o["engine"] == "NN" and o["kernel"][2] == 2 and o["output"][2] == 1]


def inputs(tmp):
    import numpy as np
    paths = emotion_inputs(tmp)
    rng = np.random.default_rng(5)
    for i in range(2):  # higher contrast: the first addition's clamp acts on some values
        paths.append(os.path.join(tmp, "add_in_%d.bin" % i))
        np.clip(rng.normal(128, 70, (64, 64)), 0, 255).astype(np.uint8).tofile(paths[-1])
    return paths


SOFTMAX = {}  # model -> (its softmax operation, softmax_io)


def softmax_stop(nbg, model):
    """The operation of the model's softmax."""
    if model not in SOFTMAX:
        doc = inspect(nbg, model)
        with open(model, "rb") as f:
            data = f.read()
        sm = [o for o in doc["operations"] if o["type_name"] == "SH" and o["layer_name"] == "Softmax2Layer"][0]
        SOFTMAX[model] = (sm, softmax_io(data, doc, sm))
    return SOFTMAX[model][0]["record_index"]


def softmax_of(nbg, dumper, model, p, tmp):
    """(softmax input values, probabilities) of a whole run."""
    import numpy as np
    softmax_stop(nbg, model)
    sm, (ri, io, ro, oo, w) = SOFTMAX[model][0], SOFTMAX[model][1][:5]
    before = dump(dumper, model, sm["record_index"], [p], tmp)
    after = dump(dumper, model, 1 << 30, [p], tmp)
    return (before[ri][io:io + w].astype(np.int64),
            after[ro][oo:oo + 2 * w].copy().view("<f2").astype(np.float64))


def check_cross_target(nbg, dumper, corpus, tmp, failures, figures, tier):
    """Section 2."""
    import numpy as np
    paths = inputs(tmp)
    rows = []
    top_same = top_all = 0
    worst_sm, worst_prob, spread_sm, spread_prob = 0, 0.0, 0, 0.0
    clamped = [0, 0, 0]  # the first additions: values the clamp changes, their differences with / without it
    versions = emotion_versions(corpus)
    for ver in tier_versions(corpus, tier):
        e8, others = versions[ver]
        model = os.path.join(corpus, "v1", e8)
        doc, weights, wdir = model_info(nbg, model, tmp)
        pdoc = inspect(nbg, model)
        mine = add_ops(doc)
        odocs = {o: json.loads(run([nbg, "inspect", "--commands", "--json",
                                    os.path.join(corpus, "v1", o)]).stdout) for o in others}
        # one run per file and input dumps every image compared below
        forget_dumps()
        for p in paths:
            prefetch(dumper, model, [op["operation"] + 1 for op in mine] +
                     [mine[0]["operation"], softmax_stop(nbg, model), 1 << 30], [p], tmp, keep=True)
            for o in others:
                m = os.path.join(corpus, "v1", o)
                prefetch(dumper, m, [q["operation"] + 1 for q in other_adds(odocs[o])] +
                         [softmax_stop(nbg, m), 1 << 30], [p], tmp, keep=True)
        stats = [{} for _ in mine]  # per addition: group -> [values, differing, worst, worst mean]
        alone = [0, 0.0]             # the first addition without the second image
        nclamp = clamped[0]
        for p in paths:
            for i, op in enumerate(mine):
                img = read_output(op, dump(dumper, model, op["operation"] + 1, [p], tmp))
                ox, oy, oz = op["output"]
                if i == 0:
                    bufs = dump(dumper, model, op["operation"], [p], tmp)
                    no_add = reference(doc, pdoc, weights, wdir, op, bufs, add=False)
                    no_clamp = reference(doc, pdoc, weights, wdir, op, bufs, clamp=False)
                images = {}
                for o in others:
                    oop = other_adds(odocs[o])
                    assert len(oop) == len(mine), "%s: %d additions" % (o, len(oop))
                    q = oop[i]
                    # the operation writes the image [z][y][x], planes one after the other
                    ob = dump(dumper, os.path.join(corpus, "v1", o), q["operation"] + 1, [p], tmp)
                    k = (q["output_ref"]["source_type_name"], -1)
                    images[o] = theirs = read_image(ob[k], q["output_ref"]["offset"], ox, oy, oz, ox, ox * oy)
                    group = "0xb9/0xbe" if odocs[o]["target"] in (0xb9, 0xbe) else "0x88/0x99/0xa1"
                    tally(stats[i], group, np.abs(img - theirs))
                    if i == 0:
                        alone[0] = max(alone[0], int(np.abs(no_add - theirs).max()))
                        alone[1] = max(alone[1], float(np.abs(no_add - theirs).mean()))
                        m = no_clamp != img
                        clamped[0] += int(m.sum())
                        clamped[1] += int(np.abs(img - theirs)[m].sum())
                        clamped[2] += int(np.abs(no_clamp - theirs)[m].sum())
                # the other targets against each other: the spread the 0xe8 figures sit in
                names = sorted(images)
                for a in range(len(names)):
                    for b in names[a + 1:]:
                        tally(stats[i], "spread", np.abs(images[names[a]] - images[b]))
            sx, sp = softmax_of(nbg, dumper, model, p, tmp)
            outs = [softmax_of(nbg, dumper, os.path.join(corpus, "v1", o), p, tmp) for o in others]
            for tx, tp in outs:
                worst_sm = max(worst_sm, int(np.abs(sx - tx).max()))
                worst_prob = max(worst_prob, float(np.abs(sp - tp).max()))
                top_all += 1
                top_same += int(sp.argmax() == tp.argmax())
            for a in range(len(outs)):
                for b in range(a + 1, len(outs)):
                    spread_sm = max(spread_sm, int(np.abs(outs[a][0] - outs[b][0]).max()))
                    spread_prob = max(spread_prob, float(np.abs(outs[a][1] - outs[b][1]).max()))
        for i, (op, st) in enumerate(zip(mine, stats)):
            rows.append("%s addition %d (op %d, %s): %s" % (
                ver, i + 1, op["operation"], "x".join(map(str, op["output"])), "; ".join(
                    "%s %d of %d values differ, by at most %d, mean at most %.3f steps" %
                    ("against " + g if g != "spread" else "the other targets among themselves", st[g][1],
                     st[g][0], st[g][2], st[g][3])
                    for g in ("0xb9/0xbe", "0x88/0x99/0xa1", "spread"))))
            for g in ("0xb9/0xbe", "0x88/0x99/0xa1"):
                worst, mean = st[g][2], st[g][3]
                if worst > st["spread"][2] + MAX_ADD_STEPS or mean > st["spread"][3] + MAX_ADD_MEAN:
                    failures.append("%s addition %d differs from %s by up to %d steps, mean %.3f: more "
                                    "than %d, %.2f above the other targets' own spread (%d, %.3f)" %
                                    (ver, i + 1, g, worst, mean, MAX_ADD_STEPS, MAX_ADD_MEAN,
                                     st["spread"][2], st["spread"][3]))
        rows.append("%s addition 1 computed here without the second image: up to %d steps, mean %.2f; "
                    "without the clamp: %d values change" % (ver, alone[0], alone[1], clamped[0] - nclamp))
        if alone[0] <= MAX_ADD_STEPS:
            failures.append("%s: the convolution alone is within the limit: the comparison cannot tell" % ver)
    rows.append("the clamp (words 29, 30) changes %d values of the first additions; against the other "
                "targets they differ by %d steps in all with it, %d without" % tuple(clamped))
    # the clamp acts on the oldest compilation's inputs (the corpus tier's)
    if (tier != "slow" and not clamped[0]) or (clamped[0] and clamped[1] >= clamped[2]):
        failures.append("the clamp changes %d values and does not bring them nearer the other targets "
                        "(%d against %d steps)" % tuple(clamped))
    figures.append("across targets (0x88, 0x99, 0xa1, 0xb9, 0xbe of the same version, %d inputs):\n  "
                   % len(paths) + "\n  ".join(rows))
    figures.append("whole runs against the other targets: the softmax's input differs by at most %d steps "
                   "(the other targets among themselves: %d), probabilities by at most %.4f (%.4f), the "
                   "same top class in %d of %d comparisons" % (worst_sm, spread_sm, worst_prob, spread_prob,
                                                               top_same, top_all))
    if worst_sm > spread_sm + MAX_SOFTMAX_STEPS or worst_prob > MAX_PROB_DIFF or top_same != top_all or \
            not top_all:
        failures.append("whole runs: softmax input up to %d steps (limit %d above the others' %d), "
                        "probabilities up to %.4f (limit %.2f), top class equal in %d of %d" %
                        (worst_sm, MAX_SOFTMAX_STEPS, spread_sm, worst_prob, MAX_PROB_DIFF, top_same,
                         top_all))


MUTATIONS = (  # (word, value from the word's, expected reason)
    (26, lambda v: 0x7ffff000, "address-outside-memory"),
    (29, lambda v: 0x7fc00000, "fused-add-unsupported"),
    (27, lambda v: (v & ~0x3ffffff) | 100, "address-outside-memory"),
    (32, lambda v: (v & 0xffff0000) | 0x100, "circular-buffer-wrap"),
)


def check_refusals(nbg, corpus, tmp, failures, figures):
    """Section 3."""
    versions = emotion_versions(corpus)
    model = os.path.join(corpus, "v1", versions[min(versions)][0])
    doc = json.loads(run([nbg, "inspect", "--commands", "--json", model]).stdout)
    op = add_ops(doc)[0]
    cmd = [c for c in doc["commands"]["nn"]["commands"] if c["operation"] == op["operation"]][0]
    data = open(model, "rb").read()
    ok = 0
    for word, f, reason in MUTATIONS:
        m = bytearray(data)
        at = cmd["offset"] + 4 * word
        struct.pack_into("<I", m, at, f(struct.unpack_from("<I", m, at)[0]))
        path = os.path.join(tmp, "mutated.nb")
        with open(path, "wb") as out:
            out.write(m)
        r = run([nbg, "run", "--backend", "cpu", "--check", path])
        line = [x for x in r.stdout.splitlines() if x.startswith("  op %d " % op["operation"])]
        if r.returncode == 4 and line and ("refused " + reason + ":") in line[0]:
            ok += 1
        else:
            failures.append("word %d mutated: expected op %d refused %s, got exit %d: %s" %
                            (word, op["operation"], reason, r.returncode, line[0] if line else r.stderr))
    figures.append("refusals: %d of %d mutated commands refused with the expected reason" %
                   (ok, len(MUTATIONS)))


def main():
    argv, tier = tier_of(sys.argv)
    if len(argv) != 5 or argv[3] != "--corpus":
        sys.exit("usage: check_cpu_add.py NBG DUMP --corpus DIR [--tier corpus|slow]")
    nbg, dumper, corpus = argv[1], argv[2], argv[4]
    from tc_corpus import need
    need("check_cpu_add", "the fused addition checks", corpus)
    need_numpy("check_cpu_add")
    failures, figures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        check_per_op(nbg, dumper, corpus, tmp, failures, figures, tier)
        check_cross_target(nbg, dumper, corpus, tmp, failures, figures, tier)
        if in_tier(tier, "corpus"):
            check_refusals(nbg, corpus, tmp, failures, figures)
    finish(figures, failures)


if __name__ == "__main__":
    main()
