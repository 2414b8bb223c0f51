#!/usr/bin/env python3
"""check_fetch_corpus.py - scripts/fetch-corpus.sh against a local mirror.

The mirror is a temporary directory laid out as BASE/REPO/COMMIT/PATH and
reached through file:// URLs, holding the committed sample NBG and a small
meta.json; the lists name them with SHA-256 values computed here with
hashlib.  Checked: a fetch into a new directory gives byte-identical files
and the manifest, and leaves no staging directory; a second run keeps them;
a wrong SHA-256, a file the mirror lacks, an unreachable host (a closed
port on 127.0.0.1) and a file name outside the directory each fail with
exit 1 and a sentence naming the file, and leave no directory behind (nor
the parent the script had to create).

usage: check_fetch_corpus.py SOURCE_ROOT
Prints 'N passed, N failed' and exits non-zero on any failure.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

REPO = "example/nbg-files"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
HEADER = "file\tsha256\tbytes\tversion\ttarget\trepo\tcommit\tpath\n"
META_HEADER = "file\tsha256\tbytes\trepo\tcommit\tpath\n"


def sha(data):
    return hashlib.sha256(data).hexdigest()


class Mirror:
    def __init__(self, root, src):
        self.root = root
        self.base = "file://" + os.path.join(root, "mirror")
        with open(os.path.join(src, "samples", "sample.nb"), "rb") as f:
            self.nb = f.read()
        self.meta = b'{"Inputs": {}, "Outputs": {}}\n'
        self.put("models/sample/network_binary.nb", self.nb)
        self.put("models/sample/nbg_meta.json", self.meta)

    def put(self, path, data):
        p = os.path.join(self.root, "mirror", REPO, COMMIT, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)

    def lists(self, name, nb_sha=None, nb_file="v2/sample.nb", nb_path=None):
        d = os.path.join(self.root, name)
        os.makedirs(d)
        with open(os.path.join(d, "MANIFEST.tsv"), "w") as f:
            f.write(HEADER)
            f.write("%s\t%s\t%d\t0x00020000\t0x1000003b\t%s\t%s\t%s\n" % (
                nb_file, nb_sha or sha(self.nb), len(self.nb), REPO, COMMIT,
                nb_path or "models/sample/network_binary.nb"))
        with open(os.path.join(d, "META.tsv"), "w") as f:
            f.write(META_HEADER)
            f.write("v2/sample.meta.json\t%s\t%d\t%s\t%s\tmodels/sample/nbg_meta.json\n" % (
                sha(self.meta), len(self.meta), REPO, COMMIT))
        return d


def fetch(src, lists, dest, base):
    env = dict(os.environ, NBG_CORPUS_URL=base, NBG_CORPUS_MANIFEST_DIR=lists,
               NBG_FETCH_TIMEOUT="5")
    return subprocess.run(["sh", os.path.join(src, "scripts", "fetch-corpus.sh"), dest],
                          env=env, capture_output=True, text=True, timeout=60)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def checks(src, tmp):
    m = Mirror(tmp, src)
    good = m.lists("good")
    dest = os.path.join(tmp, "out", "corpus")

    r = fetch(src, good, dest, m.base)
    yield "fetch into a new directory exits 0", r.returncode == 0, r.stderr
    yield "the NBG file is byte-identical", read(os.path.join(dest, "v2", "sample.nb")) == m.nb, ""
    yield "the meta.json is byte-identical", \
        read(os.path.join(dest, "v2", "sample.meta.json")) == m.meta, ""
    yield "the manifest is copied", \
        read(os.path.join(dest, "MANIFEST.tsv")) == read(os.path.join(good, "MANIFEST.tsv")), ""
    yield "no staging directory is left", not os.path.exists(dest + ".partial"), ""
    yield "the summary counts 2 files, 2 downloaded", \
        "2 files verified by SHA-256 (2 downloaded, 0 already there)" in r.stdout, r.stdout

    r = fetch(src, good, dest, m.base)
    yield "a second run keeps the files", \
        r.returncode == 0 and "(0 downloaded, 2 already there)" in r.stdout, r.stdout + r.stderr

    def fails(what, lists, base, words):
        # DIR in a parent that does not exist yet: neither may be left behind.
        parent = os.path.join(tmp, "out-" + what.replace(" ", "-"))
        d = os.path.join(parent, "corpus")
        r = fetch(src, lists, d, base)
        ok = (r.returncode == 1 and all(w in r.stderr for w in words)
              and not os.path.exists(parent))
        return "%s: exit 1, a sentence, no directory" % what, ok, \
            "exit %d, stderr: %s" % (r.returncode, r.stderr)

    bad_sha = "0" * 64
    yield fails("wrong SHA-256", m.lists("badsha", nb_sha=bad_sha), m.base,
                ["v2/sample.nb", bad_sha, sha(m.nb), "not the file the tests expect"])
    yield fails("missing file", m.lists("missing", nb_path="models/none/network_binary.nb"),
                m.base, ["cannot download v2/sample.nb", "models/none/network_binary.nb"])
    yield fails("unreachable host", good, "http://127.0.0.1:9",
                ["cannot reach 127.0.0.1:9", "v2/sample.nb", "-Dcorpus_dir=DIR"])
    yield fails("name outside the directory", m.lists("escape", nb_file="../sample.nb"),
                m.base, ["refuses the file name '../sample.nb'"])

    r = subprocess.run(["sh", os.path.join(src, "scripts", "fetch-corpus.sh"), "a", "b"],
                       capture_output=True, text=True)
    yield "two directories: usage, exit 2", r.returncode == 2 and "usage" in r.stderr, r.stderr


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    src = sys.argv[1]
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="nbgfetch-")
    try:
        if shutil.which("curl") is None:
            # Without curl the script must say so (and download nothing).
            r = fetch(src, os.path.join(src, "tests", "corpus"), os.path.join(tmp, "c"), "")
            results = [("without curl: exit 1 naming curl",
                        r.returncode == 1 and "needs curl" in r.stderr, r.stderr)]
        else:
            results = checks(src, tmp)
        for name, ok, detail in results:
            if ok:
                passed += 1
                print("ok   %s" % name)
            else:
                failed += 1
                print("FAIL %s: %s" % (name, detail.strip()))
    finally:
        shutil.rmtree(tmp)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
