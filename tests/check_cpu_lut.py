#!/usr/bin/env python3
"""The CPU backend's TP lookup-table activations (lib/cpu/ops/lut.c)
against references no C code here computes.

1. The tables: each LUT operation's table, read here from the file's bytes
   (the coefficient table entry its alu_load_pwl_lut_address patch names),
   is decoded with the layout doc/cpu-backend.md states (1,024 entries; a
   32-bit entry a sign, 5 exponent and 15 mantissa bits, or a half-precision
   entry; entry i stands for the input whose half-precision bits are i << 5,
   or with alu_pwl_sign_support 1 the sign and i << 6; the target-0xe8
   tables, ending in the words 0x05000000, 0x003f8000, hold entry i at
   i ^ 512), and must be a known
   function of that input, with one parameter fitted, at every finite entry,
   within 0.51 unit in the last place (values below 2^-14 held as 0): tanh
   (LeNet, the face-age network), leaky ReLU (hand-tiny), SiLU (yolov8n).
   The post multiplier's reading is checked on the zero points the compiler
   chose: a leaky ReLU's output range is its input range times alpha below 0
   and times the multiplier; a tanh's output range lies inside [-1, 1].
2. Per operation: the buffers before and after each LUT operation the runs
   reach (nbg-cpu-dump) against the layer's function in numpy (numpy.tanh,
   the leaky ReLU as a where) of (q - in_zp) with the fitted parameter,
   times the multiplier, rounded, plus out_zp, placed by the Python TP walk
   of check_cpu_tp.py; the largest difference in quantization steps is
   printed and must be at most 1, and no other byte may change.
   2b. The target-0xe8 table against the same layer of the 0x10003 file
   (one quantization): both files run on one random input to their first
   table (op 3); the tables' outputs must be equal byte for byte (the
   convolutions before them agree to 0.1 %: printed).
3. A synthesized table: LeNet's first table replaced by values no model
   holds (both signs, steps of every size, copied into a temporary file),
   run on lenet.dat: the operation's output must equal, byte for byte, the
   rule computed here in Python (the entry, linear interpolation, the sign,
   the multiplier, rounding half away from zero); a non-zero byte after
   the entries and a NaN entry that an input selects must be refused
   (tp-lut-unsupported).
4. The whole LeNet of corpus/v1/1000f_ee_lenet_model.nb (tanh after every
   layer) on models_dir/lenet-caffe/lenet.dat (a handwritten 0, the input
   record's scale 1/255 is lenet_inputmeta.yml's preprocessing) and 24
   variants: its top-1 must equal the Caffe float LeNet's (another network
   trained for the same digits, run in numpy) on lenet.dat, where the
   model's probability must be at least 0.9, and on every variant where
   Caffe's top-1 logit leads by 2 or more (the others, shifted and noisy,
   are ambiguous to Caffe too; the figure is printed).

Tiers (--tier, check_cpu.tier_of): corpus runs part 1, part 2 on the first
listed operation of each file, part 3, and part 4 on lenet.dat and its
first variant; slow part 2 on the other operations and part 4 on the other
23 inputs.  No --tier: both.

Usage: check_cpu_lut.py NBG DUMP --corpus DIR --models DIR [--tier
corpus|slow] (exit 77 when the files or Debian's python3-numpy /
python3-protobuf are missing).
"""
import math
import os
import struct
import sys
import tempfile

from check_cpu import (CORPUS_INPUTS, dump, finish, in_tier, key, prefetch, run, run_cpu, split, synth_inputs,
                       tier_of)
from check_cpu_tp import image, inputs_for, inspect, multiplier, read_image, walk

SKIP = 77
LENET = "v1/1000f_ee_lenet_model.nb"
# (file, function, operations to run one by one)
TABLES = [
    (LENET, "tanh", [2, 5, 9, 11]),
    ("v1/1000f_7d_face_age_7d.nb", "tanh", [3, 4, 5, 6]),
    ("v1/10003_99_face_age_99.nb", "tanh", []),
    ("v1/1000e_e8_face_age_e8.nb", "tanh", [3]),
    ("v1/1000c_99_hand-tiny.nb", "leaky", [4]),
    ("v1/1000e_99_hand-tiny.nb", "leaky", [2]),
    ("v1/1000f_99_hand-tiny.nb", "leaky", [2]),
    ("v1/1000f_88_yolov8n.nb", "silu", []),
]


def lut_ops(doc, data):
    """(operation record, fields, table bytes) of each LUT operation."""
    secs = {s["type"]: s for s in doc["sections"]}
    # v1: the LCDT (8-byte offset, size pairs) in section type 5, its data in 6
    lcdt, lcd = secs[5], secs[6]
    ops = {o["operation"]: o for o in doc["commands"]["operations"]}
    out = []
    for cmd in doc["commands"]["tp"]["commands"]:
        f = cmd["fields"]
        if not f["alu_pwl_enable"]:
            continue
        r = cmd["patched_fields"]["alu_load_pwl_lut_address"]
        off, size = struct.unpack_from("<II", data, lcdt["offset"] + 8 * r["index"])
        # before 0x10009 the field holds the address and src_offset the
        # entry's base (doc/commands.md)
        at = f["alu_load_pwl_lut_address"] - r["src_offset"] if doc["version"] < 0x10009 else r["src_offset"]
        start = lcd["offset"] + off + at
        out.append((ops[cmd["operation"]], f, data[start:lcd["offset"] + off + size]))
    return out


# The target-0xe8 tables' last 8 bytes (the words 0x05000000, 0x003f8000).
SWAPPED_TAIL = bytes([0, 0, 0, 0x05, 0, 0x80, 0x3f, 0])


def decode(f, tab):
    """(inputs x, table values T, unit in the last place of T) of the
    1,024 entries, as doc/cpu-backend.md states the layout."""
    import numpy as np
    i = np.arange(1024, dtype=np.uint32)
    sign = f["alu_pwl_sign_support"]
    x = ((i << 6) if sign else (i << 5)).astype(np.uint16).view(np.float16).astype(np.float64)
    if len(tab) in (4104, 4112):  # 4112: the 0x10003 files' entries
        w = np.frombuffer(tab[:4096], dtype="<u4").astype(np.int64)
        if bytes(tab[4096:]) == SWAPPED_TAIL and not sign:
            w = w[np.arange(1024) ^ 512]   # target 0xe8: entry i at i ^ 512
        elif any(tab[4096:]):
            return None
        if np.any(w >> 21):
            return None
        e, m, s = (w >> 15) & 31, w & 0x7fff, (w >> 20) & 1
        mbits = 15
    elif len(tab) == 2052:
        if any(tab[2048:]):
            return None
        w = np.frombuffer(tab[:2048], dtype="<u2").astype(np.int64)
        e, m, s = (w >> 10) & 31, w & 0x3ff, (w >> 15) & 1
        mbits = 10
    else:
        return None
    t = np.where(e == 0, 0.0, np.ldexp(1.0 + np.ldexp(m.astype(np.float64), -mbits), e - 15))
    t = np.where(e == 31, np.nan, np.where(s == 1, -t, t))
    return x, t, mbits


FUNCS = {
    "tanh": lambda p, x: np.tanh(p * x),
    "leaky": lambda p, x: np.where(x >= 0, x, p * x),
    "silu": lambda p, x: p * x / (1 + np.exp(-p * x)),
}


def ulps(t, ref, mbits):
    """|t - ref| in units in the last place of ref; below 2^-14 t must be 0."""
    a = np.abs(ref)
    u = np.ldexp(1.0, (np.floor(np.log2(np.maximum(a, 2.0 ** -14))) - mbits).astype(int))
    return np.where(a < 2.0 ** -14, np.where(t == 0, 0.0, np.inf), np.abs(t - ref) / u)


def fit(func, x, t, mbits):
    """The parameter with the smallest largest error over the finite
    entries (|x| below 60000), and that error in units in the last place."""
    ok = np.isfinite(t) & np.isfinite(x) & (np.abs(x) < 60000)
    fn = FUNCS[func]

    def err(p):
        with np.errstate(all="ignore"):
            return float(np.max(ulps(t[ok], fn(p, x[ok]), mbits)))
    # a first guess from the entries where the function is near its slope
    small = ok & (np.abs(t) > 1e-3) & (np.abs(t) < 0.05) & (x != 0)
    if func == "leaky":
        small &= x < 0
    p = float(np.median(t[small] / x[small] * (2 if func == "silu" else 1))) if small.any() else 1.0
    best = (err(p), p)
    step = 0.05
    for _ in range(200):
        for q in (best[1] * (1 + step), best[1] * (1 - step)):
            e = err(q)
            if e < best[0]:
                best = (e, q)
                break
        else:
            step /= 2
            if step < 1e-12:
                break
    return best[1], best[0]


def check_tables(nbg, corpus, failures, figures):
    """Part 1; returns {(file, operation): (function, parameter)}."""
    fitted = {}
    for name, func, _ in TABLES:
        path = os.path.join(corpus, name)
        with open(path, "rb") as fh:
            data = fh.read()
        seen = {}
        worst = 0.0
        zp_err = 0.0
        span = []
        for op, f, tab in lut_ops(inspect(nbg, path), data):
            h = (bytes(tab), f["alu_pwl_sign_support"])
            if h not in seen:
                d = decode(f, tab)
                if d is None:
                    failures.append("%s op %d: a table of %d bytes outside the stated layout" %
                                    (name, op["operation"], len(tab)))
                    continue
                seen[h] = fit(func, *d)
            p, e = seen[h]
            worst = max(worst, e)
            fitted[(name, op["operation"])] = (func, p)
            m, zi, zo = multiplier(f), f["in_zp"], f["out_zp"]
            if func == "leaky":
                zp_err = max(zp_err, abs(zo - zi * p * m), abs((255 - zo) - (255 - zi) * m))
            elif func == "tanh" and not f["out_image_data_type"]:
                lo, hi = -zo / m, (255 - zo) / m
                span.append((lo, hi))
                if lo < -1.01 or hi > 1.01 or hi - lo < 1.5:
                    failures.append("%s op %d: multiplier %.4f, out_zp %d: the uint8 range %.3f..%.3f "
                                    "is not a tanh's" % (name, op["operation"], m, zo, lo, hi))
        if worst > 0.51:
            failures.append("%s: a table is no %s within 0.51 ulp (%.3f)" % (name, func, worst))
        params = sorted({round(v[1], 6) for k, v in fitted.items() if k[0] == name})
        fig = "%s: %d tables, each %s at every finite entry within %.3f ulp (parameter %s)" % (
            name, len(seen), func, worst,
            "%g" % params[0] if len(params) == 1 else "%g..%g" % (params[0], params[-1]))
        if func == "leaky":
            fig += "; zero points as the multiplier says within %.2f steps" % zp_err
            if zp_err > 2:
                failures.append("%s: a leaky ReLU's zero points are %.2f steps from the multiplier's "
                                "range" % (name, zp_err))
        if span:
            fig += "; uint8 ranges %.3f..%.3f to %.3f..%.3f" % (min(s[0] for s in span), min(s[1] for s in span),
                                                             max(s[0] for s in span), max(s[1] for s in span))
        figures.append(fig)
    return fitted


def round_away(y):
    return np.where(y < 0, -np.floor(-y + 0.5), np.floor(y + 0.5))


# Part 2b: the target-0xe8 table against the same layer compiled for
# 0x10003 (one quantization: doc/cpu-backend.md, "The target-0xe8 table
# format"), both files run on one input to their first table.
E8_PAIR = ("v1/1000e_e8_face_age_e8.nb", "v1/10003_99_face_age_99.nb", 3)


def check_e8_pair(nbg, dumper, corpus, tmp, failures, figures):
    paths = [os.path.join(corpus, n) for n in E8_PAIR[:2]]
    if not all(os.path.exists(p) for p in paths):
        figures.append("0xe8 table against 0x10003: %s not in the corpus: not judged" % " or ".join(E8_PAIR[:2]))
        return
    n = E8_PAIR[2]
    docs = [inspect(nbg, p) for p in paths]
    seeds = inputs_for(docs[0], tmp, 43)
    imgs = {}
    for path, doc in zip(paths, docs):
        op = next(o for o in doc["commands"]["operations"] if o["operation"] == n)
        f = doc["commands"]["tp"]["commands"][op["command"]]["fields"]
        after = dump(dumper, path, n + 1, seeds, tmp)
        if after is None or f["alu_pwl_enable"] != 1:
            failures.append("%s op %d: not a table that runs" % (path, n))
            return
        flow = op["dataflow"]
        imgs[path] = (image(f, after[key(op["input_ref"])], op["input_ref"]["offset"]),
                      read_image(after[key(op["output_ref"])], op["output_ref"]["offset"], f["in_image_x_size"],
                                 f["in_image_y_size"], f["in_image_z_size"], flow["output_row_stride"],
                                 flow["output_slice_stride"]))
    (ca, ta), (cb, tb) = imgs[paths[0]], imgs[paths[1]]
    conv_same = int(np.count_nonzero(ca == cb))
    table_same = int(np.count_nonzero(ta == tb))
    figures.append("0xe8 table against 0x10003 (op %d of each, one random input): the convolutions before agree in "
                   "%d of %d bytes (at most %d step), the tables' outputs in %d of %d" %
                   (n, conv_same, ca.size, int(np.abs(ca.astype(int) - cb.astype(int)).max()), table_same, ta.size))
    if table_same < ta.size or ta.size < 1000 or conv_same < ca.size * 0.999:
        failures.append("the 0xe8 file's first table does not agree with the 0x10003 file's same layer")


def check_per_op(nbg, dumper, corpus, models, tmp, fitted, failures, figures, tier):
    """Part 2: the corpus tier runs the first listed operation of each file,
    the slow tier the others."""
    lenet_in = os.path.join(models, "lenet-caffe", "lenet.dat")
    checked = values = differ = 0
    worst = 0
    for name, func, ops in TABLES:
        path = os.path.join(corpus, name)
        doc = inspect(nbg, path)
        byop = {o["operation"]: o for o in doc["commands"]["operations"]}
        for n in split(ops, tier, ops[:1]):
            op = byop[n]
            f = doc["commands"]["tp"]["commands"][op["command"]]["fields"]
            seeds = [None] if name == LENET else [n, n + 1]
            for seed in seeds:
                paths = [lenet_in] if seed is None else inputs_for(doc, tmp, seed)
                prefetch(dumper, path, [n, n + 1], paths, tmp)
                before = dump(dumper, path, n, paths, tmp)
                after = dump(dumper, path, n + 1, paths, tmp)
                a = image(f, before[key(op["input_ref"])], op["input_ref"]["offset"])
                fn, p = fitted[(name, n)]
                d = a.astype(np.float64) - f["in_zp"]
                ref = np.clip(f["out_zp"] + round_away(FUNCS[fn](p, d) * multiplier(f)), 0, 255).astype(np.int64)
                writes = walk(f, ref)
                ob, base = key(op["output_ref"]), op["output_ref"]["offset"]
                expect = {k: v.copy() for k, v in before.items()}
                for off, v in writes.items():
                    expect[ob][base + off] = v
                for k in expect:
                    if k != ob and not np.array_equal(expect[k], after[k]):
                        failures.append("%s op %d: %s changed" % (name, n, k[0]))
                idx = np.array([base + off for off in writes], dtype=np.int64)
                got = after[ob][idx].astype(np.int64)
                want = expect[ob][idx].astype(np.int64)
                rest = np.ones(len(after[ob]), dtype=bool)
                rest[idx] = False
                if not np.array_equal(after[ob][rest], before[ob][rest]):
                    failures.append("%s op %d: bytes outside its output changed" % (name, n))
                dif = np.abs(got - want)
                worst = max(worst, int(dif.max()))
                differ += int(np.count_nonzero(dif))
                values += len(writes)
                checked += 1
                if dif.max() > 1:
                    failures.append("%s op %d: %d values differ from numpy's %s, up to %d steps" %
                                    (name, n, int(np.count_nonzero(dif)), fn, int(dif.max())))
                if len(set(want.tolist())) < 8:
                    failures.append("%s op %d: the input gives only %d distinct outputs: too few to "
                                    "check the table" % (name, n, len(set(want.tolist()))))
    figures.append("per operation: %d runs of %d of the %d LUT operations listed, %d values against numpy's "
                   "function of their input: %d differ, by at most %d step" %
                   (checked, sum(len(split(t[2], tier, t[2][:1])) for t in TABLES),
                    sum(len(t[2]) for t in TABLES), values, differ, worst))


def rule_map(f, words):
    """The documented rule for 32-bit entries, for each input code 0..255."""
    def val(w):
        e, m = (w >> 15) & 31, w & 0x7fff
        v = 0.0 if e == 0 else math.ldexp(1 + m / 32768.0, e - 15)
        return -v if (w >> 20) & 1 else v
    out = []
    for q in range(256):
        d = q - f["in_zp"]
        h = int(np.array([abs(d)], dtype=np.float16).view(np.uint16)[0])
        low = 6 if f["alu_pwl_sign_support"] else 5
        i, frac = h >> low, h & ((1 << low) - 1)
        if f["alu_pwl_sign_support"] and d < 0:
            i |= 512
        v = val(words[i])
        if frac:
            v += (val(words[i + 1]) - v) * frac / float(1 << low)
        if not f["alu_pwl_sign_support"] and d < 0:
            v = -v
        y = v * multiplier(f)
        r = -math.floor(-y + 0.5) if y < 0 else math.floor(y + 0.5)
        out.append(min(max(int(r) + f["out_zp"], 0), 255))
    return out


def check_synthesized(nbg, dumper, models, tmp, failures, figures):
    """Part 3."""
    path = os.path.join(corpus_dir, LENET)
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    doc = inspect(nbg, path)
    op, f, tab = lut_ops(doc, bytes(data))[0]
    start = bytes(data).index(tab)
    rng = np.random.default_rng(2)
    # exponents 8..14 (values 2^-7 .. 1, within uint8 after the multiplier),
    # random mantissas and signs
    words = [int(s) << 20 | int(e) << 15 | int(m) for s, e, m in
             zip(rng.integers(0, 2, 1024), rng.integers(8, 15, 1024), rng.integers(0, 32768, 1024))]
    data[start:start + 4096] = struct.pack("<1024I", *words)
    synth = os.path.join(tmp, "synth_lut.nb")
    with open(synth, "wb") as fh:
        fh.write(data)
    lenet_in = os.path.join(models, "lenet-caffe", "lenet.dat")
    n = op["operation"]
    before = dump(dumper, synth, n, [lenet_in], tmp)
    after = dump(dumper, synth, n + 1, [lenet_in], tmp)
    a = image(f, before[key(op["input_ref"])], op["input_ref"]["offset"])
    m = rule_map(f, words)
    writes = walk(f, np.array(m, dtype=np.int64)[a])
    ob, base = key(op["output_ref"]), op["output_ref"]["offset"]
    bad = sum(int(after[ob][base + off]) != v for off, v in writes.items())
    codes = len(set(a.ravel().tolist()))
    outs = len(set(writes.values()))
    if bad or codes < 32 or outs < 32:
        failures.append("synthesized table: %d of %d values differ from the rule (%d input codes, %d "
                        "output values)" % (bad, len(writes), codes, outs))
    refused = 0
    for what, at, value in (("a byte after the entries", start + 4100, b"\x01"),
                            ("a NaN entry", start + 4 * (int(np.array([1], np.float16).view(np.uint16)[0]) >> 5),
                             struct.pack("<I", 31 << 15 | 1))):
        bad_data = bytearray(data)
        bad_data[at:at + len(value)] = value
        with open(synth, "wb") as fh:
            fh.write(bad_data)
        r = run([nbg, "run", "--backend", "cpu", "--check", synth])
        line = [x for x in r.stdout.splitlines() if x.startswith("  op %d " % n)]
        if r.returncode == 4 and line and "refused tp-lut-unsupported" in line[0]:
            refused += 1
        else:
            failures.append("synthesized table with %s: op %d not refused tp-lut-unsupported (%d: %s)" %
                            (what, n, r.returncode, line))
    figures.append("synthesized table (random entries, both signs) in %s op %d on lenet.dat: %d of %d "
                   "values (%d input codes, %d output values) equal to the rule computed in Python; "
                   "%d of 2 broken tables refused" % (LENET, n, len(writes) - bad, len(writes), codes, outs,
                                                     refused))


def check_lenet(nbg, models, tmp, failures, figures, tier):
    """Part 4: the corpus tier on lenet.dat and its first variant, the slow
    tier on the other 23."""
    from check_cpu import caffe_forward
    from check_weights_lenet import caffe_layers
    base = np.fromfile(os.path.join(models, "lenet-caffe", "lenet.dat"), dtype=np.uint8).reshape(28, 28)
    layers = caffe_layers(os.path.join(models, "lenet-caffe", "lenet.caffemodel"))
    imgs, paths = synth_inputs(base, tmp, 24)
    sel = split(range(len(imgs)), tier, range(CORPUS_INPUTS))
    imgs, paths, dat = [imgs[i] for i in sel], [paths[i] for i in sel], paths[0]
    same = clear = clear_same = 0
    first = None
    probs = []
    for img, p in zip(imgs, paths):
        y, _, err = run_cpu(nbg, os.path.join(corpus_dir, LENET), [p], tmp, np.float16)
        if y is None:
            failures.append("nbg run --backend cpu %s: %s" % (LENET, err))
            return
        y = y.astype(np.float64)
        caffe = caffe_forward(layers, img, 1 / 255.0, 0)["ip2"]
        same += int(np.argmax(y)) == int(np.argmax(caffe))
        top = np.sort(caffe)
        clear += top[-1] - top[-2] >= 2
        clear_same += top[-1] - top[-2] >= 2 and int(np.argmax(y)) == int(np.argmax(caffe))
        if p == dat:
            first = (int(np.argmax(y)), float(y.max()), int(np.argmax(caffe)))
        probs.append(float(y.max()))
    if (first and (first[0] != first[2] or first[1] < 0.9)) or clear_same != clear:
        failures.append("tanh LeNet: lenet.dat gives %s (probability, Caffe's class); top-1 equal to "
                        "Caffe's on %d of the %d inputs where Caffe's margin is 2 or more" %
                        (first, clear_same, clear))
    figures.append("whole model %s: %s%d inputs, top-1 equal to Caffe's on %d of %d, on %d of the %d where "
                   "Caffe's top-1 leads by 2 or more; top probability %.3f..%.3f" %
                   (LENET, "lenet.dat gives %d with probability %.3f (Caffe LeNet: %d); " % first if first else "",
                    len(imgs), same, len(imgs), clear_same, clear, min(probs), max(probs)))


def main():
    global corpus_dir, np
    argv, tier = tier_of(sys.argv)
    if len(argv) != 7 or argv[3] != "--corpus" or argv[5] != "--models":
        sys.exit("usage: check_cpu_lut.py NBG DUMP --corpus DIR --models DIR [--tier corpus|slow]")
    nbg, dumper, corpus_dir, models = argv[1], argv[2], argv[4], argv[6]
    from tc_corpus import need
    need("check_cpu_lut", "the LUT activation checks", corpus_dir)
    need("check_cpu_lut", "the LeNet checks", os.path.join(models, "lenet-caffe"))
    from check_weights_lenet import imports
    imports()
    import numpy
    np = numpy
    failures, figures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        # the tables are decoded in both tiers: the runs of either compare with them
        fitted = check_tables(nbg, corpus_dir, failures if in_tier(tier, "corpus") else [],
                              figures if in_tier(tier, "corpus") else [])
        check_per_op(nbg, dumper, corpus_dir, models, tmp, fitted, failures, figures, tier)
        if in_tier(tier, "corpus"):
            check_e8_pair(nbg, dumper, corpus_dir, tmp, failures, figures)
        if in_tier(tier, "corpus"):
            check_synthesized(nbg, dumper, models, tmp, failures, figures)
        check_lenet(nbg, models, tmp, failures, figures, tier)
    finish(figures, failures)


if __name__ == "__main__":
    main()
