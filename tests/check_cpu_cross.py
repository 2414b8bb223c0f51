#!/usr/bin/env python3
"""The same network compiled for several targets gives the same answer on
the CPU backend.

The corpus holds networks compiled several times: for several targets, by
several toolkit versions (corpus/MANIFEST.tsv).  A family is the files
whose original name (MANIFEST.tsv's file column without its
`<version>_<target>_` prefix) is the same once the trailing tokens naming a
target or a board are dropped (a two-digit hex target such as `88`, `1e`,
or a chip such as `A311D`, `S905D3`): `emotion_88_A311D` and `emotion_7d`
are one family.  Never a list of files: a file added to the corpus joins
its family by its name.

For every family with at least two files that run whole (`nbg run --backend
cpu --check --json`: runs_whole), each such file runs on the same
synthesized inputs (a uniform random image, a smooth pattern with two
rectangles, a ramp), given in the first file's input encoding and, for a file
whose input record quantizes differently, dequantized and quantized again
by its own record.  Each output record is dequantized by its record and
compared with the family's first file (by name): the two must have the same
top-1 (the index of the largest value) where the first file's margin (its
largest value minus its second largest, over its value range) is at least
MARGIN, and every value must lie within TOLERANCE of the first file's value
range.  Those bounds are the CPU backend's own: within one toolkit version
the files are one quantized network, lowered differently per target (NN
or TP fully connected layers, fused or separate additions), and their
outputs differ only by the rounding of intermediate images; across toolkit
versions the quantization itself differs.  Files that do not run whole
are printed with their refusal; families with fewer than two whole-running
files, or whose input or output records cannot be matched, are printed as
not judged, with why.

Tiers (--tier): corpus runs, for each family whose run takes at most
CORPUS_WORK steps (nbg run --check's work), the first and last
whole-running files of its newest compilation with two on the first input;
slow runs every whole-running file of every family on every input, and
compares the compilations' first files with each other (figures only).
No --tier: as slow.

Usage: check_cpu_cross.py NBG DUMP CORPUS_DIR [--tier corpus|slow]   (exit 77,
SKIP, when CORPUS_DIR is absent or Debian's python3-numpy cannot be
imported).
"""
import json
import os
import re
import sys
import tempfile

import check_cpu as cc
from check_weights_lenet import debian_imports

# An output value may differ from the family's first file's by this share
# of that file's value range (the largest difference measured: see
# doc/cpu-backend.md, "Measured agreement: one network across targets").
TOLERANCE = 0.25
# A top-1 is compared where the first file's margin (its largest value
# minus its second) is at least this share of its value range; below it,
# two lowerings of one compilation may rank the two values differently
# (the intermediate images of 0xb9/0xbe and 0x88/0x99/0xa1 differ by up to
# 2 steps, test cpu-shpool), and a disagreement is printed, not failed.
MARGIN = 0.2

# A file that stops at a refused operation: the image that operation reads
# against the one the same layer reads in a whole-running compilation (a
# separate quantization: the 0x10003 image classification file, stopped at
# its fully connected layer until flat_rounding_mode 0 was executed, gave
# 0.9997 against the 0x1000e one, see doc/cpu-backend.md).
MIN_PARTIAL_CORR = 0.99
# The corpus tier's families: a run of at most this much work (nbg run
# --check: the emotion network takes 7.2e7, the gender network 1.2e8, the
# image classification network 7.7e8, minutes under ASan)
CORPUS_WORK = 200000000
# top-1 comparisons made with the margin, over the run
CLEAR = [0]

TARGET_TOKEN = re.compile(r"^([0-9a-f]{2}|[A-Z]+[0-9]+[A-Z0-9]*)$")


def family(name):
    """The family of a MANIFEST.tsv file name (v1/10009_7d_emotion_7d.nb:
    emotion)."""
    stem = os.path.basename(name)
    stem = stem[:-3] if stem.endswith(".nb") else stem
    if name.startswith("v1/"):
        stem = stem.split("_", 2)[2]
    tokens = stem.split("_")
    while len(tokens) > 1 and TARGET_TOKEN.match(tokens[-1]):
        tokens.pop()
    return "_".join(tokens)


def manifest(corpus):
    """[(file name, version)] of MANIFEST.tsv, in its order."""
    rows = []
    with open(os.path.join(corpus, "MANIFEST.tsv")) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            cols = dict(zip(head, line.rstrip("\n").split("\t")))
            rows.append((cols["file"], int(cols["version"], 16)))
    return rows


PLANS = {}


def plan(nbg, path):
    """(runs whole, the refusal's message or "", the run's planned work);
    PLANS[path] keeps the document."""
    r = cc.run([nbg, "run", "--backend", "cpu", "--check", "--json", path])
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        return False, "nbg run --check failed (%d): %s" % (r.returncode, r.stderr.strip()[-200:]), 0
    PLANS[path] = doc
    ref = doc.get("refusal") or {}
    return bool(doc.get("runs_whole")), ref.get("message", ""), doc["totals"]["work"]


def decode(rec, raw):
    """A record's bytes as float64 values, flat; None for a format the test
    does not know."""
    import numpy as np
    q, fmt = rec["quantization"], rec["data_format_name"]
    interp = q.get("interpretation")
    types = {"UINT8": np.uint8, "INT8": np.int8, "INT16": np.int16}
    if fmt == "FP16":
        return np.frombuffer(raw, dtype="<f2").astype(np.float64)
    if fmt == "FP32":
        return np.frombuffer(raw, dtype="<f4").astype(np.float64)
    if fmt not in types:
        return None
    v = np.frombuffer(raw, dtype=types[fmt]).astype(np.float64)
    if interp == "affine":
        return (v - q["zero_point"]) * q["scale"]
    if interp == "dynamic_fixed_point":
        return v * 2.0 ** -q["fixed_point_position"]
    if interp == "none" or interp is None:
        return v
    return None


def encode(rec, values):
    """float values as a record's bytes; None for a format the test does
    not know."""
    import numpy as np
    q, fmt = rec["quantization"], rec["data_format_name"]
    interp = q.get("interpretation")
    if fmt == "FP16":
        return values.astype("<f2").tobytes()
    if fmt == "FP32":
        return values.astype("<f4").tobytes()
    lim = {"UINT8": (0, 255, np.uint8), "INT8": (-128, 127, np.int8), "INT16": (-32768, 32767, np.int16)}
    if fmt not in lim:
        return None
    lo, hi, t = lim[fmt]
    if interp == "affine":
        v = np.round(values / q["scale"]) + q["zero_point"]
    elif interp == "dynamic_fixed_point":
        v = np.round(values * 2.0 ** q["fixed_point_position"])
    elif interp == "none" or interp is None:
        v = np.round(values)
    else:
        return None
    return np.clip(v, lo, hi).astype(t).tobytes()


def patterns(rec):
    """The test's inputs for a record, as values in its encoding's range:
    [uniform random, smooth with two rectangles, ramp], each flat."""
    import numpy as np
    n = rec["element_count"]
    lo = decode(rec, encode(rec, np.array([-1e30])))
    hi = decode(rec, encode(rec, np.array([1e30])))
    lo, hi = (0.0, 1.0) if lo is None or hi is None or rec["data_format_name"] in ("FP16", "FP32") \
        else (float(lo[0]), float(hi[0]))
    rng = np.random.default_rng(2026)
    t = np.arange(n) / max(n - 1, 1)
    smooth = 0.5 + 0.5 * np.sin(40 * t) * np.cos(7 * t)
    smooth[n // 5:n // 3] = 0.9
    smooth[n // 2:2 * n // 3] = 0.1
    units = [rng.random(n), smooth, t]
    return [lo + u * (hi - lo) for u in units]


def records(nbg, paths):
    """{path: (inputs, outputs)} from nbg inspect --json."""
    docs = cc.inspect_many(nbg, paths)
    return {p: (d["inputs"], d["outputs"]) for p, d in docs.items()}


def matchable(recs, first, path):
    """Why path's records cannot be compared with first's, "" when they can."""
    import numpy as np
    (ia, oa), (ib, ob) = recs[first], recs[path]
    if len(ia) != len(ib) or len(oa) != len(ob):
        return "%d inputs, %d outputs against %d and %d" % (len(ib), len(ob), len(ia), len(oa))
    for kind, a, b in (("input", ia, ib), ("output", oa, ob)):
        for x, y in zip(a, b):
            if x["dimensions"] != y["dimensions"] or x["data_format_name"] != y["data_format_name"]:
                return "%s %d is %s %s against %s %s (another quantization or layout of the network; " \
                       "int8 builds are compared with their uint8 twin by test cpu-int8)" % (
                           kind, x["index"], y["data_format_name"], y["dimensions"],
                           x["data_format_name"], x["dimensions"])
            probe = encode(y, np.zeros(1))
            if probe is None or decode(y, probe) is None:
                return "%s %d is %s (%s), an encoding the test does not read" % (
                    kind, y["index"], y["data_format_name"], y["quantization"].get("interpretation"))
    return ""


def run_outputs(nbg, path, recs, values, tmp):
    """The output records' values for one input set (values per input
    record), or the failure's text."""
    ins, outs = recs[path]
    od = tempfile.mkdtemp(dir=tmp)
    args = [nbg, "run", "--backend", "cpu", path, "--output-dir", od]
    for i, (rec, v) in enumerate(zip(ins, values)):
        p = os.path.join(od, "in_%d.bin" % i)
        with open(p, "wb") as f:
            f.write(encode(rec, v))
        args += ["--input", p]
    r = cc.run(args)
    if r.returncode != 0:
        return "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])
    got = []
    for rec in outs:
        with open(os.path.join(od, "output_%d.bin" % rec["index"]), "rb") as f:
            got.append(decode(rec, f.read()))
    return got


def compare(a, b):
    """(top-1 judged, top-1 equal, largest difference over a's range, a's
    margin over its range) of two flat outputs."""
    import numpy as np
    span = float(a.max() - a.min()) or 1.0
    order = np.argsort(a)
    margin = float(a[order[-1]] - a[order[-2]]) / span if a.size > 1 else 1.0
    diff = float(np.abs(a - b).max()) / span
    return margin >= MARGIN, int(a.argmax()) == int(b.argmax()), diff, margin


def judge_group(nbg, name, files, recs, sets, tmp, failures, figures):
    """Runs one compilation's files (one family, one file-format version)
    on the input sets and compares them with its first file; returns the
    first file's outputs per set (None when it fails)."""
    first = files[0]
    refs = [run_outputs(nbg, first, recs, vs, tmp) for vs in sets]
    for r in refs:
        if isinstance(r, str):
            failures.append("%s: %s runs whole by its plan but fails: %s" % (name, rel(first), r))
            return None
    worst, judged, same, equal, total = 0.0, 0, 0, 0, 0
    for path in files[1:]:
        for vs, ref in zip(sets, refs):
            got = run_outputs(nbg, path, recs, vs, tmp)
            if isinstance(got, str):
                failures.append("%s: %s runs whole by its plan but fails: %s" % (name, rel(path), got))
                break
            for k, (a, b) in enumerate(zip(ref, got)):
                ok, eq, diff, margin = compare(a, b)
                worst = max(worst, diff)
                judged += ok
                same += ok and eq
                total += 1
                equal += eq
                if not eq:
                    text = "%s: %s output %d: top-1 %d, %s's %d (margin %.3f of the range)" % (
                        name, rel(path), k, int(b.argmax()), rel(first), int(a.argmax()), margin)
                    (failures if ok else figures).append(text + ("" if ok else ", below the margin"))
                if diff > TOLERANCE:
                    failures.append("%s: %s output %d differs from %s's by %.3f of its range" %
                                    (name, rel(path), k, rel(first), diff))
    if len(files) > 1:
        figures.append("%s: %d files against %s, %d input(s): top-1 equal in %d of %d outputs (%d of %d "
                       "with the margin), largest difference %.4f of the range" %
                       (name, len(files) - 1, rel(first), len(sets), equal, total, same, judged, worst))
        CLEAR[0] += judged
    return refs


def input_sets(recs, first, tier):
    """The input sets, as values: the test's patterns put through the first
    file's input encoding (what every file is then given)."""
    inputs = [patterns(rec) for rec in recs[first][0]]
    sets = []
    for i in range(1 if tier == "corpus" else 3):
        sets.append([decode(rec, encode(rec, inputs[k][i])) for k, rec in enumerate(recs[first][0])])
    return sets


def judge_family(nbg, name, whole, versions, recs, tmp, tier, failures, figures):
    """Judges each compilation of a family (its files of one file-format
    version) with two whole-running files; prints the others.  Outside the
    corpus tier, the compilations' first files are compared with each
    other too, as figures: each toolkit version quantizes anew.  Returns
    the compilations judged."""
    groups = {}
    for p in whole:
        groups.setdefault(versions[p], []).append(p)
    runnable = sorted(v for v in groups if len(groups[v]) >= 2)
    if tier == "corpus":
        runnable = runnable[-1:]
    sets = input_sets(recs, whole[0], tier)
    firsts, judged = [], 0
    for v in sorted(groups):
        label = "%s 0x%x" % (name, v)
        if v in runnable:
            files = [groups[v][0], groups[v][-1]] if tier == "corpus" else groups[v]
            refs = judge_group(nbg, label, files, recs, sets, tmp, failures, figures)
            judged += refs is not None
        elif tier == "corpus":
            continue
        else:
            if len(groups[v]) < 2:
                print("%s: %s not judged within its compilation: the only one of its files that runs whole" %
                      (label, rel(groups[v][0])))
            refs = judge_group(nbg, label, groups[v][:1], recs, sets, tmp, failures, [])
        if refs is not None:
            firsts.append(refs)
    if len(firsts) > 1:
        agree = total = 0
        worst = 0.0
        for refs in firsts[1:]:
            for a_set, b_set in zip(firsts[0], refs):
                for a, b in zip(a_set, b_set):
                    worst = max(worst, compare(a, b)[2])
                    total += 1
                    agree += int(a.argmax()) == int(b.argmax())
        figures.append("%s: its %d compilations' first files against the oldest's: top-1 equal in %d of %d, "
                       "largest difference %.4f of the range (not judged: each quantizes anew)" %
                       (name, len(firsts), agree, total, worst))
    return judged


def read_op_input(nbg, dumper, path, op, values, recs, tmp):
    """The bytes an NN or TP operation reads (its input image, rows and
    slices as its dataflow gives them) after the run up to it, for the
    input values."""
    od = tempfile.mkdtemp(dir=tmp)
    ins = []
    for i, (rec, v) in enumerate(zip(recs[path][0], values)):
        ins.append(os.path.join(od, "in_%d.bin" % i))
        with open(ins[-1], "wb") as f:
            f.write(encode(rec, v))
    bufs = cc.dump(dumper, path, op["operation"], ins, tmp)
    df, (x, y, z) = op["dataflow"], op["input"]
    return cc.read_image(bufs[cc.key(op["input_ref"])], op["input_ref"]["offset"], x, y, z,
                         df["input_row_stride"], df["input_slice_stride"]).ravel()


def judge_partial(nbg, dumper, name, path, whole, versions, recs, tmp, tier, failures, figures):
    """A file that stops at an NN or TP operation, against the oldest
    whole-running file of its family with an operation of the same layer
    name and engine reading as many bytes: the two images, run up to
    there on the same inputs, must correlate at MIN_PARTIAL_CORR or more.
    Returns 1 when judged, 0 when not, None when the refused operation is
    no NN or TP operation (no image of another compilation to compare)."""
    import numpy as np
    first = (PLANS[path].get("first_refused") or {}).get("operation")
    ops = {o["operation"]: o for o in cc.inspect_many(nbg, [path], "--commands")[path]["commands"]["operations"]}
    mine = ops.get(first)
    if mine is None:
        print("%s: %s not judged up to its refusal: operation %s is no NN or TP operation" %
              (name, rel(path), first))
        return None
    allrecs = dict(recs)
    allrecs.update(records(nbg, [path]))
    for other in sorted(whole, key=lambda p: versions[p]):
        if matchable(allrecs, other, path):
            continue
        theirs = [o for o in cc.inspect_many(nbg, [other], "--commands")[other]["commands"]["operations"]
                  if o["layer_name"] == mine["layer_name"] and o["engine"] == mine["engine"] and
                  o["input_bytes"] == mine["input_bytes"]]
        if not theirs:
            continue
        worst, corr = 0, 1.0
        for vs in input_sets(allrecs, other, tier):
            a = read_op_input(nbg, dumper, other, theirs[0], vs, allrecs, tmp)
            b = read_op_input(nbg, dumper, path, mine, vs, allrecs, tmp)
            worst = max(worst, int(np.abs(a - b).max()))
            corr = min(corr, float(np.corrcoef(a, b)[0, 1]) if a.std() and b.std() else float(a.std() == b.std()))
        figures.append("%s: %s, run up to its refused operation %d (layer %s), reads an image correlating "
                       "at %.5f with the one %s's operation %d reads (at most %d steps apart)" %
                       (name, rel(path), first, mine["layer_name"], corr, rel(other), theirs[0]["operation"],
                        worst))
        if corr < MIN_PARTIAL_CORR:
            failures.append("%s: %s up to operation %d correlates at %.4f with %s" %
                            (name, rel(path), first, corr, rel(other)))
        return 1
    print("%s: %s not judged up to its refusal: no whole-running file of its family has an operation of "
          "layer %s reading %d bytes" % (name, rel(path), mine["layer_name"], mine["input_bytes"]))
    return 0


def rel(path):
    return os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))


def start(prog, reexec_env, numpy_why):
    """The arguments NBG DUMP CORPUS_DIR [--tier corpus|slow] of prog (this
    check's or another's over the corpus families), as (nbg, dumper, corpus,
    tier); exits skipped without the corpus's MANIFEST.tsv, re-executed
    under Debian's python3 for numpy (reexec_env guards the re-execution)."""
    argv, tier = cc.tier_of(sys.argv)
    if len(argv) != 4:
        sys.exit("usage: %s.py NBG DUMP CORPUS_DIR [--tier corpus|slow]" % prog)
    nbg, dumper, corpus = argv[1:]
    if not os.path.exists(os.path.join(corpus, "MANIFEST.tsv")):
        print("%s: skipped: %s/MANIFEST.tsv does not exist (meson option corpus_dir)" % (prog, corpus))
        sys.exit(cc.SKIP)
    debian_imports(("numpy",), reexec_env, numpy_why)
    return nbg, dumper, corpus, tier


def main():
    nbg, dumper, corpus, tier = start("check_cpu_cross", "NBG_CROSS_REEXEC",
                                      "the cross-target check needs Debian's python3-numpy")
    groups, versions = {}, {}
    for name, version in manifest(corpus):
        path = os.path.join(corpus, name)
        groups.setdefault(family(name), []).append(path)
        versions[path] = version
    failures, figures, families, partial, tried = [], [], 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(groups):
            members = sorted(groups[name])
            if len(members) < 2:
                continue
            whole, work, stopped = [], {}, []
            for p in members:
                ok, why, work[p] = plan(nbg, p)
                if ok:
                    whole.append(p)
                else:
                    stopped.append(p)
                    print("%s: %s does not run whole: %s" % (name, rel(p), why[:240]))
            if whole and not (tier == "corpus" and work[whole[0]] > CORPUS_WORK):
                recs = records(nbg, whole)
                for p in stopped:
                    r = judge_partial(nbg, dumper, name, p, whole, versions, recs, tmp, tier, failures,
                                      figures)
                    if r is not None:
                        tried += 1
                        partial += r
            if len(whole) < 2:
                print("%s: not judged: %d of its %d files run whole" % (name, len(whole), len(members)))
                continue
            recs = records(nbg, whole)
            bad = [(p, matchable(recs, whole[0], p)) for p in whole[1:]]
            for p, why in bad:
                if why:
                    print("%s: %s not judged: %s" % (name, rel(p), why))
            whole = [whole[0]] + [p for p, why in bad if not why]
            if len(whole) < 2:
                continue
            if tier == "corpus" and work[whole[0]] > CORPUS_WORK:
                print("%s: left to the slow tier: a run takes %d steps of work (corpus tier: at most %d)" %
                      (name, work[whole[0]], CORPUS_WORK))
                continue
            families += judge_family(nbg, name, whole, versions, recs, tmp, tier, failures, figures)
    if families < 2:
        failures.append("%d compilations judged; the corpus has at least two with two whole-running files" %
                        families)
    if tier != "corpus" and tried and not partial:
        failures.append("no file that stops at a refused operation was compared up to it (%d tried)" % tried)
    elif tier != "corpus" and not tried:
        print("no file stops at a refused NN or TP operation in a family with a whole-running file: none "
              "compared up to its refusal")
    if not CLEAR[0]:
        failures.append("no output had a top-1 clear enough to compare (margin %.2f)" % MARGIN)
    cc.finish(figures, failures)


if __name__ == "__main__":
    main()
