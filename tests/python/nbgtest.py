"""nbgtest.py - what the Python package's tests share: the nbg binary, the
bundled sample, the corpus files, and the command's own reports to compare
with (the CLI is the oracle of field equality; values from other sources
are derived in each test)."""
import glob
import json
import os
import subprocess

NBG = os.environ["NBG_BIN"]
SOURCE = os.environ["NBG_SOURCE_DIR"]
SAMPLE = os.path.join(SOURCE, "samples", "sample.nb")
CORPUS = os.environ.get("NBG_CORPUS_DIR", "")


def corpus_files():
    """Every real file, v2 then v1 (empty without the corpus)."""
    return sorted(glob.glob(os.path.join(CORPUS, "v2", "*.nb"))) + \
        sorted(glob.glob(os.path.join(CORPUS, "v1", "*.nb")))


def cli(*args, stdin=None):
    """nbg ARGS: (exit code, stdout, stderr) as text."""
    p = subprocess.run([NBG] + list(args), input=stdin, capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def cli_json(*args, stdin=None):
    rc, out, err = cli(*args, stdin=stdin)
    assert out, "nbg %s printed nothing (exit %d): %s" % (" ".join(args), rc, err)
    return rc, json.loads(out)


# The numpy dtype of each NBG data format name, from the format's definition
# (the public vsi_nn buffer format enum: width and signedness), written here
# independently of nbg_npy_descr.
NUMPY_DTYPES = {
    "FP32": "<f4", "FP16": "<f2", "UINT8": "|u1", "INT8": "|i1", "UINT16": "<u2",
    "INT16": "<i2", "INT32": "<i4", "UINT32": "<u4", "INT64": "<i8", "UINT64": "<u8",
    "FP64": "<f8", "BOOL8": "|b1", "CHAR": "|i1",
}
