#!/usr/bin/env python3
"""The CPU backend (nbg run --backend cpu) against references no C code here
computes.

1. Per operation, against numpy: for every NN operation the backend executes
   in the models below, the machine's buffers before and after that one
   operation (nbg-cpu-dump) are compared with a plain numpy/Python-integer
   evaluation of the same operation from the decoded fields alone
   (`nbg inspect --commands --json`: sizes, offsets, strides, zero points,
   ReLU, pooling, the requantization fields; `nbg weights --out`: kernels
   and corrected biases).  The output image must be equal byte for byte and
   no other byte of any buffer may change.  Inputs: synthesized images.
2. LeNet against its Caffe float source (models_dir/lenet-caffe): the
   backend runs lenet_v2_0x10016.nb's three NN operations (conv1+pool1,
   conv2+pool2, ip1+ReLU; its ip2 (TP) and the whole model are checked by
   check_cpu_tpfc.py) on lenet.dat and on synthesized variants of it; numpy
   runs the Caffe network (lenet.caffemodel, read with python3-protobuf as
   check_weights_lenet.py does) on the input as the file's input record
   dequantizes it (scale 1, zero point 0: the pixel values; the biases the
   compiler stored fit Caffe's with the kernel scale alone, which says the
   same).  lenet_inputmeta.yml's preprocessing (pixel * 0.00392157) is
   reported too, for top-1 only.  Each NN output, dequantized with a scale fitted by
   least squares (the file records no float scale for intermediate images)
   and the zero point of its command, must correlate with the Caffe blob at
   0.99 or more; Caffe's own ip2 applied to the backend's dequantized ip1
   must give Caffe's top-1 class.  The figures are printed.
   The same network compiled for another target (lenet_v3_0x10020.nb,
   target 0x1000003b): its four NN operations equal the numpy reference and
   its ip1 and ip2 (the logits: its softmax runs as NN-engine SP
   operations, which are refused) correlate with Caffe at 0.99 or more,
   with Caffe's top-1 on every input.
3. The whole model: 10014_ee_network_binary.nb (NN operations only) runs
   through `nbg run --backend cpu`; its output equals the last operation's
   reference.
4. The layout caveat: for LeNet's two compilations, LeNet 0x10016 with
   its version word set to 0x10013 and the corpus file of item 3, `nbg run
   --backend cpu --check` prints a caveat line exactly when `nbg inspect
   --json` notes that the file's version has no sample (v1-version-unsampled,
   v1-patch-stride-from-data, v1-entry-count-derived), naming the version
   read from the raw bytes and one clause per note; `--check --json` holds
   the same sentence (null otherwise), and `nbg run` repeats it on stdout and
   in summary.json (runtime.caveat).
5. Cross-target: the emotion family of corpus/v1 (one network, 30 files,
   7 targets, 3 encodings of the requantization scale): the first two NN
   operations give the same images, for the same synthesized inputs, on
   every file of one file-format version (the versions differ in their
   quantization: each is a separate compilation): at most one step apart in
   at most 0.5 % of the values; the
   first three NN operations of one file per encoding equal the numpy
   reference.

Tiers (--tier, tier_of): corpus runs item 1 (LeNet's operations on two
inputs), item 2 and the SP softmax on lenet.dat and its first variant (the
softmax's mutations too), items 3 and 4, and item 5 on the emotion files
of the newest file-format version with the per-encoding numpy checks;
slow runs item 2 and the SP softmax on the other 23 inputs and item 5 on
the other versions.  No --tier: both.

Usage: check_cpu.py NBG DUMP --corpus DIR --models DIR [--tier corpus|slow]
(exit 77 when the files or Debian's python3-numpy / python3-protobuf are
missing).
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

from exe_wrapper import command

SKIP = 77
EE = "v1/10014_ee_network_binary.nb"
LENET = "lenet-caffe/lenet_v2_0x10016.nb"
LENET_V3 = "lenet-caffe/lenet_v3_0x10020.nb"


def finish(figures, failures):
    """Prints the figures, then each failure, and exits 1 when there is one."""
    for f in figures:
        print(f)
    for f in failures:
        print("FAIL: " + f)
    sys.exit(1 if failures else 0)


def run(args, **kw):
    return subprocess.run([*command(args[0]), *args[1:]], capture_output=True, text=True, **kw)


# The test tiers (tests/meson.build): "corpus" runs each operation kind's
# checks on a bounded sample chosen by rule and few whole-model runs, cheap
# enough for the sanitizer build; "slow" runs everything else; "all" (no
# --tier) both.
TIERS = ("corpus", "slow")


def tier_of(argv):
    """(argv without `--tier T`, T), T "corpus", "slow" or "all" when the
    option is absent.  sys.argv itself is left as it is: a check that
    re-executes itself under Debian's python keeps the option."""
    if "--tier" not in argv:
        return list(argv), "all"
    i = argv.index("--tier")
    if i + 1 >= len(argv) or argv[i + 1] not in TIERS:
        sys.exit("--tier takes one of %s" % ", ".join(TIERS))
    return argv[:i] + argv[i + 2:], argv[i + 1]


def in_tier(tier, part):
    """Whether a check of tier `part` ("corpus" or "slow") runs in `tier`."""
    return tier in ("all", part)


def split(items, tier, sample):
    """The items a tier checks: the corpus tier those in sample (a bounded
    sample chosen by rule), the slow tier the others, "all" every one."""
    keep = list(sample)
    if tier == "all":
        return list(items)
    return [i for i in items if (i in keep) == (tier == "corpus")]


def inspect_many(nbg, models, *flags):
    """`nbg inspect --json FLAGS MODEL...` in one process: {model: its
    document}; exits when a document is missing."""
    r = run([nbg, "inspect", "--json", *flags, *models])
    try:
        docs = json.loads(r.stdout)
    except ValueError:
        sys.exit("nbg inspect failed (%d): %s" % (r.returncode, r.stderr[-500:]))
    docs = docs if isinstance(docs, list) else [docs]
    if len(docs) != len(models):
        sys.exit("nbg inspect failed (%d): %s" % (r.returncode, r.stderr[-500:]))
    return dict(zip(models, docs))


def ref_op_runs(refop, model, jobs):
    """nbg-cpu-ref-op on jobs [(operation, indir, outdir)], the plan built
    once for all of them: the completed process."""
    args = [refop, model]
    for op, ind, outd in jobs:
        args += [str(op), ind, outd]
    return run(args)


def run_cpu(nbg, model, inputs, tmp, dtype="uint8"):
    """`nbg run --backend cpu MODEL --input INPUT...` into a new directory
    under tmp: (output_0.bin as a numpy array of dtype, the directory, "")
    or, when the run fails or writes no output_0.bin, (None, the directory,
    its exit code and the tail of its stderr)."""
    import numpy as np
    od = tempfile.mkdtemp(dir=tmp)
    args = [nbg, "run", "--backend", "cpu", model]
    for p in inputs:
        args += ["--input", p]
    r = run(args + ["--output-dir", od])
    f = os.path.join(od, "output_0.bin")
    if r.returncode != 0 or not os.path.exists(f):
        return None, od, "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])
    return np.fromfile(f, dtype=dtype), od, ""


_INFO = {}


def model_info(nbg, model, tmp):
    """(`nbg inspect --commands --json` document, weights.json's operations
    by number, the directory of `nbg weights --out`), once per model."""
    if (nbg, model, tmp) not in _INFO:
        _INFO[(nbg, model, tmp)] = _model_info(nbg, model, tmp)
    return _INFO[(nbg, model, tmp)]


def _model_info(nbg, model, tmp):
    r = run([nbg, "inspect", "--commands", "--json", model])
    if r.returncode != 0:
        sys.exit("nbg inspect failed: %s" % r.stderr)
    doc = json.loads(r.stdout)
    wdir = os.path.join(tmp, "w_" + os.path.basename(model))
    r = run([nbg, "weights", model, "--out", wdir])
    if r.returncode != 0:
        sys.exit("nbg weights failed: %s" % r.stderr)
    with open(os.path.join(wdir, "weights.json")) as f:
        weights = {o["operation"]: o for o in json.load(f)["weights"]["operations"]}
    return doc, weights, wdir


# Buffers prefetch() dumped: (model, stop, inputs) -> buffers, or the
# refusal nbg-cpu-dump printed for a stop past a refused operation.
_DUMPED = {}


def read_buffers(d):
    """The buffers nbg-cpu-dump wrote into directory d: {(source, index): bytes}."""
    import numpy as np
    bufs = {}
    for name in os.listdir(d):
        src, idx = name[:-4].rsplit("_", 1)
        bufs[(src, int(idx))] = np.fromfile(os.path.join(d, name), dtype=np.uint8)
    return bufs


def prefetch(dumper, model, stops, inputs, tmp, keep=False):
    """Runs the model once (nbg-cpu-dump with several stops) and keeps its
    buffers at each stop for dump() to return: the same bytes as a run per
    stop, without running the operations before each stop again.  Replaces
    what an earlier prefetch kept, unless keep."""
    import shutil
    if not keep:
        _DUMPED.clear()
    stops = sorted(set(stops))
    if len(stops) < 2:
        return
    out = tempfile.mkdtemp(dir=tmp)
    for s in stops:
        os.mkdir(os.path.join(out, str(s)))
    r = run([dumper, model, ",".join(map(str, stops)), out, *inputs])
    if r.returncode not in (0, 4):
        sys.exit("nbg-cpu-dump %s %s failed (%d): %s %s" % (model, ",".join(map(str, stops)),
                                                             r.returncode, r.stdout, r.stderr))
    for s in stops:
        d = os.path.join(out, str(s))
        _DUMPED[(model, s, tuple(inputs))] = read_buffers(d) if os.listdir(d) else r.stdout
    shutil.rmtree(out)


def forget_dumps():
    """Drops what prefetch() kept."""
    _DUMPED.clear()


def dump(dumper, model, stop, inputs, tmp, refused_ok=False):
    """The machine's buffers after the operations below stop; None when one
    of them is refused and refused_ok."""
    got = _DUMPED.get((model, stop, tuple(inputs)))
    if isinstance(got, dict):
        return {k: v.copy() for k, v in got.items()}
    if got is None:
        out = tempfile.mkdtemp(dir=tmp)
        r = run([dumper, model, str(stop), out, *inputs])
        if r.returncode == 0:
            return read_buffers(out)
        got = r.stdout if r.returncode == 4 else None
        if got is None:
            sys.exit("nbg-cpu-dump %s %d failed (%d): %s %s" % (model, stop, r.returncode, r.stdout,
                                                                 r.stderr))
    if refused_ok and got.startswith("unsupported-operation"):
        return None
    sys.exit("nbg-cpu-dump %s %d refused: %s" % (model, stop, got))


def key(ref):
    io = ref["source_type_name"] in ("INPUT", "OUTPUT")
    return (ref["source_type_name"], ref["index"] if io else -1)


def scale_of(target, f):
    """The requantization scale as (multiplier, right shift): scale =
    multiplier / 2^shift, in the target family's encoding of the
    post_multiplier / post_shift fields (doc/cpu-backend.md)."""
    m15 = (f.get("post_multiplier", 0) | f.get("post_multiplier_1_to_6", 0) << 1 |
           f.get("post_multiplier_7_to_14", 0) << 7)
    m23 = m15 | f.get("post_multiplier_15_to_22", 0) << 15
    sh = f.get("post_shift", 0) | f.get("post_shift_bit_5_6", 0) << 5
    if target in (0x7d, 0x88, 0x99, 0xa1):   # (2^15 + m15) / 2^shift
        return (1 << 15) | m15, sh
    if target in (0xad, 0xb9, 0xbe):         # 1.m23 * 2^-shift
        return (1 << 23) | m23, 23 + sh
    return (1 << 23) | m23, 150 - sh         # a float32: 1.m23 * 2^(exponent - 127)


def requant(acc, f, target):
    """acc * scale rounded as the command's rounding_mode says (0 half
    away from zero, 1 half to even), + zp, ReLU, uint8 saturation;
    Python integers, no float."""
    m, shift = scale_of(target, f)
    mode = f.get("rounding_mode", 0)
    assert mode in (0, 1), mode
    out = []
    for a in acc:
        p = int(a) * m
        mag = abs(p)
        q, r = divmod(mag, 1 << shift)
        if 2 * r > 1 << shift or (2 * r == 1 << shift and (mode == 0 or q % 2)):
            q += 1
        q = -q if p < 0 else q
        q += f.get("out_zero_point", 0)
        if f.get("relu", 0):
            q = max(q, f.get("out_zero_point", 0))
        out.append(min(max(q, 0), 255))
    return out


def ring_of(cmd, which):
    """The circular buffer (lo, size) the command reads ("in") or writes
    ("out") its image through: its size field << 6 bytes ending at its
    end field plus the patch's source offset (the NN and TP commands name
    that field differently); (0, 0) when the size is 0."""
    f, pf = cmd["fields"], cmd.get("patched_fields", {})
    size = f.get("%s_image_circular_buf_size" % which, 0) << 6
    if not size:
        return 0, 0
    key_ = "%s_image_circular_buf_end_addr_plus_1" % which
    if key_ not in f:
        key_ = "%s_image_circular_buf_end_address_plus_1" % which
    end = f[key_] + (pf[key_]["src_offset"] if key_ in pf else 0)
    return end - size, size


def interleaved(doc, op):
    """Whether the operation reads an input record whose dimensions
    (innermost first) are (z, x, y) of its image: channels side by side,
    the command's x stride the record's x."""
    ref = op["input_ref"]
    if ref["source_type_name"] != "INPUT" or op["kind"] != "conv" or op["input"][2] < 2:
        return False
    dims = doc["inputs"][ref["index"]]["dimensions"]
    return (len(dims) >= 3 and all(d == 1 for d in dims[3:]) and dims[0] == op["input"][2] and
            dims[0] != dims[1] and dims[1] == op["dataflow"]["input_row_stride"])


def addresses(base, row, slice_, xstep, ring, z, y, x):
    """The byte addresses of an image [z][y][x], wrapped into the ring."""
    import numpy as np
    a = (base + np.arange(z)[:, None, None] * slice_ + np.arange(y)[None, :, None] * row +
         np.arange(x)[None, None, :] * xstep)
    return wrap(a, ring)


def wrap(a, ring):
    """Addresses (an int or a numpy array) at or past a circular buffer's
    start wrapped into it: start + (a - start) mod size."""
    import numpy as np
    lo, size = ring
    return np.where(a >= lo, lo + (a - lo) % size, a) if size else a


def reference_op(op, f, w, bias, before, target):
    """The operation's written image and where it goes, from the fields
    (f["_interleaved"], f["_in_ring"]: the input's addressing, check_ops)."""
    import numpy as np
    ib = before[key(op["input_ref"])]
    df = op["dataflow"]
    ix, iy = f["in_image_x_size"], f["in_image_y_size"]
    o, kz, k, _ = w.shape
    dw = op["kind"] == "depthwise conv"
    iz = o if dw else kz
    base = op["input_ref"]["offset"]
    row, slice_, xstep = df["input_row_stride"], df["input_slice_stride"], 1
    if f.get("_interleaved"):
        row, slice_, xstep = row * iz, 1, iz
    img = ib[addresses(base, row, slice_, xstep, f.get("_in_ring", (0, 0)), iz, iy, ix)].astype(np.int64)
    zp_in = f.get("in_image_border_const", 0)

    def signed4(lo, hi):
        v = lo | hi << 3
        return v - 16 if v >= 8 else v
    xo = signed4(f.get("in_image_x_offset", 0), f.get("in_image_x_offset_bit_3", 0))
    yo = signed4(f.get("in_image_y_offset", 0), f.get("in_image_y_offset_bit_3", 0))
    cx, cy = f["out_image_x_size"], f["out_image_y_size"]
    pad = np.full((iz, cy + k + 16, cx + k + 16), zp_in, dtype=np.int64)
    # place the image so that input (0, 0) lands at (-yo, -xo) of the window origin
    oy0, ox0 = 8 - yo, 8 - xo
    hy, hx = min(iy, pad.shape[1] - oy0), min(ix, pad.shape[2] - ox0)
    pad[:, oy0:oy0 + hy, ox0:ox0 + hx] = img[:, :hy, :hx]
    x = pad - zp_in
    wd = w.astype(np.int64) - f["coef_zero_point"] if "coef_zero_point" in f else w.astype(np.int64)
    acc = np.zeros((o, cy, cx), dtype=np.int64)
    for ky in range(k):
        for kx in range(k):
            win = x[:, 8 + ky:8 + ky + cy, 8 + kx:8 + kx + cx]
            if dw:
                acc += wd[:, 0, ky, kx][:, None, None] * win
            else:
                acc += np.einsum("oz,zhw->ohw", wd[:, :, ky, kx], win)
    acc += bias.astype(np.int64)[:, None, None]
    q = np.array(requant(acc.ravel(), f, target), dtype=np.int64).reshape(acc.shape)
    px, py = op["output"][0], op["output"][1]
    if op["pooling"] == "max":
        out = np.zeros((o, py, px), dtype=np.int64)
        for y in range(py):
            for xx in range(px):
                out[:, y, xx] = q[:, 2 * y:2 * y + 2, 2 * xx:2 * xx + 2].reshape(o, -1).max(axis=1)
    elif op["pooling"] == "first-pixel":
        out = q[:, ::2, ::2][:, :py, :px]
    else:
        out = q
    return out


def check_ops(nbg, dumper, model, inputs_list, tmp, failures, figures, max_ops=1 << 30, skip=0):
    """Each of the model's NN operations with decoded kernels, from the
    skip-th on and below max_ops of them, against the numpy reference."""
    import numpy as np
    doc, weights, wdir = model_info(nbg, model, tmp)
    cmds = doc["commands"]
    nn = cmds["nn"]["commands"]
    checked = same = 0
    ops = [op for op in cmds["operations"] if op["engine"] == "NN" and op["operation"] in weights and
           weights[op["operation"]]["status"] == "decoded"][skip:max_ops]
    for inputs in inputs_list:
        for i, op in enumerate(ops):
            if i % 16 == 0:  # one run dumps the buffers around the next 16
                prefetch(dumper, model, [o["operation"] + d for o in ops[i:i + 16] for d in (0, 1)],
                         inputs, tmp)
            wo = weights[op["operation"]]
            n = op["operation"]
            after = dump(dumper, model, n + 1, inputs, tmp, refused_ok=True)
            if after is None:  # an operation up to this one is refused
                break
            before = dump(dumper, model, n, inputs, tmp)
            f = dict(nn[op["command"]]["fields"])
            f["coef_zero_point"] = wo["zero_point"]
            f["_interleaved"] = interleaved(doc, op)
            f["_in_ring"] = ring_of(nn[op["command"]], "in")
            w = np.load(os.path.join(wdir, wo["files"]["weights"]))
            b = np.load(os.path.join(wdir, wo["files"]["bias"]))
            ref = reference_op(op, f, w, b, before, doc["target"])
            ob = key(op["output_ref"])
            expect = {k: v.copy() for k, v in before.items()}
            df = op["dataflow"]
            at = addresses(op["output_ref"]["offset"], df["output_row_stride"],
                           df["output_slice_stride"], 1, ring_of(nn[op["command"]], "out"),
                           *ref.shape)
            expect[ob][at] = ref
            equal = True
            for k in expect:
                if not np.array_equal(expect[k], after[k]):
                    equal = False
                    diff = np.nonzero(expect[k] != after[k])[0]
                    failures.append("%s op %d: %s differs from the numpy reference at %d bytes "
                                    "(first at +0x%x)" % (os.path.basename(model), n, k[0],
                                                          len(diff), diff[0]))
            checked += 1
            same += equal
    forget_dumps()
    figures.append("%s: %d of %d NN operation runs equal to the numpy reference byte for byte" %
                   (os.path.basename(model), same, checked))
    return doc


def synth_inputs(base, tmp, count):
    """base (uint8 28x28) and count variants: shifted, brightness-scaled,
    with deterministic noise."""
    import numpy as np
    rng = np.random.default_rng(27)
    imgs = [base]
    for i in range(count):
        dy, dx = (i % 5) - 2, ((i // 5) % 5) - 2
        im = np.roll(np.roll(base.astype(np.int64), dy, axis=0), dx, axis=1)
        im = im * (0.7 + 0.05 * (i % 7)) + rng.normal(0, 8, im.shape)
        imgs.append(np.clip(np.rint(im), 0, 255).astype(np.uint8))
    paths = []
    for i, im in enumerate(imgs):
        p = os.path.join(tmp, "in_%d.bin" % i)
        im.tofile(p)
        paths.append(p)
    return imgs, paths


def caffe_forward(layers, img, scale, zero_point):
    """Caffe LeNet in float64 on the input (img - zero_point) * scale: conv1,
    pool1, conv2, pool2, ip1+ReLU, ip2."""
    import numpy as np

    def conv(x, w, b):
        o, z, k, _ = w.shape
        h = x.shape[1] - k + 1
        out = np.zeros((o, h, h))
        for ky in range(k):
            for kx in range(k):
                out += np.einsum("oz,zhw->ohw", w[:, :, ky, kx], x[:, ky:ky + h, kx:kx + h])
        return out + b[:, None, None]

    def pool(x):
        c, h, _ = x.shape
        return x.reshape(c, h // 2, 2, h // 2, 2).max(axis=(2, 4))
    x = (img.astype(np.float64)[None] - zero_point) * scale
    p1 = pool(conv(x, *layers["conv1"]))
    p2 = pool(conv(p1, *layers["conv2"]))
    w1, b1 = layers["ip1"]
    ip1 = np.maximum(w1.reshape(w1.shape[0], -1) @ p2.reshape(-1) + b1, 0)
    w2, b2 = layers["ip2"]
    ip2 = w2.reshape(w2.shape[0], -1) @ ip1 + b2
    return {"pool1": p1, "pool2": p2, "ip1": ip1, "ip2": ip2}


def fit(q, zp, ref):
    """scale s with ref ~ s * (q - zp), least squares over the outputs that
    are not saturated (q 0 or 255 stands for anything beyond); correlation;
    the largest error in units of s; how many are saturated."""
    import numpy as np
    d = (q.astype(np.float64) - zp).ravel()
    r = ref.ravel()
    ok = (q.ravel() > 0) & (q.ravel() < 255)
    d, r = d[ok], r[ok]
    s = float((d * r).sum() / max((d * d).sum(), 1e-30))
    corr = float(np.corrcoef(d, r)[0, 1])
    return s, corr, float(np.abs(s * d - r).max() / abs(s)), int((~ok).sum())


# The LeNet inputs the corpus tier runs: lenet.dat and its first variant;
# the slow tier runs the other 23.
CORPUS_INPUTS = 2


def lenet_setup(nbg, dumper, models, name, tmp, failures, figures, tier="all"):
    """A LeNet file of models_dir: Caffe's layers, lenet.dat and 24
    variants (arrays, paths; the tier's part of them), the file's commands
    (in the corpus tier its NN operations checked against the numpy
    reference on two of the inputs), its input quantization and its
    operations by number."""
    import numpy as np
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from check_weights_lenet import caffe_layers
    lenet = os.path.join(models, "lenet-caffe")
    model = os.path.join(models, name)
    layers = caffe_layers(os.path.join(lenet, "lenet.caffemodel"))
    base = np.fromfile(os.path.join(lenet, "lenet.dat"), dtype=np.uint8).reshape(28, 28)
    imgs, paths = synth_inputs(base, tmp, 24)
    if in_tier(tier, "corpus"):
        doc = check_ops(nbg, dumper, model, [[paths[0]], [paths[1]]], tmp, failures, figures)
    else:
        doc = model_info(nbg, model, tmp)[0]
    sel = split(range(len(imgs)), tier, range(CORPUS_INPUTS))
    ops = {o["operation"]: o for o in doc["commands"]["operations"]}
    return (model, layers, [imgs[i] for i in sel], [paths[i] for i in sel], doc,
            doc["inputs"][0]["quantization"], ops)


def check_lenet(nbg, dumper, models, tmp, failures, figures, tier):
    import numpy as np
    model, layers, imgs, paths, doc, quant, ops = lenet_setup(nbg, dumper, models, LENET, tmp, failures,
                                                              figures, tier)
    in_scale, in_zp = quant["scale"], quant["zero_point"]
    nn = doc["commands"]["nn"]["commands"]
    blobs = {1: "pool1", 2: "pool2", 3: "ip1"}
    corr_min = {b: 1.0 for b in blobs.values()}
    err_max = {b: 0.0 for b in blobs.values()}
    saturated = {b: 0 for b in blobs.values()}
    fitted = {}
    total = {b: 0 for b in blobs.values()}
    top1_equal = top1_yml = 0
    for img, path in zip(imgs, paths):
        ref = caffe_forward(layers, img, in_scale, in_zp)
        yml = caffe_forward(layers, img, 0.00392157, 0)
        prefetch(dumper, model, [n + 1 for n in blobs], [path], tmp)
        for n, blob in blobs.items():
            # the operations reuse memory: each output is read right after it is written
            bufs = dump(dumper, model, n + 1, [path], tmp)
            op = ops[n]
            q = read_output(op, bufs)
            zp = nn[op["command"]]["fields"].get("out_zero_point", 0)
            s, corr, err, sat = fit(q, zp, ref[blob].reshape(q.shape))
            saturated[blob] += sat
            if img is imgs[0]:
                fitted[blob] = s
            total[blob] += q.size
            corr_min[blob] = min(corr_min[blob], corr)
            err_max[blob] = max(err_max[blob], err)
            if blob == "ip1":
                w2, b2 = layers["ip2"]
                ip2 = w2.reshape(w2.shape[0], -1) @ (s * (q.ravel() - zp)) + b2
                top1_equal += int(np.argmax(ip2) == np.argmax(ref["ip2"]))
                top1_yml += int(np.argmax(ip2) == np.argmax(yml["ip2"]))
    # The requantization scale the backend reads (mantissa and exponent
    # fields) against the one the float model implies: output scale =
    # input scale x kernel scale (fitted to Caffe's weights) / scale.
    _, weights, wdir = model_info(nbg, model, tmp)
    s_prev = in_scale
    for n, blob in blobs.items():
        mult, shift = scale_of(doc["target"], nn[ops[n]["command"]]["fields"])
        m = mult / 2.0 ** shift
        wo = weights[n]
        d = (np.load(os.path.join(wdir, wo["files"]["weights"])).astype(np.float64) -
             wo["zero_point"]).ravel()
        wf = layers[{"pool1": "conv1", "pool2": "conv2", "ip1": "ip1"}[blob]][0].ravel()
        s_w = float((d * wf).sum() / (d * d).sum())
        implied = s_prev * s_w / m
        figures.append("LeNet %s: output scale implied by the command's scale fields %.6g, "
                       "fitted to Caffe %.6g (ratio %.5f)" % (blob, implied, fitted[blob],
                                                             fitted[blob] / implied))
        if abs(fitted[blob] / implied - 1) > 0.01:
            failures.append("LeNet %s: the scale fields imply %.6g, Caffe fits %.6g" %
                            (blob, implied, fitted[blob]))
        s_prev = implied
    for blob in ("pool1", "pool2", "ip1"):
        figures.append("LeNet %s (NN op, %d inputs): correlation with Caffe >= %.5f, largest "
                       "error %.2f quantization steps (scale fitted per input over the %d of "
                       "%d values not at 0 or 255)" % (blob, len(imgs), corr_min[blob],
                                                      err_max[blob], total[blob] - saturated[blob],
                                                      total[blob]))
        if corr_min[blob] < 0.99:
            failures.append("LeNet %s correlates %.5f with Caffe, below 0.99" %
                            (blob, corr_min[blob]))
    figures.append("LeNet top-1 (Caffe ip2 on the backend's ip1 vs Caffe on the input record's "
                   "scale %g): %d of %d equal; vs Caffe with lenet_inputmeta.yml's scale "
                   "0.00392157: %d of %d" % (in_scale, top1_equal, len(imgs), top1_yml, len(imgs)))
    if top1_equal != len(imgs):
        failures.append("LeNet top-1 differs from Caffe on %d of %d inputs" %
                        (len(imgs) - top1_equal, len(imgs)))
    # the whole model (its TP ip2 and SH softmax included) is run and checked
    # by check_cpu_tpfc.py


def check_lenet_v3(nbg, dumper, models, tmp, failures, figures, tier):
    """The same LeNet compiled for target 0x1000003b (file version 0x10020,
    the SDK's v3 model): its four NN operations, the first reading its
    784-byte input through a 1024-byte circular buffer that ends past the
    input's end, byte for byte against the numpy reference, then on the 25
    inputs against Caffe: ip1 (op 3) and ip2 (op 4, the logits) correlate,
    and ip2's top-1 is Caffe's.  Then the whole model, whose softmax five
    NN-engine SP operations compute and the backend runs by reference
    semantics (check_sp_softmax)."""
    import numpy as np
    model, layers, imgs, paths, doc, quant, ops = lenet_setup(nbg, dumper, models, LENET_V3, tmp, failures,
                                                              figures, tier)
    nn = doc["commands"]["nn"]["commands"]
    corr = {"ip1": 1.0, "ip2": 1.0}
    top1 = 0
    logits, refs = [], []
    for img, path in zip(imgs, paths):
        ref = caffe_forward(layers, img, quant["scale"], quant["zero_point"])
        refs.append(ref["ip2"].ravel())
        bufs = dump(dumper, model, 5, [path], tmp)
        for n, blob in ((3, "ip1"), (4, "ip2")):
            q = read_output(ops[n], bufs)
            zp = nn[ops[n]["command"]]["fields"].get("out_zero_point", 0)
            corr[blob] = min(corr[blob], fit(q, zp, ref[blob].reshape(q.shape))[1])
            if blob == "ip2":
                top1 += int(np.argmax(q.ravel()) == np.argmax(ref["ip2"]))
                logits.append(q.ravel())
    figures.append("LeNet 0x1000003b (v3 file): ip1 and ip2 correlate with Caffe at >= %.5f and %.5f; "
                   "ip2's top-1 is Caffe's on %d of %d inputs" % (corr["ip1"], corr["ip2"], top1, len(imgs)))
    if min(corr.values()) < 0.99 or top1 != len(imgs):
        failures.append("LeNet 0x1000003b: correlation %.5f / %.5f, top-1 %d of %d" %
                        (corr["ip1"], corr["ip2"], top1, len(imgs)))
    check_sp_softmax(nbg, models, model, doc, paths, logits, refs, tmp, failures, figures, tier)


def sp_clamps(raw, doc, first):
    """The scale and zero point of a Softmax2Layer_SP layer, derived here
    from the raw bytes of its first SP command: words 29 and 30 are the
    float32 values s x (255 - zp) and s x (0 - zp)."""
    import numpy as np
    nn = doc["commands"]["nn"]
    at = nn["offset"] + first["command"] * nn["command_size"] + 29 * 4
    hi, lo = struct.unpack_from("<2f", raw, at)
    s = float(np.float32((hi - lo) / 255.0))
    return s, round(-lo / s), at


def with_crc(raw, doc):
    """raw with its nbg_crc_sum (offset 108: CRC-32 from the first section
    on) recomputed, as the 0x10020 file's writer computes it."""
    import zlib
    first = min(sec["offset"] for sec in doc["sections"] if sec["size"])
    struct.pack_into("<I", raw, 108, zlib.crc32(bytes(raw[first:])))
    return raw


def check_sp_softmax(nbg, models, model, doc, paths, logits, refs, tmp, failures, figures, tier):
    """LeNet 0x1000003b's softmax: five SP operations the backend runs as
    one softmax by reference semantics, the scale from the first command's
    clamp words.  Expected values come from the raw bytes (the clamps,
    read here) and the ip2 bytes the NN operations wrote, from Caffe's
    float softmax, and from the 0x10016 compilation of the same network,
    whose softmax is a shader with its scale in a uniform."""
    import numpy as np
    from check_cpu_ref import numpy_softmax, ulps  # the zero point cancels in the softmax
    raw = bytearray(open(model, "rb").read())
    first = min((o for o in doc["commands"]["operations"] if o["layer_name"] == "Softmax2Layer_SP"),
                key=lambda o: o["operation"])
    s, zp, at = sp_clamps(raw, doc, first)
    worst, caffe_err, top1, v2_err, v2_top1, runs = 0, 0.0, 0, 0.0, 0, 0
    for path, q, ref in zip(paths, logits, refs):
        got, _, err = run_cpu(nbg, model, [path], tmp, dtype=np.float16)
        other, _, err2 = run_cpu(nbg, os.path.join(models, LENET), [path], tmp, dtype=np.float16)
        if got is None or other is None or len(got) != len(q):
            failures.append("LeNet 0x1000003b whole run: %s %s" % (err, err2))
            return
        runs += 1
        worst = max(worst, int(ulps(got, numpy_softmax(q, s)).max()))
        e = np.exp(ref - ref.max())
        caffe_err = max(caffe_err, float(np.abs(got.astype(np.float64) - e / e.sum()).max()))
        top1 += int(np.argmax(got) == np.argmax(ref))
        v2_err = max(v2_err, float(np.abs(got.astype(np.float64) - other.astype(np.float64)).max()))
        v2_top1 += int(np.argmax(got) == np.argmax(other))
    figures.append("LeNet 0x1000003b whole (SP softmax by reference semantics, scale %.7g and zero point "
                   "%d read from words 29/30): %d runs, at most %d float16 ulp from the test's softmax of "
                   "the run's ip2; top-1 Caffe's on %d, largest difference from Caffe's float softmax "
                   "%.3g; against the 0x10016 compilation: top-1 equal on %d, largest difference %.3g" %
                   (s, zp, runs, worst, top1, caffe_err, v2_top1, v2_err))
    if worst > 1 or top1 != runs or v2_top1 != runs:
        failures.append("LeNet 0x1000003b softmax: %d ulp, top-1 %d / %d of %d" % (worst, top1, v2_top1, runs))
    # The scale read, not assumed: the clamps times 2^-8 (the mantissa the
    # post_multiplier holds unchanged) give a softmax that is not one-hot.
    m = bytearray(raw)
    hi, lo = struct.unpack_from("<2f", m, at)
    struct.pack_into("<2f", m, at, hi / 256, lo / 256)
    mpath = os.path.join(tmp, "lenet_v3_scaled.nb")
    with open(mpath, "wb") as f:
        f.write(with_crc(m, doc))
    s2 = sp_clamps(m, doc, first)[0]
    spread, worst2 = 0, 0
    for path, q in list(zip(paths, logits))[:5]:
        got, _, err = run_cpu(nbg, mpath, [path], tmp, dtype=np.float16)
        if got is None:
            failures.append("LeNet 0x1000003b with the clamps scaled: %s" % err)
            return
        worst2 = max(worst2, int(ulps(got, numpy_softmax(q, s2)).max()))
        spread = max(spread, int(np.count_nonzero(got.astype(np.float64) > 1e-3)))
    figures.append("  clamps times 2^-8 (scale %.7g): at most %d ulp from the test's softmax on %d inputs, "
                   "up to %d probabilities above 0.001 per input" % (s2, worst2, min(5, len(paths)), spread))
    if worst2 > 1 or spread < 2:
        failures.append("LeNet 0x1000003b with the clamps scaled: %d ulp, %d values above 0.001" %
                        (worst2, spread))
    if not in_tier(tier, "corpus"):
        return
    # Inconsistent words are refused with their id.
    cases = []
    m = bytearray(raw)
    struct.pack_into("<I", m, at, struct.unpack_from("<I", m, at)[0] + 1)
    cases.append(("upper clamp one unit off", m, "sp-softmax-scale-inconsistent"))
    m = bytearray(raw)
    struct.pack_into("<2f", m, at, hi * 1.5, lo * 1.5)
    cases.append(("clamps times 1.5: another mantissa", m, "sp-softmax-scale-inconsistent"))
    m = bytearray(raw)
    name_at = m.find(b"Softmax2Layer_SP")
    m[name_at:name_at + 16] = b"Softmax3Layer_SP"
    cases.append(("layer name Softmax3Layer_SP", m, "operation-type-unsupported"))
    for what, m, rid in cases:
        with open(mpath, "wb") as f:
            f.write(with_crc(m, doc))
        r = run([nbg, "run", "--backend", "cpu", "--check", mpath])
        line = re.search(r"^  op %d .*$" % first["operation"], r.stdout, re.M)
        if not line or ": refused %s: " % rid not in line.group(0):
            failures.append("LeNet 0x1000003b mutation (%s): expected %s, got %r" %
                            (what, rid, line.group(0) if line else r.stdout[-200:]))
    figures.append("  %d mutations of the softmax layer refused with their ids" % len(cases))


def check_ee(nbg, dumper, corpus, models, tmp, failures, figures):
    import numpy as np
    model = os.path.join(corpus, EE)
    base = np.fromfile(os.path.join(models, "lenet-caffe", "lenet.dat"),
                       dtype=np.uint8).reshape(28, 28)
    imgs, paths = synth_inputs(base, tmp, 2)
    check_ops(nbg, dumper, model, [[p] for p in paths], tmp, failures, figures)
    got, out, err = run_cpu(nbg, model, [paths[0]], tmp)
    if got is None:
        failures.append("nbg run --backend cpu %s: %s" % (EE, err))
        return
    last = dump(dumper, model, 1 << 30, [paths[0]], tmp)[("OUTPUT", 0)]
    if not np.array_equal(got, last):
        failures.append("nbg run's output_0.bin differs from the operations' last write")
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    if summary.get("runtime", {}).get("backend_selected", "cpu") != "cpu":
        failures.append("summary.json does not name the cpu backend")


def read_output(op, bufs):
    """The image an operation wrote, [z][y][x], from the machine's buffers."""
    df = op["dataflow"]
    x, y, z = op["output"]
    return read_image(bufs[key(op["output_ref"])], op["output_ref"]["offset"], x, y, z,
                      df["output_row_stride"], df["output_slice_stride"])


def read_image(buf, base, x, y, z, row, slice_):
    """An image [z][y][x] of bytes at base with its row and slice strides, as int64."""
    import numpy as np
    q = np.zeros((z, y, x), dtype=np.int64)
    for c in range(z):
        for r in range(y):
            s = base + c * slice_ + r * row
            q[c, r] = buf[s:s + x]
    return q


CAVEAT_CLAUSES = {
    "v1-version-unsampled": "its record strides assumed from the newest known layout",
    "v1-patch-stride-from-data": "its patch record stride chosen from the data",
    "v1-entry-count-derived": "its entry count derived from the input table",
}


def check_caveat(nbg, corpus, models, tmp, failures, figures):
    """Item 4 of the module text."""
    lenet = os.path.join(models, LENET)
    v13 = os.path.join(tmp, "lenet_as_0x10013.nb")
    raw = bytearray(open(lenet, "rb").read())
    struct.pack_into("<I", raw, 4, 0x10013)  # the file carries no checksum (nbg_crc_sum 0)
    open(v13, "wb").write(raw)
    shown = 0
    for model in (lenet, os.path.join(models, LENET_V3), v13, os.path.join(corpus, EE)):
        name = os.path.basename(model)
        r = run([nbg, "inspect", "--json", model])
        notes = {n["id"] for n in json.loads(r.stdout)["notes"]} if r.returncode == 0 else None
        if notes is None:
            failures.append("caveat: nbg inspect fails on %s" % name)
            continue
        version = struct.unpack_from("<I", open(model, "rb").read(), 4)[0]
        clauses = [c for i, c in CAVEAT_CLAUSES.items() if i in notes]
        r = run([nbg, "run", "--backend", "cpu", "--check", model])
        lines = [l[len("caveat: "):] for l in r.stdout.splitlines() if l.startswith("caveat: ")]
        if not clauses:
            if lines:
                failures.append("caveat: %s has none of the notes but --check prints %r" % (name, lines))
            caveat = None
        elif len(lines) != 1 or ("version 0x%05x has no sample" % version) not in lines[0] or \
                any(c not in lines[0] for c in clauses):
            failures.append("caveat: %s (notes %s) --check prints %r" % (name, sorted(notes), lines))
            continue
        else:
            caveat = lines[0]
            shown += 1
        r = run([nbg, "run", "--backend", "cpu", "--check", "--json", model])
        if json.loads(r.stdout).get("caveat", "missing") != caveat:
            failures.append("caveat: %s: --check --json says %r" % (name, r.stdout[:300]))
        out = tempfile.mkdtemp(dir=tmp)
        r = run([nbg, "run", "--backend", "cpu", model, "--input",  # all four: 28x28 uint8
                 os.path.join(models, "lenet-caffe", "lenet.dat"), "--output-dir", out])
        if r.returncode != 0:
            failures.append("caveat: nbg run fails on %s: %s" % (name, r.stderr[-200:]))
            continue
        with open(os.path.join(out, "summary.json")) as f:
            got = json.load(f)["runtime"].get("caveat", "missing")
        printed = [l[len("caveat: "):] for l in r.stdout.splitlines() if l.startswith("caveat: ")]
        if got != caveat or printed != ([caveat] if caveat else []):
            failures.append("caveat: %s: summary.json %r, stdout %r, --check %r"
                            % (name, got, printed, caveat))
    # 0x10016, 0x10020 and 0x10013 have no sample in the parser's layouts
    # (doc/format-v1.md): a parser that stopped noting them would leave
    # every file above in the no-caveat branch
    if shown != 3:
        failures.append("caveat: %d of the 3 files of unsampled versions carry one" % shown)
    figures.append("layout caveat: printed for %d of 4 files, as their inspect notes say" % shown)


def check_cross_target(nbg, dumper, corpus, tmp, failures, figures, tier):
    """The emotion family: one network compiled for 7 targets (3 encodings
    of the requantization scale, 3 kernel stream formats).  On the same
    inputs the first two NN operations (conv 3x3x1 -> 8, conv 3x3x8 -> 8,
    ReLU) must give the same images on every file.  The corpus tier
    compares the files of the newest file-format version, the slow tier
    those of the others."""
    import glob
    import numpy as np
    every = sorted(glob.glob(os.path.join(corpus, "v1", "*emotion*.nb")))
    docs = inspect_many(nbg, every, "--commands")
    newest = max(d["version"] for d in docs.values())
    files = split(every, tier, [f for f in every if docs[f]["version"] == newest])
    rng = np.random.default_rng(2027)
    imgs = [rng.integers(0, 256, (64, 64)).astype(np.uint8),
            np.add.outer(np.arange(64) * 3, np.arange(64) * 1).clip(0, 255).astype(np.uint8),
            np.clip(rng.normal(128, 40, (64, 64)), 0, 255).astype(np.uint8)]
    paths = []
    for i, im in enumerate(imgs):
        paths.append(os.path.join(tmp, "emotion_in_%d.bin" % i))
        im.tofile(paths[-1])
    refs = {}  # per file-format version: the first file's images
    targets, groups = set(), set()
    worst, differing, total, nonzero = 0, 0, 0, 0
    for f in files:
        doc = docs[f]
        nn_ops = [o for o in doc["commands"]["operations"] if o["engine"] == "NN"][:2]
        if len(nn_ops) < 2 or doc["inputs"][0]["byte_size"] != 64 * 64:
            failures.append("%s: not the emotion network's first layers" % os.path.basename(f))
            continue
        targets.add(doc["target"])
        outs = []
        for p in paths:
            prefetch(dumper, f, [op["operation"] + 1 for op in nn_ops], [p], tmp)
            for op in nn_ops:
                outs.append(read_output(op, dump(dumper, f, op["operation"] + 1, [p], tmp)))
        group = doc["version"]
        if group not in refs:
            refs[group] = outs
            groups.add(group)
            nonzero += sum(int((o > 0).sum()) for o in outs)
            continue
        for a, b in zip(outs, refs[group]):
            d = np.abs(a - b)
            worst = max(worst, int(d.max()))
            differing += int((d > 0).sum())
            total += d.size
    figures.append("emotion family, %d of its %d files, %d targets, 3 inputs, compared within each "
                   "of the %d file-format versions (each compiled by its own toolkit version): the "
                   "first two NN operations' images differ from the version's first file's in %d "
                   "of %d values, by at most %d (%d non-zero values in the first files)" %
                   (len(files), len(every), len(targets), len(groups), differing, total, worst, nonzero))
    if len(every) < 30 or len({d["target"] for d in docs.values()}) < 7:
        failures.append("emotion family: %d files, %d targets; expected 30 and 7" %
                        (len(every), len({d["target"] for d in docs.values()})))
    if worst > 1 or differing > total // 200:
        failures.append("emotion family: values differ across targets by up to %d in %d of %d" %
                        (worst, differing, total))
    if nonzero < 1000:
        failures.append("emotion family: only %d non-zero values, too few to compare" % nonzero)
    if not in_tier(tier, "corpus"):
        return
    for name in ("1000e_88_emotion_88_A311D.nb", "1000e_b9_emotion_b9.nb",
                 "1000e_e8_emotion_e8.nb"):
        check_ops(nbg, dumper, os.path.join(corpus, "v1", name), [[paths[0]]], tmp, failures,
                  figures, max_ops=3)


def main():
    argv, tier = tier_of(sys.argv)
    if len(argv) != 7 or argv[3] != "--corpus" or argv[5] != "--models":
        sys.exit("usage: check_cpu.py NBG DUMP --corpus DIR --models DIR [--tier corpus|slow]")
    nbg, dumper, corpus, models = argv[1], argv[2], argv[4], argv[6]
    for need in (os.path.join(corpus, EE), os.path.join(models, LENET), os.path.join(models, LENET_V3)):
        if not os.path.exists(need):
            print("check_cpu: skipped: %s does not exist (meson options corpus_dir and "
                  "models_dir point at the real files)" % need)
            sys.exit(SKIP)
    from check_weights_lenet import imports
    imports()
    failures, figures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        if in_tier(tier, "corpus"):
            check_ee(nbg, dumper, corpus, models, tmp, failures, figures)
        check_lenet(nbg, dumper, models, tmp, failures, figures, tier)
        check_lenet_v3(nbg, dumper, models, tmp, failures, figures, tier)
        if in_tier(tier, "corpus"):
            check_caveat(nbg, corpus, models, tmp, failures, figures)
        check_cross_target(nbg, dumper, corpus, tmp, failures, figures, tier)
    finish(figures, failures)


if __name__ == "__main__":
    main()
