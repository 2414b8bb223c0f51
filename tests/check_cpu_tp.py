#!/usr/bin/env python3
"""The CPU backend's TP operations (lib/cpu/ops/tp.c) against
references no C code here computes.

1. Per TP kind, from the decoded fields: for one operation of each executed
   configuration (a 2x2 reshuffle ahead of a stride-2 convolution, the same
   with a padded window, with a negative window start, a transpose, 3x3 and
   2x2 max pooling), the machine's buffers before and after that one
   operation (nbg-cpu-dump) are compared with a Python walk of the
   operation's fields (`nbg inspect --commands --json`): tiles, window,
   border, pooling window, the output loop counter with its resets, read
   digit by digit, and the circular buffers (an address at or past a
   buffer's start read and written at start + (address - start) mod size;
   two of the operations read past their buffer's end).  The bytes the walk
   writes must be equal, and no other byte of any buffer may change.  A
   copy into fp16 writes, per element the counter names (2 bytes each), the
   half numpy.float16 makes of float32 (v - in_zp) times the float32 scale
   (1 + alu_output_post_multiplier / 2^15) x 2^-shift (the signed shift of
   the lookup tables), low byte first.
2. Semantics, independent of the loop fields: a TensorTranspose's output is
   numpy.transpose of its input (the interleaved x moved outermost: HWC to
   CHW); a PoolingLayer2's output is numpy max pooling of its input with the
   window and stride of its fields and the padding of its window, as a dense
   image; a reshuffle's output, read where and how the next NN convolution
   reads its input (that command's address and strides), is the input
   subsampled by 2.
3. Cross-target: the emotion family of corpus/v1 is one network compiled
   for 7 targets; 0x7d, 0x88, 0x99 and 0xa1 run its max pooling layers and
   the reshuffles ahead of its stride-2 convolutions as TP operations (split
   over 1 to 6 TP cores), 0xb9 and 0xbe partly, 0xe8 with the NN engine
   alone.  For the same synthesized inputs, the network's 3x3 convolutions
   after its first reshuffle and after each of its max pooling layers (the
   last one the network's output before its SH pooling and softmax) give,
   within one file-format version, the same images on every target of one
   scale encoding (0xb9 / 0xbe within 4 steps of them) whose operations up
   to there the backend runs.  The figures are printed.

Tiers (--tier, check_cpu.tier_of): corpus runs the part 1 configurations
a model reaches within its first EARLY operations, part 2, part 3 on the
newest file-format version and part 4; slow the deeper configurations
(yolov8n, hand-tiny), part 3 on the other versions and the hand-tiny
compilations.  No --tier: both.

Usage: check_cpu_tp.py NBG DUMP --corpus DIR [--tier corpus|slow] (exit 77
when the corpus or Debian's python3-numpy is missing).
"""
import glob
import json
import os
import sys
import tempfile

from check_cpu import (addresses, dump, finish, in_tier, inspect_many, key, prefetch, read_image, read_output,
                       ring_of, run, split, tier_of, wrap)

SKIP = 77

# (file, operation, what it stands for)
PER_OP = [
    ("v1/1000e_99_emotion_99.nb", 3, "reshuffle 2x2 (out_loop_1/3_reset), one tile"),
    ("v1/10009_a1_emotion_a1.nb", 51, "reshuffle with a window past the image (border)"),
    ("v1/1000f_88_yolov8n.nb", 1, "reshuffle with a negative window start, circular buffers"),
    ("v1/1000e_e8_emotion_e8.nb", 7, "max pool 2x2 stride 2 on target 0xe8"),
    ("v1/1000f_7d_face_age_7d.nb", 1, "TensorTranspose (no resets, 1x64 tiles)"),
    ("v1/1000e_99_emotion_99.nb", 9, "max pool 3x3 stride 2, overlapping tiles"),
    ("v1/10009_a1_emotion_a1.nb", 47, "max pool 3x3 stride 2, negative window start"),
    ("v1/1000c_99_hand-tiny.nb", 2, "max pool 2x2 stride 2, several tiles"),
    ("v1/1000c_99_hand-tiny.nb", 6, "max pool whose input passes its circular buffer's end"),
    ("v1/1000f_88_yolov8n.nb", 44, "layout copy whose input passes its circular buffer's end"),
    ("v1/1000e_99_hand-tiny.nb", 63, "copy from uint8 into fp16 (alu_i2f_enable, 2-byte elements)"),
]
# The corpus tier checks the configurations of PER_OP that its model
# reaches within this many operations (the run before them costs little);
# the slow tier the others.
EARLY = 16


def s16(v):
    return v - 65536 if v >= 32768 else v


def multiplier(f):
    """A TP command's scale: (1 + multiplier / 2^15) x 2^-shift, the shift
    signed 7-bit."""
    sh = f["alu_output_postshift"] | f["alu_output_postshift_5_6"] << 5
    return (1 + f["alu_output_post_multiplier"] / 32768.0) * 2.0 ** -(sh - 128 if sh >= 64 else sh)


def pooling(f):
    """(window, stride) from the pooling fields; (1, 1) for a copy."""
    mode, count = f["alu_horz_processing"], f["alu_horz_proc_count"]
    if mode == 0:
        return 1, 1
    return count + 1, 2 if mode == 3 else 1


def image(f, buf, base, ring=(0, 0)):
    """The input image [z][y][x] the fields describe, as int64, read
    through its circular buffer when it has one."""
    if ring[1]:
        return buf[addresses(base, f["in_image_stride"], f["in_image_slice"], 1, ring,
                             f["in_image_z_size"], f["in_image_y_size"], f["in_image_x_size"])].astype("int64")
    return read_image(buf, base, f["in_image_x_size"], f["in_image_y_size"], f["in_image_z_size"],
                      f["in_image_stride"], f["in_image_slice"])


def walk(f, a):
    """The TP walk in Python: {output offset: value}."""
    k, st = pooling(f)
    wx0, wy0 = s16(f["in_window_x_start"]), s16(f["in_window_y_start"])
    wx1, wy1 = s16(f["in_window_x_end"]), s16(f["in_window_y_end"])
    zs, ys, xs = a.shape
    counts = [f["out_loop_%d_count" % i] or 65536 for i in range(6)]
    incs = [f["out_loop_%d_inc" % i] for i in range(7)]
    digits = [0] * 7

    def bump(level):
        while level < 6:
            digits[level] += 1
            if digits[level] < counts[level]:
                return
            digits[level] = 0
            level += 1
        digits[6] += 1

    def clear(upto):
        for i in range(upto + 1):
            digits[i] = 0

    def tiles(w0, w1, size, inc):
        starts = []
        t = w0
        while t + k - 1 <= w1:
            starts.append((t, min(size, w1 - t + 1)))
            t += inc
        return starts

    def value(z, x0, y0):
        if k == 1:
            if 0 <= x0 < xs and 0 <= y0 < ys:
                return int(a[z, y0, x0])
            return f["in_image_border_const"]
        best = -1
        for yy in range(max(y0, 0), min(y0 + k, ys)):
            for xx in range(max(x0, 0), min(x0 + k, xs)):
                best = max(best, int(a[z, yy, xx]))
        return best

    out = {}
    tx = tiles(wx0, wx1, f["in_tile_x_size"], f["in_tile_x_inc"])
    ty = tiles(wy0, wy1, f["in_tile_y_size"], f["in_tile_y_inc"])
    for z in range(zs):
        for y0, h in ty:
            ny = (h - k) // st + 1
            for x0, w in tx:
                nx = (w - k) // st + 1
                for oy in range(ny):
                    for ox in range(nx):
                        off = sum(d * i for d, i in zip(digits, incs))
                        out[off] = value(z, x0 + ox * st, y0 + oy * st)
                        if ox == nx - 1 and oy == ny - 1 and f["out_loop_3_reset"]:
                            clear(3)
                            bump(4)
                        elif ox == nx - 1 and oy == ny - 1 and f["out_loop_2_reset"]:
                            clear(2)
                            bump(3)
                        elif ox == nx - 1 and f["out_loop_1_reset"]:
                            clear(1)
                            bump(2)
                        else:
                            bump(0)
    return out


def inputs_for(doc, tmp, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    paths = []
    for i, rec in enumerate(doc["inputs"]):
        p = os.path.join(tmp, "tp_in_%d_%d.bin" % (seed, i))
        rng.integers(0, 256, rec["byte_size"]).astype(np.uint8).tofile(p)
        paths.append(p)
    return paths


_DOCS = {}


def inspect(nbg, model):
    """`nbg inspect --commands --json MODEL`, once per model (a file the
    checks do not rewrite)."""
    if (nbg, model) not in _DOCS:
        r = run([nbg, "inspect", "--commands", "--json", model])
        if r.returncode != 0:
            sys.exit("nbg inspect %s failed: %s" % (model, r.stderr))
        _DOCS[(nbg, model)] = json.loads(r.stdout)
    return _DOCS[(nbg, model)]


def op_and_fields(doc, n):
    op = next(o for o in doc["commands"]["operations"] if o["operation"] == n)
    return op, doc["commands"]["tp"]["commands"][op["command"]]["fields"]


def rings(doc, op):
    """The (lo, size) circular buffers the TP operation reads and writes through."""
    cmd = doc["commands"]["tp"]["commands"][op["command"]]
    return ring_of(cmd, "in"), ring_of(cmd, "out")


def around(nbg, dumper, corpus, tmp, name, n, seed):
    """Operation n of a corpus file on synthesized inputs: its JSON record,
    its TP fields, the buffers before and after it, and its input image."""
    model = os.path.join(corpus, name)
    doc = inspect(nbg, model)
    op, f = op_and_fields(doc, n)
    paths = inputs_for(doc, tmp, seed)
    prefetch(dumper, model, [n, n + 1], paths, tmp)
    before = dump(dumper, model, n, paths, tmp)
    after = dump(dumper, model, n + 1, paths, tmp)
    return doc, op, f, before, after, image(f, before[key(op["input_ref"])], op["input_ref"]["offset"],
                                            rings(doc, op)[0])


def check_per_op(nbg, dumper, corpus, tmp, failures, figures, tier):
    import numpy as np
    equal = checked = elements = wrapped = 0
    configs = split(PER_OP, tier, [c for c in PER_OP if c[1] < EARLY])
    for name, n, what in configs:
        doc, op, f, before, after, a = around(nbg, dumper, corpus, tmp, name, n, n)
        writes = walk(f, a)
        expect = {kk: v.copy() for kk, v in before.items()}
        ob = key(op["output_ref"])
        base = op["output_ref"]["offset"]
        out_ring = rings(doc, op)[1]
        pos = {}  # byte address: value written
        for off, v in writes.items():
            if f["out_image_data_type"] == 1:
                h = int((np.float32(v - f["in_zp"]) * np.float32(multiplier(f))).astype(np.float16).view(np.uint16))
                pos[int(wrap(base + 2 * off, out_ring))] = h & 0xff
                pos[int(wrap(base + 2 * off + 1, out_ring))] = h >> 8
            else:
                pos[int(wrap(base + off, out_ring))] = v
        for a, v in pos.items():
            expect[ob][a] = v
        # an input read past its ring's end: the case the wrap rule decides
        wrapped += int(reads_past_ring(doc, op))
        same = True
        for kk in expect:
            if not np.array_equal(expect[kk], after[kk]):
                same = False
                diff = np.nonzero(expect[kk] != after[kk])[0]
                failures.append("%s op %d (%s): %s differs from the Python walk at %d bytes "
                                "(first at +0x%x)" % (name, n, what, kk[0], len(diff), diff[0]))
        # a walk that wrote nothing or only the old bytes would prove nothing
        changed = sum(int(before[ob][a] != v) for a, v in pos.items())
        if changed < len(pos) // 4:
            failures.append("%s op %d: only %d of %d written bytes change; the input does not "
                            "exercise the operation" % (name, n, changed, len(pos)))
        checked += 1
        equal += same
        elements += len(pos)
    figures.append("per operation: %d of %d TP operations (%d of the %d configurations, %d bytes written; "
                   "%d reading past their circular buffer's end, through it) equal to the Python walk "
                   "of their fields, no other byte changed" %
                   (equal, checked, len(configs), len(PER_OP), elements, wrapped))
    if wrapped < (2 if tier == "all" else 1):  # one in each tier
        failures.append("per operation: %d operations read past their circular buffer's end, %d "
                        "expected: the wrap rule is not exercised" % (wrapped, 2 if tier == "all" else 1))


def dense(buf, base, shape):
    import numpy as np
    n = shape[0] * shape[1] * shape[2]
    return buf[base:base + n].astype(np.int64).reshape(shape)


def check_semantics(nbg, dumper, corpus, tmp, failures, figures):
    import numpy as np
    done = []
    # a TensorTranspose: the interleaved channels (x) outermost
    for name, n in (("v1/1000f_7d_face_age_7d.nb", 1), ("v1/10014_99_image_classify_99_S905D3.nb", 1)):
        _, op, f, before, after, a = around(nbg, dumper, corpus, tmp, name, n, 7)
        want = np.transpose(a, (2, 0, 1))
        got = dense(after[key(op["output_ref"])], op["output_ref"]["offset"], want.shape)
        if not np.array_equal(got, want):
            failures.append("%s op %d: the TensorTranspose output is not numpy.transpose(input, "
                            "(2, 0, 1)) (%d values differ)" % (name, n, int((got != want).sum())))
        done.append("%s op %d transpose %s" % (name, n, "x".join(map(str, a.shape))))
    # PoolingLayer2: numpy max pooling with the window's padding
    for name, n in (("v1/1000e_99_emotion_99.nb", 9), ("v1/1000e_99_emotion_99.nb", 15),
                    ("v1/1000e_99_emotion_99.nb", 23), ("v1/1000e_99_emotion_99.nb", 31)):
        _, op, f, before, after, a = around(nbg, dumper, corpus, tmp, name, n, 9)
        k, st = pooling(f)
        wx0, wy0 = s16(f["in_window_x_start"]), s16(f["in_window_y_start"])
        wx1, wy1 = s16(f["in_window_x_end"]), s16(f["in_window_y_end"])
        zs, ys, xs = a.shape
        padded = np.full((zs, wy1 - wy0 + 1, wx1 - wx0 + 1), -1, dtype=np.int64)
        sy, sx = max(0, -wy0), max(0, -wx0)
        part = a[:, max(wy0, 0):wy1 + 1, max(wx0, 0):wx1 + 1]
        padded[:, sy:sy + part.shape[1], sx:sx + part.shape[2]] = part
        oy = (padded.shape[1] - k) // st + 1
        ox = (padded.shape[2] - k) // st + 1
        want = np.full((zs, oy, ox), -1, dtype=np.int64)
        for dy in range(k):
            for dx in range(k):
                want = np.maximum(want, padded[:, dy:dy + st * (oy - 1) + 1:st,
                                               dx:dx + st * (ox - 1) + 1:st])
        got = dense(after[key(op["output_ref"])], op["output_ref"]["offset"], want.shape)
        if not np.array_equal(got, want):
            failures.append("%s op %d: the pooling output is not numpy's %dx%d stride %d max pool "
                            "(%d values differ)" % (name, n, k, k, st, int((got != want).sum())))
        done.append("%s op %d max pool %dx%d/%d %s -> %s" %
                    (name, n, k, k, st, "x".join(map(str, a.shape)), "x".join(map(str, want.shape))))
    # a reshuffle, read as the next NN convolution reads its input
    for name, n in (("v1/1000e_99_emotion_99.nb", 3), ("v1/1000e_99_emotion_99.nb", 16)):
        doc, op, f, before, after, a = around(nbg, dumper, corpus, tmp, name, n, 11)
        nxt = next(o for o in doc["commands"]["operations"]
                   if o["operation"] > n and o["engine"] == "NN")
        cx, cy, cz = nxt["input"]
        df = nxt["dataflow"]
        buf = after[key(nxt["input_ref"])]
        got = np.zeros((cz, cy, cx), dtype=np.int64)
        for c in range(cz):
            for r in range(cy):
                s = nxt["input_ref"]["offset"] + c * df["input_slice_stride"] + r * df["input_row_stride"]
                got[c, r] = buf[s:s + cx]
        want = a[:cz, ::2, ::2][:, :cy, :cx]
        if got.shape != want.shape or not np.array_equal(got, want):
            failures.append("%s op %d: the image op %d reads is not the input subsampled by 2" %
                            (name, n, nxt["operation"]))
        done.append("%s op %d reshuffle read by op %d (%dx%dx%d)" %
                    (name, n, nxt["operation"], cx, cy, cz))
    figures.append("semantics: %d operations equal their layer's numpy result: %s" %
                   (len(done), "; ".join(done)))


def landmarks(doc):
    """The NN 3x3 convolutions, in order."""
    return [o for o in doc["commands"]["operations"]
            if o["engine"] == "NN" and o["kernel"][:2] == [3, 3]]


def first_refused(nbg, model):
    r = run([nbg, "run", "--backend", "cpu", "--check", model])
    for line in r.stdout.splitlines():
        if line.startswith("  op ") and ": refused " in line:
            return int(line.split()[1])
    return 1 << 30


# The targets whose commands carry the 15-bit scale (doc/cpu-backend.md, "The scale"):
# the same integers on every one of them; 0xb9 / 0xbe round the scale's
# mantissa one unit differently, 0xe8 fuses additions into convolutions.
SAME_SCALE = (0x7d, 0x88, 0x99, 0xa1)
# The convolutions compared: the third (after the first reshuffle) and the
# first after each max pooling layer's TP operations, the last one the
# network's output before its SH pooling and softmax.
COMPARED = (2, 4, 6, 8, 10)


def emotion_inputs(tmp):
    """The two synthesized 64x64 uint8 images the emotion comparisons use,
    written to files in tmp: noise around 128 and a ramp."""
    import numpy as np
    rng = np.random.default_rng(2028)
    imgs = [np.clip(rng.normal(128, 50, (64, 64)), 0, 255).astype(np.uint8),
            np.add.outer(np.arange(64) * 2, np.arange(64) * 3).clip(0, 255).astype(np.uint8)]
    paths = []
    for i, im in enumerate(imgs):
        paths.append(os.path.join(tmp, "emotion_tp_in_%d.bin" % i))
        im.tofile(paths[-1])
    return paths


def check_cross_target(nbg, dumper, corpus, tmp, failures, figures, tier):
    """Part 3: the corpus tier compares the files of the newest file-format
    version, the slow tier those of the others."""
    import numpy as np
    every = sorted(glob.glob(os.path.join(corpus, "v1", "*emotion*.nb")))
    docs = inspect_many(nbg, every, "--commands")
    newest = max(d["version"] for d in docs.values())
    files = split(every, tier, [f for f in every if docs[f]["version"] == newest])
    # the version's reference: its first file of a 15-bit-scale target
    files.sort(key=lambda f: (docs[f]["version"], docs[f]["target"] not in SAME_SCALE, f))
    paths = emotion_inputs(tmp)
    ref = {}      # (version, landmark index, input) -> image
    # per landmark and group ("same" / "other"): files, values, differing, worst
    stats = {}
    shapes, tps = {}, {}
    reached_end, excluded = [], set()
    for f in files:
        doc = docs[f]
        marks = landmarks(doc)
        if len(marks) != 11:
            failures.append("%s: %d 3x3 convolutions, not the emotion network's 11" %
                            (os.path.basename(f), len(marks)))
            continue
        stop = first_refused(nbg, f)
        # an NN convolution fused with an addition (0xe8's ConvolutionReluPoolingAddLayer)
        # rounds once where the others round twice; its images are compared against the
        # others' spread in check_cpu_add.py, these limits hold up to it
        adds = [o["operation"] for o in doc["commands"]["operations"]
                if o["engine"] == "NN" and o["layer_name"] == "ConvolutionReluPoolingAddLayer"]
        if adds:
            excluded.add(os.path.basename(f))
            stop = min(stop, adds[0])
        group = "same" if doc["target"] in SAME_SCALE else "other"
        for i, op in enumerate(marks):
            n = op["operation"]
            if n >= stop:
                break
            if i not in COMPARED:
                continue
            shapes[i] = "x".join(map(str, op["output"]))
            tps[i] = max(tps.get(i, 0), sum(1 for o in doc["commands"]["operations"]
                                            if o["engine"] == "TP" and o["operation"] < n))
            if i == len(marks) - 1:
                reached_end.append(os.path.basename(f))
            st = stats.setdefault((i, group), [0, 0, 0, 0])
            st[0] += 1
            pair = stats.setdefault((i, "pair"), [0, 0, 0, 0])
            for j, p in enumerate(paths):
                if i == COMPARED[0]:  # one run per input dumps every compared convolution's output
                    prefetch(dumper, f, [m["operation"] + 1 for k, m in enumerate(marks)
                                         if k in COMPARED and m["operation"] < stop], [p], tmp, keep=j)
                img = read_output(op, dump(dumper, f, n + 1, [p], tmp))
                k = (doc["version"], i, j)
                if k not in ref:
                    ref[k] = img
                    continue
                d = np.abs(img - ref[k])
                st[1] += d.size
                st[2] += int((d > 0).sum())
                st[3] = max(st[3], int(d.max()))
                st.append(float(d.mean()))
                if doc["target"] in (0xb9, 0xbe):
                    # 0xb9 and 0xbe: one scale encoding, TP pooling on 1 and 3 cores
                    kb = (doc["version"], i, j, "b9be")
                    if kb not in ref:
                        ref[kb] = img
                        continue
                    d = np.abs(img - ref[kb])
                    pair[0] += 1
                    pair[1] += d.size
                    pair[2] += int((d > 0).sum())
    rows = []
    for i in sorted(shapes):
        same = stats.get((i, "same"), [0, 0, 0, 0])
        other = stats.get((i, "other"), [0, 0, 0, 0])
        pair = stats.get((i, "pair"), [0, 0, 0, 0])
        mean = max(other[4:]) if other[4:] else 0.0
        rows.append("conv %d (%s, after up to %d TP ops): 0x7d/0x88/0x99/0xa1 %d files, %d of %d "
                    "values differ; 0xb9 against 0xbe %d of %d; 0xb9/0xbe/0xe8 against "
                    "0x7d-0xa1 %d of %d, by at most %d, mean at most %.3f steps" %
                    (i + 1, shapes[i], tps[i], same[0], same[2], same[1], pair[2], pair[1],
                     other[2], other[1], other[3], mean))
        if same[2]:
            failures.append("emotion conv %d: the 15-bit-scale targets differ in %d of %d values "
                            "(by up to %d)" % (i + 1, same[2], same[1], same[3]))
        if pair[2]:
            failures.append("emotion conv %d: 0xb9 and 0xbe differ in %d of %d values" %
                            (i + 1, pair[2], pair[1]))
        if other[3] > 4 or mean > 1.0:
            failures.append("emotion conv %d: 0xb9/0xbe/0xe8 differ by up to %d, mean %.3f" %
                            (i + 1, other[3], mean))
    figures.append("emotion family, 2 inputs, each file against its version's first "
                   "0x7d-0xa1 file:\n  " + "\n  ".join(rows))
    figures.append("emotion family: %d of %d files run up to the network's last convolution "
                   "(the output before its SH pooling and softmax); compared only up to their "
                   "first NN convolution fused with an addition: %s" %
                   (len(reached_end), len(files), ", ".join(sorted(excluded)) or "none"))
    if len(reached_end) * 3 < len(files) * 2 or len(shapes) != len(COMPARED):
        failures.append("only %d of %d emotion files reach their last convolution" %
                        (len(reached_end), len(files)))


# One network (a tiny YOLO, 416x416x3 input) compiled by three versions of
# the vendor's toolkit for target 0x99: 0x1000c cuts its early layers into
# 332 operations, 0x1000e and 0x1000f into 75 and 74, each streaming them
# through circular buffers of its own size and place.
HAND_TINY = ["v1/1000c_99_hand-tiny.nb", "v1/1000e_99_hand-tiny.nb", "v1/1000f_99_hand-tiny.nb"]


def reads_past_ring(doc, op):
    """Whether the TP operation's input window, read from its fields,
    passes the end of its circular buffer."""
    f = doc["commands"]["tp"]["commands"][op["command"]]["fields"]
    lo, size = rings(doc, op)[0]
    x1 = min(s16(f["in_window_x_end"]), f["in_image_x_size"] - 1)
    y1 = min(s16(f["in_window_y_end"]), f["in_image_y_size"] - 1)
    last = (op["input_ref"]["offset"] + (f["in_image_z_size"] - 1) * f["in_image_slice"] +
            y1 * f["in_image_stride"] + x1)
    return bool(size) and last >= lo + size


def wrapping_inputs(doc, upto):
    """The TP operations below `upto` whose input window passes the end of
    its circular buffer."""
    return sum(1 for op in doc["commands"]["operations"]
               if op["engine"] == "TP" and op["operation"] < upto and reads_past_ring(doc, op))


def check_compilations(nbg, dumper, corpus, tmp, failures, figures):
    """The NN convolution ahead of the network's first SH operation (1x1,
    256 -> 128 channels at 13x13, the one NN image of that shape) in the
    three hand-tiny files, on two
    synthesized inputs: the same image within one step, after each file has
    streamed its early layers through its own circular buffers."""
    import numpy as np
    rows, seen = [], {}
    for name in HAND_TINY:
        model = os.path.join(corpus, name)
        doc = inspect(nbg, model)
        convs = [o for o in doc["commands"]["operations"]
                 if o["engine"] == "NN" and o["output"] == [169, 1, 128]]
        if len(convs) != 1:
            failures.append("%s: %d NN operations write a 169x1x128 image, 1 expected" %
                            (name, len(convs)))
            return
        conv = convs[0]
        wraps = wrapping_inputs(doc, conv["operation"])
        for image_no in (41, 42):
            bufs = dump(dumper, model, conv["operation"] + 1, inputs_for(doc, tmp, image_no), tmp)
            seen.setdefault(image_no, []).append(read_output(conv, bufs))
        rows.append("%s op %d (%d ops before it, %d TP reading past their circular buffer's end)" %
                    (name, conv["operation"], conv["operation"], wraps))
        if wraps < 10:
            failures.append("%s: only %d TP operations read past their circular buffer's end" %
                            (name, wraps))
    worst = differ = total = 0
    for imgs in seen.values():
        for img in imgs[1:]:
            d = np.abs(img - imgs[0])
            worst, differ, total = max(worst, int(d.max())), differ + int((d > 0).sum()), total + d.size
    figures.append("hand-tiny compilations: %s; against the first, %d of %d values differ, by at "
                   "most %d step" % ("; ".join(rows), differ, total, worst))
    if worst > 1 or differ * 1000 > total:
        failures.append("hand-tiny compilations differ in %d of %d values, by up to %d steps" %
                        (differ, total, worst))


def need_numpy(program):
    """numpy from this interpreter or Debian's (re-executed); exit 77 without."""
    try:
        import numpy  # noqa: F401
    except ImportError as e:
        from check_weights_lenet import DEBIAN_PYTHON
        if os.path.exists(DEBIAN_PYTHON) and not os.environ.get("NBG_TP_REEXEC") and \
                os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON):
            os.environ["NBG_TP_REEXEC"] = "1"
            os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
        print("%s: skipped: Debian's python3-numpy (scripts/setup.sh installs it) is "
              "missing: %s" % (program, e))
        sys.exit(SKIP)


# (word, first bit, width) of TP command fields (lib/analysis/graph/commands_fields.h)
TPF = {"in_window_x_start": (4, 0, 16), "alu_f2i_enable": (6, 29, 1),
       "out_image_base_address": (13, 0, 32), "flat_rounding_mode": (24, 1, 2), "out_zp": (30, 0, 8)}
# (file, operation, field, value, reason id, a word of the reason)
REFUSALS = [
    ("v1/1000e_99_hand-tiny.nb", 63, "in_window_x_start", 0xffff, "data-type-unsupported", "border pixel"),
    ("v1/1000e_99_hand-tiny.nb", 63, "flat_rounding_mode", 0, "tp-field-unsupported", "flat_rounding_mode 0"),
    ("v1/1000e_99_hand-tiny.nb", 63, "out_zp", 5, "tp-requantization-unsupported", "out_zp 5"),
    ("v1/1000e_99_hand-tiny.nb", 63, "alu_f2i_enable", 1, "tp-field-unsupported", "into fp16"),
    ("v1/1000e_99_hand-tiny.nb", 63, "out_image_base_address", 2177, "data-type-unsupported", "odd address"),
    ("v1/1000e_99_emotion_99.nb", 3, "alu_f2i_enable", 0, "tp-field-unsupported", "into uint8"),
]


def check_refusals(nbg, corpus, tmp, failures, figures):
    """Part 4: one field of a command mutated, the plan refuses that
    operation with the id and a sentence naming what it found."""
    from check_cpu_ref import check_refused
    for name, n, field, value, rid, needle in REFUSALS:
        model = os.path.join(corpus, name)
        doc = inspect(nbg, model)
        op, _ = op_and_fields(doc, n)
        cmd = doc["commands"]["tp"]["commands"][op["command"]]
        word, bit, width = TPF[field]
        data = bytearray(open(model, "rb").read())
        at = cmd["offset"] + 4 * word
        w = int.from_bytes(data[at:at + 4], "little")
        mask = ((1 << width) - 1) << bit
        data[at:at + 4] = ((w & ~mask) | (value << bit & mask)).to_bytes(4, "little")
        check_refused(nbg, [("%s op %d %s %d" % (name, n, field, value), data, rid, needle)], n, tmp, failures)
    figures.append("refusals: %d mutated TP commands (a copy into fp16 with a window past its image, "
                   "another rounding mode, an output zero point, float out, an odd output address; a "
                   "uint8 copy that leaves float) refused with their ids" % len(REFUSALS))


def main():
    argv, tier = tier_of(sys.argv)
    if len(argv) != 5 or argv[3] != "--corpus":
        sys.exit("usage: check_cpu_tp.py NBG DUMP --corpus DIR [--tier corpus|slow]")
    nbg, dumper, corpus = argv[1], argv[2], argv[4]
    from tc_corpus import need
    need("check_cpu_tp", "the TP operation checks", corpus)
    need_numpy("check_cpu_tp")
    failures, figures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        check_per_op(nbg, dumper, corpus, tmp, failures, figures, tier)
        if in_tier(tier, "corpus"):
            check_semantics(nbg, dumper, corpus, tmp, failures, figures)
        check_cross_target(nbg, dumper, corpus, tmp, failures, figures, tier)
        if in_tier(tier, "slow"):
            check_compilations(nbg, dumper, corpus, tmp, failures, figures)
        if in_tier(tier, "corpus"):
            check_refusals(nbg, corpus, tmp, failures, figures)
    finish(figures, failures)


if __name__ == "__main__":
    main()
