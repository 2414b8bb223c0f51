"""Model.run(dump=True), Model.run_many and nbgkit.compare on the corpus
LeNet with the V853 board's input (suite 'corpus'; run_pytest.py skips the
file when corpus_dir is absent).  Expected values: the files `nbg run
--backend cpu --dump` writes (read by numpy) and the board's own output
(../shared/goldens/v853-lenet, whose README names the corpus file), and
single runs for run_many."""
import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

import nbgkit
from nbgtest import CORPUS, NBG

LENET = os.path.join(CORPUS, "v1", "1000f_ee_lenet_model.nb")  # the board's model (goldens' README)
GOLDENS = os.path.join(CORPUS, "..", "goldens", "v853-lenet")


def board_input():
    return np.fromfile(os.path.join(GOLDENS, "input_0.dat"), dtype=np.uint8).reshape(1, 28, 28, 1)


@pytest.fixture(scope="module")
def cli_dump():
    """nbg run --dump's directory of LeNet on the board's input: dump.json and the .npy files."""
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "dump")
        p = subprocess.run([NBG, "run", "--backend", "cpu", LENET, "--input",
                            os.path.join(GOLDENS, "input_0.dat"), "--output-dir",
                            os.path.join(tmp, "out"), "--dump", d], capture_output=True)
        assert p.returncode == 0, p.stderr
        with open(os.path.join(d, "dump.json")) as f:
            ops = json.load(f)["operations"]
        yield ops, [np.load(os.path.join(d, o["file"])) for o in ops]


def test_dump_equals_cli_and_board(cli_dump):
    ops, files = cli_dump
    with nbgkit.open(LENET) as m:
        r = m.run([board_input()], "cpu", dump=True)
    assert isinstance(r, nbgkit.RunResult) and r.backend == "cpu"
    assert len(r.dump) == len(ops) == 13  # one tensor per executed operation of LeNet
    for t, o, f in zip(r.dump, ops, files):
        assert t.array.dtype == f.dtype and t.array.shape == f.shape, o["file"]
        assert t.array.tobytes() == f.tobytes(), o["file"]
        meta = dict(o)
        del meta["file"], meta["float_file"]
        got = t.to_dict()
        got["shape"] = list(got["shape"])
        assert got == meta, o["file"]
    # the last tensor is the output, the board's bytes
    with open(os.path.join(GOLDENS, "output0_10_1.dat"), "rb") as f:
        board = f.read()
    assert r.dump[-1].output_record == 0
    assert r.dump[-1].array.tobytes() == board
    assert r.outputs[0].tobytes() == board


def test_dump_compare():
    """Two runs compare equal; one code changed in the fifth tensor names
    that operation first, with the figures numpy gives for the change."""
    with nbgkit.open(LENET) as m:
        a = m.run([board_input()], "cpu", dump=True)
        b = m.run([board_input()], "cpu", dump=True)
    c = nbgkit.compare(a, b)
    assert c["equal"] and c["first_divergent"] is None
    assert all(t["equal"] and t["max_abs_diff_stored"] == 0 for t in c["tensors"])
    fifth = b.dump[4]
    changed = fifth.array.copy()
    changed.reshape(-1)[7] ^= 0x40
    b.dump[4] = nbgkit.DumpTensor(**{**fifth.__dict__, "array": changed})
    c = nbgkit.compare(a, b)
    assert not c["equal"]
    assert c["first_divergent"]["operation"] == fifth.operation
    t = c["tensors"][4]
    assert (t["beyond"], t["first_beyond"], t["max_abs_diff_stored"]) == (1, 7, 64.0)
    assert [x["equal"] for i, x in enumerate(c["tensors"]) if i != 4] == [True] * 12


def test_run_many_equals_runs():
    x = board_input()
    inputs = [[x], [255 - x], [np.ascontiguousarray(x[:, ::-1])]]
    with nbgkit.open(LENET) as m:
        singles = [m.run(i, "cpu") for i in inputs]
        it = m.run_many(iter(inputs), "cpu")
        assert iter(it) is it  # an iterator, each run when asked for
        many = list(it)
        dumps = list(m.run_many(inputs, "cpu", dump=True))
    assert len(many) == 3
    for s, g, d in zip(singles, many, dumps):
        assert s[0].tobytes() == g[0].tobytes()
        assert d.outputs[0].tobytes() == s[0].tobytes() == d.dump[-1].array.tobytes()
    assert singles[0][0].tobytes() != singles[1][0].tobytes()  # the inputs give other outputs


def test_bad_input():
    x = board_input()
    with nbgkit.open(LENET) as m:
        size = sum(t.bytes for t in m.run([x], "cpu", dump=True).dump)
        with pytest.raises(nbgkit.InvalidFileError) as e:
            m.run([x], "cpu", dump=True, dump_limit=size - 1)
        assert e.value.code == "work-limit" and e.value.field == "dump_limit"
        assert m.run([x], "cpu", dump=True, dump_limit=size).dump[-1].output_record == 0
        with pytest.raises(nbgkit.InvalidFileError) as e:  # the library's own bound
            m._raw.run_dump([x.tobytes()], size - 1)
        assert e.value.code == "work-limit"
        with pytest.raises(nbgkit.InvalidFileError) as e:
            m.run([x], "cpu", dump=True, max_memory=size)
        assert e.value.code == "work-limit" and e.value.field == "max_memory"
        with pytest.raises(nbgkit.ArrayError) as e:
            m.run([x.reshape(1, 14, 56, 1)], "cpu", dump=True)
        assert e.value.code == "tensor-shape-mismatch"
        with pytest.raises(nbgkit.ArrayError) as e:
            m.run([x[:, :27]], "cpu", dump=True)
        with pytest.raises(nbgkit.ArrayTypeError):
            m.run([x.astype(np.int32)], "cpu", dump=True)
        with pytest.raises(nbgkit.ArrayError) as e:
            m.run([x, x], "cpu", dump=True)
        assert e.value.code == "input-count-mismatch"
        with pytest.raises(nbgkit.UsageError):
            m.run([x], "auto", dump=True)
        with pytest.raises(nbgkit.UsageError):
            m.run([x], "cpu", dump=True, dump_limit=0)
        a = m.run([x], "cpu", dump=True)
        with pytest.raises(nbgkit.ArrayError) as e:
            nbgkit.compare(a, a.dump[:-1])
        assert e.value.code == "tensor-shape-mismatch"
        with pytest.raises(nbgkit.ArrayError):
            nbgkit.compare(a.dump[0], a.dump[2])  # [6, 24, 24] and [6, 12, 12]
        with pytest.raises(nbgkit.UsageError):
            list(m.run_many([[x]], "cpu", dump_limit=-1))
