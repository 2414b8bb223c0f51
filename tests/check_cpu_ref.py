#!/usr/bin/env python3
"""SH and SW operations in the CPU backend (nbg run --backend cpu): what it
runs by reference semantics, against references no C code here computes.

1. Plan, every corpus file and the LeNet files: each Softmax2Layer (or
   SoftMax2, the 0x10003 files' name) SH operation whose format words are
   uint8 (or int8, 0x44404130) to fp16 and whose uniforms the test decodes
   as the row softmax or the pair softmax (softmax_form), or whose words
   0x444051f0 to 0x44405071 and uniforms it decodes as one pair a row
   (column_form), is
   executed and labelled "reference semantics, not from the operation's
   code"; other format words are refused (softmax-format-unsupported); a
   softmax of neither layout is printed as not judged and must not be
   executed; one writing an output record writes one of its width, whose
   innermost dimension is 2 for the pair softmax.  The PoolingLayer2,
   DepthwiseConvLayer, TensorAdd, TensorScale, TensorPadOperation2,
   resize_bilinear_I16toI16_UP, ConvolutionLayer, TensorSub, TensorMul,
   PReluLayer and gray copy shaders, and the fp32 ActivationLayer and Max
   Pooling ones whose program is one of the two read, are executed likewise
   (check_cpu_shpool.py, check_cpu_shmax.py, check_cpu_shdw.py,
   check_cpu_shelt.py, check_cpu_int16.py, check_cpu_shconv.py,
   check_cpu_fp32.py and check_cpu_shpre.py check them) or refused with
   pool-*, shmax-*, shdw-*, shdw16-*, shelt-*, shpad-*, shresize-*, shconv-*,
   gray-*, sub-*, mul-*, prelu-* and shader-uniforms-* ids or a
   memory id naming the layer; every other SH or SW
   operation is refused (shader-not-executed / software-not-executed) with
   its layer named; `nbg probe --json` counts the softmaxes per file, and
   the SP operations of a Softmax2Layer_SP layer, the SP mean, subtraction
   and fp16 addition (executed_by_reference_semantics).
2. Per softmax, on synthesized buffers (nbg-cpu-ref-op runs that one
   operation whatever precedes it): the I/O is decoded here, independently
   of the C code, from the raw bytes (the LOAD_STATE stream of the
   operation's state buffer, its patches from `nbg inspect --json`); the
   output must equal numpy's softmax exp((x - max) * s) / sum over the row
   or over each pair, s = the scale uniform / log2(e), rounded to float16
   (at most 1 unit in the last place apart, the count of exact values
   printed); no other byte of any buffer may change.
3. LeNet (models_dir/lenet-caffe, lenet_v2_0x10016.nb): the softmax's scale
   uniform divided by log2(e) is the scale of ip2's output: the ip2 TP
   command's scale multiplier (2^15 + alu_output_post_multiplier) / 2^k
   must equal s_ip1 * s_w2 / s_ip2 for an integer k, with s_ip1 from the NN
   commands' scale fields and the kernels fitted to Caffe (check_cpu.py's
   chain) and s_w2 the min/max scale of Caffe's ip2 weights (whose zero
   point the TP command's coef_zp confirms); the uniform read as the scale
   itself must not fit.  Then Caffe's ip2 on lenet.dat, quantized with that
   scale and the command's out_zp, through the backend's softmax: top-1
   equal to Caffe's softmax, the largest difference printed.
4. Mutations of the LeNet file: another layer name, another image format
   word, a LOAD_STATE count past the buffer, a NaN scale; of the first
   pair softmax: its 1.0 word, a selection word, its scale: each refused
   with its id.
5. `nbg run --backend cpu` reports the steps computed by reference
   semantics in summary.json (runtime.reference_semantics) and on stdout:
   none for an NN-only model.

Tiers (--tier, check_cpu.tier_of): corpus runs sections 1 and 2 on the
smallest file holding each kind of SH, SW and SP operation (a softmax's
form counted: plan_sample), and sections 3 to 5; slow runs sections 1 and
2 on the other files.  No --tier: both.

Usage: check_cpu_ref.py NBG REFOP --corpus DIR --models DIR [--tier
corpus|slow] (exit 77 when the files or Debian's python3-numpy /
python3-protobuf are missing).
"""
import glob
import json
import math
import os
import re
import struct
import sys
import tempfile

from check_cpu import finish, in_tier, inspect_many, ref_op_runs, run, split, tier_of

SKIP = 77
LENET = "lenet-caffe/lenet_v2_0x10016.nb"
LOG2E = 1.4426950408889634
LABEL = "(reference semantics, not from the operation's code)"
RESIZE = "com.vivantecorp.extension.evis.resize_bilinear_I16toI16_UP"
FMT_UINT8, FMT_FP16 = 0x444041f0, 0x44404071
FMT_INT8 = 0x44404130   # int8 input (retinaface): its bytes read as two's complement
EXECUTED_FORMATS = ((FMT_UINT8, FMT_FP16), (FMT_INT8, FMT_FP16))
# The 0x10003 files' SoftMax2 shader (the 0xa1 face detector): uint8 and
# fp16 in the other format words, one pair a row (column_form)
COLUMN_FORMATS = (0x444051f0, 0x44405071)
SOFTMAX_LAYERS = ("Softmax2Layer", "SoftMax2")
# The pre-processing and PReLU shaders (check_cpu_shpre.py)
PRE_LAYERS = ("com.vivantecorp.extension.evis.pre_process_gray_copy_U8toF16", "TensorSub", "TensorMul",
              "PReluLayer")


def executable_formats(fmt):
    return fmt in EXECUTED_FORMATS or fmt == COLUMN_FORMATS


def inspect(nbg, model):
    r = run([nbg, "inspect", "--json", "--operations", "--patches", model])
    if r.returncode != 0:
        sys.exit("nbg inspect %s failed: %s" % (model, r.stderr))
    return json.loads(r.stdout)


def plan_lines(nbg, model):
    r = run([nbg, "run", "--backend", "cpu", "--check", model])
    if r.returncode not in (0, 4):
        sys.exit("nbg run --check %s failed (%d): %s" % (model, r.returncode, r.stderr))
    return {int(m.group(1)): (m.group(2), m.group(3), m.group(4)) for m in
            re.finditer(r"^  op (\d+) \[layer \d+ (.*?)\] (SH|SW|\S+)(.*)$", r.stdout, re.M)}


def uniforms(data, doc, o):
    """The uniform words 0x36000.. the operation's state buffer loads:
    {register: (value, byte offset in the buffer)}."""
    t = [t for t in doc["tables"] if t["name"] == doc["graph"]["state_table"]][0]
    e = t["entries"][o["state_id"]]
    base = t["data_offset"] + e["offset"]
    words = struct.unpack_from("<%dI" % (e["size"] // 4), data, base)
    out, i = {}, 0
    while i < len(words):
        w = words[i]
        if w >> 27 != 1:
            i += 2
            continue
        count, reg = (w >> 16) & 0x3ff or 1024, w & 0xffff
        for k in range(count):
            out[(reg + k) * 4] = (words[i + 1 + k], (i + 1 + k) * 4)
        i += 1 + count
        i += i & 1
    return out


def region_sizes(doc):
    sizes = {("VIP_SRAM", -1): doc["vip_sram_bytes"], ("AXI_SRAM", -1): doc["axi_sram_bytes"],
             ("MEMORY_POOL", -1): doc["memory_pool_bytes"]}
    for io in doc["inputs"]:
        sizes[("INPUT", io["index"])] = io["byte_size"]
    for io in doc["outputs"]:
        sizes[("OUTPUT", io["index"])] = io["byte_size"]
    return sizes


class Unjudged(Exception):
    """A softmax whose uniforms fit neither layout the test decodes."""


# The even and the odd halfwords of each 8 values (0x36058, 0x3605c and
# 0x36098, 0x3609c): the pair softmax's selection; the row softmax reads
# them in order (0, 1 / 2, 3 at 0x36058, 0x3605c).
PAIR_SELECT = {0x36058: 0x20000, 0x3605c: 0x60004, 0x36098: 0x30001, 0x3609c: 0x70005}
ONE_F32 = 0x3f800000


def softmax_form(v):
    """(width, register of the scale uniform, values per softmax: 0 the
    whole row, 2 each pair) from the uniform values v: the row softmax
    loads the width at 0x36040, the width rounded down to a multiple of 4 at
    0x36044 and the scale at 0x36048; the pair softmax the scale at 0x36040,
    1.0 at 0x36044, 0 at 0x36048 and the even/odd selection.  Raises
    Unjudged naming what fits neither."""
    w = v[0x36008] & 0xffff
    one_row = v[0x36008] >> 16 == 1 and v.get(0x36014) == 1 and v.get(0x36028) == v[0x36008]
    if one_row and w and v.get(0x36040) == w and v.get(0x36044) == w & ~3:
        return w, 0x36048, 0
    if one_row and w and w % 2 == 0 and v.get(0x36044) == ONE_F32 and v.get(0x36048) == 0 and \
            all(v.get(a) == x for a, x in PAIR_SELECT.items()):
        return w, 0x36040, 2
    raise Unjudged("image 0x%08x (height << 16 | width), uniforms 0x36040..0x36048 %s: neither the "
                   "row softmax's (w, w rounded down to 4, the scale) nor the pair softmax's (the "
                   "scale, 1.0, 0 and the even/odd selection)" %
                   (v[0x36008], ", ".join("0x%x" % v[a] if a in v else "absent"
                                          for a in (0x36040, 0x36044, 0x36048))))


def column_form(v):
    """(width, register of the scale uniform, 2) of the column pair
    softmax: images two values wide (0x36008 pairs << 16 | 2, the output's
    0x36028 the same), rows 2 and 4 bytes apart (0x36004, 0x36024), depth
    1, 1.0 at 0x3611c and the scale at 0x36114: the pairs lie side by side,
    a pair softmax over 2 x pairs values.  Raises Unjudged otherwise."""
    img = v[0x36008]
    if img & 0xffff == 2 and img >> 16 and v.get(0x36004) == 2 and v.get(0x36024) == 4 and \
            v.get(0x36028) == img and v.get(0x36014) == 1 and v.get(0x36034) == 1 and \
            v.get(0x3611c) == ONE_F32 and 0x36114 in v:
        return 2 * (img >> 16), 0x36114, 2
    raise Unjudged("format words 0x%08x, 0x%08x with image 0x%08x, rows %s and %s bytes, 0x3611c %s: "
                   "not the column pair softmax" % (COLUMN_FORMATS + (img, v.get(0x36004), v.get(0x36024),
                                                                     v.get(0x3611c))))


def softmax_formats(data, doc, o):
    """The input and output image format words (0x3600c, 0x3602c)."""
    u = uniforms(data, doc, o)
    return u[0x3600c][0], u[0x3602c][0]


def softmax_io(data, doc, o):
    """(input region, offset, output region, offset, width, uniform, values
    per softmax) decoded from the raw bytes; raises Unjudged when the
    formats are not uint8 or int8 to fp16 or the uniforms fit neither layout."""
    u = uniforms(data, doc, o)
    pat = {p["dest_offset"]: p for p in doc["patches"]
           if p["operation"] == o["record_index"] and p["type"] == 0}
    v = {a: u[a][0] for a in u}
    if (v[0x3600c], v[0x3602c]) == COLUMN_FORMATS:
        w, at, group = column_form(v)
    elif (v[0x3600c], v[0x3602c]) not in EXECUTED_FORMATS:
        raise Unjudged("format words 0x%08x, 0x%08x" % (v[0x3600c], v[0x3602c]))
    else:
        w, at, group = softmax_form(v)
    pi, po = pat[u[0x36000][1]], pat[u[0x36020][1]]
    ri = (pi["source_type_name"], pi["index"] if pi["source_type_name"] in ("INPUT", "OUTPUT") else -1)
    ro = (po["source_type_name"], po["index"] if po["source_type_name"] in ("INPUT", "OUTPUT") else -1)
    scale = struct.unpack("<f", struct.pack("<I", v[at]))[0]
    return ri, patched_offset(doc, pi, v[0x36000]), ro, patched_offset(doc, po, v[0x36020]), w, scale, group


def patched_offset(doc, patch, value):
    """Where a relocated uniform points in its buffer: before 0x10009 the
    word is the address and the patch's source offset the buffer's base
    (doc/commands.md; check_cpu_lut.py reads the table address so)."""
    if doc["version"] < 0x10009 and patch["src_offset"] and value >= patch["src_offset"]:
        return value - patch["src_offset"]
    return patch["src_offset"] + value


def numpy_softmax(x, s, group=0, flush=False):
    """numpy's softmax of x over the whole row (group 0) or each run of
    group values, rounded to float16; with flush, values below float16's
    normal range written as zero (as the V853 board writes its SH
    softmax's: ../shared/goldens/v853-lenet)."""
    import numpy as np
    g = x.astype(np.float64).reshape(-1, group or len(x))
    e = np.exp((g - g.max(axis=1, keepdims=True)) * s)
    h = (e / e.sum(axis=1, keepdims=True)).astype(np.float16).ravel()
    if flush:
        h[np.abs(h) < np.float16(2.0 ** -14)] = 0
    return h


def run_softmaxes(refop, model, op, doc, io, xs, tmp, rng):
    """The backend's softmax of each x of xs (uint8) through one
    nbg-cpu-ref-op run; the input region is filled with noise, the others
    with zeros; every byte outside the output's 2 * width must be
    unchanged.  Returns per x float16 values or an error string."""
    import numpy as np
    ri, io_off, ro, oo_off, w = io[:5]
    cases = []
    for x in xs:
        ind, outd = tempfile.mkdtemp(dir=tmp), tempfile.mkdtemp(dir=tmp)
        before = {}
        for (src, idx), n in region_sizes(doc).items():
            if n is None:
                continue  # a size the header does not give (VIP SRAM before 0x10008): zeros, not compared
            b = np.zeros(n, dtype=np.uint8)
            if (src, idx) == ri:
                b = rng.integers(0, 256, n, dtype=np.uint8)
                b[io_off:io_off + w] = x
            before[(src, idx)] = b
            b.tofile(os.path.join(ind, "%s_%d.bin" % (src, idx)))
        cases.append((ind, outd, before))
    r = ref_op_runs(refop, model, [(op, ind, outd) for ind, outd, _ in cases])
    if r.returncode != 0:
        return ["nbg-cpu-ref-op exit %d: %s %s" % (r.returncode, r.stdout, r.stderr)] * len(xs)
    res = []
    for ind, outd, before in cases:
        out = None
        for key, b in before.items():
            a = np.fromfile(os.path.join(outd, "%s_%d.bin" % key), dtype=np.uint8)
            if key == ro:
                out = a[oo_off:oo_off + 2 * w].copy().view("<f2")
                a[oo_off:oo_off + 2 * w] = b[oo_off:oo_off + 2 * w]
            if not np.array_equal(a, b):
                out = "bytes of %s_%d outside the output changed" % key
                break
        res.append(out)
    return res


def ulps(a, b):
    import numpy as np
    return np.abs(a.view(np.int16).astype(np.int64) - b.view(np.int16).astype(np.int64))


def inspect_all(nbg, models):
    """`nbg inspect --json --operations --patches` of every model, in one
    process: {model: document}."""
    docs = inspect_many(nbg, models, "--operations", "--patches")
    if any(not d.get("operations") for d in docs.values()):
        sys.exit("nbg inspect: a file without its operation table: %s" %
                 [m for m, d in docs.items() if not d.get("operations")])
    return docs


def softmax_kind(data, doc, o):
    """A softmax's form as the rules of softmax_io read it: "row", "pair",
    "format" (not uint8 to fp16) or "unjudged"."""
    if not executable_formats(softmax_formats(data, doc, o)):
        return "format"
    try:
        return "pair" if softmax_io(data, doc, o)[6] else "row"
    except Unjudged:
        return "unjudged"


def plan_sample(docs):
    """The files whose plans the corpus tier checks: for each kind of SH,
    SW and SP operation (type and layer name, and a softmax's form), the
    smallest file holding one; the slow tier checks the others."""
    best = {}
    for model, doc in docs.items():
        data = None
        for o in doc["operations"]:
            if o["type_name"] not in ("SH", "SW", "SP"):
                continue
            k = (o["type_name"], o["layer_name"])
            if k[0] == "SH" and k[1] in SOFTMAX_LAYERS:
                data = data or open(model, "rb").read()
                k += (softmax_kind(data, doc, o),)
            if k not in best or os.path.getsize(model) < os.path.getsize(best[k]):
                best[k] = model
    return set(best.values())


def check_plans(nbg, models, docs, failures, figures):
    """Section 1 on models (their inspect documents in docs); returns
    [(model, doc, operation record)] of the softmaxes."""
    softmax, refused, layers, pools = [], 0, {}, []
    tally = {"format": 0, "unjudged": [], "pair": 0, "record": 0}
    memory = 0
    for model in models:
        doc = docs[model]
        lines = plan_lines(nbg, model)
        for o in doc["operations"]:
            n = o["record_index"]
            layer, typ, rest = lines.get(n, ("?", "?", ""))
            name = os.path.basename(model)
            if o["type_name"] == "SP" and o["layer_name"] == "Softmax2Layer_SP" and \
                    rest.endswith("execute " + LABEL):
                pools.append(model)  # the SP softmax: check_cpu.py (check_sp_softmax) checks it
                continue
            if o["type_name"] == "SP" and o["layer_name"] in ("ReduceMeanLayer_SP", "TensorSub_SP",
                                                              "ReduceSumLayer_SP", "TensorMul_SP",
                                                              "ActivationLayer_SP") and \
                    rest.endswith("execute " + LABEL):
                pools.append(model)  # the SP mean, subtraction, sum, product, scaling, negation:
                continue             # test_cpu_ops.c (sp-mean-*, sp-sub-*, sp-sum-y, sp-mul-y, nn-f16-*)
            if o["type_name"] == "NN" and o["layer_name"] == "TensorMul" and rest.endswith("execute " + LABEL):
                pools.append(model)  # the fp16 NN product: test_cpu_ops.c (nn-f16-mul)
                continue
            if o["type_name"] == "SP" and o["layer_name"] in ("MultiStreamProcessor_SP", "TensorAdd_SP") and \
                    rest.endswith("execute " + LABEL):
                pools.append(model)  # the fp16 SP addition: test_cpu_nn16.c, test_cpu_ops.c (sp-add-fp16)
                continue
            if o["type_name"] not in ("SH", "SW"):
                continue
            if o["layer_name"] in SOFTMAX_LAYERS and o["type_name"] == "SH":
                if judge_softmax(model, doc, o, rest, tally, failures):
                    softmax.append((model, doc, o))
                continue
            if o["layer_name"] in ("PoolingLayer2", "DepthwiseConvLayer", "TensorAdd", "TensorScale",
                                   "TensorPadOperation2", "ConvolutionLayer", RESIZE, "TensorDiv") + PRE_LAYERS and \
                    o["type_name"] == "SH" and rest.endswith("execute " + LABEL):
                pools.append(model)  # check_cpu_shpool/_shmax/_shdw/_shelt/_int16/_shconv/_fp32/_shpre.py check these
                continue
            if o["layer_name"] in ("ActivationLayer", "Max Pooling") and o["type_name"] == "SH" and \
                    rest.endswith(", fp32: execute " + LABEL):
                pools.append(model)  # the fp32 programs read: check_cpu_fp32.py checks these
                continue
            if o["layer_name"] == "ActivationLayer" and o["type_name"] == "SH" and \
                    rest.startswith(" tanh ") and rest.endswith("execute " + LABEL):
                pools.append(model)  # the face-age tanh: test_cpu_ops.c (sh-tanh-*), check_cpu_age.py
                continue
            rid = "shader-not-executed" if o["type_name"] == "SH" else "software-not-executed"
            if o["layer_name"] == "PoolingLayer2" and o["type_name"] == "SH" and \
                    re.search(r": refused (pool|shmax)-[a-z-]+: a pooling shader \(layer PoolingLayer2\)", rest):
                pass  # outside the layouts of check_cpu_shpool.py and check_cpu_shmax.py
            elif o["layer_name"] == "DepthwiseConvLayer" and o["type_name"] == "SH" and \
                    re.search(r": refused shdw(16)?-[a-z-]+: an? (fp16 )?depthwise convolution shader "
                              r"\(layer DepthwiseConvLayer\)", rest):
                pass  # outside the established layouts (check_cpu_shdw.py, check_cpu_shconv.py)
            elif o["layer_name"] == "ConvolutionLayer" and o["type_name"] == "SH" and \
                    re.search(r": refused shconv-[a-z-]+: a ConvolutionLayer SH operation", rest):
                pass  # outside the fp16 im2col and product layouts (check_cpu_shconv.py)
            elif o["layer_name"] == "TensorPadOperation2" and o["type_name"] == "SH" and \
                    re.search(r": refused shpad-[a-z-]+: a TensorPadOperation2 shader", rest):
                pass  # outside the established layout (test_cpu_nn16.c, check_cpu_int16.py)
            elif o["layer_name"] == RESIZE and o["type_name"] == "SH" and \
                    re.search(r": refused shresize-[a-z-]+: a resize_bilinear_I16toI16_UP shader", rest):
                pass  # outside the established layout (test_cpu_nn16.c, check_cpu_int16.py)
            elif o["layer_name"] in ("TensorMul", "TensorDiv") and o["type_name"] == "SH" and \
                    re.search(r": refused shf16-[a-z-]+: a %s shader \(layer %s\)" %
                              (o["layer_name"], o["layer_name"]), rest):
                pass  # outside the fp16 layout (test_cpu_ops.c, sh-mul-fp16, sh-div-fp16)
            elif o["layer_name"] in ("TensorAdd", "TensorScale") and o["type_name"] == "SH" and \
                    re.search(r": refused shelt-[a-z-]+: a %s shader \(layer %s\)" %
                              (o["layer_name"], o["layer_name"]), rest):
                pass  # outside the established layout (check_cpu_shelt.py)
            elif o["layer_name"] in PRE_LAYERS and o["type_name"] == "SH" and \
                    re.search(r": refused (gray|sub|mul|prelu|shader-uniforms)-[a-z-]+: ", rest):
                pass  # outside the established layouts (check_cpu_shpre.py)
            elif o["layer_name"] in ("PoolingLayer2", "DepthwiseConvLayer", "TensorAdd", "TensorScale") and \
                    o["type_name"] == "SH" and \
                    re.search(r": refused (address-outside-memory|state-buffer-missing|state-buffer-truncated): "
                              r"a [a-zA-Z ]+ shader \(layer %s\)" % o["layer_name"], rest):
                memory += 1  # a layer with a plan whose I/O or state buffer the file does not hold
            elif ": refused %s: " % rid not in rest or ("of layer %s:" % o["layer_name"]) not in rest:
                failures.append("%s op %d (%s %s) not refused as %s naming its layer: %s" %
                                (name, n, o["type_name"], o["layer_name"], rid, rest))
            refused += 1
            layers[o["layer_name"]] = layers.get(o["layer_name"], 0) + 1
    r = run([nbg, "probe", "--json", "--device-root", "/nonexistent", *models])
    probe = {m["path"]: m.get("executed_by_reference_semantics")
             for m in json.loads(r.stdout)["cpu_backend"]["models"]}
    for model in models:
        want = sum(1 for m, _, _ in softmax if m == model) + pools.count(model)
        if probe.get(model) != want:
            failures.append("nbg probe --json: %s has executed_by_reference_semantics %r, the plan %d" %
                            (os.path.basename(model), probe.get(model), want))
    figures.append("plans: %d files, %d softmax operations executed by reference semantics (%d over "
                   "each pair of values; %d writing an output record whose element count is the "
                   "width, and for a pair softmax whose innermost dimension is 2), %d refused for "
                   "their format words, %d other SH/SW operations refused naming their layer (%s; %d "
                   "of them for memory or a state buffer the file does not hold)" %
                   (len(models), len(softmax), tally["pair"], tally["record"], tally["format"], refused,
                    ", ".join("%s %d" % kv for kv in sorted(layers.items(), key=lambda kv: -kv[1])),
                    memory))
    for what in tally["unjudged"]:
        figures.append("softmax not judged (its uniforms fit neither layout): " + what)
    return softmax


def judge_softmax(model, doc, o, rest, tally, failures):
    """A Softmax2Layer SH operation by the rules of softmax_io: with uint8
    (or int8) and fp16 format words and either layout it must be executed (returns
    True: section 2 checks it); other format words must be refused with
    softmax-format-unsupported naming the word; uniforms that fit neither
    layout are reported and must not be executed.  When the softmax writes
    an output record, the record's element count must be the width and, for
    the pair softmax, its innermost dimension 2 (the classes)."""
    name, n = os.path.basename(model), o["record_index"]
    data = open(model, "rb").read()
    fmt = softmax_formats(data, doc, o)
    if not executable_formats(fmt):
        tally["format"] += 1
        word = fmt[0] if fmt[0] not in (FMT_UINT8, FMT_INT8) else fmt[1]
        if ": refused softmax-format-unsupported: " not in rest or "0x%08x" % word not in rest:
            failures.append("%s op %d (softmax, format words 0x%08x, 0x%08x) not refused as "
                            "softmax-format-unsupported naming 0x%08x: %s" % (name, n, fmt[0], fmt[1],
                                                                               word, rest))
        return False
    try:
        io = softmax_io(data, doc, o)
    except Unjudged as e:
        tally["unjudged"].append("%s op %d: %s" % (name, n, e))
        if rest.endswith("execute " + LABEL):
            failures.append("%s op %d: the backend executes a softmax whose form the test cannot "
                            "judge: %s" % (name, n, rest))
        return False
    if not rest.endswith("execute " + LABEL):
        failures.append("%s op %d (softmax) is not executed by reference semantics: %s" % (name, n, rest))
    w, group = io[4], io[6]
    tally["pair"] += group == 2
    if io[2][0] == "OUTPUT":
        rec = [r for r in doc["outputs"] if r["index"] == io[2][1]][0]
        dims = rec["dimensions"]
        if rec["element_count"] != w or (group and dims[0] != group):
            failures.append("%s op %d: a softmax of width %d over %s writes output %d of dimensions "
                            "%s" % (name, n, w, "pairs" if group else "the row", io[2][1], dims))
        tally["record"] += 1
    return True


def check_softmax_ops(refop, softmax, tmp, failures, figures):
    """Section 2."""
    import numpy as np
    rng = np.random.default_rng(27)
    total = exact = worst = 0
    for model, doc, o in softmax:
        data = open(model, "rb").read()
        io = softmax_io(data, doc, o)
        w, s, group = io[4], io[5] / LOG2E, io[6]
        cases = [rng.integers(0, 256, w, dtype=np.uint8) for _ in range(3)]
        cases.append(np.full(w, 200, dtype=np.uint8))                      # all equal
        spread = max(1, min(255, int(round(12 / s))))                      # probabilities spread out
        cases.append(np.clip(128 + rng.integers(-spread, spread + 1, w), 0, 255).astype(np.uint8))
        for x, got in zip(cases, run_softmaxes(refop, model, o["record_index"], doc, io, cases, tmp, rng)):
            if isinstance(got, str):
                failures.append("%s op %d: %s" % (os.path.basename(model), o["record_index"], got))
                continue
            if softmax_formats(data, doc, o)[0] == FMT_INT8:
                x = x.view(np.int8)  # the same bytes, read as int8
            want = numpy_softmax(x, s, group, flush=True)  # SH softmaxes
            d = ulps(got, want)
            total += w
            exact += int((d == 0).sum())
            worst = max(worst, int(d.max()))
            if d.max() > 1:
                failures.append("%s op %d: softmax of %s is %s, numpy %s" %
                                (os.path.basename(model), o["record_index"], x.tolist(),
                                 got.tolist(), want.tolist()))
    figures.append("softmax ops vs numpy: %d operations, %d values, %d equal, largest difference "
                   "%d float16 ulp" % (len(softmax), total, exact, worst))


def check_lenet_scale(nbg, refop, models, tmp, failures, figures):
    """Section 3."""
    import numpy as np
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from check_cpu import model_info, scale_of, caffe_forward
    from check_weights_lenet import caffe_layers
    model = os.path.join(models, LENET)
    lenet = os.path.join(models, "lenet-caffe")
    layers = caffe_layers(os.path.join(lenet, "lenet.caffemodel"))
    doc, weights, wdir = model_info(nbg, model, tmp)
    cmds = doc["commands"]
    ops = {o["operation"]: o for o in cmds["operations"]}
    nn = cmds["nn"]["commands"]
    s = doc["inputs"][0]["quantization"]["scale"]
    for n, blob in ((1, "conv1"), (2, "conv2"), (3, "ip1")):
        mult, shift = scale_of(doc["target"], nn[ops[n]["command"]]["fields"])
        wo = weights[n]
        d = (np.load(os.path.join(wdir, wo["files"]["weights"])).astype(np.float64) -
             wo["zero_point"]).ravel()
        wf = layers[blob][0].ravel()
        s = s * float((d * wf).sum() / (d * d).sum()) / (mult / 2.0 ** shift)
    tp = [ops[n] for n in ops if ops[n]["engine"] == "TP" and ops[n]["layer_name"] ==
          "FullyConnectedReluLayer"]
    f = cmds["tp"]["commands"][tp[-1]["command"]]["fields"]
    w2 = layers["ip2"][0].ravel()
    s_w2 = (w2.max() - w2.min()) / 255
    if round(-w2.min() / s_w2) != f["coef_zp"]:
        failures.append("LeNet ip2: Caffe's min/max weight zero point %d is not the TP command's "
                        "coef_zp %d" % (round(-w2.min() / s_w2), f["coef_zp"]))
    full = inspect(nbg, model)
    o = [o for o in full["operations"] if o["layer_name"] == "Softmax2Layer"][0]
    data = open(model, "rb").read()
    io = softmax_io(data, full, o)
    mult = (1 << 15) + f["alu_output_post_multiplier"]
    k = {}
    for name, s2 in (("scale*log2(e)", io[5] / LOG2E), ("scale", io[5])):
        k[name] = math.log2(mult / (s * s_w2 / s2))
    off = {n: abs(v - round(v)) for n, v in k.items()}
    figures.append("LeNet softmax uniform %.7g: read as ip2 scale x log2(e), ip2's scale %.6g makes "
                   "the TP multiplier %d / 2^%.4f (%.4f from an integer); read as the scale itself, "
                   "2^%.4f (%.4f)" % (io[5], io[5] / LOG2E, mult, k["scale*log2(e)"],
                                      off["scale*log2(e)"], k["scale"], off["scale"]))
    if off["scale*log2(e)"] > 0.01 or off["scale"] < 0.1:
        failures.append("LeNet: the softmax uniform does not fit ip2's scale x log2(e) (%s)" % off)
    # Caffe's ip2, quantized as the file says, through the backend's softmax
    img = np.fromfile(os.path.join(lenet, "lenet.dat"), dtype=np.uint8).reshape(28, 28)
    ip2 = caffe_forward(layers, img, doc["inputs"][0]["quantization"]["scale"],
                        doc["inputs"][0]["quantization"]["zero_point"])["ip2"]
    s2, zp = io[5] / LOG2E, f["out_zp"]
    q = np.clip(np.rint(ip2 / s2) + zp, 0, 255).astype(np.uint8)
    got = run_softmaxes(refop, model, o["record_index"], full, io, [q], tmp, np.random.default_rng(1))[0]
    if isinstance(got, str):
        failures.append("LeNet softmax: " + got)
        return
    e = np.exp(ip2 - ip2.max())
    want = e / e.sum()
    diff = float(np.abs(got.astype(np.float64) - want).max())
    figures.append("LeNet softmax of Caffe's ip2 on lenet.dat quantized (scale %.6g, zp %d): top-1 "
                   "%d (Caffe %d), largest difference from Caffe's float softmax %.3g" %
                   (s2, zp, int(np.argmax(got)), int(np.argmax(want)), diff))
    if np.argmax(got) != np.argmax(want) or diff > 0.01:
        failures.append("LeNet softmax differs from Caffe's: %s vs %s" % (got.tolist(), want.tolist()))


def check_mutations(nbg, models, tmp, failures, figures):
    """Section 4."""
    model = os.path.join(models, LENET)
    data = bytearray(open(model, "rb").read())
    doc = inspect(nbg, model)
    o = [o for o in doc["operations"] if o["layer_name"] == "Softmax2Layer"][0]
    t = [t for t in doc["tables"] if t["name"] == doc["graph"]["state_table"]][0]
    base = t["data_offset"] + t["entries"][o["state_id"]]["offset"]
    size = t["entries"][o["state_id"]]["size"]
    u = uniforms(bytes(data), doc, o)
    name_at = data.find(b"Softmax2Layer")
    cases = []
    m = bytearray(data)
    m[name_at:name_at + 13] = b"Softmax3Layer"
    cases.append(("layer name Softmax3Layer", m, "shader-not-executed", "of layer Softmax3Layer"))
    m = bytearray(data)
    struct.pack_into("<I", m, base + u[0x3600c][1], 0x444040f0)
    cases.append(("input format word 0x444040f0", m, "softmax-format-unsupported", "0x444040f0"))
    m = bytearray(data)
    hdr = base + u[0x36000][1] - 4
    w = struct.unpack_from("<I", m, hdr)[0]
    struct.pack_into("<I", m, hdr, (w & ~(0x3ff << 16)) | ((size // 4) << 16))
    cases.append(("LOAD_STATE count past the buffer", m, "state-buffer-truncated", "past the buffer"))
    m = bytearray(data)
    struct.pack_into("<I", m, base + u[0x36048][1], 0x7fc00000)
    cases.append(("scale uniform NaN", m, "softmax-scale-invalid", "0x7fc00000"))
    check_refused(nbg, cases, o["record_index"], tmp, failures)
    figures.append("mutations of LeNet's softmax refused with their ids: %d" % len(cases))


def check_pair_mutations(nbg, softmax, tmp, failures, figures):
    """Section 4 for the pair softmax: on the first corpus file holding
    one, its 1.0 at 0x36044, one selection word and its scale uniform
    changed; for the column pair softmax its scale (0x36114), a lane word
    and its input row stride: each refused with its id."""
    for column, muts in ((False, ((0x36044, 0x40000000, "softmax-shape-unsupported", "0x40000000"),
                                  (0x3605c, 0x30002, "softmax-shape-unsupported", "pair"),
                                  (0x36040, 0xff800000, "softmax-scale-invalid", "0x36040"))),
                         (True, ((0x36114, 0xff800000, "softmax-scale-invalid", "0x36114"),
                                 (0x36120, 0x0b0b0b0c, "softmax-uniforms-unknown", "0x36120"),
                                 (0x36004, 3, "softmax-uniforms-unknown", "0x36004")))):
        what = "column pair softmax" if column else "pair softmax"
        pairs = [(m, d, o) for m, d, o in softmax
                 if softmax_io(open(m, "rb").read(), d, o)[6] == 2 and
                 (softmax_formats(open(m, "rb").read(), d, o) == COLUMN_FORMATS) == column]
        if not pairs:
            figures.append("mutations of a %s: none in the corpus, not checked" % what)
            continue
        model, doc, o = pairs[0]
        data = open(model, "rb").read()
        u = uniforms(data, doc, o)
        t = [t for t in doc["tables"] if t["name"] == doc["graph"]["state_table"]][0]
        base = t["data_offset"] + t["entries"][o["state_id"]]["offset"]
        cases = []
        for reg, value, rid, needle in muts:
            m = bytearray(data)
            struct.pack_into("<I", m, base + u[reg][1], value)
            cases.append(("%s op %d uniform 0x%05x = 0x%x" % (os.path.basename(model), o["record_index"],
                                                             reg, value), m, rid, needle))
        check_refused(nbg, cases, o["record_index"], tmp, failures)
        figures.append("mutations of %s's %s (op %d) refused with their ids: %d" %
                       (os.path.basename(model), what, o["record_index"], len(cases)))


def check_refused(nbg, cases, n, tmp, failures):
    """Each (what, mutated bytes, reason id, needle): the plan refuses
    operation n with that id and a sentence naming the needle."""
    for what, m, rid, needle in cases:
        p = os.path.join(tmp, "mut.nb")
        with open(p, "wb") as f:
            f.write(m)
        line = plan_lines(nbg, p).get(n, ("", "", ""))[2]
        if ": refused %s: " % rid not in line or needle not in line:
            failures.append("mutation (%s): expected %s naming %r, got %r" % (what, rid, needle, line))


def check_run_report(nbg, corpus, tmp, failures, figures):
    """Section 5: `nbg run --backend cpu` on a model with no SH/SW operation
    (10014_ee_network_binary.nb, NN only) lists no reference step: an empty
    runtime.reference_semantics in summary.json, no line on stdout."""
    import numpy as np
    model = os.path.join(corpus, "v1", "10014_ee_network_binary.nb")
    if not os.path.exists(model):
        figures.append("run report: %s missing, not checked" % model)
        return
    doc = inspect(nbg, model)
    inp = os.path.join(tmp, "ee_in.bin")
    np.random.default_rng(5).integers(0, 256, doc["inputs"][0]["byte_size"],
                                      dtype=np.uint8).tofile(inp)
    out = os.path.join(tmp, "ee_run")
    r = run([nbg, "run", "--backend", "cpu", model, "--input", inp, "--output-dir", out])
    if r.returncode != 0:
        failures.append("nbg run --backend cpu on the NN-only model: exit %d: %s" %
                        (r.returncode, r.stderr))
        return
    with open(os.path.join(out, "summary.json")) as f:
        ref = json.load(f).get("runtime", {}).get("reference_semantics")
    if ref != [] or "reference semantics" in r.stdout:
        failures.append("the NN-only run reports reference steps: %r / %s" % (ref, r.stdout))
    figures.append("run report: summary.json's runtime.reference_semantics is [] for an NN-only run")


def main():
    argv, tier = tier_of(sys.argv)
    if len(argv) != 7 or argv[3] != "--corpus" or argv[5] != "--models":
        sys.exit("usage: check_cpu_ref.py NBG REFOP --corpus DIR --models DIR [--tier corpus|slow]")
    nbg, refop, corpus, models = argv[1], argv[2], argv[4], argv[6]
    files = sorted(glob.glob(os.path.join(corpus, "v1", "*.nb")) +
                   glob.glob(os.path.join(corpus, "v2", "*.nb")))
    if not files or not os.path.exists(os.path.join(models, LENET)):
        print("check_cpu_ref: skipped: no corpus files under %s or no %s (sh "
              "scripts/fetch-corpus.sh, or -Dcorpus_dir=DIR -Dmodels_dir=DIR)" %
              (corpus, os.path.join(models, LENET)))
        sys.exit(SKIP)
    from check_weights_lenet import imports
    imports()
    files += sorted(glob.glob(os.path.join(models, "lenet-caffe", "*.nb")))
    failures, figures = [], []
    docs = inspect_all(nbg, files)
    sample = plan_sample(docs)
    files = split(files, tier, sample)
    figures.append("tier %s: the plans of %d of %d files (the corpus tier: the smallest file holding "
                   "each kind of SH, SW and SP operation, %d files: %s; the slow tier: the others)" %
                   (tier, len(files), len(docs), len(sample),
                    ", ".join(sorted(os.path.basename(m) for m in sample))))
    with tempfile.TemporaryDirectory() as tmp:
        softmax = check_plans(nbg, files, docs, failures, figures)
        check_softmax_ops(refop, softmax, tmp, failures, figures)
        if in_tier(tier, "corpus"):
            check_lenet_scale(nbg, refop, models, tmp, failures, figures)
            check_mutations(nbg, models, tmp, failures, figures)
            check_pair_mutations(nbg, softmax, tmp, failures, figures)
            check_run_report(nbg, corpus, tmp, failures, figures)
    finish(figures, failures)


if __name__ == "__main__":
    main()
