#!/usr/bin/env python3
"""int8 kernels against the same network's uint8 kernels on another target.

A corpus file whose NN operations decode int8 kernels is judged against a
file of another target that carries the same network quantized to uint8:
its twin, found by the weights themselves (network names differ between
such compilations), never by a list of files.  The two quantizations of one
float kernel are proportional: per operation, the int8 codes read signed
correlate with the uint8 codes minus their zero point.  A file of another
target is the int8 file's twin when at least 90 % of its decoded int8
operations have an operation of the same shape there correlating at 0.99
or more.  For a twin every int8 operation must then

  - correlate at least 0.95 with its counterpart (a layer's channels may be
    quantized with different steps, which lowers a whole-layer figure);
  - correlate better read signed than read unsigned (the two's complement
    rule) and, for kernels over 1x1, better than with ky and kx swapped;

and per layer correlating at 0.99 or more, the stored int8 bias (the bias
as it is: doc/weights.md) must be the uint8 file's corrected bias times the
channel's weight-step ratio times one constant of the layer (the input
steps' ratio): the median relative spread of that constant over the
channels at most 2 %.  Files with int8 operations and no twin are printed
as not judged.  At least one int8 file must be judged.

Usage: check_weights_int8.py NBG CORPUS_DIR   (exit 77, SKIP, when
CORPUS_DIR is absent or Debian's python3-numpy cannot be imported).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

from exe_wrapper import command

from check_weights_lenet import debian_imports

SKIP = 77


def imports():
    """numpy, from this interpreter or Debian's."""
    debian_imports(("numpy",), "NBG_INT8_REEXEC", "the int8 check needs Debian's python3-numpy")


def nbg_json(nbg, path, out=None):
    args = [*command(nbg), "weights", path] + (["--out", out] if out else ["--json"])
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("nbg weights %s failed (%d): %s" % (path, r.returncode, r.stderr))
    if out:
        with open(os.path.join(out, "weights.json")) as f:
            return json.load(f)
    return json.loads(r.stdout)


def nn_decoded(doc, dtype):
    return [op for op in doc["weights"]["operations"]
            if op["type_name"] == "NN" and op["status"] == "decoded" and op["data_type"] == dtype]


def arrays(out, doc, dtype):
    """[(op, codes as float64 less the zero point, bias)] of one export."""
    import numpy as np
    res = []
    for op in nn_decoded(doc, dtype):
        q = np.load(os.path.join(out, op["files"]["weights"]))
        if dtype == "int8":
            assert q.dtype == np.int8, "%s: int8 codes exported as %s" % (out, q.dtype)
        res.append((op, q.astype(np.float64) - op["zero_point"],
                    np.load(os.path.join(out, op["files"]["bias"])).astype(np.float64)))
    return res


def corr(a, b):
    import numpy as np
    a, b = a.reshape(-1), b.reshape(-1)
    if a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def best_match(op, w, candidates):
    """The same-shaped operation of the other file correlating best."""
    best = None
    for op2, w2, b2 in candidates:
        if op2["shape"] != op["shape"]:
            continue
        c = corr(w, w2)
        if c == c and (best is None or c > best[0]):
            best = (c, op2, w2, b2)
    return best


def bias_spread(w, b, w2, b2):
    """Median relative spread over the channels of b / (k_c b2), k_c the
    channel's least-squares step ratio (w ~ k_c w2); None when too few
    channels carry a bias."""
    import numpy as np
    vals = []
    for c in range(w.shape[0]):
        x, y = w[c].reshape(-1), w2[c].reshape(-1)
        if (y * y).sum() == 0 or abs(b[c]) < 200 or abs(b2[c]) < 200:
            continue
        k = (x * y).sum() / (y * y).sum()
        vals.append(b[c] / (k * b2[c]))
    if len(vals) < 3:
        return None
    vals = np.array(vals)
    m = np.median(vals)
    return float(np.median(np.abs(vals / m - 1)))


def judge(name, a, twin_name, b, failures):
    """Every int8 operation of a against the uint8 file b."""
    import numpy as np
    corrs, spreads = [], []
    for op, w, bias in a:
        m = best_match(op, w, b)
        if m is None:
            failures.append("%s op %d %s: no operation of its shape in %s" %
                            (name, op["operation"], op["shape"], twin_name))
            continue
        c, op2, w2, b2 = m
        corrs.append(c)
        unsigned = corr(np.where(w < 0, w + 256, w), w2)
        if c < 0.95:
            failures.append("%s op %d: correlation %.4f with %s op %d < 0.95" %
                            (name, op["operation"], c, twin_name, op2["operation"]))
        if not unsigned < c:
            failures.append("%s op %d: read unsigned correlates %.4f >= %.4f" %
                            (name, op["operation"], unsigned, c))
        if op["shape"][2] > 1 and op["shape"][2] == op["shape"][3]:
            swapped = corr(w.transpose(0, 1, 3, 2), w2)
            if not swapped < c:
                failures.append("%s op %d: ky/kx swapped correlates %.4f >= %.4f" %
                                (name, op["operation"], swapped, c))
        if c >= 0.99:
            s = bias_spread(w, bias, w2, b2)
            if s is not None:
                spreads.append(s)
                if s > 0.02:
                    failures.append("%s op %d: the biases' per-layer constant spreads %.4f" %
                                    (name, op["operation"], s))
    print("%s against %s: %d int8 operations, correlation min %.4f median %.5f; bias "
          "constant per layer: %d layers, median spread %.4f" %
          (name, twin_name, len(a), min(corrs) if corrs else float("nan"),
           float(np.median(corrs)) if corrs else float("nan"), len(spreads),
           float(np.median(spreads)) if spreads else float("nan")))


def find_twin(f, files, docs, load):
    """The int8 file f's twin among files: (file, its uint8 arrays), or
    None.  A file of another target whose uint8 operations hold at least
    90 % of f's int8 shapes and correlate at 0.99 or more with 90 % of its
    int8 operations (load(file, dtype): arrays() of its export)."""
    target = {g: docs[g]["weights"]["target"] for g in files}
    shapes = [op["shape"] for op in nn_decoded(docs[f], "int8")]
    for g in files:
        if target[g] == target[f]:
            continue
        have = [op["shape"] for op in nn_decoded(docs[g], "uint8")]
        if sum(s in have for s in shapes) < 0.9 * len(shapes):
            continue
        a, b = load(f, "int8"), load(g, "uint8")
        good = 0
        for op, w, _ in a:
            m = best_match(op, w, b)
            good += m is not None and m[0] >= 0.99
        if good >= 0.9 * len(a):
            return (g, b)
    return None


def corpus_weights(nbg, corpus, tool):
    """(the corpus files, {file: its nbg weights document}, the int8 files);
    exits SKIP when there is no corpus or no numpy."""
    files = sorted(glob.glob(os.path.join(corpus, "v*", "*.nb")))
    if not files:
        print("%s: skipped: no corpus files under %s" % (tool, corpus))
        sys.exit(SKIP)
    imports()
    docs = {f: nbg_json(nbg, f) for f in files}
    return files, docs, [f for f in files if nn_decoded(docs[f], "int8")]


def loader(nbg, tmp):
    """load(file, dtype): arrays() of the file's export into tmp, each file
    exported once."""
    exported = {}

    def load(f, dtype):
        if f not in exported:
            out = os.path.join(tmp, "w%d" % len(exported))
            exported[f] = (out, nbg_json(nbg, f, out))
        return arrays(exported[f][0], exported[f][1], dtype)
    return load


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_weights_int8.py NBG CORPUS_DIR")
    nbg, corpus = sys.argv[1], sys.argv[2]
    files, docs, int8_files = corpus_weights(nbg, corpus, "check_weights_int8")
    failures, judged = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        load = loader(nbg, tmp)
        for f in int8_files:
            name = os.path.relpath(f, corpus)
            twin = find_twin(f, files, docs, load)
            if twin is None:
                print("%s: not judged: no file of another target carries its weights in "
                      "uint8" % name)
                continue
            judged += 1
            judge(name, load(f, "int8"), os.path.relpath(twin[0], corpus), twin[1], failures)
    if not judged:
        failures.append("no int8 file of the corpus has a uint8 twin on another target")
    for f in failures:
        print("FAIL: " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
