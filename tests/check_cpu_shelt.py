#!/usr/bin/env python3
"""The TensorAdd and TensorScale SH operations the CPU backend runs by
reference semantics (lib/cpu/ops/shelt.c), against references no C
code here computes.

1. Recovery, from the raw bytes and the NN/TP records alone: each shader's
   uniforms (its state buffer's LOAD_STATE stream, its patches) read as
   doc/cpu-backend.md says ("The elementwise shaders"):
   - the zero points 0x36070 (input 0) and 0x36100 (input 1) must equal the
     out_zp / out_zero_point of the TP or NN operation that last writes that
     input's address before the shader (through a TensorCopy that copies
     bytes, or a TensorScale, to the operation before it; a TensorAdd's
     output: its own 0x36060), and 0x36060 (the output zero point) the
     in_zp / in_image_border_const of every NN/TP operation after it that
     reads exactly its output address;
   - yolov8n: each input's scale is 1 / the post multiplier of the SiLU
     lookup table (TP) that produced it (a table of silu(x), its output
     quantized by that multiplier, check_cpu_lut.py), and the output's is
     input 0's (the addition feeds a concatenation with input 0's bytes):
     0x36064 must be 1 and 0x36068 the ratio of the two multipliers;
   - hand-tiny: 0x1000c computes input 1 in uint8; 0x1000e converts it to
     fp16 first by a TP TensorCopy whose multiplier is that input's scale
     and whose in_zp its zero point, and its shader's 0x36068 is 1 / s_out.
     0x1000c's 0x36068 (s1 / s_out) must equal the product, its zero point
     the TensorCopy's in_zp, and 0x36060, 0x36064, 0x36070 the 0x1000e
     shader's.
   - TensorScale: the zero point of the operation that writes its input
     must equal the in_zp / in_image_border_const of the operation that
     reads its output (no requantization: the bytes are copied).
2. Per operation against numpy on synthesized buffers (nbg-cpu-ref-op runs
   one operation): the addition numpy.rint((x0 - zp0) a + (x1 - zp1) b +
   zpo) clipped to 0..255 (an exact tie, either neighbour: the shader's tie
   rule is not established), the upsampling numpy.repeat by 2 along x and
   y; no other byte of any buffer may change.
   The fp16 additions of 0x1000e and 0x1000f read input 1 as IEEE halves
   (numpy.float16 of its little-endian byte pairs; the synthesized halves
   are finite, from -16 to 16, the second trial's also +-60000 and
   +-infinity, where the sums saturate).
3. The same on the model's own data: 0x1000c run on synthesized images up
   to each of its three shaders and one operation further (nbg-cpu-dump),
   and yolov8n up to each of its additions (its upsamplings, after the
   SPPF block, are checked on the synthesized buffers of part 2),
   so that the shader reads what the operations before it wrote; then the
   whole model runs (nbg run --backend cpu) and its outputs are the
   buffers the dump leaves after the last operation.
4. Mutations refused with their ids.
5. Across compilations: the three hand-tiny files on the same images,
   dumped after their TensorScale: its input and output must be equal.
   Then each runs whole: 0x1000c adds input 1 in uint8, 0x1000e and
   0x1000f first copy it into fp16 (a TP copy, ops/tp.c) and add the
   halves.  Their outputs must agree within 1 step in at most 2 % of the
   values (a half carries 11 significant bits, so the sums before rounding
   differ by up to about 0.1 step), and 0x1000e's equal 0x1000f's.

Tiers (--tier, check_cpu.tier_of): corpus runs parts 1 and 2 and the first
mutation of each reason id; slow parts 3 and 5 (the models up to their
shaders and whole) and the other mutations.  No --tier: both.

Usage: check_cpu_shelt.py NBG REFOP --corpus DIR [--tier corpus|slow] (exit
77 when the corpus or Debian's python3-numpy is missing); nbg-cpu-dump is
REFOP's neighbour.
"""
import os
import struct
import sys
import tempfile

from check_cpu import dump, finish, in_tier, prefetch, ref_op_runs, run, run_cpu, split, tier_of
from check_cpu_ref import LABEL, inspect as inspect_ops, plan_lines, region_sizes, uniforms
from check_cpu_tp import inputs_for, inspect, multiplier, need_numpy

YOLO = "v1/1000f_88_yolov8n.nb"
HAND = "v1/1000c_99_hand-tiny.nb"
HAND_FP16 = "v1/1000e_99_hand-tiny.nb"
HAND_FP16_F = "v1/1000f_99_hand-tiny.nb"
# 0x1000e's TensorAdd and TensorCopy for 0x1000c's TensorAdd
HAND_PAIRS = {319: (64, 63), 325: (71, 70)}


def f32(v):
    return struct.unpack("<f", struct.pack("<I", v))[0]


class Model:
    """A model's records: its operations with their command fields, its SH
    shaders' uniforms and patched image addresses."""

    def __init__(self, nbg, path):
        self.path = path
        self.name = os.path.basename(path)
        self.cmd = inspect(nbg, path)
        self.doc = inspect_ops(nbg, path)
        self.data = open(path, "rb").read()
        c = self.cmd["commands"]
        self.ops = {o["operation"]: o for o in c["operations"]}
        self.fields = {n: (c["nn"] if o["engine"] == "NN" else c["tp"])["commands"][o["command"]]["fields"]
                       for n, o in self.ops.items()}
        self.sh = {}
        for o in self.doc["operations"]:
            if o["type_name"] == "SH" and o["layer_name"] in ("TensorAdd", "TensorScale"):
                self.sh[o["record_index"]] = self.shader(o)

    def shader(self, o):
        u = uniforms(self.data, self.doc, o)
        v = {a: u[a][0] for a in u}
        pat = {p["dest_offset"]: p for p in self.doc["patches"]
               if p["operation"] == o["record_index"] and p["type"] == 0}
        imgs = []
        for base in ((0x36000, 0x36020, 0x36040) if o["layer_name"] == "TensorAdd" else (0x36000, 0x36020)):
            p = pat[u[base][1]]
            io = p["source_type_name"] in ("INPUT", "OUTPUT")
            imgs.append(dict(region=(p["source_type_name"], p["index"] if io else -1),
                             src=p["source_type_name"], off=p["src_offset"] + v[base],
                             x=v[base + 8] & 0xffff, y=v[base + 8] >> 16, row=v[base + 4],
                             slice=v[base + 0x10], z=v[base + 0x14], fmt=v[base + 0xc]))
        q = dict(layer=o["layer_name"], imgs=imgs, u=u, v=v, state_id=o["state_id"])
        if o["layer_name"] == "TensorAdd":
            q.update(zpo=f32(v[0x36060]), a=f32(v[0x36064]), b=f32(v[0x36068]), zp0=v[0x36070],
                     zp1=v[0x36100])
        return q

    def in_zp(self, n):
        f = self.fields[n]
        return f["in_image_border_const"] if self.ops[n]["engine"] == "NN" else f["in_zp"]

    def out_zp(self, n):
        f = self.fields[n]
        return f["out_zero_point"] if self.ops[n]["engine"] == "NN" else f["out_zp"]

    def writer(self, img, before):
        """The last operation before `before` that writes the image's address."""
        best = None
        for n, o in self.ops.items():
            r = o["output_ref"]
            if n < before and r["source_type_name"] == img["src"] and r["offset"] == img["off"]:
                best = n if best is None or n > best else best
        for n, q in self.sh.items():
            if n < before and q["imgs"][-1]["src"] == img["src"] and q["imgs"][-1]["off"] == img["off"]:
                best = n if best is None or n > best else best
        return best

    def readers(self, img, after, within=False):
        """The NN/TP operations after `after` that read exactly the image's
        address, up to the next write of it (within: the first whose read
        bytes hold it, a concatenation, before any write over it)."""
        out = []
        for n in sorted(self.ops):
            if n <= after:
                continue
            o = self.ops[n]
            i = o["input_ref"]
            if i["source_type_name"] == img["src"] and (i["offset"] == img["off"] or within and (
                    i["offset"] < img["off"] < i["offset"] + o["dataflow"]["read_bytes"])):
                out.append(n)
                if within:
                    break
            r = o["output_ref"]
            if r["source_type_name"] == img["src"] and (r["offset"] == img["off"] or within and (
                    r["offset"] <= img["off"] < r["offset"] + o["dataflow"]["write_bytes"])):
                break
        return out

    def source(self, img, before):
        """(zero point, producing TP/NN operation behind byte copies) of an image."""
        n = self.writer(img, before)
        if n in self.sh:
            q = self.sh[n]
            if q["layer"] == "TensorAdd":
                return q["zpo"], ("add", n)
            return self.source(q["imgs"][0], n)
        o = self.ops[n]
        if o["engine"] == "TP" and o["layer_name"] == "TensorCopy" and multiplier(self.fields[n]) == 1.0:
            return self.out_zp(n), self.origin(o["producer"])
        return self.out_zp(n), ("op", n)

    def origin(self, n):
        o = self.ops[n]
        if o["engine"] == "TP" and o["layer_name"] == "TensorCopy" and multiplier(self.fields[n]) == 1.0:
            return self.origin(o["producer"])
        return ("op", n)


def scale_of(m, src):
    """An image's scale where it is a SiLU table's output: 1 / its multiplier;
    a TensorAdd with a = 1: its input 0's."""
    kind, n = src
    if kind == "add":
        q = m.sh[n]
        return scale_of(m, m.source(q["imgs"][0], n)[1]) if abs(q["a"] - 1) < 1e-6 else None
    o = m.ops[n]
    if o["engine"] == "TP" and o["kind"] == "lut":
        return 1.0 / multiplier(m.fields[n])
    return None


def check_recovery(models, failures, figures):
    zps = zpo_checked = ratios = scale_readers = concat = 0
    worst = 0.0
    for m in models.values():
        for n, q in sorted(m.sh.items()):
            if q["layer"] == "TensorScale":
                zin = m.source(q["imgs"][0], n)[0]
                rd = m.readers(q["imgs"][1], n)
                for r in rd:
                    if m.in_zp(r) != zin:
                        failures.append("%s op %d: TensorScale input zero point %d, op %d reads its "
                                        "output with %d" % (m.name, n, zin, r, m.in_zp(r)))
                scale_readers += len(rd)
                continue
            if q["imgs"][1]["fmt"] == 0x44405071:
                continue  # 0x1000e, 0x1000f: input 1 fp16, refused; compared below
            z0, s0 = m.source(q["imgs"][0], n)
            z1, s1 = m.source(q["imgs"][1], n)
            for what, want, got in (("0x36070", z0, q["zp0"]), ("0x36100", z1, q["zp1"])):
                if want != got:
                    failures.append("%s op %d: uniform %s is %d, the producer's zero point %d" %
                                    (m.name, n, what, got, want))
                zps += 1
            rd = m.readers(q["imgs"][2], n)
            if not rd:
                rd = m.readers(q["imgs"][2], n, within=True)
                concat += len(rd)
            for r in rd:
                if m.in_zp(r) != q["zpo"]:
                    failures.append("%s op %d: output zero point %g, op %d reads it with %d" %
                                    (m.name, n, q["zpo"], r, m.in_zp(r)))
                zpo_checked += 1
            if m.name == os.path.basename(YOLO):
                sa, sb = scale_of(m, s0), scale_of(m, s1)
                if sa is None or sb is None:
                    failures.append("%s op %d: an input's scale is not a SiLU table's" % (m.name, n))
                    continue
                # the output's scale is input 0's: a = 1, b = s1 / s0
                for what, want, got in (("0x36064", 1.0, q["a"]), ("0x36068", sb / sa, q["b"])):
                    rel = abs(got / want - 1)
                    worst = max(worst, rel)
                    ratios += 1
                    if rel > 3e-4:
                        failures.append("%s op %d: uniform %s %.7g, the tables' multipliers give %.7g" %
                                        (m.name, n, what, got, want))
    figures.append("recovery: %d input zero points of the executed additions equal their producers', "
                   "%d output zero points their readers' (%d of them read a concatenation holding it); %d readers of a TensorScale output read it "
                   "with its input's zero point; yolov8n: %d scale ratios equal the SiLU tables' "
                   "multipliers within %.1e (relative)" % (zps, zpo_checked, concat, scale_readers, ratios,
                                                   worst))
    hc, he = models[HAND], models[HAND_FP16]
    worst = 0.0
    for n, (ne, ncopy) in HAND_PAIRS.items():
        qc, qe = hc.sh[n], he.sh[ne]
        fc = he.fields[ncopy]
        s1 = multiplier(fc)
        want = qe["b"] * s1
        rel = abs(qc["b"] / want - 1)
        worst = max(worst, rel)
        if rel > 3e-4 or fc["in_zp"] != qc["zp1"] or qc["zpo"] != qe["zpo"] or qc["a"] != qe["a"] or \
                qc["zp0"] != qe["zp0"] or qe["imgs"][1]["fmt"] != 0x44405071:
            failures.append("%s op %d against %s op %d (TensorCopy op %d: scale %.7g, in_zp %d): "
                            "b %.7g, want %.7g; zp1 %d; zpo %g/%g; a %.7g/%.7g; zp0 %d/%d" %
                            (hc.name, n, he.name, ne, ncopy, s1, fc["in_zp"], qc["b"], want, qc["zp1"],
                             qc["zpo"], qe["zpo"], qc["a"], qe["a"], qc["zp0"], qe["zp0"]))
    figures.append("recovery: hand-tiny 0x1000c's 2 additions: b = 0x1000e's 1 / s_out times its fp16 "
                   "TensorCopy's scale within %.1e; zp1 its in_zp; zpo, a, zp0 equal" % worst)


F16 = 0x44405071


def image(buf, img, x=None, y=None):
    """(byte indices, values) of an image [z][y][x]: uint8, or for the fp16
    word the halves (indices of their low bytes) as float64."""
    import numpy as np
    x, y = x or img["x"], y or img["y"]
    step = 2 if img["fmt"] == F16 else 1
    idx = (img["off"] + np.arange(img["z"])[:, None, None] * img["slice"] +
           np.arange(y)[None, :, None] * img["row"] + step * np.arange(x)[None, None, :])
    if step == 1:
        return idx, buf[idx]
    halves = (buf[idx].astype(np.uint16) | buf[idx + 1].astype(np.uint16) << 8).view(np.float16)
    return idx, halves.astype(np.float64)


def put_halves(buf, img, rng, extremes):
    """Writes synthesized finite halves (with extremes, also +-60000 and
    +-infinity) into the fp16 image."""
    import numpy as np
    idx, _ = image(buf, img)
    h = rng.uniform(-16, 16, idx.shape).astype(np.float16)
    if extremes:
        h = np.where(rng.random(idx.shape) < 0.5, h,
                     rng.choice(np.array([60000, -60000, np.inf, -np.inf], np.float16), idx.shape))
    u = h.view(np.uint16)
    buf[idx] = (u & 0xff).astype(np.uint8)
    buf[idx + 1] = (u >> 8).astype(np.uint8)


def reference(q, before):
    """(output region, indices, expected values, tie mask) by numpy."""
    import numpy as np
    if q["layer"] == "TensorScale":
        _, x = image(before[q["imgs"][0]["region"]], q["imgs"][0])
        idx, _ = image(before[q["imgs"][1]["region"]], q["imgs"][1])
        want = np.repeat(np.repeat(x, 2, axis=1), 2, axis=2)
        return q["imgs"][1]["region"], idx, want, np.zeros(want.shape, bool)
    _, x0 = image(before[q["imgs"][0]["region"]], q["imgs"][0])
    _, x1 = image(before[q["imgs"][1]["region"]], q["imgs"][1])
    idx, _ = image(before[q["imgs"][2]["region"]], q["imgs"][2])
    with np.errstate(invalid="ignore"):
        exact = (x0.astype(np.float64) - q["zp0"]) * q["a"] + (x1.astype(np.float64) - q["zp1"]) * q["b"] + q["zpo"]
    want = np.clip(np.rint(exact), 0, 255)
    with np.errstate(invalid="ignore"):
        tie = np.abs(exact - np.floor(exact) - 0.5) < 1e-9
    return q["imgs"][2]["region"], idx, want, tie


def compare(q, before, after, failures, what):
    """Values compared, differing, ties."""
    import numpy as np
    reg, idx, want, tie = reference(q, before)
    got = after[reg][idx].astype(np.float64)
    bad = (got != want) & ~(tie & (np.abs(got - want) == 1))
    if bad.any():
        failures.append("%s: %d of %d values differ from numpy's, e.g. %g for %g" %
                        (what, int(bad.sum()), want.size, got[bad][0], want[bad][0]))
    rest = np.ones(len(after[reg]), dtype=bool)
    rest[idx.ravel()] = False
    if not np.array_equal(after[reg][rest], before[reg][rest]):
        failures.append("%s: bytes outside its output changed" % what)
    for k in before:
        if k != reg and not np.array_equal(before[k], after[k]):
            failures.append("%s: buffer %s changed" % (what, k))
    return want.size, int(bad.sum()), int(tie.sum())


def check_per_op(refop, models, tmp, failures, figures):
    import numpy as np
    rng = np.random.default_rng(47)
    runs = values = ties = halves = shaders = 0
    for m in models.values():
        lines = plan_lines(m.nbg, m.path)
        jobs = []
        for n, q in sorted(m.sh.items()):
            rest = lines.get(n, ("?", "?", ""))[2]
            f16 = q["layer"] == "TensorAdd" and q["imgs"][1]["fmt"] == F16
            if not rest.endswith("execute " + LABEL):
                failures.append("%s op %d (%s) not executed by reference semantics: %s" %
                                (m.name, n, q["layer"], rest))
                continue
            shaders += 1
            for trial in range(2):
                ind, outd = tempfile.mkdtemp(dir=tmp), tempfile.mkdtemp(dir=tmp)
                before = {}
                for k, size in region_sizes(m.doc).items():
                    # the second trial: only the extremes, where the sums saturate
                    b = rng.integers(0, 256, size, dtype=np.uint8) if trial == 0 else \
                        rng.choice(np.array([0, 1, 254, 255], np.uint8), size)
                    before[k] = b
                if f16:
                    put_halves(before[q["imgs"][1]["region"]], q["imgs"][1], rng, trial == 1)
                for k, b in before.items():
                    b.tofile(os.path.join(ind, "%s_%d.bin" % k))
                jobs.append((n, ind, outd, before, q, f16, trial))
        # one process per model runs its shaders' trials
        r = ref_op_runs(refop, m.path, [j[:3] for j in jobs])
        if r.returncode != 0:
            failures.append("%s: nbg-cpu-ref-op exit %d: %s %s" % (m.name, r.returncode, r.stdout, r.stderr))
            jobs = []
        for n, ind, outd, before, q, f16, trial in jobs:
            after = {k: np.fromfile(os.path.join(outd, "%s_%d.bin" % k), dtype=np.uint8) for k in before}
            v, _, t = compare(q, before, after, failures, "%s op %d trial %d" % (m.name, n, trial))
            runs += 1
            values += v
            ties += t
            halves += v if f16 else 0
    figures.append("per operation: %d runs of the %d executed shaders on synthesized buffers, %d values "
                   "equal numpy's (%d of them adding fp16 halves; %d exact ties, either neighbour accepted)" %
                   (runs, shaders, values, halves, ties))
    if not halves:
        failures.append("per operation: no fp16 addition was run")


# (model, image number) -> the output directory of a whole run on it
WHOLE = {}


def check_model_data(nbg, dumper, models, tmp, failures, figures):
    import numpy as np
    m = models[HAND]
    runs = values = 0
    for image_no in (5, 6):
        paths = inputs_for(m.cmd, tmp, image_no)
        # one run dumps around every shader and after the last operation
        prefetch(dumper, m.path, [n + d for n in m.sh for d in (0, 1)] + [max(m.ops) + 1], paths, tmp)
        for n, q in sorted(m.sh.items()):
            before = dump(dumper, m.path, n, paths, tmp)
            after = dump(dumper, m.path, n + 1, paths, tmp)
            v, _, _ = compare(q, before, after, failures, "%s op %d, image %d" % (m.name, n, image_no))
            runs += 1
            values += v
        last = dump(dumper, m.path, max(m.ops) + 1, paths, tmp)
        outd = tempfile.mkdtemp(dir=tmp)
        r = run([nbg, "run", "--backend", "cpu", m.path, "--output-dir", outd] +
                sum((["--input", p] for p in paths), []))
        if r.returncode != 0:
            failures.append("%s: nbg run --backend cpu exit %d: %s" % (m.name, r.returncode, r.stderr))
            continue
        WHOLE[(m.path, image_no)] = outd  # check_whole compares this run with the other compilations'
        for rec in m.cmd["outputs"]:
            got = np.fromfile(os.path.join(outd, "output_%d.bin" % rec["index"]), dtype=np.uint8)
            if not np.array_equal(got, last[("OUTPUT", rec["index"])]):
                failures.append("%s: output %d differs from the dumped buffer" % (m.name, rec["index"]))
    # yolov8n on its own data: its 6 additions
    y = models[YOLO]
    paths = inputs_for(y.cmd, tmp, 9)
    prefetch(dumper, y.path, [n + d for n, q in y.sh.items() if q["layer"] == "TensorAdd" for d in (0, 1)],
             paths, tmp)
    yruns = 0
    for n, q in sorted(y.sh.items()):
        if q["layer"] != "TensorAdd":
            continue
        before = dump(dumper, y.path, n, paths, tmp)
        after = dump(dumper, y.path, n + 1, paths, tmp)
        v, _, _ = compare(q, before, after, failures, "%s op %d, image 9" % (y.name, n))
        yruns += 1
        values += v
    figures.append("model data: %d runs of 0x1000c's shaders and %d of yolov8n's additions on what the "
                   "operations before them wrote, %d values equal numpy's; 0x1000c ran whole on 2 images" %
                   (runs, yruns, values))


def check_cross_version(dumper, models, tmp, failures, figures):
    """Part 5: the three hand-tiny compilations on the same images, up to
    the upsampling (0x1000e and 0x1000f are refused after it)."""
    import numpy as np
    hc = models[HAND]
    sc = [n for n, q in hc.sh.items() if q["layer"] == "TensorScale"][0]
    runs, worst, differ, values = 0, 0, 0, 0
    for image_no in (5, 6):
        paths = inputs_for(hc.cmd, tmp, image_no)
        ref = dump(dumper, hc.path, sc + 1, paths, tmp)
        want = [image(ref[i["region"]], i)[1] for i in hc.sh[sc]["imgs"]]
        for name in (HAND_FP16, HAND_FP16_F):
            m = models[name]
            n = [k for k, q in m.sh.items() if q["layer"] == "TensorScale"][0]
            got = dump(dumper, m.path, n + 1, paths, tmp)
            for w, img in zip(want, m.sh[n]["imgs"]):
                g = image(got[img["region"]], img)[1]
                if g.shape != w.shape:
                    failures.append("%s op %d: image %s, 0x1000c's %s" % (m.name, n, g.shape, w.shape))
                    continue
                d = np.abs(g.astype(np.int64) - w)
                worst = max(worst, int(d.max()))
                differ += int(np.count_nonzero(d))
                values += d.size
            runs += 1
    if worst > 0:
        failures.append("hand-tiny across compilations: the upsampling's input and output differ in "
                        "%d of %d values, up to %d steps" % (differ, values, worst))
    figures.append("across compilations: 0x1000e and 0x1000f against 0x1000c, %d runs (2 images): the "
                   "upsampling's input and output (13x13x128, 26x26x128) differ in %d of %d values, by at "
                   "most %d" % (runs, differ, values, worst))
    check_whole(models, tmp, failures, figures)


def check_whole(models, tmp, failures, figures):
    """Part 5, whole: the outputs of the three compilations on the same
    images (0x1000c the reference: no fp16 on its path)."""
    import numpy as np
    hc = models[HAND]
    differ = values = worst = ef = 0
    for image_no in (5, 6):
        paths = inputs_for(hc.cmd, tmp, image_no)
        outs = {}
        for name in (HAND, HAND_FP16, HAND_FP16_F):
            od, err = WHOLE.get((models[name].path, image_no)), None
            if od is None:
                _, od, err = run_cpu(hc.nbg, models[name].path, paths, tmp)
            if err:
                failures.append("%s, image %d: nbg run --backend cpu: %s" % (name, image_no, err))
                return
            outs[name] = [np.fromfile(os.path.join(od, "output_%d.bin" % rec["index"]), dtype=np.uint8)
                          for rec in hc.cmd["outputs"]]
        for name in (HAND_FP16, HAND_FP16_F):
            for k, (want, got) in enumerate(zip(outs[HAND], outs[name])):
                if want.shape != got.shape:
                    failures.append("%s output %d: %s values, 0x1000c's %s" % (name, k, got.shape, want.shape))
                    continue
                d = np.abs(want.astype(np.int64) - got)
                worst = max(worst, int(d.max()))
                differ += int(np.count_nonzero(d))
                values += d.size
        ef += sum(int(np.count_nonzero(a != b)) for a, b in zip(outs[HAND_FP16], outs[HAND_FP16_F]))
    if not values:
        failures.append("hand-tiny whole runs: no output value compared")
    if worst > 1 or differ > 0.02 * values:
        failures.append("hand-tiny whole runs: 0x1000e and 0x1000f differ from 0x1000c in %d of %d output "
                        "values, by up to %d steps (allowed: 1 step, 2 %%)" % (differ, values, worst))
    if ef:
        failures.append("hand-tiny whole runs: 0x1000e and 0x1000f differ in %d output values" % ef)
    figures.append("whole runs across compilations (2 images): 0x1000e and 0x1000f (fp16 copy and "
                   "additions) against 0x1000c (uint8): %d of %d output values differ, by at most %d step; "
                   "0x1000e and 0x1000f differ in %d" % (differ, values, worst, ef))


def check_mutations(nbg, models, tmp, failures, figures, tier):
    """The corpus tier the first mutation of each reason id, the slow tier
    the others."""
    def word(m, n, reg, value):
        t = [t for t in m.doc["tables"] if t["name"] == m.doc["graph"]["state_table"]][0]
        q = m.sh[n]
        d = bytearray(m.data)
        struct.pack_into("<I", d, t["data_offset"] + t["entries"][q["state_id"]]["offset"] + q["u"][reg][1],
                         value)
        return d
    m, e = models[HAND], models[HAND_FP16]
    cases = [(319, ("input 0 format fp16", word(m, 319, 0x3600c, F16), "shelt-format-unsupported",
                    "0x44405071")),
             (319, ("input 1 fp16 with a zero point", word(m, 319, 0x3602c, F16), "shelt-quantization-invalid",
                    "14 and 33")),
             (319, ("output zero point 300", word(m, 319, 0x36060, 0x43960000), "shelt-quantization-invalid",
                    "300")),
             (319, ("input 1 zero point 256", word(m, 319, 0x36100, 256), "shelt-quantization-invalid", "256")),
             (319, ("output shape", word(m, 319, 0x36048, 0x0002a800), "shelt-shape-unsupported", "0x0002a800")),
             (318, ("table word", word(m, 318, 0x36044, 0x66665544), "shelt-uniforms-unknown", "0x66665544")),
             (318, ("output 27 wide", word(m, 318, 0x36028, 0x001a001b), "shelt-shape-unsupported",
                    "0x001a001b"))]
    from check_cpu_ref import check_refused
    # 0x1000e: an fp16 input with a zero point or uint8 rows, an fp16 output, an
    # output written over the fp16 input (its bytes are not the output's)
    fcases = [(64, ("fp16 input 1 zero point 5", word(e, 64, 0x36100, 5), "shelt-quantization-invalid",
                    "14 and 5")),
              (64, ("fp16 input 1 rows of 1 byte per value", word(e, 64, 0x36024, 43264),
                    "shelt-shape-unsupported", "row stride 43264")),
              (64, ("output format fp16", word(e, 64, 0x3604c, F16), "shelt-format-unsupported",
                    "0x44405071")),
              (64, ("output over the fp16 input 1", word(e, 64, 0x36040, e.sh[64]["v"][0x36020]),
                    "shelt-shape-unsupported", "overlaps its input 1"))]
    every = cases + fcases
    first = [c for i, c in enumerate(every) if c[1][2] not in [d[1][2] for d in every[:i]]]
    for n, c in split(every, tier, first):
        check_refused(nbg, [c], n, tmp, failures)
    figures.append("mutations of the hand-tiny shaders refused with their ids: %d of %d" %
                   (len(split(every, tier, first)), len(every)))


def main():
    argv, tier = tier_of(sys.argv)
    if len(argv) != 5 or argv[3] != "--corpus":
        sys.exit("usage: check_cpu_shelt.py NBG REFOP --corpus DIR [--tier corpus|slow]")
    nbg, refop, corpus = argv[1], argv[2], argv[4]
    dumper = os.path.join(os.path.dirname(os.path.abspath(refop)), "nbg-cpu-dump")
    from tc_corpus import need
    need("check_cpu_shelt", "the SH TensorAdd and TensorScale checks", corpus)
    need_numpy("check_cpu_shelt")
    failures, figures = [], []
    models = {}
    for name in (YOLO, HAND, HAND_FP16, HAND_FP16_F):
        models[name] = Model(nbg, os.path.join(corpus, name))
        models[name].nbg = nbg
    with tempfile.TemporaryDirectory() as tmp:
        if in_tier(tier, "corpus"):
            check_recovery(models, failures, figures)
            check_per_op(refop, models, tmp, failures, figures)
        if in_tier(tier, "slow"):  # the models up to their shaders, and whole: minutes under ASan
            check_model_data(nbg, dumper, models, tmp, failures, figures)
            check_cross_version(dumper, models, tmp, failures, figures)
        check_mutations(nbg, models, tmp, failures, figures, tier)
    finish(figures, failures)


if __name__ == "__main__":
    main()
