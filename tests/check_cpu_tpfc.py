#!/usr/bin/env python3
"""TP fully connected layers (weights decoder and CPU backend) against
references no C code here computes.

1. Decoded weights against the float source: LeNet's ip2 is two TP
   operations of lenet_v2_0x10016.nb (models_dir/lenet-caffe); their
   decoded codes (`nbg weights --out`), side by side, are fitted to Caffe's
   ip2 weights (lenet.caffemodel) as w = s * (q - coef_zp): correlation at
   least 0.9999, at least 99 % of the weights within half a step; the stored
   biases correlate with Caffe's.
2. The scale encoding: lenet_v3_0x10020.nb is the same quantized network
   compiled for another target, where ip2 is an NN operation whose scale
   encoding is established (doc/cpu-backend.md, "The scale"); the TP commands'
   (2^15 + alu_output_post_multiplier) / 2^(15 + shift) must equal that
   scale within 2^-15, and the zero points must be the same.
3. Each TP fully connected operation against numpy: the machine's buffers
   before and after it (nbg-cpu-dump) on lenet.dat and synthesized
   variants; numpy computes bias + sum((w - coef_zp) * x), the exact
   rational product with the scale, rounded per the command's
   flat_rounding_mode (1 in LeNet: half to even), plus out_zp, saturated, from the decoded fields alone.  Byte for byte, and no
   other byte of any buffer changes.
4. The whole network against Caffe: the backend runs LeNet up to the
   softmax on lenet.dat and 24 variants (nbg-cpu-dump); the
   ten ip2 outputs, dequantized with one least-squares scale per input,
   against Caffe's ip2 on the same pixels: top-1 equal on every input;
   correlation and the largest difference (in quantization steps) are
   printed; the output scale implied by the commands (ip1's scale, fitted
   over all inputs, times the kernel scale over the TP scale) agrees with
   the one fitted over all inputs within 1 %.  Then `nbg run --backend
   cpu` runs the whole model (the softmax by reference semantics): its FP16
   probabilities against Caffe's softmax, top-1 equal on every input, the
   largest difference printed; the softmax's input scale (its uniform)
   agrees with ip2's fitted output scale within 1 %.
5. Across targets: the image classification network of corpus/v1 is
   compiled for 0x1000000e, 0x99, 0xa1, 0xb9, 0xbe and 0xe8
   (10014_*_image_classify_*), its last fully connected layer split over 8,
   8, 6, 8, 3 and 2 TP operations (the targets' TP core counts) whose
   streams hold Huffman chunks, packed or 64-byte aligned, or raw chunks
   (0x99, 0xa1): the decoded weights and biases, joined in operation order,
   are equal on every file.  (The backend does not reach that layer on these
   files: earlier TP operations are refused, so their outputs are not
   compared.)
6. The 0xbe file of that network runs whole on the backend: its three TP
   fully connected operations (64-byte aligned chunks) against numpy on a
   synthesized image, byte for byte, and `nbg run --backend cpu` writes
   the last one's output buffer as output_0.bin.
7. The 0xbe and 0xe8 files both run whole: on three synthesized images
   their 1001 outputs agree (at most 1 % more than one step apart, the
   same top-1).
8. The output shift is a signed 7-bit number (the lookup tables' reading of
   the same field): LeNet with both TP operations' shift set to 126 (-2)
   gives what numpy computes reading it signed, not unsigned (its outputs
   saturate, so only the reading's sign is told apart).

Tiers (--tier, check_cpu.tier_of): corpus runs items 1, 2 and 8, items 3
and 4 on lenet.dat and its first variant, and item 5 on the two smallest
files; slow runs items 3 and 4 on the other 23 inputs, item 5 on all six
files, and items 6 and 7 (the image classification network whole).  No
--tier: both.

Usage: check_cpu_tpfc.py NBG DUMP --corpus DIR --models DIR [--tier
corpus|slow] (exit 77 when the files or Debian's python3-numpy /
python3-protobuf are missing).
"""
import json
import os
import sys
import tempfile
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_cpu import (CORPUS_INPUTS, caffe_forward, dump, finish, fit, in_tier, model_info, prefetch,  # noqa: E402
                       run, run_cpu, split, synth_inputs, tier_of)

SKIP = 77
LENET = os.path.join("lenet-caffe", "lenet_v2_0x10016.nb")
LENET3 = os.path.join("lenet-caffe", "lenet_v3_0x10020.nb")
IC = ["10014_1000000e_image_classify_1e_A311X2.nb", "10014_99_image_classify_99_S905D3.nb",
      "10014_a1_image_classify_a1_C308X.nb", "10014_b9_image_classify_b9_T962.nb",
      "10014_be_image_classify_be_C305X.nb", "10014_e8_image_classify_e8_T982.nb"]
BE = IC[4]


def tp_fc_ops(doc, weights):
    """The TP operations whose stream decoded as a fully connected layer,
    in operation order."""
    return [op for op in doc["commands"]["operations"]
            if op["engine"] == "TP" and op["operation"] in weights
            and weights[op["operation"]]["format"] == "tp-fc"]


def joined(wdir, weights, ops):
    import numpy as np
    q = np.vstack([np.load(os.path.join(wdir, weights[o["operation"]]["files"]["weights"]))
                   .reshape(weights[o["operation"]]["shape"][0], -1) for o in ops])
    b = np.concatenate([np.load(os.path.join(wdir, weights[o["operation"]]["files"]["bias"]))
                        for o in ops])
    return q, b


def tp_shift(f, signed=True):
    """The TP command's output shift: 7 bits, read as a signed number (the
    lookup tables' reading, doc/cpu-backend.md)."""
    s = f["alu_output_postshift"] | f["alu_output_postshift_5_6"] << 5
    return s - 128 if signed and s >= 64 else s


def tp_scale(f, signed=True):
    """The TP command's scale: a 15-bit mantissa, the shift 127 - exponent."""
    return Fraction(32768 + f["alu_output_post_multiplier"]) / Fraction(2) ** (15 + tp_shift(f, signed))


def requant(acc, scale, zp, mode):
    """acc x scale rounded per flat_rounding_mode (0 half away from zero,
    1 half to even), + zp, saturated to 0..255."""
    assert mode in (0, 1), mode
    v = Fraction(int(acc)) * scale
    r, rem = divmod(abs(v.numerator), v.denominator)
    if 2 * rem > v.denominator or (2 * rem == v.denominator and (mode == 0 or r % 2)):
        r += 1
    return max(0, min(255, (-r if v < 0 else r) + zp))


def check_weights(layers, q, b, zp, failures, figures):
    import numpy as np
    w2, b2 = layers["ip2"]
    w2 = w2.reshape(w2.shape[0], -1)
    d = (q.astype(np.float64) - zp)
    s = float((d * w2).sum() / (d * d).sum())
    corr = float(np.corrcoef(d.ravel(), w2.ravel())[0, 1])
    half = float(np.mean(np.abs(w2 / s - d) <= 0.5))
    bcorr = float(np.corrcoef(b.astype(np.float64), b2)[0, 1])
    figures.append("LeNet ip2 (2 TP operations, 10x500): decoded codes vs Caffe weights: "
                   "correlation %.6f, %.2f %% within half a step (step %.6g); stored biases vs "
                   "Caffe's: correlation %.4f" % (corr, 100 * half, s, bcorr))
    if corr < 0.9999 or half < 0.99:
        failures.append("LeNet ip2 weights fit Caffe at %.6f (%.4f within half a step)" %
                        (corr, half))
    if bcorr < 0.95:
        failures.append("LeNet ip2 biases correlate with Caffe's at %.4f" % bcorr)
    return s


def check_scale(nbg, models, tmp, tp_fields, failures, figures):
    r = run([nbg, "inspect", "--only", "--commands", "--json", os.path.join(models, LENET3)])
    nn = json.loads(r.stdout)["commands"]["nn"]["commands"]
    # v3's ip2: the NN command with the TP layers' kernel zero point and 10 outputs
    cand = [c["fields"] for c in nn if c["fields"]["coef_zero_point"] == tp_fields["coef_zp"]
            and c["fields"]["out_image_z_size"] == 10]
    if len(cand) != 1:
        failures.append("lenet_v3: %d NN commands look like ip2" % len(cand))
        return
    f = cand[0]
    m = (f["post_multiplier"] | f["post_multiplier_1_to_6"] << 1 | f["post_multiplier_7_to_14"] << 7
         | f["post_multiplier_15_to_22"] << 15)
    e = f["post_shift"] | f["post_shift_bit_5_6"] << 5
    nn_scale = Fraction(2 ** 23 + m, 2 ** 23) * Fraction(2) ** (e - 127)
    tps = tp_scale(tp_fields)
    rel = abs(float(tps / nn_scale) - 1)
    figures.append("ip2's scale: TP commands (2^15 + %d) / 2^(15 + %d) = %.8g; lenet_v3's NN "
                   "command %.8g; relative difference %.2g (2^-15 = %.2g); zero points %d/%d vs "
                   "%d/%d" % (tp_fields["alu_output_post_multiplier"],
                              tp_fields["alu_output_postshift"], float(tps), float(nn_scale),
                              rel, 2 ** -15, tp_fields["coef_zp"], tp_fields["out_zp"],
                              f["coef_zero_point"], f["out_zero_point"]))
    if rel > 2 ** -15 or f["out_zero_point"] != tp_fields["out_zp"]:
        failures.append("the TP scale %g differs from lenet_v3's ip2 scale %g" %
                        (float(tps), float(nn_scale)))


def reference(op, f, q, b, before, signed=True):
    """The expected output bytes of one TP fully connected operation."""
    import numpy as np
    ref = op["input_ref"]
    buf = before[(ref["source_type_name"], -1 if ref["source_type_name"] not in
                  ("INPUT", "OUTPUT") else ref["index"])]
    n = f["in_image_z_size"]
    x = buf[ref["offset"]:ref["offset"] + n * f["in_image_slice"]:f["in_image_slice"]]
    acc = b.astype(np.int64) + (q.astype(np.int64) - f["coef_zp"]) @ (x.astype(np.int64) - f["in_zp"])
    return np.array([requant(a, tp_scale(f, signed), f["out_zp"], f["flat_rounding_mode"]) for a in acc],
                    dtype=np.uint8)


# Word 24 of a TP command: alu_output_postshift in bits 10-14, its bits 5-6
# in bits 26-27 (lib/analysis/graph/commands_fields.h).
SHIFT_WORD = 24


def check_negative_shift(nbg, dumper, models, tmp, failures, figures):
    """LeNet's two TP operations with their shift set to -2 (126) run as the
    numpy reference reading it signed computes, and differently from the
    unsigned reading.  The outputs then saturate (a scale of about 2^16), so
    this tells the signed reading from the unsigned one, not -2 from a
    neighbouring negative shift."""
    import numpy as np
    model = os.path.join(models, LENET)
    doc, weights, wdir = model_info(nbg, model, tmp)
    ops = tp_fc_ops(doc, weights)
    tp = doc["commands"]["tp"]["commands"]
    data = bytearray(open(model, "rb").read())
    for o in ops:
        at = tp[o["command"]]["offset"] + 4 * SHIFT_WORD
        w = int.from_bytes(data[at:at + 4], "little")
        w = (w & ~(0x1f << 10) & ~(0x3 << 26)) | (126 & 0x1f) << 10 | (126 >> 5) << 26
        data[at:at + 4] = w.to_bytes(4, "little")
    mutated = os.path.join(tmp, "lenet_shift126.nb")
    with open(mutated, "wb") as f:
        f.write(data)
    mdoc = model_info(nbg, mutated, tmp)[0]
    lenet = os.path.join(models, "lenet-caffe")
    path = os.path.join(lenet, "lenet.dat")
    prefetch(dumper, mutated, [ops[0]["operation"]] + [o["operation"] + 1 for o in ops], [path], tmp)
    state = dump(dumper, mutated, ops[0]["operation"], [path], tmp)
    same = unsigned_same = 0
    for o in ops:
        f = mdoc["commands"]["tp"]["commands"][o["command"]]["fields"]
        if tp_shift(f, signed=False) != 126:
            failures.append("negative shift: the mutated command reads shift %d, not 126" %
                            tp_shift(f, signed=False))
            return
        wo = weights[o["operation"]]
        qo = np.load(os.path.join(wdir, wo["files"]["weights"])).reshape(wo["shape"][0], -1)
        bo = np.load(os.path.join(wdir, wo["files"]["bias"]))
        after = dump(dumper, mutated, o["operation"] + 1, [path], tmp)
        out = o["output_ref"]
        key = (out["source_type_name"], -1)
        got = after[key][out["offset"]:out["offset"] + len(bo)]
        same += int(np.array_equal(got, reference(o, f, qo, bo, state)))
        unsigned_same += int(np.array_equal(got, reference(o, f, qo, bo, state, signed=False)))
        state = after
    figures.append("shift 126 (-2) on LeNet's 2 TP fully connected operations: %d of 2 equal to the "
                   "signed reading's numpy reference, %d of 2 to the unsigned one's" %
                   (same, unsigned_same))
    if same != len(ops) or unsigned_same:
        failures.append("negative shift: %d of %d operations equal the signed reference, %d the "
                        "unsigned one" % (same, len(ops), unsigned_same))


def check_lenet(nbg, dumper, models, tmp, failures, figures, tier):
    """Parts 1-4: the weights and the scale in the corpus tier; the runs on
    lenet.dat and its first variant in the corpus tier, on the other 23 in
    the slow tier."""
    import numpy as np
    from check_weights_lenet import caffe_layers
    model = os.path.join(models, LENET)
    lenet = os.path.join(models, "lenet-caffe")
    layers = caffe_layers(os.path.join(lenet, "lenet.caffemodel"))
    doc, weights, wdir = model_info(nbg, model, tmp)
    ops = tp_fc_ops(doc, weights)
    if len(ops) != 2:
        failures.append("LeNet: %d TP fully connected operations decoded, expected 2" % len(ops))
        return
    tp = doc["commands"]["tp"]["commands"]
    fields = [tp[o["command"]]["fields"] for o in ops]
    q, b = joined(wdir, weights, ops)
    if in_tier(tier, "corpus"):
        s_w = check_weights(layers, q, b, fields[0]["coef_zp"], failures, figures)
        check_scale(nbg, models, tmp, fields[0], failures, figures)
    else:  # the kernel scale the output scale's check below needs
        s_w = check_weights(layers, q, b, fields[0]["coef_zp"], [], [])

    base = np.fromfile(os.path.join(lenet, "lenet.dat"), dtype=np.uint8).reshape(28, 28)
    imgs, paths = synth_inputs(base, tmp, 24)
    sel = split(range(len(imgs)), tier, range(CORPUS_INPUTS))
    imgs, paths = [imgs[i] for i in sel], [paths[i] for i in sel]
    same = runs = top1 = 0
    worst_corr, worst_steps = 1.0, 0.0
    all_out, all_ip2, all_in, all_ip1 = [], [], [], []
    for i, (img, path) in enumerate(zip(imgs, paths)):
        first = ops[0]["operation"]
        prefetch(dumper, model, [first] + [o["operation"] + 1 for o in ops], [path], tmp)
        before = dump(dumper, model, first, [path], tmp)
        state = before
        outs = []
        for o, f in zip(ops, fields):
            wo = weights[o["operation"]]
            qo = np.load(os.path.join(wdir, wo["files"]["weights"])).reshape(wo["shape"][0], -1)
            bo = np.load(os.path.join(wdir, wo["files"]["bias"]))
            after = dump(dumper, model, o["operation"] + 1, [path], tmp)
            expect = {k: v.copy() for k, v in state.items()}
            out = o["output_ref"]
            ref = reference(o, f, qo, bo, state)
            key = (out["source_type_name"], -1)
            expect[key][out["offset"]:out["offset"] + len(ref)] = ref
            runs += 1
            ok = all(np.array_equal(expect[k], after[k]) for k in expect)
            same += ok
            if not ok:
                failures.append("LeNet input %d, op %d: the buffers differ from the numpy "
                                "reference" % (i, o["operation"]))
            outs.append(after[key][out["offset"]:out["offset"] + len(ref)])
            state = after
        qout = np.concatenate(outs)
        caffe = caffe_forward(layers, img, 1.0, 0)
        s_out, corr, steps, _ = fit(qout, fields[0]["out_zp"], caffe["ip2"])
        worst_corr = min(worst_corr, corr)
        worst_steps = max(worst_steps, steps)
        top1 += int(np.argmax(qout) == np.argmax(caffe["ip2"]))
        inr = ops[0]["input_ref"]
        all_in.append(before[(inr["source_type_name"], -1)][inr["offset"]:inr["offset"] + q.shape[1]])
        all_ip1.append(caffe["ip1"])
        all_out.append(qout)
        all_ip2.append(caffe["ip2"])
    # one scale over every input: ip1's (fitted from the NN operation's
    # output, zero point 0) and ip2's; the commands imply ip2's from ip1's
    s_in = fit(np.concatenate(all_in), 0, np.concatenate(all_ip1))[0]
    s_out = fit(np.concatenate(all_out), fields[0]["out_zp"], np.concatenate(all_ip2))[0]
    ratio = s_in * s_w / float(tp_scale(fields[0])) / s_out
    check_lenet_whole(nbg, model, layers, imgs, paths, s_out, tmp, failures, figures)
    figures.append("TP fully connected operations vs the numpy reference: %d of %d runs equal "
                   "byte for byte (%d inputs, 2 operations)" % (same, runs, len(imgs)))
    figures.append("LeNet whole network up to the softmax vs Caffe's ip2 (%d inputs): top-1 "
                   "equal on %d of %d; correlation at least %.5f; largest difference %.2f "
                   "quantization steps; output scale implied by the commands / fitted: %.4f" %
                   (len(imgs), top1, len(imgs), worst_corr, worst_steps, ratio))
    if top1 != len(imgs):
        failures.append("LeNet top-1 differs from Caffe on %d of %d inputs" %
                        (len(imgs) - top1, len(imgs)))
    if worst_corr < 0.999:
        failures.append("LeNet ip2 correlates with Caffe at %.5f" % worst_corr)
    if abs(ratio - 1) > 0.01:
        failures.append("the output scale the commands imply differs from the fitted one by "
                        "more than 1 %%: ratio %.4f" % ratio)


def check_lenet_whole(nbg, model, layers, imgs, paths, s_out, tmp, failures, figures):
    """`nbg run --backend cpu` on the whole LeNet (its softmax by reference
    semantics): the FP16 probabilities against Caffe's softmax on the same
    pixels; the softmax's scale (its uniform, scale x log2(e), from
    --check) against the ip2 output scale fitted to Caffe."""
    import re
    import numpy as np
    r = run([nbg, "run", "--backend", "cpu", "--check", model])
    m = re.search(r"softmax .*scale\*log2\(e\) ([0-9.eE+-]+)", r.stdout)
    if r.returncode != 0 or not m:
        failures.append("--check on LeNet: exit %d, expected every operation executed and the "
                        "softmax's scale named: %s" % (r.returncode, r.stdout[-300:]))
        return
    s_soft = float(m.group(1)) / np.log2(np.e)
    top1, worst = 0, 0.0
    for i, (img, path) in enumerate(zip(imgs, paths)):
        prob, _, err = run_cpu(nbg, model, [path], tmp, "<f2")
        if prob is None:
            failures.append("nbg run --backend cpu on LeNet input %d: %s" % (i, err))
            return
        prob = prob.astype(np.float64)[:10]
        ip2 = caffe_forward(layers, img, 1.0, 0)["ip2"]
        e = np.exp(ip2 - ip2.max())
        ref = e / e.sum()
        top1 += int(np.argmax(prob) == np.argmax(ref))
        worst = max(worst, float(np.abs(prob - ref).max()))
    figures.append("LeNet whole (nbg run --backend cpu, softmax by reference semantics) vs "
                   "Caffe's softmax, %d inputs: top-1 equal on %d of %d; largest probability "
                   "difference %.2g; the softmax's scale %.5g vs ip2's fitted %.5g (ratio %.4f)" %
                   (len(imgs), top1, len(imgs), worst, s_soft, s_out, s_soft / s_out))
    if top1 != len(imgs):
        failures.append("LeNet whole: top-1 differs from Caffe on %d inputs" % (len(imgs) - top1))
    if abs(s_soft / s_out - 1) > 0.01:
        failures.append("the softmax's input scale %g differs from ip2's fitted %g by more than "
                        "1 %%" % (s_soft, s_out))


def check_whole_be(nbg, dumper, corpus, tmp, failures, figures):
    """The 0xbe image classification file runs whole: its three TP fully
    connected operations (64-byte aligned chunks) against numpy on a
    synthesized image, and `nbg run --backend cpu` writes the last one's
    output buffer."""
    import numpy as np
    model = os.path.join(corpus, "v1", BE)
    doc, weights, wdir = model_info(nbg, model, tmp)
    ops = tp_fc_ops(doc, weights)
    tp = doc["commands"]["tp"]["commands"]
    rng = np.random.default_rng(2027)
    img = os.path.join(tmp, "be_in.bin")
    yy, xx = np.mgrid[0:224, 0:224]
    pic = np.stack([(xx + yy) % 256, (3 * xx) % 256, 128 + 100 * np.sin(yy / 9.0)], axis=-1)
    np.clip(pic + rng.normal(0, 12, pic.shape), 0, 255).astype(np.uint8).tofile(img)
    prefetch(dumper, model, [ops[0]["operation"]] + [o["operation"] + 1 for o in ops], [img], tmp)
    state = dump(dumper, model, ops[0]["operation"], [img], tmp)
    same = 0
    for o in ops:
        wo = weights[o["operation"]]
        f = tp[o["command"]]["fields"]
        qo = np.load(os.path.join(wdir, wo["files"]["weights"])).reshape(wo["shape"][0], -1)
        bo = np.load(os.path.join(wdir, wo["files"]["bias"]))
        after = dump(dumper, model, o["operation"] + 1, [img], tmp)
        out = o["output_ref"]
        key = (out["source_type_name"], -1 if out["source_type_name"] not in ("INPUT", "OUTPUT")
               else out["index"])
        expect = {k: v.copy() for k, v in state.items()}
        ref = reference(o, f, qo, bo, state)
        expect[key][out["offset"]:out["offset"] + len(ref)] = ref
        ok = all(np.array_equal(expect[k], after[k]) for k in expect)
        same += ok
        if not ok:
            failures.append("%s op %d: the buffers differ from the numpy reference" %
                            (BE, o["operation"]))
        state = after
    got, _, err = run_cpu(nbg, model, [img], tmp)
    whole = got is not None and np.array_equal(got, state[("OUTPUT", 0)][:len(got)])
    if not whole:
        failures.append("nbg run --backend cpu on %s: its output differs from the last "
                        "operation's buffer or is missing: %s" % (BE, err or "ran"))
    figures.append("%s (whole model on the CPU backend): %d of %d TP fully connected operations "
                   "equal to the numpy reference byte for byte; nbg run's output_0.bin equal to "
                   "the last one's buffer: %s" % (BE, same, len(ops), "yes" if whole else "no"))


def check_whole_targets(nbg, corpus, tmp, failures, figures):
    """The 0xbe and 0xe8 files of the image classification network run
    whole (their last layer 3 and 2 TP operations, 64-byte aligned and
    packed chunks, and NN scales in two encodings): on the same synthesized
    images their 1001 outputs must agree within one step in at least 99 %
    of the values, with the same top-1."""
    import numpy as np
    files = [IC[4], IC[5]]
    rng = np.random.default_rng(2028)
    yy, xx = np.mgrid[0:224, 0:224]
    diff = total = worst = top1 = 0
    for k in range(3):
        pic = np.stack([(xx * (k + 1) + yy) % 256, (3 * xx + 40 * k) % 256,
                        128 + 100 * np.sin(yy / (5.0 + 4 * k))], axis=-1)
        img = os.path.join(tmp, "ic_%d.bin" % k)
        np.clip(pic + rng.normal(0, 12, pic.shape), 0, 255).astype(np.uint8).tofile(img)
        outs = []
        for name in files:
            got, _, err = run_cpu(nbg, os.path.join(corpus, "v1", name), [img], tmp)
            if got is None:
                failures.append("nbg run --backend cpu on %s: %s" % (name, err))
                return
            outs.append(got.astype(np.int64))
        d = np.abs(outs[0] - outs[1])
        diff += int((d > 1).sum())
        total += len(d)
        worst = max(worst, int(d.max()))
        top1 += int(np.argmax(outs[0]) == np.argmax(outs[1]))
    figures.append("image classification run whole on 0xbe and 0xe8, 3 synthesized images: "
                   "%d of %d outputs more than one step apart (largest %d), top-1 equal on %d "
                   "of 3" % (diff, total, worst, top1))
    if diff > total // 100 or top1 != 3:
        failures.append("the 0xbe and 0xe8 image classification outputs differ: %d of %d more "
                        "than one step apart, top-1 equal on %d of 3" % (diff, total, top1))


def check_cross_target(nbg, corpus, tmp, failures, figures, tier):
    """Part 5: the corpus tier compares the two smallest files, the slow
    tier all six."""
    import numpy as np
    ref = None
    counts = []
    small = sorted(IC, key=lambda n: os.path.getsize(os.path.join(corpus, "v1", n)))[:2]
    names = small if tier == "corpus" else IC
    for name in names:
        path = os.path.join(corpus, "v1", name)
        doc, weights, wdir = model_info(nbg, path, tmp)
        ops = tp_fc_ops(doc, weights)
        counts.append(len(ops))
        if not ops:
            failures.append("%s: no TP fully connected operation decoded" % name)
            continue
        q, b = joined(wdir, weights, ops)
        if ref is None:
            ref = (name, q, b)
        elif not (np.array_equal(ref[1], q) and np.array_equal(ref[2], b)):
            failures.append("%s: the decoded fully connected layer (%s) differs from %s's" %
                            (name, q.shape, ref[0]))
    figures.append("image classification, %d targets (%s): the last fully connected layer decoded "
                   "from %s TP operations; weights %s and biases equal on every file: %s" %
                   (len(names), ", ".join(names), "/".join(map(str, counts)), ref[1].shape if ref else "-",
                    "yes" if not [f for f in failures if "image_classify" in f] else "no"))


def main():
    argv, tier = tier_of(sys.argv)
    if len(argv) != 7 or argv[3] != "--corpus" or argv[5] != "--models":
        sys.exit("usage: check_cpu_tpfc.py NBG DUMP --corpus DIR --models DIR [--tier corpus|slow]")
    nbg, dumper, corpus, models = argv[1], argv[2], argv[4], argv[6]
    for need in [os.path.join(models, LENET), os.path.join(models, LENET3)] + \
            [os.path.join(corpus, "v1", n) for n in IC]:
        if not os.path.exists(need):
            print("check_cpu_tpfc: skipped: %s does not exist (meson options corpus_dir and "
                  "models_dir point at the real files)" % need)
            sys.exit(SKIP)
    from check_weights_lenet import imports
    imports()
    failures, figures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        check_lenet(nbg, dumper, models, tmp, failures, figures, tier)
        if in_tier(tier, "corpus"):
            check_negative_shift(nbg, dumper, models, tmp, failures, figures)
        check_cross_target(nbg, corpus, tmp, failures, figures, tier)
        if in_tier(tier, "slow"):  # the image classification network whole: minutes under ASan
            check_whole_be(nbg, dumper, corpus, tmp, failures, figures)
            check_whole_targets(nbg, corpus, tmp, failures, figures)
    finish(figures, failures)


if __name__ == "__main__":
    main()
