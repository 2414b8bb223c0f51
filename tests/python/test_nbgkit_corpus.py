"""The Python package nbgkit on every real file of the corpus (suite
'corpus'; run_pytest.py skips the whole file when corpus_dir is absent).
The nbg command's reports are the oracle of field equality; the weights'
arrays are checked against the SHA-256 the command prints for each
(hashlib here, libnbg's own SHA-256 there)."""
import hashlib
import subprocess
import sys

import numpy as np
import pytest

import nbgkit
from nbgtest import cli, cli_json, corpus_files
from test_nbgkit import check_fields

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
        ops = full["weights"]["operations"]
        ws = m.weights()
        assert [(w.operation, w.status) for w in ws] == [(o["operation"], o["status"]) for o in ops]
        for w, o in zip(ws, ops):
            if w.status != "decoded":
                assert w.codes is None
                continue
            assert list(w.shape) == o["shape"] and w.codes.shape == tuple(o["shape"])
            assert w.codes.dtype == np.uint8 and not w.codes.flags.writeable
            sums = o["sha256"]
            assert hashlib.sha256(w.codes.tobytes()).hexdigest() == sums["weights"]
            assert hashlib.sha256(w.bias.tobytes()).hexdigest() == sums["bias"]
            assert hashlib.sha256(w.bias_stored.tobytes()).hexdigest() == sums["bias_stored"]
            if sums["scale"] is None:
                assert w.scale is None
            else:
                assert hashlib.sha256(w.scale.tobytes()).hexdigest() == sums["scale"]
            assert int(w.codes.min()) == o["codes"]["min"]
            assert int(w.codes.max()) == o["codes"]["max"]
            assert int((w.codes == w.zero_point).sum()) == o["codes"]["zero_points"]
    r = nbgkit.verify(path)
    rc, line, _ = cli("verify", path)
    assert r.ok == (rc == 0)
    assert ("(verified: %s)" % r.integrity_detail in line) if r.integrity == "verified" \
        else ("(%s)" % r.integrity_detail in line)
    assert all(c.matches for c in r.checksums)
    assert len([c for c in r.checksums if c.kind == "section"]) == len(doc.get("section_checksums", []))


def test_main_equals_inspect():
    """python3 -m nbgkit on every file at once: the same text and exit code."""
    rc, want, _ = cli("inspect", *FILES)
    p = subprocess.run([sys.executable, "-m", "nbgkit"] + FILES, capture_output=True, text=True)
    assert (p.returncode, p.stdout) == (rc, want)
