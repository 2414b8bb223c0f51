#!/usr/bin/env python3
"""check_dump.py - `nbg run --dump` and `nbg compare` (doc/debugging.md).

check_dump.py NBG --quick SAMPLE.nb NBG_CPU_HOSTILE NBG_FIXTURE_NAME
    Synthesized: the bad-input paths of --dump on the bundled sample (a DIR
    that exists, --dump-limit passed, a DIR that cannot be created, a run
    the backend refuses: each its code and exit, nothing left behind); a
    synthesized copy whose layer is named like a path: its file stays in
    DIR, named by the sanitizing rule, and holds the input's bytes; and
    nbg compare on arrays numpy made: its figures against numpy's own
    (max and mean |diff|, cosine, top-k), the exit codes, shapes that
    differ, malformed .npy files, dump directories with a bad dump.json.

check_dump.py NBG --corpus CORPUS_DIR --goldens GOLDENS_DIR --cpu-dump NBG_CPU_DUMP
    The real files: LeNet with the board's input (GOLDENS_DIR/v853-lenet,
    the V853 board's run of v1/1000f_ee_lenet_model.nb), the smallest v1
    file with a tiled layer, and the v2 files, chosen by property
    (nbg run --backend cpu --check --json): one tensor per executed
    operation whose .npy numpy loads with the shape and type dump.json
    lists; each NN operation's tensor against the bytes nbg-cpu-dump wrote
    of the machine's buffer, sliced by numpy at the address, strides and
    size `nbg inspect --commands --json` decodes from the command; the last
    tensor the output record it writes (output_<k>.bin) byte for byte and,
    for LeNet, the board's golden
    (equal, but for the values below fp16's normal range, which the board
    writes as 0); a tiled layer's whole tensor its tiles concatenated by
    numpy; two runs compare equal (exit 0); one byte changed in the fifth
    tensor makes nbg compare --json exit 1 naming that operation first.
    The v2 file is the one of least work that runs whole with an integer
    image input (the others, an fp16 one among them, are
    printed with why they are not judged; a refused one must leave no
    dump): the same checks on int16 data, its outputs, which several
    operations write in parts, each part against output_<k>.bin at the
    address and strides its command decodes to, the parts covering every
    byte; a PNG gives the outputs of the raw input numpy derives from its
    pixels by the input record's quantization ((p - 127.5) / 127.5, then
    round(f * 2^fl) clamped for int16 dynamic fixed point), and nbg tensor
    gives those very bytes; without --mean/--scale the clipping is said;
    --batch with two PNGs and a raw file gives what three single runs give.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_cpu_tp import need_numpy  # noqa: E402
from exe_wrapper import command  # noqa: E402

FAILS = []
TYPES = {"UINT8": "uint8", "INT8": "int8", "INT16": "<i2", "INT32": "<i4", "FP16": "<f2"}


def run(args):
    return subprocess.run([*command(args[0]), *args[1:]], capture_output=True, text=True)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def left_behind(parent, name):
    """Entries of parent that a dump named `name` could have left."""
    return [e for e in os.listdir(parent) if name in e]


# ---------------------------------------------------------------- quick


def quick_dump(nbg, sample, tmp):
    inp = os.path.join(tmp, "in.bin")
    with open(inp, "wb") as f:
        f.write(bytes(range(256)) * 3 + bytes(16))  # 784 bytes, the sample's input
    base = [nbg, "run", "--backend", "cpu", sample, "--input", inp]
    # a DIR that exists: output-exists, exit 3, DIR and the output dir untouched
    d = os.path.join(tmp, "exists")
    os.mkdir(d)
    r = run(base + ["--output-dir", os.path.join(tmp, "o1"), "--dump", d])
    check(r.returncode == 3 and "output-exists" in r.stderr and os.listdir(d) == [] and
          not os.path.exists(os.path.join(tmp, "o1")),
          "--dump into an existing directory: exit 3 output-exists, nothing written (%d %s)" %
          (r.returncode, r.stderr.strip()[-120:]))
    # over --dump-limit: work-limit, exit 1, before anything is written
    r = run(base + ["--output-dir", os.path.join(tmp, "o2"), "--dump", os.path.join(tmp, "lim"),
                    "--dump-limit", "1"])
    check(r.returncode == 1 and "work-limit" in r.stderr and "--dump-limit" in r.stderr and
          not left_behind(tmp, "lim") and not os.path.exists(os.path.join(tmp, "o2")),
          "--dump-limit 1: exit 1 work-limit, nothing written (%d)" % r.returncode)
    # a DIR whose parent is a file: io-error, exit 3
    blocker = os.path.join(tmp, "file")
    open(blocker, "w").close()
    r = run(base + ["--output-dir", os.path.join(tmp, "o3"), "--dump", os.path.join(blocker, "d")])
    check(r.returncode == 3 and "io-error" in r.stderr and not os.path.exists(os.path.join(tmp, "o3")),
          "--dump under a file: exit 3 io-error, nothing written (%d %s)" %
          (r.returncode, r.stderr.strip()[-120:]))
    # the sample's softmax is refused: the run fails, the staged dump is removed
    r = run(base + ["--output-dir", os.path.join(tmp, "o4"), "--dump", os.path.join(tmp, "refused")])
    check(r.returncode == 4 and "unsupported-operation" in r.stderr and not left_behind(tmp, "refused"),
          "a refused run: exit 4, no dump and no staging directory left (%d)" % r.returncode)
    # --dump needs the CPU backend; --dump-float needs --dump
    r = run([nbg, "run", sample, "--input", inp, "--output-dir", os.path.join(tmp, "o5"), "--dump",
             os.path.join(tmp, "nocpu")])
    check(r.returncode == 2 and "--backend cpu" in r.stderr, "--dump without --backend cpu: usage, exit 2")
    r = run(base + ["--output-dir", os.path.join(tmp, "o6"), "--dump-float"])
    check(r.returncode == 2, "--dump-float without --dump: usage, exit 2")


def quick_names(nbg, hostile, fixture_name, tmp, np):
    """A 16-byte copy (tests/cpu_hostile.c) whose layer name (the record at
    1104, `nbg inspect --layers --json`) reads as a path."""
    copy, evil = os.path.join(tmp, "copy.nb"), os.path.join(tmp, "evil.nb")
    r = run([hostile, "copy", copy])
    doc = json.loads(run([nbg, "inspect", "--layers", "--json", copy]).stdout)
    at = doc["layers"][0]["record_offset"]
    r2 = run([fixture_name, copy, evil, str(at), "../../up/a b"])
    inp = os.path.join(tmp, "copy_in.bin")
    data = bytes(range(7, 23))
    with open(inp, "wb") as f:
        f.write(data)
    d = os.path.join(tmp, "names")
    r3 = run([nbg, "run", "--backend", "cpu", evil, "--input", inp, "--output-dir", os.path.join(tmp, "o7"),
              "--dump", d, "--dump-float"])
    files = sorted(os.listdir(d)) if os.path.isdir(d) else []
    want = "000-op0-.._.._up_a_b.npy"  # every byte but [A-Za-z0-9._-] as '_'
    wantf = want[:-4] + ".f32.npy"     # the output record's values (quantization NONE: the codes)
    ok = r.returncode == 0 and r2.returncode == 0 and r3.returncode == 0 and files == [wantf, want, "dump.json"]
    if ok:
        with open(os.path.join(d, "dump.json")) as f:
            op = json.load(f)["operations"][0]
        a = np.load(os.path.join(d, want))
        fl = np.load(os.path.join(d, wantf))
        ok = (a.tobytes() == data and op["layer"] == "../../up/a b" and op["output_record"] == 0 and
              op["operator"] == "tp" and op["float_file"] == wantf and op["quantization"]["format"] == "NONE" and
              fl.dtype == np.float32 and np.array_equal(fl, np.frombuffer(data, np.uint8).astype(np.float32)))
    check(ok and not os.path.exists(os.path.join(tmp, "up")),
          "a layer named ../../up/a b: its file %s stays in DIR and holds the copied bytes (%s; %s)"
          % (want, files, (r3.stderr or r2.stderr).strip()[-120:]))


def compare_json(nbg, a, b, *opts):
    r = run([nbg, "compare", "--json", *opts, a, b])
    try:
        return r.returncode, json.loads(r.stdout), r.stderr
    except ValueError:
        return r.returncode, None, r.stderr


def quick_figures(nbg, tmp, np):
    rng = np.random.default_rng(44)
    a = rng.normal(size=(3, 7, 5)).astype(np.float32)
    b = (a + rng.normal(scale=0.01, size=a.shape)).astype(np.float32)
    pa, pb = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
    np.save(pa, a)
    np.save(pb, b)
    rc, doc, err = compare_json(nbg, pa, pb, "--top", "7")
    d = np.abs(a.astype(np.float64) - b)
    ok = rc == 1 and doc is not None
    if ok:
        t = doc["tensors"][0]
        fa, fb = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
        cos = fa @ fb / np.linalg.norm(fa) / np.linalg.norm(fb)
        ka, kb = set(np.argsort(-fa, kind="stable")[:7]), set(np.argsort(-fb, kind="stable")[:7])
        ok = (t["max_abs_diff_stored"] == d.max() and abs(t["mean_abs_diff_stored"] - d.mean()) < 1e-12 and
              abs(t["cosine"] - cos) < 1e-9 and t["top_k_common"] == len(ka & kb) and
              t["beyond"] == int((d > 0).sum()) and t["first_beyond"] == int(np.argmax(d.ravel() > 0)))
    check(ok, "compare of two float32 arrays: exit 1, figures equal numpy's (%d %s)" % (rc, err[-100:]))
    rc, doc, _ = compare_json(nbg, pa, pb, "--tolerance", "0.1")
    check(rc == 0 and doc and doc["equal"], "--tolerance 0.1 (above the largest difference, %.4f): exit 0"
          % d.max())
    # uint8 codes, one changed by 3: stored difference 3; relative tolerance
    c = rng.integers(0, 200, size=(4, 6), dtype=np.uint8)
    c2 = c.copy()
    c2[2, 3] += 3
    pc, pc2 = os.path.join(tmp, "c.npy"), os.path.join(tmp, "c2.npy")
    np.save(pc, c)
    np.save(pc2, c2)
    rc, doc, _ = compare_json(nbg, pc, pc2)
    check(rc == 1 and doc["tensors"][0]["max_abs_diff_stored"] == 3 and doc["tensors"][0]["first_beyond"] == 15
          and doc["tensors"][0]["max_abs_diff_dequantized"] is None,
          "uint8 codes one apart by 3: max |diff| 3 stored, at element 15, no scale known")
    rng_b = float(c2.max()) - float(c2.min())
    pct = 100 * 3.5 / rng_b
    rc, _, _ = compare_json(nbg, pc, pc2, "--tolerance", "%.6f%%" % pct)
    check(rc == 0, "--tolerance %.3f%% (3.5 codes of B's range %g): exit 0" % (pct, rng_b))
    rc, _, _ = compare_json(nbg, pc, pc2, "--tolerance", "%.6f%%" % (100 * 2.5 / rng_b))
    check(rc == 1, "--tolerance of 2.5 codes as a percentage: exit 1")
    return pa, pc


def quick_trouble(nbg, tmp, np, pa, pc):
    r = run([nbg, "compare", pa, pc])
    check(r.returncode == 2 and "tensor-shape-mismatch" in r.stderr, "shapes that differ: exit 2 tensor-shape-mismatch")
    with open(pa, "rb") as f:
        good = f.read()
    for name, data in (("magic", b"\x93NUMPX" + good[6:]), ("cut", good[:len(good) - 1]),
                       ("header", good[:10] + b"{'descr': '<f4', 'shape': (3, " + good[40:])):
        p = os.path.join(tmp, "bad_%s.npy" % name)
        with open(p, "wb") as f:
            f.write(data)
        r = run([nbg, "compare", pa, p])
        check(r.returncode == 2 and "npy-invalid" in r.stderr, "malformed .npy (%s): exit 2 npy-invalid (%d %s)" %
              (name, r.returncode, r.stderr.strip()[-80:]))
    r = run([nbg, "compare", "--tolerance", "-1", pa, pa])
    check(r.returncode == 2, "--tolerance -1: exit 2")
    r = run([nbg, "compare", pa, tmp])
    check(r.returncode == 2, "a file against a directory: exit 2")


def fake_dump(tmp, name, np, arrays, files=None):
    d = os.path.join(tmp, name)
    os.mkdir(d)
    ops = []
    for i, a in enumerate(arrays):
        f = files[i] if files else "%03d-op%d-layer.npy" % (i, i + 1)
        if "/" not in f:
            np.save(os.path.join(d, f), a)
        ops.append({"operation": i + 1, "layer_id": i, "layer": "L%d" % i, "operator": "conv", "file": f,
                    "shape": list(a.shape), "data_type": "UINT8", "quantization": {"zero_point": 3, "scale": None},
                    "bytes": a.nbytes, "whole_layer": False})
    with open(os.path.join(d, "dump.json"), "w") as f:
        json.dump({"operations": ops}, f)
    return d


def quick_dumps(nbg, tmp, np):
    rng = np.random.default_rng(7)
    arrs = [rng.integers(0, 255, size=s, dtype=np.uint8) for s in ((2, 3, 4), (5,), (1, 1, 6))]
    other = [a.copy() for a in arrs]
    other[1][2] ^= 1
    a, b = fake_dump(tmp, "da", np, arrs), fake_dump(tmp, "db", np, other)
    rc, doc, _ = compare_json(nbg, a, b)
    check(rc == 1 and doc["first_divergent"]["operation"] == 2 and doc["tensors"][0]["equal"],
          "synthesized dumps, the second tensor changed: exit 1, first_divergent operation 2")
    rc, _, _ = compare_json(nbg, a, a)
    check(rc == 0, "a dump against itself: exit 0")
    bad = fake_dump(tmp, "dbad", np, arrs, ["000.npy", "../da/001-op2-layer.npy", "002.npy"])
    r = run([nbg, "compare", a, bad])
    check(r.returncode == 2 and "dump-invalid" in r.stderr, "dump.json naming ../: exit 2 dump-invalid")
    short = fake_dump(tmp, "dshort", np, arrs[:2])
    r = run([nbg, "compare", a, short])
    check(r.returncode == 2 and "dump-invalid" in r.stderr, "dumps of other lengths: exit 2 dump-invalid")
    os.mkdir(os.path.join(tmp, "empty"))
    r = run([nbg, "compare", a, os.path.join(tmp, "empty")])
    check(r.returncode == 2, "a dump against a directory without dump.json: exit 2")


def quick(nbg, sample, hostile, fixture_name):
    need_numpy("check_dump.py")
    import numpy as np
    with tempfile.TemporaryDirectory() as tmp:
        quick_dump(nbg, sample, tmp)
        quick_names(nbg, hostile, fixture_name, tmp, np)
        pa, pc = quick_figures(nbg, tmp, np)
        quick_trouble(nbg, tmp, np, pa, pc)
        quick_dumps(nbg, tmp, np)


# ---------------------------------------------------------------- corpus


def plan(nbg, model):
    r = run([nbg, "run", "--backend", "cpu", "--check", "--json", model])
    try:
        return json.loads(r.stdout)
    except ValueError:
        return None


def tiled(p):
    """A layer of two or more executed NN operations, in a plan."""
    seen = {}
    for s in p["steps"]:
        if s["type"] == "NN" and s["verdict"] == "execute":
            seen[s["layer_id"]] = seen.get(s["layer_id"], 0) + 1
    return any(n > 1 for n in seen.values())


def dump_run(nbg, model, inputs, tmp, tag, *extra):
    out, dd = os.path.join(tmp, tag + "_out"), os.path.join(tmp, tag + "_dump")
    args = [nbg, "run", "--backend", "cpu", model, "--output-dir", out, "--dump", dd, *extra]
    for i in inputs:
        args += ["--input", i]
    r = run(args)
    if r.returncode != 0:
        return None, out, dd, r
    with open(os.path.join(dd, "dump.json")) as f:
        return json.load(f)["operations"], out, dd, r


def check_tensors(np, name, ops, dd, out, p, parts=None):
    executed = p["executed"]
    steps = [o for o in ops if not o["whole_layer"]]
    check(len(steps) == executed and [o["operation"] for o in steps] == sorted({o["operation"] for o in steps}),
          "%s: one tensor per executed operation, in order (%d, the plan executes %d)" % (name, len(steps), executed))
    files = sorted(e for e in os.listdir(dd) if e.endswith(".npy"))
    check(files == [o["file"] for o in ops], "%s: the file names sort in execution order" % name)
    bad = []
    arrays = []
    for o in ops:
        a = np.load(os.path.join(dd, o["file"]))
        arrays.append(a)
        if list(a.shape) != o["shape"] or a.dtype != np.dtype(TYPES[o["data_type"]]) or a.nbytes != o["bytes"]:
            bad.append(o["file"])
    check(not bad, "%s: every .npy loads in numpy with the shape, type and size dump.json lists (%s)" %
          (name, ", ".join(bad[:3]) or "%d files" % len(ops)))
    # the last operation writes an output record, not always the first
    # (scrfd's last writes output 2)
    k = ops[-1]["output_record"]
    if k is None and parts is not None:
        return arrays  # written in parts: check_output_parts
    raw = b""
    if k is not None:
        with open(os.path.join(out, "output_%d.bin" % k), "rb") as f:
            raw = f.read()
    check(k is not None and arrays[-1].tobytes() == raw,
          "%s: the last tensor (%s) is output_%s.bin, byte for byte (%d bytes)" % (name, ops[-1]["file"], k, len(raw)))
    return arrays


def check_output_parts(nbg, np, name, model, ops, arrays, out):
    """Where several operations write an output record in parts (a v2
    detector's heads), each part against the output file at the address,
    strides and element size `nbg inspect --commands --json` decodes from
    its command; together the parts cover every byte of every output, and
    the last tensor is one of them."""
    doc = json.loads(run([nbg, "inspect", "--commands", "--json", model]).stdout)["commands"]
    cmds = {c["operation"]: c for c in doc["operations"]}
    outs, covered, bad, parts = {}, {}, [], []
    for o, a in zip(ops, arrays):
        c = cmds.get(o["operation"], {})
        ref, df = c.get("output_ref") or {}, c.get("dataflow") or {}
        if o["whole_layer"] or ref.get("source_type_name") != "OUTPUT":
            continue
        k = ref["index"]
        if k not in outs:
            outs[k] = np.fromfile(os.path.join(out, "output_%d.bin" % k), dtype=np.uint8)
            covered[k] = np.zeros(outs[k].size, dtype=bool)
        z, y, x = a.shape if a.ndim == 3 else (1, 1, a.size)
        e = a.itemsize
        idx = (ref["offset"] + np.arange(z)[:, None, None] * df["output_slice_stride"] +
               np.arange(y)[None, :, None] * df["output_row_stride"] + np.arange(x * e)[None, None, :])
        parts.append(o["operation"])
        if idx.max() >= outs[k].size or not np.array_equal(outs[k][idx].ravel(), a.view(np.uint8).ravel()):
            bad.append(o["operation"])
            continue
        covered[k][idx.ravel()] = True
    whole = bool(outs) and all(v.all() for v in covered.values())
    check(not bad and whole and ops[-1]["operation"] in parts,
          "%s: the output records are written in parts by operations %s; each part equals output_<k>.bin "
          "at its command's address and strides (differing: %s), together they cover all %s bytes, the "
          "last tensor (%s) is one" % (name, parts, bad or "none",
                                      "+".join(str(v.size) for _, v in sorted(outs.items())), ops[-1]["file"]))


def check_compare(nbg, np, name, model, inputs, ops, dd, tmp):
    ops2, _, dd2, r = dump_run(nbg, model, inputs, tmp, name + "_2", "--dump-float")
    floats = [o for o in ops2 if o["float_file"]]
    known = any(o["data_type"] == "FP16" or o["output_record"] is not None for o in ops2)
    if not known:  # an int16 network writing its outputs in parts
        print("not judged: %s: --dump-float: no tensor's values are known (no fp16 tensor, no output record "
              "one operation writes whole), so it writes no float32 file (%d)" % (name, len(floats)))
    ok = bool(floats) and all(o["data_type"] == "FP16" or o["output_record"] is not None for o in floats)
    for o in floats:
        a, f = np.load(os.path.join(dd2, o["file"])), np.load(os.path.join(dd2, o["float_file"]))
        if o["data_type"] == "FP16":
            want = a.astype(np.float32)
        else:
            q = o["quantization"]
            want = ((a.astype(np.float64) - q["zero_point"]) * q["scale"]).astype(np.float32)
        ok = ok and f.dtype == np.float32 and f.shape == a.shape and np.array_equal(f, want)
    if known:
        check(ok, "%s: --dump-float: %d float32 files, each its tensor's values by numpy (fp16 widened, an "
              "output record's codes dequantized)" % (name, len(floats)))
    rc, doc, err = compare_json(nbg, dd, dd2)
    check(rc == 0 and doc and doc["equal"] and doc["first_divergent"] is None,
          "%s: two runs' dumps compare equal (exit %d %s)" % (name, rc, err.strip()[-100:]))
    fifth = ops2[4]
    p = os.path.join(dd2, fifth["file"])
    a = np.load(p)
    with open(p, "rb") as f:
        data = bytearray(f.read())
    data[len(data) - a.nbytes + a.nbytes // 2] ^= 0x01  # one byte inside its data
    with open(p, "wb") as f:
        f.write(data)
    rc, doc, err = compare_json(nbg, dd, dd2)
    fd = doc and doc["first_divergent"]
    check(rc == 1 and fd and fd["operation"] == fifth["operation"] and fd["file"] == fifth["file"] and
          all(t["equal"] for t in doc["tensors"][:4]),
          "%s: one byte changed in the fifth tensor (operation %d): exit 1, first_divergent names it (%d %s)"
          % (name, fifth["operation"], rc, err.strip()[-100:]))


def check_against_buffers(nbg, cpu_dump, np, name, model, inputs, ops, arrays, tmp):
    """Each NN tensor against nbg-cpu-dump's buffer right after it ran,
    sliced by numpy where the decoded command and the data flow say it
    lies: its address (a row tile the data flow places: that offset), its
    strides and element size, through its circular buffer [end - size x
    64, end) (the command's out_image_circular_buf_* fields, the end where
    a patch relocates it; doc/cpu-backend.md)."""
    doc = json.loads(run([nbg, "inspect", "--commands", "--json", model]).stdout)["commands"]
    cmds = {c["operation"]: c for c in doc["operations"]}
    nn = [(o, a) for o, a in zip(ops, arrays) if not o["whole_layer"] and
          cmds.get(o["operation"], {}).get("engine") == "NN"]
    stops = [o["operation"] + 1 for o, _ in nn]
    bd = os.path.join(tmp, "buffers_" + name)
    for s in stops:
        os.makedirs(os.path.join(bd, str(s)))
    r = run([cpu_dump, model, ",".join(map(str, stops)), bd, *inputs])
    checked, bad = 0, []
    for (o, a), s in zip(nn, stops):
        c = cmds[o["operation"]]
        ref, df = c["output_ref"], c["dataflow"]
        fields = doc["nn"]["commands"][c["command"]]
        # the circular buffer's end: the field plus its patch's offset (a
        # v1 file's field holds the VIP SRAM address and its patch offset
        # 0; a v2 file's field 0 and its patch the memory and offset)
        end = fields.get("patched_fields", {}).get("out_image_circular_buf_end_addr_plus_1")
        fields = fields.get("fields", fields)
        x, y, z = c["output"]
        e = a.itemsize  # int16 data: two bytes an element
        tp = df["tile_placed"]
        base = tp["offset"] if tp and tp["image"] == "output" else ref["offset"]
        buf = np.fromfile(os.path.join(bd, str(s), "%s_%d.bin" % (ref["source_type_name"], ref["index"])),
                          dtype=np.uint8)
        idx = (base + np.arange(z)[:, None, None] * df["output_slice_stride"] +
               np.arange(y)[None, :, None] * df["output_row_stride"] + np.arange(x * e)[None, None, :])
        size = 64 * fields.get("out_image_circular_buf_size", 0)
        if size and (end["source_type_name"] if end else "VIP_SRAM") == ref["source_type_name"]:
            lo = (end["src_offset"] if end else 0) + fields["out_image_circular_buf_end_addr_plus_1"] - size
            idx = np.where(idx >= lo, lo + (idx - lo) % size, idx)
        checked += 1
        if idx.max() >= buf.size or not np.array_equal(buf[idx].ravel(), a.view(np.uint8).ravel()):
            bad.append(o["operation"])
    check(r.returncode == 0 and checked and not bad,
          "%s: %d NN tensors equal the machine's buffer sliced by numpy at the command's address, strides "
          "and circular buffer (nbg-cpu-dump; differing: %s)" % (name, checked, bad or "none"))


def check_board(np, arrays, goldens):
    board = np.fromfile(os.path.join(goldens, "output0_10_1.dat"), dtype=np.float16).astype(np.float64)
    ours = arrays[-1].ravel().astype(np.float64)
    normal = board != 0
    tiny = 2.0 ** -14  # the board writes fp16 results below the normal range as +0
    check(np.array_equal(ours[normal], board[normal]) and np.all(np.abs(ours[~normal]) < tiny),
          "LeNet: the last tensor equals the V853 board's output where the board's value is normal "
          "(%d), below 2^-14 where it wrote 0 (%d)" % (normal.sum(), (~normal).sum()))


def check_tiles(np, name, ops, arrays):
    wholes = [(i, o) for i, o in enumerate(ops) if o["whole_layer"]]
    ok = bool(wholes)
    for i, w in wholes:
        tiles = [a for o, a in zip(ops[:i], arrays[:i]) if not o["whole_layer"] and o["layer_id"] == w["layer_id"]]
        axis = 1 if w["operator"] == "conv" else 2  # rows, or a fully connected layer's outputs
        ok = ok and len(tiles) == w["tiles"] > 1 and np.array_equal(np.concatenate(tiles, axis=axis), arrays[i])
    check(ok, "%s: %d tiled layer(s) (%s), each whole tensor its tiles concatenated by numpy (conv: along "
          "the rows; tp-fc: along the outputs)" % (name, len(wholes), ", ".join(
              "layer %d %s x%d" % (w["layer_id"], w["operator"], w["tiles"]) for _, w in wholes)))


def pick(nbg, corpus):
    """The smallest v1 file with a tiled layer that runs whole; the v2 files."""
    v1 = sorted((os.path.join(corpus, "v1", f) for f in os.listdir(os.path.join(corpus, "v1"))
                 if f.endswith(".nb")), key=os.path.getsize)
    tiledv1 = None
    for f in v1:
        p = plan(nbg, f)
        if p and p["runs_whole"] and tiled(p) and (tiledv1 is None or p["totals"]["work"] < tiledv1[1]["totals"]["work"]):
            tiledv1 = (f, p)
    v2 = sorted((os.path.join(corpus, "v2", f) for f in os.listdir(os.path.join(corpus, "v2"))
                 if f.endswith(".nb")), key=os.path.getsize)
    return tiledv1, v2


def corpus(nbg, corpus_dir, goldens, cpu_dump):
    need_numpy("check_dump.py")
    import numpy as np
    g = os.path.join(goldens, "v853-lenet")
    lenet = os.path.join(corpus_dir, "v1", "1000f_ee_lenet_model.nb")  # the board's model (goldens' README)
    if not os.path.exists(lenet) or not os.path.isdir(g):
        print("SKIP: the corpus LeNet or the board's golden is missing")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [os.path.join(g, "input_0.dat")]
        p = plan(nbg, lenet)
        ops, out, dd, r = dump_run(nbg, lenet, inputs, tmp, "lenet")
        check(ops is not None, "LeNet: nbg run --dump (exit %d %s)" % (r.returncode, r.stderr.strip()[-200:]))
        if ops is not None:
            arrays = check_tensors(np, "LeNet", ops, dd, out, p)
            check_board(np, arrays, g)
            check_against_buffers(nbg, cpu_dump, np, "LeNet", lenet, inputs, ops, arrays, tmp)
            check_compare(nbg, np, "LeNet", lenet, inputs, ops, dd, tmp)
        tiledv1, v2 = pick(nbg, corpus_dir)
        if tiledv1 is None:
            check(False, "the corpus holds a v1 file with a tiled layer that runs whole")
        else:
            f, p = tiledv1
            name = os.path.basename(f)
            size = json.loads(run([nbg, "inspect", "--json", f]).stdout)["inputs"][0]["byte_size"]
            inp = os.path.join(tmp, "tiled_in.bin")
            with open(inp, "wb") as fh:
                fh.write(np.random.default_rng(1).integers(0, 256, size=size, dtype=np.uint8).tobytes())
            ops, out, dd, r = dump_run(nbg, f, [inp], tmp, "tiled")
            check(ops is not None, "%s: nbg run --dump (exit %d)" % (name, r.returncode))
            if ops is not None:
                arrays = check_tensors(np, name, ops, dd, out, p)
                check_tiles(np, name, ops, arrays)
                check_against_buffers(nbg, cpu_dump, np, name, f, [inp], ops, arrays, tmp)
                check_compare(nbg, np, name, f, [inp], ops, dd, tmp)
        corpus_v2(nbg, cpu_dump, np, v2, tmp)


def corpus_v2(nbg, cpu_dump, np, v2, tmp):
    """The v2 file of least work that runs whole on the CPU backend with one
    8- or 16-bit integer image input (its int16 dynamic fixed point data,
    where it is such a file; an fp16 file is printed as not judged): the dump
    checks above, --batch against single runs, a PNG against the raw input
    numpy derives from it.  Every other v2 file is printed, with why it is
    not judged here; the first refused one must leave no dump."""
    plans = [(f, plan(nbg, f)) for f in v2]
    # the input must be one an image fills with a quantization derive() applies
    fits = {f: integer_image_input(nbg, f) for f, p in plans if p and p["runs_whole"]}
    runnable = sorted(((p["totals"]["work"], f, p) for f, p in plans if p and p["runs_whole"] and fits[f]))
    check(bool(runnable), "the corpus holds a v2 file that runs whole on the CPU backend with an 8- or 16-bit "
          "integer image input (%d v2 files)" % len(v2))
    refused = None
    for f, p in plans:
        name = os.path.basename(f)
        if not p:
            print("not judged: %s: nbg run --check --json gave no plan" % name)
        elif not p["runs_whole"]:
            print("not judged: %s: the CPU backend refuses it (%s)" % (name, p["refusal"]))
            refused = refused or f
        elif not fits[f]:
            print("not judged: %s: runs whole, but its input is no 8- or 16-bit integer image this test "
                  "derives (cpu-int16 judges it against its source)" % name)
        elif f != runnable[0][1]:
            print("not judged: %s: runs whole; this test checks the v2 file of least work (%s), one "
                  "whole-model run of each kind in the corpus tier" % (name, os.path.basename(runnable[0][1])))
    if refused:
        name = os.path.basename(refused)
        doc = json.loads(run([nbg, "inspect", "--json", refused]).stdout)
        ins = []
        for k, rec in enumerate(doc["inputs"]):
            ins.append(os.path.join(tmp, "refused_%d.bin" % k))
            with open(ins[-1], "wb") as fh:
                fh.write(bytes(rec["byte_size"]))
        _, _, _, r = dump_run(nbg, refused, ins, tmp, "refused")
        check(r.returncode == 4 and "unsupported-operation" in r.stderr and not left_behind(tmp, "refused_dump"),
              "%s: the refused run exits 4 and leaves no dump (%d)" % (name, r.returncode))
    if runnable:
        v2_whole(nbg, cpu_dump, np, runnable[0][1], runnable[0][2], tmp)


def integer_image_input(nbg, f):
    """Whether the file has one input, an image (image_axes) of UINT8, INT8
    or INT16 data."""
    rec = json.loads(run([nbg, "inspect", "--json", f]).stdout)["inputs"]
    return len(rec) == 1 and image_axes(rec[0]) is not None and \
        rec[0]["data_format_name"] in ("UINT8", "INT8", "INT16")


# An image's pixels as most float models of the v2 corpus take them: [-1, 1]
MEAN, SCALE = 127.5, 1 / 127.5


def image_axes(rec):
    """(h, w, c, planar) of an input record an image fills (the rule of
    nbg run's image inputs, doc/runtime.md); None for another shape."""
    d = rec["dimensions_outermost_first"]
    if len(d) != 4 or d[0] != 1:
        return None
    if d[3] in (1, 3) and d[1] not in (1, 3):
        return d[1], d[2], d[3], False
    if d[1] in (1, 3) and d[3] not in (1, 3):
        return d[2], d[3], d[1], True
    return None


def derive(np, pixels, rec, planar):
    """The record's stored values of an image's pixels, by numpy: (p -
    MEAN) * SCALE as float32, then q = round(f * 2^fl) (dynamic fixed point)
    or round(f / scale) + zero point (affine), clamped to the type
    (check_run_inputs.quantize)."""
    from check_run_inputs import quantize
    v, dt = quantize((pixels.astype(np.float64) - MEAN) * SCALE, rec["quantization"], rec["data_format_name"])
    v = v.astype(dt)
    return v.transpose(2, 0, 1) if planar else v


def v2_whole(nbg, cpu_dump, np, f, p, tmp):
    from check_run_inputs import png, outputs as run_outputs
    name = os.path.basename(f)
    rec = json.loads(run([nbg, "inspect", "--json", f]).stdout)["inputs"]
    ax = image_axes(rec[0]) if len(rec) == 1 else None
    fmt = rec[0]["data_format_name"]
    if not ax or fmt not in ("UINT8", "INT8", "INT16"):
        check(False, "%s: one input an image fills (NHWC or NCHW, 1 or 3 channels, 8- or 16-bit): %s %s" %
              (name, [r["dimensions_outermost_first"] for r in rec], fmt))
        return
    h, w, c, planar = ax
    print("%s: input %s %s %s; %d operations executed" % (name, rec[0]["dimensions_outermost_first"], fmt,
                                                         rec[0]["quantization"], p["executed"]))
    rng = np.random.default_rng(2)
    # a gradient with noise, 0 and 255 included (255 is 1.0: 2^fl clamps)
    imgs = []
    for k in range(2):
        g = np.add.outer(np.arange(h), np.arange(w)) * (255.0 / (h + w - 2))
        px = np.clip(g[:, :, None] * (1, 0.5, 0.25)[:c] + rng.normal(0, 20 * k + 8, (h, w, c)), 0, 255)
        px = px.astype(np.uint8)
        px[0, 0], px[-1, -1] = 0, 255
        imgs.append(px)
    pngs, raws = [], []
    for k, px in enumerate(imgs):
        pngs.append(os.path.join(tmp, "v2_img%d.png" % k))
        png(pngs[-1], w, h, [px[y].tobytes() for y in range(h)], ctype=2 if c == 3 else 0)
        raws.append(os.path.join(tmp, "v2_img%d.bin" % k))
        with open(raws[-1], "wb") as fh:
            fh.write(derive(np, px, rec[0], planar).tobytes())
    norm = ["--mean", repr(MEAN), "--scale", repr(SCALE)]
    # the dump of the run on the raw input derived from the first image
    ops, out, dd, r = dump_run(nbg, f, raws[:1], tmp, "v2")
    check(ops is not None, "%s: nbg run --dump (exit %d %s)" % (name, r.returncode, r.stderr.strip()[-200:]))
    if ops is None:
        return
    parts = ops[-1]["output_record"] is None
    arrays = check_tensors(np, name, ops, dd, out, p, parts=parts or None)
    if parts:
        check_output_parts(nbg, np, name, f, ops, arrays, out)
    check_against_buffers(nbg, cpu_dump, np, name, f, raws[:1], ops, arrays, tmp)
    check_compare(nbg, np, name, f, raws[:1], ops, dd, tmp)
    # the PNG: nbg tensor gives numpy's bytes, nbg run the raw input's outputs
    conv = os.path.join(tmp, "v2_conv.bin")
    r = run([nbg, "tensor", "--model", f, "--input", "0", pngs[0], *norm, "-o", conv])
    want = open(raws[0], "rb").read()
    got = open(conv, "rb").read() if r.returncode == 0 else b""
    diff = -1
    if len(got) == len(want):
        dt = {"INT16": "<i2", "INT8": "i1", "UINT8": "u1"}[fmt]
        diff = int(np.abs(np.frombuffer(got, dt).astype(int) - np.frombuffer(want, dt).astype(int)).max())
    check(got == want, "%s: nbg tensor: the %dx%d PNG with --mean %g --scale 1/127.5 is the raw input numpy "
          "derives by the record's quantization (largest difference %d)" % (name, w, h, MEAN, diff))
    r1 = run([nbg, "run", "--backend", "cpu", f, "--input", pngs[0], *norm, "--output-dir",
              os.path.join(tmp, "v2_png")])
    check(r1.returncode == 0 and run_outputs(out) == run_outputs(os.path.join(tmp, "v2_png")),
          "%s: nbg run: the PNG gives the raw input's output files byte for byte (%d)" % (name, r1.returncode))
    # (nbg tensor converts as nbg run does, without running the model)
    r2 = run([nbg, "tensor", "--model", f, "--input", "0", pngs[0], "-o", os.path.join(tmp, "v2_clip.bin")])
    check(r2.returncode == 0 and "clipped" in r2.stderr,
          "%s: the PNG without --mean/--scale (pixels 0..255 against an input that holds %s): the clipped "
          "values are said (%s)" % (name, rec[0]["quantization"], r2.stderr.strip()[-160:]))
    v2_batch(nbg, np, name, f, rec[0], pngs, tmp, norm,
             run_outputs(os.path.join(tmp, "v2_png")) if r1.returncode == 0 else None)


def v2_batch(nbg, np, name, f, rec, pngs, tmp, norm, first):
    """--batch with three inputs (two PNGs, one raw file of random values)
    gives what three single runs give (the first PNG's: `first`)."""
    from check_run_inputs import outputs as run_outputs
    bd = os.path.join(tmp, "v2_batch")
    os.mkdir(bd)
    shutil.copy(pngs[0], os.path.join(bd, "a.png"))
    shutil.copy(pngs[1], os.path.join(bd, "b.png"))
    with open(os.path.join(bd, "c.bin"), "wb") as fh:
        fh.write(np.random.default_rng(3).integers(0, 256, rec["byte_size"], dtype=np.uint8).tobytes())
    singles = {"a.png": first}
    for n in ("b.png", "c.bin"):
        o = os.path.join(tmp, "v2_single_" + n)
        r = run([nbg, "run", "--backend", "cpu", f, "--input", os.path.join(bd, n),
                 *(norm if n.endswith(".png") else []), "--output-dir", o])
        singles[n] = run_outputs(o) if r.returncode == 0 else None
    o = os.path.join(tmp, "v2_batch_out")
    r = run([nbg, "run", "--backend", "cpu", f, "--batch", bd, *norm, "--output-dir", o])
    same = r.returncode == 0 and sorted(os.listdir(o)) == sorted(singles) and \
        all(singles[n] is not None and run_outputs(os.path.join(o, n)) == singles[n] for n in singles)
    check(same and len(set(map(str, singles.values()))) == 3,
          "%s: --batch with two PNGs and a raw file: each entry's outputs those of its single run, the three "
          "different (%d %s)" % (name, r.returncode, r.stderr.strip()[-120:]))


def main(argv):
    nbg = argv[1]
    if argv[2] == "--quick":
        quick(nbg, argv[3], argv[4], argv[5])
    else:
        opts = dict(zip(argv[2::2], argv[3::2]))
        corpus(nbg, opts["--corpus"], opts["--goldens"], opts["--cpu-dump"])
    print("%d failure(s)" % len(FAILS))
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main(sys.argv)
