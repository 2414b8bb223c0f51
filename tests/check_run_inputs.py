#!/usr/bin/env python3
"""nbg run's inputs as users have them, and many inputs in one run, on the
corpus LeNet (v1/1000f_ee_lenet_model.nb) with the V853 board's input
(goldens/v853-lenet/input_0.dat, beside the corpus):

- PNG: grey with alpha, 16-bit, palette with tRNS, each against the bytes
  derived from its samples.
- PNG: a grey 28x28 PNG written here from the board input's raw bytes
  (zlib and struct, no image library) gives the raw input's output, byte
  for byte, with --scale the input record's own scale (read from nbg
  inspect --json: the pixels are then the stored values, as the board's
  input was made); nbg tensor converts it to exactly the raw bytes.
- JPEG: a colour 56x40 JPEG made by cjpeg; nbg tensor's conversion to the
  28x28 grey input is checked against an independent one: djpeg's
  -grayscale PGM (libjpeg-turbo-progs: the same library, but its own
  program and colour conversion), resized by numpy here (bilinear,
  half-pixel centres), scaled and quantized by the record's formula.
- Colour: the first corpus input of each 3-channel layout (NHWC, NCHW),
  found by its shape, gets a 64x48 RGB PNG and its cjpeg JPEG with
  --channel-order bgr and per-channel --mean/--scale; nbg tensor's bytes
  equal numpy's resize of the PNG's pixels, resp. djpeg's PPM, quantized by
  the record's formula.
- --batch with three inputs gives the .bin and .npy files three single
  runs give, byte for byte, with --jobs 1 and --jobs 2; --labels names the
  top classes.
- Bad input: a cut PNG, a cut JPEG, garbage named .png, an image declaring
  40000x40000 pixels, --mean with a raw input, a batch with a broken entry
  and a name with a control character (the others still run, exit 1), and
  in each failure no output file is left.

With --synthesized MKHOSTILE instead of --corpus (suite quick, no corpus):
a synthesized model of two 16-byte inputs whose output is its first
(nbg-cpu-hostile copy-2in): --batch takes a folder per run, its files in
name order, so each output is the bytes of the folder's first file; a
folder with one file too few and one with a wrong-size file fail with their
codes while the others run (exit 1); OUTDIR inside DIR is no entry;
--jobs 3 writes what --jobs 1 writes; the progress line is drawn on a
terminal (a pseudo-terminal here) and never in a pipe.

Exit 77 (SKIP) when the corpus file, the board's input, djpeg/cjpeg or
numpy are missing, saying which.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
DEBIAN_PYTHON = "/usr/bin/python3"


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


from exe_wrapper import command

try:
    import numpy as np
except ImportError as e:
    if os.path.exists(DEBIAN_PYTHON) and not os.environ.get("NBG_INPUTS_REEXEC"):
        os.environ["NBG_INPUTS_REEXEC"] = "1"
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
    skip("needs numpy (scripts/setup.sh installs python3-numpy): %s" % e)

NBG = command(sys.argv[1])  # with the cross build's emulator, where there is one
CORPUS = sys.argv[sys.argv.index("--corpus") + 1] if "--corpus" in sys.argv else None
MKHOSTILE = (command(sys.argv[sys.argv.index("--synthesized") + 1]) if "--synthesized" in sys.argv
             else None)
MODEL = os.path.join(CORPUS or "", "v1", "1000f_ee_lenet_model.nb")
BOARD = os.path.join(os.path.dirname(os.path.abspath(CORPUS or ".")), "goldens", "v853-lenet",
                     "input_0.dat")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def nbg(*args):
    return subprocess.run(NBG + [str(a) for a in args], capture_output=True, text=True)


def png(path, w, h, rows, ctype=0, depth=8, extra=()):
    """A PNG of the rows given (filter 0), extra chunks (type, data) before IDAT."""
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    ihdr = struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, 0)
    data = zlib.compress(b"".join(b"\0" + r for r in rows))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + b"".join(chunk(t, d) for t, d in extra) +
                chunk(b"IDAT", data) + chunk(b"IEND", b""))


def png_kinds(t, model, s_rec):
    """Grey with alpha, 16-bit grey, a palette with transparency: each 28x28
    PNG to LeNet's grey input (no resize) equals the bytes derived here:
    8-bit samples as stored, 16-bit k*257 read as k, alpha composed onto
    black as (v*a + 127) // 255, grey palette entries as their value."""
    rng = np.random.default_rng(11)
    g = rng.integers(0, 256, (28, 28), dtype=np.uint8)
    a = rng.integers(0, 256, (28, 28), dtype=np.uint8)
    cases = []
    p = os.path.join(t, "ga.png")
    png(p, 28, 28, [np.stack([g[y], a[y]], 1).tobytes() for y in range(28)], ctype=4)
    cases.append((p, "8-bit grey + alpha", (g.astype(int) * a + 127) // 255))
    p = os.path.join(t, "g16.png")
    png(p, 28, 28, [(g[y].astype(">u2") * 257).tobytes() for y in range(28)], depth=16)
    cases.append((p, "16-bit grey", g.astype(int)))
    p = os.path.join(t, "pal.png")
    idx = g % 16
    plte = bytes(v for i in range(16) for v in (i * 17,) * 3)
    trns = bytes(255 - i * 8 for i in range(16))
    png(p, 28, 28, [idx[y].astype(np.uint8).tobytes() for y in range(28)], ctype=3,
        extra=((b"PLTE", plte), (b"tRNS", trns)))
    cases.append((p, "palette + tRNS", (idx.astype(int) * 17 * (255 - idx * 8) + 127) // 255))
    for path, what, want in cases:
        out = path + ".bin"
        r = nbg("tensor", "--model", model, "--input", "0", path, "--scale", repr(s_rec), "-o", out)
        got = np.frombuffer(read(out), np.uint8).reshape(28, 28).astype(int) if r.returncode == 0 else None
        diff = int(np.abs(got - want).max()) if got is not None else -1
        check(diff == 0, "PNG %s: the bytes derived from its samples (largest difference %d)" % (what, diff))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def outputs(d):
    return {n: read(os.path.join(d, n)) for n in sorted(os.listdir(d)) if n != "summary.json"}


def bilinear(img, oh, ow):
    """img (h, w, c) float64 resized with half-pixel centres, edges clamped."""
    def coords(n_out, n_in):
        x = np.maximum((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0)
        i0 = np.minimum(np.floor(x).astype(int), n_in - 1)
        return i0, np.minimum(i0 + 1, n_in - 1), np.where(i0 >= n_in - 1, 0, x - i0)
    y0, y1, fy = coords(oh, img.shape[0])
    x0, x1, fx = coords(ow, img.shape[1])
    fx = fx[None, :, None]
    top = img[y0][:, x0] * (1 - fx) + img[y0][:, x1] * fx
    bot = img[y1][:, x0] * (1 - fx) + img[y1][:, x1] * fx
    return top * (1 - fy[:, None, None]) + bot * fy[:, None, None]


def quantize(v, q, fmt):
    """float32 values -> the record's integers, by tensor.h's formulas."""
    v = v.astype(np.float32).astype(np.float64)
    lo, hi = {"UINT8": (0, 255), "INT8": (-128, 127), "INT16": (-32768, 32767)}[fmt]
    if q["interpretation"] == "affine":
        r = np.round(v / np.float64(np.float32(q["scale"]))) + q["zero_point"]
    else:
        r = np.round(v * 2.0 ** q["fixed_point_position"])
    return np.clip(r, lo, hi), {"UINT8": "u1", "INT8": "i1", "INT16": "<i2"}[fmt]


def colour(t):
    """A 64x48 RGB PNG to the first corpus input of each 3-channel layout
    (NHWC, NCHW) that is 8- or 16-bit quantized: --channel-order bgr,
    per-channel --mean and --scale, against numpy."""
    rng = np.random.default_rng(7)
    img = (rng.random((48, 64, 3)) * 255).astype(np.uint8)
    path = os.path.join(t, "rgb.png")
    png(path, 64, 48, [img[y].tobytes() for y in range(48)], ctype=2)
    with open(os.path.join(t, "rgb.ppm"), "wb") as f:
        f.write(b"P6 64 48 255\n" + img.tobytes())
    jpg = os.path.join(t, "rgb.jpg")
    with open(jpg, "wb") as f:
        subprocess.run(["cjpeg", "-quality", "85", os.path.join(t, "rgb.ppm")], stdout=f, check=True)
    ppm = subprocess.run(["djpeg", "-pnm", jpg], capture_output=True, check=True).stdout.split(b"\n", 3)
    decoded = np.frombuffer(ppm[3], np.uint8).reshape(48, 64, 3)
    mean, scale = np.array([127.5, 120.0, 100.0]), np.array([0.0078125, 0.007, 0.006])
    found = {}
    for sub in ("v2", "v1"):  # a v2 file first where one fits
        for name in sorted(os.listdir(os.path.join(CORPUS, sub))):
            f = os.path.join(CORPUS, sub, name)
            r = nbg("inspect", "--json", f)
            if r.returncode != 0 or not name.endswith(".nb"):
                continue
            i = json.loads(r.stdout)["inputs"][0]
            d = i["dimensions_outermost_first"]
            fmt, q = i["data_format_name"], i["quantization"]
            if len(d) != 4 or d[0] != 1 or fmt not in ("UINT8", "INT8", "INT16") or \
                    q["interpretation"] not in ("affine", "dynamic_fixed_point"):
                continue
            kind = "nhwc" if d[3] == 3 and d[1] != 3 else "nchw" if d[1] == 3 and d[3] != 3 else None
            if kind and kind not in found:
                found[kind] = (f, d, fmt, q)
    for kind in ("nhwc", "nchw"):
        if kind not in found:
            print("note: no corpus input is %s with 3 channels: that layout is not checked" % kind)
            continue
        f, d, fmt, q = found[kind]
        h, w = (d[1], d[2]) if kind == "nhwc" else (d[2], d[3])
        for src, pixels, what in ((path, img, "PNG"), (jpg, decoded, "JPEG (djpeg's RGB)")):
            res = bilinear(pixels.astype(np.float64)[:, :, ::-1], h, w)
            want, dt = quantize((res - mean) * scale, q, fmt)
            if kind == "nchw":
                want = want.transpose(2, 0, 1)
            out = os.path.join(t, "rgb-%s.bin" % kind)
            r = nbg("tensor", "--model", f, "--input", "0", src, "--channel-order", "bgr",
                    "--mean", ",".join(map(repr, mean)), "--scale", ",".join(map(repr, scale)),
                    "-o", out)
            got = np.frombuffer(read(out), dtype=dt).reshape(want.shape) if r.returncode == 0 else None
            diff = int(np.abs(got.astype(int) - want.astype(int)).max()) if got is not None else -1
            check(diff == 0, "%s (%s %s %s): 64x48 RGB %s, bgr, per-channel mean and scale, "
                  "equal to numpy's (largest difference %d)"
                  % (os.path.basename(f), kind, d, fmt, what, diff))


def on_terminal(args):
    """nbg with its standard error on a pseudo-terminal: (exit code, what
    the terminal showed)."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen(NBG + args, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return p.wait(), seen.decode(errors="replace")


def synthesized():
    t = tempfile.mkdtemp(prefix="nbg-batch-")
    try:
        model = os.path.join(t, "two.nb")
        subprocess.run(MKHOSTILE + ["copy-2in", model], check=True)
        bd = os.path.join(t, "in")
        want = {}
        for k in range(4):
            d = os.path.join(bd, "entry%d" % k)
            os.makedirs(d)
            first = bytes((k * 16 + i) & 0xFF for i in range(16))
            with open(os.path.join(d, "1.bin"), "wb") as f:
                f.write(first)
            with open(os.path.join(d, "2.bin"), "wb") as f:
                f.write(b"\xee" * 16)
            want["entry%d" % k] = first
        os.remove(os.path.join(bd, "entry1", "2.bin"))          # one input too few
        with open(os.path.join(bd, "entry2", "2.bin"), "wb") as f:
            f.write(b"\xee" * 15)                              # one byte short
        open(os.path.join(bd, "stray.bin"), "w").close()       # a file: no entry
        out = os.path.join(bd, "out")                          # OUTDIR inside DIR
        run = ["run", "--backend", "cpu", model, "--batch", bd]
        r = nbg(*run, "--output-dir", out)
        check(r.returncode == 1 and sorted(os.listdir(out)) == ["entry0", "entry3"] and
              all(read(os.path.join(out, n, "output_0.bin")) == want[n] for n in ("entry0", "entry3")),
              "folders: each output is its folder's first file; the two bad folders leave nothing")
        check("input-count-mismatch" in r.stderr and "input-size-mismatch" in r.stderr and
              "4 folders: 2 ran, 2 failed, 2 skipped" in r.stdout,
              "the bad folders' codes are said; the summary counts them; OUTDIR and the file "
              "are skipped")
        out3 = os.path.join(t, "out3")
        r3 = nbg(*run, "--output-dir", out3, "--jobs", "3")
        check(r3.returncode == 1 and sorted(os.listdir(out3)) == ["entry0", "entry3"] and
              all(read(os.path.join(out3, n, "output_0.bin")) == want[n] for n in ("entry0", "entry3")),
              "--jobs 3 writes what --jobs 1 writes, exit 1 the same")
        check("\r" not in r.stderr, "no progress line in a pipe")
        rc, shown = on_terminal(run + ["--output-dir", out])
        check(rc == 1 and "[4/4]" in shown and "\r" in shown, "the progress line on a terminal")
        r = nbg("run", "--backend", "cpu", model, "--batch", bd, "--jobs", "2", "--output-dir",
                os.path.join(t, "x"), "--golden", model)
        check(r.returncode == 2, "--batch with --golden: usage, exit 2")
    finally:
        shutil.rmtree(t)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


def main():
    if MKHOSTILE:
        return synthesized()
    for p in (MODEL, BOARD):
        if not os.path.exists(p):
            skip("%s is missing" % p)
    for tool in ("cjpeg", "djpeg"):
        if not shutil.which(tool):
            skip("%s is missing (scripts/setup.sh installs libjpeg-turbo-progs)" % tool)
    rec = json.loads(nbg("inspect", "--json", MODEL).stdout)["inputs"][0]["quantization"]
    s_rec = rec["scale"]
    raw = read(BOARD)
    t = tempfile.mkdtemp(prefix="nbg-inputs-")
    try:
        png(os.path.join(t, "digit.png"), 28, 28, [raw[i * 28:(i + 1) * 28] for i in range(28)])
        run = ["run", "--backend", "cpu", MODEL]
        r = nbg("tensor", "--model", MODEL, "--input", "0", os.path.join(t, "digit.png"),
                "--scale", repr(s_rec), "-o", os.path.join(t, "digit.bin"))
        check(r.returncode == 0 and read(os.path.join(t, "digit.bin")) == raw,
              "nbg tensor: the PNG of the board's input is its 784 raw bytes")
        a = nbg(*run, "--input", BOARD, "--output-dir", os.path.join(t, "raw"))
        b = nbg(*run, "--input", os.path.join(t, "digit.png"), "--scale", repr(s_rec),
                "--output-dir", os.path.join(t, "png"))
        check(a.returncode == 0 and b.returncode == 0 and
              outputs(os.path.join(t, "raw")) == outputs(os.path.join(t, "png")),
              "nbg run: the PNG gives the raw input's output_0.bin and .npy byte for byte")
        c = nbg(*run, "--input", os.path.join(t, "digit.png"), "--output-dir", os.path.join(t, "clip"))
        check(c.returncode == 0 and "clipped" in c.stderr and "--scale" in c.stderr,
              "without --scale, the clipped pixels are said, with the --scale to give")

        # JPEG against djpeg + numpy
        rng = np.random.default_rng(44)
        img = (rng.random((40, 56, 3)) * 255).astype(np.uint8)
        with open(os.path.join(t, "c.ppm"), "wb") as f:
            f.write(b"P6 56 40 255\n" + img.tobytes())
        jpg = os.path.join(t, "c.jpg")
        with open(jpg, "wb") as f:
            subprocess.run(["cjpeg", "-quality", "90", os.path.join(t, "c.ppm")], stdout=f, check=True)
        pgm = subprocess.run(["djpeg", "-grayscale", "-pnm", jpg], capture_output=True, check=True).stdout
        head = pgm.split(b"\n", 3)
        check(head[0] == b"P5" and head[1] == b"56 40" and head[2] == b"255", "djpeg wrote a 56x40 PGM")
        grey = np.frombuffer(head[3], dtype=np.uint8).reshape(40, 56).astype(np.float64)

        res = bilinear(grey[:, :, None], 28, 28)[:, :, 0]
        want, _ = quantize(res * (1 / 255.0), {"interpretation": "affine", "scale": s_rec,
                                               "zero_point": 0}, "UINT8")
        r = nbg("tensor", "--model", MODEL, "--input", "0", jpg, "--scale", repr(1 / 255.0),
                "-o", os.path.join(t, "c.bin"))
        got = np.frombuffer(read(os.path.join(t, "c.bin")), dtype=np.uint8).reshape(28, 28) \
            if r.returncode == 0 else None
        diff = int(np.abs(got.astype(int) - want.astype(int)).max()) if got is not None else -1
        check(diff == 0, "JPEG 56x40 colour -> 28x28 grey: the converted bytes equal djpeg + "
              "numpy's (largest difference %d)" % diff)
        r = nbg(*run, "--input", jpg, "--scale", repr(1 / 255.0), "--output-dir", os.path.join(t, "jpg"))
        check(r.returncode == 0, "nbg run takes the JPEG")

        colour(t)
        png_kinds(t, MODEL, s_rec)

        # --batch == three single runs
        bd = os.path.join(t, "batch")
        os.mkdir(bd)
        shutil.copy(os.path.join(t, "digit.png"), os.path.join(bd, "a.png"))
        shutil.copy(BOARD, os.path.join(bd, "b.dat"))
        shutil.copy(jpg, os.path.join(bd, "c.jpg"))
        open(os.path.join(bd, ".hidden"), "w").close()
        singles = {}
        for n in ("a.png", "b.dat", "c.jpg"):
            scale = [] if n.endswith(".dat") else ["--scale", repr(s_rec)]
            r = nbg(*run, "--input", os.path.join(bd, n), *scale,
                    "--output-dir", os.path.join(t, "single-" + n))
            singles[n] = outputs(os.path.join(t, "single-" + n))
        labels = os.path.join(t, "labels.txt")
        with open(labels, "w") as f:
            f.write("".join("digit %d\n" % i for i in range(10)))
        for jobs in ("1", "2"):
            out = os.path.join(t, "out-" + jobs)
            r = nbg(*run, "--batch", bd, "--scale", repr(s_rec), "--jobs", jobs, "--labels", labels,
                    "--output-dir", out)
            same = r.returncode == 0 and sorted(os.listdir(out)) == ["a.png", "b.dat", "c.jpg"] and \
                all(outputs(os.path.join(out, n)) == singles[n] for n in singles)
            check(same, "--batch --jobs %s: three entries, each's outputs those of its single run" % jobs)
            check("3 ran, 0 failed, 1 skipped" in r.stdout and "digit 0" in r.stdout,
                  "--jobs %s: the summary counts them, --labels names the top class" % jobs)

        # bad input: a code, a sentence, nothing written
        cut_png = os.path.join(t, "cut.png")
        with open(cut_png, "wb") as f:
            f.write(read(os.path.join(t, "digit.png"))[:100])
        cut_jpg = os.path.join(t, "cut.jpg")
        with open(cut_jpg, "wb") as f:
            f.write(read(jpg)[:len(read(jpg)) // 2])
        bad = os.path.join(t, "bad.png")
        with open(bad, "wb") as f:
            f.write(b"not an image\n")
        huge = os.path.join(t, "huge.png")
        png(huge, 40000, 40000, [b"\0" * 40000])  # one row of 40000: the header is what counts
        for path, code in ((cut_png, "image-invalid"), (cut_jpg, "image-invalid"),
                           (bad, "image-invalid"), (huge, "image-too-large")):
            out = os.path.join(t, "bad-out")
            r = nbg(*run, "--input", path, "--scale", "1", "--output-dir", out)
            check(r.returncode == 1 and code in r.stderr and not os.path.exists(out),
                  "%s: exit 1, %s, nothing written" % (os.path.basename(path), code))
        r = nbg(*run, "--input", BOARD, "--mean", "3", "--output-dir", os.path.join(t, "x"))
        check(r.returncode == 2 and "image inputs" in r.stderr, "--mean with a raw input: usage, exit 2")
        shutil.copy(cut_jpg, os.path.join(bd, "d.jpg"))
        shutil.copy(BOARD, os.path.join(bd, "e\x01.dat"))
        out = os.path.join(t, "out-bad")
        r = nbg(*run, "--batch", bd, "--scale", repr(s_rec), "--output-dir", out)
        check(r.returncode == 1 and "3 ran, 2 failed" in r.stdout and "batch-name-invalid" in r.stderr
              and sorted(os.listdir(out)) == ["a.png", "b.dat", "c.jpg"],
              "a batch with a cut JPEG and a control character in a name: the others run, "
              "exit 1, no folder for the failed ones")
    finally:
        shutil.rmtree(t)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
