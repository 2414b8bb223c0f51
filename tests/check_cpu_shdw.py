#!/usr/bin/env python3
"""The DepthwiseConvLayer SH operation (the image classification network's
7x7 global average pooling on targets 0x99 and 0xa1) that the CPU backend
runs by reference semantics (lib/cpu/ops/shdw.c), against
references no C code here computes.

1. Recovery, from the raw bytes: the operation's state buffer (its LOAD_STATE
   stream) and patches, decoded here.  The kernels are the LCDT entry the
   MISC_DYNA_INPUT patch of the kernel address (uniform 0x36020) names, read
   as rows of kx x ky codes with the uniforms' row stride: they must equal
   the kernels `nbg weights` decodes for the same layer's NN depthwise
   convolution in the 0xbe and 0xe8 files (1024x1x7x7, zero point 0), whose
   corrected biases must be 0 (the shader loads no bias); the scale
   uniform 0x36080 must be, bit for bit, the float32 those NN commands'
   scale fields encode; both NN commands' zero points, and the out_zero_point
   of the NN operation writing the shader's input, must be 0.
2. Per operation against numpy: on synthesized images, the machine's
   buffers after the operation (nbg-cpu-dump; it does not write over its
   input, checked); and on random buffers, some near saturation
   (nbg-cpu-ref-op runs that one operation): out[c] = round half away from
   zero (sum of w x in over the 7x7 window x scale), saturated to 0..255,
   with the kernels and I/O of part 1; on the random buffers no other byte
   of any buffer may change.  (Few whole-network runs: the ASan suite runs
   this test too.)
3. Across targets: the 0xbe file's own NN depthwise input fed to the 0x99
   and 0xa1 shaders (nbg-cpu-ref-op) must give the 0xbe NN operation's 1024
   outputs exactly.  Then, on the same synthesized images (interleaved, as
   the input records say), each file's pooled values and its 1001 outputs of
   `nbg run --backend cpu` against the 0xbe file's (0xbe and 0xe8 agree
   exactly, check_cpu_tpfc.py): the differences (quantization steps) are
   printed, with the limits below, and the top-1 class must be equal.
4. Mutations of the 0x99 file are refused with their ids (shdw-*).

Tiers (--tier, check_cpu.tier_of): corpus runs part 1, part 2 on the
random buffers and part 4; slow part 2 on the images (most of the network
runs before the shader) and part 3.  No --tier: both.

Usage: check_cpu_shdw.py NBG REFOP --corpus DIR [--tier corpus|slow] (exit
77 when the corpus or Debian's python3-numpy is missing); nbg-cpu-dump is
REFOP's neighbour.
"""
import json
import os
import struct
import sys
import tempfile

from check_cpu import dump, finish, in_tier, read_output, ref_op_runs, run, run_cpu, scale_of, tier_of
from check_cpu_tp import need_numpy
from check_cpu_ref import LABEL, check_refused, inspect, plan_lines, region_sizes, uniforms

SH = {"99": "v1/10014_99_image_classify_99_S905D3.nb", "a1": "v1/10014_a1_image_classify_a1_C308X.nb"}
NN = {"be": "v1/10014_be_image_classify_be_C305X.nb", "e8": "v1/10014_e8_image_classify_e8_T982.nb"}
FMT = 0x444051f0
# cross-target limits (quantization steps of the 1001 outputs, against 0xbe)
MAX_STEPS = {"99": 3, "a1": 3}


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def region(p):
    io = p["source_type_name"] in ("INPUT", "OUTPUT")
    return (p["source_type_name"], p["index"] if io else -1)


def shader_io(model, nbg):
    """The shader's I/O, kernels and scale decoded from the raw bytes."""
    import numpy as np
    doc = inspect(nbg, model)
    data = open(model, "rb").read()
    ops = [o for o in doc["operations"] if o["type_name"] == "SH" and
           o["layer_name"] == "DepthwiseConvLayer"]
    assert len(ops) == 1, "one DepthwiseConvLayer SH operation"
    o = ops[0]
    u = uniforms(data, doc, o)
    v = {a: u[a][0] for a in u}
    pat = {p["dest_offset"]: p for p in doc["patches"]
           if p["operation"] == o["record_index"] and p["type"] == 0}
    assert v[0x3600c] == v[0x3602c] == v[0x3606c] == FMT, "format words"
    w, h, c = v[0x36008] & 0xffff, v[0x36008] >> 16, v[0x36014]
    kx, ky = v[0x36044], v[0x36048]
    assert (kx, ky) == (w, h) and v[0x36028] == (c << 16 | kx * ky) and v[0x36068] == 0x10001
    pi, pk, po = pat[u[0x36000][1]], pat[u[0x36020][1]], pat[u[0x36060][1]]
    assert pk["source_type_name"] == "MISC_DYNA_INPUT", pk
    t = [t for t in doc["tables"] if t["name"] == "LCDT"][0]
    e = t["entries"][pk["index"]]
    base = t["data_offset"] + e["offset"] + pk["src_offset"] + v[0x36020]
    row = v[0x36024]
    assert (c - 1) * row + kx * ky <= e["size"] - pk["src_offset"] - v[0x36020]
    codes = np.array([np.frombuffer(data, np.uint8, kx * ky, base + i * row) for i in range(c)])
    return dict(op=o["record_index"], doc=doc, c=c, kx=kx, ky=ky, codes=codes,
                scale_bits=v[0x36080], scale=struct.unpack("<f", struct.pack("<I", v[0x36080]))[0],
                ri=region(pi), io=pi["src_offset"] + v[0x36000], irow=v[0x36004], islice=v[0x36010],
                ro=region(po), oo=po["src_offset"] + v[0x36060], oslice=v[0x36070],
                entry=pk["index"], entry_size=e["size"], uniforms=u)


def numpy_op(q, x):
    """x: [c][ky][kx] uint8 -> the 1024 outputs."""
    import numpy as np
    acc = (q["codes"].astype(np.int64) * x.reshape(q["c"], -1).astype(np.int64)).sum(axis=1)
    # acc < 2^22 and a 24-bit scale: the product is exact in float64
    return np.clip(np.floor(acc * float(q["scale"]) + 0.5), 0, 255).astype(np.uint8)


def read_in(q, bufs):
    import numpy as np
    b = bufs[q["ri"]]
    return np.array([[b[q["io"] + z * q["islice"] + y * q["irow"]:][:q["kx"]] for y in range(q["ky"])]
                     for z in range(q["c"])])


def nn_layer(nbg, model, tmp):
    """The NN depthwise 7x7 -> 1x1 operation: (operation, fields, target,
    codes [c][49], bias, the operation record of --commands)."""
    import numpy as np
    doc = json.loads(run([nbg, "inspect", "--commands", "--json", model]).stdout)
    dw = [o for o in doc["commands"]["operations"] if o["engine"] == "NN" and
          o["kind"] == "depthwise conv" and o["kernel"] == [7, 7, 1] and o["output"][:2] == [1, 1]]
    assert len(dw) == 1, "one NN depthwise 7x7 -> 1x1"
    o = dw[0]
    cmds = {c["operation"]: c for c in
            [v for v in doc["commands"]["nn"].values() if isinstance(v, list)][0]}
    wdir = os.path.join(tmp, "w_" + os.path.basename(model))
    r = run([nbg, "weights", "--op", str(o["operation"]), "--out", wdir, model])
    assert r.returncode == 0, r.stderr
    wj = json.load(open(os.path.join(wdir, "weights.json")))["weights"]["operations"][0]
    codes = np.load(os.path.join(wdir, wj["files"]["weights"]))
    bias = np.load(os.path.join(wdir, wj["files"]["bias"]))
    return o, cmds[o["operation"]]["fields"], doc["target"], codes.reshape(codes.shape[0], -1), \
        bias, wj["zero_point"]


def producer_zp(nbg, model, q):
    """out_zero_point of the last NN operation before the shader writing its input."""
    doc = json.loads(run([nbg, "inspect", "--commands", "--json", model]).stdout)
    cmds = {c["operation"]: c for c in
            [v for v in doc["commands"]["nn"].values() if isinstance(v, list)][0]}
    w = [o for o in doc["commands"]["operations"] if o["engine"] == "NN" and
         o["operation"] < q["op"] and region(o["output_ref"]) == q["ri"] and
         o["output_ref"]["offset"] == q["io"]]
    return (w[-1]["operation"], cmds[w[-1]["operation"]]["fields"]["out_zero_point"]) if w else None


def check_recovery(nbg, corpus, tmp, failures, figures):
    """Part 1; returns the decoded shaders and NN layers."""
    import numpy as np
    shaders = {k: shader_io(os.path.join(corpus, p), nbg) for k, p in SH.items()}
    layers = {k: nn_layer(nbg, os.path.join(corpus, p), tmp) for k, p in NN.items()}
    rows = []
    for k, q in shaders.items():
        for n, (o, f, target, codes, bias, zp) in layers.items():
            mul, shift = scale_of(target, f)
            nn_bits = f32_bits(mul / 2 ** shift)
            same = codes.shape == q["codes"].shape and np.array_equal(codes, q["codes"])
            if not same or zp != 0 or bias.any():
                failures.append("0x%s kernels (LCDT entry %d, %s) differ from 0x%s op %d's decoded "
                                "%s (zero point %s, biases %s)" %
                                (k, q["entry"], q["codes"].shape, n, o["operation"], codes.shape, zp,
                                 np.unique(bias)[:4]))
            if nn_bits != q["scale_bits"]:
                failures.append("0x%s scale uniform 0x%08x is not 0x%s's command scale 0x%08x" %
                                (k, q["scale_bits"], n, nn_bits))
            if f["in_image_border_const"] != 0 or f["out_zero_point"] != 0:
                failures.append("0x%s op %d: zero points %d, %d, not 0" %
                                (n, o["operation"], f["in_image_border_const"], f["out_zero_point"]))
        pz = producer_zp(nbg, os.path.join(corpus, SH[k]), q)
        if pz is None or pz[1] != 0:
            failures.append("0x%s: the NN operation writing the shader's input: %s (zero point 0 "
                            "expected)" % (k, pz))
        rows.append("0x%s op %d: LCDT entry %d (%d bytes) read as %d rows of %d codes, values %s, "
                    "scale uniform 0x%08x = %.9g, input written by op %s (zero point %s)" %
                    (k, q["op"], q["entry"], q["entry_size"], q["c"], q["kx"] * q["ky"],
                     sorted(set(q["codes"].ravel().tolist())), q["scale_bits"], q["scale"],
                     pz[0] if pz else "-", pz[1] if pz else "-"))
    figures.append("recovery: %s; equal to the decoded kernels of 0xbe op %d and 0xe8 op %d "
                   "(1024x1x7x7, zero point 0, biases 0) and their command scale bit for bit: %s" %
                   ("; ".join(rows), layers["be"][0]["operation"], layers["e8"][0]["operation"],
                    "no" if failures else "yes"))
    return shaders, layers


def synth_images(tmp, count):
    """count 224x224x3 images: (planar path, interleaved path)."""
    import numpy as np
    rng = np.random.default_rng(2029)
    yy, xx = np.mgrid[0:224, 0:224]
    out = []
    for k in range(count):
        pic = np.stack([(xx * (k + 1) + yy) % 256, (3 * xx + 40 * k) % 256,
                        128 + 100 * np.sin(yy / (5.0 + 4 * k))])
        pic = np.clip(pic + rng.normal(0, 12, pic.shape), 0, 255).astype(np.uint8)
        planar, inter = os.path.join(tmp, "p%d.bin" % k), os.path.join(tmp, "i%d.bin" % k)
        pic.tofile(planar)
        pic.transpose(1, 2, 0).copy().tofile(inter)
        out.append((planar, inter))
    return out


def compare_after(q, before, after, want, failures, what):
    """The output bytes equal want and no other byte changed."""
    import numpy as np
    at = q["oo"] + q["oslice"] * np.arange(q["c"])
    ok = True
    for k, b in before.items():
        a = after[k].copy()
        if k == q["ro"]:
            if not np.array_equal(a[at], want):
                d = np.abs(a[at].astype(int) - want.astype(int))
                failures.append("%s: %d of %d outputs differ from numpy (up to %d)" %
                                (what, int((d > 0).sum()), len(want), int(d.max())))
                ok = False
            a[at] = b[at]
        if not np.array_equal(a, b):
            failures.append("%s: bytes of %s_%d outside the output changed" % ((what,) + k))
            ok = False
    return ok


def check_per_op(nbg, dumper, refop, corpus, shaders, imgs, tmp, failures, figures, tier):
    """Part 2: the random buffers in the corpus tier, the synthesized images
    through the model (most of it runs before the shader) in the slow tier;
    returns the buffers after the operation on each image {(file, image
    index): buffers}."""
    import numpy as np
    rng = np.random.default_rng(47)
    runs = equal = values = saturated = 0
    afters = {}
    for k, q in shaders.items():
        model = os.path.join(corpus, SH[k])
        rest = plan_lines(nbg, model).get(q["op"], ("", "", ""))[2]
        if not rest.endswith("execute " + LABEL):
            failures.append("0x%s op %d not executed by reference semantics: %s" % (k, q["op"], rest))
            continue
        in_end = q["io"] + (q["c"] - 1) * q["islice"] + (q["ky"] - 1) * q["irow"] + q["kx"]
        if q["ri"] == q["ro"] and q["io"] < q["oo"] + (q["c"] - 1) * q["oslice"] + 1 and q["oo"] < in_end:
            failures.append("0x%s op %d writes over its input" % (k, q["op"]))
            continue
        for i, (_, inter) in enumerate(imgs if in_tier(tier, "slow") else []):
            # the input is left as it is (checked above): the dump after the
            # operation holds it; the other bytes are checked on the random
            # buffers below
            after = afters[(k, i)] = dump(dumper, model, q["op"] + 1, [inter], tmp)
            want = numpy_op(q, read_in(q, after))
            got = after[q["ro"]][q["oo"] + q["oslice"] * np.arange(q["c"])]
            runs += 1
            if np.array_equal(got, want):
                equal += 1
            else:
                failures.append("0x%s op %d on an image: %d of %d outputs differ from numpy" %
                                (k, q["op"], int((got != want).sum()), len(want)))
            values += len(want)
        trials = []
        for trial in range(3 if in_tier(tier, "corpus") else 0):
            ind, outd = tempfile.mkdtemp(dir=tmp), tempfile.mkdtemp(dir=tmp)
            before = {}
            for key, size in region_sizes(q["doc"]).items():
                lo = 0 if trial < 2 else 250  # the last: near saturation
                before[key] = rng.integers(lo, 256, size, dtype=np.uint8)
                before[key].tofile(os.path.join(ind, "%s_%d.bin" % key))
            trials.append((ind, outd, before))
        r = ref_op_runs(refop, model, [(q["op"], ind, outd) for ind, outd, _ in trials])
        if trials and r.returncode != 0:
            failures.append("0x%s op %d: nbg-cpu-ref-op exit %d: %s %s" %
                            (k, q["op"], r.returncode, r.stdout, r.stderr))
            trials = []
        for ind, outd, before in trials:
            after = {key: np.fromfile(os.path.join(outd, "%s_%d.bin" % key), dtype=np.uint8)
                     for key in before}
            want = numpy_op(q, read_in(q, before))
            saturated += int((want == 255).sum())
            runs += 1
            equal += compare_after(q, before, after, want, failures, "0x%s op %d on random buffers" %
                                   (k, q["op"]))
            values += len(want)
    figures.append("per operation: %d of %d runs (a synthesized image through the model, and "
                   "random buffers) equal to numpy's round(sum(w x in) x scale) byte for byte, "
                   "%d values (%d saturated at 255), no other byte changed on the random buffers" %
                   (equal, runs, values, saturated))
    expected = 2 * ((len(imgs) if in_tier(tier, "slow") else 0) + (3 if in_tier(tier, "corpus") else 0))
    if runs < expected:
        failures.append("only %d per-operation runs, not %d" % (runs, expected))
    return afters


def check_cross_target(nbg, dumper, refop, corpus, shaders, layers, imgs, afters, tmp, failures,
                       figures):
    """Part 3 (afters: check_per_op's buffers after each shader)."""
    import numpy as np
    be_model = os.path.join(corpus, NN["be"])
    be_op = layers["be"][0]
    injected = inj_values = 0
    pooled = {k: [] for k in shaders}
    outs = {k: [] for k in list(shaders) + ["be"]}  # 0xe8 = 0xbe: check_cpu_tpfc.py
    ir, orf = be_op["input_ref"], be_op["output_ref"]
    if region(ir) == region(orf) and ir["offset"] < orf["offset"] + be_op["dataflow"]["write_bytes"] and \
            orf["offset"] < ir["offset"] + be_op["dataflow"]["read_bytes"]:
        failures.append("0xbe op %d writes over its input: read it from a dump before" % be_op["operation"])
        return
    for i, (planar, inter) in enumerate(imgs):
        # the operation leaves its input as it is (checked above): one dump
        ba = dump(dumper, be_model, be_op["operation"] + 1, [inter], tmp)
        x = read_output(dict(be_op, output=be_op["input"], output_ref=be_op["input_ref"],
                             dataflow=dict(output_row_stride=be_op["dataflow"]["input_row_stride"],
                                           output_slice_stride=be_op["dataflow"]["input_slice_stride"])),
                        ba).astype(np.uint8)
        y = read_output(be_op, ba).ravel()
        for k, q in shaders.items():
            model = os.path.join(corpus, SH[k])
            ind, outd = tempfile.mkdtemp(dir=tmp), tempfile.mkdtemp(dir=tmp)
            buf = np.zeros(region_sizes(q["doc"])[q["ri"]], dtype=np.uint8)
            for z in range(q["c"]):
                for r in range(q["ky"]):
                    s = q["io"] + z * q["islice"] + r * q["irow"]
                    buf[s:s + q["kx"]] = x[z, r]
            buf.tofile(os.path.join(ind, "%s_%d.bin" % q["ri"]))
            rr = run([refop, model, str(q["op"]), ind, outd])
            got = np.fromfile(os.path.join(outd, "%s_%d.bin" % q["ro"]), dtype=np.uint8) \
                if rr.returncode == 0 else None
            got = got[q["oo"] + q["oslice"] * np.arange(q["c"])] if got is not None else None
            if got is None or not np.array_equal(got, y):
                failures.append("0x%s shader on 0xbe's input differs from 0xbe op %d" %
                                (k, be_op["operation"]))
            else:
                injected += 1
                inj_values += len(y)
            after = afters.get((k, i))
            if after is None:
                return  # not executed: check_per_op said so
            pooled[k].append(after[q["ro"]][q["oo"] + q["oslice"] * np.arange(q["c"])].astype(int) -
                             y.astype(int))
        for k in outs:
            path = os.path.join(corpus, SH.get(k) or NN[k])
            got, _, err = run_cpu(nbg, path, [inter], tmp)
            if got is None:
                failures.append("nbg run --backend cpu on %s: %s" % (path, err))
                return
            outs[k].append(got.astype(int))
    figures.append("the 0xbe NN depthwise input through the 0x99 and 0xa1 shaders: %d of %d runs "
                   "equal to 0xbe op %d's output, %d values" %
                   (injected, 2 * len(imgs), be_op["operation"], inj_values))
    rows = []
    for k in shaders:
        d = [a - b for a, b in zip(outs[k], outs["be"])]
        worst = max(int(np.abs(v).max()) for v in d)
        mean = float(np.mean([np.abs(v).mean() for v in d]))
        top = sum(int(a.argmax() == b.argmax()) for a, b in zip(outs[k], outs["be"]))
        row = "0x%s: 1001 outputs within %d steps of 0xbe's (mean |d| %.3f, %d of %d values " \
              "differ), top-1 equal on %d of %d" % \
              (k, worst, mean, sum(int((v != 0).sum()) for v in d), 1001 * len(d), top, len(d))
        if k in pooled:
            p = pooled[k]
            row += ", its 1024 pooled values within %d steps of 0xbe's (%d of %d differ)" % \
                (max(int(np.abs(v).max()) for v in p), sum(int((v != 0).sum()) for v in p),
                 sum(len(v) for v in p))
        rows.append(row)
        if top != len(d) or worst > MAX_STEPS.get(k, 0):
            failures.append("cross-target %s (limit %d steps, top-1 equal)" % (row, MAX_STEPS.get(k, 0)))
    figures.append("cross-target, %d synthesized images: %s" % (len(imgs), "; ".join(rows)))


def a1_layer4(nbg, dumper, corpus, inter, tmp, figures):
    """A figure: layer 4 (conv 3x3x64 -> 64, stride 2), one op on 0x99,
    three row tiles on 0xa1 whose layer-3 input streams through a VIP SRAM
    ring of 64 slices of 54 rows."""
    import numpy as np
    imgs = []
    for k, last, first in (("99", 5, 5), ("a1", 12, 7)):  # the layer's last op, its first
        model = os.path.join(corpus, SH[k])
        doc = json.loads(run([nbg, "inspect", "--commands", "--json", model]).stdout)
        op = [o for o in doc["commands"]["operations"] if o["operation"] == first][0]
        imgs.append(read_output(dict(op, output=[56, 56, 64]), dump(dumper, model, last + 1, [inter], tmp)))
    d = imgs[0] != imgs[1]
    figures.append("layer 4 on the first image, 0xa1 (3 row tiles) against 0x99 (one operation): "
                   "%d of %d values differ, in channels %s" %
                   (int(d.sum()), d.size, sorted(set(np.nonzero(d)[0].tolist()))))


def check_mutations(nbg, corpus, shaders, tmp, failures, figures):
    """Part 4."""
    q = shaders["99"]
    model = os.path.join(corpus, SH["99"])
    data = bytearray(open(model, "rb").read())
    doc = q["doc"]
    st = [t for t in doc["tables"] if t["name"] == doc["graph"]["state_table"]][0]
    o = [o for o in doc["operations"] if o["record_index"] == q["op"]][0]
    base = st["data_offset"] + st["entries"][o["state_id"]]["offset"]
    lcd = [t for t in doc["tables"] if t["name"] == "LCDT"][0]
    kbase = lcd["data_offset"] + lcd["entries"][q["entry"]]["offset"]
    u = q["uniforms"]

    def word(reg, value):
        m = bytearray(data)
        struct.pack_into("<I", m, base + u[reg][1], value)
        return m
    cases = [("input format 0x444051c0", word(0x3600c, 0x444051c0), "shdw-format-unsupported", "0x444051c0"),
             ("uniform 0x36050 = 1", word(0x36050, 1), "shdw-uniforms-unknown", "0x36050"),
             ("kernel 5x7", word(0x36044, 5), "shdw-shape-unsupported", "kernel 5x7"),
             ("scale NaN", word(0x36080, 0x7fc00000), "shdw-scale-invalid", "0x7fc00000"),
             ("kernel address patched elsewhere", word(0x36020, q["entry_size"]),
              "shdw-kernels-not-located", "MISC_DYNA_INPUT")]
    m = bytearray(data)
    m[kbase + 7 * 49 + 3] = 254
    cases.append(("one kernel code 254", m, "shdw-kernel-order-unknown", "channel 7"))
    check_refused(nbg, cases, q["op"], tmp, failures)
    figures.append("mutations of the 0x99 shader refused with their ids: %d" % len(cases))


def main():
    argv, tier = tier_of(sys.argv)
    if len(argv) != 5 or argv[3] != "--corpus":
        sys.exit("usage: check_cpu_shdw.py NBG REFOP --corpus DIR [--tier corpus|slow]")
    nbg, refop, corpus = argv[1], argv[2], argv[4]
    dumper = os.path.join(os.path.dirname(os.path.abspath(refop)), "nbg-cpu-dump")
    from tc_corpus import need
    need("check_cpu_shdw", "the SH depthwise convolution checks", corpus)
    need_numpy("check_cpu_shdw")
    failures, figures = [], []
    corpus_tier = in_tier(tier, "corpus")
    with tempfile.TemporaryDirectory() as tmp:
        # the recovery in the corpus tier; the slow tier reads the same I/O
        shaders, layers = check_recovery(nbg, corpus, tmp, failures if corpus_tier else [],
                                         figures if corpus_tier else [])
        imgs = synth_images(tmp, 2)
        afters = check_per_op(nbg, dumper, refop, corpus, shaders, imgs, tmp, failures, figures, tier)
        if in_tier(tier, "slow"):  # whole networks: minutes under ASan
            check_cross_target(nbg, dumper, refop, corpus, shaders, layers, imgs, afters, tmp, failures,
                               figures)
            a1_layer4(nbg, dumper, corpus, imgs[0][1], tmp, figures)
        if corpus_tier:
            check_mutations(nbg, corpus, shaders, tmp, failures, figures)
    finish(figures, failures)


if __name__ == "__main__":
    main()
