"""The Python package nbgkit on every real file of the corpus (suite
'corpus'; run_pytest.py skips the whole file when corpus_dir is absent).
The nbg command's reports are the oracle of field equality; the weights'
arrays are checked against the SHA-256 the command prints for each
(hashlib here, libnbg's own SHA-256 there)."""
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


def test_main_equals_inspect():
    """python3 -m nbgkit on every file at once: the same text and exit code."""
    rc, want, _ = cli("inspect", *FILES)
    p = subprocess.run([sys.executable, "-m", "nbgkit"] + FILES, capture_output=True, text=True)
    assert (p.returncode, p.stdout) == (rc, want)
