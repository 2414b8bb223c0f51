#!/usr/bin/env python3
"""The gray pre-processing copy, TensorSub, TensorMul and PReluLayer SH
operations the CPU backend runs by reference semantics (lib/cpu/ops/
shgray.c, shsub.c, shmul.c, shprelu.c), against references no C code here
computes.  The files: every corpus file whose bytes name one of these
layers (none is listed here); a file none of whose such shaders is
executed is printed with its refusals.

1. Recovery, from the raw bytes and `nbg inspect --json` alone: each
   executed shader's uniforms (its state buffer's LOAD_STATE stream, its
   STATE patches) and constants (the LCDT entries its patches name) read
   as doc/cpu-backend.md says ("The pre-processing and PReLU shaders"):
   the gray copies write consecutive fp16 planes, one per input plane;
   the subtraction reads their whole image; a PReLU shader's input is the
   address the NN/TP operation before it writes and its output the one the
   operation after it reads, with one slope a row.  Figures: the
   constants, the post-shifts, the slopes' range.
2. Per operation on synthesized buffers (nbg-cpu-ref-op runs one
   operation whatever precedes it; every executed shader, two trials:
   random bytes, then only the extremes -128, -1, 0, 127 and uint8 0 and
   255): the output image equals numpy's, computed from the words decoded
   in part 1 (gray: numpy.float16 of the bytes; sub: rint(x a + k b);
   mul: rint(x c / 2^s); PReLU: rint((x >= 0 ? x : x alpha) x m / 2^s),
   m the multiplier at 0x360e0 in the 0x55555555 lane layout, else 1; ties
   to even, int8 saturation), and no other byte of any buffer changes.
3. On the model's own data (slow tier): each file run (nbg-cpu-dump, one
   synthesized input) up to each executed shader before its first refused
   operation and one operation further: the same comparison on what the
   operations before it wrote; figures on the image the last of them
   writes (saturation, zeros, constant rows).

Usage: check_cpu_shpre.py NBG REFOP --corpus DIR [--tier corpus|slow]
(exit 77 when the corpus or Debian's python3-numpy is missing);
nbg-cpu-dump is REFOP's neighbour.
"""
import glob
import os
import struct
import sys
import tempfile

from check_cpu import dump, finish, in_tier, prefetch, ref_op_runs, tier_of
from check_cpu_ref import LABEL, inspect, patched_offset, plan_lines, region_sizes, uniforms
from check_cpu_tp import inputs_for, inspect as inspect_commands, need_numpy

GRAY = "com.vivantecorp.extension.evis.pre_process_gray_copy_U8toF16"
LAYERS = (GRAY, "TensorSub", "TensorMul", "PReluLayer")
NAMES = [n.encode() for n in LAYERS]


def f32(v):
    return struct.unpack("<f", struct.pack("<I", v))[0]


class Shader:
    """One SH operation's images and constants, decoded from the bytes."""

    def __init__(self, m, o):
        self.n, self.layer = o["record_index"], o["layer_name"]
        u = uniforms(m.data, m.doc, o)
        self.v = v = {a: u[a][0] for a in u}
        pat = {p["dest_offset"]: p for p in m.doc["patches"] if p["operation"] == self.n and p["type"] == 0}
        self.imgs, self.consts = [], {}
        for base in (0x36000, 0x36020, 0x36040):
            p = pat.get(u[base][1]) if base in u else None
            if p is None:
                continue
            if p["source_type_name"].startswith("MISC_DYNA"):
                self.consts[base] = m.lcd(p["index"], patched_offset(m.doc, p, v[base]))
                continue
            io = p["source_type_name"] in ("INPUT", "OUTPUT")
            self.imgs.append(dict(region=(p["source_type_name"], p["index"] if io else -1),
                                  off=patched_offset(m.doc, p, v[base]), x=v[base + 8] & 0xffff,
                                  y=v[base + 8] >> 16, row=v[base + 4], slice=v[base + 0x10],
                                  z=v[base + 0x14], esize=1 << (v[base + 0xc] & 3)))
        if self.layer == GRAY:  # four int32 parameters through MISC_DYNA_GENERIC patches
            self.params = [struct.unpack("<I", m.lcd(pat[u[a][1]]["index"], 0)[:4])[0]
                           for a in (0x36040, 0x36044, 0x36048, 0x3604c)]

    def reference(self, inp):
        """numpy's output values of the input image inp (a [z][y][x] array)."""
        import numpy as np
        v = self.v
        if self.layer == GRAY:
            return inp.astype(np.float16)
        if self.layer == "TensorSub":
            k = float(np.frombuffer(self.consts[0x36020][:2], np.float16)[0])
            q = inp.astype(np.float64) * f32(v[0x36064]) + k * f32(v[0x36068])
        elif self.layer == "TensorMul":
            c = int(np.frombuffer(self.consts[0x36020][:1], np.int8)[0])
            q = inp.astype(np.float64) * c / 2.0 ** (v[0x3608c] & 0x1f)
        else:
            a = np.frombuffer(self.consts[0x36020][:2 * inp.shape[1]], np.float16).astype(np.float64)
            x = inp.astype(np.float64)
            # the in_fl < out_fl layout (0x55555555 at 0x36060): the multiplier at 0x360e0
            m = v[0x360e0] if v[0x36060] == 0x55555555 else 1
            q = np.where(x >= 0, x, x * a[None, :, None]) * m / 2.0 ** (v[0x3607c] & 0x1f)
        return np.clip(np.rint(q), -128, 127).astype(np.int8)


class Model:
    def __init__(self, nbg, path):
        self.path, self.name, self.nbg = path, os.path.basename(path), nbg
        self.doc = inspect(nbg, path)
        self.cmd = inspect_commands(nbg, path)
        self.data = open(path, "rb").read()
        self.lines = plan_lines(nbg, path)
        self.sh = {}
        # the constants these shaders read sit in the LCDT (v1); a file
        # without one (the A733 v2 files) runs its TensorMul shaders as the
        # fp16 elementwise ones, which cpu-ops and cpu-int16 judge
        self.elsewhere = not any(t["name"] == "LCDT" for t in self.doc["tables"])
        for o in self.doc["operations"]:
            if o["type_name"] == "SH" and o["layer_name"] in LAYERS and not self.elsewhere:
                rest = self.lines.get(o["record_index"], ("?", "?", ""))[2]
                # the uint8 product of two images (the face-age files,
                # "x0 x x1") is test cpu-age's
                if rest.endswith("execute " + LABEL) and " x0 x x1 " not in rest:
                    self.sh[o["record_index"]] = Shader(self, o)

    def lcd(self, index, offset):
        t = [t for t in self.doc["tables"] if t["name"] == "LCDT"][0]
        e = t["entries"][index]
        return self.data[t["data_offset"] + e["offset"] + offset:t["data_offset"] + e["offset"] + e["size"]]


def image(buf, img, dtype):
    """The [z][y][x] image img of buf, elements of dtype."""
    import numpy as np
    out = np.zeros((img["z"], img["y"], img["x"]), dtype)
    w = img["x"] * img["esize"]
    for z in range(img["z"]):
        for y in range(img["y"]):
            a = img["off"] + z * img["slice"] + y * img["row"]
            out[z, y] = np.frombuffer(buf[a:a + w].tobytes(), dtype)
    return out


def compare(q, before, after, failures, what):
    """after's output image against numpy's of before's input; every other
    byte unchanged.  The values compared."""
    import numpy as np
    i, o = q.imgs[0], q.imgs[-1]
    inp = image(before[i["region"]], i, {GRAY: np.uint8, "TensorSub": np.float16}.get(q.layer, np.int8))
    want = q.reference(inp)
    got = image(after[o["region"]], o, want.dtype)
    if not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
        bad = tuple(np.argwhere(got.view(np.uint8).reshape(got.shape + (-1,)) !=
                                want.view(np.uint8).reshape(want.shape + (-1,)))[0][:3])
        failures.append("%s: %s output differs from numpy's in %d values (first at [z, y, x] = %s: %s, "
                        "numpy %s)" % (what, q.layer, int((got != want).sum()), list(map(int, bad)),
                                       got[bad], want[bad]))
    # every byte outside the output image: unchanged
    mask = {k: np.ones(len(b), bool) for k, b in before.items()}
    for z in range(o["z"]):
        for y in range(o["y"]):
            a = o["off"] + z * o["slice"] + y * o["row"]
            mask[o["region"]][a:a + o["x"] * o["esize"]] = False
    for k, b in before.items():
        if not np.array_equal(b[mask[k]], after[k][mask[k]]):
            failures.append("%s: bytes outside the output changed in %s_%d" % (what, k[0], k[1]))
    return want.size


def check_recovery(models, failures, figures):
    import numpy as np
    slopes, shifts, notes = [], {}, []
    for m in models:
        ops = {o["operation"]: o for o in m.cmd["commands"]["operations"]}
        gray = [q for q in m.sh.values() if q.layer == GRAY]
        for k, q in enumerate(sorted(gray, key=lambda q: q.n)):
            i, o = q.imgs
            if q.params != [0x8000, 0x8000, 0, 0] or f32(q.v[0x36050]) != 0 or f32(q.v[0x36054]) != 1:
                failures.append("%s op %d: gray parameters %s, mean %g, scale %g" %
                                (m.name, q.n, q.params, f32(q.v[0x36050]), f32(q.v[0x36054])))
            first = gray[0].imgs[1]["off"] if k == 0 else first
            if i["off"] != k * i["slice"] or o["off"] != first + k * o["slice"] or \
                    o["slice"] != 2 * i["x"] * i["y"]:
                failures.append("%s op %d: gray copy %d of plane at %d into %d: not consecutive planes" %
                                (m.name, q.n, k, i["off"], o["off"]))
        for q in m.sh.values():
            if q.layer == "TensorSub":
                k = float(np.frombuffer(q.consts[0x36020][:2], np.float16)[0])
                notes.append("%s op %d: x x %g + %g x %g" % (m.name, q.n, f32(q.v[0x36064]), k,
                                                            f32(q.v[0x36068])))
                if gray and q.imgs[0]["x"] * q.imgs[0]["y"] != sum(g.imgs[1]["x"] * g.imgs[1]["y"] for g in gray):
                    failures.append("%s op %d: the subtraction does not read the copies' whole image" %
                                    (m.name, q.n))
            if q.layer == "TensorMul":
                notes.append("%s op %d: x x %d / 2^%d" % (m.name, q.n, np.frombuffer(q.consts[0x36020][:1],
                                                                                     np.int8)[0],
                                                            q.v[0x3608c] & 0x1f))
            if q.layer != "PReluLayer":
                continue
            i, o = q.imgs
            s = np.frombuffer(q.consts[0x36020][:2 * i["y"]], np.float16)
            slopes += list(s.astype(np.float64))
            k = "x %d" % q.v[0x360e0] if q.v[0x36060] == 0x55555555 else "/ 2^%d" % (q.v[0x3607c] & 0x1f)
            shifts[k] = shifts.get(k, 0) + 1
            prev, nxt = ops.get(q.n - 1), ops.get(q.n + 1)
            for what, op, ref, img in (("before", prev, "output_ref", i), ("after", nxt, "input_ref", o)):
                r = op and op[ref]
                if not r or (r["source_type_name"], r["offset"]) != (img["region"][0], img["off"]):
                    failures.append("%s op %d: PReLU image at %s+%d is not the operation %s's" %
                                    (m.name, q.n, img["region"][0], img["off"], what))
    for n in notes:
        figures.append("recovery: " + n)
    if slopes:
        a = np.array(slopes)
        figures.append("recovery: %d PReLU shaders, factors %s, %d slopes from %.3f to %.3f (median "
                       "%.3f, %d negative); images at the neighbouring operations' addresses" %
                       (sum(shifts.values()), dict(sorted(shifts.items())), a.size, a.min(), a.max(),
                        float(np.median(a)), int((a < 0).sum())))


def fill(rng, size, trial):
    import numpy as np
    if trial == 0:
        return rng.integers(0, 256, size, dtype=np.uint8)
    return rng.choice(np.array([0x80, 0xff, 0, 0x7f], np.uint8), size)


def check_per_op(refop, models, tmp, failures, figures):
    import numpy as np
    rng = np.random.default_rng(61)
    runs = values = 0
    for m in models:
        jobs = []
        for n, q in sorted(m.sh.items()):
            for trial in range(2):
                ind, outd = tempfile.mkdtemp(dir=tmp), tempfile.mkdtemp(dir=tmp)
                before = {k: fill(rng, size, trial) for k, size in region_sizes(m.doc).items()}
                if q.layer == "TensorSub":  # finite halves, -300..300: every sum saturating or not
                    i = q.imgs[0]
                    h = rng.uniform(-300, 300, i["x"] * i["y"] * i["z"]).astype(np.float16)
                    h[::7] = np.rint(h[::7])  # integers: ties
                    buf = before[i["region"]]
                    w = 2 * i["x"]
                    for z in range(i["z"]):
                        for y in range(i["y"]):
                            a = i["off"] + z * i["slice"] + y * i["row"]
                            k = (z * i["y"] + y) * i["x"]
                            buf[a:a + w] = np.frombuffer(h[k:k + i["x"]].tobytes(), np.uint8)
                for k, b in before.items():
                    b.tofile(os.path.join(ind, "%s_%d.bin" % k))
                jobs.append((n, ind, outd, before, q, trial))
        r = ref_op_runs(refop, m.path, [j[:3] for j in jobs])
        if r.returncode != 0:
            failures.append("%s: nbg-cpu-ref-op exit %d: %s %s" % (m.name, r.returncode, r.stdout, r.stderr))
            continue
        for n, ind, outd, before, q, trial in jobs:
            after = {k: np.fromfile(os.path.join(outd, "%s_%d.bin" % k), dtype=np.uint8) for k in before}
            values += compare(q, before, after, failures, "%s op %d trial %d" % (m.name, n, trial))
            runs += 1
    figures.append("per operation: %d runs of %d executed shaders on synthesized buffers, %d values equal "
                   "numpy's" % (runs, sum(len(m.sh) for m in models), values))


def check_model_data(dumper, models, tmp, failures, figures):
    import numpy as np
    for m in models:
        refused = [n for n, (_, _, rest) in m.lines.items() if ": refused " in rest]
        stop = min(refused) if refused else max(m.lines) + 1
        ops = sorted(n for n in m.sh if n < stop)
        if not ops:
            figures.append("model data: %s: no executed shader before op %d, the first refused" % (m.name, stop))
            continue
        paths = inputs_for(m.cmd, tmp, 62)
        prefetch(dumper, m.path, [n + d for n in ops for d in (0, 1)], paths, tmp)
        values = 0
        for n in ops:
            q = m.sh[n]
            before, after = dump(dumper, m.path, n, paths, tmp), dump(dumper, m.path, n + 1, paths, tmp)
            values += compare(q, before, after, failures, "%s op %d (own data)" % (m.name, n))
        o = m.sh[ops[-1]].imgs[-1]
        last = image(after[o["region"]], o, np.int8).astype(np.int64).reshape(-1, o["x"])
        figures.append("model data: %s: %d shaders before op %d (the first refused) on what the operations "
                       "before them wrote, %d values equal numpy's; op %d's output: %.2f %% saturated, "
                       "%.1f %% zero, %d of %d rows constant, standard deviation %.2f codes" %
                       (m.name, len(ops), stop, values, ops[-1], 100 * np.isin(last, (-128, 127)).mean(),
                        100 * (last == 0).mean(), int((last.std(1) == 0).sum()), last.shape[0], last.std()))


def main():
    argv, tier = tier_of(sys.argv)
    if len(argv) != 5 or argv[3] != "--corpus":
        sys.exit("usage: check_cpu_shpre.py NBG REFOP --corpus DIR [--tier corpus|slow]")
    nbg, refop, corpus = argv[1], argv[2], argv[4]
    dumper = os.path.join(os.path.dirname(os.path.abspath(refop)), "nbg-cpu-dump")
    from tc_corpus import need
    need("check_cpu_shpre", "the pre-processing and PReLU shader checks", corpus)
    need_numpy("check_cpu_shpre")
    failures, figures = [], []
    models = []
    for path in sorted(glob.glob(os.path.join(corpus, "v*", "*.nb"))):
        with open(path, "rb") as f:
            data = f.read()
        if not any(n + b"\0" in data for n in NAMES):
            continue
        m = Model(nbg, path)
        if m.sh:
            models.append(m)
            continue
        if m.elsewhere:
            print("not judged here: %s: no LCDT; its %s shaders are the fp16 elementwise ones "
                  "(cpu-ops sh-mul-fp16, cpu-int16)" %
                  (m.name, "/".join(sorted({ly for ly, _, _ in m.lines.values() if ly in LAYERS}))))
            continue
        why = sorted({rest.split(": refused ")[1].split(":")[0] for n, (layer, _, rest) in m.lines.items()
                      if layer in LAYERS and ": refused " in rest})
        if why:
            print("not judged: %s: none of its %s shaders is executed (%s)" %
                  (m.name, "/".join(sorted({ly for ly, _, _ in m.lines.values() if ly in LAYERS})),
                   ", ".join(why)))
    if not models:
        failures.append("no corpus file has an executed gray copy, TensorSub, TensorMul or PReLU shader")
    with tempfile.TemporaryDirectory() as tmp:
        if in_tier(tier, "corpus"):
            check_recovery(models, failures, figures)
            check_per_op(refop, models, tmp, failures, figures)
        if in_tier(tier, "slow"):  # the model up to its first refusal: seconds, under ten under ASan
            check_model_data(dumper, models, tmp, failures, figures)
    finish(figures, failures)


if __name__ == "__main__":
    main()
