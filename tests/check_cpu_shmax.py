#!/usr/bin/env python3
"""The max pooling shader (lib/cpu/ops/shmax.c): YOLOv8's SPPF
block in v1/1000f_88_yolov8n.nb, three PoolingLayer2 SH operations computed
by reference semantics, against what this script reads from the raw bytes.

1. The layout, from the state buffers' bytes (check_cpu_ref.uniforms) and
   the patches: each operation loads a uint8 input and output image of
   20x20x128 (format word 0x444051f0, as the image classification
   network's depthwise shader), window side 5, stride 1, padding 2, and
   the float 1.0 where a requantization would go; the three are chained
   (each reads what the previous one wrote), and the four images lie one
   after the other in AXI SRAM, where the next NN convolution (1x1, 512
   input channels) reads its input: the SPPF concatenation.  The NN and
   TP operations before them write the first image.
2. Each operation alone (nbg-cpu-ref-op) on random buffers, and the three
   in a chain: equal to numpy's 5x5 max pooling with stride 1 over the
   image padded with pixels that take no part, read and written at the
   uniforms' addresses and strides; no other byte changes.
3. Mutations of the file (the window side, the stride, the padding, the
   constant 1.0, an image's format word) are refused with shmax-* ids,
   naming the uniform.
4. The whole model (`nbg run --backend cpu`, with the SPPF block and the
   elementwise shaders by reference semantics): a plausibility check, not
   a reference.  Its three outputs hold, per anchor, 80 class logits and
   4 x 16 box-distribution logits (dequantized with the output records'
   scales and zero points).  On a uniform grey image and on uniform noise a
   trained detector finds nothing: every class probability (the logit's
   sigmoid) must stay below 0.25, the usual detection threshold.

5. The windowed variant, v1/1000f_7d_face_age_7d.nb (the face-age
   network's max poolings 31x31 -> 3x3 and 14x14 -> 3x3): from the raw
   bytes, its PoolingLayer2 shaders in the 0x444051f0 format hold window
   side = stride (0x36038, 0x36034), padding 0, and an output of
   (size - side) / stride + 1 pixels each way, as their own output words
   say; its other PoolingLayer2 shaders (the network's other branch) are
   in the averaging shader's format, 0x444051c0, with a scale where these
   hold the float 1.0.  Each operation alone on random buffers equals
   numpy's max pooling by those windows byte for byte, no other byte
   changing.

Tiers (--tier, check_cpu.tier_of): corpus runs parts 1, 2 and 5 and the
first mutation of each reason id; slow the other mutations and part 4
(yolov8n whole).  No --tier: both.

Usage: check_cpu_shmax.py NBG REF_OP --corpus DIR [--tier corpus|slow]
(exit 77 when the file or Debian's python3-numpy is missing).
"""
import os
import struct
import sys
import tempfile

from check_cpu import finish, in_tier, ref_op_runs, run_cpu, split, tier_of
from check_cpu_ref import LABEL, check_refused, inspect, plan_lines, region_sizes, uniforms
from check_cpu_tp import inspect as inspect_commands, need_numpy

YOLO = "v1/1000f_88_yolov8n.nb"
FACE_AGE = "v1/1000f_7d_face_age_7d.nb"
FMT = 0x444051f0
FMT_AVG = 0x444051c0


def shader_ops(nbg, model, data, doc):
    """The PoolingLayer2 SH operations with their uniforms decoded here:
    [{op, uniforms {register: value}, input/output (region key, offset)}]."""
    plans = plan_lines(nbg, model)
    out = []
    for o in doc["operations"]:
        n = o["record_index"]
        if plans.get(n, ("", "", ""))[0] != "PoolingLayer2" or plans[n][1] != "SH":
            continue
        u = uniforms(data, doc, o)
        pat = {p["dest_offset"]: p for p in doc["patches"] if p["operation"] == n and p["type"] == 0}
        v = {a - 0x36000: u[a][0] for a in u if a >= 0x36000}
        io = []
        for reg in (0x36000, 0x36040):
            p = pat[u[reg][1]]
            key = (p["source_type_name"], p["index"] if p["source_type_name"] in ("INPUT", "OUTPUT") else -1)
            io.append((key, p["src_offset"] + u[reg][0]))
        out.append({"op": n, "v": v, "in": io[0], "out": io[1], "plan": plans[n][2]})
    return out


def geometry(v, base):
    """(width, height, depth, row, slice) of the image whose words start at base."""
    return v[base + 8] & 0xffff, v[base + 8] >> 16, v[base + 0x14], v[base + 4], v[base + 0x10]


def check_layout(nbg, model, ops, failures, figures):
    doc = inspect_commands(nbg, model)
    rows = []
    for q in ops:
        v = q["v"]
        f32 = struct.unpack("<f", struct.pack("<I", v[0xf0]))[0]
        gi, go = geometry(v, 0), geometry(v, 0x40)
        want = (v[0xc] == FMT and v[0x4c] == FMT and gi == go and gi[:3] == (20, 20, 128) and
                (v[0x20], v[0x24], v[0x28], v[0x2c], v[0x30]) == (20, 20, 128, 20, 20) and
                (v[0x34], v[0x38], v[0x3c], v[0x60], v[0x64]) == (1, 5, 2, 2, 2) and f32 == 1.0)
        rows.append("op %d %s+0x%x -> %s+0x%x" % (q["op"], q["in"][0][0], q["in"][1], q["out"][0][0],
                                                  q["out"][1]))
        if not want:
            failures.append("op %d: the uniforms are not 20x20x128 uint8 in and out, side 5, stride 1, "
                            "padding 2 and 1.0" % q["op"])
        if not q["plan"].endswith("execute " + LABEL):
            failures.append("op %d is not executed by reference semantics: %s" % (q["op"], q["plan"]))
    if len(ops) != 3:
        failures.append("%d PoolingLayer2 SH operations, 3 expected" % len(ops))
        return
    size = 20 * 20 * 128
    chained = all(ops[i]["out"] == ops[i + 1]["in"] for i in range(2))
    region, first = ops[0]["in"]
    consecutive = all(ops[i]["out"] == (region, first + (i + 1) * size) for i in range(3))
    cmd_ops = doc["commands"]["operations"]
    nxt = [o for o in cmd_ops if o["engine"] == "NN" and o["operation"] > ops[-1]["op"]][0]
    reads = (nxt["input_ref"]["source_type_name"], -1) == region and nxt["input_ref"]["offset"] == first \
        and nxt["input"][2] == 512 and nxt["dataflow"]["input_slice_stride"] == 400
    writers = [o for o in cmd_ops if o["operation"] < ops[0]["op"] and
               (o["output_ref"]["source_type_name"], -1) == region and
               first <= o["output_ref"]["offset"] < first + size]
    # the last layer that writes there (AXI SRAM is reused along the network)
    writers = [o for o in writers if writers and o["layer_id"] == writers[-1]["layer_id"]]
    figures.append("layout: %s; chained %s, the four images consecutive %s, op %d (NN %s, %d input "
                   "channels) reads them at the first one's address %s; the first written by ops %s (layer %s)" %
                   ("; ".join(rows), chained, consecutive, nxt["operation"], nxt["kind"], nxt["input"][2],
                    reads, ",".join(str(o["operation"]) for o in writers),
                    writers[-1]["layer_name"] if writers else "none"))
    if not (chained and consecutive and reads and writers):
        failures.append("the SPPF layout does not hold: chained %s, consecutive %s, read by op %d %s, "
                        "writers %d" % (chained, consecutive, nxt["operation"], reads, len(writers)))


def read_image(buf, off, g):
    import numpy as np
    w, h, d, row, sl = g
    a = off + np.arange(d)[:, None, None] * sl + np.arange(h)[None, :, None] * row + np.arange(w)[None, None, :]
    return a, buf[a]


def numpy_maxpool(img):
    """5x5, stride 1, padding 2 that takes no part (a uint8 minimum, 0)."""
    import numpy as np
    d, h, w = img.shape
    pad = np.zeros((d, h + 4, w + 4), dtype=img.dtype)
    pad[:, 2:h + 2, 2:w + 2] = img
    out = np.zeros_like(img)
    for dy in range(5):
        for dx in range(5):
            out = np.maximum(out, pad[:, dy:dy + h, dx:dx + w])
    return out


def check_runs(refop, model, doc, ops, tmp, failures, figures):
    import numpy as np
    rng = np.random.default_rng(2029)
    runs = equal = values = changed = 0
    # the chains: each operation on the previous one's result (the next
    # job reads the directory the previous one wrote), one process for all
    jobs, starts = [], []
    for trial in range(3):
        ind = tempfile.mkdtemp(dir=tmp)
        starts.append({k: rng.integers(0, 256 if trial < 2 else 40, s, dtype=np.uint8)
                       for k, s in region_sizes(doc).items()})
        for k, b in starts[-1].items():
            b.tofile(os.path.join(ind, "%s_%d.bin" % k))
        for q in ops:
            outd = tempfile.mkdtemp(dir=tmp)
            jobs.append((q["op"], ind, outd))
            ind = outd
    r = ref_op_runs(refop, model, jobs)
    if r.returncode != 0:
        failures.append("nbg-cpu-ref-op exit %d: %s %s" % (r.returncode, r.stdout, r.stderr))
        return
    for trial in range(3):
        state = {k: b.copy() for k, b in starts[trial].items()}
        for j, q in enumerate(ops):
            outd = jobs[trial * len(ops) + j][2]
            after = {k: np.fromfile(os.path.join(outd, "%s_%d.bin" % k), dtype=np.uint8) for k in state}
            _, img = read_image(state[q["in"][0]], q["in"][1], geometry(q["v"], 0))
            at, _ = read_image(after[q["out"][0]], q["out"][1], geometry(q["v"], 0x40))
            expect = {k: b.copy() for k, b in state.items()}
            want = numpy_maxpool(img)
            expect[q["out"][0]][at] = want
            ok = all(np.array_equal(expect[k], after[k]) for k in expect)
            changed += int((state[q["out"][0]][at] != want).sum())
            runs += 1
            equal += ok
            values += want.size
            if not ok:
                bad = [k[0] for k in expect if not np.array_equal(expect[k], after[k])]
                failures.append("op %d, trial %d: %s differ from numpy's max pooling" % (q["op"], trial, bad))
            state = after
    figures.append("runs: %d of %d (3 chains of the three operations on random buffers) equal to numpy's "
                   "5x5 max pooling byte for byte, %d values (%d of them changed by the operation), no "
                   "other byte changed" % (equal, runs, values, changed))
    if runs != 9 or changed < values // 4:
        failures.append("only %d runs, %d of %d values changed" % (runs, changed, values))


def check_mutations(nbg, model, data, doc, ops, tmp, failures, figures, tier):
    """The corpus tier the first mutation of each reason id, the slow tier
    the others."""
    q = ops[0]
    o = [o for o in doc["operations"] if o["record_index"] == q["op"]][0]
    u = uniforms(data, doc, o)
    cases = []
    for reg, value, rid in ((0x36038, 3, "shmax-uniforms-unknown"), (0x36034, 2, "shmax-uniforms-unknown"),
                            (0x3603c, 1, "shmax-uniforms-unknown"),
                            (0x360f0, 0x3f000000, "shmax-uniforms-unknown"),
                            (0x3604c, 0x444051c0, "shmax-uniforms-unknown"),
                            (0x36020, 19, "shmax-shape-unsupported")):
        m = bytearray(data)
        off = [t for t in doc["tables"] if t["name"] == doc["graph"]["state_table"]][0]
        at = off["data_offset"] + off["entries"][o["state_id"]]["offset"] + u[reg][1]
        m[at:at + 4] = struct.pack("<I", value)
        cases.append(("uniform 0x%05x = 0x%x" % (reg, value), bytes(m), rid,
                      "0x%05x" % reg if rid == "shmax-uniforms-unknown" else "sizes 19 x 20"))
    first = [c for i, c in enumerate(cases) if c[2] not in [d[2] for d in cases[:i]]]
    cases = split(cases, tier, first)
    before = len(failures)
    check_refused(nbg, cases, q["op"], tmp, failures)
    figures.append("mutations: %d of %d refused with the expected id, naming the uniform or sizes" %
                   (len(cases) - (len(failures) - before), len(cases)))


def numpy_windows(img, side, stride, ow, oh):
    """The maximum over each side x side window at (x stride, y stride)."""
    import numpy as np
    out = np.zeros(img.shape[:1] + (oh, ow), dtype=img.dtype)
    for y in range(oh):
        for x in range(ow):
            out[:, y, x] = img[:, y * stride:y * stride + side, x * stride:x * stride + side].max(axis=(1, 2))
    return out


def average_op(n, u, v, doc, plans, failures, rows):
    """An average pooling by windows, read from the raw words: the images at
    0x36000 and 0x36030, window side and stride 0x36050, 0x36054, the
    float32 scale 0x36028, the zero-point words 0x36024, 0x3602c zero."""
    pat = {p["dest_offset"]: p for p in doc["patches"] if p["operation"] == n and p["type"] == 0}
    io = []
    for reg in (0x36000, 0x36030):
        p = pat[u[reg][1]]
        key = (p["source_type_name"], p["index"] if p["source_type_name"] in ("INPUT", "OUTPUT") else -1)
        io.append((key, p["src_offset"] + u[reg][0]))
    gi, go = geometry(v, 0), geometry(v, 0x30)
    side, stride = v[0x50], v[0x54]
    ok = (side == stride and v[0x24] == 0 and v[0x2c] == 0 and v[0x20] == go[0] * side and
          go[0] == (gi[0] - side) // stride + 1 and go[1] == (gi[1] - side) // stride + 1 and gi[2] == go[2])
    rows.append("op %d average %dx%dx%d side %d stride %d -> %dx%d, scale %.6g = %.4f / %d" %
                (n, gi[0], gi[1], gi[2], side, stride, go[0], go[1], f32(v[0x28]), f32(v[0x28]) * side * side,
                 side * side))
    if not ok:
        failures.append("op %d: the average layout does not hold" % n)
    if not plans[n][2].endswith("execute " + LABEL):
        failures.append("op %d is not executed by reference semantics: %s" % (n, plans[n][2]))
    return {"op": n, "in": io[0], "out": io[1], "gi": gi, "go": go, "side": side, "stride": stride,
            "scale": f32(v[0x28])}


def f32(w):
    return struct.unpack("<f", struct.pack("<I", w))[0]


def numpy_average(img, side, ow, oh, scale):
    """Each side x side window's sum at (x side, y side) times the float32
    scale in double, rounded to nearest (ties to even), clipped to 0..255."""
    import numpy as np
    out = np.zeros(img.shape[:1] + (oh, ow), dtype=np.int64)
    for y in range(oh):
        for x in range(ow):
            out[:, y, x] = img[:, y * side:y * side + side, x * side:x * side + side].astype(np.int64).sum(axis=(1, 2))
    return np.clip(np.rint(out * float(scale)), 0, 255).astype(np.uint8)


def windowed_ops(nbg, model, data, doc, failures, rows):
    """The face-age file's PoolingLayer2 shaders: the max ones (format word
    0x444051f0) decoded, the others' format words listed in rows."""
    plans = plan_lines(nbg, model)
    out = []
    for o in doc["operations"]:
        n = o["record_index"]
        if plans.get(n, ("", "", ""))[:2] != ("PoolingLayer2", "SH"):
            continue
        u = uniforms(data, doc, o)
        v = {a - 0x36000: u[a][0] for a in u if a >= 0x36000}
        if v.get(0xc) != FMT:
            rows.append("op %d format 0x%08x, scale word 0x36028 %.6g" %
                        (n, v.get(0xc, 0), struct.unpack("<f", struct.pack("<I", v.get(0x28, 0)))[0]))
            if v.get(0xc) != FMT_AVG:
                failures.append("op %d: a PoolingLayer2 shader neither max (0x%x) nor average (0x%x)" %
                                (n, FMT, FMT_AVG))
            else:
                out.append(average_op(n, u, v, doc, plans, failures, rows))
            continue
        pat = {p["dest_offset"]: p for p in doc["patches"] if p["operation"] == n and p["type"] == 0}
        io = []
        for reg in (0x36000, 0x36040):
            p = pat[u[reg][1]]
            key = (p["source_type_name"], p["index"] if p["source_type_name"] in ("INPUT", "OUTPUT") else -1)
            io.append((key, p["src_offset"] + u[reg][0]))
        gi, go = geometry(v, 0), geometry(v, 0x40)
        side, stride, pad = v[0x38], v[0x34], v[0x3c]
        one = struct.unpack("<f", struct.pack("<I", v[0x120]))[0]
        ok = (side == stride and pad == 0 and v[0x60] == 0 and v[0x64] == 0 and one == 1.0 and
              go[0] == (gi[0] - side) // stride + 1 and go[1] == (gi[1] - side) // stride + 1 and gi[2] == go[2])
        rows.append("op %d %dx%dx%d side %d stride %d padding %d -> %dx%d, 1.0 at 0x36120: %s" %
                    (n, gi[0], gi[1], gi[2], side, stride, pad, go[0], go[1], one == 1.0))
        if not ok:
            failures.append("op %d: the windowed layout does not hold" % n)
        if not plans[n][2].endswith("execute " + LABEL):
            failures.append("op %d is not executed by reference semantics: %s" % (n, plans[n][2]))
        out.append({"op": n, "in": io[0], "out": io[1], "gi": gi, "go": go, "side": side, "stride": stride})
    return out


def check_windowed(nbg, refop, corpus, tmp, failures, figures):
    import numpy as np
    model = os.path.join(corpus, FACE_AGE)
    if not os.path.exists(model):
        figures.append("windowed variant: %s is not in the corpus: not judged" % FACE_AGE)
        return
    with open(model, "rb") as f:
        data = f.read()
    doc = inspect(nbg, model)
    rows = []
    ops = windowed_ops(nbg, model, data, doc, failures, rows)
    figures.append("windowed layout (%s): %s" % (FACE_AGE, "; ".join(rows)))
    for kind in ("max", "average"):
        mine = [q for q in ops if ("scale" in q) == (kind == "average")]
        if len(mine) < 2 or len({q["side"] for q in mine}) < 2:
            failures.append("%d windowed %s poolings (two sides expected)" % (len(mine), kind))
            return
    rng = np.random.default_rng(2031)
    jobs, starts = [], []
    for q in ops:
        for trial in range(2):
            ind, outd = tempfile.mkdtemp(dir=tmp), tempfile.mkdtemp(dir=tmp)
            # averages: bytes under 64, so that the sums times the scales (3.7 to 4.3 / side^2)
            # mostly stay inside 0..255
            top = 64 if "scale" in q else 256
            starts.append({k: rng.integers(0, top, n, dtype=np.uint8) for k, n in region_sizes(doc).items()})
            for k, b in starts[-1].items():
                b.tofile(os.path.join(ind, "%s_%d.bin" % k))
            jobs.append((q["op"], ind, outd))
    r = ref_op_runs(refop, model, jobs)
    if r.returncode != 0:
        failures.append("nbg-cpu-ref-op exit %d: %s %s" % (r.returncode, r.stdout, r.stderr))
        return
    equal = values = 0
    for j, (op, _, outd) in enumerate(jobs):
        q = [q for q in ops if q["op"] == op][0]
        state = starts[j]
        after = {k: np.fromfile(os.path.join(outd, "%s_%d.bin" % k), dtype=np.uint8) for k in state}
        _, img = read_image(state[q["in"][0]], q["in"][1], q["gi"])
        at, _ = read_image(after[q["out"][0]], q["out"][1], q["go"])
        if "scale" in q:
            want = numpy_average(img, q["side"], q["go"][0], q["go"][1], q["scale"])
        else:
            want = numpy_windows(img, q["side"], q["stride"], q["go"][0], q["go"][1])
        expect = {k: b.copy() for k, b in state.items()}
        expect[q["out"][0]][at] = want
        ok = all(np.array_equal(expect[k], after[k]) for k in expect)
        equal += ok
        values += want.size
        if not ok:
            failures.append("op %d, run %d: differs from numpy's pooling by windows" % (op, j))
    figures.append("windowed runs: %d of %d (each operation twice on random buffers) equal to numpy's max "
                   "or average (sum x scale, rounded) pooling by windows of side = stride byte for byte, %d "
                   "values, no other byte changed" % (equal, len(jobs), values))


def check_whole(nbg, model, doc, tmp, failures, figures):
    import numpy as np
    rng = np.random.default_rng(2030)
    size = doc["inputs"][0]["byte_size"]
    rows = []
    for what, img in (("grey", np.full(size, 114, dtype=np.uint8)),
                      ("noise", rng.integers(0, 256, size, dtype=np.uint8))):
        path = os.path.join(tmp, "yolo_%s.bin" % what)
        img.tofile(path)
        out0, od, err = run_cpu(nbg, model, [path], tmp)
        if out0 is None:
            failures.append("nbg run --backend cpu on %s (%s): %s" % (YOLO, what, err))
            return
        best = 0.0
        for rec in doc["outputs"]:
            q = np.fromfile(os.path.join(od, "output_%d.bin" % rec["index"]), dtype=np.uint8)
            qz = rec["quantization"]
            x = (q.reshape(144, -1).astype(np.float64) - qz["zero_point"]) * qz["scale"]
            best = max(best, float((1 / (1 + np.exp(-x[:80]))).max()))
        rows.append("%s %.4f" % (what, best))
        if best >= 0.25:
            failures.append("whole model on %s: a class probability of %.3f" % (what, best))
    figures.append("whole model (plausibility, not a reference): the largest class probability over "
                   "every anchor and class: %s (a detection needs 0.25)" % ", ".join(rows))


def main():
    argv, tier = tier_of(sys.argv)
    if len(argv) != 5 or argv[3] != "--corpus":
        sys.exit("usage: check_cpu_shmax.py NBG REF_OP --corpus DIR [--tier corpus|slow]")
    nbg, refop, corpus = argv[1], argv[2], argv[4]
    from tc_corpus import need
    need("check_cpu_shmax", "the max pooling shader checks", corpus)
    need_numpy("check_cpu_shmax")
    model = os.path.join(corpus, YOLO)
    with open(model, "rb") as f:
        data = f.read()
    doc = inspect(nbg, model)
    ops = shader_ops(nbg, model, data, doc)
    failures, figures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        if in_tier(tier, "corpus"):
            check_layout(nbg, model, ops, failures, figures)
        elif len(ops) != 3:
            failures.append("%d PoolingLayer2 SH operations, 3 expected" % len(ops))
        if len(ops) == 3:
            if in_tier(tier, "corpus"):
                check_runs(refop, model, doc, ops, tmp, failures, figures)
            check_mutations(nbg, model, data, doc, ops, tmp, failures, figures, tier)
            if in_tier(tier, "slow"):  # the whole yolov8n: minutes under ASan
                check_whole(nbg, model, doc, tmp, failures, figures)
        if in_tier(tier, "corpus"):
            check_windowed(nbg, refop, corpus, tmp, failures, figures)
    finish(figures, failures)


if __name__ == "__main__":
    main()
