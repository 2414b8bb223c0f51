#!/usr/bin/env python3
"""check_dataflow.py - the network nbgkit recovers from a file's operations
and the bytes they read and write (`nbg inspect --commands --json`) against
networks known without nbgkit.

- corpus/v1/1000f_ee_lenet_model.nb is LeNet-5 (LeCun et al. 1998: conv 5x5
  1->6 on 28x28, 2x2 pool, conv 5x5 6->16, 2x2 pool, fully connected
  256->120, 120->84, 84->10, softmax).  The path from input 0 to output 0
  must be exactly that chain, with the compiler's own steps between (an
  ActivationLayer after each convolution and fully connected layer, a
  TensorTranspose before the first fully connected one), and every edge must
  carry exactly the bytes of the uint8 tensor LeNet-5 has there.
- models/lenet-caffe/lenet_v2_0x10016.nb and lenet_v3_0x10020.nb are
  compiled from lenet.prototxt beside them, read here: the NN operations
  along the path must have its convolutions' kernels and outputs and its
  inner products' outputs in its order, and each edge the bytes of the
  tensor the prototxt's shapes give there (pooling fused into the
  convolutions).
- every real file: the recovered network leaves no operation's output
  unread, reaches every output record from an input record, and every byte
  an operation reads was written before.  No file is exempt: the SH image
  descriptors and the row tiles placed by their other image
  (doc/commands.md, "Data flow") explain the reads once listed here as not
  modelled.
- the images SH operations' uniforms describe, against the I/O records (a
  structure the uniforms do not come from): an image an SH operation writes
  into an output record is exactly the record's bytes, and one it reads
  from an input record lies inside the record.

usage: check_dataflow.py NBG_BIN CORPUS_DIR MODELS_DIR
Exit 77 (skip, with the reason) when the directories are absent.
"""
import json
import os
import re
import subprocess
import sys

import tc_corpus
from exe_wrapper import command
from tc_check import check
import tc_check


def doc_of(nbg, path):
    r = subprocess.run([*nbg, "inspect", "--json", "--commands", path], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise SystemExit("nbg inspect %s: exit %d %s" % (path, r.returncode, r.stderr))
    return json.loads(r.stdout)


def chain(doc):
    """The path from input 0 to output 0 when the network is a chain of
    layers: a list of (the first operation record of a layer, bytes flowing
    into it), then ('out', bytes).  Bytes between two layers: per producing
    operation what the consumers read of it, at most what it writes."""
    c = doc["commands"]
    layer_of, written = {}, {}
    for o in c["operations"]:
        layer_of[o["operation"]] = o["layer_id"]
        written[o["operation"]] = o["dataflow"]["write_bytes"]
    for o in c["other_operations"]:
        layer_of[o["operation"]] = o["layer_id"]
        written[o["operation"]] = o["write_bytes"]
    first = {}
    for op in sorted(layer_of):
        first.setdefault(layer_of[op], op)
    into = {}    # layer -> {source: {producer: bytes}}
    for e in c["edges"]:
        if e["kind"] == "output":
            continue
        src = ("in", e["from"]) if e["kind"] == "input" else ("L", layer_of[e["from"]])
        dst = layer_of[e["to"]]
        if src == ("L", dst):
            continue
        per = into.setdefault(dst, {}).setdefault(src, {})
        per[e["from"]] = per.get(e["from"], 0) + e["bytes"]
    outs = [e for e in c["edges"] if e["kind"] == "output" and e["to"] == 0]
    if len({layer_of[e["from"]] for e in outs}) != 1:
        return None
    path = [("out", sum(e["bytes"] for e in outs))]
    layer = layer_of[outs[0]["from"]]
    while True:
        srcs = into.get(layer, {})
        if len(srcs) != 1:
            return None
        (src, per), = srcs.items()
        b = sum(min(v, written.get(k, v) or v) if src[0] == "L" else v
                for k, v in per.items())
        path.append((first[layer], b))
        if src[0] == "in":
            break
        layer = src[1]
    return list(reversed(path))


def describe(doc):
    """op record -> (type, kind, kernel, out channels, layer name)."""
    c = doc["commands"]
    d = {}
    for o in c["operations"]:
        d[o["operation"]] = (o["type_name"], o["kind"], tuple(o.get("kernel", ())),
                             o.get("output", [0, 0, 0])[2], o["layer_name"])
    for o in c["other_operations"]:
        d[o["operation"]] = (o["type_name"], "not decoded", (), 0, o["layer_name"])
    return d


def lenet5(nbg, corpus):
    path = os.path.join(corpus, "v1", "1000f_ee_lenet_model.nb")
    doc = doc_of(nbg, path)
    p = chain(doc)
    check(p is not None, "LeNet-5: the network is one chain from input 0 to output 0")
    if p is None:
        return
    d = describe(doc)
    got = [(d[n][0], d[n][1], d[n][2], d[n][3], b) for n, b in p[:-1]]
    # (type, kind, kernel, out channels, bytes flowing in): LeNet-5's tensors,
    # uint8: 28x28x1 = 784, 24x24x6 = 3456, 12x12x6 = 864, 8x8x16 = 1024,
    # 4x4x16 = 256, then 120, 84, 10
    want = [
        ("NN", "conv", (5, 5, 1), 6, 784),             # C1
        ("TP", "lut", (), 0, 3456),                    # its activation
        ("TP", "pool", (), 0, 3456),                   # S2
        ("NN", "conv", (5, 5, 6), 16, 864),            # C3
        ("TP", "lut", (), 0, 1024),
        ("TP", "pool", (), 0, 1024),                   # S4
        ("TP", "layout", (), 0, 256),                  # the compiler's transpose
        ("NN", "conv", (1, 1, 256), 120, 256),         # F5: 256 -> 120
        ("TP", "lut", (), 0, 120),
        ("NN", "conv", (1, 1, 120), 84, 120),          # F6: 120 -> 84
        ("TP", "lut", (), 0, 84),
        ("NN", "conv", (1, 1, 84), 10, 84),            # 84 -> 10
        ("SH", "not decoded", (), 0, 10),              # softmax
    ]
    got = [(t, k, ker, oc if t == "NN" else 0, b) for t, k, ker, oc, b in got]
    check(got == want, "LeNet-5: the chain is C1, S2, C3, S4, F5, F6, output, softmax%s"
          % ("" if got == want else "\n      got  %s\n      want %s" % (got, want)))
    check(d[p[-2][0]][4] == "Softmax2Layer", "LeNet-5: the last step is the softmax layer")
    check(p[-1][1] == 20, "LeNet-5: output 0 receives 10 FP16 values (20 bytes)")


def prototxt_layers(text):
    """(type, num_output, kernel_size) of each layer of a Caffe prototxt."""
    out = []
    for block in re.findall(r"layer \{(.*?)\n\}", text, re.S):
        t = re.search(r'type: "(\w+)"', block).group(1)
        n = re.search(r"num_output: (\d+)", block)
        k = re.search(r"kernel_size: (\d+)", block)
        out.append((t, int(n.group(1)) if n else None, int(k.group(1)) if k else None))
    return out


def lenet_caffe(nbg, models):
    d = os.path.join(models, "lenet-caffe")
    layers = prototxt_layers(open(os.path.join(d, "lenet.prototxt")).read())
    convs = [(n, k) for t, n, k in layers if t == "Convolution"]
    ips = [n for t, n, k in layers if t == "InnerProduct"]
    check(convs == [(20, 5), (50, 5)] and ips == [500, 10],
          "lenet.prototxt: conv 20 5x5, conv 50 5x5, ip 500, ip 10 (read from the file)")
    # the tensors the prototxt's shapes give, uint8: 28x28 input; conv1 24x24x20
    # pooled 12x12x20; conv2 8x8x50 pooled 4x4x50; ip1 500; ip2 10
    sizes = [28 * 28, 12 * 12 * convs[0][0], 4 * 4 * convs[1][0], ips[0], ips[1]]
    for name in ("lenet_v2_0x10016.nb", "lenet_v3_0x10020.nb"):
        doc = doc_of(nbg, os.path.join(d, name))
        p = chain(doc)
        check(p is not None, "%s: one chain from input 0 to output 0" % name)
        if p is None:
            continue
        ds = describe(doc)
        nn = [(ds[n][2], ds[n][3]) for n, _ in p[:-1] if ds[n][0] == "NN"]
        check([k[:2] for k, _ in nn[:2]] == [(5, 5), (5, 5)] and
              [k[2] for k, _ in nn[:2]] == [1, convs[0][0]] and
              [oc for _, oc in nn[:2]] == [c for c, _ in convs],
              "%s: the first two NN operations are conv1 and conv2 (%s)" % (name, nn[:2]))
        check(nn[2][1] == ips[0], "%s: the third computes ip1's %d outputs" % (name, ips[0]))
        # bytes flowing into each step, by step: where they match a tensor
        # of the prototxt, in its order
        flows = [b for _, b in p]
        seen = [s for s in sizes if s in flows]
        check(seen == sizes, "%s: the edges carry %s bytes in order (got %s)"
              % (name, sizes, flows))
        check(ds[p[-2][0]][4].startswith("Softmax"), "%s: the softmax comes last" % name)


def every_file(nbg, corpus, models):
    files, images = [], {"output": 0, "input": 0}
    for root in (os.path.join(corpus, "v1"), os.path.join(corpus, "v2"),
                 os.path.join(models, "lenet-caffe")):
        files += [os.path.join(root, n) for n in sorted(os.listdir(root)) if n.endswith(".nb")]
    for path in files:
        doc = doc_of(nbg, path)
        rel = {r["id"]: r for r in doc["commands"]["relations"]}
        base = os.path.basename(path)
        dead = rel["output-never-read"]
        check(dead["held"] == dead["checked"], "%s: every output is read (%d/%d)"
              % (base, dead["held"], dead["checked"]))
        prod = rel["image-producer-missing"]
        check(prod["held"] == prod["checked"], "%s: every byte read was written (%d/%d)"
              % (base, prod["held"], prod["checked"]))
        records(doc, base, images)
    check(images["output"] > 0 and images["input"] > 0,
          "SH images checked against I/O records: %d written into output records, %d read "
          "from input records" % (images["output"], images["input"]))


def records(doc, base, images):
    """Each SH image into an I/O record against the record's byte size."""
    size = {("OUTPUT", r["index"]): r["byte_size"] for r in doc["outputs"]}
    size.update({("INPUT", r["index"]): r["byte_size"] for r in doc["inputs"]})
    for o in doc["commands"]["other_operations"]:
        for r in o["references"]:
            key = (r["source_type_name"], r["index"])
            if r["image_bytes"] is None or key not in size:
                continue
            if r["role"] == "writes" and key[0] == "OUTPUT":
                images["output"] += 1
                check(r["image_bytes"] == size[key],
                      "%s: operation %d writes output %d's %d bytes (its image: %d)"
                      % (base, o["operation"], key[1], size[key], r["image_bytes"]))
            elif r["role"] == "reads" and key[0] == "INPUT":
                images["input"] += 1
                check(r["offset"] + r["image_bytes"] <= size[key],
                      "%s: operation %d reads inside input %d (%d + %d <= %d bytes)"
                      % (base, o["operation"], key[1], r["offset"], r["image_bytes"], size[key]))


def main():
    nbg = command(sys.argv[1])
    corpus, models = sys.argv[2], sys.argv[3]
    tc_corpus.need("check_dataflow.py", "data-flow checks on real files", corpus)
    tc_corpus.need("check_dataflow.py", "data-flow checks on the source model", models)
    lenet5(nbg, corpus)
    lenet_caffe(nbg, models)
    every_file(nbg, corpus, models)
    return tc_check.finish()


if __name__ == "__main__":
    sys.exit(main())
