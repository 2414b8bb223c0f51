#!/usr/bin/env python3
"""The decoded weights against the float model they were compiled from.

models/lenet-caffe holds BVLC's LeNet as Caffe trained it (lenet.caffemodel,
float32) and an NBG file the vendor's compiler made from it for target
0x10000016 (lenet_v2_0x10016.nb).  `nbg weights --out` decodes the file's
kernel streams; the .caffemodel is read with Debian's protobuf library
(python3-protobuf) and the message layout of Caffe's public caffe.proto
(NetParameter, LayerParameter, V1LayerParameter, BlobProto, BlobShape; only
the fields read here).  Per layer the decoded codes q are fitted to the
float weights w as w = s * (q - zp), s by least squares, and must hold:

  - correlation of w and q - zp at least 0.9999;
  - at least 99 % of the weights within half a quantization step (s / 2)
    of s * (q - zp);
  - the axis order [out][z][ky][kx]: the same fit with ky and kx swapped
    correlates below 0.5.

Usage: check_weights_lenet.py NBG --models DIR   (DIR: the meson option
models_dir; exit 77, SKIP, when DIR is absent or when Debian's
python3-numpy / python3-protobuf cannot be imported).
"""
import json
import os
import subprocess
import sys
import tempfile

from exe_wrapper import command

SKIP = 77
DEBIAN_PYTHON = "/usr/bin/python3"


def debian_imports(modules, flag, what):
    """Imports modules, from this interpreter or else Debian's (re-executing
    the script under it once, marked by the environment variable flag); exit
    77 (SKIP) saying `what` needs them when neither has them."""
    import importlib
    try:
        for name in modules:
            importlib.import_module(name)
        return
    except ImportError as e:
        why = str(e)
    if os.path.exists(DEBIAN_PYTHON) and os.path.realpath(sys.executable) != os.path.realpath(
            DEBIAN_PYTHON) and not os.environ.get(flag):
        os.environ[flag] = "1"
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
    print("SKIP: %s (scripts/setup.sh installs them): %s" % (what, why))
    sys.exit(SKIP)


def imports():
    """numpy and google.protobuf, from this interpreter or Debian's (the one
    scripts/setup.sh installs python3-numpy and python3-protobuf for)."""
    debian_imports(("numpy", "google.protobuf.descriptor_pb2"), "NBG_LENET_REEXEC",
                   "the LeNet check needs Debian's python3-numpy and python3-protobuf")


def caffe_net_class():
    """NetParameter with the fields of caffe.proto this check reads."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(name="caffe_subset.proto", package="caffe",
                                            syntax="proto2")

    def message(name, fields):
        m = fd.message_type.add(name=name)
        for fname, number, ftype, label, tname, packed in fields:
            f = m.field.add(name=fname, number=number, type=ftype, label=label)
            if tname:
                f.type_name = ".caffe." + tname
            if packed:
                f.options.packed = True

    opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    message("BlobShape", [("dim", 1, F.TYPE_INT64, rep, None, True)])
    message("BlobProto", [("shape", 7, F.TYPE_MESSAGE, opt, "BlobShape", False),
                          ("data", 5, F.TYPE_FLOAT, rep, None, True),
                          ("num", 1, F.TYPE_INT32, opt, None, False),
                          ("channels", 2, F.TYPE_INT32, opt, None, False),
                          ("height", 3, F.TYPE_INT32, opt, None, False),
                          ("width", 4, F.TYPE_INT32, opt, None, False)])
    message("LayerParameter", [("name", 1, F.TYPE_STRING, opt, None, False),
                               ("type", 2, F.TYPE_STRING, opt, None, False),
                               ("blobs", 7, F.TYPE_MESSAGE, rep, "BlobProto", False)])
    message("V1LayerParameter", [("name", 4, F.TYPE_STRING, opt, None, False),
                                 ("blobs", 6, F.TYPE_MESSAGE, rep, "BlobProto", False)])
    message("NetParameter", [("name", 1, F.TYPE_STRING, opt, None, False),
                             ("layers", 2, F.TYPE_MESSAGE, rep, "V1LayerParameter", False),
                             ("layer", 100, F.TYPE_MESSAGE, rep, "LayerParameter", False)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    desc = pool.FindMessageTypeByName("caffe.NetParameter")
    get = getattr(message_factory, "GetMessageClass", None)
    return get(desc) if get else message_factory.MessageFactory(pool).GetPrototype(desc)


def caffe_layers(path):
    """{name: (weights, bias)} of the layers with blobs."""
    import numpy as np
    net = caffe_net_class()()
    with open(path, "rb") as f:
        net.ParseFromString(f.read())
    out = {}
    for layer in list(net.layer) + list(net.layers):
        if not layer.blobs:
            continue
        b = layer.blobs[0]
        shape = list(b.shape.dim) if b.HasField("shape") else [b.num, b.channels, b.height,
                                                                b.width]
        w = np.array(b.data, dtype=np.float64).reshape(shape)
        bias = np.array(layer.blobs[1].data, dtype=np.float64) if len(layer.blobs) > 1 else None
        out[layer.name] = (w, bias)
    return out


def main():
    if len(sys.argv) != 4 or sys.argv[2] != "--models":
        sys.exit("usage: check_weights_lenet.py NBG --models DIR")
    nbg, models = sys.argv[1], sys.argv[3]
    lenet = os.path.join(models, "lenet-caffe")
    if not os.path.isdir(lenet):
        print("check_weights_lenet: the source-model check skipped: %s does not exist. Point "
              "the build at a copy of the models: `meson configure BUILD -Dmodels_dir=DIR`."
              % lenet)
        sys.exit(SKIP)
    imports()
    import numpy as np

    layers = caffe_layers(os.path.join(lenet, "lenet.caffemodel"))
    failures = []
    fitted = set()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "w")
        r = subprocess.run([*command(nbg), "weights", os.path.join(lenet, "lenet_v2_0x10016.nb"),
                            "--out", out], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("nbg weights failed (%d): %s" % (r.returncode, r.stderr))
        with open(os.path.join(out, "weights.json")) as f:
            doc = json.load(f)
        for op in doc["weights"]["operations"]:
            if op["status"] != "decoded":
                continue
            q = np.load(os.path.join(out, op["files"]["weights"])).astype(np.float64)
            d = q - op["zero_point"]
            n = q.shape[0]
            for name, (w, bias) in layers.items():
                if w.shape[0] != n or w[0].size != d[0].size:
                    continue
                wf, df = w.reshape(-1), d.reshape(-1)
                s = float((wf * df).sum() / (df * df).sum())
                corr = float(np.corrcoef(wf, df)[0, 1])
                within = float(np.mean(np.abs(wf - s * df) <= s / 2))
                swapped = d.transpose(0, 1, 3, 2).reshape(-1)
                corr_swapped = float(np.corrcoef(wf, swapped)[0, 1])
                line = ("op %d %s shape %s: scale %.6g, correlation %.6f, %.2f%% within half a "
                        "step, ky/kx swapped %.3f" % (op["operation"], name, op["shape"], s, corr,
                                                      100 * within, corr_swapped))
                if bias is not None:
                    b = np.load(os.path.join(out, op["files"]["bias"])).astype(np.float64)
                    line += ", bias correlation %.4f" % float(np.corrcoef(bias, b)[0, 1])
                print(line)
                fitted.add(name)
                if corr < 0.9999:
                    failures.append("%s: correlation %.6f < 0.9999" % (name, corr))
                if within < 0.99:
                    failures.append("%s: %.4f within half a step < 0.99" % (name, within))
                if not corr_swapped < 0.5:
                    failures.append("%s: the swapped axis order correlates %.3f" %
                                    (name, corr_swapped))
    # conv1, conv2 and ip1 run on the NN cores; ip2 does not (no NN operation
    # of its shape)
    for name in ("conv1", "conv2", "ip1"):
        if name not in fitted:
            failures.append("%s: no decoded operation of its shape" % name)
    for f in failures:
        print("FAIL: " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
