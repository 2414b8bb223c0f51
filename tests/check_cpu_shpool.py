#!/usr/bin/env python3
"""The PoolingLayer2 SH operation (a global average pooling) the CPU backend
runs by reference semantics (lib/cpu/ops/shpool.c), against references
no C code here computes.

1. Per operation, every SH PoolingLayer2 of the corpus (the emotion network
   on 0x88, 0x99, 0xa1): its I/O decoded here from the raw bytes (the
   LOAD_STATE stream of its state buffer, its patches), the uniforms read
   as the quantization they stand for: input scale s_in = 0x36024, input
   zero point = 0x36028 / (width x s_in) (an integer), output scale = 1 /
   (width x 0x3602c), output zero point = 0x360f0.  On synthesized buffers
   (nbg-cpu-ref-op runs that one operation), each channel's output must be
   numpy's round(mean(x - zp_in) * s_in / s_out) + zp_out (a value half
   way between two, frequent where s_in = s_out, may go either way: the
   shader's tie rule is not established), and no other byte of any buffer
   may change.
2. The same quantization from the other targets: 0xb9 and 0xbe compute
   this layer as an NN depthwise 4x4 convolution whose kernel codes are
   all 255 (zero point 0): its input zero point (the previous conv's
   out_zero_point), its out_zero_point and 16 x 255 x its scale (the
   command's post_multiplier / post_shift) must equal the zero points and
   s_in / s_out read from the shader's uniforms.
3. Cross-target: for the same synthesized inputs (check_cpu_tp.py's), the
   pooled values (the softmax's input) and the softmax probabilities of
   each 0x88/0x99/0xa1 file are compared with the 0xb9/0xbe files of its
   version, whose whole network the backend runs with the NN engine's
   pooling; the conv before differs by up to 4 steps between these groups
   (check_cpu_tp.py), so the pooled values may differ by a few steps: the
   figures are printed, limits below; their mean signed difference tells
   rounding to nearest (near 0) from truncation (near -0.5).

Tiers (--tier, check_cpu.tier_of): each compilation quantizes anew, so the
sections run per file-format version: corpus on the newest, slow on the
others.  No --tier: both.

Usage: check_cpu_shpool.py NBG REFOP --corpus DIR [--tier corpus|slow]
(exit 77 when the corpus or Debian's python3-numpy is missing);
nbg-cpu-dump is REFOP's neighbour.
"""
import glob
import os
import struct
import sys
import tempfile

from check_cpu import dump, finish, inspect_many, prefetch, ref_op_runs, run, scale_of, split, tier_of
from check_cpu_tp import emotion_inputs, need_numpy
from check_cpu_ref import LABEL, plan_lines, region_sizes, softmax_io, uniforms

FMT = 0x444051c0
# cross-target limits: pooled values (uint8 steps), probabilities (absolute)
MAX_POOL_STEPS = 3
MAX_PROB_DIFF = 0.15
MAX_BIAS = 0.25


def f32(v):
    return struct.unpack("<f", struct.pack("<I", v))[0]


def region(p):
    io = p["source_type_name"] in ("INPUT", "OUTPUT")
    return (p["source_type_name"], p["index"] if io else -1)


def pool_io(data, doc, o):
    """The pooling's I/O and quantization decoded from the raw bytes."""
    u = uniforms(data, doc, o)
    v = {a: u[a][0] for a in u}
    pat = {p["dest_offset"]: p for p in doc["patches"]
           if p["operation"] == o["record_index"] and p["type"] == 0}
    assert v[0x3600c] == FMT and v[0x3603c] == FMT, "format words"
    w, h = v[0x36008] & 0xffff, v[0x36008] >> 16
    assert v[0x36020] ** 2 == w and v[0x36038] == (h << 16 | 1), "shape"
    pi, po = pat[u[0x36000][1]], pat[u[0x36030][1]]
    s_in = f32(v[0x36024])
    zp_in = f32(v[0x36028]) / (w * s_in)
    s_out = 1 / (w * f32(v[0x3602c]))
    return dict(ri=region(pi), io=pi["src_offset"] + v[0x36000], istride=v[0x36004],
                ro=region(po), oo=po["src_offset"] + v[0x36030], ostride=v[0x36034], w=w, h=h,
                s_in=s_in, zp_in=zp_in, s_out=s_out, zp_out=f32(v[0x360f0]))


def check_per_op(nbg, refop, files, docs, tmp, failures, figures):
    """Sections 1 and 2 (the quantization of section 2: returned)."""
    import numpy as np
    rng = np.random.default_rng(31)
    ops, values, ties, quants = 0, 0, 0, set()
    for model in files:
        doc = docs[model]
        data = open(model, "rb").read()
        lines = plan_lines(nbg, model)
        name = os.path.basename(model)
        for o in doc["operations"]:
            if o["type_name"] != "SH" or o["layer_name"] != "PoolingLayer2":
                continue
            n = o["record_index"]
            rest = lines.get(n, ("?", "?", ""))[2]
            if not rest.endswith("execute " + LABEL):
                failures.append("%s op %d (SH pooling) not executed by reference semantics: %s" %
                                (name, n, rest))
                continue
            q = pool_io(data, doc, o)
            if abs(q["zp_in"] - round(q["zp_in"])) > 1e-3:
                failures.append("%s op %d: input zero point %.6f not an integer" % (name, n, q["zp_in"]))
            quants.add((round(q["zp_in"]), q["zp_out"], round(q["s_in"] / q["s_out"], 3)))
            trials = []
            for trial in range(3):
                ind, outd = tempfile.mkdtemp(dir=tmp), tempfile.mkdtemp(dir=tmp)
                before = {}
                for k, size in region_sizes(doc).items():
                    b = rng.integers(0, 256, size, dtype=np.uint8)
                    before[k] = b
                    b.tofile(os.path.join(ind, "%s_%d.bin" % k))
                trials.append((ind, outd, before))
            r = ref_op_runs(refop, model, [(n, ind, outd) for ind, outd, _ in trials])
            if r.returncode != 0:
                failures.append("%s op %d: nbg-cpu-ref-op exit %d: %s %s" %
                                (name, n, r.returncode, r.stdout, r.stderr))
                trials = []
            for ind, outd, before in trials:
                x = np.stack([before[q["ri"]][q["io"] + y * q["istride"]:][:q["w"]]
                              for y in range(q["h"])]).astype(np.float64)
                exact = (x - round(q["zp_in"])).mean(axis=1) * q["s_in"] / q["s_out"] + q["zp_out"]
                want = np.clip(np.rint(exact), 0, 255).astype(np.uint8)
                # a value half way between two (ratio 1: a mean of 16 integers):
                # the shader's tie rule is not established; either neighbour
                tie = np.abs(exact - np.floor(exact) - 0.5) < 1e-3
                ties += int(tie.sum())
                at = [q["oo"] + y * q["ostride"] for y in range(q["h"])]
                for k, b in before.items():
                    a = np.fromfile(os.path.join(outd, "%s_%d.bin" % k), dtype=np.uint8)
                    if k == q["ro"]:
                        got = a[at].copy()
                        want = np.where(tie & (np.abs(got - exact) < 0.501), got, want)
                        if not np.array_equal(got, want):
                            failures.append("%s op %d: pooled %s, numpy %s" %
                                            (name, n, list(got), list(want)))
                        a[at] = b[at]
                    if not np.array_equal(a, b):
                        failures.append("%s op %d: bytes of %s_%d outside the output changed" %
                                        ((name, n) + k))
                values += q["h"]
            ops += 1
    figures.append("per operation: %d SH PoolingLayer2 operations executed by reference semantics, "
                   "%d pooled values equal to numpy's round(mean(x - zp_in) * s_in / s_out) + zp_out "
                   "(%d of them half way: either neighbour accepted); (zp_in, zp_out, s_in/s_out) "
                   "read from the uniforms: %s" % (ops, values, ties, sorted(quants)))
    expected = sum(1 for m in files if docs[m]["target"] in (0x88, 0x99, 0xa1))
    if ops < expected:
        failures.append("only %d SH PoolingLayer2 operations checked (the files of 0x88, 0x99 and "
                        "0xa1 hold %d)" % (ops, expected))
    return quants


def check_nn_quant(nbg, files, quants, failures, figures):
    """Section 2: the 0xb9/0xbe depthwise convolution's quantization."""
    import json
    seen = set()
    for model in files:
        r = run([nbg, "inspect", "--commands", "--json", model])
        doc = json.loads(r.stdout)
        if doc["target"] not in (0xb9, 0xbe):
            continue
        ops = doc["commands"]["operations"]
        cmds = {c["operation"]: c for c in
                [v for v in doc["commands"]["nn"].values() if isinstance(v, list)][0]}
        dw = [o for o in ops if o["engine"] == "NN" and o["kind"] == "depthwise conv" and
              o["kernel"] == [4, 4, 1] and o["output"][:2] == [1, 1]]
        if len(dw) != 1:
            failures.append("%s: %d depthwise 4x4 -> 1x1 convolutions, not 1" %
                            (os.path.basename(model), len(dw)))
            continue
        o = dw[0]
        f = cmds[o["operation"]]["fields"]
        prev = cmds[o["producer"]]["fields"]
        w = json.loads(run([nbg, "weights", "--json", "--op", str(o["operation"]), model]).stdout)
        wop = w["weights"]["operations"][0]
        if wop["codes"]["min"] != 255 or wop["codes"]["max"] != 255 or wop["zero_point"] != 0:
            failures.append("%s op %d: kernel codes %s, zero point %s: not an average" %
                            (os.path.basename(model), o["operation"], wop["codes"], wop["zero_point"]))
            continue
        mul, shift = scale_of(doc["target"], f)
        seen.add((prev["out_zero_point"], float(f["out_zero_point"]),
                  round(16 * 255 * mul / 2 ** shift, 3)))
    figures.append("0xb9/0xbe depthwise 4x4 convolution (codes 255): (input zp, output zp, "
                   "16 x 255 x scale): %s" % sorted(seen))
    if not seen or seen != quants:
        failures.append("the shader's quantization %s is not the depthwise convolution's %s" %
                        (sorted(quants), sorted(seen)))


def check_cross_target(nbg, dumper, files, docs, tmp, failures, figures):
    """Section 3."""
    import numpy as np
    paths = emotion_inputs(tmp)
    res = {}  # file -> (version, target, [(pooled, probabilities)])
    for model in files:
        doc = docs[model]
        data = open(model, "rb").read()
        sm = [o for o in doc["operations"] if o["type_name"] == "SH" and
              o["layer_name"] == "Softmax2Layer"]
        if len(sm) != 1:
            continue
        ri, io, ro, oo, w = softmax_io(data, doc, sm[0])[:5]
        outs = []
        for p in paths:
            prefetch(dumper, model, [sm[0]["record_index"], 1 << 30], [p], tmp)
            before = dump(dumper, model, sm[0]["record_index"], [p], tmp, refused_ok=True)
            if before is None:
                break
            after = dump(dumper, model, 1 << 30, [p], tmp)
            outs.append((before[ri][io:io + w].astype(np.int64),
                         after[ro][oo:oo + 2 * w].copy().view("<f2").astype(np.float64)))
        if len(outs) == len(paths):
            res[model] = (doc["version"], doc["target"], outs)
    rows, whole = [], []
    worst_steps, worst_prob, top_same, top_all, signed = 0, 0.0, 0, 0, []
    for model, (ver, tgt, outs) in sorted(res.items()):
        if tgt not in (0x88, 0x99, 0xa1):
            continue
        whole.append(os.path.basename(model))
        refs = [(m, r) for m, r in res.items() if r[0] == ver and r[1] in (0xb9, 0xbe)]
        for m, (_, _, routs) in refs:
            for (pa, pr), (qa, qr) in zip(outs, routs):
                d = pa - qa
                signed.extend(d.tolist())
                worst_steps = max(worst_steps, int(np.abs(d).max()))
                worst_prob = max(worst_prob, float(np.abs(pr - qr).max()))
                top_all += 1
                top_same += int(pr.argmax() == qr.argmax())
    rows.append("%d files (0x88/0x99/0xa1) run whole, each compared with the 0xb9/0xbe files of its "
                "version on 2 inputs: pooled values differ by at most %d steps (mean signed "
                "difference %.3f, %d of %d values differ), probabilities by at most %.4f, the same "
                "top class in %d of %d comparisons" %
                (len(whole), worst_steps, float(np.mean(signed)) if signed else 0.0,
                 sum(1 for v in signed if v), len(signed), worst_prob, top_same, top_all))
    figures.append("cross-target: " + "; ".join(rows) + ": " + ", ".join(whole))
    expected = sum(1 for m in files if docs[m]["target"] in (0x88, 0x99, 0xa1))
    if len(whole) < expected or not top_all:
        failures.append("only %d of the %d 0x88/0x99/0xa1 emotion files run whole" % (len(whole), expected))
    # truncation instead of rounding to nearest shows as a bias near -0.5
    if signed and abs(float(np.mean(signed))) > MAX_BIAS:
        failures.append("cross-target: pooled values biased by %.3f steps (limit %.2f)" %
                        (float(np.mean(signed)), MAX_BIAS))
    if worst_steps > MAX_POOL_STEPS or worst_prob > MAX_PROB_DIFF:
        failures.append("cross-target: pooled values differ by up to %d steps (limit %d), "
                        "probabilities by up to %.4f (limit %.2f)" %
                        (worst_steps, MAX_POOL_STEPS, worst_prob, MAX_PROB_DIFF))


def main():
    argv, tier = tier_of(sys.argv)
    if len(argv) != 5 or argv[3] != "--corpus":
        sys.exit("usage: check_cpu_shpool.py NBG REFOP --corpus DIR [--tier corpus|slow]")
    nbg, refop, corpus = argv[1], argv[2], argv[4]
    dumper = os.path.join(os.path.dirname(os.path.abspath(refop)), "nbg-cpu-dump")
    from tc_corpus import need
    need("check_cpu_shpool", "the SH pooling checks", corpus)
    need_numpy("check_cpu_shpool")
    every = sorted(glob.glob(os.path.join(corpus, "v1", "*emotion*.nb")))
    # each compilation quantizes anew: the corpus tier checks the files of the
    # newest file-format version, the slow tier those of the others
    docs = inspect_many(nbg, every, "--operations", "--patches")
    newest = max(d["version"] for d in docs.values())
    files = split(every, tier, [m for m in every if docs[m]["version"] == newest])
    failures, figures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        quants = check_per_op(nbg, refop, files, docs, tmp, failures, figures)
        check_nn_quant(nbg, files, quants, failures, figures)
        check_cross_target(nbg, dumper, files, docs, tmp, failures, figures)
    finish(figures, failures)


if __name__ == "__main__":
    main()
