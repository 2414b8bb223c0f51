#!/usr/bin/env python3
"""The fp16 convolution shaders (lib/cpu/ops/shconv.c: a ConvolutionLayer
compiled as an im2col SH operation and a matrix-product SH operation;
lib/cpu/ops/shdw16.c: a DepthwiseConvLayer's fp16 shader) against the float
TensorFlow Lite model the file was compiled from.

models_dir/mediapipe-a733/NAME.tflite is the float source of every
corpus/v2/NAME_nbg_*.nb.  For every v2 file with a source, every pair of
steps of one ConvolutionLayer the CPU backend executes as an im2col then a
matrix product, and every fp16 depthwise shader (`nbg run --backend cpu
--check --json`), is run alone
(nbg-cpu-ref-op: the operations before them need not run) on random fp16
planes written where the data flow (`nbg inspect --commands`, independent
of the CPU backend) says the im2col reads, c planes of w x h one after the
other.  The product's output, read where the data flow says it writes
(one plane of ow x oh per output channel), is compared with the source's
CONV_2D (DEPTHWISE_CONV_2D) operators whose input is h x w x c and whose
kernels are n x k x k x c (1 x k x k x c) with the stride the plan names,
computed here in numpy
(float64) with the source's own kernels, bias and padding (SAME or VALID,
TFLite's rule: check_cpu_int16.conv2d), before any fused activation.  The
closest such operator must agree within fp16 arithmetic: every value within
2^-8 of its magnitude plus 2^-10 (the kernels are fp16, products summed in
float32, the result rounded once to fp16: errors near 2^-11 relative).  A
wrong window order, kernel layout, padding or stride misses every candidate
by orders of magnitude more.

A step refused, or a pair whose source operator is not found, is printed
(not judged).  At least one pair must be judged.

Usage: check_cpu_shconv.py NBG REFOP CORPUS_DIR MODELS_DIR (exit 77, SKIP,
when they are absent or Debian's python3-numpy cannot be imported).
"""
import json
import os
import re
import sys
import tempfile

import check_network
from check_cpu import run
from check_cpu_int16 import CONV_2D, DEPTHWISE_CONV_2D, conv2d, options
from check_cpu_ref import region_sizes
from check_weights_lenet import debian_imports
import tc_corpus
from tc_check import check
import tc_check

IM2COL = re.compile(r"SH im2col (\d+)x(\d+)x(\d+), kernel (\d+)x(\d+), stride (\d+), pad (\d+) -> (\d+) x (\d+)")
PRODUCT = re.compile(r"SH matrix product (\d+) x (\d+) by (\d+) x (\d+)")
DEPTHWISE = re.compile(r"SH depthwise conv (\d+)x(\d+), stride (\d+), pad (\d+), "
                       r"(\d+)x(\d+)x(\d+) -> (\d+)x(\d+), fp16")


def source_convs(path):
    """The source's CONV_2D and DEPTHWISE_CONV_2D operators: [(index, input
    shape, kernels, bias, stride, same, depthwise)]."""
    import numpy as np
    buf, _, codes, data, graph = check_network.tflite_model(path)
    tensors = graph.tables(0)
    val = {}
    for i, t in enumerate(tensors):
        dtype = {0: np.float32, 1: np.float16}.get(t.scalar(1, "b"))
        raw = data[t.scalar(2, "I")]
        if raw and dtype is not None:
            val[i] = np.frombuffer(raw, dtype=dtype).reshape(t.ints(0)).astype(np.float64)
    out = []
    for n, op in enumerate(graph.tables(3)):
        code, ins, outs = codes[op.scalar(0, "I")], op.ints(1), op.ints(2)
        if code == 6 and ins[0] in val:  # DEQUANTIZE of a constant: the constant
            val[outs[0]] = val[ins[0]]
        if code not in (CONV_2D, DEPTHWISE_CONV_2D):
            continue
        opt = options(op)
        if opt.scalar(1, "i") != opt.scalar(2, "i") or ins[1] not in val or ins[2] not in val:
            continue
        out.append((n, tensors[ins[0]].ints(0), val[ins[1]], val[ins[2]], opt.scalar(1, "i"),
                    opt.scalar(0, "b") == 0, code == DEPTHWISE_CONV_2D))
    return out


def flow(nbg, path):
    """{operation: {role: (region key, offset, image bytes)}} from the data flow."""
    doc = json.loads(run([nbg, "inspect", "--json", "--commands", path]).stdout)
    res = {}
    for o in doc["commands"]["other_operations"]:
        for r in o["references"]:
            io = r["source_type_name"] in ("INPUT", "OUTPUT")
            key = (r["source_type_name"], r["index"] if io else -1)
            res.setdefault(o["operation"], {})[r["role"]] = (key, r["offset"], r.get("image_bytes"))
    return res


def units(steps, name):
    """The steps to judge: [(first step, last step, (w, h, c, kx, ky, stride, pad, p, n), depthwise)]:
    an im2col and its product, or one fp16 depthwise convolution; the refused printed."""
    out = []
    conv = [s for s in steps if s["type"] == "SH" and s["layer"] in ("ConvolutionLayer", "DepthwiseConvLayer")]
    for a, b in zip(conv, conv[1:]):
        ma, mb = IM2COL.match(a["what"] or ""), PRODUCT.match(b["what"] or "")
        if a["layer_id"] == b["layer_id"] and ma and mb:
            w, h, c, kx, ky, st, pad, p, _ = (int(x) for x in ma.groups())
            out.append((a, b, (w, h, c, kx, ky, st, pad, p, int(mb.group(3))), False))
    for a in conv:
        m = DEPTHWISE.match(a["what"] or "")
        if m:
            kx, ky, st, pad, w, h, c, ow, oh = (int(x) for x in m.groups())
            out.append((a, a, (w, h, c, kx, ky, st, pad, ow * oh, c), True))
    for s in conv:
        if s["verdict"] != "execute":
            print("note %s op %d: refused (%s): not judged" % (name, s["operation"], s["reason_id"]))
    return out


def prepare(name, sizes, fl, a, b, g, tmp, rng):
    """The unit's input buffer written under tmp: (input planes, ref-op arguments, output
    location) or None (printed) when the data flow does not give its I/O."""
    import numpy as np
    w, h, c, p, n = g[0], g[1], g[2], g[7], g[8]
    src = fl.get(a["operation"], {}).get("reads")
    dst = fl.get(b["operation"], {}).get("writes")
    if not src or not dst or src[2] != 2 * w * h * c or dst[2] != 2 * p * n:
        print("note %s ops %d, %d: the data flow gives no %dx%dx%d input or %d x %d output: not judged" %
              (name, a["operation"], b["operation"], w, h, c, p, n))
        return None
    if w == h == 1 and c > 1:
        # planes of one value: their spacing (the im2col's slice stride) is
        # no part of the data flow's image, which counts the bytes read
        print("note %s ops %d, %d: an input of %d planes of one value, whose spacing the data flow does not "
              "give: not judged" % (name, a["operation"], b["operation"], c))
        return None
    x = rng.uniform(-2, 2, (c, h, w)).astype(np.float16)
    ind, mid, outd = (os.path.join(tmp, "%d_%s" % (a["operation"], d)) for d in ("in", "mid", "out"))
    for d in (ind, mid, outd):
        os.makedirs(d)
    buf = np.zeros(sizes[src[0]], np.uint8)
    buf[src[1]:src[1] + x.nbytes] = np.frombuffer(x.tobytes(), np.uint8)
    buf.tofile(os.path.join(ind, "%s_%d.bin" % src[0]))
    args = [str(a["operation"]), ind, outd] if a is b else \
        [str(a["operation"]), ind, mid, str(b["operation"]), mid, outd]
    return x, args, (outd, dst)


def judge(name, a, b, g, dw, x, where, cands):
    """Checks one unit's output against the closest source operator; True when judged."""
    import numpy as np
    w, h, c, kx, ky, stride, pad, p, n = g
    outd, dst = where
    raw = np.fromfile(os.path.join(outd, "%s_%d.bin" % dst[0]), np.uint8)[dst[1]:dst[1] + 2 * p * n]
    got = np.frombuffer(raw.tobytes(), np.float16).astype(np.float64).reshape(n, p)
    xin = x.astype(np.float64).transpose(1, 2, 0)
    best = None
    for idx, shape, wt, bias, s, same, depthwise in cands:
        if depthwise != dw or list(shape[1:]) != [h, w, c] or s != stride or \
                wt.shape != ((1, ky, kx, c) if dw else (n, ky, kx, c)):
            continue
        ref = conv2d(xin, wt, bias, s, same, dw)
        if ref.shape[0] * ref.shape[1] != p:
            continue
        ref = ref.reshape(p, n).T
        excess = float((np.abs(got - ref) - (np.abs(ref) * 2.0 ** -8 + 2.0 ** -10)).max())
        if best is None or excess < best[1]:
            best = (idx, excess, float(np.abs(got - ref).max()), float(np.abs(ref).max()))
    kind = "DEPTHWISE_CONV_2D" if dw else "CONV_2D"
    if best is None:
        print("note %s ops %d, %d: no source %s of input %dx%dx%d, kernels %dx%d, %d outputs, stride %d: "
              "not judged" % (name, a["operation"], b["operation"], kind, h, w, c, ky, kx, n, stride))
        return False
    check(best[1] <= 0, "%s ops %d, %d (%dx%dx%d, kernel %dx%d, stride %d, pad %d, %d outputs): source "
          "%s %d, largest difference %.3g (values up to %.3g), within 2^-8 relative + 2^-10" %
          (name, a["operation"], b["operation"], w, h, c, kx, ky, stride, pad, n, kind, best[0], best[2],
           best[3]))
    return True


def judge_file(nbg, refop, path, name, found, cands, rng):
    """Every unit of one file, run alone in one nbg-cpu-ref-op process: the units judged."""
    doc = json.loads(run([nbg, "inspect", "--json", path]).stdout)
    sizes, fl = region_sizes(doc), flow(nbg, path)
    judged = 0
    with tempfile.TemporaryDirectory() as tmp:
        ready = [(f, prepare(name, sizes, fl, f[0], f[1], f[2], tmp, rng)) for f in found]
        ready = [(f, r) for f, r in ready if r]
        r = run([refop, path] + [t for _, r in ready for t in r[1]])
        if not check(r.returncode == 0, "%s: %d units run alone (nbg-cpu-ref-op): exit %d %s" %
                     (name, len(ready), r.returncode, r.stdout[-300:].strip())):
            return len(ready)
        for (a, b, g, dw), (x, _, where) in ready:
            judged += judge(name, a, b, g, dw, x, where, cands)
    return judged


def main():
    nbg, refop = sys.argv[1], sys.argv[2]
    corpus, models = sys.argv[3], sys.argv[4]
    tc_corpus.need("check_cpu_shconv.py", "the fp16 convolution shaders", corpus)
    src_dir = os.path.join(models, "mediapipe-a733")
    if not os.path.isdir(src_dir):
        print("SKIP: no %s" % src_dir)
        sys.exit(77)
    debian_imports(("numpy",), "NBG_SHCONV_REEXEC", "the convolution shader check needs Debian's python3-numpy")
    import numpy as np
    rng = np.random.default_rng(43)
    v2 = os.path.join(corpus, "v2")
    judged = 0
    for name in sorted(os.listdir(v2)):
        if not name.endswith(".nb"):
            continue
        path = os.path.join(v2, name)
        src = os.path.join(src_dir, name.split("_nbg")[0] + ".tflite")
        plan = json.loads(run([nbg, "run", "--backend", "cpu", "--check", "--json", path]).stdout)
        found = units(plan["steps"], name)
        if not found:
            continue
        if not os.path.exists(src):
            print("note %s: no TFLite source beside the models (%s): not judged" % (name, src))
            continue
        judged += judge_file(nbg, refop, path, name, found, source_convs(src), rng)
    check(judged > 0, "%d convolution shader units judged against their sources" % judged)
    sys.exit(tc_check.finish())


if __name__ == "__main__":
    main()
