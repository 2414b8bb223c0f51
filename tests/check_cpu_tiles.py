#!/usr/bin/env python3
"""Row tiles, interleaved input records and circular buffers on the CPU
backend, against the same network compiled for other targets (evidence T):
the image_classify family of corpus/v1 (one MobileNet-like network, one
toolkit version, targets 0x99, 0xb9, 0xbe, 0xe8 and 0x1000000e).

1. Interleaved input.  The input record is NHWC (dimensions 3, 224, 224
   innermost first).  The 0x99 file transposes it with a TP operation and
   then runs layer 0 (conv 3x3x3 -> 32, stride 2) on planes; the 0xbe, 0xe8
   and 0xb9 files run layer 0 on the record directly.  Their layer 0 must
   agree with 0x99's within one step (the 0xb9/0xbe scale mantissa rounds
   one unit differently), and the numpy reference of the same 0xbe command
   reading the record as planes (what the fields alone say) must not.
2. The 0x1000000e layer-0 tiles (224x7 -> 112x3 each, read interleaved,
   written into a 5-row ring of VIP SRAM): the rows each tile writes, read
   back through the ring, equal the same rows of the 0xbe layer 0, for the
   first, second, a middle and the last tile; the first NN operations of the
   file (layer 0-2 tiles, through the rings) equal check_cpu.py's numpy
   reference, which reads and writes through the ring itself.
3. The 0xb9 layer-2 tiles, placed by their input rows (their stored output
   offsets, 16 times those, would pass the memory pool's end): layer 4
   (conv 1x1x64 -> 128, all 401,408 values) equals the 0xbe file's.
   `nbg run --backend cpu --check` marks those tiles ("rows placed by its
   input").
4. Whole models: the two 0x1000000e files and the 0xb9 file against the
   0xbe and 0xe8 files on 2 synthesized images: the 1,001 outputs, top-1
   and the largest difference in quantization steps; and layer 27 (1,024
   values) of the 0x1000000e file of version 0x10014 against 0xe8's.

Tiers (--tier, check_cpu.tier_of): corpus runs parts 1 to 3 on the first
synthesized image; slow on the second, and part 4 (whole networks).  No
--tier: both.

Usage: check_cpu_tiles.py NBG DUMP --corpus DIR [--tier corpus|slow] (exit
77 when the files or Debian's python3-numpy are missing).
"""
import os
import sys
import tempfile

import check_cpu as cc
import check_cpu_nn as cn

SKIP = 77
V1 = "v1/"
NN99 = V1 + "10014_99_image_classify_99_S905D3.nb"
BE, E8, B9 = cn.BE, cn.E8, cn.B9
X2 = [cn.X2, V1 + "1000f_1000000e_image_classify_1e_A311X2.nb"]


def image_through_ring(doc, op, bufs):
    """The image an NN operation wrote, [z][y][x], read through its output
    circular buffer (check_cpu.ring_of)."""
    cmd = doc["commands"]["nn"]["commands"][op["command"]]
    df = op["dataflow"]
    x, y, z = op["output"]
    at = cc.addresses(op["output_ref"]["offset"], df["output_row_stride"], df["output_slice_stride"],
                      1, cc.ring_of(cmd, "out"), z, y, x)
    return bufs[cc.key(op["output_ref"])][at].astype(int)


def layer_ops(doc, layer):
    return [o for o in doc["commands"]["operations"]
            if o["engine"] == "NN" and o["layer_id"] == layer]


def check_interleaved(nbg, dumper, corpus, paths, tmp, failures, figures):
    import numpy as np
    nn99 = os.path.join(corpus, NN99)
    doc99 = cc.model_info(nbg, nn99, tmp)[0]
    tr = [o for o in doc99["commands"]["operations"] if o["operation"] == 1][0]
    if tr["engine"] != "TP" or tr["layer_name"] != "TensorTranspose":
        failures.append("0x99 image_classify: operation 1 is not the TensorTranspose")
        return
    worst, differ, total, planar_worst = 0, 0, 0, 0
    docbe, wbe, wdir = cc.model_info(nbg, os.path.join(corpus, BE), tmp)
    for p in paths:
        cc.prefetch(dumper, os.path.join(corpus, BE), [1, 2], [p], tmp)
        _, ref, _ = cn.output_after(nbg, dumper, nn99, 2, p, tmp)
        for m in (BE, E8, B9):
            _, q, _ = cn.output_after(nbg, dumper, os.path.join(corpus, m), 1, p, tmp)
            d = np.abs(q - ref)
            worst, differ, total = max(worst, int(d.max())), differ + int((d > 0).sum()), total + d.size
        # the same 0xbe command with its input read as planes
        op = [o for o in docbe["commands"]["operations"] if o["operation"] == 1][0]
        f = dict(docbe["commands"]["nn"]["commands"][op["command"]]["fields"])
        f["coef_zero_point"] = wbe[1]["zero_point"]
        w = np.load(os.path.join(wdir, wbe[1]["files"]["weights"]))
        b = np.load(os.path.join(wdir, wbe[1]["files"]["bias"]))
        before = cc.dump(dumper, os.path.join(corpus, BE), 1, [p], tmp)
        planar = cc.reference_op(op, f, w, b, before, docbe["target"])
        planar_worst = max(planar_worst, int(np.abs(planar - ref).max()))
    figures.append("interleaved input: layer 0 of 0xbe, 0xe8, 0xb9 (reading the NHWC record) against "
                   "0x99 (TP transpose, then layer 0 on planes), %d inputs: %d of %d values differ, "
                   "by at most %d step; read as planes, 0xbe's differs by up to %d steps" %
                   (len(paths), differ, total, worst, planar_worst))
    if worst > 1 or differ * 1000 > total:
        failures.append("interleaved input: layer 0 differs from 0x99's by up to %d steps (%d values)" %
                        (worst, differ))
    if planar_worst < 32:
        failures.append("interleaved input: the planar reading is within %d steps, so the comparison "
                        "does not tell the layouts apart" % planar_worst)


def check_x2_tiles(nbg, dumper, corpus, paths, tmp, failures, figures):
    import numpy as np
    x2 = os.path.join(corpus, X2[0])
    doc = cc.model_info(nbg, x2, tmp)[0]
    tiles = layer_ops(doc, 0)
    if len(tiles) != 38:
        failures.append("0x1000000e: layer 0 has %d tiles, expected 38" % len(tiles))
        return
    first = tiles[0]["output_ref"]["offset"]
    pick = [tiles[0], tiles[1], tiles[2], tiles[19], tiles[-1]]
    same = rows = 0
    wrapped = 0
    for p in paths:
        _, ref, _ = cn.output_after(nbg, dumper, os.path.join(corpus, BE), 1, p, tmp)
        cc.prefetch(dumper, x2, [op["operation"] + 1 for op in pick], [p], tmp)
        for op in pick:
            bufs = cc.dump(dumper, x2, op["operation"] + 1, [p], tmp)
            t = image_through_ring(doc, op, bufs)
            r0 = (op["output_ref"]["offset"] - first) // op["dataflow"]["output_row_stride"]
            lo, size = cc.ring_of(doc["commands"]["nn"]["commands"][op["command"]], "out")
            wrapped += int(bool(size) and op["output_ref"]["offset"] + 31 * op["dataflow"]["output_slice_stride"] >= lo + size)
            rows += t.shape[1]
            same += int(np.array_equal(t, ref[:, r0:r0 + t.shape[1]]))
    figures.append("0x1000000e layer 0: tiles %s (%d rows; %d of the tile runs wrap around the ring) "
                   "equal the 0xbe layer 0's rows in %d of %d runs" %
                   (",".join(str(o["operation"]) for o in pick), rows, wrapped, same,
                    len(pick) * len(paths)))
    if same != len(pick) * len(paths) or not wrapped:
        failures.append("0x1000000e layer 0 tiles: %d of %d equal to 0xbe's rows (%d wrapping)" %
                        (same, len(pick) * len(paths), wrapped))
    cc.check_ops(nbg, dumper, x2, [paths[:1]], tmp, failures, figures, max_ops=12)


def run_output(nbg, model, path, tmp):
    out, _, err = cc.run_cpu(nbg, model, [path], tmp)
    return (None, err) if out is None else (out.astype(int), None)


def check_b9_layer4(nbg, dumper, corpus, paths, tmp, failures, figures):
    import numpy as np
    b9 = os.path.join(corpus, B9)
    doc = cc.model_info(nbg, b9, tmp)[0]
    l2 = layer_ops(doc, 2)
    pool = doc["memory_pool_bytes"]
    last = l2[-1]
    df = last["dataflow"]
    end = (last["output_ref"]["offset"] + (last["output"][2] - 1) * df["output_slice_stride"] +
           (last["output"][1] - 1) * df["output_row_stride"] + last["output"][0])
    steps = [b["output_ref"]["offset"] - a["output_ref"]["offset"] for a, b in zip(l2, l2[1:])]
    rows = [b["input_ref"]["offset"] - a["input_ref"]["offset"] for a, b in zip(l2, l2[1:])]
    if end <= pool or any(s != 16 * r for s, r in zip(steps, rows)):
        failures.append("0xb9 layer 2: the stored output offsets (steps %s, input steps %s, end %d of "
                        "a %d-byte pool) are not the measured pattern" % (steps, rows, end, pool))
    plan = cc.run([nbg, "run", "--backend", "cpu", "--check", b9]).stdout
    marked = [ln for ln in plan.splitlines() if ", rows placed by its input" in ln and ": execute" in ln]
    if [ln.split()[1] for ln in marked] != [str(o["operation"]) for o in l2[1:]]:
        failures.append("0xb9 --check: the placed tiles are %s, expected operations %s" %
                        ([ln.split()[1] for ln in marked], [o["operation"] for o in l2[1:]]))
    same = 0
    for p in paths:
        _, a, _ = cn.output_after(nbg, dumper, b9, 13, p, tmp)
        _, c, _ = cn.output_after(nbg, dumper, os.path.join(corpus, BE), 12, p, tmp)
        same += int(np.array_equal(a, c))
    figures.append("0xb9 layer 2: %d tiles whose stored output offsets step %s (16 times their "
                   "input rows; the last would end at byte %d of a %d-byte pool), placed by their "
                   "input rows: layer 4 (%d values) equals 0xbe's on %d of %d inputs" %
                   (len(l2), steps, end, pool, 128 * 49 * 64, same, len(paths)))
    if same != len(paths):
        failures.append("0xb9 layer 4: equal to 0xbe's on %d of %d inputs" % (same, len(paths)))


def check_whole(nbg, dumper, corpus, paths, tmp, failures, figures):
    import numpy as np
    refs = {}
    for m in (BE, E8):
        for i, p in enumerate(paths):
            refs[(m, i)], err = run_output(nbg, os.path.join(corpus, m), p, tmp)
            if err:
                failures.append("%s: %s" % (m, err))
                return
    for m in X2 + [B9]:
        top = worst = differ = 0
        for i, p in enumerate(paths):
            out, err = run_output(nbg, os.path.join(corpus, m), p, tmp)
            if err:
                failures.append("%s does not run whole: %s" % (m, err))
                break
            for r in (BE, E8):
                ref = refs[(r, i)]
                top += int(out.argmax() == ref.argmax())
                worst = max(worst, int(np.abs(out - ref).max()))
                differ += int((out != ref).sum())
        else:
            figures.append("%s, whole, against 0xbe and 0xe8 on %d inputs: top-1 equal in %d of %d, "
                           "%d of %d outputs differ, at most %d steps" %
                           (os.path.basename(m), len(paths), top, 2 * len(paths), differ,
                            2 * 1001 * len(paths), worst))
            if top != 2 * len(paths) or worst > 1:
                failures.append("%s: top-1 equal in %d of %d, largest difference %d steps" %
                                (os.path.basename(m), top, 2 * len(paths), worst))
    e8 = os.path.join(corpus, E8)
    for m in X2[:1]:
        doc = cc.model_info(nbg, os.path.join(corpus, m), tmp)[0]
        op = layer_ops(doc, 27)
        same = 0
        for p in paths:
            _, a, _ = cn.output_after(nbg, dumper, e8, 33, p, tmp)
            bufs = cc.dump(dumper, os.path.join(corpus, m), op[-1]["operation"] + 1, [p], tmp)
            same += int(len(op) == 1 and np.array_equal(image_through_ring(doc, op[0], bufs), a))
        figures.append("%s layer 27 (1024 values) equals 0xe8's on %d of %d inputs" %
                       (os.path.basename(m), same, len(paths)))
        if same != len(paths):
            failures.append("%s layer 27: equal to 0xe8's on %d of %d inputs" %
                            (os.path.basename(m), same, len(paths)))


def main():
    argv, tier = cc.tier_of(sys.argv)
    if len(argv) != 5 or argv[3] != "--corpus":
        sys.exit("usage: check_cpu_tiles.py NBG DUMP --corpus DIR [--tier corpus|slow]")
    nbg, dumper, corpus = argv[1], argv[2], argv[4]
    for need in [NN99, BE, E8, B9] + X2:
        if not os.path.exists(os.path.join(corpus, need)):
            print("check_cpu_tiles: skipped: %s does not exist (the meson option corpus_dir "
                  "points at the real files)" % os.path.join(corpus, need))
            sys.exit(SKIP)
    from check_cpu_tp import need_numpy
    need_numpy("check_cpu_tiles")
    failures, figures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        paths = cn.synth(tmp, 2)
        # the first layers (a few operations of each file): the corpus tier on
        # the first input, the slow tier on the second; the whole networks
        # (minutes under ASan) in the slow tier
        some = cc.split(paths, tier, paths[:1])
        check_interleaved(nbg, dumper, corpus, some, tmp, failures, figures)
        check_x2_tiles(nbg, dumper, corpus, some, tmp, failures, figures)
        check_b9_layer4(nbg, dumper, corpus, some, tmp, failures, figures)
        if cc.in_tier(tier, "slow"):
            check_whole(nbg, dumper, corpus, paths, tmp, failures, figures)
    cc.finish(figures, failures)


if __name__ == "__main__":
    main()
