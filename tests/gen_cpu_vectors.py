#!/usr/bin/env python3
"""gen_cpu_vectors.py - the cases of tests/test_cpu_ops.c and their expected
values, written as tests/cpu_vectors.h.

    python3 tests/gen_cpu_vectors.py            # rewrites tests/cpu_vectors.h
    python3 tests/gen_cpu_vectors.py --check    # exit 1 when the committed file differs

Each case is a small model of one to three operations (the fields of its
commands, its state buffers' uniforms, its kernels and tables, its inputs)
and the bytes its output records must hold after a run.  Those bytes are
computed here with numpy and Python integers and fractions from the rules
doc/cpu-backend.md states for each operation (convolution, requantization,
pooling, the TP walk's meaning as a numpy expression, tables, shaders); no
value is taken from the backend.  The C test builds each model with
tests/cpu_model.c (kernel streams by tests/coef_encode.c), runs it through
the public API and compares.

Random data comes from numpy's legacy RandomState, whose streams numpy keeps
fixed, so the file is the same on every run; the test `cpu-vectors` runs
--check.
"""

import decimal
import math
import struct
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

try:
    import numpy as np
except ImportError:
    print("gen_cpu_vectors.py needs numpy (Debian's python3-numpy), which is not installed: skipped")
    sys.exit(77)

OUT = Path(__file__).resolve().parent / "cpu_vectors.h"

# enum nbg_graph_source / enum nbg_graph_op_type
INPUT, OUTPUT, MISC_DYNA_GENERIC, VIP_SRAM = 1, 2, 5, 8
OP_SH, OP_NN, OP_TP, OP_SP = 1, 2, 3, 6
UINT8, FP16, FP32 = 2, 1, 0
# tests/coef_encode.h
CE_V7, CE_V8A, CE_V8B, CE_TPFC = 1, 2, 3, 4
CE_INTERLEAVED = 2

# --------------------------------------------------------------- arithmetic


def round_half_away(x):
    """A Fraction rounded to the nearest integer, halves away from zero."""
    x = Fraction(x)
    q, r = divmod(abs(x.numerator), x.denominator)
    if 2 * r >= x.denominator:
        q += 1
    return q if x >= 0 else -q


def round_half_even(x):
    """A Fraction rounded to the nearest integer, halves to the even one."""
    x = Fraction(x)
    q, r = divmod(x.numerator, x.denominator)   # floor and remainder, 0 <= r < denominator
    if 2 * r > x.denominator or (2 * r == x.denominator and q % 2):
        q += 1
    return q


# The rounding field of the NN (rounding_mode) and TP (flat_rounding_mode)
# commands, in the vendor's codes: 0 simple rounding (half away from zero),
# 1 round to nearest, ties to even (doc/cpu-backend.md).  Every generated
# command holds 1, the corpus's value, unless a case sets another.
RTNE = 1


def round_mode(x, mode):
    """x rounded as a command whose rounding field is mode (0 or 1) asks."""
    assert mode in (0, 1), mode
    return round_half_even(x) if mode else round_half_away(x)


def sat8(v):
    return 0 if v < 0 else 255 if v > 255 else int(v)


def sat_s8(v):
    """int8 saturation (doc/cpu-backend.md, "int8 data")."""
    return -128 if v < -128 else 127 if v > 127 else int(v)


def s8_bytes(a):
    """int8 values as their two's complement bytes."""
    return np.asarray(a, dtype=np.int64) & 0xFF


def f32_bits(f):
    return struct.unpack("<I", struct.pack("<f", f))[0]


def f16_parts(a):
    """A positive Fraction as (n, rem, e): a = (n + rem) x 2^(e - 10), n the
    whole units of a half's last place, 0 <= rem < 1."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, -14)                           # subnormals: units of 2^-24
    q = a / Fraction(2) ** (e - 10)
    n, r = divmod(q.numerator, q.denominator)
    return n, Fraction(r, q.denominator), e


def f16_tie(x):
    return x != 0 and f16_parts(abs(Fraction(x)))[1] == Fraction(1, 2)


def f16_round(x, margin=False):
    """The IEEE binary16 bits nearest to x (a Fraction; ties to even,
    subnormals, infinity past the largest half).  margin: assert that x is
    not within 2^-30 of its own size from a tie, so that the double
    precision a backend computes in rounds it the same way."""
    x = Fraction(x)
    sign, a = (0x8000 if x < 0 else 0), abs(x)
    if a == 0:
        return sign
    n, rem, e = f16_parts(a)
    if margin:
        assert abs(rem - Fraction(1, 2)) > (n + 1) * Fraction(1, 1 << 30), x
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n & 1):
        n += 1
    if n == 2048:
        n, e = 1024, e + 1
    if e > 15:
        return sign | 0x7C00
    if n < 1024:                              # subnormal
        return sign | n
    return sign | (e + 15) << 10 | (n - 1024)


def f16_bits(x):
    return f16_round(Fraction(x))


def f16_le(values, margin=False):
    """Halves as little-endian bytes."""
    return [b for v in values for b in struct.pack("<H", f16_round(v, margin))]


def flush_subnormal(le):
    """Little-endian halves with every subnormal (exponent field 0) as +0."""
    out = list(le)
    for i in range(0, len(out), 2):
        if not (out[i + 1] & 0x7c):
            out[i] = out[i + 1] = 0
    return out


def softmax_exact(x, weight):
    """exp(weight x (x_i - max)) / sum, from 60-digit decimal exponentials,
    as Fractions (weight: a Fraction)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        mx = max(int(v) for v in x)
        e = [(Decimal(weight.numerator) / Decimal(weight.denominator) * (int(v) - mx)).exp() for v in x]
        total = sum(e)
        return [Fraction(v / total) for v in e]


# The three encodings of an NN command's requantization scale by target
# (doc/cpu-backend.md, "The scale"): the fields for a scale given as a
# float32's 23 mantissa bits m and biased exponent e, and the scale the
# table says those fields mean.
GROUP_15 = (0x7D, 0x88, 0x99, 0xA1)
GROUP_127 = (0xAD, 0xB9, 0xBE)


def scale_fields(target, m, e):
    if target in GROUP_15:
        assert m & 0xFF == 0, "a 15-bit mantissa"
        return m >> 8, 142 - e
    if target in GROUP_127:
        return m, 127 - e
    return m, e


def scale_of_fields(target, mult, shift):
    if target in GROUP_15:
        return Fraction(2**15 + mult, 2**shift)
    if target in GROUP_127:
        return Fraction(2**23 + mult, 2**23) / 2**shift
    return Fraction(2**23 + mult, 2**23) * Fraction(2) ** (shift - 127)


def nn_scale_fields(target, m, e):
    """post_multiplier (bit 0, 1-6, 7-14, 15-22) and post_shift (0-4, 5-6) fields."""
    mult, shift = scale_fields(target, m, e)
    f = [("post_multiplier", mult & 1), ("post_multiplier_1_to_6", mult >> 1 & 63),
         ("post_multiplier_7_to_14", mult >> 7 & 255), ("post_shift", shift & 31),
         ("post_shift_bit_5_6", shift >> 5)]
    if target not in GROUP_15:
        f.append(("post_multiplier_15_to_22", mult >> 15))
    return f, scale_of_fields(target, mult, shift)


# ------------------------------------------------------------ the cases


class Case:
    """One model: inputs (bytes), ops (fields, words, addresses, uniforms),
    coefficient entries (kernel layers for tests/coef_encode.c, raw tables),
    expected output records."""

    def __init__(self, cid, name, source, target=0x1000003B):
        self.id, self.name, self.source, self.target = cid, name, source, target
        self.vip_sram = 0
        self.ins, self.outs, self.ops, self.streams, self.raws = [], [], [], [], []
        self.refused = ""

    def add_input(self, data, dims, fmt=UINT8):
        self.ins.append((np.asarray(data, dtype=np.uint8).ravel(), dims, fmt))
        return len(self.ins) - 1

    def add_output(self, expect, dims, fmt=UINT8):
        self.outs.append((np.asarray(expect, dtype=np.uint8).ravel(), dims, fmt))
        return len(self.outs) - 1

    def add_op(self, typ, layer, acc32=-1):
        op = {"type": typ, "layer": layer, "fields": [], "words": [], "addrs": [], "uniforms": [],
              "acc32": acc32}
        self.ops.append(op)
        return op

    def add_stream(self, layer, opts):
        """A kernel stream entry (encoded by the C test); its index."""
        self.streams.append((layer, opts))
        return len(self.streams) - 1

    def add_raw(self, data):
        """A raw entry; its index in the coefficient table, after every
        stream (so a case adds its streams first)."""
        self.raws.append(np.asarray(data, dtype=np.uint8).ravel())
        return len(self.streams) + len(self.raws) - 1


def field_addr(op, key, source, index, offset):
    op["addrs"].append(("field", key, source, index, offset))


def word_addr(op, word, source, index, offset, transformed):
    op["addrs"].append(("word", word, source, index, offset, transformed))


def uniform_addr(op, i, source, index, offset):
    op["addrs"].append(("uniform", i, source, index, offset))


# ---------------------------------------------------------------- NN


def superblock(out, cores, superblocks):
    per_core = -(-out // cores)
    return -(-per_core // superblocks)


def conv_direct(img, w, bias, k, x_off, y_off, out_x, out_y, in_zp, w_zp, depthwise):
    """The convolution's sums: img [z][y][x] (uint8), w [o][kz][k][k];
    outside the image the border is the zero point, whose term is 0."""
    out_z = w.shape[0]
    acc = np.zeros((out_z, out_y, out_x), dtype=np.int64)
    zi, hi, wi = img.shape
    pad = np.full((zi, max(hi, out_y + k) + 32, max(wi, out_x + k) + 32), in_zp, dtype=np.int64)
    # input pixel (x + kx + x_off, y + ky + y_off) at pad[.., y + ky + 16 + y_off, ..]
    pad[:, 16:16 + hi, 16:16 + wi] = img
    d = pad - in_zp
    for o in range(out_z):
        acc[o] = bias[o]
        for z in range(w.shape[1]):
            src = d[o if depthwise else z]
            for ky in range(w.shape[2]):
                for kx in range(w.shape[3]):
                    t = int(w[o, z, ky, kx]) - w_zp
                    y0, x0 = 16 + ky + y_off, 16 + kx + x_off
                    acc[o] += t * src[y0:y0 + out_y, x0:x0 + out_x]
    return acc


def requant_all(acc, scale, out_zp, relu, int8=False, mode=RTNE):
    q = np.zeros(acc.shape, dtype=np.int64)
    for i, a in np.ndenumerate(acc):
        v = round_mode(int(a) * scale, mode) + out_zp
        if relu and v < out_zp:
            v = out_zp
        q[i] = sat_s8(v) if int8 else sat8(v)
    return q


def pool_image(q, pooling):
    """The written image: q itself, or per whole 2x2 window at stride 2 (an
    odd last row or column is not written: the decoder's written image) its
    maximum (pooling 1) or first pixel (3)."""
    if pooling == 0:
        return q
    oz, oy, ox = q.shape
    py, px = (oy - 2) // 2 + 1, (ox - 2) // 2 + 1
    if pooling == 3:
        return q[:, :2 * py:2, :2 * px:2]
    p = np.zeros((oz, py, px), dtype=np.int64)
    for y in range(py):
        for x in range(px):
            p[:, y, x] = q[:, 2 * y:2 * y + 2, 2 * x:2 * x + 2].max(axis=(1, 2))
    return p


def place(buf, img, base, row, slice_, ring=None):
    """Writes img [z][y][x] into buf at base + z slice + y row + x, through a
    ring (lo, size): an address at or past lo lands at lo + (a - lo) mod size."""
    for (z, y, x), v in np.ndenumerate(img):
        a = base + z * slice_ + y * row + x
        if ring and a >= ring[0]:
            a = ring[0] + (a - ring[0]) % ring[1]
        buf[a] = v


def gather(buf, base, shape, row, slice_, ring=None):
    """The image [z][y][x] at base with its strides, read through a ring
    as place() writes."""
    z_n, y_n, x_n = shape
    img = np.zeros(shape, dtype=np.int64)
    for z in range(z_n):
        for y in range(y_n):
            for x in range(x_n):
                a = base + z * slice_ + y * row + x
                if ring and a >= ring[0]:
                    a = ring[0] + (a - ring[0]) % ring[1]
                img[z, y, x] = buf[a]
    return img


def nn_fields(p):
    """The NN command of a convolution described by p (a dict)."""
    t = p["target"]
    f = [("kernel_xy_size", p["k"]), ("kernel_z_size", 1 if p["dw"] else p["kz"]),
         ("kernels_per_core", superblock(p["out_z"], p["cores"], p["superblocks"])),
         ("pooling", p["pooling"]), ("in_image_x_size", p["in_x"]), ("in_image_y_size", p["in_y"]),
         ("in_image_x_offset", p["x_off"] & 7), ("in_image_x_offset_bit_3", p["x_off"] >> 3 & 1),
         ("in_image_y_offset", p["y_off"] & 7), ("in_image_y_offset_bit_3", p["y_off"] >> 3 & 1),
         ("relu", p["relu"]), ("out_image_x_size", p["out_x"]), ("out_image_y_size", p["out_y"]),
         ("out_image_z_size", p["out_z"]), ("rounding_mode", p.get("rounding", RTNE)),
         ("in_image_border_const", p["in_zp"]), ("in_image_x_stride", p["in_row"]),
         ("in_image_y_stride", p["in_slice"]), ("out_image_x_stride", p["out_row"]),
         ("out_image_y_stride", p["out_slice"]), ("coef_zero_point", p["w_zp"]),
         ("out_zero_point", p["out_zp"]), ("depthwise", 1 if p["dw"] else 0),
         ("layer_type", p.get("layer_type", 0))]
    if "ky" in p:  # a kernel one value wide: k wide, ky high
        f.append(("kernel_y_size", p["ky"]))
    if p.get("int8"):
        f += [("kernel_data_type", 2), ("in_image_data_type", 2), ("out_image_data_type", 2)]
    sf, scale = nn_scale_fields(t, p["m"], p["e"])
    return f + sf, scale


FORMAT_OF = {0x7D: CE_V7, 0x88: CE_V7, 0x99: CE_V8B, 0xA1: CE_V8B}


def stream_opts(target, seed):
    fmt = FORMAT_OF.get(target, CE_V8A)
    if fmt == CE_V7:
        return {"format": CE_V7, "order": CE_INTERLEAVED, "zrl_bits": 3}
    if fmt == CE_V8B:
        return {"format": CE_V8B, "order": CE_INTERLEAVED, "zrl": 1, "avg_bias": 12, "map_seed": seed}
    return {"format": CE_V8A, "zrl": 1, "map_seed": seed}


def fits_int32(w, bias, w_zp):
    """doc/cpu-backend.md's bound for the 32-bit kernels: per output channel
    |bias| + 255 x sum |w - zero point| <= 2^31 - 1."""
    return all(abs(int(b)) + 255 * int(np.abs(w[o].astype(np.int64) - w_zp).sum()) <= 2**31 - 1
               for o, b in enumerate(bias))


def nn_op(case, p, w, bias, layer="ConvolutionReluPoolingLayer2", acc32=None):
    """An NN convolution op reading p['in_at'] and writing p['out_at']
    ((source, index, offset) each), kernels w [o][kz][ky][kx] as a stream;
    the test checks the accumulation path the bound gives (acc32, when
    given, is what the case means it to be)."""
    # the 32-bit kernels take square kernels only (a 0x7d fully connected
    # command is run as a 1x1 convolution: doc/cpu-backend.md)
    bound = int(fits_int32(w, bias, p["w_zp"]) and (w.shape[2] == w.shape[3] or p.get("layer_type") == 1))
    assert acc32 is None or acc32 == bound
    op = case.add_op(OP_NN, layer, bound)
    p["cores"] = min(p["cores"], w.shape[0])  # a core without kernels ends a stream (doc/weights.md)
    f, scale = nn_fields(p)
    op["fields"] += f
    kz, ky, kx = w.shape[1], w.shape[2], w.shape[3]
    plane = p["out_x"] * p["out_y"]
    s = case.add_stream({"out": w.shape[0], "kz": kz, "ky": ky, "kx": kx, "zp": p["w_zp"],
                         "in_zp": p["in_zp"], "w": s8_bytes(w.ravel()) if p.get("int8") else w.ravel(),
                         "bias": np.asarray(bias), "cores": p["cores"],
                         "superblocks": p["superblocks"], "depthwise": int(p["dw"]), "plane": plane,
                         "seed": p.get("order_seed", 0), "int8": int(p.get("int8", False))},
                        stream_opts(p["target"], p.get("order_seed", 1)))
    field_addr(op, "kernel_address", MISC_DYNA_GENERIC, s, 0)
    field_addr(op, "in_image_address", *p["in_at"])
    field_addr(op, "out_image_address", *p["out_at"])
    return op, scale


def conv_params(**kw):
    p = {"target": 0x1000003B, "dw": False, "pooling": 0, "relu": 0, "x_off": 0, "y_off": 0,
         "cores": 3, "superblocks": 2}
    p.update(kw)
    return p


def conv_expect(p, img, w, bias, scale):
    """The written image [out_z][py][px] of the convolution p on img."""
    acc = conv_direct(img, w, bias, p["k"], p["x_off"], p["y_off"], p["out_x"], p["out_y"], p["in_zp"],
                      p["w_zp"], p["dw"])
    q = requant_all(acc, scale, p["out_zp"], p["relu"], p.get("int8", False), p.get("rounding", RTNE))
    return pool_image(q, p["pooling"]), acc


def planar_input(case, img, row, slice_):
    """img [z][y][x] as an input record with the given strides; the bytes
    between rows and slices hold 255, which no operation may read."""
    z, y, x = img.shape
    buf = np.full(slice_ * z, 255, dtype=np.uint8)
    place(buf, img, 0, row, slice_)
    return case.add_input(buf, [len(buf)])


def planar_output(case, img, row, slice_):
    """img [z][y][x] as the expected bytes of an output record with the
    given strides; the bytes between rows and slices stay 0."""
    z, y, x = img.shape
    buf = np.zeros(slice_ * z, dtype=np.uint8)
    place(buf, img, 0, row, slice_)
    return case.add_output(buf, [len(buf)])


def written_dims(p):
    """The written image's x, y: the decoder's (dataflow.c) pooling 2x2 at
    stride 2 keeps whole windows; a subsampling it infers keeps every
    other pixel from the first."""
    if p["pooling"]:
        return (p["out_x"] - 2) // 2 + 1, (p["out_y"] - 2) // 2 + 1
    if p.get("stride2"):
        return (p["out_x"] + 1) // 2, (p["out_y"] + 1) // 2
    return p["out_x"], p["out_y"]


def conv_case(cid, name, seed, in_lo=0, in_hi=256, w_dev=None, bias=None, **kw):
    """A one-operation model: input 0 planar -> NN convolution -> output 0."""
    c = Case(cid, name, "numpy: the direct convolution of doc/cpu-backend.md, requantized exactly "
             "(Python fractions, rounded per the command's rounding_mode: %s), then ReLU, saturation and "
             "pooling" % ("half away from zero" if kw.get("rounding", RTNE) == 0 else "half to even"),
             kw.get("target", 0x1000003B))
    p = conv_params(**kw)
    rs = np.random.RandomState(seed)
    kz = 1 if p["dw"] else p["kz"]
    if p.get("int8") and (in_lo, in_hi) == (0, 256):
        in_lo, in_hi = -128, 128
    img = rs.randint(in_lo, in_hi, (p["out_z"] if p["dw"] else p["kz"], p["in_y"], p["in_x"]))
    ky = p.get("ky", p["k"])
    if w_dev:
        w = p["w_zp"] + rs.randint(-w_dev, w_dev + 1, (p["out_z"], kz, ky, p["k"]))
    elif p.get("int8"):
        w = rs.randint(-128, 128, (p["out_z"], kz, ky, p["k"]))
    else:
        w = rs.randint(0, 256, (p["out_z"], kz, ky, p["k"]))
    bias = np.array(bias if bias is not None else rs.randint(-3000, 3001, p["out_z"]), dtype=np.int64)
    px, py = written_dims(p)
    p.setdefault("in_row", p["in_x"])
    p.setdefault("in_slice", p["in_row"] * p["in_y"])
    p.setdefault("out_row", px)
    p.setdefault("out_slice", p["out_row"] * py)
    p["in_at"], p["out_at"] = (INPUT, 0, 0), (OUTPUT, 0, 0)
    planar_input(c, s8_bytes(img) if p.get("int8") else img, p["in_row"], p["in_slice"])
    op, scale = nn_op(c, p, w, bias)
    q, acc = conv_expect(p, img, w, bias, scale)
    if p.get("stride2"):
        q = q[:, ::2, ::2]
    assert q.shape[1:] == (py, px)
    planar_output(c, s8_bytes(q) if p.get("int8") else q, p["out_row"], p["out_slice"])
    return c, acc, scale, q


def ties(acc, scale):
    return sum(1 for a in acc.ravel() if (int(a) * scale).denominator == 2)


def nn_cases():
    cases = []
    c, acc, scale, q = conv_case(
        "nn-conv-ties-saturation",
        "NN conv 3x3, 2 -> 3 channels, 6x5 -> 6x5, offsets -1 (a border of zero points), zero points in 60, "
        "kernel 120, out 100, scale 1/2 (every odd sum a tie), saturation at 0 and 255, rows and slices "
        "with gaps", 1, in_lo=40, in_hi=81, w_dev=2, bias=[3, 300, -180],
        in_x=6, in_y=5, kz=2, k=3, out_x=6, out_y=5, out_z=3, x_off=-1, y_off=-1, in_zp=60, w_zp=120,
        out_zp=100, m=0, e=126, in_row=7, in_slice=38, out_row=7, out_slice=36)
    assert ties(acc, scale) > 10 and (q == 0).any() and (q == 255).any()
    assert any(int(a) < 0 and int(a) % 2 for a in acc.ravel())
    # the expected bytes tell the two rounding rules apart (rounding half
    # away from zero fails the case)
    assert (requant_all(acc, scale, 100, 0, mode=0) != requant_all(acc, scale, 100, 0, mode=1)).sum() > 10
    cases.append(c)
    c, acc, scale, q = conv_case(
        "nn-conv-relu-maxpool",
        "NN conv 3x3, 3 -> 5 channels, 7x5 -> 7x5 (offsets -1), ReLU at the zero point 40, 2x2 max pooling "
        "-> 3x2 (the odd last column and row dropped), a 23-bit mantissa (target 0xe8: the exponent "
        "field); channel 0's bias keeps whole windows below the zero point", 2,
        bias=[-45000, 1200, -800, 300, 2500], target=0xE8, in_x=7, in_y=5, kz=3, k=3, out_x=7, out_y=5,
        out_z=5, x_off=-1, y_off=-1, in_zp=128, w_zp=131, out_zp=40, relu=1, pooling=1, m=0x2F3A51, e=117)
    below = pool_image(requant_all(acc, scale, 40, 0), 1)
    assert ((below > 0) & (below < 40)).sum() >= 3      # ReLU at the zero point, not at 0
    cases.append(c)
    cases.append(conv_case(
        "nn-conv-first-pixel-0xbe",
        "NN conv 3x3, 4 -> 2 channels, 6x6 -> 4x4, first-pixel pooling -> 2x2, target 0xbe (shift = 127 - "
        "exponent)", 3, target=0xBE, in_x=6, in_y=6, kz=4, k=3, out_x=4, out_y=4, out_z=2, in_zp=9, w_zp=77,
        out_zp=128, pooling=3, m=0x5A5A5A, e=117, cores=2)[0])
    cases.append(conv_case(
        "nn-conv-stride2",
        "NN conv 3x3 at stride 2, 2 -> 3 channels, 7x6 (offsets -1) -> 4x3: no pooling field, the output row "
        "pitch of 4 bytes holds half the 7-pixel row, so the decoder infers the subsampling", 4,
        in_x=7, in_y=6, kz=2, k=3, out_x=7, out_y=6, out_z=3, x_off=-1, y_off=-1, in_zp=3, w_zp=200,
        out_zp=17, m=0x123456, e=118, stride2=True)[0])
    cases.append(conv_case(
        "nn-depthwise-0xb9",
        "NN depthwise conv 3x3, 5 channels (not a multiple of the kernels' group of 4), 5x4 -> 5x4 (offsets "
        "-1), target 0xb9 (shift = 127 - exponent)", 5, target=0xB9, dw=True, in_x=5, in_y=4, kz=1, k=3,
        out_x=5, out_y=4, out_z=5, x_off=-1, y_off=-1, in_zp=100, w_zp=90, out_zp=120, m=0x0ABCDE, e=115,
        cores=4, superblocks=2)[0])
    cases.append(conv_case(
        "nn-conv-v7-0x88",
        "NN conv 3x3, 3 -> 5 channels, 5x5 -> 5x5 (offsets -2 and -1: a border two pixels wide on the left), "
        "target 0x88 (a v7 kernel stream; the top 15 mantissa bits, shift = 142 - exponent)", 6,
        target=0x88, in_x=5, in_y=5, kz=3, k=3, out_x=5, out_y=5, out_z=5, x_off=-2, y_off=-1, in_zp=30,
        w_zp=128, out_zp=64, m=0x4D2100, e=116, cores=2, superblocks=1)[0])
    cases.append(conv_case(
        "nn-conv1x1-v8b-0x99",
        "NN conv 1x1, 5 -> 9 channels, 4x3, offsets +1 (the image read from its second pixel and row), "
        "target 0x99 (a v8b kernel stream, 15-bit mantissa)", 7, target=0x99, in_x=5, in_y=4, kz=5, k=1,
        out_x=4, out_y=3, out_z=9, x_off=1, y_off=1, in_zp=77, w_zp=100, out_zp=90, m=0x654300, e=120,
        cores=2, superblocks=2, order_seed=3)[0])
    c, acc, scale, q = conv_case(
        "nn-depthwise-3x1-maxpool-0xe8",
        "NN depthwise conv of a kernel 3 rows high and 1 wide (kernel_xy_size 1, kernel_y_size 3), 4 channels, "
        "6x5 -> 6x5 (no offset: the last two rows read the border), 2x2 max pooling -> 3x2, target 0xe8 (a "
        "v8a stream), random kernels; the 0xe8 face-age file's ops 4 and 18 hold the identity [1, 0, 0]",
        8, target=0xE8, dw=True, in_x=6, in_y=5, kz=1, k=1, ky=3, out_x=6, out_y=5, out_z=4, in_zp=127,
        w_zp=120, out_zp=127, pooling=1, m=0x1A2B3C, e=119, cores=2, superblocks=1)
    assert acc.shape == (4, 5, 6) and (q > 0).any() and (q < 255).any()
    cases.append(c)
    return cases


def nn_rounding_cases():
    """NN rounding_mode 0 (half away from zero, where 1 is half to even) and
    2 (refused)."""
    cases = []
    for mode in (0, 2):
        c = conv_case(
            "nn-conv-rounding-mode%d" % mode,
            "NN conv 3x3, 2 -> 3 channels, 6x5 -> 6x5 (offsets -1), scale 1/2 (every odd sum a tie), with "
            "rounding_mode %d (the vendor's %s)%s" % (mode, "simple rounding, the 0x10003 image classification "
                                                      "file's" if mode == 0 else "round toward zero",
                                                      "" if mode == 0 else ": refused before anything runs"),
            8, in_lo=40, in_hi=81, w_dev=2, bias=[3, 300, -180], in_x=6, in_y=5, kz=2, k=3, out_x=6, out_y=5,
            out_z=3, x_off=-1, y_off=-1, in_zp=60, w_zp=120, out_zp=100, m=0, e=126, in_row=6, in_slice=30,
            out_row=6, out_slice=30, **({"rounding": 0} if mode == 0 else {}))
        c, acc, scale = c[0], c[1], c[2]
        if mode == 0:   # the same data rounded half to even differ at the ties
            assert (requant_all(acc, scale, 100, 0, mode=0) != requant_all(acc, scale, 100, 0, mode=1)).sum() > 10
        else:
            c.ops[-1]["fields"].append(("rounding_mode", mode))
        if mode:
            c.refused = "rounding-mode-unsupported"
            c.source = ("doc/cpu-backend.md, What it executes: rounding_mode 2 and 3 are refused "
                        "(rounding-mode-unsupported)")
            c.outs = [(np.zeros_like(o[0]), o[1], o[2]) for o in c.outs]
        cases.append(c)
    return cases


def nn_int8_cases():
    """int8 convolutions (doc/cpu-backend.md, "int8 data"): input, output and
    kernel codes two's complement, every zero point 0, results saturated to
    -128..127; on the corpus's int8 targets' streams (v8b 0x99, v7 0x88)."""
    cases = []
    c, acc, scale, q = conv_case(
        "nn-int8-conv-ties-saturation",
        "NN int8 conv 3x3, 3 -> 5 channels, 6x5 -> 6x5 (offsets -1: a border of zeros), target 0x99 (a v8b "
        "stream of signed codes), scale 1/2: odd sums are ties of both signs, saturation at -128 and 127",
        31, in_lo=-12, in_hi=13, w_dev=3, bias=[5, -7, 180, -180, 0], int8=True, target=0x99,
        in_x=6, in_y=5, kz=3, k=3, out_x=6, out_y=5, out_z=5, x_off=-1, y_off=-1, in_zp=0, w_zp=0,
        out_zp=0, m=0, e=126, in_row=7, in_slice=38, cores=2, superblocks=2, order_seed=5)
    assert (q == -128).any() and (q == 127).any() and ((q > -128) & (q < 127)).sum() > 50
    assert any(int(a) < 0 and int(a) % 2 for a in acc.ravel()) and any(int(a) > 0 and int(a) % 2 for a in acc.ravel())
    cases.append(c)
    c, acc, scale, q = conv_case(
        "nn-int8-conv-relu-maxpool-v7",
        "NN int8 conv 3x3, 4 -> 6 channels, 7x5 -> 7x5 (offsets -1), ReLU (at the zero point 0), 2x2 max "
        "pooling -> 3x2, target 0x88 (a v7 stream of signed codes, 15-bit mantissa)", 32, int8=True,
        target=0x88, in_x=7, in_y=5, kz=4, k=3, out_x=7, out_y=5, out_z=6, x_off=-1, y_off=-1, in_zp=0,
        w_zp=0, out_zp=0, relu=1, pooling=1, m=0x4D2100, e=116, cores=2, superblocks=1)
    assert (q == 0).any() and (q > 0).sum() > 5
    cases.append(c)
    c, acc, scale, q = conv_case(
        "nn-int8-maxpool-negative",
        "NN int8 conv 1x1, 3 -> 4 channels, 6x4 -> 6x4, no ReLU, 2x2 max pooling -> 3x2, target 0x99: "
        "windows of negative values only, and windows mixing -128..-1 with 0..127 (compared by value, "
        "not by byte)", 33, in_lo=-128, in_hi=128, int8=True, target=0x99, bias=[-9000, -4000, 0, 2500],
        in_x=6, in_y=4, kz=3, k=1, out_x=6, out_y=4, out_z=4, in_zp=0, w_zp=0, out_zp=0, pooling=1,
        m=0x300000, e=119, cores=2, superblocks=2, order_seed=2)
    pre = requant_all(acc, scale, 0, 0, True)
    assert (q < 0).sum() >= 3 and any((pre[o, 2*y:2*y+2, 2*x:2*x+2] < 0).any() and (pre[o, 2*y:2*y+2, 2*x:2*x+2] >= 0).any()
                                       for o in range(4) for y in range(2) for x in range(3))
    cases.append(c)
    cases.append(conv_case(
        "nn-int8-depthwise-first-pixel",
        "NN int8 depthwise conv 3x3, 5 channels, 6x6 -> 6x6 (offsets -1), first-pixel pooling -> 3x3, "
        "target 0xe8 (a v8a stream: the bias stored as it is)", 34, int8=True, target=0xE8, dw=True, in_x=6, in_y=6, kz=1,
        k=3, out_x=6, out_y=6, out_z=5, x_off=-1, y_off=-1, in_zp=0, w_zp=0, out_zp=0, pooling=3,
        m=0x0ABC00, e=117, cores=4, superblocks=2, order_seed=4)[0])
    return cases


NUMPY_CONV = ("numpy: the direct convolution of doc/cpu-backend.md, requantized exactly (Python fractions, "
              "rounding_mode 1: half to even), then ReLU, saturation and pooling")
INT32_MAX = 2**31 - 1
# 255 / 2^32 = (1 + 127/128) x 2^-25: the float32 mantissa 0x7f0000, exponent 102
S255 = (0x7F0000, 102)


def one_by_one(c, rs, name_out, w_dev, bias, out_zp, img, m_e, acc32, in_zp=128, out_index=0):
    """A 1x1 convolution of img (z, y, x) to one channel, kernel codes
    w_zp + w_dev, into output out_index; its expected image."""
    z, y, x = img.shape
    p = conv_params(in_x=x, in_y=y, kz=z, k=1, out_x=x, out_y=y, out_z=1, in_zp=in_zp, w_zp=100,
                    out_zp=out_zp, m=m_e[0], e=m_e[1], in_row=x, in_slice=x * y, out_row=x, out_slice=x * y,
                    cores=1, superblocks=1)
    p["in_at"], p["out_at"] = (INPUT, 0, 0), (OUTPUT, out_index, 0)
    w = np.array(w_dev, dtype=np.int64).reshape(1, z, 1, 1) + 100
    op, scale = nn_op(c, p, w, [bias], layer=name_out, acc32=acc32)
    q, acc = conv_expect(p, img, w, [bias], scale)
    c.add_output(q, [x * y])
    return acc


def nn_wide_cases():
    cases = []
    c = Case("nn-acc64", "NN conv 1x1, 2 -> 1 channel, 4x3, twice: biases 2^31 - 1001 and -(2^31 - 1001) "
             "with kernel deviations (10, 1) and (-10, -1), so the sums pass 2^31 and -2^31 (the 64-bit "
             "path; the requantization's 128-bit branch); the scale 255 / 2^32 puts 2^31 exactly at 127.5, "
             "so each output says on which side of 2^31 its sum lies, and a sum of exactly +-2^31 is a "
             "tie (rounding_mode 1: to the even code)", NUMPY_CONV)
    rs = np.random.RandomState(8)
    img = rs.randint(0, 256, (2, 3, 4))
    img[:, 0, 0] = (228, 129)     # 10 x 100 + 1 = 1001: the sum is exactly 2^31
    img[:, 1, 1] = (227, 139)     # 990 + 11 = 1001
    planar_input(c, img, 4, 12)
    a = one_by_one(c, rs, "ConvolutionReluLayer", (10, 1), INT32_MAX - 1000, 0, img, S255, 0)
    b = one_by_one(c, rs, "ConvolutionReluLayer_1", (-10, -1), -(INT32_MAX - 1000), 128, img, S255, 0,
                   out_index=1)
    assert a.max() > 2**31 and a.min() < 2**31 and (a == 2**31).sum() == 2
    assert b.min() < -2**31 and b.max() > -2**31 and (b == -2**31).sum() == 2
    cases.append(c)
    c = Case("nn-acc32-bound", "NN conv 1x1, 1 -> 1 channel, 4x3, twice: |bias| + 255 x sum |w - zp| is "
             "exactly 2^31 - 1 (the 32-bit kernels) and then 2^31 (the 64-bit path), the plan's bound "
             "of doc/cpu-backend.md", NUMPY_CONV)
    img = rs.randint(0, 256, (1, 3, 4))
    planar_input(c, img, 4, 12)
    one_by_one(c, rs, "ConvolutionReluLayer", (1,), INT32_MAX - 255, 0, img, S255, 1)
    one_by_one(c, rs, "ConvolutionReluLayer_1", (1,), -(INT32_MAX - 254), 128, img, S255, 0, out_index=1)
    cases.append(c)
    return cases


def kernels(rs, shape):
    """Random kernel codes [o][kz][ky][kx] and biases."""
    return rs.randint(0, 256, shape), rs.randint(-3000, 3000, shape[0])


def nn_ring_case():
    c = Case("nn-circular-buffers", "NN conv 3x3, 2 -> 3 channels, 5x4 (offsets -1), its input read through "
             "a circular buffer of 192 bytes ending at the input record's end (the image starts 16 bytes "
             "before that end and wraps to the buffer's start) and its output written through one of 64 "
             "bytes ending at the output record's end (passing it once)",
             "numpy: the convolution of the image gathered through the ring (an address at or past the "
             "buffer's start lands at start + (address - start) mod size), placed through the output's ring")
    rs = np.random.RandomState(9)
    rec = rs.randint(0, 256, 256)
    ring_in, ring_out = (64, 192), (64, 64)
    p = conv_params(in_x=5, in_y=4, kz=2, k=3, out_x=5, out_y=4, out_z=3, x_off=-1, y_off=-1, in_zp=50,
                    w_zp=128, out_zp=128, m=0x3C0000, e=116, in_row=5, in_slice=20, out_row=5, out_slice=20)
    p["in_at"], p["out_at"] = (INPUT, 0, 240), (OUTPUT, 0, 100)
    img = gather(rec, 240, (2, 4, 5), 5, 20, ring_in)
    w, bias = kernels(rs, (3, 2, 3, 3))
    c.add_input(rec, [256])
    op, scale = nn_op(c, p, w, bias)
    op["fields"] += [("in_image_circular_buf_size", 192 >> 6), ("out_image_circular_buf_size", 64 >> 6)]
    field_addr(op, "in_image_circular_buf_end_addr_plus_1", INPUT, 0, 256)
    field_addr(op, "out_image_circular_buf_end_addr_plus_1", OUTPUT, 0, 128)
    q, acc = conv_expect(p, img, w, bias, scale)
    out = np.zeros(128, dtype=np.uint8)
    place(out, q, 100, 5, 20, ring_out)
    c.add_output(out, [128])
    return c


def nn_tile_case(placed):
    """A conv 3x3 layer of 6x8 -> 4x6 as two NN operations of three output
    rows each.  placed 1: the second stores its output offset (in VIP SRAM)
    16 times its rows (target 0xb9's image_classify layer 2), placed by its
    input rows; placed 2: the second stores its input offset (in VIP SRAM)
    9 times its rows (the 0xb9 face detector's layer 3), placed by its
    output rows.  The data flow places the image (dataflow.tile_placed);
    TP copies move the image between the record and VIP SRAM."""
    cid = ("nn-row-tiles", "nn-row-tiles-placed", "nn-row-tiles-placed-input")[placed]
    name = ("NN conv 3x3, 2 -> 3 channels, 6x8 -> 4x6, as two operations of the layer computing output rows "
            "0-2 and 3-5 (input rows 0-4 and 3-7)")
    if placed == 1:
        name += (", writing VIP SRAM, the second's stored output offset 16 times its 3 rows (the 0xb9 "
                 "image_classify file's layer-2 tiles): placed by its input rows")
    elif placed == 2:
        name += (", reading VIP SRAM, the second's stored input offset 9 times its 3 rows (the 0xb9 face "
                 "detector's layer-3 tiles): placed by its output rows")
    c = Case(cid, name, "numpy: the whole layer's convolution (the tiles must compose to it)",
             0xB9 if placed else 0x1000003B)
    rs = np.random.RandomState(10 + min(placed, 1) + 7 * (placed == 2))
    img = rs.randint(0, 256, (2, 8, 6))
    w, bias = kernels(rs, (3, 2, 3, 3))
    planar_input(c, img, 6, 48)
    if placed:
        c.vip_sram = 1024
    if placed == 2:
        tp_op(c, "TensorCopy", 6, 8, 2, 6, 48, (0, 0, 5, 7), (6, 8, 6, 8), [(6, 1), (8, 6), (2, 48)],
              at_out=(VIP_SRAM, -1, 0))
    for t in range(2):
        p = conv_params(target=c.target, in_x=6, in_y=5, kz=2, k=3, out_x=4, out_y=3, out_z=3, in_zp=90,
                        w_zp=110, out_zp=70, m=0x10F0F0, e=117, in_row=6, in_slice=48,
                        out_row=4, out_slice=24)
        p["in_at"] = (VIP_SRAM, -1, 9 * 18 * t) if placed == 2 else (INPUT, 0, 18 * t)
        p["out_at"] = (VIP_SRAM, -1, 16 * 12 * t) if placed == 1 else (OUTPUT, 0, 12 * t)
        op, scale = nn_op(c, p, w, bias)
    if placed == 1:
        tp_op(c, "TensorCopy", 4, 6, 3, 4, 24, (0, 0, 3, 5), (4, 6, 4, 6), [(4, 1), (6, 4), (3, 24)],
              at_in=(VIP_SRAM, -1, 0))
    whole = dict(p, in_y=8, out_y=6)
    q, acc = conv_expect(whole, img, w, bias, scale)
    planar_output(c, q, 4, 24)
    return c


def nn_interleaved_case():
    c = Case("nn-interleaved-input",
             "NN conv 3x3, 3 -> 4 channels, 5x4 (offsets -1), reading an input record of dims (3, 5, 4) "
             "innermost first: channels side by side, pixel (x, y, z) at (5y + x) x 3 + z, while the command "
             "describes planes of rows of 5 bytes",
             "numpy: the convolution of the record transposed from HWC to CHW")
    rs = np.random.RandomState(12)
    hwc = rs.randint(0, 256, (4, 5, 3))
    img = hwc.transpose(2, 0, 1)
    p = conv_params(in_x=5, in_y=4, kz=3, k=3, out_x=5, out_y=4, out_z=4, x_off=-1, y_off=-1, in_zp=10,
                    w_zp=128, out_zp=128, m=0x200000, e=117, in_row=5, in_slice=20, out_row=5, out_slice=20)
    p["in_at"], p["out_at"] = (INPUT, 0, 0), (OUTPUT, 0, 0)
    c.add_input(hwc, [3, 5, 4])
    w, bias = kernels(rs, (4, 3, 3, 3))
    op, scale = nn_op(c, p, w, bias)
    q, acc = conv_expect(p, img, w, bias, scale)
    planar_output(c, q, 5, 20)
    return c


def nn_fc7d_case():
    c = Case("nn-fc-0x7d",
             "NN fully connected command of target 0x7d (layer_type 1): 6 columns of 2 rows in 3 slices -> 4 "
             "channels of 6 pixels, kernels one column of 2 rows (a v7 stream, kx 1, ky 2, kz 3); 15-bit "
             "mantissa, shift = 142 - exponent",
             "numpy: out[o][x] = requant(bias[o] + sum over z, y of (w[o][z][y] - zp)(in[z][y][x] - in_zp)), "
             "doc/cpu-backend.md's rule for these commands", 0x7D)
    rs = np.random.RandomState(13)
    img = rs.randint(0, 256, (3, 2, 6))
    w, bias = kernels(rs, (4, 3, 2, 1))
    p = conv_params(target=0x7D, in_x=6, in_y=2, kz=3, k=2, out_x=6, out_y=1, out_z=4, in_zp=20, w_zp=128,
                    out_zp=128, m=0x2B4E00, e=113, in_row=6, in_slice=12, out_row=6, out_slice=6,
                    layer_type=1, cores=2, superblocks=1)
    p["in_at"], p["out_at"] = (INPUT, 0, 0), (OUTPUT, 0, 0)
    planar_input(c, img, 6, 12)
    op, scale = nn_op(c, p, w, bias, layer="FullyConnectedReluLayer")
    out = np.zeros((4, 1, 6), dtype=np.int64)
    for o in range(4):
        for x in range(6):
            acc = int(bias[o]) + sum((int(w[o, z, y, 0]) - 128) * (int(img[z, y, x]) - 20)
                                     for z in range(3) for y in range(2))
            out[o, 0, x] = sat8(round_mode(acc * scale, RTNE) + 128)
    planar_output(c, out, 6, 6)
    return c


def nn_fused_add_case(pooling):
    """The first seed whose data hold a tie, a clamped term and both
    saturations."""
    for seed in range(100):
        c = fused_add_try(pooling, seed)
        if c:
            return c
    raise AssertionError("no seed gives a tie, a clamp and both saturations")


def fused_add_try(pooling, seed):
    cid = "nn-fused-add-first-pixel" if pooling else "nn-fused-add"
    c = Case(cid, "NN conv 3x3 fused with an addition (target 0xe8, layer ConvolutionReluPoolingAddLayer), "
             "3 -> 2 channels, 6x4 (offsets -1)%s: the second image (a TP copy of input 1 into VIP SRAM, "
             "zero point 133, its scale 2.5 with bit 30 of the float in word 24), the convolution's term "
             "clamped to [-60, 50] (words 30, 29), the sum rounded once" % (
                 ", first-pixel pooling -> 3x2 (the second image read where each pixel is written)"
                 if pooling else ""),
             "numpy: t = clamp(acc x scale, lo, hi) + (b - zp) x scale_b computed exactly (Python "
             "fractions), rounded half to even (rounding_mode 1), plus the output zero point, saturated", 0xE8)
    rs = np.random.RandomState(1400 + 100 * pooling + seed)
    img = rs.randint(60, 141, (3, 4, 6))
    w = 120 + rs.randint(-8, 9, (2, 3, 3, 3))
    bias = rs.randint(-200, 200, 2)
    p = conv_params(target=0xE8, in_x=6, in_y=4, kz=3, k=3, out_x=6, out_y=4, out_z=2, x_off=-1, y_off=-1,
                    in_zp=100, w_zp=120, out_zp=100, m=0, e=123, pooling=3 if pooling else 0, in_row=6,
                    in_slice=24)
    px, py = written_dims(p)
    p.update(out_row=px, out_slice=px * py)
    b_img = rs.randint(100, 171, (2, py, px))
    b_img[0, 0, :2] = (0, 255)
    c.add_input(img, [6 * 4 * 3])
    c.add_input(b_img, [px * py * 2])
    c.vip_sram = 1024
    tp_op(c, "TensorCopy", px, py, 2, px, px * py, (0, 0, px - 1, py - 1), (px, py, px, py),
          [(px, 1), (py, px), (2, px * py)], zp=133, at_in=(INPUT, 1, 0), at_out=(VIP_SRAM, -1, 0))
    p["in_at"], p["out_at"] = (INPUT, 0, 0), (OUTPUT, 0, 0)
    op, scale = nn_op(c, p, w, bias, layer="ConvolutionReluPoolingAddLayer", acc32=1)
    sb, hi, lo = f32_bits(2.5), f32_bits(50.0), f32_bits(-60.0)
    op["words"] += [(23, (sb & 0x3FFFFFFF) << 2), (24, sb >> 30), (27, 0), (28, 0x3FFFFFF), (29, hi),
                    (30, lo), (32, px | (px * py) << 16)]
    word_addr(op, 26, VIP_SRAM, -1, 0, 0)
    acc = conv_direct(img, w, bias, 3, -1, -1, 6, 4, 100, 120, False)
    if pooling:
        acc = acc[:, ::2, ::2][:, :py, :px]
    out = np.zeros((2, py, px), dtype=np.int64)
    ties_seen = clamps = 0
    for (o, y, x), a in np.ndenumerate(acc):
        t = int(a) * scale
        clamps += t > 50 or t < -60
        t = min(max(t, Fraction(-60)), Fraction(50)) + (int(b_img[o, y, x]) - 133) * Fraction(5, 2)
        ties_seen += t.denominator == 2
        out[o, y, x] = sat8(round_mode(t, RTNE) + 100)
    if not (ties_seen and clamps and (out == 0).any() and (out == 255).any()):
        return None
    planar_output(c, out, px, px * py)
    return c



# ---------------------------------------------------------------- TP


def tp_op(c, layer, x, y, z, stride, slice_, window, tile, loops, zp=0, extra=(), at_in=(INPUT, 0, 0),
          at_out=(OUTPUT, 0, 0), resets=(0, 0, 0)):
    """A TP command over an x*y*z image (stride, slice), the input window
    (x0, y0, x1, y1, inclusive), tiles (x, y, x step, y step), the output
    counter's loops [(count, increment)] (the rest count 1) and loop 6's
    increment as a seventh entry."""
    op = c.add_op(OP_TP, layer)
    x0, y0, x1, y1 = window
    f = [("in_image_x_size", x), ("in_image_y_size", y), ("in_image_z_size", z), ("in_image_stride", stride),
         ("in_image_slice", slice_), ("in_window_x_start", x0 & 0xFFFF), ("in_window_y_start", y0 & 0xFFFF),
         ("in_window_x_end", x1 & 0xFFFF), ("in_window_y_end", y1 & 0xFFFF), ("in_tile_x_size", tile[0]),
         ("in_tile_y_size", tile[1]), ("in_tile_x_inc", tile[2]), ("in_tile_y_inc", tile[3]),
         ("alu_i2f_enable", 1), ("alu_f2i_enable", 1), ("in_zp", zp), ("out_zp", zp),
         ("flat_rounding_mode", 1), ("integer_rounding_mode", 1), ("out_loop_1_reset", resets[0]),
         ("out_loop_2_reset", resets[1]), ("out_loop_3_reset", resets[2])]
    loops = list(loops)
    inc6 = loops.pop() if len(loops) == 7 else (0,)
    loops += [(1, 0)] * (6 - len(loops))
    for i, (n, inc) in enumerate(loops):
        f += [("out_loop_%d_count" % i, n), ("out_loop_%d_inc" % i, inc)]
    f.append(("out_loop_6_inc", inc6[0]))
    keys = dict(extra)
    op["fields"] += [(k, v) for k, v in f if k not in keys] + list(extra)
    field_addr(op, "in_image_base_address", *at_in)
    field_addr(op, "out_image_base_address", *at_out)
    return op


TP_MEANING = "numpy: the layer's meaning (%s), not a walk of the fields"


def tp_copy_cases():
    cases = []
    rs = np.random.RandomState(20)
    c = Case("tp-copy-border", "TP copy of a 5x4x2 image (rows 6, slices 25 bytes apart) through the window "
             "x -1..5, y -1..4: a border of the constant 77 one pixel wide around it, 7x6x2 dense",
             TP_MEANING % "numpy.pad with the constant")
    img = rs.randint(0, 256, (2, 4, 5))
    planar_input(c, img, 6, 25)
    tp_op(c, "TensorCopy", 5, 4, 2, 6, 25, (-1, -1, 5, 4), (7, 6, 7, 6), [(7, 1), (6, 7), (2, 42)], zp=33,
          extra=[("in_image_border_const", 77)])
    c.add_output(np.pad(img, ((0, 0), (1, 1), (1, 1)), constant_values=77), [84])
    cases.append(c)
    c = Case("tp-transpose-planes-to-pixels", "TP TensorTranspose of a 4x5x3 planar image into pixels of 3 "
             "channels (loop 0 x by 3, loop 1 y by 12, loop 2 z by 1), in tiles of 2 rows (the last one row)",
             TP_MEANING % "numpy.transpose(image, (1, 2, 0))")
    img = rs.randint(0, 256, (3, 5, 4))
    planar_input(c, img, 4, 20)
    tp_op(c, "TensorTranspose", 4, 5, 3, 4, 20, (0, 0, 3, 4), (4, 2, 4, 2), [(4, 3), (5, 12), (3, 1)])
    c.add_output(img.transpose(1, 2, 0), [60])
    cases.append(c)
    c = Case("tp-transpose-pixels-to-planes", "TP TensorTranspose of an input record of 4x3 pixels of 3 "
             "channels (HWC), read as an image 3 wide (the channels) and 12 high (the pixels), into 3 planes "
             "(loop 0 the channel by 12, loop 1 the pixel by 1), in tiles of 5 rows",
             TP_MEANING % "numpy.transpose(record, (2, 0, 1))")
    hwc = rs.randint(0, 256, (3, 4, 3))
    c.add_input(hwc, [3, 4, 3])
    tp_op(c, "TensorTranspose", 3, 12, 1, 3, 36, (0, 0, 2, 11), (3, 5, 3, 5), [(3, 12), (12, 1)])
    c.add_output(hwc.transpose(2, 0, 1), [36])
    cases.append(c)
    c = Case("tp-reshuffle", "TP reshuffle of a 6x4x2 image into its four stride-2 phases (space to depth: "
             "loop 0 x mod 2, loop 1 x / 2 with a count of 100 that out_loop_1_reset ends at each row's end, "
             "loop 2 y mod 2, loop 3 y / 2, loop 4 z)",
             TP_MEANING % "phase (py, px) of channel z is image[z, py::2, px::2]")
    img = rs.randint(0, 256, (2, 4, 6))
    planar_input(c, img, 6, 24)
    tp_op(c, "ConvolutionReluPoolingLayer2", 6, 4, 2, 6, 24, (0, 0, 5, 3), (6, 4, 6, 4),
          [(2, 6), (100, 1), (2, 12), (2, 3), (2, 24)], zp=5, resets=(1, 0, 0))
    c.add_output(np.stack([img[:, py::2, px::2] for py in (0, 1) for px in (0, 1)], axis=1), [48])
    cases.append(c)
    c = Case("tp-tile-resets", "TP copies of an 8x3x2 image in two tiles 4 wide, twice: with "
             "out_loop_2_reset (at a tile's end loops 0-2 restart and loop 3 counts the tile) and with "
             "out_loop_3_reset (loops 0-3 restart, loop 4 counts it); loop 2 (and 3) count 100 by 0",
             TP_MEANING % "the dense image, as it is")
    img = rs.randint(0, 256, (2, 3, 8))
    planar_input(c, img, 8, 24)
    tp_op(c, "TensorCopy", 8, 3, 2, 8, 24, (0, 0, 7, 2), (4, 3, 4, 3),
          [(4, 1), (3, 8), (100, 0), (2, 4), (2, 24)], zp=9, resets=(0, 1, 0))
    tp_op(c, "TensorCopy_1", 8, 3, 2, 8, 24, (0, 0, 7, 2), (4, 3, 4, 3),
          [(4, 1), (3, 8), (100, 0), (100, 0), (2, 4), (2, 24)], zp=9, resets=(0, 0, 1),
          at_out=(OUTPUT, 1, 0))
    c.add_output(img, [48])
    c.add_output(img, [48])
    cases.append(c)
    return cases


def max_pool(img, win, stride, x0, y0, nx, ny):
    """Max over each window, the pixels outside the image taking no part."""
    z, h, w = img.shape
    out = np.zeros((z, ny, nx), dtype=np.int64)
    for y in range(ny):
        for x in range(nx):
            ya, xa = y0 + y * stride, x0 + x * stride
            out[:, y, x] = img[:, max(ya, 0):min(ya + win, h), max(xa, 0):min(xa + win, w)].max(axis=(1, 2))
    return out


def tp_pool_case():
    c = Case("tp-max-pooling", "TP max pooling of a 7x7x2 image (rows 8, slices 57 bytes apart): 3x3 at "
             "stride 2 over the window -1..7 in overlapping tiles 5 wide at steps of 4 (-> 4x4); 2x2 at "
             "stride 2 over the window 0..7, one pixel past the image (-> 4x4); 2x2 at stride 1 (-> 6x6)",
             "numpy: the maximum over each window's pixels inside the image (border mode 1)")
    rs = np.random.RandomState(21)
    img = rs.randint(0, 256, (2, 7, 7))
    planar_input(c, img, 8, 57)

    def pool_fields(mode, count, stride):
        return [("alu_horz_processing", mode), ("alu_vert_processing", mode), ("alu_horz_proc_count", count),
                ("alu_vert_proc_count", count), ("alu_horz_proc_stride", stride),
                ("alu_vert_proc_stride", stride), ("in_image_border_mode", 1)]
    tp_op(c, "PoolingLayer2", 7, 7, 2, 8, 57, (-1, -1, 7, 7), (5, 5, 4, 4),
          [(2, 1), (2, 4), (2, 2), (2, 8), (2, 16)], zp=128, extra=pool_fields(3, 2, 1))
    tp_op(c, "PoolingLayer2_1", 7, 7, 2, 8, 57, (0, 0, 7, 7), (8, 8, 8, 8), [(4, 1), (4, 4), (2, 16)], zp=128,
          extra=pool_fields(3, 1, 0), at_out=(OUTPUT, 1, 0))
    tp_op(c, "PoolingLayer2_2", 7, 7, 2, 8, 57, (0, 0, 6, 6), (7, 7, 7, 7), [(6, 1), (6, 6), (2, 36)], zp=128,
          extra=pool_fields(1, 1, 0), at_out=(OUTPUT, 2, 0))
    c.add_output(max_pool(img, 3, 2, -1, -1, 4, 4), [32])
    c.add_output(max_pool(img, 2, 2, 0, 0, 4, 4), [32])
    c.add_output(max_pool(img, 2, 1, 0, 0, 6, 6), [72])
    return c


def tp_ring_cases():
    rs = np.random.RandomState(22)
    c = Case("tp-circular-buffers", "TP copy of a 6x5 image read through a circular buffer of 192 bytes "
             "ending at the input record's end (starting 16 bytes before it: rows wrap to the buffer's "
             "start) and written through one of 64 bytes ending at the output record's end (passing it once)",
             "numpy: the image gathered through the input's ring and placed through the output's (an "
             "address at or past a buffer's start lands at start + (address - start) mod size)")
    rec = rs.randint(0, 256, 256)
    c.add_input(rec, [256])
    op = tp_op(c, "TensorCopy", 6, 5, 1, 6, 30, (0, 0, 5, 4), (6, 5, 6, 5), [(6, 1), (5, 6)], zp=1,
               at_in=(INPUT, 0, 240), at_out=(OUTPUT, 0, 100),
               extra=[("in_image_circular_buf_size", 3), ("out_image_circular_buf_size", 1)])
    field_addr(op, "in_image_circular_buf_end_address_plus_1", INPUT, 0, 256)
    field_addr(op, "out_image_circular_buf_end_address_plus_1", OUTPUT, 0, 128)
    img = gather(rec, 240, (1, 5, 6), 6, 30, (64, 192))
    out = np.zeros(128, dtype=np.uint8)
    place(out, img, 100, 6, 30, (64, 64))
    c.add_output(out, [128])
    d = Case("tp-circular-buffer-second-lap", "TP copy of a 6x5x5 image (150 bytes) through a circular "
             "buffer of 64 bytes: it would pass the buffer's end three times; a second lap is not "
             "established, so the plan refuses it before anything runs",
             "doc/cpu-backend.md, TP operations: a second lap is refused (circular-buffer-wrap)")
    d.refused = "circular-buffer-wrap"
    d.add_input(rec, [256])
    op = tp_op(d, "TensorCopy", 6, 5, 5, 6, 30, (0, 0, 5, 4), (6, 5, 6, 5), [(6, 1), (5, 6), (5, 30)], zp=1,
               at_in=(INPUT, 0, 200), extra=[("in_image_circular_buf_size", 1)])
    field_addr(op, "in_image_circular_buf_end_address_plus_1", INPUT, 0, 256)
    d.add_output(np.zeros(150, dtype=np.uint8), [150])
    return [c, d]


def tp_f16_case():
    c = Case("tp-copy-into-fp16", "TP copies of a 6x4 uint8 image (zero point 100) into IEEE halves, twice: "
             "scale 33 (multiplier 1024, shift -5: products up to 5115, where halves are 2 and 4 apart, many "
             "exactly half way) and scale (1 + 10000 / 2^15) x 2^-5",
             "numpy: numpy.float16 of the float32 product (v - zp) x scale, to nearest with ties to even, "
             "little-endian")
    rs = np.random.RandomState(23)
    img = rs.randint(0, 256, (1, 4, 6))
    img[0, 0, :3] = (230, 167, 1)   # x 33: 4290, 2211, -3267: ties
    planar_input(c, img, 6, 24)
    vals = []
    for k, (m, sh) in enumerate(((1024, -5), (10000, 5))):
        sh7 = sh & 127
        tp_op(c, "TensorCopy_%d" % k, 6, 4, 1, 6, 24, (0, 0, 5, 3), (6, 4, 6, 4), [(6, 1), (4, 6)],
              at_out=(OUTPUT, k, 0),
              extra=[("in_zp", 100), ("out_zp", 0), ("out_image_data_type", 1), ("alu_f2i_enable", 0),
                     ("alu_output_post_multiplier", m), ("alu_output_postshift", sh7 & 31),
                     ("alu_output_postshift_5_6", sh7 >> 5)])
        scale = np.float32(math.ldexp(1 + m / 32768, -sh))
        prod = (img.astype(np.float32) - np.float32(100)) * scale   # float32 products (IEEE)
        vals.append(prod.ravel())
        c.add_output(f16_le(Fraction(float(v)) for v in prod.ravel()), [24], FP16)
    assert sum(f16_tie(Fraction(float(v))) for v in vals[0]) >= 3
    return c



# ------------------------------------------------------ lookup tables


def half_value(bits):
    """The value of IEEE half bits as a Fraction (inf/NaN: None)."""
    e, m = bits >> 10 & 31, bits & 1023
    if e == 31:
        return None
    v = Fraction(m, 1 << 24) if e == 0 else Fraction(1024 + m, 1024) * Fraction(2) ** (e - 15)
    return -v if bits >> 15 else v


def entry_input(i, sign_support):
    """The input d the table entry i stands for: its half-precision bits
    (5 exponent bits and 5 mantissa bits; with sign support the sign, 5
    and 4)."""
    if sign_support:
        v = half_value((i & 511) << 6)
        return None if v is None else (-v if i & 512 else v)
    return half_value(i << 5)


def lut32_word(v):
    """A value in the 32-bit entries' float: sign bit 20, 5 exponent bits
    (bias 15), 15 mantissa bits; 0 below 2^-14."""
    if v == 0 or abs(v) < Fraction(1, 1 << 14):
        return 0
    sign, a = (1 << 20) if v < 0 else 0, abs(Fraction(v))
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    m = (a / Fraction(2) ** e - 1) * 32768
    assert m.denominator == 1 and 0 < e + 15 < 31, v
    return sign | (e + 15) << 15 | int(m)


def lut16_word(v):
    if v == 0 or abs(v) < Fraction(1, 1 << 14):
        return 0
    bits = f16_bits(float(v))
    assert half_value(bits) == v, v
    return bits


def lut_table(f, sign_support, wide):
    """The entry bytes of a table of f (entry values f(input)); entries
    standing for an infinite input hold 0."""
    vals, words = [], []
    for i in range(1024):
        x = entry_input(i, sign_support)
        v = Fraction(0) if x is None else f(x)
        words.append(lut32_word(v) if wide else lut16_word(v))
        vals.append(Fraction(0) if words[-1] == 0 else v)
    fmt, pad = ("<I", 8) if wide else ("<H", 4)
    data = b"".join(struct.pack(fmt, w) for w in words) + bytes(pad)
    return np.frombuffer(data, dtype=np.uint8), vals


def lut_rule(vals, sign_support, d):
    """doc/cpu-backend.md, "Lookup-table activations": d as a half selects
    an entry by its top bits, the rest interpolates towards the next entry;
    without sign support the table holds f(|d|) and the sign is put back."""
    h = f16_bits(float(abs(d)))
    low = 6 if sign_support else 5
    i, frac = h >> low, h & ((1 << low) - 1)
    if sign_support and d < 0:
        i |= 512
    v = vals[i] + (vals[i + 1] - vals[i]) * Fraction(frac, 1 << low) if frac else vals[i]
    return -v if not sign_support and d < 0 else v


def lut_op(c, layer, table, sign_support, m, sh, in_zp, out_zp, out_index, extra=()):
    entry = c.add_raw(table)
    op = tp_op(c, layer, 16, 16, 1, 16, 256, (0, 0, 15, 15), (16, 16, 16, 16), [(16, 1), (16, 16)],
               at_out=(OUTPUT, out_index, 0),
               extra=[("alu_pwl_enable", 1), ("alu_load_pwl_lut", 1), ("alu_pwl_sign_support", sign_support),
                      ("in_zp", in_zp), ("out_zp", out_zp), ("alu_output_post_multiplier", m),
                      ("alu_output_postshift", sh & 31), ("alu_output_postshift_5_6", (sh & 127) >> 5)] +
               list(extra))
    field_addr(op, "alu_load_pwl_lut_address", MISC_DYNA_GENERIC, entry, 0)
    return Fraction(32768 + m, 32768) * Fraction(2) ** -sh


def lut_case():
    c = Case("tp-lookup-tables", "TP lookup-table activations over all 256 input codes (a 16x16 image), "
             "three tables: leaky ReLU with alpha 1/4 in 32-bit entries with sign support, scale 2, zero "
             "points 120 -> 20 (saturation at both ends, ties of the negative side); x / 4 in half-precision "
             "entries without sign support (the table holds f(|d|), the sign put back), zero points "
             "100 -> 128, ties; random entries in [-1, 1] with sign support, scale 100 (the interpolation "
             "between entries decides)",
             "numpy: the functions' values (leaky ReLU, x / 4: linear between entries, so the interpolation "
             "is exact), for the random table the rule of doc/cpu-backend.md in Python fractions; times "
             "the scale, rounded half to even (flat_rounding_mode 1), plus the zero point, saturated")
    codes = np.arange(256).reshape(1, 16, 16)
    planar_input(c, codes, 16, 256)
    leaky = lambda x: x if x >= 0 else x / 4
    quarter = lambda x: x / 4
    rs = np.random.RandomState(24)
    rand = [Fraction(int(v), 1 << 10) for v in rs.randint(-1024, 1025, 1024)]
    random_f = lambda x: None
    tables = [("ActivationLayer", lut_table(leaky, 1, True), 1, 0, -1, 120, 20, leaky),
              ("ActivationLayer_1", lut_table(quarter, 0, False), 0, 0, 0, 100, 128, quarter)]
    words = [lut32_word(v) for v in rand]
    rand = [Fraction(0) if w == 0 else v for w, v in zip(words, rand)]
    table = np.frombuffer(b"".join(struct.pack("<I", w) for w in words) + bytes(8), dtype=np.uint8)
    tables.append(("ActivationLayer_2", (table, rand), 1, 18432, -6, 128, 128, random_f))
    ties_seen = away = 0
    for k, (layer, (data, vals), sign, m, sh, in_zp, out_zp, f) in enumerate(tables):
        scale = lut_op(c, layer, data, sign, m, sh, in_zp, out_zp, k)
        out = []
        for q in range(256):
            d = q - in_zp
            v = lut_rule(vals, sign, d)
            if f is not random_f:
                assert v == f(Fraction(d)), (layer, d)   # the rule gives the function itself
            y = v * scale
            ties_seen += y.denominator == 2
            out.append(sat8(round_mode(y, RTNE) + out_zp))
            away += sat8(round_half_away(y) + out_zp) != out[-1]
        if k == 0:
            assert 0 in out and 255 in out
        c.add_output(out, [256])
    assert ties_seen > 50 and away > 20   # rounding half away from zero fails the case
    return c


def lut_swapped_case():
    c = Case("tp-lookup-table-0xe8", "TP lookup-table activation over all 256 input codes (a 16x16 image) "
             "with a target-0xe8 table: 32-bit entries stored with the index's bit 9 inverted, then the "
             "words 0x05000000, 0x003f8000; random entries in [0, 1], sign support 0 (the sign put back), "
             "zero points 100 -> 128, scale 100 (the interpolation between entries decides)",
             "numpy: the rule of doc/cpu-backend.md in Python fractions over the entries in index order "
             "(entry i read at i ^ 512), times the scale, rounded half to even (flat_rounding_mode 1), plus the zero point, "
             "saturated")
    codes = np.arange(256).reshape(1, 16, 16)
    planar_input(c, codes, 16, 256)
    rs = np.random.RandomState(41)
    vals = [Fraction(int(v), 1 << 10) for v in rs.randint(0, 1025, 1024)]
    words = [lut32_word(v) for v in vals]
    vals = [Fraction(0) if w == 0 else v for w, v in zip(words, vals)]
    stored = [words[i ^ 512] for i in range(1024)]
    table = np.frombuffer(b"".join(struct.pack("<I", w) for w in stored) +
                          struct.pack("<II", 0x05000000, 0x003F8000), dtype=np.uint8)
    scale = lut_op(c, "ActivationLayer", table, 0, 18432, -6, 100, 128, 0)
    out = [sat8(round_mode(lut_rule(vals, 0, q - 100) * scale, RTNE) + 128) for q in range(256)]
    straight = [sat8(round_mode(lut_rule([vals[i ^ 512] for i in range(1024)], 0, q - 100) * scale, RTNE) + 128)
                for q in range(256)]
    assert sum(a != b for a, b in zip(out, straight)) > 100   # the order matters
    c.add_output(out, [256])
    return c


def lut_f16_cases():
    """Lookup tables into fp16 (doc/cpu-backend.md, "Lookup tables into
    fp16"): the value itself, no scale, written as the nearest half."""
    c = Case("tp-lookup-table-into-fp16", "TP lookup tables over all 256 input codes (a 16x16 image) into IEEE "
             "halves, out_zp 0, no multiplier or shift, sign support 0 (the sign put back), random entries in "
             "[0, 1] in steps of 2^-10: half-precision entries, alu_f2i_enable 0, in_zp 86 (the 0x7d face-age "
             "file's); a target-0xe8 table (32-bit entries at i ^ 512, its end words), alu_f2i_enable 1, "
             "in_zp 255 (every input negative); the interpolation between entries and the rounding to a half "
             "(ties to even) decide",
             "numpy: the rule of doc/cpu-backend.md in Python fractions (entry, interpolation, the sign put "
             "back), rounded once to the nearest half, ties to even, little-endian")
    codes = np.arange(256).reshape(1, 16, 16)
    planar_input(c, codes, 16, 256)
    rs = np.random.RandomState(43)
    f16 = [("out_image_data_type", 1)]
    ties = [0, 0]
    for k, (wide, f2i, in_zp) in enumerate(((False, 0, 86), (True, 1, 255))):
        vals = [Fraction(int(v), 1 << 10) for v in rs.randint(0, 1025, 1024)]
        words = [lut32_word(v) if wide else lut16_word(v) for v in vals]
        vals = [Fraction(0) if w == 0 else v for w, v in zip(words, vals)]
        if wide:
            table = b"".join(struct.pack("<I", words[i ^ 512]) for i in range(1024)) + \
                struct.pack("<II", 0x05000000, 0x003F8000)
        else:
            table = b"".join(struct.pack("<H", w) for w in words) + bytes(4)
        lut_op(c, "ActivationLayer_%d" % k, np.frombuffer(table, dtype=np.uint8), 0, 0, 0, in_zp, 0, k,
               extra=f16 + [("alu_f2i_enable", f2i)])
        ys = [lut_rule(vals, 0, q - in_zp) for q in range(256)]
        ties[k] = sum(f16_tie(y) for y in ys)
        assert any(y < 0 for y in ys) and len({f16_bits(y) for y in ys}) > 150
        c.add_output(f16_le(ys), [256], FP16)
    assert min(ties) >= 3, ties
    d = Case("tp-lookup-table-into-fp16-scaled", "TP lookup table into fp16 with alu_output_post_multiplier "
             "set: every such corpus operation writes the value unscaled, so a scale is refused before "
             "anything runs", "doc/cpu-backend.md, \"Lookup tables into fp16\": refused (tp-lut-unsupported)")
    d.refused = "tp-lut-unsupported"
    planar_input(d, codes, 16, 256)
    data, _ = lut_table(lambda x: x / 4, 0, False)
    lut_op(d, "ActivationLayer", data, 0, 1024, 0, 100, 0, 0, extra=f16)
    d.add_output(np.zeros(512, dtype=np.uint8), [256], FP16)
    return [c, d]


def tp_int8_case():
    """int8 TP operations (doc/cpu-backend.md, "int8 data"): a max pooling
    compares values, not bytes; a table maps each signed code."""
    c = Case("tp-int8-pool-and-table", "TP on int8 data (in_image_data_type and out_image_data_type 2, zero "
             "points 0): 2x2 max pooling at stride 2 of a 6x4x2 image whose windows mix -128..-1 with 0..127 "
             "(-> 3x2x2); a lookup table (leaky ReLU, alpha 1/4, 32-bit entries with sign support) "
             "over all 256 codes, shift -2 (scale 4): negative codes take the negative branch, saturation at "
             "-128 and 127; the same table with alu_input_preshift 3 (the code times 2^-3 selects the entry) "
             "and shift -3, ties of the negative side; int8 copies with a scale: shift -1 (x 2, saturating) "
             "and multiplier 1.5 with shift 1 (x 0.75, ties of both signs)",
             "numpy: the maximum of each window's int8 values; the table's rule of doc/cpu-backend.md on the "
             "signed code (the copies: the code times the scale), in Python fractions, rounded half to "
             "even (flat_rounding_mode 1), saturated to -128..127")
    rs = np.random.RandomState(26)
    img = rs.randint(-128, 16, (2, 4, 6))
    planar_input(c, s8_bytes(img), 6, 24)
    codes = np.arange(-128, 128).reshape(1, 16, 16)
    c.add_input(s8_bytes(codes), [256])
    i8 = [("in_image_data_type", 2), ("out_image_data_type", 2)]
    pool = [("alu_horz_processing", 3), ("alu_vert_processing", 3), ("alu_horz_proc_count", 1),
            ("alu_vert_proc_count", 1), ("alu_horz_proc_stride", 0), ("alu_vert_proc_stride", 0),
            ("in_image_border_mode", 1)]
    tp_op(c, "PoolingLayer2", 6, 4, 2, 6, 24, (0, 0, 5, 3), (6, 4, 6, 4), [(3, 1), (2, 3), (2, 6)],
          extra=pool + i8)
    pooled = max_pool(img, 2, 2, 0, 0, 3, 2)
    assert (pooled < 0).any() and any(((img[:, 2*y:2*y+2, 2*x:2*x+2] < 0).any() and
                                       (img[:, 2*y:2*y+2, 2*x:2*x+2] >= 0).any())
                                      for y in range(2) for x in range(3))
    c.add_output(s8_bytes(pooled), [12])
    leaky = lambda x: x if x >= 0 else x / 4
    data, vals = lut_table(leaky, 1, True)
    entry = c.add_raw(data)
    op = tp_op(c, "ActivationLayer", 16, 16, 1, 16, 256, (0, 0, 15, 15), (16, 16, 16, 16), [(16, 1), (16, 16)],
               at_in=(INPUT, 1, 0), at_out=(OUTPUT, 1, 0),
               extra=[("alu_pwl_enable", 1), ("alu_load_pwl_lut", 1), ("alu_pwl_sign_support", 1),
                      ("alu_output_postshift", 30), ("alu_output_postshift_5_6", 3)] + i8)
    field_addr(op, "alu_load_pwl_lut_address", MISC_DYNA_GENERIC, entry, 0)
    out = []
    for q in range(-128, 128):
        v = lut_rule(vals, 1, q)
        assert v == leaky(Fraction(q))
        out.append(sat_s8(round_mode(v * 4, RTNE)))
    assert -128 in out and 127 in out and -10 in out and 17 not in out
    c.add_output(s8_bytes(out), [256])
    # alu_input_preshift 3: the table reads q x 2^-3; shift -3 (scale 8)
    op = tp_op(c, "ActivationLayer_1", 16, 16, 1, 16, 256, (0, 0, 15, 15), (16, 16, 16, 16), [(16, 1), (16, 16)],
               at_in=(INPUT, 1, 0), at_out=(OUTPUT, 2, 0),
               extra=[("alu_pwl_enable", 1), ("alu_load_pwl_lut", 1), ("alu_pwl_sign_support", 1),
                      ("alu_input_preshift", 3), ("alu_output_postshift", 29), ("alu_output_postshift_5_6", 3)] + i8)
    field_addr(op, "alu_load_pwl_lut_address", MISC_DYNA_GENERIC, entry, 0)
    out, ties = [], 0
    for q in range(-128, 128):
        x = Fraction(q, 8)
        v = lut_rule(vals, 1, x)
        assert v == leaky(x)
        ties += (v * 8).denominator == 2
        out.append(sat_s8(round_mode(v * 8, RTNE)))
    assert ties > 20 and out[128 + 100] == 100 and out[128 - 6] == -2 and out[0] == -32
    c.add_output(s8_bytes(out), [256])
    # copies with a scale: shift -1 (x 2, saturating), and multiplier 1.5 with shift 1 (x 0.75, ties)
    for k, (m, sh) in enumerate(((0, -1), (16384, 1))):
        tp_op(c, "ConcatLayer" + ("_1" if k else ""), 16, 16, 1, 16, 256, (0, 0, 15, 15), (16, 16, 16, 16),
              [(16, 1), (16, 16)], at_in=(INPUT, 1, 0), at_out=(OUTPUT, 3 + k, 0),
              extra=[("alu_output_post_multiplier", m), ("alu_output_postshift", sh & 31),
                     ("alu_output_postshift_5_6", (sh & 127) >> 5)] + i8)
        scale = Fraction(32768 + m, 32768) * Fraction(2) ** -sh
        out = [sat_s8(round_mode(q * scale, RTNE)) for q in range(-128, 128)]
        assert (-128 in out and 127 in out) if k == 0 else sum((q * scale).denominator == 2 for q in range(-128, 128)) > 50
        c.add_output(s8_bytes(out), [256])
    return c


def tp_u8_scaled_case():
    """uint8 layout copies with a scale (doc/cpu-backend.md, "Scaled uint8
    concatenations"): the face detectors' concatenation copies."""
    c = Case("tp-uint8-scaled-copy", "TP uint8 layout copies (ConcatLayer) with a scale and zero points, over all "
             "256 codes: in_zp 120, out_zp 0, multiplier 29339, shift 0 (x 1.895, the face detectors' first "
             "concatenation: negative values saturate at 0); in_zp 147, out_zp 0, multiplier 5794, shift -1 "
             "(x 2.354); in_zp 100, out_zp 40, multiplier 16384, shift 1 (x 0.75, ties of both signs)",
             "numpy: out_zp + (q - in_zp) x (1 + m / 2^15) x 2^-s in Python fractions, rounded half to even "
             "(flat_rounding_mode 1), saturated to 0..255")
    codes = np.arange(256).reshape(1, 16, 16)
    c.add_input(codes, [256])
    for k, (m, sh, iz, oz) in enumerate(((29339, 0, 120, 0), (5794, -1, 147, 0), (16384, 1, 100, 40))):
        op = tp_op(c, "ConcatLayer" + ("_%d" % k if k else ""), 16, 16, 1, 16, 256, (0, 0, 15, 15),
                   (16, 16, 16, 16), [(16, 1), (16, 16)], at_in=(INPUT, 0, 0), at_out=(OUTPUT, k, 0),
                   extra=[("alu_output_post_multiplier", m), ("alu_output_postshift", sh & 31),
                          ("alu_output_postshift_5_6", (sh & 127) >> 5), ("in_zp", iz), ("out_zp", oz)])
        scale = Fraction(32768 + m, 32768) * Fraction(2) ** -sh
        out = [sat8(oz + round_mode((q - iz) * scale, RTNE)) for q in range(256)]
        if k == 2:
            assert sum(((q - iz) * scale).denominator == 2 for q in range(256)) > 50
        else:
            assert out[0] == 0 and out[iz] == 0 and (k or out[255] == 255)
        c.add_output(out, [256])
    return c


def tp_rounding_refused_cases():
    """A lookup table and a scaled copy with flat_rounding_mode 2 and 3
    (the vendor's round toward zero and RTNI): refused before anything
    runs, as the fully connected layers are (doc/cpu-backend.md, "Rounding
    modes")."""
    cases = []
    for kind, mode, rid in (("lookup-table", 2, "tp-lut-unsupported"), ("scaled-copy", 3, "tp-field-unsupported")):
        c = Case("tp-%s-rounding-mode%d" % (kind, mode),
                 "a TP uint8 %s (zero points 100 -> 40) with flat_rounding_mode %d (the vendor's %s): refused "
                 "before anything runs" % ("lookup table of x / 4" if mode == 2 else "scaled copy (x 0.75)", mode,
                                           "round toward zero" if mode == 2 else "RTNI"),
                 "doc/cpu-backend.md, Rounding modes: flat_rounding_mode 2 and 3 are refused (%s)" % rid)
        planar_input(c, np.arange(256).reshape(1, 16, 16), 16, 256)
        if mode == 2:
            lut_op(c, "ActivationLayer", lut_table(lambda x: x / 4, 0, False)[0], 0, 0, 0, 100, 40, 0)
        else:
            tp_op(c, "ConcatLayer", 16, 16, 1, 16, 256, (0, 0, 15, 15), (16, 16, 16, 16), [(16, 1), (16, 16)],
                  extra=[("alu_output_post_multiplier", 16384), ("alu_output_postshift", 1), ("in_zp", 100),
                         ("out_zp", 40)])
        c.ops[-1]["fields"].append(("flat_rounding_mode", mode))
        c.refused = rid
        c.add_output(np.zeros(256, np.uint8), [256])
        cases.append(c)
    return cases


def tpfc_acc(w, x, w_zp, in_zp):
    """A TP fully connected layer's sums before the bias: sum over i of
    (w[o][i] - w_zp) x (x[i] - in_zp), Python integers."""
    return [int((w[o].astype(np.int64) - w_zp) @ (np.asarray(x).astype(np.int64) - in_zp)) for o in range(len(w))]


def tpfc_layer(c, w, bias, w_zp, in_zp, out_zp, shift, step, map_seed, dtype=0, horz=None):
    """A TP fully connected layer over w's inputs (`step` bytes apart,
    from input 0) into output 0, its stream biases stored as added; the
    expected bytes: requant(bias + sum), the scale 2^-shift.  dtype: the
    TP data type code of input and output (0 uint8, 2 int8, w's codes then
    two's complement); alu_horz_processing the weights' type (dtype unless
    horz), the output count minus one in alu_horz_proc_count |
    alu_vert_proc_count << 6 (the vendor's fully connected commands)."""
    nout, nin = w.shape
    s = c.add_stream({"out": nout, "kz": nin, "ky": 1, "kx": 1, "zp": w_zp, "in_zp": in_zp,
                      "w": np.asarray(w).ravel() & 0xFF, "bias": bias, "cores": 1, "superblocks": 1,
                      "depthwise": 0, "plane": 1, "seed": 0},
                     {"format": CE_TPFC, "zrl": 1, "avg_bias": 171, "map_seed": map_seed})
    op = tp_op(c, "FullyConnectedReluLayer", 1, 1, nin, 1, step, (0, 0, 0, 0), (1, 1, 1, 1),
               [(1, 0), (1, 0), (1, 0), (1, 0), (nout, 1), (1, 0)], zp=in_zp,
               extra=[("in_tile_sequence", 3), ("coef_zp", w_zp), ("out_zp", out_zp),
                      ("alu_output_postshift", shift), ("in_image_data_type", dtype),
                      ("out_image_data_type", dtype), ("alu_horz_processing", dtype if horz is None else horz),
                      ("alu_horz_proc_count", (nout - 1) & 63), ("alu_vert_proc_count", (nout - 1) >> 6)])
    field_addr(op, "alu_load_pwl_lut_address", MISC_DYNA_GENERIC, s, 0)


def tpfc_out(acc, bias, out_zp, shift, mode=RTNE):
    return [sat8(round_mode((int(b) + a) * Fraction(1, 2 ** shift), mode) + out_zp) for a, b in zip(acc, bias)]


def tpfc_case():
    c = Case("tp-fully-connected", "TP fully connected layer, 12 inputs 2 bytes apart -> 16 outputs, kernel "
             "zero point 128, scale 2^-4 (15-bit mantissa, exponent 127 - shift): two sums are ties "
             "(+ and -), two saturate",
             "numpy: requant(bias[o] + sum over i of (w[o][i] - zp) x in[i]), exactly (Python fractions), "
             "half to even (flat_rounding_mode 1)")
    rs = np.random.RandomState(25)
    inp = rs.randint(0, 256, 24)
    w = rs.randint(0, 256, (16, 12))
    acc = tpfc_acc(w, inp[::2], 128, 0)
    bias = rs.randint(-2000, 2000, 16)
    bias[0] = -acc[0] + 16 * 5 + 8     # acc 88: 5.5
    bias[1] = -acc[1] - 16 * 3 - 8     # -56: -3.5
    bias[2], bias[3] = 100000, -100000
    c.add_input(inp, [24])
    tpfc_layer(c, w, bias, 128, 0, 100, 4, 2, 6)
    out = tpfc_out(acc, bias, 100, 4)
    assert out[0] == 106 and out[1] == 96 and out[2] == 255 and out[3] == 0
    c.add_output(out, [16])
    return c


def tpfc_s8_case(horz=2):
    """An int8 TP fully connected layer (mobilefacenet's on 0xad: every zero
    point 0, alu_horz_processing 2); with horz 0 refused."""
    executed = horz == 2
    c = Case("tp-fully-connected-int8" if executed else "tp-fully-connected-int8-horz0",
             "TP fully connected layer on int8 data (data type code 2, alu_horz_processing %d): 20 inputs -> 70 "
             "outputs (the output count field 69 = 5 | 1 << 6), signed codes and inputs, zero points 0, scale "
             "2^-5; %s" % (horz, "two sums ties (+ and -), two saturate (127, -128)" if executed else
                           "alu_horz_processing 0 is the uint8 weights' code: refused"),
             "numpy: sat_s8(round_half_even((bias[o] + sum over i of w[o][i] x in[i]) / 2^5)) on the signed "
             "values, exactly (Python fractions)" if executed else
             "doc/cpu-backend.md, TP fully connected layers: alu_horz_processing is the weights' data type "
             "(tpfc-field-unsupported)")
    rs = np.random.RandomState(28)
    x = rs.randint(-128, 128, 20)
    w = rs.randint(-128, 128, (70, 20))
    acc = tpfc_acc(w, x, 0, 0)
    bias = rs.randint(-5000, 5000, 70)
    bias[0] = -acc[0] + 32 * 9 + 16      # 9.5 -> 10
    bias[1] = -acc[1] - 32 * 4 - 16      # -4.5 -> -4 (half away from zero: -5)
    bias[2], bias[3] = 300000, -300000
    c.add_input(s8_bytes(x), [20])
    tpfc_layer(c, w, bias, 0, 0, 0, 5, 1, 9, dtype=2, horz=horz)
    out = [sat_s8(round_mode((int(b) + a) * Fraction(1, 32), RTNE)) for a, b in zip(acc, bias)]
    assert out[:4] == [10, -4, 127, -128] and sum(v < 0 for v in out) > 10 and sum(v > 0 for v in out) > 10
    if not executed:
        c.refused = "tpfc-field-unsupported"
    c.add_output(s8_bytes(out) if executed else np.zeros(70, np.uint8), [70])
    return c


def tpfc_in_zp_case():
    c = Case("tp-fully-connected-in-zp", "TP fully connected layer with in_zp 128 (as the gender network's on "
             "0x7d, 0x88, 0x99): 9 inputs -> 6 outputs, kernel zero point 90, biases stored as added; one sum "
             "a tie, one saturates each way",
             "numpy: requant(bias[o] + sum over i of (w[o][i] - 90) x (in[i] - 128)), exactly (Python "
             "fractions), half to even (flat_rounding_mode 1)")
    rs = np.random.RandomState(26)
    x = rs.randint(0, 256, 9)
    w = rs.randint(0, 256, (6, 9))
    acc = tpfc_acc(w, x, 90, 128)
    bias = rs.randint(-3000, 3000, 6)
    bias[0] = -acc[0] - 8 * 7 - 4     # -60: -7.5
    bias[1], bias[2] = 200000, -200000
    c.add_input(x, [9])
    tpfc_layer(c, w, bias, 90, 128, 60, 3, 1, 7)
    out = tpfc_out(acc, bias, 60, 3)
    assert out[0] == 52 and out[1] == 255 and out[2] == 0
    # read without in_zp the sums would differ by 128 x sum(w - 90)
    assert tpfc_out(tpfc_acc(w, x, 90, 0), bias, 60, 3)[3:] != out[3:]
    c.add_output(out, [6])
    return c


def tpfc_relu_case():
    c = Case("tp-fully-connected-relu", "TP fully connected layer with alu_relu_enable 1 and out_zp 0 (as the "
             "face-age files' FullyConnectedReluLayer): 10 inputs -> 12 outputs, kernel zero point 120, "
             "scale 2^-3; half the sums negative, one -0.5 and one 0.5",
             "numpy: max(0, requant(bias[o] + sum over i of (w[o][i] - 120) x in[i])), exactly (Python "
             "fractions), half to even (flat_rounding_mode 1)")
    rs = np.random.RandomState(27)
    x = rs.randint(0, 256, 10)
    w = rs.randint(0, 256, (12, 10))
    acc = tpfc_acc(w, x, 120, 0)
    bias = rs.randint(-4000, 4000, 12)
    bias[0] = -acc[0] - 4      # -0.5
    bias[1] = -acc[1] + 4      # 0.5 -> 0 (half away from zero: 1)
    bias[2] = -acc[2] - 800    # -100
    bias[3] = -acc[3] + 800    # 100
    c.add_input(x, [10])
    tpfc_layer(c, w, bias, 120, 0, 0, 3, 1, 8)
    c.ops[-1]["fields"].append(("alu_relu_enable", 1))
    out = [max(0, v) for v in tpfc_out(acc, bias, 0, 3)]
    assert out[:4] == [0, 0, 0, 100] and sum(v == 0 for v in out) >= 4 and sum(v > 0 for v in out) >= 3
    c.add_output(out, [12])
    d = Case("tp-fully-connected-relu-zp", "the same layer with out_zp 5: whether ReLU clips at 0 or at the "
             "zero point is not established, so the plan refuses it before anything runs",
             "doc/cpu-backend.md, TP fully connected layers: ReLU only with out_zp 0 (tpfc-field-unsupported)")
    d.refused = "tpfc-field-unsupported"
    d.add_input(x, [10])
    tpfc_layer(d, w, bias, 120, 0, 5, 3, 1, 8)
    d.ops[-1]["fields"].append(("alu_relu_enable", 1))
    d.add_output(np.zeros(12, dtype=np.uint8), [12])
    return [c, d]


def tpfc_round_case(mode=0):
    """flat_rounding_mode 0, the vendor's simple rounding (the 0x10003 image
    classification file's layers, kernel zero point 74, out_zp 81); 2
    (round toward zero) is refused."""
    executed = mode == 0
    c = Case("tp-fully-connected-round%d" % mode,
             "TP fully connected layer with flat_rounding_mode %d%s: 14 inputs -> 10 outputs, kernel zero point 74, "
             "out_zp 81 (the 0x10003 image classification layer's), scale 3/32 (multiplier 16384, shift 4); %s"
             % (mode, " (simple rounding)" if executed else " (round toward zero)",
                "sums 4.5 and -1.5 (ties of both signs), 4.21875, -4.78125, two saturate" if executed else
                "refused before anything runs"),
             "numpy: out_zp + round_half_away((bias[o] + sum over i of (w[o][i] - 74) x in[i]) x 3/32), exactly "
             "(Python fractions), saturated to 0..255: simple rounding as the vendor's software rounds it, the "
             "zero point added after the rounding" if executed else
             "doc/cpu-backend.md, TP fully connected layers: flat_rounding_mode 2 and 3 are refused "
             "(tpfc-field-unsupported)")
    rs = np.random.RandomState(29)
    x = rs.randint(0, 256, 14)
    w = rs.randint(0, 256, (10, 14))
    acc = tpfc_acc(w, x, 74, 0)
    bias = rs.randint(-1000, 1000, 10) - np.asarray(acc)     # sums of both signs, most in range
    scale = Fraction(3, 32)
    for o, v in enumerate((48, -16, 45, -51)):  # x 3/32: 4.5, -1.5, 4.21875, -4.78125
        bias[o] = v - acc[o]
    bias[4], bias[5] = 10 ** 7, -10 ** 7
    c.add_input(x, [14])
    tpfc_layer(c, w, bias, 74, 0, 81, 4, 1, 10)
    c.ops[-1]["fields"] += [("alu_output_post_multiplier", 16384), ("flat_rounding_mode", mode)]
    out = [sat8(81 + round_half_away((int(b) + a) * scale)) for a, b in zip(acc, bias)]
    assert out[:6] == [86, 79, 85, 76, 255, 0] and 0 < min(out[6:]) and max(out[6:]) < 255
    # flat_rounding_mode 1 (half to even) would give 85 for 4.5 and 79 for -1.5
    assert [sat8(81 + round_half_even((int(b) + a) * scale)) for a, b in zip(acc, bias)][:2] == [85, 79]
    # the zero point added before the rounding would give 80 for -1.5
    assert round_half_away(81 + (bias[1] + acc[1]) * scale) == 80
    if not executed:
        c.refused = "tpfc-field-unsupported"
    c.add_output(out if executed else np.zeros(10, np.uint8), [10])
    return c


# ------------------------------------------------------------- shaders

FMT_U8, FMT_F16, FMT_POOL, FMT_A, FMT_B, FMT_ADD_F16 = 0x444041F0, 0x44404071, 0x444051C0, 0x444051F0, \
    0x444041F0, 0x44405071


def sh_op(c, layer, uniforms, images):
    """An SH operation whose state buffer loads `uniforms` (index: value)
    from 0x36000 on, every word up to the highest once; images: (uniform
    index, (source, index, offset)) relocated by STATE patches."""
    op = c.add_op(OP_SH, layer)
    n = max(uniforms) + 1
    op["uniforms"] = [uniforms.get(i, 0) for i in range(n)]
    for i, at in images:
        uniform_addr(op, i, *at)
    return op


def image_words(row, w, h, fmt, slice_, depth):
    """The eight words of a shader image after its address."""
    return [row, h << 16 | w, fmt, slice_, depth, 0x10DA10B0, 0]


def put(u, at, words):
    for i, v in enumerate(words):
        u[at + i] = v


def softmax_case():
    c = Case("sh-softmax", "SH softmax (Softmax2Layer) over 10 uint8 values -> 10 halves into an FP16 output "
             "record, the uniform 0x36048 = 0.35 x log2(e) as a float32; two values equal the maximum",
             "numpy: 2^((x - max) x u) / sum in double precision, numpy.float16 (to nearest, ties to even)")
    rs = np.random.RandomState(30)
    x = rs.randint(90, 120, 10)
    x[3] = x[7] = 125
    c.add_input(x, [10])
    row_softmax(c, x, FMT_U8, 0.35)
    return c


def row_softmax(c, x, fmt, weight):
    """The row softmax of x (input 0, format word fmt) into output 0 (FP16),
    its scale uniform weight x log2(e) as a float32."""
    n = len(x)
    u = {}
    put(u, 1, image_words(n, n, 1, fmt, n, 1))
    put(u, 9, image_words(2 * n, n, 1, FMT_F16, 2 * n, 1))
    uf = np.float32(weight * math.log2(math.e))
    u.update({16: n, 17: n & ~3, 18: f32_bits(uf)})
    sh_op(c, "Softmax2Layer", u, [(0, (INPUT, 0, 0)), (8, (OUTPUT, 0, 0))])
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        ln2 = Fraction(Decimal(2).ln())
    # results below fp16's normal range written as zero, as the V853 board
    # writes its SH softmax's (../shared/goldens/v853-lenet)
    c.add_output(flush_subnormal(f16_le(softmax_exact(x, Fraction(float(uf)) * ln2), True)), [n], FP16)


# The words 0x36040..0x3613c of the 0x10003 files' SoftMax2 shader (the
# 0xa1 face detector's three hold these; None: its scale, 0x36114)
COLUMN_WORDS = [
    0x333333, 0x0, 0x9060300, 0xd0c, 0x0, 0x0, 0x0, 0x4400, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
    0x2, 0x0, 0x2, 0xf, 0x1010101, 0x0, 0x20000, 0x60004, 0x2020202, 0x0, 0x0, 0x400, 0x1, 0x0, 0x1,
    0x0, 0x1, 0x0, 0x1, 0x0, 0x33333333, 0x11110000, 0x3020100, 0x3020100, 0x0, 0x0, 0x0, 0x2400,
    0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0xf, None, 0x3, 0x3f800000, 0xb0b0b0b, 0x4040404,
    0x10000, 0x30002, 0x8080808, 0x0, 0x0, 0x7400
]


def softmax_column_case():
    c = Case("sh-softmax-column-pairs", "SH pair softmax of the 0x10003 files (layer SoftMax2, images 0x444051f0 "
             "and 0x44405071 two values wide, one pair a row: rows 2 and 4 bytes apart) over 7 pairs, the "
             "uniform 0x36114 = 0.6 x log2(e); one pair equal, one 255 against 0",
             "numpy: 2^((x - max) x u) / sum over each pair, in 60-digit decimals, numpy.float16 (to nearest, "
             "ties to even), below the normal range 0")
    rs = np.random.RandomState(36)
    x = rs.randint(60, 200, 14)
    x[4] = x[5] = 131
    x[8], x[9] = 255, 0
    c.add_input(x, [14])
    u = {}
    put(u, 1, image_words(2, 2, 7, FMT_A, 14, 1))
    put(u, 9, image_words(4, 2, 7, FMT_ADD_F16, 28, 1))
    uf = np.float32(0.6 * math.log2(math.e))
    for i, v in enumerate(COLUMN_WORDS):
        u[16 + i] = f32_bits(uf) if v is None else v
    sh_op(c, "SoftMax2", u, [(0, (INPUT, 0, 0)), (8, (OUTPUT, 0, 0))])
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        ln2 = Fraction(Decimal(2).ln())
    want = []
    for k in range(7):
        want += softmax_exact(x[2 * k:2 * k + 2], Fraction(float(uf)) * ln2)
    c.add_output(flush_subnormal(f16_le(want, True)), [2, 7], FP16)
    return c


def softmax_int8_case():
    c = Case("sh-softmax-int8", "SH softmax (Softmax2Layer) over 12 int8 values (format word 0x44404130) -> 12 "
             "halves, the uniform 0x36048 = 0.2 x log2(e): values from -40 to 30, negative and positive, "
             "two at the maximum",
             "numpy: 2^((x - max) x u) / sum over the signed values, in 60-digit decimals, numpy.float16 "
             "(to nearest, ties to even), below the normal range 0")
    rs = np.random.RandomState(35)
    x = rs.randint(-40, 25, 12)
    x[2] = x[9] = 30
    assert (x < 0).sum() >= 3
    c.add_input(s8_bytes(x), [12])
    row_softmax(c, x, 0x44404130, 0.2)
    return c


def avgpool_case():
    c = Case("sh-global-average-pooling", "SH global average pooling (PoolingLayer2, images 0x444051c0): 7 "
             "channels of 4x4 (rows of 16 bytes, 20 apart) -> 7 values (2 apart); a = 1, b = 16 x 2 "
             "(zero point 2), c = 1 / (16 x 0.5), d = 1: a sum of 4 mod 8 is a tie",
             "numpy: numpy.rint((sum x a - b) x c + d) in double precision from the float32 uniforms "
             "(to nearest, ties to even: the C library's nearbyint), saturated")
    rs = np.random.RandomState(31)
    img = rs.randint(0, 256, (7, 20))
    img[0, :16] = 0                 # (0 - 32) / 8 + 1 = -3: 0
    img[1, :16] = 255               # 507: 255
    img[2, :16] = [4] + [0] * 15    # (4 - 32) / 8 + 1 = -2.5: -2 -> 0
    img[3, :16] = [44] + [0] * 15   # 2.5: 2
    img[4, :16] = [52] + [0] * 15   # 3.5: 4
    c.add_input(img, [140])
    a, b, cc, d = np.float32(1), np.float32(32), np.float32(0.125), np.float32(1)
    u = {8: 4, 9: f32_bits(a), 10: f32_bits(b), 11: f32_bits(cc), 60: f32_bits(d)}
    put(u, 1, image_words(20, 16, 7, FMT_POOL, 140, 1))
    put(u, 13, image_words(2, 1, 7, FMT_POOL, 14, 1))
    sh_op(c, "PoolingLayer2", u, [(0, (INPUT, 0, 0)), (12, (OUTPUT, 0, 0))])
    sums = img[:, :16].sum(axis=1).astype(np.float64)
    v = np.rint((sums * np.float64(a) - np.float64(b)) * np.float64(cc) + np.float64(d))
    out = np.zeros(14, dtype=np.int64)
    out[::2] = np.clip(v, 0, 255)
    assert list(out[6:10:2]) == [2, 4]
    c.add_output(out, [14])
    return c


def shadd_case(f16):
    cid = "sh-tensoradd-fp16" if f16 else "sh-tensoradd"
    c = Case(cid, "SH TensorAdd of two 5x3x2 images (rows 6, slices 20 bytes apart) into a third (rows 5), "
             "a = 0.5, b = %s, zero points 30, %s -> 128 (out = (x0 - zp0) a + (x1 - zp1) b + zpo): "
             "ties, saturation at 0 and 255%s" % (
                 ("0.5, input 1 IEEE halves (format 0x44405071, rows of 2 x width bytes; multiples of 1, "
                  "+-60000, +-infinity, a NaN)", "0 (fp16)", "; a NaN half gives 0") if f16 else
                 ("1.5", "128", "")),
             "numpy: numpy.rint of the sum in double precision from the float32 uniforms (to nearest, ties "
             "to even)%s, saturated" % (", x1 the numpy.float16 value" if f16 else ""))
    rs = np.random.RandomState(32 + f16)
    x0 = rs.randint(0, 256, (2, 3, 5))
    x0[0, 0, :2] = (0, 255)
    zp0, zpo, a = 30, 128, np.float32(0.5)
    if f16:
        x1 = rs.randint(-40, 41, (2, 3, 5)).astype(np.float16)
        x1[0, 0, :2] = (-60000, 60000)
        x1[0, 1, :3] = (-np.inf, np.inf, np.nan)
        b, zp1, row1, e1 = np.float32(0.5), 0, 12, 2
        rec1 = np.zeros(60, dtype="<f2")  # halves: rows of 6, slices of 20
        for (z, y, x), v in np.ndenumerate(x1):
            rec1[z * 20 + y * 6 + x] = v
        c.add_input(x0_rec(x0), [120])
        c.add_input(rec1.view(np.uint8), [60], FP16)
        x1v = x1.astype(np.float64)
    else:
        x1 = rs.randint(0, 256, (2, 3, 5))
        b, zp1, row1, e1 = np.float32(1.5), 128, 6, 1
        c.add_input(x0_rec(x0), [120])
        c.add_input(x0_rec(x1), [120])
        x1v = x1.astype(np.float64) - zp1
    u = {24: f32_bits(np.float32(zpo)), 25: f32_bits(a), 26: f32_bits(b), 28: zp0, 64: zp1}
    put(u, 1, image_words(6, 5, 3, FMT_A, 20, 2))
    put(u, 9, image_words(row1 * 1, 5, 3, FMT_ADD_F16 if f16 else FMT_A, 20 * e1, 2))
    put(u, 17, image_words(5, 5, 3, FMT_A, 15, 2))
    sh_op(c, "TensorAdd", u, [(0, (INPUT, 0, 0)), (8, (INPUT, 1, 0)), (16, (OUTPUT, 0, 0))])
    with np.errstate(invalid="ignore"):
        v = np.rint((x0.astype(np.float64) - zp0) * np.float64(a) + x1v * np.float64(b) + zpo)
    with np.errstate(invalid="ignore"):
        ties_seen = int(np.sum(np.abs(((x0 - zp0) * float(a) + x1v * float(b)) % 1 - 0.5) == 0))
    out = np.where(np.isnan(v), 0, np.clip(np.nan_to_num(v, nan=0.0), 0, 255)).astype(np.int64)
    assert ties_seen > 3 and (out == 0).any() and (out == 255).any()
    c.add_output(out, [30])
    return c


def shadd_int8_case():
    c = Case("sh-tensoradd-int8", "SH TensorAdd of two int8 5x3x2 images (format word 0x44405130, rows 6, "
             "slices 20) in the int8 layout: lane words with the weights (2, 1) and the shift 1 (out = x0 + "
             "x1 / 2, yolov8n 0x99's first addition): ties of both signs, saturation at -128 and 127",
             "numpy: numpy.rint((2 x0 + x1) / 2) on the signed values (to nearest, ties to even), "
             "saturated to -128..127")
    rs = np.random.RandomState(37)
    x0, x1 = rs.randint(-128, 128, (2, 3, 5)), rs.randint(-128, 128, (2, 3, 5))
    x0[0, 0, :2], x1[0, 0, :2] = (120, -120), (100, -100)
    c.add_input(s8_bytes(x0_rec(x0)), [120])
    c.add_input(s8_bytes(x0_rec(x1)), [120])
    u = {}
    for k, (t0, t1) in enumerate(((0x33221100, 0x77665544), (0xBBAA9988, 0xFFEEDDCC))):
        put(u, 24 + 16 * k, [0x55555555, 0x44444444, t0, t1, 0xAAAAAAAA, 0, 0, 0x601] + [0x00010002] * 8)
    put(u, 1, image_words(6, 5, 3, 0x44405130, 20, 2))
    put(u, 9, image_words(6, 5, 3, 0x44405130, 20, 2))
    put(u, 17, image_words(5, 5, 3, 0x44405130, 15, 2))
    sh_op(c, "TensorAdd", u, [(0, (INPUT, 0, 0)), (8, (INPUT, 1, 0)), (16, (OUTPUT, 0, 0))])
    v = np.clip(np.rint((2 * x0 + x1) / 2.0), -128, 127).astype(np.int64)
    assert (v == 127).any() and (v == -128).any() and ((x1 % 2) == 1).sum() > 10
    assert any(((2 * a + b) % 4 == 1) for a, b in zip(x0.ravel(), x1.ravel()))   # a tie rounding down
    assert any(((2 * a + b) % 4 == 3) for a, b in zip(x0.ravel(), x1.ravel()))   # a tie rounding up
    c.add_output(s8_bytes(v), [30])
    return c


def x0_rec(img):
    """A 5x3x2 image in rows of 6 and slices of 20 bytes."""
    rec = np.zeros(40 * 3, dtype=np.int64)[:120]
    place(rec, img, 0, 6, 20)
    return rec[:120]


def shscale_case():
    c = Case("sh-tensorscale", "SH TensorScale: a 3x2x2 image (rows 3, slices 6) upsampled 2x into 6x4x2 "
             "(rows 7, slices 28 bytes: gaps)",
             "numpy: numpy.repeat by 2 along x and y (2x nearest neighbour)")
    rs = np.random.RandomState(34)
    img = rs.randint(0, 256, (2, 2, 3))
    c.add_input(img, [12])
    u = {16: 0x33221100, 17: 0x77665544, 18: 0xBBAA9988, 19: 0xFFEEDDCC, 20: 16, 21: 0xFFFFFFFF}
    put(u, 1, image_words(3, 3, 2, FMT_B, 6, 2))
    put(u, 9, image_words(7, 6, 4, FMT_B, 28, 2))
    sh_op(c, "TensorScale", u, [(0, (INPUT, 0, 0)), (8, (OUTPUT, 0, 0))])
    up = img.repeat(2, axis=1).repeat(2, axis=2)
    out = np.zeros(56, dtype=np.int64)
    place(out, up, 0, 7, 28)
    c.add_output(out, [56])
    return c


def shscale_int8_case():
    c = Case("sh-tensorscale-int8", "SH TensorScale on int8 images (format word 0x44405130, the uint8 "
             "layout otherwise): a 4x3x2 image of negative and positive values upsampled 2x into 8x6x2",
             "numpy: numpy.repeat by 2 along x and y of the int8 values, as bytes")
    rs = np.random.RandomState(36)
    img = rs.randint(-128, 128, (2, 3, 4))
    c.add_input(s8_bytes(img), [24])
    u = {16: 0x33221100, 17: 0x77665544, 18: 0xBBAA9988, 19: 0xFFEEDDCC, 20: 16, 21: 0xFFFFFFFF}
    put(u, 1, image_words(4, 4, 3, 0x44405130, 12, 2))
    put(u, 9, image_words(8, 8, 6, 0x44405130, 48, 2))
    sh_op(c, "TensorScale", u, [(0, (INPUT, 0, 0)), (8, (OUTPUT, 0, 0))])
    c.add_output(s8_bytes(img.repeat(2, axis=1).repeat(2, axis=2)), [96])
    return c


# The max pooling shader's uniforms that are not geometry: the values of
# yolov8n's three SPPF operations (doc/cpu-backend.md, "The max pooling
# shader"), which the backend pins.
SHMAX_PINNED = {
    3: 0x444051F0, 6: 0x10DA10B0, 7: 0, 13: 1, 14: 5, 15: 2, 19: 0x444051F0, 22: 0x10DA10B0, 23: 0, 24: 2,
    25: 2, 26: 0x98765432, 27: 0x10FEDCBA, 28: 0x01010101, 29: 0, 30: 0x00010000, 31: 0x00030002,
    32: 0x02020202, 33: 0, 34: 0, 35: 0x100, 36: 0x3C00, 37: 0, 38: 0x3C00, 39: 0, 40: 0x3C00, 41: 0,
    42: 0x3C00, 43: 0, 44: 0x01010101, 45: 0, 46: 0x00050004, 47: 0x00070006, 48: 0x02020202, 49: 0, 50: 0,
    51: 0x100, 52: 0x3C00, 53: 0, 54: 0x3C00, 55: 0, 56: 0x3C00, 57: 0, 58: 0x3C00, 59: 0, 60: 0x3F800000,
    61: 0, 64: 0x33333333, 65: 0x11110000, 66: 0x03020100, 67: 0x03020100, 68: 0, 69: 0, 70: 0, 71: 0x2400,
    72: 0, 73: 0, 74: 0, 75: 0, 76: 0, 77: 0, 78: 0, 79: 0}


def shmax_case():
    c = Case("sh-max-pooling", "SH max pooling (PoolingLayer2, images 0x444051f0, yolov8n's SPPF layout): "
             "5x5 windows at stride 1 with padding 2 over a 6x5x2 image (rows 6, slices 30) into one of its "
             "size (rows 7, slices 35 bytes: gaps)",
             "numpy: the maximum over each 5x5 window centred on the pixel, clipped to the image")
    rs = np.random.RandomState(35)
    img = rs.randint(0, 256, (2, 5, 6))
    c.add_input(img, [60])
    u = dict(SHMAX_PINNED)
    u.update({1: 6, 2: 5 << 16 | 6, 4: 30, 5: 2, 8: 6, 9: 5, 10: 2, 11: 6, 12: 5, 17: 7, 18: 5 << 16 | 6,
              20: 35, 21: 2})
    sh_op(c, "PoolingLayer2", u, [(0, (INPUT, 0, 0)), (16, (OUTPUT, 0, 0))])
    out = np.zeros(70, dtype=np.int64)
    place(out, max_pool(img, 5, 1, -2, -2, 6, 5), 0, 7, 35)
    c.add_output(out, [70])
    return c


# The int8 variant's pinned words (yolov8n's 0x99 build: ops/shmax.c).
SHMAX_PINNED_S8 = dict(SHMAX_PINNED)
SHMAX_PINNED_S8.update({3: 0x44405130, 19: 0x44405130})
SHMAX_PINNED_S8.update(dict(zip(range(26, 80), [
    1, 1, 0, 5, 5, 5, 0x33333333, 0x11100000, 0x03020100, 0x07060504, 0, 0, 0, 0x7400, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 0, 0, 0, 2, 0, 0, 0x400, 1, 0, 0, 0, 0, 0, 0, 0, 0x33333333, 0x11110000, 0x03020100, 0x03020100, 0,
    0, 0, 0x2400, 0, 0, 0, 0, 0, 0, 0, 0])))


def shmax_int8_case():
    c = Case("sh-max-pooling-int8", "SH max pooling on int8 images (format word 0x44405130, yolov8n 0x99's "
             "lane words): 5x5 windows at stride 1 with padding 2 over a 6x5x2 image of negative and "
             "positive values",
             "numpy: the maximum of the int8 values over each 5x5 window centred on the pixel, clipped to "
             "the image")
    rs = np.random.RandomState(38)
    img = rs.randint(-128, 128, (2, 5, 6))
    img[1] = rs.randint(-128, -20, (5, 6))   # a channel of negative values only
    c.add_input(s8_bytes(img), [60])
    u = dict(SHMAX_PINNED_S8)
    u.update({1: 6, 2: 5 << 16 | 6, 4: 30, 5: 2, 8: 6, 9: 5, 10: 2, 11: 6, 12: 5, 17: 6, 18: 5 << 16 | 6,
              20: 30, 21: 2})
    sh_op(c, "PoolingLayer2", u, [(0, (INPUT, 0, 0)), (16, (OUTPUT, 0, 0))])
    c.add_output(s8_bytes(max_pool(img, 5, 1, -2, -2, 6, 5)), [60])
    return c


# The windowed variant's pinned words (the 0x7d face-age file's two
# poolings: ops/shmax.c), for a window of side 4 (stride 4, no padding).
SHMAX_PINNED_WIN4 = {3: 0x444051F0, 6: 0x10DA10B0, 7: 0, 13: 4, 14: 4, 15: 0, 19: 0x444051F0, 22: 0x10DA10B0,
                     23: 0, 24: 0, 25: 0}
SHMAX_PINNED_WIN4.update(dict(zip(range(26, 74), [
    4, 4, 0, 4, 4, 4, 0x18100800, 0x38302820, 0x08080808, 0x08080808, 0x20181008, 0x00383028, 0x08080808,
    0x08080808, 0x33333333, 0x11110000, 0x03020100, 0x07060504, 0, 0, 0, 0x7400, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0,
    0, 0, 0, 0, 0, 0x7400, 0, 0, 0, 0, 0, 0, 0, 0, 0x3F800000, 0])))
SHMAX_PINNED_WIN4.update({74: 0, 75: 0, 76: 0x33333333, 77: 0x11110000, 78: 0x03020100, 79: 0x03020100})


def shmax_win_case():
    c = Case("sh-max-pooling-window", "SH max pooling (PoolingLayer2, images 0x444051f0, the 0x7d face-age "
             "file's windowed layout): 4x4 windows at stride 4, no padding, over a 14x13x2 image (rows 15, "
             "slices 200) into 3x3 (rows 4, slices 13 bytes: gaps); the last column and row of the input "
             "lie past every window",
             "numpy: the maximum over each 4x4 window at (4x, 4y)")
    rs = np.random.RandomState(39)
    img = rs.randint(0, 200, (2, 13, 14))
    img[:, 12, :] = 255   # outside every window: must not reach the output
    img[:, :, 13] = 254
    rec = np.zeros(400, dtype=np.int64)
    place(rec, img, 0, 15, 200)
    c.add_input(rec, [400])
    u = dict(SHMAX_PINNED_WIN4)
    u.update({1: 15, 2: 13 << 16 | 14, 4: 200, 5: 2, 8: 14, 9: 13, 10: 2, 11: 3, 12: 3, 17: 4, 18: 3 << 16 | 3,
              20: 13, 21: 2})
    sh_op(c, "PoolingLayer2", u, [(0, (INPUT, 0, 0)), (16, (OUTPUT, 0, 0))])
    pooled = max_pool(img, 4, 4, 0, 0, 3, 3)
    assert pooled.max() < 254
    out = np.zeros(26, dtype=np.int64)
    place(out, pooled, 0, 4, 13)
    c.add_output(out, [26])
    return c


def shavg_win_case():
    c = Case("sh-average-pooling-window", "SH average pooling by windows (PoolingLayer2, images 0x444051c0, the "
             "0x7d face-age file's layout: window side and stride in 0x36050, 0x36054, the float32 scale in "
             "0x36028): 4x4 windows at stride 4 over a 14x13x2 image (rows 15, slices 200) into 3x3 (rows 4, "
             "slices 13 bytes: gaps), scale 0x3e89d90a (the file's op 70); the last column and row of the "
             "input lie past every window, and some sums saturate",
             "numpy: the sum of each 4x4 window at (4x, 4y) times the float32 scale in double, rounded to "
             "nearest (ties to even), clipped to 0..255")
    rs = np.random.RandomState(40)
    img = rs.randint(0, 64, (2, 13, 14))
    img[1, 0:4, 0:4] = 63      # a window whose average saturates: 1008 x 0.269 > 255
    img[:, 12, :] = 255        # outside every window: must not reach the output
    img[:, :, 13] = 254
    rec = np.zeros(400, dtype=np.int64)
    place(rec, img, 0, 15, 200)
    c.add_input(rec, [400])
    scale = 0x3E89D90A
    u = {1: 15, 2: 13 << 16 | 14, 3: 0x444051C0, 4: 200, 5: 2, 6: 0x10DA10B0, 7: 0, 8: 12, 9: 0, 10: scale,
         11: 0, 13: 4, 14: 3 << 16 | 3, 15: 0x444051C0, 16: 13, 17: 2, 18: 0x10DA10B0, 19: 0, 20: 4, 21: 4,
         22: 0, 23: 0, 60: 1, 62: 255}
    sh_op(c, "PoolingLayer2", u, [(0, (INPUT, 0, 0)), (12, (OUTPUT, 0, 0))])
    f = float(np.float32(struct.unpack("<f", struct.pack("<I", scale))[0]))
    sums = np.zeros((2, 3, 3), dtype=np.int64)
    for y in range(3):
        for x in range(3):
            sums[:, y, x] = img[:, 4 * y:4 * y + 4, 4 * x:4 * x + 4].sum(axis=(1, 2))
    pooled = np.clip(np.rint(sums * f), 0, 255).astype(np.int64)
    assert pooled.max() == 255 and pooled.min() < 255
    out = np.zeros(26, dtype=np.int64)
    place(out, pooled, 0, 4, 13)
    c.add_output(out, [26])
    return c


def spmax_case(cid, name, s_bits, q):
    """An SP softmax of the uint8 values q with the float32 scale s_bits."""
    c = Case(cid, "SP softmax (layer Softmax2Layer_SP, two NN-engine SP operations): %d uint8 values (zero "
             "point 101) -> halves into an FP16 output record; the scale s from the float32 clamps of the "
             "first command (words 29, 30 = s x (255 - zp), s x (0 - zp)), its mantissa in "
             "post_multiplier%s" % (len(q), name),
             "numpy: exp(s x (q - max)) / sum in double precision (doc/cpu-backend.md, 60-digit decimal "
             "exponentials), rounded to halves (to nearest, ties to even)")
    zp, n = 101, len(q)
    c.add_input(q, [n])
    s = np.float32(struct.unpack("<f", struct.pack("<I", s_bits))[0])
    hi, lo = np.float32(s * np.float32(255 - zp)), np.float32(s * np.float32(0 - zp))
    assert np.float32((np.float64(hi) - np.float64(lo)) / 255) == s
    m = s_bits & 0x7FFFFF
    first = c.add_op(OP_SP, "Softmax2Layer_SP")
    first["fields"] += [("in_image_x_size", n), ("in_image_y_size", 1), ("kernel_z_size", 1),
                        ("coef_zero_point", zp), ("post_multiplier", m & 1),
                        ("post_multiplier_1_to_6", m >> 1 & 63), ("post_multiplier_7_to_14", m >> 7 & 255),
                        ("post_multiplier_15_to_22", m >> 15),
                        ("in_image_x_stride", n), ("in_image_y_stride", n)]
    first["words"] += [(29, f32_bits(hi)), (30, f32_bits(lo))]
    field_addr(first, "in_image_address", INPUT, 0, 0)
    last = c.add_op(OP_SP, "Softmax2Layer_SP")
    last["fields"] += [("out_image_x_size", n), ("out_image_y_size", 1), ("out_image_z_size", 1),
                       ("out_image_data_type", 1), ("out_image_x_stride", 2 * n), ("out_image_y_stride", 2 * n)]
    field_addr(last, "out_image_address", OUTPUT, 0, 0)
    c.add_output(f16_le(softmax_exact(q, Fraction(float(s))), True), [n], FP16)
    return c


def spmax_cases():
    rs = np.random.RandomState(36)
    q = rs.randint(60, 140, 10)
    q[2] = 150
    return [spmax_case("sp-softmax", "", f32_bits(0.0801), q),
            # s x log2(e) rounded to a float32 moves one value's exponential
            # across a rounding boundary of its half (the backend did so)
            spmax_case("sp-softmax-scale-precision", "; s = 0.22358753 (0x3e64f421), where s x log2(e) "
                       "rounded to a float32 would move one half by a unit in its last place",
                       0x3E64F421, np.array([214, 178, 92, 162, 139, 56, 144, 168, 81, 174]))]


def sp_scale(op, value):
    """An SP command's scale (doc/cpu-backend.md, "The SP mean"): the
    float32 value's exponent in post_shift, post_shift_bit_5_6 and word 27
    bit 30, its mantissa in the post_multiplier fields."""
    b = f32_bits(value)
    e, m = b >> 23 & 255, b & 0x7FFFFF
    op["fields"] += [("post_shift", e & 31), ("post_shift_bit_5_6", e >> 5 & 3), ("post_multiplier", m & 1),
                     ("post_multiplier_1_to_6", m >> 1 & 63), ("post_multiplier_7_to_14", m >> 7 & 255),
                     ("post_multiplier_15_to_22", m >> 15)]
    op["words"] += [(27, (e >> 7) << 30)]


def spmean_case(cid, axis, fl=None):
    """An SP mean (layer ReduceMeanLayer_SP, two SP operations): over x of a
    7x3x1 fp16 image whose rows lie 16 bytes apart (a gap after each), or
    over z of a 5x1x6 one whose slices lie 12 bytes apart; fl: int16 codes
    of that fraction length instead of halves."""
    rs = np.random.RandomState(41 + axis + (fl or 0))
    if axis == 0:
        x, y, z, row, rows_per_slice, ox, oz = 7, 3, 1, 16, 3, 1, 1
        name = "over x of 7x3x1 fp16 (rows 16 bytes apart) into 1x3x1"
    else:
        x, y, z, row, rows_per_slice, ox, oz = 5, 1, 6, 12, 1, 5, 1
        name = "over z of 5x1x6 %s (rows and slices 12 bytes apart) into 5x1x1" % (
            "int16 codes of fraction length %d (the second command's scale 2^-%d / 6)" % (fl, fl)
            if fl is not None else "fp16")
    n = x if axis == 0 else z
    c = Case(cid, "SP mean (layer ReduceMeanLayer_SP, two NN-engine SP operations, the first reading with "
             "scale 1, the second writing with scale 2^-fl / n, none passing memory between them): " + name,
             "numpy: the exact mean of the %s (Fractions), rounded to a half (to nearest, ties to even)" %
             ("codes times 2^-%d" % fl if fl is not None else "halves"))
    if fl is None:
        vals = rs.uniform(-40, 40, (z, y, x)).astype(np.float16)
        vals[0, 0, 0] = np.float16(60000)                 # large and small magnitudes in one mean
        vals[-1, -1, -1] = np.float16(2.0 ** -20)
        codes, exact = vals.view(np.uint16), [[[Fraction(float(v)) for v in r] for r in p] for p in vals]
    else:
        vals = rs.randint(-32768, 32768, (z, y, x))
        vals[:, 0, 0] = 32767                             # a sum past the int16 range
        codes = vals.astype(np.int16).view(np.uint16)
        exact = [[[Fraction(int(v), 1 << fl) for v in r] for r in p] for p in vals]
    slice_bytes = row * rows_per_slice
    img = np.zeros(slice_bytes * z // 2, dtype=np.uint16)
    for k in range(z):
        for j in range(y):
            at = (k * slice_bytes + j * row) // 2
            img[at:at + x] = codes[k, j]
    # the input record is FP16-sized (2-byte elements); the mean reads the
    # command's data type
    c.add_input(img.view(np.uint8), [img.size], FP16)
    first = c.add_op(OP_SP, "ReduceMeanLayer_SP")
    first["fields"] += [("in_image_x_size", x), ("in_image_y_size", y), ("kernel_z_size", z),
                        ("in_image_data_type", 1 if fl is None else 0), ("in_image_data_type_bit_2", int(fl is not None)),
                        ("kernel_data_type", 1), ("out_image_data_type", 0),
                        ("out_image_x_size", x), ("out_image_y_size", y), ("out_image_z_size", z),
                        ("in_image_x_stride", row), ("in_image_y_stride", slice_bytes)]
    sp_scale(first, 1.0)
    field_addr(first, "in_image_address", INPUT, 0, 0)
    last = c.add_op(OP_SP, "ReduceMeanLayer_SP")
    last["fields"] += [("in_image_x_size", ox), ("in_image_y_size", y), ("kernel_z_size", oz),
                       ("in_image_data_type", 0), ("out_image_data_type", 1),
                       ("out_image_x_size", ox), ("out_image_y_size", y), ("out_image_z_size", oz),
                       ("out_image_x_stride", 2 * ox), ("out_image_y_stride", 2 * ox * y)]
    sp_scale(last, float(np.float32(2.0 ** -(fl or 0) / n)))
    field_addr(last, "out_image_address", OUTPUT, 0, 0)
    if axis == 0:
        means = [sum(exact[0][j]) / x for j in range(y)]
    else:
        means = [sum(exact[k][0][i] for k in range(z)) / z for i in range(x)]
    # a mean exactly half way between halves is exact in double too (ties to
    # even both ways); any other must lie clear of a tie
    c.add_output([b for m in means for b in f16_le([m], not f16_tie(m))], [len(means)], FP16)
    return c


def spsum_case():
    """An SP sum (layer ReduceSumLayer_SP, four SP operations: two pairs,
    each summing its own image over y): a 6x2 fp16 image whose rows lie 16
    bytes apart, the first pair reading its columns 0-2, the second 3-5,
    writing 3 sums each, 6 bytes apart."""
    c = Case("sp-sum-y", "SP sum (layer ReduceSumLayer_SP: two pairs of NN-engine SP operations, each first "
             "reading with scale 1, each second writing with scale 1, none passing memory between them): over y "
             "of 3x2x1 fp16 (rows 16 bytes apart) into 3x1x1, the second pair's image and sums 6 bytes after "
             "the first's: a sum past the largest half, a tie, a subnormal term",
             "numpy: the exact sum of the halves (Fractions), rounded to a half (to nearest, ties to even)")
    rs = np.random.RandomState(52)
    vals = rs.uniform(-40, 40, (2, 6)).astype(np.float16)
    vals[:, 0] = np.float16(40000)                    # 80000: past the largest half
    vals[0, 1], vals[1, 1] = np.float16(2048), np.float16(1)       # 2049: a tie, to 2048
    vals[0, 4], vals[1, 4] = np.float16(2.0 ** -14), np.float16(2.0 ** -24)   # a subnormal term
    img = np.zeros(16, dtype=np.uint16)
    for j in range(2):
        img[8 * j:8 * j + 6] = vals[j].view(np.uint16)
    c.add_input(img.view(np.uint8), [img.size], FP16)
    for half in range(2):
        first = c.add_op(OP_SP, "ReduceSumLayer_SP")
        first["fields"] += [("in_image_x_size", 3), ("in_image_y_size", 2), ("kernel_z_size", 1),
                            ("in_image_data_type", 1), ("kernel_data_type", 1), ("out_image_data_type", 0),
                            ("out_image_x_size", 3), ("out_image_y_size", 2), ("out_image_z_size", 1),
                            ("in_image_x_stride", 16), ("in_image_y_stride", 32)]
        sp_scale(first, 1.0)
        field_addr(first, "in_image_address", INPUT, 0, 6 * half)
        last = c.add_op(OP_SP, "ReduceSumLayer_SP")
        last["fields"] += [("in_image_x_size", 3), ("in_image_y_size", 1), ("kernel_z_size", 1),
                           ("in_image_data_type", 0), ("out_image_data_type", 1),
                           ("out_image_x_size", 3), ("out_image_y_size", 1), ("out_image_z_size", 1),
                           ("out_image_x_stride", 6), ("out_image_y_stride", 6)]
        sp_scale(last, 1.0)
        field_addr(last, "out_image_address", OUTPUT, 0, 6 * half)
    sums = [Fraction(float(vals[0, i])) + Fraction(float(vals[1, i])) for i in range(6)]
    c.add_output([b for m in sums for b in f16_le([m], False)], [6], FP16)
    return c


def spmul_pairs(c, int16, sb, sa):
    """The two pairs of a TensorMul_SP layer (spmul_case): each first loads
    2 values of b (input record 1) with scale sb, each second reads a 4x2
    slice of a (input record 0, rows 8 bytes apart) with scale sa and writes
    it, the second pair's after the first's; fp16 or int16 (4) data."""
    t = lambda key: [(key, 0), (key + "_bit_2", 1)] if int16 else [(key, 1)]
    for half in range(2):
        first = c.add_op(OP_SP, "TensorMul_SP")
        first["fields"] += [("in_image_x_size", 2), ("in_image_y_size", 1), ("kernel_z_size", 1)] + \
            t("in_image_data_type") + [("out_image_data_type", 0), ("out_image_x_size", 2),
                                        ("out_image_y_size", 1), ("out_image_z_size", 1), ("in_image_x_stride", 4),
                                        ("in_image_y_stride", 4)]
        sp_scale(first, sb)
        field_addr(first, "in_image_address", INPUT, 1, 4 * half)
        last = c.add_op(OP_SP, "TensorMul_SP")
        last["fields"] += [("in_image_x_size", 4), ("in_image_y_size", 2), ("kernel_z_size", 1)] + \
            t("in_image_data_type") + t("out_image_data_type") + \
            [("out_image_x_size", 4), ("out_image_y_size", 2), ("out_image_z_size", 1),
             ("in_image_x_stride", 8), ("in_image_y_stride", 16),
             ("out_image_x_stride", 8), ("out_image_y_stride", 16)]
        sp_scale(last, sa)
        field_addr(last, "in_image_address", INPUT, 0, 16 * half)
        field_addr(last, "out_image_address", OUTPUT, 0, 16 * half)


def spmul_case():
    """An SP product (layer TensorMul_SP of two pairs of SP operations): each
    first loads b (fp16, scale 1, no flag), each second reads a 4x2 fp16
    slice of a (4 wide, rows 8 bytes apart) and writes a x b[y] (b along y:
    its count is a's rows, not its width), the second pair's a, b and output
    after the first's."""
    c = Case("sp-mul-y", "SP product (layer TensorMul_SP, two pairs of NN-engine SP operations): 4x2x1 fp16 a "
             "(rows 8 bytes apart) times 2 fp16 b, one per row (b along y), twice, the second pair reading "
             "the next rows and b values and writing after the first: a product past the largest half, one "
             "below the normal range",
             "numpy: a x b[y] exactly (Fractions), rounded to a half (to nearest, ties to even)")
    rs = np.random.RandomState(57)
    a = rs.uniform(-8, 8, (4, 4)).astype(np.float16)
    b = rs.uniform(-4, 4, 4).astype(np.float16)
    a[0, 0], b[0] = np.float16(30000), np.float16(3)             # past the largest half: inf
    a[3, 1], b[3] = np.float16(2.0 ** -12), np.float16(2.0 ** -4)  # 2^-16: subnormal, kept
    img = np.zeros(16, np.uint16)
    for j in range(4):
        img[4 * j:4 * j + 4] = a[j].view(np.uint16)
    c.add_input(img.view(np.uint8), [16], FP16)
    c.add_input(b.view(np.uint16).view(np.uint8), [4], FP16)
    spmul_pairs(c, False, 1.0, 1.0)
    vals = [Fraction(float(a[j, i])) * Fraction(float(b[j])) for j in range(4) for i in range(4)]
    # exact in double (a product of two halves): ties are the backend's ties
    c.add_output([v for x in vals for v in f16_le([x], False)], [16], FP16)
    return c


def spmul_int16_case():
    """The int16 SP product (layer TensorMul_SP of two pairs, as the int16
    blendshapes file's layer normalisations): a, b and the output int16
    codes, the first command's scale s_b = 2^-12, the second's s_a = 2^-9
    (the fraction length of a), b along y; out = a x b x s_b (s_a not
    applied: doc/cpu-backend.md, "The SP product")."""
    c = Case("sp-mul-int16", "SP product (layer TensorMul_SP, two pairs of NN-engine SP operations) of int16 "
             "codes: 4x2x1 int16 a (rows 8 bytes apart, second scale 2^-9) times 2 int16 b, one per row (b "
             "along y, first scale 2^-12), twice, into int16: ties both ways, saturation both ways",
             "numpy: a x b[y] x 2^-12 exactly (Fractions), rounded half away from zero, saturated to int16 (the "
             "second command's scale not applied)")
    rs = np.random.RandomState(58)
    a = rs.randint(-4000, 4000, (4, 4))
    b = rs.randint(-9000, 9000, 4)
    a[0, 0], b[0] = 30000, 9000                 # 65918: saturates at 32767
    a[0, 1] = -30000                            # saturates at -32768
    a[1, 2], b[1] = 2048, 3                     # 1.5: a tie, to 2
    a[1, 3] = -2048                             # -1.5: to -2
    c.add_input(a.astype(np.int16).view(np.uint8), [16], FP16)      # rows 8 bytes apart: contiguous
    c.add_input(b.astype(np.int16).view(np.uint8), [4], FP16)
    spmul_pairs(c, True, 2.0 ** -12, 2.0 ** -9)
    q = [max(-32768, min(32767, round_half_away(Fraction(int(a[j, i]) * int(b[j]), 1 << 12))))
         for j in range(4) for i in range(4)]
    assert q[0] == 32767 and q[1] == -32768 and q[6] == 2 and q[7] == -2
    c.add_output(np.array(q, np.int16).view(np.uint8), [16], FP16)
    return c


def spmean_scale_refused_case():
    """The int16 mean with its second scale one float32 unit off 2^-11 / 6
    (its last mantissa bit flipped): no fraction length gives it, and the
    layer is refused."""
    c = spmean_case("sp-mean-scale-refused", 2, 11)
    c.name += "; the second scale one float32 unit off 2^-11 / 6: refused"
    c.source = "doc/cpu-backend.md, The SP mean: a scale that is no 2^-fl / n is refused (sp-mean-scale-inconsistent)"
    last = c.ops[1]
    b = f32_bits(float(np.float32(2.0 ** -11 / 6))) ^ 1      # its last mantissa bit flipped
    last["fields"] = [f for f in last["fields"] if f[0] != "post_multiplier"] + [("post_multiplier", b & 1)]
    c.refused = "sp-mean-scale-inconsistent"
    c.outs = [(np.zeros(10, dtype=np.uint8), [5], FP16)]
    return c


def spsub_case(cid, int16_in):
    """An SP subtraction (layer TensorSub_SP, two SP operations): the first
    loads b (x fp16 values) with scale sb and word 27 bit 28 (the negation),
    the second reads a with scale sa and writes a x sa - b[x] x sb."""
    rs = np.random.RandomState(45 + int16_in)
    if not int16_in:
        x, y, z, row, slc, orow, oslc, sa, sb, fl = 3, 4, 1, 8, 32, 6, 24, 128.0, 128.0, None
        name = ("3x4x1 fp16 a (rows 8 bytes apart) minus 3 fp16 b, both scaled by 2^7 (word 27 bit 30: the "
                "exponent's eighth bit), into int16 (rows 6 bytes apart): ties, saturation both ways")
    else:
        x, y, z, row, slc, orow, oslc, sa, sb, fl = 4, 1, 3, 8, 10, 8, 8, 2.0 ** -11, 1.0, 11
        name = ("4x1x3 int16 a (codes at fraction length 11: scale 2^-11; slices 10 bytes apart) minus 4 fp16 "
                "b (scale 1) into fp16")
    c = Case(cid, "SP subtraction (layer TensorSub_SP, two NN-engine SP operations): " + name,
             "numpy: a x sa - b[x] x sb exactly (Fractions), rounded %s" %
             ("half away from zero and saturated to int16" if not int16_in else
              "to a half (to nearest, ties to even)"))
    if not int16_in:
        a = (rs.randint(-6000, 6000, (z, y, x)) / 256.0).astype(np.float16)
        b = (rs.randint(-2000, 2000, x) / 256.0).astype(np.float16)
        a[0, 0, 0], a[0, 1, 1] = np.float16(300), np.float16(-290)   # past +-32767 / 128
        acodes = a.view(np.uint16)
        av = [[[Fraction(float(v)) for v in r] for r in p] for p in a]
    else:
        a = rs.randint(-32768, 32768, (z, y, x))
        b = rs.uniform(-20, 20, x).astype(np.float16)
        acodes = a.astype(np.int16).view(np.uint16)
        av = [[[Fraction(int(v)) for v in r] for r in p] for p in a]   # codes: sa holds 2^-fl
    img = np.zeros(slc * z // 2, dtype=np.uint16)
    for k in range(z):
        for j in range(y):
            img[(k * slc + j * row) // 2:(k * slc + j * row) // 2 + x] = acodes[k, j]
    c.add_input(img.view(np.uint8), [img.size], FP16)
    c.add_input(b.view(np.uint16).view(np.uint8), [x], FP16)
    first = c.add_op(OP_SP, "TensorSub_SP")
    first["fields"] += [("in_image_x_size", x), ("in_image_y_size", 1), ("kernel_z_size", 1),
                        ("in_image_data_type", 1), ("out_image_data_type", 0), ("out_image_x_size", x),
                        ("out_image_y_size", 1), ("out_image_z_size", 1), ("in_image_x_stride", 2 * x),
                        ("in_image_y_stride", 2 * x)]
    sp_scale(first, sb)
    first["words"] = [(w, v | 1 << 28) if w == 27 else (w, v) for w, v in first["words"]]
    field_addr(first, "in_image_address", INPUT, 1, 0)
    last = c.add_op(OP_SP, "TensorSub_SP")
    last["fields"] += [("in_image_x_size", x), ("in_image_y_size", y), ("kernel_z_size", z),
                       ("in_image_data_type", 0 if int16_in else 1), ("in_image_data_type_bit_2", int(int16_in)),
                       ("out_image_data_type", 1 if int16_in else 0),
                       ("out_image_data_type_bit_2", int(not int16_in)),
                       ("out_image_x_size", x), ("out_image_y_size", y), ("out_image_z_size", z),
                       ("in_image_x_stride", row), ("in_image_y_stride", slc),
                       ("out_image_x_stride", orow), ("out_image_y_stride", oslc)]
    sp_scale(last, sa)
    field_addr(last, "in_image_address", INPUT, 0, 0)
    field_addr(last, "out_image_address", OUTPUT, 0, 0)
    out = np.zeros(oslc * z // 2, dtype=np.uint16)
    for k in range(z):
        for j in range(y):
            for i in range(x):
                v = av[k][j][i] * Fraction(sa) - Fraction(float(b[i])) * Fraction(sb)
                if int16_in:
                    h = f16_round(v, not f16_tie(v))
                else:
                    q = max(-32768, min(32767, round_half_away(v)))
                    h = q & 0xFFFF
                out[(k * oslc + j * orow) // 2 + i] = h
    c.add_output(out.view(np.uint8), [out.size], FP16)
    return c


def nn_scale_0xad_case():
    return conv_case(
        "nn-conv-0xad",
        "NN conv 3x3, 3 -> 4 channels, 6x5 -> 6x5 (offsets -1), ReLU, target 0xad (shift = 127 - exponent, "
        "as 0xb9/0xbe: the 23-bit mantissa, a right shift of 5 to 12)", 6, target=0xAD, in_x=6, in_y=5, kz=3,
        k=3, out_x=6, out_y=5, out_z=4, x_off=-1, y_off=-1, in_zp=0, w_zp=103, out_zp=0, relu=1,
        m=0x52B7F4, e=117)[0]


SHCONV_FP16, SHCONV_F32, SHCONV_PIN, SHCONV_PIN_BIAS = 0x44405041, 0x32100002, 0x10DD10B0, 0x10DE10B0


def shconv_product(c, wt, bias, cols, wrow, fmt):
    """The matrix-product SH operation of an fp16 convolution pair: the
    rows cols (p x k, in the VIP SRAM at 64) times n kernels wt (rows wrow
    bytes apart, format word fmt as the output's) plus float32 biases, into
    output 0; numpy's result (n x p: float32 products summed in k order,
    the bias, one rounding to fp16)."""
    n, kk = wt.shape
    p = cols.shape[0]
    wbytes = np.zeros(wrow * n, np.uint8)
    for o in range(n):
        wbytes[o * wrow:o * wrow + 2 * kk] = np.frombuffer(wt[o].tobytes(), np.uint8)
    we, be = c.add_raw(wbytes), c.add_raw(np.frombuffer(bias.tobytes(), np.uint8))
    u = {}
    put(u, 1, [2 * kk, p << 16 | kk, SHCONV_FP16, 2 * kk * p, 1, SHCONV_PIN, 0])
    put(u, 9, [wrow, n << 16 | kk, fmt, wrow * n, 1, SHCONV_PIN, 0])
    put(u, 17, [4 * n, 1 << 16 | n, SHCONV_F32, 4 * n, 1, SHCONV_PIN_BIAS, 0])
    put(u, 24, [0, (kk + 7) // 8 * 8, 0])
    put(u, 29, [2 * p, n << 16 | p, fmt, 2 * p * n, 1, SHCONV_PIN, 0])
    put(u, 36, [0x55555555, 0x55550000, 0x76543210, 0x76543210, 0, 0x76543210, 0x76543210, 0] + [0] * 8 + [1, 2])
    sh_op(c, "ConvolutionLayer", u, [(0, (VIP_SRAM, -1, 64)), (8, (MISC_DYNA_GENERIC, we, 0)),
                                      (16, (MISC_DYNA_GENERIC, be, 0)), (28, (OUTPUT, 0, 0))])
    out = np.zeros((n, p), np.float16)
    for o in range(n):
        for q in range(p):
            acc = np.float32(0)
            for j in range(kk):
                acc = np.float32(acc + np.float32(wt[o, j]) * np.float32(cols[q, j]))
            out[o, q] = np.float16(np.float32(acc + bias[o]))
    return out


def shconv_case():
    """An fp16 convolution as the A733 compiles it: an im2col SH operation
    into the VIP SRAM, then a matrix-product SH operation with fp16 kernels
    and float32 biases in raw coefficient entries."""
    c = Case("sh-conv-fp16", "SH ConvolutionLayer pair on fp16 planes: im2col of a 5x4x2 input (kernel 3x3, "
             "stride 2, pad 1 -> 3x2 windows of 18 values, 0 outside) into the VIP SRAM, then the product "
             "with 3 kernels of 18 fp16 values (rows 40 bytes apart) plus float32 biases, one output plane "
             "of 3x2 per kernel; one sum falls below fp16's normal range",
             "numpy: the windows gathered in (channel, ky, kx) order, float32 products summed in that order "
             "plus the bias, numpy.float16 (to nearest, ties to even), below the normal range 0")
    rs = np.random.RandomState(43)
    w, h, ch, k, st, pad, n = 5, 4, 2, 3, 2, 1, 3
    ow, oh, kk = 3, 2, ch * 9
    x = rs.uniform(-2, 2, (ch, h, w)).astype(np.float16)
    wt = rs.uniform(-1, 1, (n, kk)).astype(np.float16)
    bias = rs.uniform(-1, 1, n).astype(np.float32)
    # kernel 2 zero but one tap, bias 0: its output at window 0 is 2^-20 x
    # the input there, below the normal range (written as 0)
    wt[2] = 0
    wt[2, 4] = np.float16(2.0 ** -14)
    bias[2] = 0
    x[0, 0, 0] = np.float16(2.0 ** -6)
    c.add_input(np.frombuffer(x.tobytes(), np.uint8), [w, h, ch], FP16)
    c.vip_sram = 1024
    xp = np.zeros((ch, h + 2 * pad + st, w + 2 * pad + st), np.float16)
    xp[:, pad:pad + h, pad:pad + w] = x
    cols = np.array([[xp[ci, oy * st + j, ox * st + i] for ci in range(ch) for j in range(k) for i in range(k)]
                     for oy in range(oh) for ox in range(ow)], np.float16)
    u = {}
    put(u, 1, [2 * w, h << 16 | w, SHCONV_FP16, 2 * w * h, ch, SHCONV_PIN, 0])
    put(u, 9, [2 * kk, (ow * oh) << 16 | kk, SHCONV_FP16, 2 * kk * ow * oh, 1, SHCONV_PIN, 0])
    put(u, 16, [9, ow, st, st, pad, pad, k, k])
    put(u, 28, [0] * 8)
    sh_op(c, "ConvolutionLayer", u, [(0, (INPUT, 0, 0)), (8, (VIP_SRAM, -1, 64))])
    out = shconv_product(c, wt, bias, cols, 40, SHCONV_FP16)
    le = flush_subnormal(np.frombuffer(out.tobytes(), np.uint8).tolist())
    assert le[2 * 2 * ow * oh:2 * 2 * ow * oh + 2] == [0, 0] and out[2, 0] != 0, "the flushed value"
    c.add_output(le, [ow * oh, n], FP16)
    return c


# The stride-2 fp16 im2col's uniforms 0x36060..0x3611c, as the corpus's one
# such shader holds them (lib/analysis/graph/uniforms_conv.c)
IM2COL_S2_PINNED = [0x111111, 0x111000, 0x20100, 0x201, 0x222222, 0, 0, 0x400, 1, 1, 1, 1, 1, 1, 0, 0,
                    0x111111, 0x111000, 0x2040302, 0x403, 0x222222, 0, 0, 0x400, 1, 1, 1, 1, 1, 1, 0, 0,
                    0x111111, 0x111000, 0x4060504, 0x605, 0x222222, 0, 0, 0x400, 1, 1, 1, 1, 1, 1, 0, 0]
SHCONV_FP16_B = 0x44404071  # the fourth fp16 format word (the landmarks file's heads)


def shconv_s2_case():
    """The stride-2 fp16 im2col (uniforms 0x36058/0x3605c not loaded, the
    pinned constants from 0x36060 on), then a product whose kernels and
    output use the format word 0x44404071."""
    c = Case("sh-conv-fp16-stride2", "SH ConvolutionLayer pair on fp16 planes: the stride-2 im2col (its "
             "constants loaded, no kernel-size words) of a 6x5x3 input (kernel 3x3, stride 2, pad 0 -> 3x3 "
             "windows of 27 values, 0 past the input's right and bottom edges) into the VIP SRAM, then the "
             "product with 2 kernels of 27 fp16 values in format 0x44404071 plus float32 biases",
             "numpy: the windows gathered in (channel, ky, kx) order, float32 products summed in that order "
             "plus the bias, numpy.float16 (to nearest, ties to even)")
    rs = np.random.RandomState(48)
    w, h, ch, k, st, n = 6, 5, 3, 3, 2, 2
    ow, oh, kk = 3, 3, ch * 9
    x = rs.uniform(-2, 2, (ch, h, w)).astype(np.float16)
    wt = rs.uniform(-1, 1, (n, kk)).astype(np.float16)
    bias = rs.uniform(-1, 1, n).astype(np.float32)
    c.add_input(np.frombuffer(x.tobytes(), np.uint8), [w, h, ch], FP16)
    c.vip_sram = 2048
    xp = np.zeros((ch, h + st, w + st), np.float16)
    xp[:, :h, :w] = x
    cols = np.array([[xp[ci, oy * st + j, ox * st + i] for ci in range(ch) for j in range(k) for i in range(k)]
                     for oy in range(oh) for ox in range(ow)], np.float16)
    u = {}
    put(u, 1, [2 * w, h << 16 | w, SHCONV_FP16, 2 * w * h, ch, SHCONV_PIN, 0])
    put(u, 9, [2 * kk, (ow * oh) << 16 | kk, SHCONV_FP16, 2 * kk * ow * oh, 1, SHCONV_PIN, 0])
    put(u, 16, [9, ow, st, st, 0, 0])
    put(u, 24, IM2COL_S2_PINNED)
    sh_op(c, "ConvolutionLayer", u, [(0, (INPUT, 0, 0)), (8, (VIP_SRAM, -1, 64))])
    out = shconv_product(c, wt, bias, cols, 2 * kk, SHCONV_FP16_B)
    c.add_output(flush_subnormal(np.frombuffer(out.tobytes(), np.uint8).tolist()), [ow * oh, n], FP16)
    return c


OP_NT = 8


def nt_long_case():
    """An NT transpose longer than its 13-bit size fields hold: bits 13 and
    up of its length in kernel_z_size, bits 16 and up of the output's row
    stride in out_image_tile_x_size (the landmarks file's first layer)."""
    c = Case("nt-transpose-long", "NN TensorTranspose NT of 8200 pixels of 2 fp16 values (an NHWC record, rows "
             "of 4 bytes; non-zero at the first and last 128 pixels and every 97th) into 2 planes of 8200 values 65540 bytes apart: in_image_y_size and "
             "out_image_x_size 8 with kernel_z_size 1 (8 + 8192), out_image_x_stride 4 with "
             "out_image_tile_x_size 1 (4 + 65536)",
             "numpy: numpy.transpose(record) into rows at the stride; the bytes between rows 0")
    rs = np.random.RandomState(49)
    n, ch, orow = 8200, 2, 65540
    x = rs.uniform(-2, 2, (n, ch)).astype(np.float16)
    # values at the first and last 128 pixels and every 97th, 0 elsewhere
    # (a header of reasonable size; the pixels past 8192 all non-zero)
    keep = np.zeros(n, bool)
    keep[:128], keep[-128:], keep[::97] = True, True, True
    x[~keep] = 0
    c.add_input(np.frombuffer(x.tobytes(), np.uint8), [ch, n, 1], FP16)
    op = c.add_op(OP_NT, "TensorTranspose")
    op["fields"] += [("kernel_z_size", 1), ("in_image_x_size", ch), ("in_image_y_size", n & 0x1FFF),
                     ("out_image_x_size", n & 0x1FFF), ("out_image_y_size", ch), ("out_image_z_size", 1),
                     ("out_image_tile_x_size", 1), ("in_image_x_stride", 2 * ch),
                     ("out_image_x_stride", orow & 0xFFFF)]
    field_addr(op, "in_image_address", INPUT, 0, 0)
    field_addr(op, "out_image_address", OUTPUT, 0, 0)
    out = np.zeros(orow + 2 * n, np.uint8)
    for ci in range(ch):
        out[ci * orow:ci * orow + 2 * n] = np.frombuffer(np.ascontiguousarray(x[:, ci]).tobytes(), np.uint8)
    c.add_output(out, [(orow + 2 * n) // 2, 1, 1], FP16)
    return c


def nt_slices_case():
    """A 3-D NT transpose (the blendshapes files' ConcatLayer): the 2-D
    transpose in each of out_image_z_size slices, the input's slices at
    in_image_y_stride, the output's at out_image_y_stride (bytes)."""
    c = Case("nt-transpose-slices", "NN ConcatLayer NT of 3 slices of 3x4 fp16 values (rows 6 bytes apart: "
             "word 5 (kernel_address) 2 times the width, as in every NT command of the corpus; slices 40) into "
             "3 slices of 4x3 (rows 10 bytes apart, slices 36): out_image_z_size 3",
             "numpy: numpy.transpose of each slice, placed at the strides; the bytes between rows 0")
    rs = np.random.RandomState(53)
    x, y, z, irow, islice, orow, oslice = 3, 4, 3, 6, 40, 10, 36
    img = rs.uniform(-4, 4, (z, y, x)).astype(np.float16)
    buf = np.zeros(islice * z, np.uint8)
    for k in range(z):
        for j in range(y):
            buf[k * islice + j * irow:k * islice + j * irow + 2 * x] = np.frombuffer(img[k, j].tobytes(), np.uint8)
    c.add_input(buf, [islice * z // 2, 1, 1], FP16)
    op = c.add_op(OP_NT, "ConcatLayer")
    op["fields"] += [("kernel_address", 2), ("in_image_x_size", x), ("in_image_y_size", y),
                     ("out_image_x_size", y), ("out_image_y_size", x), ("out_image_z_size", z),
                     ("in_image_x_stride", irow), ("in_image_y_stride", islice),
                     ("out_image_x_stride", orow), ("out_image_y_stride", oslice)]
    field_addr(op, "in_image_address", INPUT, 0, 0)
    field_addr(op, "out_image_address", OUTPUT, 0, 0)
    out = np.zeros(oslice * z, np.uint8)
    for k in range(z):
        t = np.ascontiguousarray(img[k].T)
        for i in range(x):
            out[k * oslice + i * orow:k * oslice + i * orow + 2 * y] = np.frombuffer(t[i].tobytes(), np.uint8)
    c.add_output(out, [oslice * z // 2, 1, 1], FP16)
    return c


def nt_rows_case():
    """An NT transpose whose elements are whole rows: word 5
    (kernel_address) holds the element's bytes, the input's row stride
    in_image_x_size times it (the blendshapes files' 192-, 194- and
    104-byte elements)."""
    c = Case("nt-transpose-rows", "NN TensorTranspose NT of a 3x2 image of 6-byte elements (3 fp16 values each; "
             "input rows 18 bytes, word 5 (kernel_address) 6) into 2x3 (output rows 14 bytes apart)",
             "numpy: numpy.transpose of the (2, 3, 6-byte) array's first two axes, rows at the stride; the "
             "bytes between rows 0")
    rs = np.random.RandomState(59)
    x, y, e, orow = 3, 2, 6, 14
    img = rs.uniform(-4, 4, (y, x, e // 2)).astype(np.float16)
    c.add_input(np.frombuffer(img.tobytes(), np.uint8), [x * y * e // 2, 1, 1], FP16)
    op = c.add_op(OP_NT, "TensorTranspose")
    op["fields"] += [("kernel_address", e), ("in_image_x_size", x), ("in_image_y_size", y),
                     ("out_image_x_size", y), ("out_image_y_size", x), ("out_image_z_size", 1),
                     ("in_image_x_stride", x * e), ("in_image_y_stride", x * y * e),
                     ("out_image_x_stride", orow), ("out_image_y_stride", orow * x)]
    field_addr(op, "in_image_address", INPUT, 0, 0)
    field_addr(op, "out_image_address", OUTPUT, 0, 0)
    t = np.ascontiguousarray(img.transpose(1, 0, 2))
    out = np.zeros(orow * x, np.uint8)
    for i in range(x):
        out[i * orow:i * orow + y * e] = np.frombuffer(t[i].tobytes(), np.uint8)
    c.add_output(out, [orow * x // 2, 1, 1], FP16)
    return c


SHCONV_F32_PLANE, SHCONV_F32_X4, SHCONV_F32_BIAS = 0x44405002, 0x32101034, 0x32100034


def f32_sum(w, x, bias):
    """float32 products summed in order, then the bias, each step rounded
    to float32."""
    acc = np.float32(0)
    for a, b in zip(w, x):
        acc = np.float32(acc + np.float32(a * b))
    return np.float32(acc + bias)


def shconv_f32_case():
    """The fp32 convolution pair of the TIM-VX fp32 file's layout: an im2col
    of float32 planes into rows of 4-value elements, then the product."""
    c = Case("sh-conv-fp32", "SH ConvolutionLayer pair on float32 planes: im2col of a 5x4x2 input (rows 24 bytes "
             "apart: gaps; kernel 3x3, stride 1, pad 1 -> 5x4 windows of 18 values, rows rounded up to 20, 0 "
             "outside) into the VIP SRAM, then the product with 3 kernels of 20 float32 values (the last two 0, "
             "rows 96 bytes apart) plus float32 biases, one output plane of 5x4 per kernel",
             "numpy: the windows gathered in (channel, ky, kx) order, float32 products summed in that order "
             "plus the bias, each step rounded to float32")
    rs = np.random.RandomState(45)
    w, h, ch, n = 5, 4, 2, 3
    kk, k4, p = ch * 9, 20, w * h
    x = rs.uniform(-2, 2, (ch, h, w)).astype(np.float32)
    wt = np.zeros((n, k4), np.float32)
    wt[:, :kk] = rs.uniform(-1, 1, (n, kk))
    bias = rs.uniform(-1, 1, n).astype(np.float32)
    row, slice_ = 24, 4 * 24 + 8
    buf = np.zeros(slice_ * ch, np.uint8)
    for ci in range(ch):
        for y in range(h):
            at = ci * slice_ + y * row
            buf[at:at + 4 * w] = np.frombuffer(x[ci, y].tobytes(), np.uint8)
    c.add_input(buf, [len(buf)])
    c.vip_sram = 2048
    xp = np.zeros((ch, h + 2, w + 2), np.float32)
    xp[:, 1:1 + h, 1:1 + w] = x
    cols = np.array([[xp[ci, oy + j, ox + i] for ci in range(ch) for j in range(3) for i in range(3)] + [0, 0]
                     for oy in range(h) for ox in range(w)], np.float32)
    orow = 96
    u = {}
    put(u, 1, [row, h << 16 | w, SHCONV_F32_PLANE, slice_, ch, 0, 0])
    put(u, 8, [1, 1, 1, 1, 3, 3, 1, 1])
    put(u, 17, [orow, w << 16 | k4, SHCONV_F32_PLANE, w * orow, h, 0, 0])
    put(u, 24, [w, h, ch, 0])
    put(u, 32, [0] * 16)
    sh_op(c, "ConvolutionLayer", u, [(0, (INPUT, 0, 0)), (16, (VIP_SRAM, -1, 64))])
    we = c.add_raw(np.concatenate([np.frombuffer(np.concatenate([wt[o], np.zeros(4, np.float32)]).tobytes(),
                                                 np.uint8) for o in range(n)]))
    be = c.add_raw(np.frombuffer(np.concatenate([bias, np.zeros(1, np.float32)]).tobytes(), np.uint8))
    u = {}
    put(u, 1, [orow, p << 16 | k4 // 4, SHCONV_F32_X4, p * orow, 1, 0, 0])
    put(u, 9, [96, n << 16 | k4 // 4, SHCONV_F32_X4, 96 * n, 1, 0, 0])
    put(u, 17, [16, 1 << 16 | 1, SHCONV_F32_BIAS, 16, 1, 0, 0])
    put(u, 24, [k4, 0])
    put(u, 29, [4 * p, n << 16 | p // 4, SHCONV_F32_X4, 4 * p * n, 1, 0, 0])
    put(u, 36, [1, 0xFFFFFFFD, 0xFFFFFFFD])
    op = sh_op(c, "ConvolutionLayer", u, [(0, (VIP_SRAM, -1, 64)), (8, (MISC_DYNA_GENERIC, we, 0)),
                                           (16, (MISC_DYNA_GENERIC, be, 0)), (28, (OUTPUT, 0, 0))])
    out = np.array([[f32_sum(wt[o], cols[q], bias[o]) for q in range(p)] for o in range(n)], np.float32)
    c.add_output(np.frombuffer(out.tobytes(), np.uint8), [p, n], FP32)
    return c


def shf32_other_program_case(layer, fmt, words):
    """An fp32 ReLU or max pooling shader's uniforms whose program (the
    synthesized file's, zeros) is not one of the two read: the function is
    not in the uniforms, so the step keeps the generic refusal."""
    c = Case("sh-f32-other-program-" + ("relu" if layer == "ActivationLayer" else "maxpool"),
             "SH %s on float32 images in the fp32 shaders' layout (0x%08x), its program not the one read: "
             "refused" % (layer, fmt),
             "doc/cpu-backend.md, The fp32 shaders: only the two programs read are executed (shader-not-executed)")
    c.add_input(np.zeros(128, np.uint8), [32], FP32)
    u = {}
    put(u, 1, words[0] + [fmt, 128, 1, 0, 0])
    put(u, 9, words[1] + [fmt, 64 if layer != "ActivationLayer" else 128, 1, 0, 0])
    if layer != "ActivationLayer":
        put(u, 16, [2, 1])
    sh_op(c, layer, u, [(0, (INPUT, 0, 0)), (8, (OUTPUT, 0, 0))])
    c.refused = "shader-not-executed"
    c.add_output(np.zeros(128 if layer == "ActivationLayer" else 32, np.uint8),
                 [32 if layer == "ActivationLayer" else 8], FP32)
    return c


SHDW16_STRIDE2 = [0x151515, 0, 0x4320210, 0x654, 0x151515, 0x2100210, 0x210, 0x400] + [0] * 8 + \
    [0x151515, 0, 0x4320210, 0x654, 0x151515, 0x5430543, 0x543, 0x400] + [0] * 8 + \
    [0x111111, 0x111000, 0x40200, 0x402]


def shdw16_build(c, seed, w, h, ch, st, pad, ow, oh, row, wrow, tail, consts):
    """An fp16 depthwise convolution shader case: 3x3 kernels, stride st,
    padding pad before (and as needed after), uniforms 0x3607c = tail and
    0x360a0.. consts; its input, kernels, bias and numpy's output."""
    k = 3
    rs = np.random.RandomState(seed)
    x = rs.uniform(-2, 2, (ch, h, w)).astype(np.float16)
    wt = rs.uniform(-1, 1, (ch, k * k)).astype(np.float16)
    bias = rs.uniform(-1, 1, ch).astype(np.float32)
    img = np.zeros(ch * h * row, np.uint8)
    for ci in range(ch):
        for y in range(h):
            img[ci * h * row + y * row:ci * h * row + y * row + 2 * w] = np.frombuffer(x[ci, y].tobytes(), np.uint8)
    c.add_input(img, [row // 2, h, ch], FP16)
    wbytes = np.zeros(wrow * ch, np.uint8)
    for ci in range(ch):
        wbytes[ci * wrow:ci * wrow + 2 * k * k] = np.frombuffer(wt[ci].tobytes(), np.uint8)
    we, be = c.add_raw(wbytes), c.add_raw(np.frombuffer(bias.tobytes(), np.uint8))
    u = {}
    put(u, 1, [row, h << 16 | w, SHCONV_FP16, row * h, ch, SHCONV_PIN, 0])
    put(u, 9, [wrow, ch << 16 | k * k, SHCONV_FP16, wrow * ch, 1, SHCONV_PIN, 0])
    put(u, 17, [4 * ch, 1 << 16 | ch, SHCONV_F32, 4 * ch, 1, SHCONV_PIN_BIAS, 0])
    put(u, 24, [1, k, k, st, pad, pad, st, tail])
    put(u, 33, [2 * ow, oh << 16 | ow, SHCONV_FP16, 2 * ow * oh, ch, SHCONV_PIN, 0])
    put(u, 40, consts)
    sh_op(c, "DepthwiseConvLayer", u, [(0, (INPUT, 0, 0)), (8, (MISC_DYNA_GENERIC, we, 0)),
                                       (16, (MISC_DYNA_GENERIC, be, 0)), (32, (OUTPUT, 0, 0))])
    xp = np.zeros((ch, h + pad + k, w + pad + k), np.float16)
    xp[:, pad:pad + h, pad:pad + w] = x
    out = np.zeros((ch, oh, ow), np.float16)
    for ci in range(ch):
        for oy in range(oh):
            for ox in range(ow):
                acc = np.float32(0)
                for j in range(k):
                    for i in range(k):
                        acc = np.float32(acc + np.float32(wt[ci, j * k + i]) * np.float32(xp[ci, oy * st + j,
                                                                                          ox * st + i]))
                out[ci, oy, ox] = np.float16(np.float32(acc + bias[ci]))
    c.add_output(flush_subnormal(np.frombuffer(out.tobytes(), np.uint8).tolist()), [ow, oh, ch], FP16)
    return c


def shdw16_case():
    """The fp16 depthwise convolution shader in its stride-2 layout."""
    c = Case("sh-dwconv-fp16", "SH DepthwiseConvLayer on fp16 planes: 3 channels of 5x4 (rows 12 bytes apart), "
             "kernel 3x3, stride 2, pad 0 -> 3x2 (the last column's and row's windows past the input: 0 there, "
             "TFLite's SAME), kernel rows 20 bytes apart, float32 biases",
             "numpy: per channel the 3x3 windows, float32 products summed in (ky, kx) order plus the bias, "
             "numpy.float16 (to nearest, ties to even), below the normal range 0")
    return shdw16_build(c, 44, 5, 4, 3, 2, 0, 3, 2, 12, 20, 0, [3, 0, 0, 0] + SHDW16_STRIDE2)


# the small-image stride-1 layout's words 0x360a8.. after 0 and the output
# width (lib/analysis/graph/uniforms_conv.c, set 2)
SHDW16_SMALL = [0x40, 0, 0x15, 0, 0x3210, 0, 0x55, 0x3210, 0, 0x400] + [0] * 28


def shdw16_small_case():
    """The fp16 depthwise convolution shader in the stride-1 layout of the
    landmarks file's 4x4 and 2x2 images (0x3607c = 1, the third constant
    set)."""
    c = Case("sh-dwconv-fp16-small", "SH DepthwiseConvLayer on fp16 planes, the small-image layout (uniform "
             "0x3607c 1, its constants): 3 channels of 4x4 (rows 10 bytes apart), kernel 3x3, stride 1, pad 1 "
             "-> 4x4 (windows past every edge: 0 there, TFLite's SAME), kernel rows 20 bytes apart, float32 "
             "biases",
             "numpy: per channel the 3x3 windows, float32 products summed in (ky, kx) order plus the bias, "
             "numpy.float16 (to nearest, ties to even), below the normal range 0")
    return shdw16_build(c, 50, 4, 4, 3, 1, 1, 4, 4, 10, 20, 1, [0, 4] + SHDW16_SMALL)


def nn_prelu_case():
    """The fp16 PReLU (layer PReluLayer): a 1x1 depthwise NN command whose
    kernel stream holds per channel the float32 pair (1.0, slope)."""
    c = Case("nn-prelu-fp16", "NN PReluLayer on fp16: 3 channels of 4x2 (rows 12 bytes apart), a 1x1 depthwise "
             "command whose kernel stream (f32-pairs) holds weight 1.0 and a float16 slope per channel (0.25, "
             "-0.1875 and a slope rounded to a half) -> 4x2x3 (rows 8 bytes apart): negative values, -0, a "
             "product below the normal range",
             "numpy: x where x >= 0, else numpy.float16(float32(x) x float32(slope)) (the product of two halves "
             "is exact in float32: rounded once, to nearest, ties to even), below the normal range 0")
    rs = np.random.RandomState(47)
    w, h, ch, row, orow = 4, 2, 3, 12, 8
    slope = np.array([0.25, -0.1875, float(np.float16(0.0731))], np.float16)
    x = rs.uniform(-3, 3, (ch, h, w)).astype(np.float16)
    x[0, 0, 0], x[1, 0, 1], x[2, 1, 3] = np.float16(-0.0), np.float16(-2.0 ** -13), np.float16(-1.5)
    img = np.zeros(ch * h * row, np.uint8)
    for ci in range(ch):
        for y in range(h):
            img[(ci * h + y) * row:(ci * h + y) * row + 2 * w] = np.frombuffer(x[ci, y].tobytes(), np.uint8)
    c.add_input(img, [row // 2, h, ch], FP16)
    pairs = np.zeros(2 * ch, np.float32)
    pairs[0::2], pairs[1::2] = 1.0, slope.astype(np.float32)
    k = c.add_raw(np.frombuffer(pairs.tobytes(), np.uint8))
    op = c.add_op(OP_NN, "PReluLayer")
    op["fields"] += [("kernel_xy_size", 1), ("kernel_z_size", 1), ("kernels_per_core", ch), ("depthwise", 1),
                     ("in_image_x_size", w), ("in_image_y_size", h), ("out_image_x_size", w),
                     ("out_image_y_size", h), ("out_image_z_size", ch), ("in_image_x_stride", row),
                     ("in_image_y_stride", row * h), ("out_image_x_stride", orow),
                     ("out_image_y_stride", orow * h), ("kernel_data_type", 1), ("in_image_data_type", 1),
                     ("out_image_data_type", 1), ("post_shift", 31), ("post_shift_bit_5_6", 3)]
    field_addr(op, "kernel_address", MISC_DYNA_GENERIC, k, 0)
    field_addr(op, "in_image_address", INPUT, 0, 0)
    field_addr(op, "out_image_address", OUTPUT, 0, 0)
    y = np.where(x.view(np.uint16) & 0x8000,
                 (x.astype(np.float32) * slope.astype(np.float32)[:, None, None]).astype(np.float16), x)
    out = np.zeros(ch * h * orow, np.uint8)
    for ci in range(ch):
        for yy in range(h):
            out[(ci * h + yy) * orow:(ci * h + yy) * orow + 2 * w] = np.frombuffer(y[ci, yy].tobytes(), np.uint8)
    c.add_output(flush_subnormal(out.tolist()), [orow // 2, h, ch], FP16)
    return c



OP_NN_LUT = 7


def nnlut_word(v):
    """A value in an NN_LUT table's wide layout: sign bit 20, exponent
    bits 15-19 (bias 15), 15 mantissa bits; below 2^-14: 0."""
    if v == 0 or abs(v) < 2.0 ** -14:
        return 0
    m, e = math.frexp(abs(v))            # abs(v) = m 2^e, m in [0.5, 1)
    mant = int(round((m * 2 - 1) * 2 ** 15))
    if mant == 2 ** 15:
        mant, e = 0, e + 1
    return (1 << 20 if v < 0 else 0) | (e - 1 + 15) << 15 | mant


def nn_lut_sigmoid_case():
    """The fp16 NN_LUT sigmoid: a table of 32 entries a binade (its first
    tail word's bit 24 clear) that holds 1 / (1 + e^-x)."""
    c = Case("nn-lut-sigmoid-fp16", "NN_LUT ActivationLayer on fp16: 8 values through a table whose first tail "
             "word is 0x34000000 (sign support, bit 24 clear: entry i at the half ((((i & 511) << 5) + 0x2000) & "
             "0x3fff) + 0x2000, sign bit 9) holding the sigmoid; values of both signs, 0, one past the table's "
             "range (20)",
             "numpy: numpy.float16(float32(1 / (1 + e^-x))) in float64; the same at p 1 +- 1e-4 (the parameter "
             "solved from the table), below the normal range 0")
    words = []
    for i in range(1024):
        bits = (((((i & 511) << 5) + 0x2000) & 0x3FFF) + 0x2000) | (0x8000 if i & 512 else 0)
        x = float(np.array([bits], np.uint16).view(np.float16)[0])
        words.append(nnlut_word(1.0 / (1.0 + math.exp(-x))))
    table = np.array(words + [0x34000000, 0, 0x003E8000], np.uint32)
    k = c.add_raw(np.frombuffer(table.astype("<u4").tobytes(), np.uint8))
    x = np.array([-3.0, -0.5, 0.0, 0.3, 1.0, 2.5, 20.0, -2.0], np.float16)
    c.add_input(np.frombuffer(x.tobytes(), np.uint8), [8, 1, 1], FP16)

    def sig(p):
        return np.array([np.float16(np.float32(1.0 / (1.0 + math.exp(-p * float(v))))) for v in x], np.float16)
    y = sig(1.0)
    assert (sig(1 - 1e-4).view(np.uint16) == y.view(np.uint16)).all() and \
        (sig(1 + 1e-4).view(np.uint16) == y.view(np.uint16)).all(), "a value on a rounding edge"
    op = c.add_op(OP_NN_LUT, "ActivationLayer")
    op["fields"] += [("kernel_xy_size", 1), ("kernel_z_size", 1), ("kernels_per_core", 1), ("depthwise", 1),
                     ("in_image_x_size", 8), ("in_image_y_size", 1), ("out_image_x_size", 8),
                     ("out_image_y_size", 1), ("out_image_z_size", 1), ("in_image_x_stride", 16),
                     ("in_image_y_stride", 16), ("out_image_x_stride", 16), ("out_image_y_stride", 16),
                     ("kernel_data_type", 1), ("in_image_data_type", 1), ("out_image_data_type", 1),
                     ("post_shift", 31), ("post_shift_bit_5_6", 3)]
    field_addr(op, "kernel_address", MISC_DYNA_GENERIC, k, 0)
    field_addr(op, "in_image_address", INPUT, 0, 0)
    field_addr(op, "out_image_address", OUTPUT, 0, 0)
    c.add_output(flush_subnormal(np.frombuffer(y.tobytes(), np.uint8).tolist()), [8, 1, 1], FP16)
    return c

def second_image(op, brow, y):
    """An NN-engine command's second image (words 32-35): input record 1,
    rows brow bytes apart, y rows a slice, in a buffer with no end."""
    op["words"] += [(32, (brow * y) << 16 | brow), (33, 1), (35, 0x17FFFFFF)]
    word_addr(op, 34, INPUT, 1, 0, 0)


def sp_add_case(flags=0):
    """The fp16 SP addition of a TensorAdd_SP layer: a + b, no ReLU; flags:
    word 27 bits 23-25 and word 28 bits 2-4 both set to it: 7 (the
    landmarks file's additions) runs alike, another value is refused."""
    refused = flags not in (0, 7)
    c = Case("sp-add-fp16" + ("-flags-refused" if refused else "-flags" if flags else ""),
             "SP TensorAdd_SP on fp16: a 3x2x2 image (rows 8 bytes apart, slices 24) plus b of the same shape "
             "(word 34, rows 6 bytes apart: word 32), b's scale 1.0 (words 23/27), bounds +-inf (words 29, 30), "
             "no circular buffer (word 35 0x17ffffff) -> 3x2x2 (rows 6 bytes apart): negative sums kept, a sum "
             "below the normal range, a tie" + ("; word 27 bits 23-25 and word 28 bits 2-4 %d: %s" % (
                 flags, "refused" if refused else "the same sum") if flags else ""),
             "numpy: a + b exactly (Fractions), rounded to a half (to nearest, ties to even), below the normal "
             "range 0" if not refused else "doc/cpu-backend.md, fp16 NN-engine operations: those bits, "
             "but 0 and 7, are refused (nnf16-field-unsupported)")
    rs = np.random.RandomState(48)
    x, y, z, row, slc, brow, orow = 3, 2, 2, 8, 24, 6, 6
    a = rs.uniform(-8, 8, (z, y, x)).astype(np.float16)
    b = rs.uniform(-8, 8, (z, y, x)).astype(np.float16)
    a[0, 0, 0], b[0, 0, 0] = np.float16(2.0 ** -14), np.float16(-2.0 ** -15)   # 2^-15: subnormal, 0
    a[1, 1, 2], b[1, 1, 2] = np.float16(2048), np.float16(1)                    # 2049: a tie, to 2048
    img = np.zeros(slc * z // 2, np.uint16)
    for k in range(z):
        for j in range(y):
            img[(k * slc + j * row) // 2:(k * slc + j * row) // 2 + x] = a[k, j].view(np.uint16)
    c.add_input(img.view(np.uint8), [img.size], FP16)
    bimg = np.zeros(brow * y * z // 2, np.uint16)
    for k in range(z):
        for j in range(y):
            bimg[(k * y + j) * brow // 2:(k * y + j) * brow // 2 + x] = b[k, j].view(np.uint16)
    c.add_input(bimg.view(np.uint8), [bimg.size], FP16)
    op = c.add_op(OP_SP, "TensorAdd_SP")
    op["fields"] += [("kernel_xy_size", 1), ("kernel_z_size", z), ("kernel_data_type", 1),
                     ("in_image_x_size", x), ("in_image_y_size", y), ("in_image_data_type", 1),
                     ("out_image_data_type", 1), ("out_image_x_size", x), ("out_image_y_size", y),
                     ("out_image_z_size", z), ("in_image_x_stride", row), ("in_image_y_stride", slc),
                     ("out_image_x_stride", orow), ("out_image_y_stride", orow * y),
                     ("post_shift", 31), ("post_shift_bit_5_6", 3)]
    one = f32_bits(1.0)
    op["words"] += [(23, (one << 2) & 0xFFFFFFFF), (27, (one >> 30) << 31 | flags << 23),
                    (28, flags << 2), (29, 0x7F800000), (30, 0xFF800000)]
    second_image(op, brow, y)
    field_addr(op, "in_image_address", INPUT, 0, 0)
    field_addr(op, "out_image_address", OUTPUT, 0, 0)
    out = np.zeros(orow * y * z // 2, np.uint16)
    for k in range(z):
        for j in range(y):
            for i in range(x):
                out[(k * y + j) * orow // 2 + i] = f16_round(Fraction(float(a[k, j, i])) + Fraction(float(b[k, j, i])))
    c.add_output(flush_subnormal(out.view(np.uint8).tolist()) if not refused else np.zeros(out.size * 2, np.uint8),
                 [out.size], FP16)
    if refused:
        c.refused = "nnf16-field-unsupported"
    return c


def nnlut_input(i, sign):
    """The half-precision bits entry i of an NN_LUT table on fp16 data
    holds its function at (doc/weights.md, "Lookup tables of the NN
    engine"): the exponent's top bit flipped; the sign from bit 9 of i
    where the tail's bit 28 is set."""
    if sign:
        return (((i & 511) << 6) ^ 0x4000) | (0x8000 if i & 512 else 0)
    return ((i << 5) & 0xFFFF) ^ 0x4000


def fp21_round(v):
    """A Fraction rounded to the 32-bit entries' float (15 mantissa bits,
    to nearest), clamped to its largest value; 0 below 2^-14."""
    a = abs(Fraction(v))
    if a < Fraction(1, 1 << 14):
        return Fraction(0)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    q = Fraction(round(a / Fraction(2) ** e * 32768), 32768) * Fraction(2) ** e
    q = min(q, Fraction(65535))
    return q if v > 0 else -q


def nn_lut_case(sign):
    """An fp16 NN_LUT table (layer ActivationLayer): the square with the
    tail's sign bit (entries at sign, exponent and 4 mantissa bits), the
    reciprocal square root without it (exponent and 5 mantissa bits, an
    exponent-0 input read as (1 + m / 1024) x 2^-15 by the table's maker)."""
    name = "square" if sign else "rsqrt"
    c = Case("nn-lut-fp16-" + name,
             "NN_LUT ActivationLayer on fp16: a 4x3x2 image (rows 10 bytes apart, slices 32) through a table of "
             + ("x^2 (tail bits 28 and 24 set: negative inputs, 6 bits interpolated), inputs in [-6, 6], values just "
                "below 2 (the next entry is entry 0), -0, 300 (past the largest half)" if sign else
                "1 / sqrt(x) (tail bit 28 clear: 5 bits interpolated), inputs in (0, 40], +0 and a subnormal "
                "(the maker's reading of exponent 0), a negative input (its magnitude's value negated)")
             + " -> 4x3x2 (rows 8 bytes apart)",
             "numpy: the entry of the input's top bits plus (next entry - entry) x the remaining bits / 2^6 "
             "(2^5), in Python fractions, rounded to a half (to nearest, ties to even), below the normal range 0")
    rs = np.random.RandomState(49 + sign)
    w, h, ch, row, slc, orow = 4, 3, 2, 10, 32, 8
    x = (rs.uniform(-6, 6, (ch, h, w)) if sign else rs.uniform(0.001, 40, (ch, h, w))).astype(np.float16)
    if sign:
        x[0, 0, :3] = np.array([1.99, 1.9999, -1.97], np.float16)
        x[1, 2, 3], x[1, 1, 1] = np.float16(-0.0), np.float16(300)
    else:
        x[0, 0, :3] = np.array([0.0, 2.0 ** -20, 1.999], np.float16)
        x[1, 2, 3] = np.float16(-0.3)
    def f(b):
        if sign:
            v = Fraction(float(np.uint16(b).view(np.float16)))
            return v * v
        e, m = b >> 10 & 31, b & 0x3FF
        v = Fraction(1024 + m, 1024) * Fraction(2) ** (e - 15 if e else -15)
        r = Fraction(1) / Fraction(math.sqrt(v))   # the double's square root, then the entry's rounding
        return r
    vals, words = [], []
    for i in range(1024):
        b = nnlut_input(i, sign)
        v = fp21_round(f(b)) if (b & 0x7C00) != 0x7C00 or not sign else Fraction(65535)
        vals.append(v)
        words.append(lut32_word(v))
    tail = [1 << 28 | 1 << 24 if sign else 0, 0, 0]   # bit 24 clear: the logistic tables' mapping
    table = c.add_raw(np.frombuffer(struct.pack("<1027I", *(words + tail)), np.uint8))
    img = np.zeros(slc * ch // 2, np.uint16)
    for k in range(ch):
        for j in range(h):
            img[(k * slc + j * row) // 2:(k * slc + j * row) // 2 + w] = x[k, j].view(np.uint16)
    c.add_input(img.view(np.uint8), [img.size], FP16)
    op = c.add_op(7, "ActivationLayer")
    op["fields"] += [("kernel_xy_size", 1), ("kernel_z_size", 1), ("kernels_per_core", 1), ("depthwise", 1),
                     ("in_image_x_size", w), ("in_image_y_size", h), ("out_image_x_size", w),
                     ("out_image_y_size", h), ("out_image_z_size", ch), ("in_image_x_stride", row),
                     ("in_image_y_stride", slc), ("out_image_x_stride", orow),
                     ("out_image_y_stride", orow * h), ("kernel_data_type", 1), ("in_image_data_type", 1),
                     ("out_image_data_type", 1), ("post_shift", 31), ("post_shift_bit_5_6", 3)]
    field_addr(op, "kernel_address", MISC_DYNA_GENERIC, table, 0)
    field_addr(op, "in_image_address", INPUT, 0, 0)
    field_addr(op, "out_image_address", OUTPUT, 0, 0)
    step = 64 if sign else 32
    index = lambda b, neg: (((b ^ 0x4000) >> 6) | (512 if neg else 0)) if sign else ((b ^ 0x4000) >> 5) & 1023
    out = np.zeros(orow * h * ch // 2, np.uint16)
    for k in range(ch):
        for j in range(h):
            for i in range(w):
                b = int(x[k, j, i].view(np.uint16))
                mag, neg = b & 0x7FFF, bool(b & 0x8000)
                base = mag & ~(step - 1)
                v = vals[index(base, neg)]
                if mag != base and base + step <= 0x7FFF:
                    v += (vals[index(base + step, neg)] - v) * Fraction(mag - base, step)
                # exact in a double and a float (entries of 16 significant bits plus 6 bits of the
                # interpolation): its ties are the backend's ties
                assert Fraction(float(np.float32(float(v)))) == v
                out[(k * h + j) * orow // 2 + i] = f16_round(-v if neg and not sign else v)
    c.add_output(flush_subnormal(out.view(np.uint8).tolist()), [out.size], FP16)
    return c


def nn_lut_int16_case():
    """An NN_LUT table on int16 codes in and out (the int16 blendshapes
    file's op 7: the tail's bits 28 and 24 set, a table of (v / 128)^2 at
    the entry of input v): the code read as a half's value, the entry of
    its sign, exponent and 4 mantissa bits, then linearly by all the bits
    below them (a code above 2,048 has more than a half holds)."""
    c = Case("nn-lut-int16", "NN_LUT ActivationLayer on int16 codes (in, out and kernel data type 4): a 4x3x1 "
             "image (rows 10 bytes apart) through a table of (v / 128)^2 (tail bits 28 and 24 set) -> 4x3x1 "
             "(rows 8 bytes apart): codes past 2,048 (7 to 10 bits interpolated), negative codes, 0, ties, "
             "a result past 32,767 (saturated)",
             "numpy: the entry of the code's sign, exponent and 4 mantissa bits plus (next entry - entry) x "
             "the bits below / their step, in Python fractions, rounded half away from zero, saturated")
    rs = np.random.RandomState(63)
    w, h, row, orow = 4, 3, 10, 8
    x = rs.randint(-3000, 3000, (h, w))
    x[0, 0], x[0, 1], x[0, 2], x[0, 3] = 0, 30000, -5, 2049
    x[1, 0] = 181                               # 181 = 176 + 5: 4 of 16 units interpolated
    f = lambda v: v * v / Fraction(128 * 128)
    vals, words = [], []
    for i in range(1024):
        b = nnlut_input(i, 1)
        v = fp21_round(f(Fraction(float(np.uint16(b).view(np.float16))))) if (b & 0x7C00) != 0x7C00 \
            else Fraction(65535)
        vals.append(v)
        words.append(lut32_word(v))
    tail = [1 << 28 | 1 << 24, 0, 0]
    table = c.add_raw(np.frombuffer(struct.pack("<1027I", *(words + tail)), np.uint8))
    img = np.zeros(row * h // 2, np.uint16)
    for j in range(h):
        img[j * row // 2:j * row // 2 + w] = x[j].astype(np.int16).view(np.uint16)
    c.add_input(img.view(np.uint8), [img.size], FP16)
    op = c.add_op(7, "ActivationLayer")
    op["fields"] += [("kernel_xy_size", 1), ("kernel_z_size", 1), ("kernels_per_core", 1), ("depthwise", 1),
                     ("in_image_x_size", w), ("in_image_y_size", h), ("out_image_x_size", w),
                     ("out_image_y_size", h), ("out_image_z_size", 1), ("in_image_x_stride", row),
                     ("in_image_y_stride", row * h), ("out_image_x_stride", orow),
                     ("out_image_y_stride", orow * h), ("kernel_data_type", 0), ("kernel_data_type_bit_2", 1),
                     ("in_image_data_type", 0), ("in_image_data_type_bit_2", 1), ("out_image_data_type", 0),
                     ("out_image_data_type_bit_2", 1), ("post_shift", 31), ("post_shift_bit_5_6", 3)]
    field_addr(op, "kernel_address", MISC_DYNA_GENERIC, table, 0)
    field_addr(op, "in_image_address", INPUT, 0, 0)
    field_addr(op, "out_image_address", OUTPUT, 0, 0)
    index = lambda b, neg: ((b ^ 0x4000) >> 6) | (512 if neg else 0)
    half = lambda m: int(np.float16(m).view(np.uint16))
    out = np.zeros(orow * h // 2, np.uint16)
    for j in range(h):
        for i in range(w):
            code = int(x[j, i])
            m, neg = abs(code), code < 0
            e = m.bit_length() - 1
            step = 1 << (e - 4) if e > 4 else 1
            base = m - m % step
            v = vals[index(half(base), neg)]
            if m != base:
                v += (vals[index(half(base + step), neg)] - v) * Fraction(m - base, step)
            q = max(-32768, min(32767, round_half_away(v)))
            out[j * orow // 2 + i] = q & 0xFFFF
    assert out[1] == 32767
    c.add_output(out.view(np.uint8), [out.size], FP16)
    return c


def nn_sp_scale_int16_case(to_int16):
    """An SP scaling between fp16 and int16 (layer TensorAdd_SP of one
    operation, no second image, as the int16 blendshapes file's variance +
    epsilon: fp16 in, int16 codes out at scale 2^13, word 27 bit 30 the
    exponent's eighth bit), or back (int16 codes in at scale 2^-13, fp16
    out): out = x x k, an int16 result rounded half away from zero and
    saturated."""
    k = Fraction(1 << 13) if to_int16 else Fraction(1, 1 << 13)
    c = Case("nn-sp-scale-" + ("f16-int16" if to_int16 else "int16-f16"),
             "SP TensorAdd_SP of one operation with no second image: a 3x2x1 %s image (rows 8 bytes apart) "
             "times %s (the SP scale) -> %s (rows 6 bytes apart)%s" %
             (("fp16", "2^13", "int16 codes", ": ties both ways, saturation both ways") if to_int16 else
              ("int16 codes", "2^-13", "fp16", ": -32768, 0, a subnormal result (0)")),
             "numpy: x x k exactly (Fractions), %s" %
             ("rounded half away from zero, saturated to int16" if to_int16 else
              "rounded to a half (to nearest, ties to even), below the normal range 0"))
    rs = np.random.RandomState(64 + to_int16)
    x, y, row, orow = 3, 2, 8, 6
    if to_int16:
        a = (rs.randint(-3000, 3000, (y, x)) / 1024.0).astype(np.float16)
        a[0, 0], a[0, 1], a[0, 2] = np.float16(5.0), np.float16(-5.0), np.float16(2.0 ** -14)   # 2^-1: a tie
        a[1, 0] = np.float16(-3.0 * 2.0 ** -14)                                                # -1.5: a tie
        codes = a.view(np.uint16)
        vals = [Fraction(float(v)) for v in a.ravel()]
    else:
        a = rs.randint(-32768, 32768, (y, x))
        a[0, 0], a[0, 1], a[0, 2] = -32768, 0, 1
        codes = a.astype(np.int16).view(np.uint16)
        vals = [Fraction(int(v)) for v in a.ravel()]
    img = np.zeros(row * y // 2, np.uint16)
    for j in range(y):
        img[j * row // 2:j * row // 2 + x] = codes[j]
    c.add_input(img.view(np.uint8), [img.size], FP16)
    op = c.add_op(OP_SP, "TensorAdd_SP")
    op["fields"] += [("kernel_xy_size", 1), ("kernel_z_size", 1),
                     ("kernel_data_type", 1 if to_int16 else 0), ("kernel_data_type_bit_2", 0 if to_int16 else 1),
                     ("in_image_x_size", x), ("in_image_y_size", y),
                     ("in_image_data_type", 1 if to_int16 else 0), ("in_image_data_type_bit_2", 0 if to_int16 else 1),
                     ("out_image_data_type", 0 if to_int16 else 1), ("out_image_data_type_bit_2", 1 if to_int16 else 0),
                     ("out_image_x_size", x), ("out_image_y_size", y), ("out_image_z_size", 1),
                     ("in_image_x_stride", row), ("in_image_y_stride", row * y),
                     ("out_image_x_stride", orow), ("out_image_y_stride", orow * y)]
    sp_scale(op, float(k))
    op["words"] += [(29, 0x7F800000), (30, 0xFF800000), (35, 0x07FFFFFF)]
    field_addr(op, "in_image_address", INPUT, 0, 0)
    field_addr(op, "out_image_address", OUTPUT, 0, 0)
    out = np.zeros(orow * y // 2, np.uint16)
    for j in range(y):
        for i in range(x):
            v = vals[j * x + i] * k
            out[j * orow // 2 + i] = (max(-32768, min(32767, round_half_away(v))) & 0xFFFF) if to_int16 \
                else f16_round(v)
    if to_int16:
        assert out[0] == 32767 and out[1] == 0x8000 and out[2] == 1 and out[orow // 2] == 0xFFFE
        c.add_output(out.view(np.uint8), [out.size], FP16)
    else:
        c.add_output(flush_subnormal(out.view(np.uint8).tolist()), [out.size], FP16)
    return c


# The uniforms after the three images of the A733 fp16 TensorDiv and
# TensorMul shaders, as every such shader of the corpus loads them (index,
# value): lib/cpu/ops/shelt.c.
SHDIV_WORDS = [
    (24, 0x00000000), (25, 0x3F800000), (26, 0x3F800000), (27, 0x00000000), (28, 0x00000000),
    (32, 0x09090909), (33, 0x04040404), (34, 0x00010000), (35, 0x00030002), (36, 0x0A0A0A0A),
    (37, 0x00000000), (38, 0x00000000), (39, 0x00000100), (40, 0x3C003C00), (41, 0x00000000),
    (42, 0x3C003C00), (43, 0x00000000), (44, 0x3C003C00), (45, 0x00000000), (46, 0x3C003C00),
    (47, 0x00000000), (48, 0x09090909), (49, 0x04040404), (50, 0x00050004), (51, 0x00070006),
    (52, 0x0A0A0A0A), (53, 0x00000000), (54, 0x00000000), (55, 0x00000100), (56, 0x3C003C00),
    (57, 0x00000000), (58, 0x3C003C00), (59, 0x00000000), (60, 0x3C003C00), (61, 0x00000000),
    (62, 0x3C003C00), (63, 0x00000000), (64, 0x00000000), (68, 0x11111111), (69, 0x11110000),
    (70, 0x06040200), (71, 0x06040200), (72, 0x22222222), (73, 0x00000000), (74, 0x00000000),
    (75, 0x00000100), (76, 0x00003C00), (77, 0x00003C00), (78, 0x00003C00), (79, 0x00003C00)]
SHMUL_WORDS = [
    (24, 0x29292929), (25, 0x10101010), (26, 0x01110000), (27, 0x03330222), (28, 0x29292929),
    (29, 0x00010000), (30, 0x00030002), (31, 0x00000300), (32, 0x00000000), (33, 0x00000000),
    (34, 0x00000000), (35, 0x00000000), (36, 0x00000000), (37, 0x00000000), (38, 0x00000000),
    (39, 0x00000000), (40, 0x29292929), (41, 0x10101010), (42, 0x05550444), (43, 0x07770666),
    (44, 0x29292929), (45, 0x00050004), (46, 0x00070006), (47, 0x00000300), (48, 0x00000000),
    (49, 0x00000000), (50, 0x00000000), (51, 0x00000000), (52, 0x00000000), (53, 0x00000000),
    (54, 0x00000000), (55, 0x00000000), (56, 0x3F800000), (57, 0x00000000), (60, 0x11111111),
    (61, 0x11110000), (62, 0x06040200), (63, 0x06040200), (64, 0x22222222), (65, 0x00000000),
    (66, 0x00000000), (67, 0x00000100), (68, 0x00003C00), (69, 0x00003C00), (70, 0x00003C00),
    (71, 0x00003C00), (72, 0x00003C00), (73, 0x00003C00), (74, 0x00003C00), (75, 0x00003C00)]
SHF16_FMT, SHF16_FMT_ROWS = 0x44404071, 0x44405071


def shf16_case(div, refused=False):
    """An fp16 TensorMul (input 0 1x4x2 planar, rows 2 bytes apart, times a
    3x1x1 constant of the COEF_DATA_TABLE: 3x4x2) or TensorDiv (input 0
    5x2x1, rows 16 bytes apart, over a 1x1x1 input: 5x2x1) shader;
    refused: the TensorMul with 0x360e0 = 2.0."""
    what = "TensorDiv" if div else "TensorMul"
    c = Case("sh-%s-fp16%s" % ("div" if div else "mul", "-refused" if refused else ""),
             "SH %s on fp16 (A733 layout: images 0x36000, 0x36020, 0x36040, format words 0x44404071 / "
             "0x44405071, the other uniforms the corpus's): " % what +
             ("5x2x1 (rows 16 bytes apart) / a 1x1x1 input (broadcast): a quotient below the normal range"
              if div else "1x4x2 x a 3x1x1 constant (COEF_DATA_TABLE) -> 3x4x2, both broadcast") +
             ("; uniform 0x360e0 2.0 instead of 1.0: refused" if refused else ""),
             "numpy: the exact %s of the halves (Fractions), rounded to a half (to nearest, ties to even), "
             "below the normal range 0" % ("quotient" if div else "product") if not refused else
             "doc/cpu-backend.md, The fp16 TensorMul and TensorDiv shaders: another uniform value is refused "
             "(shf16-uniforms-unknown)")
    rs = np.random.RandomState(53 + div)
    u = {}
    for i, v in (SHDIV_WORDS if div else SHMUL_WORDS):
        u[i] = v
    if refused:
        u[0x38] = f32_bits(2.0)
    if div:
        a = rs.uniform(-30, 30, (2, 5)).astype(np.float16)
        b = np.float16(-3.0)
        a[0, 0] = np.float16(2.0 ** -13)               # 2^-13 / -3: below the normal range
        img = np.zeros(16, np.uint16)
        for j in range(2):
            img[8 * j:8 * j + 5] = a[j].view(np.uint16)
        c.add_input(img.view(np.uint8), [16], FP16)
        c.add_input(np.frombuffer(np.array([b]).tobytes(), np.uint8), [1], FP16)
        put(u, 1, image_words(16, 5, 2, SHF16_FMT_ROWS, 32, 1))
        put(u, 9, image_words(2, 1, 1, SHF16_FMT, 2, 1))
        put(u, 17, image_words(10, 5, 2, SHF16_FMT_ROWS, 20, 1))
        images = [(0, (INPUT, 0, 0)), (8, (INPUT, 1, 0)), (16, (OUTPUT, 0, 0))]
        exact = [[Fraction(float(a[j, i])) / Fraction(float(b)) for i in range(5)] for j in range(2)]
    else:
        a = rs.uniform(-4, 4, (2, 4)).astype(np.float16)
        g = rs.uniform(-2, 2, 3).astype(np.float16)
        a[0, 0], g[0] = np.float16(2.0 ** -10), np.float16(2.0 ** -6)   # a product below the normal range
        c.add_input(np.frombuffer(a.tobytes(), np.uint8), [8], FP16)
        gamma = c.add_raw(np.frombuffer(g.tobytes(), np.uint8))
        put(u, 1, image_words(2, 1, 4, SHF16_FMT_ROWS, 8, 2))
        put(u, 9, image_words(6, 3, 1, SHF16_FMT, 6, 1))
        put(u, 17, image_words(6, 3, 4, SHF16_FMT_ROWS, 24, 2))
        images = [(0, (INPUT, 0, 0)), (8, (MISC_DYNA_GENERIC, gamma, 0)), (16, (OUTPUT, 0, 0))]
        exact = [[Fraction(float(a[k, j])) * Fraction(float(g[i])) for i in range(3)] for k in range(2) for j in range(4)]
    for i in (6, 14, 22):
        u[i] = 0x10DD10B0
    sh_op(c, what, u, images)
    vals = [v for row in exact for v in row]
    out = [b for v in vals for b in f16_le([v], True)]
    if refused:
        c.refused = "shf16-uniforms-unknown"
        out = [0] * len(out)
    c.add_output(flush_subnormal(out), [len(vals)], FP16)
    return c


def nn_mul_int16_case():
    """The int16 blendshapes file's NN TensorMul (op 42): a 1x1 depthwise
    command with no kernel reference, int16 codes in and out, times the
    int16 codes of its second image (words 32-35), its scale 2^-12
    (post_shift 19 | 3 << 5), bounds float32(32767 x 2^-12) and
    float32(-32768 x 2^-12) (words 29, 30)."""
    x, y, z, row, slc, orow, brow = 3, 2, 2, 8, 24, 6, 6
    c = Case("nn-int16-mul", "NN TensorMul on int16 codes, a 1x1 depthwise command with no kernel reference "
             "times b of the same shape (word 34, rows 6 bytes apart: word 32), scale 2^-12, bounds the int16 "
             "range x 2^-12 (words 29, 30): a 3x2x2 image (rows 8 bytes apart, slices 24) -> 3x2x2 (rows 6 "
             "bytes apart): ties both ways, saturation both ways",
             "numpy: the exact a x b x 2^-12 (Fractions), rounded half away from zero, saturated to int16")
    rs = np.random.RandomState(68)
    a = rs.randint(-8000, 8000, (z, y, x))
    b = rs.randint(-8000, 8000, (z, y, x))
    a[0, 0, 0], b[0, 0, 0] = 2048, 3            # 1.5: to 2
    a[0, 0, 1], b[0, 0, 1] = -2048, 3           # -1.5: to -2
    a[1, 1, 2], b[1, 1, 2] = 20000, 20000       # 97656.25: 32767
    a[1, 1, 1], b[1, 1, 1] = -20000, 20000      # -32768
    c.add_input(f16_image(a.astype(np.int16), row, slc), [slc * z // 2], FP16)       # int16 codes
    c.add_input(f16_image(b.astype(np.int16), brow, brow * y), [brow * y * z // 2], FP16)
    op = c.add_op(OP_NN, "TensorMul")
    op["fields"] += [("kernel_xy_size", 1), ("kernel_z_size", z), ("kernel_data_type", 0),
                     ("kernel_data_type_bit_2", 1), ("kernels_per_core", z), ("depthwise", 1),
                     ("in_image_x_size", x), ("in_image_y_size", y), ("in_image_data_type", 0),
                     ("in_image_data_type_bit_2", 1), ("out_image_data_type", 0), ("out_image_data_type_bit_2", 1),
                     ("out_image_x_size", x), ("out_image_y_size", y), ("out_image_z_size", z),
                     ("in_image_x_stride", row), ("in_image_y_stride", slc),
                     ("out_image_x_stride", orow), ("out_image_y_stride", orow * y),
                     ("post_shift", 19), ("post_shift_bit_5_6", 3)]
    op["words"] += [(29, f32_bits(32767 * 2.0 ** -12)), (30, f32_bits(-32768 * 2.0 ** -12))]
    second_image(op, brow, y)
    field_addr(op, "in_image_address", INPUT, 0, 0)
    field_addr(op, "out_image_address", OUTPUT, 0, 0)
    q = np.array([max(-32768, min(32767, round_half_away(Fraction(int(u) * int(v), 1 << 12))))
                  for u, v in zip(a.ravel(), b.ravel())], np.int16).reshape(z, y, x)
    assert q[0, 0, 0] == 2 and q[0, 0, 1] == -2 and q[1, 1, 2] == 32767 and q[1, 1, 1] == -32768
    out = f16_image(q, orow, orow * y)             # int16 codes, rows orow bytes apart
    c.add_output(out, [out.size // 2], FP16)
    return c


SHI16_FMT, SHI16_FMT_ROWS = 0x444040F1, 0x444050F1
# the int16 shaders' last lane table (lib/cpu/ops/shelt.c): TensorMul's
# words 60-75, TensorDiv's 68-79
SHI16_LANES = [0x33333333, 0x11110000, 0x03020100, 0x03020100, 0, 0, 0, 0x00002400, 0, 0, 0, 0, 0, 0, 0, 0]


def shi16_case(div):
    """The int16 blendshapes file's int16 shaders: TensorDiv (input 0 int16
    codes 5x2x1, rows 16 bytes apart, over a 1x1x1 fp16 input, into int16:
    code0 x u[0x36064] / h1 x u[0x36068], 2^-7 and 2^14) and TensorMul
    (1x4x2 int16 times a 3x1x1 int16 constant of the COEF_DATA_TABLE,
    into int16: code0 x code1 x u[0x360e0], 2^-14)."""
    what = "TensorDiv" if div else "TensorMul"
    c = Case("sh-%s-int16" % ("div" if div else "mul"),
             "SH %s on int16 codes (format words 0x444040f1 / 0x444050f1, the int16 lane table): " % what +
             ("5x2x1 int16 (rows 16 bytes apart) x 2^-7 / a 1x1x1 fp16 input (broadcast) x 2^14 -> int16: "
              "saturation both ways" if div else
              "1x4x2 int16 x a 3x1x1 int16 constant (COEF_DATA_TABLE) x 2^-14 -> 3x4x2 int16, both broadcast: "
              "ties both ways, saturation"),
             "numpy: the exact %s (Fractions), rounded half away from zero, saturated to int16" %
             ("code0 x 2^-7 / h1 x 2^14" if div else "code0 x code1 x 2^-14"))
    rs = np.random.RandomState(66 + div)
    u = {}
    for i, v in (SHDIV_WORDS if div else SHMUL_WORDS):
        u[i] = v
    for i, v in enumerate(SHI16_LANES[:12 if div else 16]):
        u[(68 if div else 60) + i] = v
    if div:
        u[25], u[26] = f32_bits(2.0 ** -7), f32_bits(2.0 ** 14)
        a = rs.randint(-32768, 32768, (2, 5))
        b = np.float16(-3.0)
        a[0, 0], a[0, 1], a[0, 2] = 1, 1000, -1000   # 1000 x 2^7 / 3 = 42666.7: saturated both ways
        img = np.zeros(16, np.uint16)
        for j in range(2):
            img[8 * j:8 * j + 5] = a[j].astype(np.int16).view(np.uint16)
        c.add_input(img.view(np.uint8), [16], FP16)
        c.add_input(np.frombuffer(np.array([b]).tobytes(), np.uint8), [1], FP16)
        put(u, 1, image_words(16, 5, 2, SHI16_FMT_ROWS, 32, 1))
        put(u, 9, image_words(2, 1, 1, SHF16_FMT, 2, 1))
        put(u, 17, image_words(10, 5, 2, SHI16_FMT_ROWS, 20, 1))
        images = [(0, (INPUT, 0, 0)), (8, (INPUT, 1, 0)), (16, (OUTPUT, 0, 0))]
        exact = [[Fraction(int(a[j, i]), 1 << 7) / Fraction(float(b)) * (1 << 14) for i in range(5)]
                 for j in range(2)]
    else:
        u[56] = f32_bits(2.0 ** -14)
        a = rs.randint(-20000, 20000, (2, 4))
        g = rs.randint(-20000, 20000, 3)
        a[0, 0], g[0] = 8192, 3                       # 1.5: a tie, to 2
        a[0, 1] = -8192                               # -1.5: to -2
        a[1, 3], g[2] = 30000, 30000                  # 54931.6: saturated
        c.add_input(a.astype(np.int16).view(np.uint8), [8], FP16)
        gamma = c.add_raw(g.astype(np.int16).view(np.uint8))
        put(u, 1, image_words(2, 1, 4, SHI16_FMT_ROWS, 8, 2))
        put(u, 9, image_words(6, 3, 1, SHI16_FMT, 6, 1))
        put(u, 17, image_words(6, 3, 4, SHI16_FMT_ROWS, 24, 2))
        images = [(0, (INPUT, 0, 0)), (8, (MISC_DYNA_GENERIC, gamma, 0)), (16, (OUTPUT, 0, 0))]
        exact = [[Fraction(int(a[k, j]) * int(g[i]), 1 << 14) for i in range(3)] for k in range(2) for j in range(4)]
    for i in (6, 14, 22):
        u[i] = 0x10DD10B0
    sh_op(c, what, u, images)
    q = [max(-32768, min(32767, round_half_away(v))) for row in exact for v in row]
    if div:
        assert q[1] == -32768 and q[2] == 32767
    else:
        assert q[0] == 2 and q[3] == -2 and q[23] == 32767
    c.add_output(np.array(q, np.int16).view(np.uint8), [len(q)], FP16)
    return c


def f16_image(vals, row, slc):
    """z x y x x halves into rows `row` bytes and slices `slc` bytes apart."""
    z, y, x = vals.shape
    img = np.zeros(slc * z // 2, np.uint16)
    for k in range(z):
        for j in range(y):
            img[(k * slc + j * row) // 2:(k * slc + j * row) // 2 + x] = vals[k, j].view(np.uint16)
    return img.view(np.uint8)


def nnf16_elt_case(kind):
    """The fp16 NN-engine elementwise operations without kernels: a
    TensorMul_SP layer of one SP operation (its input times its scale 0.5),
    an ActivationLayer_SP one (negated: word 27 bit 28), a TensorMul
    layer's 1x1 depthwise NN command times the second image of its words
    32-35 (bounds +-65504)."""
    x, y, z, row, slc, orow = 3, 2, 2, 8, 24, 6
    title = {"scale": "SP TensorMul_SP on fp16, one operation of scale 0.5 (post_shift 30 | 3 << 5)",
             "negate": "SP ActivationLayer_SP on fp16, one operation, word 27 bit 28 (the negation), scale 1",
             "add0": "SP TensorAdd_SP on fp16, one operation with no second image (words 23, 34 0), scale 1",
             "mul": "NN TensorMul on fp16, a 1x1 depthwise command with no kernel reference times b of the "
                    "same shape (word 34, rows 6 bytes apart: word 32), bounds +-65504 (words 29, 30)"}[kind]
    c = Case("nn-f16-" + kind, title + ": a 3x2x2 image (rows 8 bytes apart, slices 24) -> 3x2x2 (rows 6 bytes "
             "apart): " + {"scale": "a result below the normal range, -0",
                           "negate": "+0 and -0, the largest half",
                           "add0": "-0, the largest half, the smallest normal half",
                           "mul": "a product past the largest half (65504), one below the normal range"}[kind],
             "numpy: the exact %s (Fractions), rounded to a half (to nearest, ties to even), below the normal "
             "range 0%s" % ({"scale": "x / 2", "negate": "-x", "mul": "a x b", "add0": "x"}[kind],
                            ", past the largest half +-65504" if kind == "mul" else ""))
    rs = np.random.RandomState(60 + len(kind))
    a = rs.uniform(-8, 8, (z, y, x)).astype(np.float16)
    b = rs.uniform(-8, 8, (z, y, x)).astype(np.float16)
    a[0, 0, 0], a[0, 0, 1], a[1, 1, 2] = np.float16(2.0 ** -14), np.float16(-0.0), np.float16(65504)
    if kind == "negate":
        a[0, 0, 0] = np.float16(0.0)
    b[0, 0, 0], b[1, 1, 2] = np.float16(0.25), np.float16(4)
    c.add_input(f16_image(a, row, slc), [slc * z // 2], FP16)
    layer = {"scale": "TensorMul_SP", "negate": "ActivationLayer_SP", "mul": "TensorMul", "add0": "TensorAdd_SP"}[kind]
    op = c.add_op(OP_NN if kind == "mul" else OP_SP, layer)
    op["fields"] += [("kernel_xy_size", 1), ("kernel_z_size", z), ("kernel_data_type", 1),
                     ("in_image_x_size", x), ("in_image_y_size", y), ("in_image_data_type", 1),
                     ("out_image_data_type", 1), ("out_image_x_size", x), ("out_image_y_size", y),
                     ("out_image_z_size", z), ("in_image_x_stride", row), ("in_image_y_stride", slc),
                     ("out_image_x_stride", orow), ("out_image_y_stride", orow * y),
                     ("post_shift", 30 if kind == "scale" else 31), ("post_shift_bit_5_6", 3)]
    if kind == "mul":
        op["fields"] += [("kernels_per_core", z), ("depthwise", 1)]
        brow = 6
        c.add_input(f16_image(b, brow, brow * y), [brow * y * z // 2], FP16)
        op["words"] += [(29, 0x477FE000), (30, 0xC77FE000)]
        second_image(op, brow, y)
        exact = [Fraction(float(u)) * Fraction(float(v)) for u, v in zip(a.ravel(), b.ravel())]
    else:
        op["words"] += [(27, 1 << 28 if kind == "negate" else 0), (29, 0x7F800000), (30, 0xFF800000),
                        (35, 0x07FFFFFF)]
        k = {"negate": -1, "scale": Fraction(1, 2), "add0": 1}[kind]
        exact = [Fraction(float(u)) * k for u in a.ravel()]
    field_addr(op, "in_image_address", INPUT, 0, 0)
    field_addr(op, "out_image_address", OUTPUT, 0, 0)
    halves = [f16_round(v) for v in exact]
    if kind == "mul":
        halves = [(h & 0x8000) | 0x7BFF if h & 0x7FFF == 0x7C00 else h for h in halves]
        assert any(h & 0x7FFF == 0x7BFF for h in halves)
    out = np.zeros(orow * y * z // 2, np.uint16)
    hv = np.array(halves, np.uint16).reshape(z, y, x)
    for k in range(z):
        for j in range(y):
            out[(k * y + j) * orow // 2:(k * y + j) * orow // 2 + x] = hv[k, j]
    c.add_output(flush_subnormal(out.view(np.uint8).tolist()), [out.size], FP16)
    return c


def all_cases():
    return (nn_cases() + nn_int8_cases() + nn_wide_cases() + [nn_ring_case(), nn_tile_case(0), nn_tile_case(1), nn_tile_case(2),
            nn_interleaved_case(), nn_fc7d_case(), nn_fused_add_case(0), nn_fused_add_case(1)] +
            tp_copy_cases() + [tp_pool_case()] + tp_ring_cases() +
            [tp_f16_case(), lut_case(), lut_swapped_case()] + lut_f16_cases() + [tp_int8_case(), tp_u8_scaled_case(), tpfc_case(),
             tpfc_s8_case(), tpfc_s8_case(0)] +
            [softmax_case(), softmax_int8_case(), softmax_column_case(), avgpool_case(), shadd_case(0), shadd_case(1),
             shadd_int8_case(), shscale_case(), shscale_int8_case(), shmax_case(), shmax_int8_case(),
             shconv_case(), shconv_f32_case(), shdw16_case(),
             shf32_other_program_case("ActivationLayer", 0x44404032, [[128, 1 << 16 | 32], [128, 1 << 16 | 32]]),
             shf32_other_program_case("Max Pooling", 0x32101034, [[64, 2 << 16 | 4], [32, 1 << 16 | 2]])] + spmax_cases() +
            [spmean_case("sp-mean-x", 0), spmean_case("sp-mean-z", 2),
             spmean_case("sp-mean-int16", 2, 11), spmean_scale_refused_case(), spsum_case(), spmul_case(), spmul_int16_case(),
             spsub_case("sp-sub-fp16-int16", 0), spsub_case("sp-sub-int16-fp16", 1)] +
            [tpfc_in_zp_case(), nn_scale_0xad_case(), shmax_win_case(), shavg_win_case()] + tpfc_relu_case() + [nn_prelu_case(), sp_add_case(), sp_add_case(7)] +
            [shconv_s2_case(), nt_long_case(), sp_add_case(3), shdw16_small_case(), nn_lut_sigmoid_case()] +
            [gray_case(), tensorsub_case(), tensormul_case(), tensormul_u8_case(), tanh_case(0),
             tanh_case(95), prelu_case(0), prelu_case(1),
             prelu_case(0, 2), prelu_case(0, 3)] +
            [nn_lut_case(1), nn_lut_case(0), shf16_case(0), shf16_case(1), shf16_case(0, True)] +
            [nnf16_elt_case(k) for k in ("scale", "negate", "mul", "add0")] +
            [nn_lut_int16_case(), nn_sp_scale_int16_case(1), nn_sp_scale_int16_case(0), shi16_case(0),
             shi16_case(1), nn_mul_int16_case()] + [nt_slices_case(), nt_rows_case()] +
            [tpfc_round_case(0), tpfc_round_case(2)] + nn_rounding_cases() + tp_rounding_refused_cases())


# ------------------------------------------- the face-age network's shaders
# (lib/cpu/ops/shmul.c's uint8 product, lib/cpu/ops/shtanh.c; the words as
# the 0x7d and 0xe8 face-age files' shaders load them)

MULU8_LANES = ([0x29292929, 0x10101010, 0x01110000, 0x03330222, 0x29292929, 0x00010000, 0x00030002, 0x300] +
               [0] * 8 +
               [0x29292929, 0x10101010, 0x05550444, 0x07770666, 0x29292929, 0x00050004, 0x00070006, 0x300] +
               [0] * 8)
MULU8_TAIL = [0x33333333, 0x11110000, 0x03020100, 0x03020100, 0, 0, 0, 0x2400] + [0] * 8


def tensormul_u8_case():
    c = Case("sh-tensormul-uint8", "SH TensorMul of two uint8 images (format 0x444041f0) of 9x2x1 into a "
             "third, scale 0.0112834 at 0x360e0 (the 0x7d face-age file's op 54), zero points 0: ties at "
             "products x scale = k + 1/2 and saturation at 255",
             "numpy: numpy.rint(a x b x float32 scale) in double precision (ties to even), saturated to 255",
             target=0x7D)
    scale = np.float32(0.0112834)
    rs = np.random.RandomState(61)
    a = rs.randint(0, 256, (2, 9))
    b = rs.randint(0, 256, (2, 9))
    a[0, :3], b[0, :3] = (255, 0, 255), (255, 200, 1)
    c.add_input(a.ravel(), [9, 2])
    c.add_input(b.ravel(), [9, 2])
    u = {56: f32_bits(float(scale)), 57: 0}
    put(u, 1, image_words(9, 9, 2, FMT_U8, 18, 1))
    put(u, 9, image_words(9, 9, 2, FMT_U8, 18, 1))
    put(u, 17, image_words(9, 9, 2, FMT_U8, 18, 1))
    put(u, 24, MULU8_LANES)
    put(u, 60, MULU8_TAIL)
    sh_op(c, "TensorMul", u, [(0, (INPUT, 0, 0)), (8, (INPUT, 1, 0)), (16, (OUTPUT, 0, 0))])
    v = np.clip(np.rint(a.astype(np.float64) * b * float(scale)), 0, 255).astype(np.int64)
    assert v[0, 0] == 255 and v[0, 1] == 0 and v[0, 2] == 3 and 0 < (v < 255).sum()
    c.add_output(v.ravel(), [9, 2])
    return c


TANH_LANES = ([0x01010101, 0, 0x00010000, 0x00030002, 0x02020202, 0, 0, 0x100] + [0x3C00, 0] * 4 +
              [0x01010101, 0, 0x00050004, 0x00070006, 0x02020202, 0, 0, 0x100] + [0x3C00, 0] * 4 +
              [0x3F800000, 0])
TANH_TAIL = [0x11111111, 0x11110000, 0x06040200, 0x06040200, 0x22222222, 0, 0, 0x100] + [0x3C00] * 8


def tanh_case(zp):
    c = Case("sh-tanh-zp%d" % zp, "SH tanh (ActivationLayer: 2 log2(e) at 0x36040) of 256 uint8 codes (16x16, "
             "rows 16) into 16x16 fp16 values, input scale 0.0144123 at 0x36048 and -%d times it at 0x3604c "
             "(the 0x7d face-age file's op %d)" % (zp, 92 if zp else 56),
             "numpy: numpy.tanh of the float32 q x scale + offset, in double, numpy.float16 (to nearest, "
             "ties to even)", target=0x7D)
    sc = np.float32(0.0144123)
    off = np.float32(-zp * float(sc))
    q = np.arange(256)
    c.add_input(q, [16, 16])
    u = {16: 0x4038AA3B, 17: 0x3F800000, 18: f32_bits(float(sc)), 19: f32_bits(float(off))}
    put(u, 1, image_words(16, 16, 16, FMT_U8, 256, 1))
    put(u, 9, image_words(32, 16, 16, FMT_F16, 512, 1))
    u[14] = 0x10DD10B0
    put(u, 20, TANH_LANES)
    put(u, 56, TANH_TAIL)
    sh_op(c, "ActivationLayer", u, [(0, (INPUT, 0, 0)), (8, (OUTPUT, 0, 0))])
    arg = q.astype(np.float32) * sc + off
    want = np.tanh(arg.astype(np.float64))
    c.add_output(f16_le(Fraction(float(v)) for v in want), [16, 16], FP16)
    return c


# ------------------------------------------- pre-processing and PReLU shaders
# (lib/cpu/ops/shgray.c, shsub.c, shmul.c, shprelu.c; the words as the
# mobilefacenet 0xad file's shaders load them)

GRAY_LAYER = "com.vivantecorp.extension.evis.pre_process_gray_copy_U8toF16"
GRAY_LANES = ([0x99999999, 0x44444444, 0x03020100, 0x07060504, 0x99999999, 0x06060606, 0x06060606, 0x100] +
              [0x3C000000] * 8 + [0x99999999, 0x44444444, 0x0B0A0908, 0x0F0E0D0C, 0x99999999, 0x06060606,
                                  0x06060606, 0x100] + [0x3C000000] * 8)
SUB_LANES = ([0x09090909, 0x04040404, 0x00010000, 0x00030002, 0x0A0A0A0A, 0, 0, 0x100] + [0x3C003C00, 0] * 4 +
             [0x09090909, 0x04040404, 0x00050004, 0x00070006, 0x0A0A0A0A, 0, 0, 0x100] + [0x3C003C00, 0] * 4)
SUB_EXTRACT = [0x33333333, 0x11110000, 0x03020100, 0x03020100, 0, 0, 0, 0x2400, 0, 0, 0, 0]
FMT_S8_ELT, FMT_S8_PRELU = 0x44404130, 0x44405130


def f16_bytes(a):
    return np.frombuffer(np.asarray(a, dtype=np.float16).tobytes(), np.uint8)


def gray_case():
    c = Case("sh-gray-copy", "SH gray pre-processing copy (%s): a uint8 5x3x2 image (rows 6, slices 20 "
             "bytes) into fp16 (rows 12, slices 40 bytes: gaps), x and y ratios 0x8000 and offsets 0 in "
             "four coefficient entries, mean 0, scale 1; 0 and 255 among the values" % GRAY_LAYER,
             "numpy: numpy.float16 of each value (0..255 are exact halves)")
    rs = np.random.RandomState(51)
    img = rs.randint(0, 256, (2, 3, 5))
    img[0, 0, :2] = (0, 255)
    c.add_input(x0_rec(img), [120])
    raws = [c.add_raw(np.frombuffer(struct.pack("<I", w), np.uint8)) for w in (0x8000, 0x8000, 0, 0)]
    u = {20: 0, 21: f32_bits(1.0)}
    put(u, 1, image_words(6, 5, 3, FMT_A, 20, 2))
    put(u, 9, image_words(12, 5, 3, FMT_ADD_F16, 40, 2))
    put(u, 24, GRAY_LANES)
    sh_op(c, GRAY_LAYER, u, [(0, (INPUT, 0, 0)), (8, (OUTPUT, 0, 0))] +
          [(16 + k, (MISC_DYNA_GENERIC, raws[k], 0)) for k in range(4)])
    out = np.zeros(80, np.uint8)
    for z in range(2):
        for y in range(3):
            at = 40 * z + 12 * y
            out[at:at + 10] = f16_bytes(img[z, y].astype(np.float16))
    c.add_output(out, [80])
    return c


def tensorsub_case():
    c = Case("sh-tensorsub-f16-int8", "SH TensorSub: a 5x3 fp16 image (rows 12 bytes: gaps) minus one half, "
             "127.5, in a coefficient entry, into int8 (rows 6), factors a = 1, b = -1 (out = x a + k b, the "
             "mobilefacenet file's): every integer input a tie, fractions, saturation at -128 and 127",
             "numpy: numpy.rint(x - 127.5) in float64 of the halves (ties to even), saturated to -128..127")
    rs = np.random.RandomState(52)
    x = rs.randint(0, 256, (3, 5)).astype(np.float64)
    x[0, :4] = (0, 255, 300, -20)
    x[1, :2] = (127.25, 130.75)
    img = np.zeros(36, np.uint8)
    for y in range(3):
        img[12 * y:12 * y + 10] = f16_bytes(x[y])
    c.add_input(img, [18, 1, 1], FP16)
    k = c.add_raw(f16_bytes([127.5]))
    u = {24: 0, 25: f32_bits(1.0), 26: f32_bits(-1.0), 28: 0, 64: 0}
    put(u, 1, image_words(12, 5, 3, FMT_F16, 36, 1))
    put(u, 9, image_words(2, 1, 1, FMT_F16, 2, 1))
    put(u, 17, image_words(6, 5, 3, FMT_S8_ELT, 18, 1))
    put(u, 32, SUB_LANES)
    put(u, 68, SUB_EXTRACT)
    sh_op(c, "TensorSub", u, [(0, (INPUT, 0, 0)), (8, (MISC_DYNA_GENERIC, k, 0)), (16, (OUTPUT, 0, 0))])
    v = np.clip(np.rint(x.astype(np.float16).astype(np.float64) - 127.5), -128, 127).astype(np.int64)
    assert v[0, 0] == -128 and v[0, 2] == 127 and v[1, 0] == 0 and v[1, 1] == 3
    assert (v[0, 4:] % 2 == 0).all() and (v[2] % 2 == 0).all()   # ties to even
    out = np.zeros(18, np.int64)
    place(out, v[None], 0, 6, 18)
    c.add_output(s8_bytes(out), [18])
    return c


def tensormul_case():
    c = Case("sh-tensormul-int8", "SH TensorMul: a 5x3 int8 image (rows 6) times one int8 value, 127, in a "
             "coefficient entry, post-shift 7 (0x407 at 0x3608c, 0x360cc: out = x 127 / 128, the mobilefacenet "
             "file's): the ties at 64 and -64, -128 and 127",
             "numpy: numpy.rint(x 127 / 128) on the signed values (ties to even), saturated to -128..127",
             target=0xAD)  # the mobilefacenet file's target (TensorMul on the A733 is the fp16 shader's)
    rs = np.random.RandomState(53)
    x = rs.randint(-128, 128, (3, 5))
    x[0, :4] = (64, -64, -128, 127)
    rec = np.zeros(18, np.int64)
    place(rec, x[None], 0, 6, 18)
    c.add_input(s8_bytes(rec), [18])
    k = c.add_raw(s8_bytes([127]))
    lanes = ([0x11111111, 0, 0x03020100, 0x07060504, 0x11111111, 0x03020100, 0x07060504, 0x407] + [0] * 8 +
             [0x11111111, 0, 0x0B0A0908, 0x0F0E0D0C, 0x11111111, 0x0B0A0908, 0x0F0E0D0C, 0x407] + [0] * 8)
    u = {24: 0}
    put(u, 1, image_words(6, 5, 3, FMT_S8_ELT, 18, 1))
    put(u, 9, image_words(1, 1, 1, FMT_S8_ELT, 1, 1))
    put(u, 17, image_words(6, 5, 3, FMT_S8_ELT, 18, 1))
    put(u, 28, lanes)
    sh_op(c, "TensorMul", u, [(0, (INPUT, 0, 0)), (8, (MISC_DYNA_GENERIC, k, 0)), (16, (OUTPUT, 0, 0))])
    v = np.clip(np.rint(x * 127 / 128.0), -128, 127).astype(np.int64)
    assert v[0, 0] == 64 and v[0, 1] == -64 and v[0, 2] == -127
    out = np.zeros(18, np.int64)
    place(out, v[None], 0, 6, 18)
    c.add_output(s8_bytes(out), [18])
    return c


# The in_fl < out_fl layout of ovxlib's PReLU initializer (mobilefacenet's
# ops 25 and 29): lane words 0x36060-0x360dc, then uniMergeMultiplier_2x8
# at 0x360f0 (the multiplier itself at 0x360e0).
PRELU_MUL_LANES = ([0x55555555, 0x44444444, 0x33221100, 0x77665544, 0, 0x01010101, 0x01010101, 0] + [0] * 8 +
                   [0x55555555, 0x44444444, 0xBBAA9988, 0xFFEEDDCC, 0, 0x01010101, 0x01010101, 0] + [0] * 8)
PRELU_MERGE_MUL = [0x11, 0x10, 0, 0, 0x21, 0, 0, 0x400, 0, 1, 0, 0, 0, 0, 0, 0]


def prelu_case(shift, mul=1):
    """PReLU in the in_fl >= out_fl layout (post-shift shift) or, mul > 1,
    the in_fl < out_fl one (multiplier mul; a mul not a power of two is
    refused)."""
    alpha = np.array([0.25, -0.5, 1.5, 0.1], np.float16)
    executed = mul == 1 or (mul & (mul - 1)) == 0
    cid = ("sh-prelu-int8-shift%d" % shift if mul == 1 else
           "sh-prelu-int8-mul%d" % mul if executed else "sh-prelu-mul-refused")
    what = ("post-shift %d%s" % (shift, ": ties of both signs (every odd value)" if shift else
                                 ": saturation at -128 (slope 1.5)") if mul == 1 else
            "the lane layout 0x55555555 (in_fl < out_fl, as two corpus shaders) with the multiplier %d at "
            "0x360e0%s" % (mul, ": ties of both signs (slope 0.25 on odd values), saturation at 127 and -128"
                           if executed else ", not a power of two: refused"))
    c = Case(cid, "SH PReLU of int8 images (format word 0x44405130): 7 values a row (rows 8 bytes) by 4 "
             "channels (rows), one fp16 slope a channel (0.25, -0.5, 1.5, 0.1) in a coefficient entry, " + what,
             "numpy: x if x >= 0 else x times the channel's slope (float64 of the half), times the multiplier "
             "and divided by 2^s, numpy.rint (ties to even), saturated to -128..127")
    rs = np.random.RandomState(54 + shift + 10 * (mul > 1))
    x = rs.randint(-128, 128, (4, 7))
    x[0, :3], x[2, :2] = (-128, 127, 3), (-128, -100)
    if mul > 1:
        x[0, 3:7], x[1, :2] = (-3, 5, -7, 64), (-9, 80)
    rec = np.zeros(32, np.int64)
    place(rec, x[None], 0, 8, 32)
    c.add_input(s8_bytes(rec), [32])
    k = c.add_raw(f16_bytes(alpha))
    u = {}
    put(u, 1, image_words(8, 7, 4, FMT_S8_PRELU, 32, 1))
    put(u, 9, image_words(8, 4, 1, FMT_F16, 8, 1))
    put(u, 17, image_words(8, 7, 4, FMT_S8_PRELU, 32, 1))
    if mul == 1:
        put(u, 24, [0x77777777, 0x44444444, 0x33221100, 0x77665544, 0, 0, 0, 0x4000 | shift] + [0] * 8)
        put(u, 40, [0x77777777, 0x44444444, 0xBBAA9988, 0xFFEEDDCC, 0, 0, 0, 0x4000 | shift] + [0] * 8)
    else:
        put(u, 24, PRELU_MUL_LANES)
        u[56] = mul
        put(u, 60, PRELU_MERGE_MUL)
    if not executed:
        c.refused = "prelu-uniforms-unknown"
    sh_op(c, "PReluLayer", u, [(0, (INPUT, 0, 0)), (8, (MISC_DYNA_GENERIC, k, 0)), (16, (OUTPUT, 0, 0))])
    a = alpha.astype(np.float64)[:, None]
    v = np.clip(np.rint(np.where(x >= 0, x, x * a) * mul / 2.0 ** shift), -128, 127).astype(np.int64)
    if mul > 1 and executed:
        # -3 x 0.25 x 2 = -1.5 -> -2, -7 -> -3.5 -> -4, 5 -> 10, 64 -> 127, -9 x -0.5 x 2 = 9, 80 -> 127
        assert list(v[0, 3:7]) == [-2, 10, -4, 127] and list(v[1, :2]) == [9, 127] and v[2, 0] == -128
        assert v[0, 1] == 127 and v[0, 0] == -64
    elif shift:
        assert v[0, 2] == 2 and v[0, 1] == 64 and ((x[:, :] % 2 == 1) & (x >= 0)).sum() > 3
    elif mul == 1:
        assert v[2, 0] == -128 and v[2, 1] == -128 and v[0, 0] == -32
    out = np.zeros(32, np.int64)
    place(out, v[None], 0, 8, 32)
    c.add_output(s8_bytes(out) if executed else np.zeros(32, np.uint8), [32])
    return c


def dwshader(name, rs, codes, scale_bits, pixels=None):
    """The depthwise convolution shader: channel c's 3x3 window (rows 4,
    channels 13 bytes apart) times its row of equal codes (rows 10 bytes
    apart; the tenth byte of a row is not a code), requantized with every
    zero point 0 (nbg_cpu_requant's rule), one output 2 bytes apart."""
    ch, k, in_row, in_slice, w_row, out_slice = len(codes), 3, 4, 13, 10, 2
    inp = rs.randint(0, 256, in_slice * ch)
    if pixels is not None:
        for c, px in pixels.items():
            for i, v in enumerate(px):
                inp[c * in_slice + (i // 3) * in_row + i % 3] = v
    w = np.full(w_row * ch, 0xEE)
    for c, v in enumerate(codes):
        w[c * w_row:c * w_row + 9] = v
    m, e = scale_bits & 0x7FFFFF, scale_bits >> 23 & 0xFF
    scale = Fraction((1 << 23) | m, 1 << (150 - e))
    out = np.zeros(out_slice * ch, dtype=np.int64)
    sums = []
    for c in range(ch):
        acc = sum(int(codes[c]) * int(inp[c * in_slice + y * in_row + x]) for y in range(k) for x in range(k))
        sums.append(acc)
        out[c * out_slice] = sat8(round_half_away(acc * scale))
    return {"name": name, "channels": ch, "kx": k, "ky": k, "in_row": in_row, "in_slice": in_slice,
            "w_row": w_row, "out_slice": out_slice, "scale_bits": scale_bits, "in": inp, "codes": w,
            "expect": out}, sums, scale


def extra_vectors():
    rs = np.random.RandomState(40)
    d0, sums, scale = dwshader(
        "SH depthwise convolution shader, 3 channels of 3x3 -> 1x1, codes 255, 7 and 100, scale 2^-10: "
        "channel 0 saturates at 255, channels 1 and 2 are ties (3.5 -> 4, 12.5 -> 13, half away from "
        "zero); expected: numpy (Python fractions)", rs, [255, 7, 100], 117 << 23,
        {0: [200] * 9, 1: [57] * 8 + [56], 2: [14] * 8 + [16]})
    assert sums[1] * scale == Fraction(7, 2) and sums[2] * scale == Fraction(25, 2) and sums[0] * scale > 255
    d1, sums, scale = dwshader(
        "SH depthwise convolution shader, 3 channels of 3x3 -> 1x1, codes 31, 200 and 1, a 23-bit mantissa "
        "(0x38ab1802, the corpus's scale uniform, times 2^3); expected: numpy (Python fractions)", rs,
        [31, 200, 1], 0x38AB1802 + (3 << 23))
    out = ["static const uint8_t dw%d_%s[] = {%s};\n" % (i, k, ", ".join(str(int(v)) for v in d[k]))
           for i, d in enumerate((d0, d1)) for k in ("in", "codes", "expect")]
    rows = ["\t{ %s,\n\t  %d, %d, %d, %d, %d, %d, %d, 0x%08x, dw%d_in, %d, dw%d_codes, dw%d_expect, %d }," % (
        c_str(d["name"]), d["channels"], d["kx"], d["ky"], d["in_row"], d["in_slice"], d["w_row"],
        d["out_slice"], d["scale_bits"], i, len(d["in"]), i, i, len(d["expect"]))
        for i, d in enumerate((d0, d1))]
    out.append("static const cv_dwshader cv_dwshaders[] = {\n%s\n};\n" % "\n".join(rows))
    return out


# ------------------------------------------------------------- emitting

HEADER = """\
/*
 * cpu_vectors.h - written by tests/gen_cpu_vectors.py; do not edit (run it
 * again, or --check).  The cases of tests/test_cpu_ops.c: each a model of
 * a few operations (command fields by name, whole command words, addresses
 * relocated by patches, shader uniforms, kernel layers that
 * tests/coef_encode.c encodes, raw coefficient entries) with its inputs
 * and the bytes its output records must hold, computed by that script with
 * numpy from the rules of doc/cpu-backend.md.
 */
#ifndef NBG_TEST_CPU_VECTORS_H
#define NBG_TEST_CPU_VECTORS_H

#include <stddef.h>
#include <stdint.h>

#include "coef_encode.h"

typedef struct cv_field {
	const char *key;
	uint32_t value;
} cv_field;

typedef struct cv_word {
	uint32_t word, value;
} cv_word;

/* An address: command field `key` (kind 0), command word `at` (1) or
 * uniform `at` (2), relocated into source/index at offset. */
typedef struct cv_addr {
	int kind;
	const char *key;
	uint32_t at, source;
	int32_t index;
	uint32_t offset, transformed;
} cv_addr;

typedef struct cv_op {
	uint32_t type;          /* enum nbg_graph_op_type */
	const char *layer;
	int acc32;              /* NN: 1 the 32-bit kernels, 0 the 64-bit path, -1 not checked */
	const cv_field *f;
	size_t nf;
	const cv_word *w;
	size_t nw;
	const cv_addr *a;
	size_t na;
	const uint32_t *u;      /* uniforms from 0x36000 on */
	size_t nu;
} cv_op;

/* An input (data: its bytes) or output record (data: the expected bytes). */
typedef struct cv_io {
	uint32_t dims[4], dim_count, format;
	const uint8_t *data;
	size_t size;
} cv_io;

typedef struct cv_stream {
	ce_layer layer;
	ce_opts opts;
} cv_stream;

typedef struct cv_raw {
	const uint8_t *data;
	size_t size;
} cv_raw;

/* Coefficient entries: the streams first, then the raw entries. */
typedef struct cv_case {
	const char *id;         /* a short name: the cmocka test's */
	const char *name;       /* the operation, its shapes, what the case exercises */
	const char *source;     /* where the expected bytes come from */
	const char *refused;    /* "": every operation runs; else the first refused step's reason id */
	uint32_t target, vip_sram;
	const cv_io *in;
	size_t ins;
	const cv_io *out;
	size_t outs;
	const cv_op *op;
	size_t ops;
	const cv_stream *s;
	size_t ns;
	const cv_raw *raw;
	size_t nraw;
} cv_case;

/* The depthwise convolution shader's kernel (ops/shdw.c), run through the
 * test's adapter: channels of kx x ky pixels, one row of codes each. */
typedef struct cv_dwshader {
	const char *name;
	uint32_t channels, kx, ky, in_row, in_slice, w_row, out_slice;
	uint32_t scale_bits;    /* the float32 scale uniform */
	const uint8_t *in;
	size_t in_size;
	const uint8_t *codes;
	const uint8_t *expect;
	size_t out_size;
} cv_dwshader;
"""


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


SPARSE_FROM = 32768


def c_array(ctype, name, values, per_line=16):
    vals = [int(v) for v in values]
    fmt = (lambda v: "%d" % v) if ctype.startswith("int") else (lambda v: "0x%x" % v if v > 9 else "%d" % v)
    lines = []
    if len(vals) >= SPARSE_FROM:
        # a large array (the long transpose's rows 64 KiB apart): its lines
        # of zeros left to the initializer, the others placed by index
        for i in range(0, len(vals), per_line):
            if any(vals[i:i + per_line]):
                lines.append("\t[%d] = " % i + ", ".join(fmt(v) for v in vals[i:i + per_line]) + ",")
        return "static const %s %s[%d] = {\n%s\n};\n" % (ctype, name, len(vals), "\n".join(lines) or "\t0,")
    for i in range(0, len(vals), per_line):
        lines.append("\t" + ", ".join(fmt(v) for v in vals[i:i + per_line]) + ",")
    body = "\n".join(lines) if lines else "\t0,"
    return "static const %s %s[] = {\n%s\n};\n" % (ctype, name, body)


def emit_case(out, i, c):
    pre = "c%d_" % i
    ios = {}
    for kind, lst in (("in", c.ins), ("out", c.outs)):
        rows = []
        for j, (data, dims, fmt) in enumerate(lst):
            out.append(c_array("uint8_t", "%s%s%d" % (pre, kind, j), data))
            d = list(dims) + [1] * (4 - len(dims))
            rows.append("\t{ { %s }, %d, %d, %s%s%d, %d }," % (
                ", ".join(str(v) for v in d), len(dims), fmt, pre, kind, j, len(data)))
        out.append("static const cv_io %s%s[] = {\n%s\n};\n" % (
            pre, kind, "\n".join(rows) or "\t{ { 0 }, 0, 0, NULL, 0 },"))
        ios[kind] = len(lst)
    oprows = []
    for j, op in enumerate(c.ops):
        p = "%sop%d_" % (pre, j)
        out.append("static const cv_field %sf[] = {\n%s\n};\n" % (
            p, "\n".join("\t{ %s, 0x%x }," % (c_str(k), v) for k, v in op["fields"]) or "\t{ NULL, 0 },"))
        out.append("static const cv_word %sw[] = {\n%s\n};\n" % (
            p, "\n".join("\t{ %d, 0x%08x }," % (k, v & 0xFFFFFFFF) for k, v in op["words"]) or "\t{ 0, 0 },"))
        arows = []
        for a in op["addrs"]:
            if a[0] == "field":
                arows.append("\t{ 0, %s, 0, %d, %d, %d, 0 }," % (c_str(a[1]), a[2], a[3], a[4]))
            elif a[0] == "word":
                arows.append("\t{ 1, NULL, %d, %d, %d, %d, %d }," % (a[1], a[2], a[3], a[4], a[5]))
            else:
                arows.append("\t{ 2, NULL, %d, %d, %d, %d, 0 }," % (a[1], a[2], a[3], a[4]))
        out.append("static const cv_addr %sa[] = {\n%s\n};\n" % (
            p, "\n".join(arows) or "\t{ 0, NULL, 0, 0, 0, 0, 0 },"))
        out.append(c_array("uint32_t", p + "u", [u & 0xFFFFFFFF for u in op["uniforms"]], 8))
        oprows.append("\t{ %d, %s, %d, %sf, %d, %sw, %d, %sa, %d, %su, %d }," % (
            op["type"], c_str(op["layer"]), op["acc32"], p, len(op["fields"]), p, len(op["words"]), p,
            len(op["addrs"]), p, len(op["uniforms"])))
    out.append("static const cv_op %sops[] = {\n%s\n};\n" % (pre, "\n".join(oprows)))
    srows = []
    for j, (l, o) in enumerate(c.streams):
        out.append(c_array("uint8_t", "%ss%d_w" % (pre, j), l["w"]))
        out.append(c_array("int32_t", "%ss%d_b" % (pre, j), l["bias"], 8))
        lay = ("{ .out = %d, .kz = %d, .ky = %d, .kx = %d, .zp = %d, .in_zp = %d, .w = %ss%d_w, "
               ".bias = %ss%d_b, .cores = %d, .superblocks = %d, .depthwise = %d, .plane = %d, "
               ".seed = %d }" % (
                   l["out"], l["kz"], l["ky"], l["kx"], l["zp"], l["in_zp"], pre, j, pre, j, l["cores"],
                   l["superblocks"], l["depthwise"], l["plane"], l["seed"]))
        if l.get("int8"):
            lay = lay[:-2] + ", .int8 = 1 }"
        opt = "{ " + ", ".join(".%s = %d" % (k, v) for k, v in o.items()) + " }"
        srows.append("\t{ %s,\n\t  %s }," % (lay, opt))
    out.append("static const cv_stream %ss[] = {\n%s\n};\n" % (
        pre, "\n".join(srows) or "\t{ { 0 }, { 0 } },"))
    rrows = []
    for j, r in enumerate(c.raws):
        out.append(c_array("uint8_t", "%sr%d" % (pre, j), r))
        rrows.append("\t{ %sr%d, %d }," % (pre, j, len(r)))
    out.append("static const cv_raw %sraw[] = {\n%s\n};\n" % (pre, "\n".join(rrows) or "\t{ NULL, 0 },"))
    fmt = "\t{ %s, %s,\n\t  %s,\n\t  %s, 0x%x, %d, %sin, %d, %sout, %d, %sops, %d, %ss, %d, %sraw, %d },"
    return fmt % (c_str(c.id), c_str(c.name), c_str(c.source), c_str(c.refused), c.target, c.vip_sram, pre,
                  ios["in"], pre, ios["out"], pre, len(c.ops), pre, len(c.streams), pre, len(c.raws))


def render(cases, extra):
    out = [HEADER]
    rows = [emit_case(out, i, c) for i, c in enumerate(cases)]
    out.append("static const cv_case cv_cases[] = {\n%s\n};\n" % "\n".join(rows))
    out.extend(extra)
    out.append("#endif\n")
    return "\n".join(out)


def main(argv):
    cases = all_cases()
    text = render(cases, extra_vectors())
    if argv[1:] == ["--check"]:
        old = OUT.read_text() if OUT.exists() else ""
        if old != text:
            print("tests/%s differs from what %s writes: run it again and commit the result" % (
                OUT.name, Path(argv[0]).name))
            return 1
        print("%s: %d cases, as %s writes them" % (OUT.name, len(cases), Path(argv[0]).name))
        return 0
    if argv[1:]:
        print("usage: %s [--check]" % argv[0], file=sys.stderr)
        return 2
    OUT.write_text(text)
    print("wrote %s: %d cases" % (OUT, len(cases)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
