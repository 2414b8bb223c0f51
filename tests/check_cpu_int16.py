#!/usr/bin/env python3
"""The CPU backend on int16 and fp16 data against the float TensorFlow Lite
model the file was compiled from.

models_dir/mediapipe-a733/NAME.tflite is the float source of every
corpus/v2/NAME_nbg_*.nb (its README).  For each v2 file whose records are
int16 (dynamic fixed point) or unquantized fp16, one input and its outputs
of one kind (the input may be the other: the int16 blendshapes file takes
fp16 landmarks), and which has a source (fp16: the image rounded to fp16,
fed to both): when the CPU backend
runs it whole (`nbg run --backend cpu --check --json`), the file and the
source are run on one synthetic image (smooth gradients and a rectangle, x
in [-0.5, 0.5], half the input's range in the source, AMPLITUDE below;
quantized by the file's input record, q = round(x 2^fl), and the source
given q 2^-fl, the same values); a file whose input is [1, N, 2] landmarks
(the blendshapes model) on N points uniform in [0, 256) (seed 7, rounded
by its record).  The source runs in numpy here
(tflite_graph below: an independent
implementation of the operators the face models use, from TFLite's
operator semantics, float64, never nbgkit's code).  Each output record,
dequantized by its record (q 2^-fl), is compared with the source output
of its shape (the record's dimensions, outermost first):

- every output must correlate with its source output at 0.999 or more;
- the output fidelity.json names for the model by its source tensor's
  name (face_detector: the regressors) must have a mean absolute error no larger than the figure
  fidelity.json gives for the vendor's own conversion of that data type
  against TFLite (int16 0.2515, fp16 0.2484 for face_detector).  That
  figure bounds what such a compilation of this model gives on the NPU as
  the vendor measured it (on its own
  inputs and pipeline, whose un-quantized import alone differs by 0.2482),
  so a backend within it computes no worse than the vendor's conversion; it
  is not a bound on bit-exactness.  An output it names by its value
  count alone ("(N values)": face_landmarks_detector's 1,434; or "N ...":
  face_blendshapes' "52 blendshape scores") has its
  error printed beside the figure, not judged: on this non-face image the
  fp16 arithmetic alone moves it further (numpy rounding every operator's
  output to fp16 lands 1.08 pixels from the float64 source there).
- an output of one value has no correlation: printed, not judged.
- a file whose SP additions without second image write int16 (layer
  TensorAdd_SP: the layer normalisations' variance + epsilon, held as
  codes of x k, k the command's SP scale; sp_add_bounds) saturates where
  the source's variance passes 32767 / k: on the synthetic landmarks the
  int16 blendshapes file does so in 3 of its 8 normalisations (18 of
  their 776 values, seed 7).  Its outputs are judged against the source with those
  ADDs bounded to the int16 range at k (tflite_graph's bounds: a property
  of the file's commands, not of the backend), and the unbounded figure is
  printed beside them.

A file the backend does not run whole is printed with its first refusal,
but for one whose source begins with the landmark normalisation (the
blendshapes model): that prefix is judged alone (judge_prefix, with the
nbg-cpu-dump program given as a fourth argument),
as is a file with no source or whose outputs match no source output by
shape (not judged).  At least one file must be judged.

The source model is read with the FlatBuffers reader of check_network.py
(written from TFLite's public schema.fbs): Model.operator_codes (1),
subgraphs (2), buffers (4); SubGraph.tensors (0), inputs (1), outputs (2),
operators (3); Tensor.shape (0), type (1), buffer (2), name (3);
Operator.opcode_index (0), inputs (1), outputs (2), builtin_options (4);
Conv2DOptions padding (0, SAME 0), stride_w (1), stride_h (2),
fused_activation_function (3, RELU 1); DepthwiseConv2DOptions the same but
the activation at 4; Pool2DOptions padding (0), stride_w (1), stride_h (2),
filter_width (3), filter_height (4); AddOptions fused_activation_function
(0); ConcatenationOptions axis (0); ResizeBilinearOptions align_corners (2),
half_pixel_centers (3), the output size the operator's second input; Sub,
Mul and DivOptions fused_activation_function (0); ReducerOptions keep_dims
(0) (MEAN, SUM over the axes of the second input); StridedSliceOptions
(strided_slice); TRANSPOSE's permutation its second input.

Then every v2 file on a real face (judge_faces; tests/tc_face.py makes
each model's input from the astronaut photograph, FACE_PATH below, with the
float sources): the mean absolute error of the output fidelity.json names
printed beside the vendor's, asserted within it but where FACE_UNBOUNDED
says why not.  Without the photograph those checks are skipped, saying
so, unless CI=true or NBG_REQUIRE_CORPUS=1 (then they fail).

Usage: check_cpu_int16.py [--face FACE_PATH] NBG CORPUS_DIR MODELS_DIR [NBG_CPU_DUMP]
(exit 77, SKIP, when they are absent or Debian's python3-numpy cannot be
imported; FACE_PATH the meson option face_image, NBG_FACE_IMAGE overriding
it).
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import check_network
from check_network import Table
import tc_face
from check_weights_lenet import debian_imports
from exe_wrapper import command
import tc_corpus

from tc_check import check
import tc_check
MIN_CORR = 0.999
# TFLite BuiltinOperator codes the face models use
ADD, CONCATENATION, CONV_2D, DEPTHWISE_CONV_2D, DEQUANTIZE = 0, 2, 3, 4, 6
LOGISTIC, MAX_POOL_2D, RELU, RESHAPE, RESIZE_BILINEAR, PAD, PRELU = 14, 17, 19, 22, 23, 34, 54
# and those of the blendshapes model (its landmark normalisation and
# MLP-Mixer blocks: layer normalisations of MEAN, SQUARED_DIFFERENCE, RSQRT)
MUL, TRANSPOSE, MEAN, SUB, DIV, STRIDED_SLICE, NEG, SUM, SQRT, RSQRT = 18, 39, 40, 41, 42, 45, 59, 74, 75, 76
SQUARED_DIFFERENCE = 99


def options(op):
    """The operator's builtin_options table (field 4), or None."""
    o = op._off(4)
    if not o:
        return None
    p = op.pos + o
    return Table(op.buf, p + struct.unpack_from("<I", op.buf, p)[0])


def same_padding(size, k, stride):
    """TFLite's SAME: the output size and the padding before."""
    out = -(-size // stride)
    return out, max((out - 1) * stride + k - size, 0) // 2


def conv2d(x, w, b, stride, same, depthwise):
    """x [H][W][C]; w [O][kh][kw][I] (depthwise [1][kh][kw][C])."""
    import numpy as np
    h, wd, c = x.shape
    kh, kw = w.shape[1], w.shape[2]
    if same:
        oh, top = same_padding(h, kh, stride)
        ow, left = same_padding(wd, kw, stride)
    else:
        oh, top, ow, left = (h - kh) // stride + 1, 0, (wd - kw) // stride + 1, 0
    xp = np.zeros((stride * oh + kh, stride * ow + kw, c))
    xp[top:top + h, left:left + wd] = x
    out = np.zeros((oh, ow, w.shape[3] if depthwise else w.shape[0])) + b
    for i in range(kh):
        for j in range(kw):
            patch = xp[i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += patch * w[0, i, j] if depthwise else patch @ w[:, i, j, :].T
    return out


def max_pool(x, k, stride):
    import numpy as np
    h, w, c = x.shape
    oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    out = np.full((oh, ow, c), -np.inf)
    for i in range(k):
        for j in range(k):
            out = np.maximum(out, x[i:i + stride * oh:stride, j:j + stride * ow:stride])
    return out


def resize_bilinear(x, oh, ow, align_corners, half_pixel):
    """TFLite's RESIZE_BILINEAR (reference kernel) of x [H][W][C] to oh x ow."""
    import numpy as np

    def axis(o, n):
        scale = (n - 1) / (o - 1) if align_corners and o > 1 else n / o
        v = (np.arange(o) + 0.5) * scale - 0.5 if half_pixel else np.arange(o) * scale
        lo = np.maximum(np.floor(v), 0).astype(int)
        hi = np.minimum(np.ceil(v), n - 1).astype(int)
        return lo, hi, v - lo

    y0, y1, fy = axis(oh, x.shape[0])
    x0, x1, fx = axis(ow, x.shape[1])
    fy, fx = fy[:, None, None], fx[None, :, None]
    top = x[y0][:, x0] * (1 - fx) + x[y0][:, x1] * fx
    bot = x[y1][:, x0] * (1 - fx) + x[y1][:, x1] * fx
    return top * (1 - fy) + bot * fy


def strided_slice(x, begin, end, strides, opt):
    """TFLite's STRIDED_SLICE with its begin, end and shrink-axis masks
    (StridedSliceOptions begin_mask (0), end_mask (1), ellipsis_mask (2),
    new_axis_mask (3), shrink_axis_mask (4)); ValueError for the others."""
    masks = [opt.scalar(i, "i") if opt else 0 for i in range(5)]
    if masks[2] or masks[3]:
        raise ValueError("strided slice with an ellipsis or new axis mask")
    idx = []
    for d in range(x.ndim):
        b, e, st = int(begin[d]), int(end[d]), int(strides[d])
        if masks[4] >> d & 1:
            idx.append(b)
            continue
        idx.append(slice(None if masks[0] >> d & 1 else b, None if masks[1] >> d & 1 else e, st))
    return x[tuple(idx)]


def activation(x, f):
    import numpy as np
    if f not in (0, 1):
        raise ValueError("fused activation %d not implemented" % f)
    return np.maximum(x, 0) if f == 1 else x


def tflite_graph(path, image, every=None, bounds=None, fp16=False):
    """Subgraph 0 of the model run on image (H, W, C floats): its outputs
    as {tensor name: array}; every (a dict), when given, receives each
    operator's output by its tensor's name.  bounds (a list of scales k),
    when given, bounds the output of the n-th ADD of one tensor and one
    value (the layer normalisations' variance + epsilon) to the int16 range
    at scale k, [-32768 / k, 32767 / k] (sp_add_bounds).  ValueError for an
    operator it does not implement."""
    import numpy as np
    scalar_adds = 0
    buf, _, codes, data, graph = check_network.tflite_model(path)
    tensors = graph.tables(0)
    val = {}
    for i, t in enumerate(tensors):
        dtype = {0: np.float32, 1: np.float16, 2: np.int32, 4: np.int64}.get(t.scalar(1, "b"))
        raw = data[t.scalar(2, "I")]
        if raw and dtype is not None:
            val[i] = np.frombuffer(raw, dtype=dtype).reshape(t.ints(0)).astype(np.float64)
    if fp16:
        # every constant and every operator's output rounded to fp16 (the
        # arithmetic of an fp16 file, each operator rounded once)
        val = {i: v.astype(np.float16).astype(np.float64) for i, v in val.items()}
    val[graph.ints(1)[0]] = image[None].astype(np.float64)
    for op in graph.tables(3):
        code, ins, outs, opt = codes[op.scalar(0, "I")], op.ints(1), op.ints(2), options(op)
        x = val[ins[0]]
        if code == DEQUANTIZE:
            r = x
        elif code in (CONV_2D, DEPTHWISE_CONV_2D):
            if opt.scalar(1, "i") != opt.scalar(2, "i"):
                raise ValueError("unequal strides")
            r = activation(conv2d(x[0], val[ins[1]], val[ins[2]], opt.scalar(1, "i"), opt.scalar(0, "b") == 0,
                                  code == DEPTHWISE_CONV_2D), opt.scalar(3 if code == CONV_2D else 4, "b"))[None]
        elif code == ADD:
            r = activation(x + val[ins[1]], opt.scalar(0, "b") if opt else 0)
            if val[ins[1]].size == 1 and bounds is not None:
                if scalar_adds < len(bounds):
                    k = bounds[scalar_adds]
                    r = np.clip(r, -32768 / k, 32767 / k)
                scalar_adds += 1
        elif code == RELU:
            r = np.maximum(x, 0)
        elif code == PRELU:
            r = np.where(x >= 0, x, x * val[ins[1]])
        elif code == LOGISTIC:
            r = 1.0 / (1.0 + np.exp(-x))
        elif code == PAD:
            r = np.pad(x, val[ins[1]].astype(int))
        elif code == MAX_POOL_2D:
            if opt.scalar(1, "i") != opt.scalar(2, "i") or opt.scalar(3, "i") != opt.scalar(4, "i") or \
                    (opt.scalar(0, "b") == 0 and x.shape[1] % opt.scalar(1, "i")):
                raise ValueError("max pool geometry not implemented")
            r = max_pool(x[0], opt.scalar(3, "i"), opt.scalar(1, "i"))[None]
        elif code == RESIZE_BILINEAR:
            oh, ow = (int(v) for v in val[ins[1]])
            r = resize_bilinear(x[0], oh, ow, bool(opt.scalar(2, "b")), bool(opt.scalar(3, "b")))[None]
        elif code == RESHAPE:
            r = x.reshape(tensors[outs[0]].ints(0))
        elif code == CONCATENATION:
            r = np.concatenate([val[i] for i in ins], axis=opt.scalar(0, "i"))
        elif code in (SUB, MUL, DIV):
            y = val[ins[1]]
            r = activation(x - y if code == SUB else x * y if code == MUL else x / y,
                           opt.scalar(0, "b") if opt else 0)
        elif code == SQUARED_DIFFERENCE:
            r = (x - val[ins[1]]) ** 2
        elif code in (MEAN, SUM):
            axes = tuple(int(a) % x.ndim for a in np.atleast_1d(val[ins[1]]))
            keep = bool(opt.scalar(0, "b")) if opt else False
            r = x.mean(axis=axes, keepdims=keep) if code == MEAN else x.sum(axis=axes, keepdims=keep)
        elif code == SQRT:
            r = np.sqrt(x)
        elif code == RSQRT:
            r = 1.0 / np.sqrt(x)
        elif code == NEG:
            r = -x
        elif code == TRANSPOSE:
            r = np.transpose(x, val[ins[1]].astype(int))
        elif code == STRIDED_SLICE:
            r = strided_slice(x, val[ins[1]], val[ins[2]], val[ins[3]], opt)
        else:
            raise ValueError("operator %d not implemented" % code)
        val[outs[0]] = r.astype(np.float16).astype(np.float64) if fp16 else r
        if every is not None:
            p, n = tensors[outs[0]]._vector(3)
            every[buf[p:p + n].decode()] = r
    out = {}
    for i in graph.ints(2):
        p, n = tensors[i]._vector(3)
        out[buf[p:p + n].decode()] = val[i]
    return out


# The image's amplitude: half of the source's input range [-1, 1].  At
# 0.9 the full-range detector's own int16 formats cannot hold the source's
# activations (layer 9's output, fraction length 10, holds |v| < 32; the
# source reaches 48.0 there), and its outputs then differ from the source's
# by that saturation (doc/cpu-backend.md, "int16 data").
AMPLITUDE = 0.5


def synthetic_image(h, w, c):
    import numpy as np
    y, x = np.mgrid[0:h, 0:w] / float(max(h - 1, 1))
    chans = [np.sin(6 * x) * 0.8, np.cos(5 * y) * 0.7, (x - y) * 0.9]
    img = np.stack([chans[i % 3] for i in range(c)], -1)
    img[h * 5 // 16:h * 5 // 8, w * 3 // 8:w * 11 // 16] = [(0.9, -0.5, 0.2)[i % 3] for i in range(c)]
    return img * AMPLITUDE


def synthetic_landmarks(n):
    """n points (x, y) uniform in [0, 256) (seed 7), as judge_prefix's."""
    import numpy as np
    return np.random.RandomState(7).uniform(0, 256, (n, 2))


def io_records(nbg, path):
    out = subprocess.run(nbg + ["inspect", "--json", path], stdout=subprocess.PIPE, check=True)
    d = json.loads(out.stdout)
    return d["inputs"], d["outputs"]


def dfp16(rec):
    """The record's fraction length when it is int16 dynamic fixed point."""
    q = rec.get("quantization") or {}
    if rec.get("data_format_name") != "INT16" or q.get("interpretation") != "dynamic_fixed_point":
        return None
    return q["fixed_point_position"]


def codec(rec):
    """(kind, encode, decode) of a record: "int16" dynamic fixed point (q =
    round(x 2^fl)) or "fp16" with no quantization (numpy.float16); None for
    another record."""
    import numpy as np
    fl = dfp16(rec)
    if fl is not None:
        return ("int16", lambda x: np.clip(np.round(x * 2.0 ** fl), -32768, 32767).astype("<i2"),
                lambda b: np.frombuffer(b, "<i2").astype(np.float64) / 2.0 ** fl)
    q = rec.get("quantization") or {}
    if rec.get("data_format_name") == "FP16" and q.get("interpretation") == "none":
        return ("fp16", lambda x: x.astype("<f2"), lambda b: np.frombuffer(b, "<f2").astype(np.float64))
    return None


def sp_add_bounds(nbg, path, doc):
    """The scales k of the file's SP additions without second image that
    write int16 (layer TensorAdd_SP, one SP command each: the layer
    normalisations' variance + epsilon, doc/cpu-backend.md), in operation
    order: their output holds the int16 codes of x k, so a value past
    32767 / k saturates in the file itself.  k = 2^(e - 127), e the SP
    scale's exponent (post_shift | post_shift_bit_5_6 << 5 | word 27 bit
    30 << 7, "The SP mean"); None when a multiplier is set or there are
    none."""
    ops = [st["operation"] for st in doc.get("steps", []) if st.get("layer") == "TensorAdd_SP"]
    if not ops:
        return None
    cmds = json.loads(subprocess.run(nbg + ["inspect", "--json", "--commands", path], stdout=subprocess.PIPE,
                                     check=True).stdout)
    by_op = {c["operation"]: c for c in cmds["commands"]["nn"]["commands"]}
    ks = []
    for k in ops:
        c = by_op.get(k)
        if not c:
            return None
        f, w = c["fields"], c["words"]
        if f["out_image_data_type"] | f["out_image_data_type_bit_2"] << 2 != 4:
            continue                             # an fp16 result: no int16 bound
        if any(f.get(m) for m in ("post_multiplier", "post_multiplier_1_to_6", "post_multiplier_7_to_14",
                                  "post_multiplier_15_to_22")) or len(w) <= 27:
            return None
        e = f["post_shift"] | f["post_shift_bit_5_6"] << 5 | (w[27] >> 30 & 1) << 7
        ks.append(2.0 ** (e - 127))
    return ks or None


def cpu_run(nbg, path, q, kinds, outs):
    """The file's outputs, decoded by their codecs, on the CPU backend with
    the encoded input q."""
    with tempfile.TemporaryDirectory() as tmp:
        q.tofile(os.path.join(tmp, "in.bin"))
        subprocess.run(nbg + ["run", "--backend", "cpu", path, "--input", os.path.join(tmp, "in.bin"),
                              "--output-dir", os.path.join(tmp, "out")], stdout=subprocess.DEVNULL, check=True)
        return [kinds[1 + i][2](open(os.path.join(tmp, "out", "output_%d.bin" % o["index"]), "rb").read())
                for i, o in enumerate(outs)]


def judge(nbg, path, src, fidelity, dump=None):
    """True when judged."""
    import numpy as np
    name = os.path.basename(path)
    ins, outs = io_records(nbg, path)
    kinds = [codec(r) for r in ins + outs]
    if len(ins) != 1 or None in kinds or len(set(k[0] for k in kinds[1:])) != 1:
        print("note %s: its records are not int16 dynamic fixed point or unquantized fp16, its outputs of one "
              "kind: not judged" % name)
        return False
    # the outputs' kind (fidelity.json's figure); the input is encoded by its own
    kind = kinds[1][0]
    plan = subprocess.run(nbg + ["run", "--backend", "cpu", "--check", "--json", path], stdout=subprocess.PIPE)
    doc = json.loads(plan.stdout)
    if not doc.get("runs_whole"):
        if dump and kinds[0][0] == "fp16" and judge_prefix(nbg, dump, path, src, doc):
            return True
        first = doc.get("first_refused") or {}
        print("note %s: the CPU backend does not run it whole (%d of %d operations refused; first: op %s, "
              "%s): not judged" % (name, doc.get("refused", 0), doc.get("operations", 0),
                                   first.get("operation"), first.get("reason_id")))
        return False
    rec = ins[0]
    shape = rec["dimensions_outermost_first"]
    if len(shape) == 3 and shape[0] == 1 and shape[2] == 2:
        # landmarks (the blendshapes model's [1, 146, 2]): x, y in [0, 256)
        img = synthetic_landmarks(shape[1])
    elif len(shape) != 4 or shape[0] != 1:
        print("note %s: input %s is no N=1 NHWC image or [1, N, 2] landmarks: not judged" % (name, shape))
        return False
    else:
        img = synthetic_image(shape[1], shape[2], shape[3])
    q = kinds[0][1](img)
    bounds = sp_add_bounds(nbg, path, doc)
    try:
        ref = tflite_graph(src, kinds[0][2](q.tobytes()).reshape(img.shape), bounds=bounds)
        free = tflite_graph(src, kinds[0][2](q.tobytes()).reshape(img.shape)) if bounds else ref
    except ValueError as e:
        print("note %s: its source holds what the test's graph does not run (%s): not judged" % (name, e))
        return False
    got = cpu_run(nbg, path, q, kinds, outs)
    # the output fidelity.json names: a source tensor's name, or "(N values)"
    named = fidelity.get("output", "").split(" ")[0]
    if kind not in fidelity:
        print("note %s: fidelity.json gives no %s figure for its model: mean absolute errors reported, not "
              "bounded" % (name, kind))
    key = fidelity_output(fidelity, ref)
    judged = 0
    for o, g in zip(outs, got):
        same = [k for k, v in ref.items() if list(v.shape) == o["dimensions_outermost_first"]]
        if len(same) != 1:
            print("note %s: output %d %s matches %d source outputs by shape: not compared" %
                  (name, o["index"], o["dimensions_outermost_first"], len(same)))
            continue
        r = ref[same[0]].reshape(-1)
        if r.size < 2:
            # one value: no correlation; its difference printed
            print("note %s output %d (%s): one value, %.6g against the source's %.6g: no correlation, not "
                  "judged" % (name, o["index"], same[0], float(g[0]), float(r[0])))
            continue
        mae, corr = float(np.abs(g - r).mean()), float(np.corrcoef(g, r)[0, 1])
        if bounds:
            # the source as it is, printed: the bounds are the file's
            f = free[same[0]].reshape(-1)
            print("note %s output %d (%s): against the source without the int16 bounds of its %d SP additions "
                  "(scales %s): correlation %.6f, mean absolute error %.4f (not judged: values the file's "
                  "formats saturate)" % (name, o["index"], same[0], len(bounds),
                                         ", ".join("2^%d" % round(np.log2(k)) for k in bounds),
                                         float(np.corrcoef(g, f)[0, 1]), float(np.abs(g - f).mean())))
        check(corr >= MIN_CORR, "%s output %d (%s): correlation %.6f with the source's%s (at least %.3f), mean "
              "absolute error %.4f, largest %.3f" % (name, o["index"], same[0], corr,
                                                     " (its SP additions bounded as the file's)" if bounds else "",
                                                     MIN_CORR, mae, float(np.abs(g - r).max())))
        if same[0] == key != named and kind in fidelity:
            # named by its size alone: the vendor measured it on its own
            # (face) inputs, which the synthetic image is not; printed
            print("note %s output %d (%s): mean absolute error %.4f, the vendor's %s conversion's %.4f on its "
                  "own inputs (fidelity.json): not judged on the synthetic image" %
                  (name, o["index"], fidelity["output"], mae, kind, fidelity[kind]))
        if same[0] == named and kind in fidelity:
            check(mae <= fidelity[kind], "%s output %d (%s): mean absolute error %.4f, within the vendor's "
                  "%s conversion's %.4f (fidelity.json)" % (name, o["index"], fidelity["output"], mae, kind,
                                                            fidelity[kind]))
        judged += 1
    return judged > 0


def fidelity_output(fidelity, ref):
    """The source output fidelity.json names (by tensor name, "(N values)"
    or "N ..."), or None."""
    named = fidelity.get("output", "").split(" ")[0]
    if named in ref:
        return named
    count = re.search(r"\((\d+) values\)", fidelity.get("output", "")) or \
        re.search(r"^(\d+) ", fidelity.get("output", ""))
    same = [k for k, v in ref.items() if count and v.size == int(count.group(1))]
    return same[0] if len(same) == 1 else None


# The models and data types whose figure on the face is printed, not
# asserted, and why (doc/cpu-backend.md, "The v2 files on a real face"); every
# other figure fidelity.json gives is asserted.
FACE_UNBOUNDED = {
    ("face_blendshapes", "fp16"): "fp16 arithmetic alone lands further on this face: numpy rounding every "
                                  "operator of the source to fp16 is %s from it",
    ("face_blendshapes", "int16"): "the file's int16 formats, not the backend, are inferred to bound it: "
                                   "no other target's run of it on these landmarks to compare",
}


def judge_face(nbg, path, src, fidelity, x, model):
    """The file on the face input x (float, the model's input before the
    file's record encodes it), against the source on the same encoded
    values: the mean absolute error of the output fidelity.json names,
    printed beside the vendor's conversion's, and asserted within it unless
    FACE_UNBOUNDED names the model and data type (then printed with the
    reason); the other outputs printed.  True when measured."""
    import numpy as np
    name = os.path.basename(path)
    ins, outs = io_records(nbg, path)
    kinds = [codec(r) for r in ins + outs]
    if len(ins) != 1 or None in kinds:
        return False
    doc = json.loads(subprocess.run(nbg + ["run", "--backend", "cpu", "--check", "--json", path],
                                    stdout=subprocess.PIPE).stdout)
    if not doc.get("runs_whole"):
        print("note %s on the face: the CPU backend does not run it whole: not measured" % name)
        return False
    kind = kinds[1][0]
    q = kinds[0][1](x)
    given = kinds[0][2](q.tobytes()).reshape(x.shape)
    ref = tflite_graph(src, given)
    got = cpu_run(nbg, path, q, kinds, outs)
    key = fidelity_output(fidelity, ref)
    for o, g in zip(outs, got):
        same = [k for k, v in ref.items() if list(v.shape) == o["dimensions_outermost_first"]]
        if len(same) != 1:
            continue
        r = ref[same[0]].reshape(-1)
        mae = float(np.abs(g - r).mean())
        if same[0] != key or kind not in fidelity:
            print("note %s on the face, output %d (%s): mean absolute error %.6f, largest %.4g%s" %
                  (name, o["index"], same[0], mae, float(np.abs(g - r).max()),
                   "" if r.size < 2 else ", correlation %.6f" % float(np.corrcoef(g, r)[0, 1])))
            continue
        what = ("%s on the face, output %d (%s): mean absolute error %.6f, the vendor's %s conversion's %.5f "
                "(fidelity.json), largest %.4g" % (name, o["index"], fidelity["output"], mae, kind, fidelity[kind],
                                                   float(np.abs(g - r).max())))
        why = FACE_UNBOUNDED.get((model, kind))
        if why is None:
            check(mae <= fidelity[kind], what)
            continue
        if "%s" in why:
            emu = tflite_graph(src, given, fp16=True)[key].reshape(-1)
            why %= "%.6f" % float(np.abs(emu - r).mean())
        print("note %s: not asserted (%s)" % (what, why))
    return True


def judge_faces(nbg, v2, src_dir, fidelity, option):
    """The v2 files on the face photograph (tc_face): at least one measured
    when it is there; its absence skips them, saying so, but fails a run
    that must run every test (CI=true or NBG_REQUIRE_CORPUS=1)."""
    path = tc_face.face_path(option)
    if path is None:
        msg = ("no face photograph at %s (NBG_FACE_IMAGE or -Dface_image; sh scripts/setup.sh extracts it): "
               "the face checks skipped" % (os.environ.get("NBG_FACE_IMAGE") or option))
        if os.environ.get("CI") == "true" or os.environ.get("NBG_REQUIRE_CORPUS") == "1":
            check(False, msg + ", and this run must run every test")
        else:
            print("note " + msg)
        return
    try:
        photo = tc_face.read_png_rgb(path)
    except ValueError as e:
        check(False, str(e))
        return
    ins, how = tc_face.face_inputs(tflite_graph, src_dir, photo)
    print("note the face (%s): %s" % (path, how))
    measured = 0
    for name in sorted(os.listdir(v2)):
        model = name.split("_nbg")[0]
        src = os.path.join(src_dir, model + ".tflite")
        if name.endswith(".nb") and model in ins and os.path.exists(src):
            measured += judge_face(nbg, os.path.join(v2, name), src, fidelity.get(model, {}), ins[model], model)
    check(measured > 0, "%d v2 files measured on the face" % measured)


# TFLite builtin codes of the landmark normalisation (MEAN, SUB, MUL, SUM,
# SQRT, MEAN, DIV) a source may begin with
NORMALISATION = [40, 41, 18, 74, 75, 40, 42]


def judge_prefix(nbg, dump, path, src, doc):
    """A file the backend does not run whole whose source begins with the
    landmark normalisation (the blendshapes model: (x - mean) / mean norm,
    then a MUL by a constant): its first SP scaling ("NN SP scale", the
    MUL) run alone up to there (nbg-cpu-dump) on random landmarks (rounded
    to fp16, fed to both), against the source's operators in float64 here.
    Its largest error must stay within 2 units in the last place of the
    largest half it holds (the NN_LUT tables' interpolation, the SP sum,
    mean, division and scaling: doc/cpu-backend.md).  True when judged."""
    import numpy as np
    name = os.path.basename(path)
    buf, _, codes, data, graph = check_network.tflite_model(src)
    ops = graph.tables(3)
    seq = [codes[op.scalar(0, "I")] for op in ops[:len(NORMALISATION)]]
    steps = [s for s in doc.get("steps", []) if s.get("verdict") == "execute" and
             (s.get("what") or "").startswith("NN SP scale")]
    if seq != NORMALISATION or not steps:
        return False
    k = steps[0]["operation"]
    tensors = graph.tables(0)
    scale, const = None, {}
    for i, t in enumerate(tensors):
        raw = data[t.scalar(2, "I")]
        if raw and len(raw) <= 4 and t.scalar(1, "b") in (0, 1):
            const[i] = float(np.frombuffer(raw, np.float32 if t.scalar(1, "b") == 0 else np.float16)[0])
    for op in ops[len(NORMALISATION):]:
        code = codes[op.scalar(0, "I")]
        if code == DEQUANTIZE and op.ints(1)[0] in const:
            const[op.ints(2)[0]] = const[op.ints(1)[0]]
        if code == 18:                          # the first MUL after it: by a constant
            scale = next((const[i] for i in op.ints(1) if i in const), None)
            break
    if scale is None:
        return False
    cmds = json.loads(subprocess.run(nbg + ["inspect", "--json", "--commands", path], stdout=subprocess.PIPE,
                                     check=True).stdout)
    cmd = [c for c in cmds["commands"]["nn"]["commands"] if c["operation"] == k]
    ref = cmd[0]["patched_fields"].get("out_image_address") if cmd else None
    ins, _ = io_records(nbg, path)
    shape = ins[0]["dimensions_outermost_first"]
    if not ref or ref["source_type_name"] != "VIP_SRAM" or len(shape) != 3 or cmd[0]["fields"][
            "out_image_x_stride"] != 2 * shape[2]:
        print("note %s: its scaling (op %d) writes no contiguous VIP SRAM image: prefix not judged" % (name, k))
        return False
    rs = np.random.RandomState(7)
    x = rs.uniform(0, 256, shape[1:]).astype(np.float16)
    with tempfile.TemporaryDirectory() as tmp:
        x.tofile(os.path.join(tmp, "in.bin"))
        os.mkdir(os.path.join(tmp, "out"))
        subprocess.run(command(dump) + [path, str(k + 1), os.path.join(tmp, "out"), os.path.join(tmp, "in.bin")],
                       stdout=subprocess.DEVNULL, check=True)
        sram = open(os.path.join(tmp, "out", "VIP_SRAM_-1.bin"), "rb").read()
    n = x.size
    got = np.frombuffer(sram[ref["src_offset"]:ref["src_offset"] + 2 * n], "<f2").astype(np.float64).reshape(x.shape)
    xv = x.astype(np.float64)
    c = xv - xv.mean(axis=0, keepdims=True)
    want = c / np.sqrt((c * c).sum(axis=1)).mean() * scale
    err = np.abs(got - want)
    ulp = 2.0 ** (np.floor(np.log2(np.abs(want).max())) - 10)
    check(err.max() <= 2 * ulp, "%s: ops 0-%d (the landmark normalisation, then x %g) against the source's "
          "operators: largest error %.3g (%.2f units in the last place of the largest half, at most 2), mean "
          "%.3g" % (name, k, scale, err.max(), err.max() / ulp, err.mean()))
    return True


def main():
    args = sys.argv[1:]
    face = None
    if "--face" in args[:-1]:
        i = args.index("--face")
        face = args[i + 1]
        del args[i:i + 2]
    nbg = command(args[0])
    corpus, models = args[1], args[2]
    dump = args[3] if len(args) > 3 else None
    tc_corpus.need("check_cpu_int16.py", "the CPU backend's int16 runs", corpus)
    src_dir = os.path.join(models, "mediapipe-a733")
    if not os.path.isdir(src_dir):
        print("SKIP: no %s" % src_dir)
        sys.exit(77)
    debian_imports(("numpy",), "NBG_INT16_REEXEC", "the int16 run check needs Debian's python3-numpy")
    with open(os.path.join(src_dir, "fidelity.json")) as f:
        fidelity = json.load(f)["models"]
    v2 = os.path.join(corpus, "v2")
    judged = 0
    for name in sorted(os.listdir(v2)):
        if not name.endswith(".nb"):
            continue
        model = name.split("_nbg")[0]
        src = os.path.join(src_dir, model + ".tflite")
        if not os.path.exists(src):
            print("note %s: no TFLite source beside the models (%s): not judged" % (name, src))
            continue
        judged += judge(nbg, os.path.join(v2, name), src, fidelity.get(model, {}), dump)
    check(judged > 0, "%d int16 and fp16 files judged against their sources" % judged)
    judge_faces(nbg, v2, src_dir, fidelity, face)
    sys.exit(tc_check.finish())


if __name__ == "__main__":
    main()
