#!/usr/bin/env python3
"""check_network.py - the network view (`nbg inspect --json --only --network`):
layers with their operators and whole tensors, edges with their basis,
against what is known without nbgkit.

Synthesized (--synthesized, tier quick): samples/sample.nb, written by
tests/sample_model.c with a 28x28x1 input, a 3x3 convolution of 8 filters
with ReLU and 2x2 max pooling (26x26 -> 13x13), a fully connected layer of
10 outputs over its 1352 values, and a softmax: the view must have exactly
those three layers with those operators and whole tensors, and edges input
-> convolution -> fully connected (proven: both ends decoded) -> softmax ->
output (inferred: the softmax is an SH program, not decoded).

Real files (--corpus DIR, tier corpus):
- the v2 files are compiled from TensorFlow Lite models (../shared/models/
  mediapipe-a733/NAME.tflite for NAME_nbg_*.nb), read here with a
  flatbuffer reader written from the TFLite schema: every Conv2D and
  DepthwiseConv2D layer the commands name, with a whole input and output
  tensor, is one of the source's CONV_2D / DEPTHWISE_CONV_2D operators with
  the same kernel width and height, input and output H x W x C, and every
  MaxPool layer with whole tensors one of its MAX_POOL_2D operators;
- the NBGs compiled from models_dir/lenet-caffe/lenet.prototxt: their layers
  are the prototxt's (read here): each convolution with its kernel and the
  max pooling after it fused, each inner product as FullyConnected with its
  ReLU, the softmax, with the tensors Caffe's shape rules give (no padding;
  a shape the view leaves unknown is not judged, every other is);
- a lookup-table activation's table (the first v1 file with a 32-bit table
  of an odd function) replaced by tanh(0.37 x), computed here: the view
  names it tanh; by x^2 / 100: no function;
- on every real file: a layer that reads an INPUT record and whose input
  shape is the record's has the record's element count (the record's
  dimensions, read by the parser, not the commands); the same for OUTPUT
  records; the edges that are drawn (every one but the backward ones) make
  no cycle.  The figures (shapes by basis, edges joining equal shapes) are
  printed.

usage: check_network.py NBG_BIN (--synthesized SAMPLE | --corpus DIR MODELS_DIR)
Exit 77 (skip, with the reason) when the corpus is absent.
"""
import collections
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

import tc_corpus
from exe_wrapper import command
from tc_check import check
import tc_check



def network(nbg, path, core=False):
    r = subprocess.run([*nbg, "inspect", "--json", *([] if core else ["--only"]), "--network",
                        *(["--commands"] if core else []), path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("nbg inspect %s: exit %d %s" % (path, r.returncode, r.stderr))
    return json.loads(r.stdout)


# ------------------------------------------------------------ TFLite models

class Table:
    """A FlatBuffers table (the encoding of TFLite's schema.fbs)."""

    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos
        self.vt = pos - struct.unpack_from("<i", buf, pos)[0]
        self.vlen = struct.unpack_from("<H", buf, self.vt)[0]

    def _off(self, field):
        o = 4 + 2 * field
        return struct.unpack_from("<H", self.buf, self.vt + o)[0] if o < self.vlen else 0

    def scalar(self, field, fmt):
        o = self._off(field)
        return struct.unpack_from("<" + fmt, self.buf, self.pos + o)[0] if o else 0

    def _vector(self, field):
        o = self._off(field)
        if not o:
            return 0, 0
        p = self.pos + o + struct.unpack_from("<I", self.buf, self.pos + o)[0]
        return p + 4, struct.unpack_from("<I", self.buf, p)[0]

    def tables(self, field):
        p, n = self._vector(field)
        return [Table(self.buf, p + 4 * i + struct.unpack_from("<I", self.buf, p + 4 * i)[0])
                for i in range(n)]

    def ints(self, field):
        p, n = self._vector(field)
        return list(struct.unpack_from("<%di" % n, self.buf, p)) if n else []


def tflite_model(path):
    """A .tflite file's bytes, its Model table, the builtin code of each
    operator code (OperatorCode: deprecated_builtin_code 0 (int8),
    builtin_code 3), each buffer's bytes (Model.buffers 4, Buffer.data 0) and
    subgraph 0 (Model.subgraphs 2)."""
    buf = open(path, "rb").read()
    model = Table(buf, struct.unpack_from("<I", buf, 0)[0])
    codes = [max(c.scalar(0, "b"), c.scalar(3, "i")) for c in model.tables(1)]
    data = []
    for b in model.tables(4):
        p, n = b._vector(0)
        data.append(buf[p:p + n])
    return buf, model, codes, data, model.tables(2)[0]


# BuiltinOperator values of the schema
CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, MAX_POOL_2D = 3, 4, 9, 17


def tflite_ops(path):
    """(builtin code, input shapes, output shapes) of subgraph 0's operators.
    Model: operator_codes 1, subgraphs 2; OperatorCode: deprecated_builtin_code
    0 (int8), builtin_code 3; SubGraph: tensors 0, operators 3; Tensor: shape
    0; Operator: opcode_index 0, inputs 1, outputs 2."""
    buf = open(path, "rb").read()
    model = Table(buf, struct.unpack_from("<I", buf, 0)[0])
    codes = [max(c.scalar(0, "b"), c.scalar(3, "i")) for c in model.tables(1)]
    graph = model.tables(2)[0]
    shapes = [t.ints(0) for t in graph.tables(0)]
    return [(codes[o.scalar(0, "I")], [shapes[i] for i in o.ints(1) if i >= 0],
             [shapes[i] for i in o.ints(2) if i >= 0]) for o in graph.tables(3)]


def source_ops(path):
    """The source's convolutions and max pools as (operator, kernel x, y,
    input x, y, z, output x, y, z); TFLite shapes are N,H,W,C and kernels
    O,H,W,I (depthwise 1,H,W,C)."""
    want = collections.Counter()
    for code, ins, outs in tflite_ops(path):
        if code == FULLY_CONNECTED and len(ins) > 1 and len(ins[1]) == 2:
            want[("FullyConnected", None, None, 1, 1, ins[1][1], 1, 1, ins[1][0])] += 1
            continue
        if code not in (CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D) or len(ins[0]) != 4:
            continue
        a, b = ins[0], outs[0]
        if code == CONV_2D and ins[1][1:3] == a[1:3] and b[1:3] == [1, 1]:
            # a kernel over the whole image: a fully connected layer
            want[("FullyConnected", None, None, a[2], a[1], a[3], 1, 1, b[3])] += 1
            continue
        if code == MAX_POOL_2D:
            kernel = (None, None)
            name = "MaxPool"
        else:
            kernel = (ins[1][2], ins[1][1])
            name = "Conv2D" if code == CONV_2D else "DepthwiseConv2D"
        want[(name, *kernel, a[2], a[1], a[3], b[2], b[1], b[3])] += 1
    return want


def whole(t):
    return t["basis"] in ("record", "command", "propagated")


def check_source(nbg, path, tflite):
    want = source_ops(tflite)
    got = collections.Counter()
    unknown = 0
    for layer in network(nbg, path)["network"]["layers"]:
        op = layer["operator"]
        if op not in ("Conv2D", "DepthwiseConv2D", "MaxPool", "FullyConnected"):
            continue
        if not (whole(layer["input"]) and whole(layer["output"])):
            unknown += 1
            continue
        kernel = tuple(layer["kernel"]) if op not in ("MaxPool", "FullyConnected") and \
            layer["kernel"] else (None, None)
        got[(op, *kernel, *layer["input"]["shape"], *layer["output"]["shape"])] += 1
    # a layer whose kernel no command states (an SH program named by the
    # vendor) is judged by its operator and shapes
    loose = collections.Counter()
    for k, v in want.items():
        loose[(k[0], None, None) + k[3:]] += v
    extra = collections.Counter({k: v for k, v in got.items() if k[1] is not None}) - want
    extra += collections.Counter({k: v for k, v in got.items()
                                  if k[1] is None and k[0] not in ("MaxPool", "FullyConnected")}) - loose
    extra += collections.Counter({k: v for k, v in got.items() if k[0] == "FullyConnected"}) - want
    check(not extra, "%s: %d convolution, fully connected and max-pool layers with whole tensors, each one of "
          "the %d of %s (kernel, input and output H x W x C); %d without whole tensors%s" %
          (os.path.basename(path), sum(got.values()), sum(want.values()),
           os.path.basename(tflite), unknown,
           "; not in the source: %s" % list(extra)[:3] if extra else ""))


# ------------------------------------------------------------ Caffe LeNet

def caffe_layers(prototxt):
    """(type, {param: value}) of each layer of a Caffe prototxt, in order."""
    text = open(prototxt, encoding="utf-8").read()
    out = []
    for block in re.split(r"\nlayer\s*{", text)[1:]:
        kind = re.search(r'type:\s*"(\w+)"', block).group(1)
        params = dict(re.findall(r"(num_output|kernel_size|stride|pool):\s*(\w+)", block))
        out.append((kind, params))
    return out


def caffe_network(prototxt, x, y, z):
    """The layers the NPU runs for the prototxt's network on an x*y*z input,
    as (operator, kernel, activation, fused pool, input shape, output shape):
    a convolution with the max pooling after it fused, an inner product with
    its ReLU fused, the softmax; shapes by Caffe's rules (no padding)."""
    want = []
    for kind, p in caffe_layers(prototxt):
        if kind == "Convolution":
            k, n = int(p["kernel_size"]), int(p["num_output"])
            want.append(["Conv2D", [k, k], None, None, [x, y, z], [x - k + 1, y - k + 1, n]])
            x, y, z = x - k + 1, y - k + 1, n
        elif kind == "Pooling" and p.get("pool") == "MAX" and want and want[-1][0] == "Conv2D":
            k, st = int(p["kernel_size"]), int(p["stride"])
            x, y = -(-(x - k) // st) + 1, -(-(y - k) // st) + 1
            want[-1][3], want[-1][5] = "max-pool", [x, y, z]
        elif kind == "InnerProduct":
            n = int(p["num_output"])
            want.append(["FullyConnected", None, None, None, [x, y, z], [1, 1, n]])
            x, y, z = 1, 1, n
        elif kind == "ReLU" and want:
            want[-1][2] = "relu"
        elif kind == "Softmax":
            want.append(["Softmax", None, None, None, [x, y, z], [x, y, z]])
    return [tuple(map(lambda v: tuple(v) if isinstance(v, list) else v, w)) for w in want]


def check_caffe(nbg, models):
    """The NBGs compiled from models_dir/lenet-caffe/lenet.prototxt: their
    layers are the prototxt's network, operators, kernels, fused ReLU and
    pooling and whole tensors as Caffe's rules give them."""
    d = os.path.join(models, "lenet-caffe")
    prototxt = os.path.join(d, "lenet.prototxt")
    if not os.path.exists(prototxt):
        print("note %s: absent, the Caffe LeNet not judged" % prototxt)
        return
    want = caffe_network(prototxt, 28, 28, 1)
    for name in sorted(os.listdir(d)):
        if not name.endswith(".nb"):
            continue
        got = [(l["operator"], tuple(l["kernel"]) if l["kernel"] else None, l["activation"],
                l["fused"], tuple(l["input"]["shape"] or ()) or None,
                tuple(l["output"]["shape"] or ()) or None)
               for l in network(nbg, os.path.join(d, name))["network"]["layers"]]
        # a shape the view leaves unknown is not judged, every other is
        same = len(got) == len(want) and all(
            g[:4] == w[:4] and (g[4] is None or g[4] == w[4]) and (g[5] is None or g[5] == w[5])
            for g, w in zip(got, want))
        check(same, "%s: the layers of lenet.prototxt (%d), operators, kernels, fused ReLU and "
              "pooling, whole tensors by Caffe's rules%s" %
              (name, len(want), "" if same else ": got %s, want %s" % (got, want)))


# ------------------------------------------------------------ LUT functions

def encode32(v):
    """v in the 32-bit table layout: sign bit 20, 5 exponent bits (bias 15),
    15 mantissa bits; 0 below 2^-14 (doc/cpu-backend.md)."""
    a = abs(v)
    if a < 2.0 ** -14:
        return 0
    m, e = math.frexp(a)          # a = m * 2^e, m in [0.5, 1)
    mant = round((m * 2 - 1) * 32768)
    if mant == 32768:
        mant, e = 0, e + 1
    return (1 << 20 if v < 0 else 0) | (e - 1 + 15) << 15 | mant


def check_lut_functions(nbg, corpus, tmp):
    """A TP lookup table of an odd function (alu_pwl_sign_support 0, 32-bit
    entries) in the first v1 file that has one, replaced by tanh(0.37 x)
    written here: the network view names the layer's activation tanh; by
    x^2 / 100 (no candidate): it stays "lut"."""
    for name in sorted(os.listdir(os.path.join(corpus, "v1"))):
        path = os.path.join(corpus, "v1", name)
        doc = json.loads(subprocess.run([*nbg, "inspect", "--json", "--commands", "--network",
                                         path], capture_output=True, text=True).stdout or "{}")
        secs = {x["type"]: x for x in doc.get("sections", [])}
        for cmd in doc.get("commands", {}).get("tp", {}).get("commands", []):
            f = cmd["fields"]
            r = cmd.get("patched_fields", {}).get("alu_load_pwl_lut_address")
            if not f["alu_pwl_enable"] or f["alu_pwl_sign_support"] or not r or 5 not in secs:
                continue
            data = bytearray(open(path, "rb").read())
            off, size = struct.unpack_from("<II", data, secs[5]["offset"] + 8 * r["index"])
            start = secs[6]["offset"] + off + r["src_offset"]
            if size - r["src_offset"] != 4104:
                continue
            node = [l for l in doc["network"]["layers"]
                    if l["first_operation"] <= cmd["operation"] and l["operator"] == "Activation"]
            for func, fn, want in (("tanh(0.37 x)", lambda x: math.tanh(0.37 * x), "tanh"),
                                   ("x^2 / 100", lambda x: x * x / 100, "lut")):
                words = []
                for i in range(1024):
                    x = struct.unpack("<e", struct.pack("<H", i << 5))[0]
                    words.append(encode32(fn(x)) if math.isfinite(x) and x < 60000 else 0)
                # the layout's 8 zero bytes after the entries
                data[start:start + 4104] = struct.pack("<1024I", *words) + bytes(8)
                synth = os.path.join(tmp, "lut.nb")
                open(synth, "wb").write(data)
                net = network(nbg, synth)["network"]["layers"]
                got = [l["activation"] for l in net if l["operator"] == "Activation" and
                       l["first_operation"] == node[-1]["first_operation"]] if node else []
                check(got == [want], "%s op %d: its table replaced by %s: activation %s" %
                      (name, cmd["operation"], func, got))
            return
    print("note: no v1 file has a 32-bit table of an odd function: not judged")


# ------------------------------------------------------------ every file

def cyclic(edges):
    nxt = collections.defaultdict(list)
    for a, b in edges:
        nxt[a].append(b)
    state = {}
    for start in list(nxt):
        if start in state:
            continue
        stack = [(start, iter(nxt[start]))]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            b = next(it, None)
            if b is None:
                state[node] = 2
                stack.pop()
            elif state.get(b) == 1:
                return True
            elif b not in state:
                state[b] = 1
                stack.append((b, iter(nxt[b])))
    return False


def kernel_depths(doc, layers):
    """Per layer, a Conv2D whose input is shown with basis "command": the
    input depth shown and the depths its convolution commands' kernels read
    (the commands' kernel_z fields, not the addresses the extent comes from)."""
    ops = collections.defaultdict(set)
    for op in doc["commands"]["operations"]:
        if op.get("engine") == "NN" and op.get("kind") == "conv" and op.get("kernel"):
            ops[op["layer_id"]].add(op["kernel"][2])
    for layer in layers:
        t = layer["input"]
        if layer["operator"] == "Conv2D" and t["basis"] == "command" and ops.get(layer["layer"]):
            yield layer["node"], t["shape"][2], ops[layer["layer"]]


def check_adds(nbg, path, doc, layers, edges):
    """Layers the network view names Add from a 1x1 convolution reading N
    operands: their kernels as the weights decoder reads them from the
    coefficient stream (`nbg weights`: the values the stream holds, not
    the command's kernel fields) are N values to one output channel, and
    the N producers' tensors have one shape."""
    ids = {layer["layer"]: layer for layer in layers
           if layer["operator"] == "Add" and layer["operator_basis"] == "commands"}
    if not ids:
        return 0
    r = subprocess.run([*nbg, "weights", "--json", path], capture_output=True, text=True)
    check(r.returncode == 0, "%s: nbg weights exits 0 (%s)" % (os.path.basename(path), r.stderr.strip()))
    if r.returncode != 0:
        return 0
    shapes = collections.defaultdict(set)
    for op in json.loads(r.stdout)["weights"]["operations"]:
        if op["layer_id"] in ids and op["status"] == "decoded":
            shapes[op["layer_id"]].add(tuple(op["shape"]))
    bad = []
    for lid, layer in ids.items():
        into = [e for e in edges if e["to"].get("node") == layer["node"] and not e["backward"]]
        got = {tuple(layers[e["from"]["node"]]["output"]["shape"] or []) for e in into if "node" in e["from"]}
        if shapes[lid] != {(1, len(into), 1, 1)} or len(got) != 1:
            bad.append("layer %d: kernels %s, %d producers of shapes %s" % (
                layer["node"], sorted(shapes[lid]), len(into), sorted(got)))
    check(not bad, "%s: %d layers named Add from a 1x1 convolution of their operands: each decoded "
          "kernel is [1, producers, 1, 1] and the operands have one shape%s" %
          (os.path.basename(path), len(ids), ": " + "; ".join(bad[:3]) if bad else ""))
    return len(ids)


def multi_producer(layers, edges, totals):
    """Figures of the layers several producers feed: operands of one shape,
    a channel concatenation (equal x and y, the channels add up), an operand
    of a fused addition (one producer the layer's input, the other its
    output's shape), or other."""
    into = collections.defaultdict(list)
    for e in edges:
        if not e["backward"] and "node" in e["to"]:
            into[e["to"]["node"]].append(e["from"])
    for k, ends in into.items():
        if len({json.dumps(x) for x in ends}) < 2:
            continue
        layer = layers[k]
        got = [layers[x["node"]]["output"]["shape"] if "node" in x else None for x in ends]
        shape = layer["input"]["shape"]
        if shape is None or None in got:
            kind = "a shape unknown"
        elif all(g == shape for g in got):
            kind = "operands of one shape"
        elif all(g[:2] == shape[:2] for g in got) and sum(g[2] for g in got) == shape[2]:
            kind = "a channel concatenation"
        elif layer["fused"] == "add" and len(got) == 2 and shape in got and layer["output"]["shape"] in got:
            kind = "a fused addition's operand"
        else:
            kind = "other"
        totals["layers of several producers, " + kind] += 1


def check_views(doc, name, layers):
    """An engine view is something the engine addresses: on a layer whose
    operations are all NN / TP commands, it holds no more elements than the
    layer's operations address on that side together (the commands section's
    own dimensions, per operation).  An extent over tiles that make no image
    (a mean beside the tensor it is subtracted from) would hold far more."""
    ops = collections.defaultdict(list)
    for o in doc["commands"]["operations"]:
        ops[o["layer_id"]].append(o)
    bad, judged = [], 0
    for layer in layers:
        if layer["other_operations"] or layer["layer"] is None:
            continue
        for side in ("input", "output"):
            t = layer[side]
            dims = [o.get(side) for o in ops.get(layer["layer"], [])]
            if t["basis"] != "engine view" or not dims or None in dims:
                continue
            judged += 1
            most = sum(d[0] * d[1] * d[2] for d in dims)
            if math.prod(t["shape"]) > most:
                bad.append("layer %d %s %s, its %d operations address %d elements" %
                           (layer["layer"], side, t["shape"], len(dims), most))
    check(not bad, "%s: %d engine views of NN / TP layers within what their operations address%s" %
          (name, judged, ": " + "; ".join(bad[:3]) if bad else ""))


def check_file(nbg, path, totals):
    doc = network(nbg, path, core=True)
    net, name = doc["network"], os.path.basename(path)
    layers, edges = net["layers"], net["edges"]
    records = {"input": doc["inputs"], "output": doc["outputs"]}
    totals["layers named Add from a convolution of their operands"] += check_adds(nbg, path, doc, layers, edges)
    multi_producer(layers, edges, totals)
    bad = ["layer %d: input depth %d, its kernels read %s" % (k, z, sorted(kz))
           for k, z, kz in kernel_depths(doc, layers) if len(kz) == 1 and z not in kz]
    check(not bad, "%s: every Conv2D input shown from its commands has the depth its kernels read%s" %
          (name, ": " + "; ".join(bad[:3]) if bad else ""))
    bad = []
    for e in edges:
        for side, end, node_end in (("input", e["from"], e["to"]), ("output", e["to"], e["from"])):
            if side not in end or "node" not in node_end:
                continue
            t = layers[node_end["node"]][side]
            if t["basis"] != "record" or t["record"] != end[side]:
                continue
            count = records[side][end[side]]["element_count"]
            shape = t["shape"]
            if shape[0] * shape[1] * shape[2] != count:
                bad.append("%s %d: shape %s, the record has %s elements" % (side, end[side],
                                                                            shape, count))
    check(not bad, "%s: %d layers; record shapes hold the records' element counts%s" %
          (name, len(layers), ": " + "; ".join(bad[:3]) if bad else ""))
    check_views(doc, name, layers)
    drawn = [(json.dumps(e["from"]), json.dumps(e["to"])) for e in edges if not e["backward"]]
    check(not cyclic(drawn), "%s: the drawn edges make no cycle (%d drawn, %d backward)" %
          (name, len(drawn), len(edges) - len(drawn)))
    for layer in layers:
        for side in ("input", "output"):
            totals["shape " + layer[side]["basis"]] += 1
    producers = collections.defaultdict(set)
    for e in edges:
        if not e["backward"] and "node" in e["to"]:
            producers[e["to"]["node"]].add(json.dumps(e["from"]))
    for e in edges:
        if e["backward"] or "node" not in e["from"] or "node" not in e["to"]:
            continue
        a, b = layers[e["from"]["node"]]["output"], layers[e["to"]["node"]]["input"]
        if len(producers[e["to"]["node"]]) != 1:
            totals["edges into a layer of several producers"] += 1
        elif a["shape"] is None or b["shape"] is None:
            totals["single-producer edges, a shape unknown"] += 1
        elif a["shape"] == b["shape"]:
            totals["single-producer edges, equal shapes"] += 1
        elif "slice_of_channels" in e:
            # a split: the reader's x and y are the producer's, fewer channels,
            # and the edge's bytes exactly the reader's tensor
            size = {"uint8": 1, "int8": 1, "fp16": 2, "int16": 2, "bf16": 2}.get(b["data_type"])
            ok = (a["shape"][:2] == b["shape"][:2] and b["shape"][2] < a["shape"][2] and
                  e["slice_of_channels"] == a["shape"][2] and size and
                  e["bytes"] == b["shape"][0] * b["shape"][1] * b["shape"][2] * size)
            check(ok, "%s: edge %s -> %s, a slice of %s channels: %s -> %s, %d bytes" %
                  (name, e["from"]["node"], e["to"]["node"], e["slice_of_channels"], a["shape"],
                   b["shape"], e["bytes"]))
            totals["single-producer edges, a channel slice of the producer's tensor"] += 1
        else:
            totals["single-producer edges, shapes differ"] += 1


# ------------------------------------------------------------ the sample

def check_sample(nbg, sample):
    net = network(nbg, sample)["network"]
    got = [(l["operator"], l["operator_basis"], l["input"]["shape"], l["output"]["shape"])
           for l in net["layers"]]
    want = [("Conv2D", "commands", [28, 28, 1], [13, 13, 8]),
            ("FullyConnected", "commands", [13, 13, 8], [1, 1, 10]),
            ("Softmax", "vendor name", [1, 1, 10], [1, 1, 10])]
    check(got == want, "sample: layers %s" % got)
    conv = net["layers"][0]
    check((conv["kernel"], conv["activation"], conv["fused"], conv["pool"]) ==
          ([3, 3], "relu", "max-pool", [2, 2]),
          "sample: the convolution is 3x3 with ReLU and 2x2 max pooling")
    edges = [(e["from"], e["to"], e["basis"], e["backward"]) for e in net["edges"]]
    want_edges = [({"input": 0}, {"node": 0}, "proven", False),
                  ({"node": 0}, {"node": 1}, "proven", False),
                  ({"node": 1}, {"node": 2}, "inferred", False),
                  ({"node": 2}, {"output": 0}, "inferred", False)]
    check(sorted(map(json.dumps, edges)) == sorted(map(json.dumps, want_edges)),
          "sample: edges %s" % edges)
    check(net["data_flow_warnings"] == [], "sample: no data-flow warning")
    # tests/sample_model.c writes out_zero_point 0 (the convolution) and 140
    # (the fully connected layer) into word 22 of their NN commands
    zps = [l["output"]["zero_point"] for l in net["layers"][:2]]
    check(zps == [0, 140], "sample: the commands' output zero points %s" % zps)
    # the text report: the Network table and the edge list once each, with
    # the default report (which holds the table) and with --only
    for extra in ([], ["--only"]):
        text = subprocess.run([*nbg, "inspect", *extra, "--network", sample],
                              capture_output=True, text=True).stdout
        counts = (text.count("\nNetwork (layers"), text.count("\nNetwork edges (4;"))
        check(counts == (1, 1), "sample: inspect %s--network prints the Network table and "
              "its 4 edges once each (%d, %d times)" % ("".join(e + " " for e in extra), *counts))


def main():
    args = sys.argv[1:]
    nbg = command(args[0])
    if args[1] == "--synthesized":
        check_sample(nbg, args[2])
    else:
        tc_corpus.need("check_network.py", "real-file checks", args[2])
        corpus, models = args[2], args[3]
        totals = collections.Counter()
        for sub in ("v2", "v1"):
            d = os.path.join(corpus, sub)
            for name in sorted(os.listdir(d)):
                if name.endswith(".nb"):
                    check_file(nbg, os.path.join(d, name), totals)
        v2 = os.path.join(corpus, "v2")
        judged = 0
        for name in sorted(os.listdir(v2)):
            if not name.endswith(".nb"):
                continue
            src = os.path.join(models, "mediapipe-a733", name.split("_nbg")[0] + ".tflite")
            if os.path.exists(src):
                check_source(nbg, os.path.join(v2, name), src)
                judged += 1
            else:
                print("note %s: no TFLite source beside the models (%s): not judged" %
                      (name, src))
        check(judged > 0, "%d v2 files judged against their TFLite sources" % judged)
        check_caffe(nbg, models)
        with tempfile.TemporaryDirectory() as tmp:
            check_lut_functions(nbg, corpus, tmp)
        for k in sorted(totals):
            print("figure %s: %d" % (k, totals[k]))
    sys.exit(tc_check.finish())


if __name__ == "__main__":
    main()
