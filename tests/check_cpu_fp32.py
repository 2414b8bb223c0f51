#!/usr/bin/env python3
"""The fp32 shaders (lib/cpu/ops/shconv.c's fp32 im2col and matrix product,
lib/cpu/ops/shf32.c's ReLU and 2x2 max pooling) on every corpus file whose
CPU plan (`nbg run --backend cpu --check --json`) holds one of them.

The independent derivation is numpy: for a file whose SH operations are a
ConvolutionLayer pair, an ActivationLayer and a Max Pooling layer, this
script reads the shaders' uniforms from the raw state buffers itself
(check_cpu_ref.uniforms), checks them against the file's I/O records (the
input's W x H x C, the output's) and against the coefficient table (the
kernel entry, found through the MISC_DYNA_GENERIC patch of uniform
0x36020, holds n rows of k float32 values; the bias entry n float32), reads
the raw float32 kernels and biases at those offsets, and computes the
network in numpy (float64): a 3x3 convolution with stride 1 and padding 1,
kernels in (channel, ky, kx) order, the bias, ReLU, 2x2 max pooling with
stride 2.  `nbg run --backend cpu` on a fixed random input must agree
within 1e-5 of each value's magnitude (at least 1): float32 sums of 28
products.

numpy shares the rule's inferences (doc/cpu-backend.md, "The fp32
shaders": the kernel order, padding 1, the pixel order, ReLU, the 2x2
window), not the backend's code; to show the comparison can fail, each
alternative reading (no ReLU, average pooling, kernels in (ky, kx,
channel) order, padding 0 before and 2 after) must miss by more than 1e-3;
whether the image transposed would, is printed.

A file with these shaders that is not that network, or does not run whole,
is printed (not judged).  At least one file must be judged.

Usage: check_cpu_fp32.py NBG CORPUS_DIR (exit 77, SKIP, when the corpus is
absent or Debian's python3-numpy cannot be imported).
"""
import json
import os
import struct
import sys
import tempfile

from check_cpu import run
from check_cpu_ref import uniforms
from check_weights_lenet import debian_imports
import tc_corpus
from tc_check import check
import tc_check

LAYERS = ["ConvolutionLayer", "ConvolutionLayer", "ActivationLayer", "Max Pooling"]


class Unjudged(Exception):
    pass


def entry_bytes(data, doc, o, u, reg):
    """The COEF_DATA_TABLE entry the MISC_DYNA_GENERIC patch of uniform reg
    names: (file offset, size)."""
    pat = [p for p in doc["patches"] if p["operation"] == o["record_index"] and p["type"] == 0 and
           p["dest_offset"] == u[reg][1]]
    if len(pat) != 1 or pat[0]["source_type_name"] != "MISC_DYNA_GENERIC":
        raise Unjudged("uniform 0x%05x is not relocated by one MISC_DYNA_GENERIC patch" % reg)
    t = [t for t in doc["tables"] if t["name"] == "COEF_DATA_TABLE"][0]
    e = t["entries"][pat[0]["index"]]
    return t["data_offset"] + e["offset"] + u[reg][0], e["size"] - u[reg][0]


def network(data, doc):
    """The convolution's float32 kernels (n, c, 3, 3) and biases (n,),
    read from the raw bytes, after checking the uniforms against the I/O
    records and the coefficient table."""
    import numpy as np
    sh = [o for o in doc["operations"] if o["type_name"] == "SH"]
    if [o["layer_name"] for o in sh] != LAYERS:
        raise Unjudged("SH layers %s, not %s" % ([o["layer_name"] for o in sh], LAYERS))
    u = [uniforms(data, doc, o) for o in sh]
    v = [{a: x[a][0] for a in x} for x in u]
    iw, ih, c = v[0][0x36008] & 0xffff, v[0][0x36008] >> 16, v[0][0x36014]
    kx, ky = v[0][0x36030], v[0][0x36034]
    k = v[0][0x36048] & 0xffff
    n, kw, wrow = v[1][0x36028] >> 16, v[1][0x36028] & 0xffff, v[1][0x36024]
    src, dst = doc["inputs"][0]["dimensions"], doc["outputs"][0]["dimensions"]
    pw, ph = 4 * (v[3][0x36028] & 0xffff), v[3][0x36044]
    check([iw, ih, c, 1] == src, "%s: the im2col reads the input record's %s (%dx%dx%d)" %
          (doc["path"], src, iw, ih, c))
    check((kx, ky) == (3, 3) and k == 4 * kw == (c * kx * ky + 3) // 4 * 4,
          "%s: kernel 3x3, im2col rows and product kernels %d values (c kx ky = %d rounded up to 4)" %
          (doc["path"], k, c * kx * ky))
    check([pw, ph, (v[3][0x36028] >> 16) // ph, 1] == dst and n == dst[2],
          "%s: the pooling writes the output record's %s; the product %d kernels" % (doc["path"], dst, n))
    wat, wsize = entry_bytes(data, doc, sh[1], u[1], 0x36020)
    bat, bsize = entry_bytes(data, doc, sh[1], u[1], 0x36040)
    check(wsize == n * wrow and wrow == 4 * k and bsize >= 4 * n,
          "%s: kernel entry %d bytes = %d rows of %d float32, bias entry %d bytes >= %d float32" %
          (doc["path"], wsize, n, k, bsize, n))
    w = np.frombuffer(data, "<f4", n * k, wat).reshape(n, k)
    check(not w[:, c * kx * ky:].any(), "%s: the kernels' values past c kx ky are 0" % doc["path"])
    bias = np.frombuffer(data, "<f4", n, bat).astype(np.float64)
    return w[:, :c * kx * ky].astype(np.float64).reshape(n, c, ky, kx), bias


def numpy_net(x, w, bias, relu=True, pool="max", before=1):
    """conv 3x3 stride 1 with `before` pixels of zeros before (2 - before
    after) + bias, ReLU, 2x2 pooling stride 2; x (c, h, w)."""
    import numpy as np
    c, h, wd = x.shape
    xp = np.zeros((c, h + 2, wd + 2))
    xp[:, before:h + before, before:wd + before] = x
    y = np.zeros((w.shape[0], h, wd))
    for j in range(3):
        for i in range(3):
            y += np.einsum("oc,chw->ohw", w[:, :, j, i], xp[:, j:j + h, i:i + wd])
    y += bias[:, None, None]
    if relu:
        y = np.maximum(y, 0)
    y = y.reshape(y.shape[0], h // 2, 2, wd // 2, 2)
    return y.max(axis=(2, 4)) if pool == "max" else y.mean(axis=(2, 4))


def judge(nbg, path, name, rng, tmp):
    import numpy as np
    data = open(path, "rb").read()
    doc = json.loads(run([nbg, "inspect", "--json", "--operations", "--patches", path]).stdout)
    doc["path"] = name
    w, bias = network(data, doc)
    c, ih, iw = doc["inputs"][0]["dimensions_outermost_first"][1:]
    x = rng.uniform(-2, 2, (c, ih, iw)).astype(np.float32)
    inp = os.path.join(tmp, name + ".in.bin")
    x.tofile(inp)
    out = os.path.join(tmp, name + ".out")
    r = run([nbg, "run", "--backend", "cpu", "--input", inp, "--output-dir", out, path])
    if not check(r.returncode == 0, "%s: nbg run --backend cpu exits 0 (%s)" % (name, r.stderr.strip()[-200:])):
        return 0
    got = np.fromfile(os.path.join(out, "output_0.bin"), "<f4").astype(np.float64)
    xs = x.astype(np.float64)
    ref = numpy_net(xs, w, bias).ravel()
    err = np.abs(got - ref) / np.maximum(1, np.abs(ref))
    check(got.size == ref.size and err.max() <= 1e-5,
          "%s: %d values equal numpy's conv + ReLU + 2x2 max pooling within 1e-5 relative (largest %.2g, "
          "values up to %.3g)" % (name, ref.size, err.max(), np.abs(ref).max()))
    alternatives = {
        "no ReLU": numpy_net(xs, w, bias, relu=False),
        "average pooling": numpy_net(xs, w, bias, pool="mean"),
        "kernels in (ky, kx, channel) order": numpy_net(
            xs, w.reshape(w.shape[0], -1).reshape(w.shape[0], 3, 3, c).transpose(0, 3, 1, 2), bias),
        "padding 0 before and 2 after": numpy_net(xs, w, bias, before=0),
    }
    transposed = numpy_net(xs.transpose(0, 2, 1), w, bias).transpose(0, 2, 1).ravel()
    if np.abs(transposed - ref).max() <= 1e-5 * max(1, np.abs(ref).max()):
        print("note %s: the pixel order (which output axis is x) is not told apart by this file: "
              "with the image transposed numpy gives the same output" % name)
    for what, alt in alternatives.items():
        miss = np.abs(got - alt.ravel()).max()
        check(miss > 1e-3, "%s: reading it with %s misses by %.3g" % (name, what, miss))
    return 1


def main():
    nbg, corpus = sys.argv[1], sys.argv[2]
    tc_corpus.need("check_cpu_fp32.py", "the fp32 shaders", corpus)
    debian_imports(("numpy",), "NBG_FP32_REEXEC", "the fp32 shader check needs Debian's python3-numpy")
    import numpy as np
    rng = np.random.default_rng(32)
    judged = 0
    with tempfile.TemporaryDirectory() as tmp:
        for sub in ("v1", "v2"):
            d = os.path.join(corpus, sub)
            for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                if not name.endswith(".nb"):
                    continue
                path = os.path.join(d, name)
                plan = json.loads(run([nbg, "run", "--backend", "cpu", "--check", "--json", path]).stdout)
                if not any((s["what"] or "").endswith("fp32") or (s["reason_id"] or "").startswith("shf32")
                           for s in plan["steps"]):
                    continue
                if not plan["runs_whole"]:
                    print("note %s: holds fp32 shaders but does not run whole (%s): not judged" %
                          (name, plan["first_refused"]))
                    continue
                try:
                    judged += judge(nbg, path, name, rng, tmp)
                except Unjudged as e:
                    print("note %s: holds fp32 shaders but is not the network this test computes (%s): "
                          "not judged" % (name, e))
    check(judged > 0, "%d file(s) with fp32 shaders judged against numpy" % judged)
    sys.exit(tc_check.finish())


if __name__ == "__main__":
    main()
