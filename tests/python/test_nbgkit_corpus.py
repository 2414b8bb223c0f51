"""The Python package nbgkit on every real file of the corpus (suite
'corpus'; run_pytest.py skips the whole file when corpus_dir is absent).
The nbg command's reports are the oracle of field equality; the weights'
arrays are checked against the SHA-256 the command prints for each
(hashlib here, libnbg's own SHA-256 there)."""
import json
import subprocess
import sys

import pytest

import nbgkit
from nbgtest import cli, cli_json, corpus_files
from test_nbgkit import check_cpu_plan, check_fields, check_weights

FILES = corpus_files()


@pytest.mark.parametrize("path", FILES, ids=[p.split("/corpus/")[-1] for p in FILES])
def test_corpus_file(path):
    rc, doc = cli_json("inspect", "--json", path)
    assert rc == 0
    rc, full = cli_json("inspect", "--json", "--layers", "--operations", "--patches",
                        "--commands", "--memory", "--weights", path)
    with nbgkit.open(path) as m:
        assert m.to_dict() == doc
        assert m.to_dict(layers=True, operations=True, patches=True, commands=True,
                         memory=True, weights=True) == full
        check_fields(m, doc)
        # the tables against the command's document with every table (the
        # sample's test compares each with its own --only document too)
        for attr in ("layers", "operations", "commands", "memory"):
            assert getattr(m, attr) == full[attr], attr
        rc, ledger = cli_json("ledger", "--json", path)
        assert m.ledger() == ledger
        # the weights: status per operation, and each decoded array's bytes
        check_weights(m.weights(), full["weights"]["operations"])
    r = nbgkit.verify(path)
    rc, line, _ = cli("verify", path)
    assert r.ok == (rc == 0)
    assert ("(verified: %s)" % r.integrity_detail in line) if r.integrity == "verified" \
        else ("(%s)" % r.integrity_detail in line)
    assert all(c.matches for c in r.checksums)
    assert len([c for c in r.checksums if c.kind == "section"]) == len(doc.get("section_checksums", []))


@pytest.mark.parametrize("path", FILES, ids=[p.split("/corpus/")[-1] for p in FILES])
def test_corpus_cpu_plan(path):
    check_cpu_plan(path)


@pytest.mark.parametrize("rel", ["v1/10014_ee_network_binary.nb", "v1/1000e_be_emotion_be_C305X.nb"])
def test_cpu_run_details(rel, tmp_path):
    """Model.run(..., backend="cpu", details=True) against nbg run --backend
    cpu on the same synthesized input: the outputs' bytes (summary.json's
    SHA-256), and the operations computed by reference semantics and the
    caveat as summary.json lists them (the emotion file's softmax is one)."""
    import hashlib
    import numpy as np
    path = [p for p in FILES if p.endswith(rel)][0]
    with nbgkit.open(path) as m:
        xs = [(np.arange(t.element_count, dtype=np.int64) * 31 % 251).astype(t.numpy_dtype).reshape(t.shape)
              for t in m.inputs]
        res = m.run(xs, backend="cpu", details=True)
    files = []
    for k, x in enumerate(xs):
        f = tmp_path / ("in%d.bin" % k)
        f.write_bytes(x.tobytes())
        files += ["--input", str(f)]
    rc, _, err = cli("run", "--backend", "cpu", path, *files, "--output-dir", str(tmp_path / "out"))
    assert rc == 0, err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [hashlib.sha256(o.tobytes()).hexdigest() for o in res.outputs] == \
        [o["sha256"] for o in summary["outputs"]]
    want = [{k: r[k] for k in ("operation", "layer", "what")}
            for r in summary["runtime"]["reference_semantics"]]
    assert res.backend == "cpu" and res.reference_semantics == want
    assert res.caveat == summary["runtime"]["caveat"]
    if "emotion" in rel:
        assert want, "the emotion network's softmax runs by reference semantics"


def test_main_equals_inspect():
    """python3 -m nbgkit on every file at once: the same text and exit code."""
    rc, want, _ = cli("inspect", *FILES)
    p = subprocess.run([sys.executable, "-m", "nbgkit"] + FILES, capture_output=True, text=True)
    assert (p.returncode, p.stdout) == (rc, want)
