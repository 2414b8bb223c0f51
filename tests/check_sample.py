#!/usr/bin/env python3
"""check_sample.py - the bundled sample is the coherent model its builder says.

samples/sample.nb is synthesized by tests/sample_model.c (written by
nbg-mksample): input [1,28,28,1] UINT8 -> conv 3x3x1 -> 8 with ReLU and 2x2
max pooling -> fully connected 1352 -> 10 -> softmax (SH) -> output [1,10]
FP16.  Checked here, each against something other than nbg's own output:

- from the file's raw bytes (the header, the section directory, the I/O
  records, the checksum records, with zlib): the magic, version and target,
  the network name saying it is synthesized, the input and output records,
  every section CRC-32;
- `nbg inspect --json --commands`: every command and graph relation checked
  at least once holds (none fails), and the operations, shapes and edges are
  the architecture's (28 - 3 + 1 = 26, pooled to 13; 13 x 13 x 8 = 1352
  bytes between the layers; 784 bytes in, 10 to the softmax, 20 out);
- `nbg weights --out DIR`: both kernel streams decode, and the arrays equal
  the weights and biases the builder encoded (`nbg-mksample --values`).

usage: check_sample.py NBG_BIN MKSAMPLE_BIN SAMPLE
Prints each failure and 'N passed, N failed'; exits 1 on any failure.
"""
import ast
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

from exe_wrapper import command

failures = []
passed = [0]


def check(ok, what):
    if ok:
        passed[0] += 1
    else:
        failures.append(what)
        print("FAIL " + what)
    return ok


def sections(b):
    """{type: (offset, size)} from the directory (sub-header at 48)."""
    at, esize, count = struct.unpack_from("<III", b, 48)
    out = {}
    for i in range(count):
        t, off_lo, off_hi, size_lo, size_hi = struct.unpack_from("<5I", b, at + esize * i)
        out[t] = (off_lo | off_hi << 32, size_lo | size_hi << 32)
    return out


def io_record(b, off):
    n = struct.unpack_from("<I", b, off)[0]
    dims = list(struct.unpack_from("<%dI" % n, b, off + 4))
    fmt, _, quant, q0, q1 = struct.unpack_from("<5I", b, off + 0x1c)
    name = b[off + 0x30:off + 0x70].split(b"\0")[0].decode()
    return dims, fmt, quant, q0, q1, name


def raw_checks(b):
    check(b[:4] == b"VPMN", "magic VPMN")
    version, target = struct.unpack_from("<II", b, 4)
    check(version == 0x20000 and target == 0x1000003b,
          "version 0x%x target 0x%x, not v2 for the A733" % (version, target))
    s = sections(b)
    ni = s[35][0]
    name = b[ni:ni + 64].split(b"\0")[0].decode()
    check("synthesized" in name, "network name %r does not say it is synthesized" % name)
    n_in, n_out = struct.unpack_from("<II", b, ni + 0x40)
    check((n_in, n_out) == (1, 1), "NETWORK_INFO counts %d inputs, %d outputs" % (n_in, n_out))
    # input: dims innermost first (C, W, H, N), UINT8 (2), affine (2), 1/255, 0
    dims, fmt, quant, q0, q1, _ = io_record(b, s[1][0])
    scale = struct.unpack("<f", struct.pack("<I", q0))[0]
    check(dims == [1, 28, 28, 1] and fmt == 2 and quant == 2 and q1 == 0 and
          abs(scale - 1 / 255) < 1e-9,
          "input record %s format %d quant %d scale %g zp %d" % (dims, fmt, quant, scale, q1))
    dims, fmt, quant, _, _, _ = io_record(b, s[2][0])
    check(dims == [10, 1] and fmt == 1 and quant == 0,
          "output record %s format %d quant %d (want [10,1] FP16)" % (dims, fmt, quant))
    # every checksum record's CRC-32 (zlib) matches its section
    coff, csize = s[40]
    for k in range(0, csize, 8):
        t, crc = struct.unpack_from("<II", b, coff + k)
        off, size = s[t]
        check(zlib.crc32(b[off:off + size]) == crc, "section %d CRC-32" % t)


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def command_checks(nbg, path):
    r = run([*nbg, "inspect", "--json", "--commands", "--layers", path])
    check(r.returncode == 0, "inspect --json --commands exit %d" % r.returncode)
    doc = json.loads(r.stdout)
    c = doc["commands"]
    for rel in c["relations"] + doc["graph"]["relations"]:
        check(rel["held"] == rel["checked"],
              "relation %s: %d of %d hold" % (rel["id"], rel["held"], rel["checked"]))
    checked = {rel["id"]: rel["checked"] for rel in c["relations"]}
    for rid in ("first-nn-input-differs", "nn-input-dims-differ", "chain-shape-differs",
                "image-producer-missing", "output-never-read", "kernel-entry-missing"):
        check(checked.get(rid, 0) >= 1, "relation %s was never checked" % rid)
    check(not c["findings"], "findings: %s" % c["findings"])
    ops = [(o["operation"], o["kind"], o["kernel"], o["input"], o["output"])
           for o in c["operations"]]
    want = [(1, "conv", [3, 3, 1], [28, 28, 1], [13, 13, 8]),
            (2, "conv", [1, 1, 1352], [1, 1, 1352], [1, 1, 10])]
    check(ops == want, "operations %s, want %s" % (ops, want))
    conv = c["operations"][0]
    check(conv["output_before_pooling"] == [26, 26, 8] and conv["relu"] and
          conv["pooling_size"] == 2, "the convolution: %s" % conv)
    other = [(o["type_name"], o["layer_name"]) for o in c["other_operations"]]
    check(other == [("SH", "Softmax2Layer")], "other operations %s" % other)
    edges = sorted((e["kind"], e["from"], e["to"], e["bytes"]) for e in c["edges"])
    want = sorted([("input", 0, 1, 28 * 28), ("operation", 1, 2, 13 * 13 * 8),
                   ("operation", 2, 3, 10), ("output", 3, 0, 10 * 2)])
    check(edges == want, "edges %s, want %s" % (edges, want))


def npy(path):
    """The array of a .npy file (version 1 or 2, little-endian or byte
    types): (shape, values)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s is not a .npy file" % path)
    if data[6] == 1:
        hlen, at = struct.unpack_from("<H", data, 8)[0], 10
    else:
        hlen, at = struct.unpack_from("<I", data, 8)[0], 12
    head = ast.literal_eval(data[at:at + hlen].decode("latin1"))
    codes = {"|u1": "B", "<u1": "B", "<i4": "i", "<u4": "I"}
    code = codes[head["descr"]]
    body = data[at + hlen:]
    n = len(body) // struct.calcsize(code)
    return tuple(head["shape"]), list(struct.unpack("<%d%s" % (n, code), body))


def weight_checks(nbg, mksample, path, tmp):
    vals = os.path.join(tmp, "values")
    os.mkdir(vals)
    r = run([*mksample, "--values", vals])
    check(r.returncode == 0, "nbg-mksample --values exit %d: %s" % (r.returncode, r.stderr))
    out = os.path.join(tmp, "w")
    r = run([*nbg, "weights", path, "--out", out])
    check(r.returncode == 0, "nbg weights --out exit %d: %s" % (r.returncode, r.stderr))
    doc = json.load(open(os.path.join(out, "weights.json")))
    ops = doc["weights"]["operations"]
    if not check([o["status"] for o in ops] == ["decoded", "decoded"],
                 "weights status %s" % [o["status"] for o in ops]):
        return
    layers = [("conv", (8, 1, 3, 3), 128), ("fc", (10, 1352, 1, 1), 124)]
    for o, (name, shape, zp) in zip(ops, layers):
        raw = open(os.path.join(vals, name + "_w.u8"), "rb").read()
        braw = open(os.path.join(vals, name + "_b.i32"), "rb").read()
        bias = list(struct.unpack("<%di" % (len(braw) // 4), braw))
        wshape, w = npy(os.path.join(out, o["files"]["weights"]))
        bshape, b = npy(os.path.join(out, o["files"]["bias"]))
        check(wshape == shape and o["zero_point"] == zp,
              "%s: shape %s zero point %d, want %s %d" % (name, wshape, o["zero_point"],
                                                         shape, zp))
        check(w == list(raw), "%s: the decoded weights differ from the encoded ones" % name)
        check(bshape == (shape[0],) and b == bias,
              "%s: the decoded biases %s differ from the encoded %s" % (name, b, bias))


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    nbg, mksample, path = command(sys.argv[1]), command(sys.argv[2]), sys.argv[3]
    with open(path, "rb") as f:
        raw_checks(f.read())
    command_checks(nbg, path)
    with tempfile.TemporaryDirectory() as tmp:
        weight_checks(nbg, mksample, path, tmp)
    print("%d passed, %d failed" % (passed[0], len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
