#!/usr/bin/env python3
"""The v2 (A733, target 0x1000003b) files' decoded 16-bit kernels against
the TensorFlow Lite models they were compiled from.

models_dir/mediapipe-a733/NAME.tflite is the float source of every
corpus/v2/NAME_nbg_*.nb (its README).  The .tflite is read with the
FlatBuffers reader of check_network.py (written from TFLite's schema.fbs):
Model.buffers (field 4), Buffer.data (0), Tensor.type (1: FLOAT32 0,
FLOAT16 1), Tensor.buffer (2); a kernel stored as FLOAT16 and widened by a
DEQUANTIZE operator is taken at the DEQUANTIZE's input.  The kernels of the
CONV_2D (O,H,W,I) and DEPTHWISE_CONV_2D (1,H,W,C) operators are put in
nbgkit's order [out][z][ky][kx] (depthwise: [channel][1][ky][kx]).

`nbg weights --out` exports each file's decoded streams.  Every decoded
operation with int16 kernels must be, code for code, the dynamic fixed point
quantization of one source kernel of its shape: for some fraction length fl,
|code - w * 2^fl| <= 1 for every weight (within one quantization step), the
largest such fl the one whose codes fit int16 (the compiler's choice, as in
the files' fl records); fp16 kernels must equal the source's float16 values
bit for bit.  Sources are matched by property, not by a list: in the order
of the operations, the first source kernel of the same shape not yet taken
that fits.  Operations with other kernels are not judged here; a v2 file
with no source beside the models is printed as not judged.

Usage: check_weights_v2.py NBG CORPUS_DIR MODELS_DIR (exit 77, SKIP, when
they are absent or Debian's python3-numpy cannot be imported).
"""
import json
import os
import subprocess
import sys
import tempfile

import check_network
from check_weights_lenet import debian_imports
from exe_wrapper import command
import tc_corpus

CONV_2D, DEPTHWISE_CONV_2D, DEQUANTIZE, PRELU = 3, 4, 6, 54
from tc_check import check
import tc_check


def source_kernels(path, want=(CONV_2D, DEPTHWISE_CONV_2D)):
    """[(shape [out, z, ky, kx], float16 array in that order)] of the
    source's convolutions, in operator order (want (PRELU,): the PRELU
    operators' alphas, input 1, as [(shape [C], array)])."""
    import numpy as np
    _, _, codes, data, graph = check_network.tflite_model(path)
    tensors = graph.tables(0)
    ops = [(codes[o.scalar(0, "I")], o.ints(1), o.ints(2)) for o in graph.tables(3)]
    widened = {outs[0]: ins[0] for code, ins, outs in ops if code == DEQUANTIZE}
    out = []
    for code, ins, outs in ops:
        if code not in want:
            continue
        t = tensors[widened.get(ins[1], ins[1])]
        dtype = {0: np.float32, 1: np.float16}.get(t.scalar(1, "b"))
        raw = data[t.scalar(2, "I")]
        if dtype is None or not raw:
            continue
        w = np.frombuffer(raw, dtype=dtype).reshape(t.ints(0))
        if code == PRELU:
            out.append(([w.size], w.reshape(-1)))
            continue
        if code == CONV_2D:
            w = w.transpose(0, 3, 1, 2)                 # O,H,W,I -> O,I,H,W
        else:
            w = w[0].transpose(2, 0, 1)[:, None, :, :]  # 1,H,W,C -> C,1,H,W
        out.append((list(w.shape), w))
    return out


def int16_fit(codes, w, hist):
    """The fraction length fl of a dynamic fixed point quantization of w that
    codes are (None): the largest whose rounded values fit int16, every
    |code - w * 2^fl| at most 2 (measured: the codes are not all the
    nearest ones, see the module's docstring).  hist counts the errors up
    to half a step, to one step, to two steps, the largest error, and the
    largest among codes below 16384."""
    import numpy as np
    w = w.astype(np.float64)
    m = np.abs(w).max()
    if m == 0:
        return None
    fl = int(np.floor(np.log2(32767.5 / m)))
    err = np.abs(codes - w * 2.0 ** fl)
    if err.max() > 2:
        return None
    hist[0] += int((err <= 0.5).sum())
    hist[1] += int(((err > 0.5) & (err <= 1)).sum())
    hist[2] += int((err > 1).sum())
    hist[3] = max(hist[3], float(err.max()))
    big = np.abs(w * 2.0 ** fl) >= 16384
    hist[4] = max(hist[4], float(err[~big].max()) if (~big).any() else 0.0)
    return fl


def fp21(w):
    """The value of a table word (a sign, 5 exponent bits of bias 15, 15
    mantissa bits), from its bits; None when it is none."""
    e, m = w >> 15 & 31, w & 0x7fff
    if w >> 21 or e == 31 or (e == 0 and m):
        return None
    v = (1 + m / 32768.0) * 2.0 ** (e - 15) if e else 0.0
    return -v if w >> 20 & 1 else v


def lut_inputs(mode):
    """The inputs entry i holds the function at, by the tail's first word
    (lut_mode): half-precision bits ((i & 511) << 6) ^ 0x4000 and the sign
    bit 9 of i (1: bits 28 and 24 set), ((((i & 511) << 5) + 0x2000) &
    0x3fff) + 0x2000 and the sign bit 9 (2: bit 28 set, bit 24 clear), or
    ((i << 5) & 0xffff) ^ 0x4000 (0: bit 28 clear)."""
    import numpy as np
    i = np.arange(1024, dtype=np.uint32)
    sign = np.where(i & 512, 0x8000, 0)
    h = (((i & 511) << 6) ^ 0x4000) | sign if mode == 1 else \
        (((((i & 511) << 5) + 0x2000) & 0x3fff) + 0x2000) | sign if mode == 2 else \
        ((i << 5) & 0xffff) ^ 0x4000
    return h.astype(np.uint16).view(np.float16).astype(np.float64)


def lut_mode(word):
    """The input mapping of a table whose first tail word is word."""
    return 0 if not word >> 28 & 1 else 1 if word >> 24 & 1 else 2


def lut_function(x, t):
    """Which elementary function the entries (x, t) hold, within 4 units in
    the last place of the 15-bit mantissa (entries past the largest value,
    65535, clamped to it), by numpy: the ReLU, the square, the sigmoid, the
    square root, the reciprocal square root (the layer normalisations'
    operations of the sources, their LOGISTICs); None.  An input of exponent 0 is taken as the table's maker
    reads one, (1 + m / 1024) * 2^-15 (sqrt's entry at +0 is sqrt(2^-15))."""
    import numpy as np
    ok = np.isfinite(x) & (np.abs(x) < 60000)
    x, t = x[ok], t[ok]
    h = x.astype(np.float16).view(np.uint16)
    sub = (h & 0x7c00) == 0
    x = np.where(sub, np.where(h & 0x8000, -1, 1) * (1 + (h & 0x3ff) / 1024.0) * 2.0 ** -15, x)
    top = (2 - 2.0 ** -15) * 2.0 ** 15
    cands = {"relu": lambda: np.maximum(x, 0), "square": lambda: x * x, "sigmoid": lambda: 1 / (1 + np.exp(-x))}
    if (x > 0).all():
        cands["sqrt"] = lambda: np.sqrt(x)
        cands["rsqrt"] = lambda: 1 / np.sqrt(x)
    for name, f in cands.items():
        with np.errstate(all="ignore"):
            want = f()
        ulp = np.where(np.abs(want) >= 2.0 ** -14, 2.0 ** (np.floor(np.log2(np.maximum(
            np.abs(want), 2.0 ** -14))) - 15), 0)
        good = (np.abs(t - want) <= np.maximum(4 * ulp, 2.0 ** -13)) | \
            ((np.abs(want) > top) & (np.abs(t) == top))
        if good.all():
            return name
    return None


def judge_lut(op, out, name, figures):
    """An NN_LUT table: its values equal the stream's words read here from
    the raw bytes (the export's float32 against this decoding); on fp16 data
    its inputs are the tail's mapping, and where the table is an elementary
    function of the source's layers it holds it at those inputs and not at
    the other mapping's."""
    import numpy as np
    codes = np.load(os.path.join(out, op["files"]["weights"])).ravel()
    raw = np.frombuffer(open(op["_path"], "rb").read()[op["stream"]["offset"]:][:4108], "<u4")
    want = np.array([fp21(int(w)) for w in raw[:1024]], dtype=np.float64)
    sign = bool(raw[1024] >> 28 & 1)
    mode = lut_mode(int(raw[1024]))
    ok = codes.dtype == np.float32 and np.array_equal(codes.astype(np.float64), want) and \
        op["lut"]["sign_support"] == sign
    check(ok, "%s: operation %d: its NN_LUT table's 1,024 values are the stream's words "
          "(read from the file's bytes) and its sign bit %d" % (name, op["operation"], sign))
    if op["data_type"] != "fp16" or op["files"]["weights"] in figures["lut_done"]:
        return
    figures["lut_done"].add(op["files"]["weights"])
    x = np.load(os.path.join(out, op["files"]["lut_inputs"]))
    check(np.array_equal(x.astype(np.float16).view(np.uint16),
                         lut_inputs(mode).astype(np.float16).view(np.uint16)),
          "%s: operation %d: the exported inputs are "
          "the mapping %d of its tail" % (name, op["operation"], mode))
    f = lut_function(lut_inputs(mode), want)
    if f is None:
        print("note %s: operation %d: its table is no function of the list (ReLU, square, "
              "square root, reciprocal square root): mapping not judged" % (name, op["operation"]))
        figures["lut"]["other"] = figures["lut"].get("other", 0) + 1
        return
    other = [m for m in (0, 1, 2) if m != mode and lut_function(lut_inputs(m), want) is not None]
    check(not other, "%s: operation %d: its table is the %s at the inputs of mapping %d "
          "and no function of the list at the other mappings'" % (name, op["operation"], f, mode))
    key = "%s (mapping %d)" % (f, mode)
    figures["lut"][key] = figures["lut"].get(key, 0) + 1
    if f in LUT_SMOOTH:
        judge_between(op, name, want, mode == 1, f, figures)
    if mode == 2:
        judge_window(op, name, want, figures)


def judge_window(op, name, t, figures):
    """A table of mapping 2 (the logistic tables, tail 0x34000000): the
    sigmoid at lut_inputs(2) within 0.51 units in the last place of the
    entries' layout at every entry (within 2^-14 of 0 where the sigmoid is
    below 2^-14)."""
    import numpy as np
    x = lut_inputs(2)
    f = 1 / (1 + np.exp(-x))
    big = f >= 2.0 ** -14
    ulp = 2.0 ** (np.floor(np.log2(f[big])) - 15)
    err = float(np.max(np.abs(t[big] - f[big]) / ulp))
    # below 2^-14 the layout holds 0 (no value smaller)
    small = bool(np.all(np.abs(t[~big] - f[~big]) <= 2.0 ** -14))
    check(err <= 0.51 and small,
          "%s: operation %d: its table is the sigmoid at the inputs of mapping 2 (|x| from 2^-7 to 504) "
          "within %.3f units in the last place" % (name, op["operation"], err))
    k = figures["lut"].setdefault("sigmoid within 0.51 ulp, largest", 0.0)
    figures["lut"]["sigmoid within 0.51 ulp, largest"] = max(k, round(err, 3))


# the smooth functions of the list, at positive inputs
LUT_SMOOTH = {"square": lambda x: x * x, "sqrt": lambda x: x ** 0.5, "rsqrt": lambda x: x ** -0.5}


def lut_apply(t, sign, h, linear):
    """Table t (1,024 values) on the half-precision bits h (an array): the
    entry of the input's top bits (sign, exponent, 4 mantissa bits with the
    tail's sign bit; exponent, 5 without), then, when linear, towards the
    next larger magnitude's entry by the remaining 6 (5) bits."""
    import numpy as np
    step = 64 if sign else 32
    mag = h.astype(np.int64) & 0x7FFF
    neg = (h.astype(np.int64) & 0x8000) != 0
    base = mag & ~(step - 1)

    def index(b):
        return ((b ^ 0x4000) >> 6 | np.where(neg, 512, 0)) if sign else ((b ^ 0x4000) >> 5) & 1023
    v = t[index(base)]
    if linear:
        has = (mag != base) & (base + step <= 0x7FFF)
        nxt = t[index(np.minimum(base + step, 0x7FFF))]
        v = np.where(has, v + (nxt - v) * (mag - base) / step, v)
    return v


def judge_between(op, name, t, sign, f, figures):
    """Between a table's entries (doc/cpu-backend.md, fp16 NN-engine
    operations): over every positive normal half whose function value is a
    normal half, the error against the function, in units in the last place
    of the half, of the entry alone and of the linear interpolation towards
    the next entry; the interpolation is within 1.5 units everywhere and the
    entry alone off by more than 16 somewhere (so the reading between
    entries decides, and the tables are sampled for interpolation)."""
    import numpy as np
    h = np.arange(0x0400, 0x7C00, dtype=np.uint16)
    with np.errstate(all="ignore"):
        want = LUT_SMOOTH[f](h.view(np.float16).astype(np.float64))
    keep = (want >= 2.0 ** -14) & (want <= 65504)
    ulp = 2.0 ** (np.floor(np.log2(want[keep])) - 10)
    errs = []
    for linear in (False, True):
        got = lut_apply(t, sign, h, linear)[keep].astype(np.float16).astype(np.float64)
        errs.append(float(np.max(np.abs(got - want[keep]) / ulp)))
    check(errs[1] <= 1.5 and errs[0] > 16,
          "%s: operation %d: the %s table between its entries, against the function over %d halves: "
          "linear interpolation within %.2f units in the last place, the entry alone %.1f"
          % (name, op["operation"], f, int(keep.sum()), errs[1], errs[0]))
    k = figures["between"].setdefault(f, [0, 0.0, 0.0])
    k[0] += 1
    k[1], k[2] = max(k[1], errs[1]), max(k[2], errs[0])


def judge_table_after(op, out, name):
    """A convolution's NN_LUT stream: the table's 1,024 values equal the
    words read here from the raw bytes at the stream's last 4,160 bytes (the
    table's 4,108 and zeros to its 64-byte end), and the export has them;
    its kernels are judged against the source as any other's."""
    import numpy as np
    size = op["stream"]["size"]
    data = open(op["_path"], "rb").read()[op["stream"]["offset"]:][:size]
    at = size - 4160
    raw = np.frombuffer(data[at:at + 4108], "<u4")
    want = np.array([fp21(int(w)) for w in raw[:1024]], dtype=np.float64)
    table = np.load(os.path.join(out, op["files"]["lut_table"]))
    ok = (op["lut"]["after_kernels_at"] == at and not any(data[at + 4108:]) and
          op["lut"]["tail"] == [int(w) for w in raw[1024:]] and
          table.dtype == np.float32 and np.array_equal(table.astype(np.float64), want))
    check(ok, "%s: operation %d: its kernels' stream ends with a table at byte %d whose 1,024 "
          "values are the stream's words (read from the file's bytes), then zeros" %
          (name, op["operation"], at))


def judge(nbg, path, src, figures):
    import numpy as np
    sources = source_kernels(src)
    alphas = source_kernels(src, (PRELU,))
    taken = [False] * len(sources)
    name = os.path.basename(path)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "w")
        r = subprocess.run([*nbg, "weights", "--float", "--out", out, path], capture_output=True,
                           text=True)
        check(r.returncode == 0, "%s: nbg weights --out exits 0 (%s)" % (name, r.stderr.strip()))
        doc = json.load(open(os.path.join(out, "weights.json")))["weights"]
        for op in doc["operations"]:
            op["_path"] = path
        judged = matched = 0
        fls = {}
        hist = figures["error"]
        done = set()  # weights files judged (operations sharing a stream share them)
        for op in doc["operations"]:
            if op["status"] == "decoded" and op["format"] == "lut":
                judge_lut(op, out, name, figures)
                continue
            if op["status"] != "decoded" or op["data_type"] not in ("int16", "fp16"):
                continue
            if op.get("lut") and op["lut"]["after_kernels_at"] is not None:
                judge_table_after(op, out, name)
            judged += 1
            codes = np.load(os.path.join(out, op["files"]["weights"]))
            hit = None
            if op["files"]["weights"] in done:
                judged -= 1
                continue
            if op["data_type"] == "fp16":
                # the f32-pairs streams: weights 1.0 (a kernel the compiler
                # made), second floats a PRELU operator's alphas, bit for bit
                slope = np.load(os.path.join(out, op["files"]["prelu_slope"]))
                ok = codes.dtype == np.float16 and bool((codes == 1.0).all()) and any(
                    a.shape == slope.shape and np.array_equal(
                        a.astype(np.float16).astype(np.float32).view(np.uint32),
                        slope.view(np.uint32)) for _, a in alphas)
                # --float: the float16 codes' values (numpy's conversion)
                fw = np.load(os.path.join(out, op["files"]["weights_float"]))
                ok = ok and op["files"]["float_source"] == "float16 codes" and \
                    fw.dtype == np.float32 and np.array_equal(fw, codes.astype(np.float32))
                check(ok, "%s: operation %d (fp16 %s): weights 1.0 (as --float's float32 too), "
                      "its %d slopes a PRELU operator's alphas bit for bit" %
                      (name, op["operation"], op["shape"], slope.size))
                matched += ok
                fls["prelu"] = fls.get("prelu", 0) + 1
                done.add(op["files"]["weights"])
                continue
            for i, (shape, w) in enumerate(sources):
                if taken[i] or shape != op["shape"]:
                    continue
                if op["data_type"] == "fp16":
                    ok = codes.dtype == np.float16 and np.array_equal(
                        codes.view(np.uint16), w.astype(np.float16).view(np.uint16))
                    fl = "fp16"
                else:
                    fl = int16_fit(codes.astype(np.float64), w, hist) \
                        if codes.dtype == np.int16 else None
                    ok = fl is not None
                if ok:
                    hit = i
                    fls[fl] = fls.get(fl, 0) + 1
                    break
            if hit is None:
                if op["files"]["weights"] in done:
                    judged -= 1
                    continue
                # kernels the compiler makes (an addition or a mean lowered
                # to a 1x1 convolution: [2I | I], [16, 1]) have no source; a
                # real layer's kernel has many distinct values
                distinct = len(np.unique(codes))
                if distinct <= 4:
                    print("note %s: operation %d (%s %s) is no source kernel: its codes "
                          "take %d values %s (a kernel the compiler made): not judged"
                          % (name, op["operation"], op["data_type"], op["shape"], distinct,
                             np.unique(codes).tolist()))
                    judged -= 1
                    figures["compiler"] += 1
                    continue
                check(False, "%s: operation %d (%s %s, %d distinct codes) equals no source "
                      "kernel of its shape" % (name, op["operation"], op["data_type"],
                                               op["shape"], distinct))
                continue
            taken[hit] = True
            done.add(op["files"]["weights"])
            matched += 1
        if not judged:
            print("note %s: no decoded 16-bit kernel: not judged" % name)
            return
        check(matched == judged,
              "%s: %d of %d decoded 16-bit kernels equal a TFLite source kernel (fraction "
              "lengths %s); %d of the source's %d kernels taken" %
              (name, matched, judged, dict(sorted(fls.items(), key=str)), sum(taken),
               len(sources)))
        figures["operations"] += judged


def main():
    nbg = command(sys.argv[1])
    corpus, models = sys.argv[2], sys.argv[3]
    tc_corpus.need("check_weights_v2.py", "the v2 files' kernels", corpus)
    if not os.path.isdir(os.path.join(models, "mediapipe-a733")):
        print("SKIP: no %s" % os.path.join(models, "mediapipe-a733"))
        sys.exit(77)
    debian_imports(("numpy",), "NBG_V2_REEXEC", "the v2 weights check needs Debian's python3-numpy")
    figures = {"operations": 0, "compiler": 0, "error": [0, 0, 0, 0.0, 0.0], "lut": {},
               "lut_done": set(), "between": {}}
    v2 = os.path.join(corpus, "v2")
    for name in sorted(os.listdir(v2)):
        if not name.endswith(".nb"):
            continue
        src = os.path.join(models, "mediapipe-a733", name.split("_nbg")[0] + ".tflite")
        if not os.path.exists(src):
            print("note %s: no TFLite source beside the models (%s): not judged" % (name, src))
            continue
        judge(nbg, os.path.join(v2, name), src, figures)
    e = figures["error"]
    check(figures["operations"] > 0,
          "%d 16-bit kernels judged, %d made by the compiler; int16 codes within half a "
          "step of w * 2^fl: %d, within one: %d, within two: %d (largest error %.3f; %.3f "
          "below 16384)" % (figures["operations"], figures["compiler"], e[0], e[1], e[2], e[3],
                            e[4]))
    lut = figures["lut"]
    check(all(any("mapping %d" % m in k for k in lut) for m in (0, 1, 2)),
          "NN_LUT tables on fp16 data judged by function: %s; the three mappings witnessed"
          % dict(sorted(lut.items())))
    print("NN_LUT tables between their entries (tables, largest error of the linear "
          "interpolation and of the entry alone, units in the last place): %s"
          % dict(sorted(figures["between"].items())))
    sys.exit(tc_check.finish())


if __name__ == "__main__":
    main()
