"""The Python package's API as a Python user expects it (doc/python.md):
the exception classes (each also the builtin a caller catches, with the
failure code and byte offset), numpy.dtype objects, short reprs, the context
manager, the docstrings help() shows and the type stubs against the runtime
objects.  Expected values come from the raw bytes (struct), the format's
documented rules (doc/format-v2.md), include/nbg/codes.h read as text,
Python's own errno and OSError behaviour, and the dtype table written in
nbgtest.py."""
import ast
import builtins
import dataclasses
import errno
import inspect
import json
import os
import pydoc
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import nbgkit
from nbgtest import NUMPY_DTYPES, SAMPLE, SOURCE

STUBS = os.path.join(SOURCE, "python", "nbgkit", "__init__.pyi")


def code_exits():
    """Every failure code's exit code, read from include/nbg/codes.h's
    X(NAME, "name", exit, text) table (not from the library)."""
    text = open(os.path.join(SOURCE, "include", "nbg", "codes.h")).read()
    table = dict((n, int(e)) for n, e in re.findall(r'X\(\w+,\s*"([a-z0-9-]+)",\s*(\d)', text))
    assert len(table) > 40, "codes.h's table was not found"
    return table


def check_code(e, exit_code):
    """e carries a failure code of codes.h, with that code's exit code."""
    assert code_exits()[e.code] == e.exit_code == exit_code, (e.code, e.exit_code)
    assert isinstance(e.offset, int) and isinstance(e.message, str) and e.message
    assert str(e) == e.message


# -- the exceptions, one test per kind

def test_truncated_file_is_invalid_file_error(tmp_path):
    """A file cut short: InvalidFileError, a ValueError.  Where the v2 header
    (48 bytes) does not fit, `truncated` at the file's end; past it, the
    header's declared size (the word at +0x10, read here with struct) no
    longer matches: `file-size-mismatch` at offset 16 (doc/format-v2.md)."""
    data = open(SAMPLE, "rb").read()
    assert struct.unpack_from("<I", data, 16)[0] == len(data)
    for n, code, offset in ((47, "truncated", 47), (1000, "file-size-mismatch", 16)):
        p = tmp_path / ("t%d.nb" % n)
        p.write_bytes(data[:n])
        with pytest.raises(ValueError) as ei:
            nbgkit.open(str(p))
        e = ei.value
        assert type(e) is nbgkit.InvalidFileError and isinstance(e, nbgkit.Error)
        assert not isinstance(e, OSError)
        assert (e.code, e.offset) == (code, offset)
        assert e.path == str(p)
        check_code(e, 1)


def test_missing_file_is_file_not_found(tmp_path):
    """A missing file: MissingFileError, which is a FileNotFoundError (so an
    OSError) and a ReadError, with errno and filename as Python's own open()
    gives them, and the failure code io-error (exit 3)."""
    path = str(tmp_path / "missing.nb")
    with pytest.raises(FileNotFoundError) as py:
        builtins.open(path, "rb")
    for call in (nbgkit.open, nbgkit.verify, lambda p: nbgkit.open(p, map=True)):
        with pytest.raises(FileNotFoundError) as ei:
            call(path)
        e = ei.value
        assert type(e) is nbgkit.MissingFileError
        assert isinstance(e, nbgkit.ReadError) and isinstance(e, nbgkit.Error)
        assert isinstance(e, OSError) and not isinstance(e, ValueError)
        assert e.errno == py.value.errno == errno.ENOENT
        assert e.filename == py.value.filename == path == e.path
        assert e.strerror == py.value.strerror
        assert e.code == "io-error" and e.offset == 0
        check_code(e, 3)


def test_directory_is_a_directory_error(tmp_path):
    """A directory: IsDirectoryError, an IsADirectoryError with errno EISDIR
    (the errno Python's own open() of a directory gives), code
    not-regular-file (exit 3)."""
    path = str(tmp_path)
    with pytest.raises(IsADirectoryError) as py:
        builtins.open(path, "rb")
    with pytest.raises(IsADirectoryError) as ei:
        nbgkit.open(path)
    e = ei.value
    assert type(e) is nbgkit.IsDirectoryError and isinstance(e, nbgkit.ReadError)
    assert e.errno == py.value.errno == errno.EISDIR
    assert e.filename == path
    assert e.code == "not-regular-file" and e.offset == 0
    check_code(e, 3)


PERMISSION_PROBE = """
import builtins, errno, json, sys, nbgkit
try:
    builtins.open(sys.argv[1], "rb")
    print(json.dumps(None))
except PermissionError as py:
    try:
        nbgkit.open(sys.argv[1])
    except PermissionError as e:
        print(json.dumps([type(e).__name__, isinstance(e, nbgkit.ReadError), e.errno,
                          py.errno, e.filename, e.code, e.exit_code, str(e) == e.message]))
"""


def test_unreadable_file_is_permission_error():
    """A file without read permission: AccessDeniedError, a PermissionError
    with the errno Python's own open() gets (EACCES), code io-error.  Root
    reads any file, so as root the check runs in a child interpreter as
    the user nobody (setpriv); where that cannot be done, the test says so
    and is skipped."""
    d = tempfile.mkdtemp(prefix="nbgkit-perm-")
    try:
        os.chmod(d, 0o755)
        path = os.path.join(d, "locked.nb")
        with builtins.open(path, "wb") as f:
            f.write(open(SAMPLE, "rb").read())
        os.chmod(path, 0)
        cmd = [sys.executable, "-c", PERMISSION_PROBE, path]
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                pytest.skip("running as root and setpriv is missing: no user to be denied")
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0 and re.search(r"ModuleNotFoundError|ImportError", p.stderr):
            pytest.skip("the user nobody cannot import this build of nbgkit: %s"
                        % p.stderr.strip().splitlines()[-1])
        assert p.returncode == 0, p.stderr
        got = json.loads(p.stdout)
        if got is None:
            pytest.skip("this user reads a mode-000 file: no EACCES to test")
        assert got == ["AccessDeniedError", True, errno.EACCES, errno.EACCES, path,
                       "io-error", 3, True], got
    finally:
        shutil.rmtree(d)


def test_wrong_array_dtype_is_type_error():
    """An array of a dtype that is neither float nor the record's:
    ArrayTypeError, a TypeError (and a ValueError, through ArrayError), code
    tensor-type-mismatch, from run() and dequantize() alike."""
    with nbgkit.open(SAMPLE) as m:
        t, o = m.inputs[0], m.outputs[0]
        assert t.numpy_dtype != np.int16 and o.numpy_dtype != np.float64
        calls = (lambda: m.run([np.zeros(t.shape, np.int16)], backend="cpu"),
                 lambda: m.dequantize(np.zeros(o.shape, np.float64)))
        for call in calls:
            with pytest.raises(TypeError) as ei:
                call()
            e = ei.value
            assert type(e) is nbgkit.ArrayTypeError
            assert isinstance(e, nbgkit.ArrayError) and isinstance(e, ValueError)
            assert not isinstance(e, nbgkit.InvalidFileError)
            assert e.code == "tensor-type-mismatch"
            check_code(e, 1)


def test_wrong_array_shape_is_value_error():
    """An array of another shape, or another count of arrays: ArrayError, a
    ValueError and not a TypeError, codes tensor-shape-mismatch and
    input-count-mismatch."""
    with nbgkit.open(SAMPLE) as m:
        t = m.inputs[0]
        calls = ((lambda: m.quantize(np.zeros((2, 2), np.float32)), "tensor-shape-mismatch"),
                 (lambda: m.run([np.zeros((3,) + t.shape, np.float32)], backend="cpu"),
                  "tensor-shape-mismatch"),
                 (lambda: m.run([], backend="cpu"), "input-count-mismatch"))
        for call, code in calls:
            with pytest.raises(ValueError) as ei:
                call()
            e = ei.value
            assert type(e) is nbgkit.ArrayError and not isinstance(e, TypeError)
            assert e.code == code
            check_code(e, 1)


def test_usage_and_runtime_errors_are_builtins():
    """A bad argument: UsageError, a ValueError; no runtime: RuntimeUnavailableError,
    a RuntimeError (the sample has a shader operation the CPU backend refuses)."""
    with nbgkit.open(SAMPLE) as m:
        with pytest.raises(ValueError) as ei:
            m.run([np.zeros(m.inputs[0].shape, np.float32)], backend="gpu")
        assert type(ei.value) is nbgkit.UsageError
        check_code(ei.value, 2)
        with pytest.raises(RuntimeError) as ei:
            m.run([np.zeros(m.inputs[0].shape, np.float32)], backend="cpu")
        assert type(ei.value) is nbgkit.RuntimeUnavailableError
        check_code(ei.value, 4)


def test_exception_hierarchy():
    """The classes and their bases as doc/python.md lists them; every class
    with an exit code of codes.h is reachable."""
    want = {
        "Error": (Exception,),
        "InvalidFileError": (nbgkit.Error, ValueError),
        "ArrayError": (nbgkit.Error, ValueError),
        "ArrayTypeError": (nbgkit.ArrayError, TypeError),
        "UsageError": (nbgkit.Error, ValueError),
        "ReadError": (nbgkit.Error, OSError),
        "MissingFileError": (nbgkit.ReadError, FileNotFoundError),
        "IsDirectoryError": (nbgkit.ReadError, IsADirectoryError),
        "AccessDeniedError": (nbgkit.ReadError, PermissionError),
        "RuntimeUnavailableError": (nbgkit.Error, RuntimeError),
    }
    for name, bases in want.items():
        cls = getattr(nbgkit, name)
        assert cls.__bases__ == bases, name
        assert cls.__module__ == "nbgkit" and cls.__name__ == name
        assert name in nbgkit.__all__
    assert set(code_exits().values()) == {1, 2, 3, 4}
    # the Python half's own failures take the class of their code
    for code, exit_code in code_exits().items():
        e = nbgkit._error(code, "m", offset=7, field="f")
        assert (e.code, e.exit_code, e.offset, e.field, str(e)) == (code, exit_code, 7, "f", "m")
        assert isinstance(e, {1: ValueError, 2: ValueError, 3: OSError, 4: RuntimeError}[exit_code])
    with pytest.raises(ValueError):
        nbgkit._error("no-such-code", "m")


# -- numpy dtypes

def test_numpy_dtype_objects():
    """numpy_dtype is a numpy.dtype (the width and signedness of nbgtest's
    table), equal to the dtype string earlier versions returned, which
    numpy_descr keeps."""
    with nbgkit.open(SAMPLE) as m:
        tensors = m.inputs + m.outputs
        assert tensors
        for t in tensors:
            want = NUMPY_DTYPES[t.dtype]
            assert isinstance(t.numpy_dtype, np.dtype)
            assert t.numpy_dtype == np.dtype(want) and t.numpy_dtype == want
            assert t.numpy_descr == want
            assert t.numpy_dtype.itemsize * t.element_count == t.byte_size
        q = m.quantize(np.zeros(m.inputs[0].shape, np.float32))
        assert q.dtype == m.inputs[0].numpy_dtype
    none = dataclasses.replace(tensors[0], numpy_descr=None)
    assert none.numpy_dtype is None


# -- reprs

def test_reprs_are_short():
    """Printing an object never dumps arrays: the sample's, and objects
    holding million-element arrays, print under 300 characters."""
    big = np.zeros((64, 64, 16, 16), np.uint8)
    with nbgkit.open(SAMPLE) as m:
        ws = m.weights()
        assert ws
        objs = [m, m.target, nbgkit.verify(SAMPLE)] + m.inputs + m.outputs + ws
        objs.append(dataclasses.replace(ws[0], codes=big, bias=np.zeros(1 << 20, np.int32),
                                        scale=np.ones(1 << 20, np.float32)))
        objs.append(nbgkit.RunResult("cpu", "", [big, big.astype(np.float32)]))
        for o in objs:
            r = repr(o)
            assert len(r) < 300, r
            assert "\n" not in r and "..." not in r, r
        w = repr(objs[-2])
        assert "uint8[64, 64, 16, 16]" in w and "int32[1048576]" in w
    assert repr(m) == "<nbgkit.Model closed>"


def test_context_manager_closes():
    """with: the model is closed when the block ends, also on an exception;
    a closed model's calls raise ValueError."""
    with nbgkit.open(SAMPLE) as m:
        assert not m.closed
    assert m.closed
    with pytest.raises(ValueError):
        m.report()
    with pytest.raises(KeyError):
        with nbgkit.open(SAMPLE) as m2:
            raise KeyError("x")
    assert m2.closed


# -- docstrings

def public_members(cls):
    """The public names a class defines (its own dict, dataclass fields)."""
    names = {n for n in vars(cls) if not n.startswith("_")}
    if dataclasses.is_dataclass(cls):
        names |= {f.name for f in dataclasses.fields(cls)}
    return names


def test_docstrings_help_shows():
    """Every public class, function, method and property has a docstring,
    and help() (pydoc) shows it."""
    assert nbgkit.__doc__ and "nbgkit" in pydoc.render_doc(nbgkit)
    missing = []
    for name in nbgkit.__all__:
        obj = getattr(nbgkit, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj)):
            continue
        doc = inspect.getdoc(obj)
        if not doc:
            missing.append(name)
            continue
        shown = pydoc.render_doc(obj, renderer=pydoc.plaintext)
        assert doc.splitlines()[0] in shown, name
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member in sorted(public_members(obj)):
                attr = vars(obj).get(member)
                if isinstance(attr, (property, type(public_members))) and not inspect.getdoc(attr):
                    missing.append("%s.%s" % (name, member))
    assert not missing, "no docstring: %s" % ", ".join(missing)


# -- the type stubs

def stub_tree():
    return ast.parse(open(STUBS).read(), STUBS)


def stub_members(node):
    """The names a stub class declares: fields, methods, properties."""
    out = {}
    for n in node.body:
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            out[n.target.id] = n
        elif isinstance(n, ast.FunctionDef):
            # of @overload variants, the one with every parameter
            if n.name not in out or len(stub_params(n)) > len(stub_params(out[n.name])):
                out[n.name] = n
    return out


def stub_params(fn):
    a = fn.args
    return [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs
            if x.arg != "self"] + (["*" + a.vararg.arg] if a.vararg else [])


def runtime_params(obj):
    out = []
    for p in inspect.signature(obj).parameters.values():
        if p.name == "self":
            continue
        out.append("*" + p.name if p.kind == p.VAR_POSITIONAL else p.name)
    return out


def test_stubs_match_runtime():
    """__init__.pyi against the runtime objects: the same top-level names as
    __all__ (the stubs' own type aliases aside), the same bases, every stub
    member on the runtime class and every public runtime member in the
    stubs, the same parameter names for every function and method, and a
    property where the runtime has one."""
    tree = stub_tree()
    top, aliases = {}, set()
    for n in tree.body:
        if isinstance(n, (ast.ClassDef, ast.FunctionDef)):
            top[n.name] = n
        elif isinstance(n, ast.AnnAssign):
            top[n.target.id] = n
        elif isinstance(n, ast.Assign):
            aliases |= {t.id for t in n.targets}
    assert aliases == {"Source", "Backend"}, aliases
    assert set(top) == set(nbgkit.__all__), set(top) ^ set(nbgkit.__all__)
    problems = []
    for name, node in top.items():
        obj = getattr(nbgkit, name)
        if isinstance(node, ast.FunctionDef):
            if stub_params(node) != runtime_params(obj):
                problems.append("%s%s vs %s" % (name, stub_params(node), runtime_params(obj)))
            continue
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [ast.unparse(b) for b in node.bases] or ["object"]
        if bases != [b.__name__ for b in obj.__bases__]:
            problems.append("%s bases %s vs %s" % (name, bases, obj.__bases__))
        members = stub_members(node)
        runtime = public_members(obj)
        if issubclass(obj, nbgkit.Error):
            # the attributes every instance carries (the subclasses add none)
            e = nbgkit._error("truncated", "x")
            runtime = set(vars(e)) if obj is nbgkit.Error else set()
        for m in sorted(set(members) - runtime):
            if not hasattr(obj, m):
                problems.append("%s.%s only in the stubs" % (name, m))
        for m in sorted(runtime - set(members)):
            problems.append("%s.%s missing from the stubs" % (name, m))
        for m, fn in members.items():
            attr = vars(obj).get(m)
            if not isinstance(fn, ast.FunctionDef) or m.startswith("__") and attr is None:
                continue
            is_prop = any(ast.unparse(d) == "property" for d in fn.decorator_list)
            if is_prop != isinstance(attr, property):
                problems.append("%s.%s: property in one, not the other" % (name, m))
            elif not is_prop and stub_params(fn) != runtime_params(getattr(obj, m)):
                problems.append("%s.%s%s vs %s" % (name, m, stub_params(fn),
                                                   runtime_params(getattr(obj, m))))
    assert not problems, "\n".join(problems)


def test_stubs_ship_beside_the_package():
    """The stubs and py.typed are in the importable package (PEP 561), the
    same text as the source's."""
    here = os.path.dirname(nbgkit.__file__)
    assert open(os.path.join(here, "__init__.pyi")).read() == open(STUBS).read()
    assert os.path.exists(os.path.join(here, "py.typed"))


TYPED_USE = '''
import numpy as np
import nbgkit

def use(path: str) -> int:
    try:
        with nbgkit.open(path) as m:
            d = m.inputs[0].numpy_dtype
            s: str = m.inputs[0].numpy_descr or ""
            w = m.weights(0)
            r = m.run([np.zeros(3)], backend="cpu", details=True)
            print(d, s, w.codes, r.outputs, nbgkit.verify(path).error)
    except FileNotFoundError as e:
        print(e.errno, e.filename)
    except nbgkit.ArrayTypeError as e:
        print(e.code, e.offset)
    except nbgkit.Error as e:
        return e.errno
    return 0
'''


def test_stubs_type_check(tmp_path):
    """A type checker reads the stubs as valid and strict: mypy --strict on
    code that uses the package (exceptions, dtypes, weights, run) finds no
    error.  Skipped, saying so, without mypy (apt-get install mypy)."""
    api = pytest.importorskip("mypy.api", reason="mypy is not installed (apt-get install mypy)")
    pkg = tmp_path / "nbgkit"
    pkg.mkdir()
    for name in ("__init__.pyi", "py.typed"):
        (pkg / name).write_bytes(open(os.path.join(os.path.dirname(STUBS), name), "rb").read())
    (tmp_path / "use.py").write_text(TYPED_USE)
    out, err, rc = api.run(["--strict", "--no-error-summary", "--cache-dir",
                            str(tmp_path / "cache"), str(tmp_path / "use.py")])
    assert rc == 0, out + err


# -- nbgkit.compare against numpy's own figures


def numpy_figures(a, b, zp, scale, tol, k):
    """nbg compare's figures of two arrays of stored values, by numpy."""
    da, db = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    d = np.abs(da - db)
    qa, qb = da - zp, db - zp
    ta, tb = set(np.argsort(-qa, kind="stable")[:k]), set(np.argsort(-qb, kind="stable")[:k])
    beyond = np.flatnonzero(d > tol)
    return {"elements": da.size, "beyond": beyond.size,
            "first_beyond": int(beyond[0]) if beyond.size else None,
            "max_abs_diff_stored": d.max(), "mean_abs_diff_stored": d.mean(),
            "max_abs_diff_dequantized": d.max() * scale if scale else None,
            "mean_abs_diff_dequantized": d.mean() * scale if scale else None,
            "cosine": qa @ qb / (np.linalg.norm(qa) * np.linalg.norm(qb)),
            "top_k": min(k, da.size), "top_k_common": len(ta & tb),
            "top1_equal": int(np.argmax(qa)) == int(np.argmax(qb)), "equal": beyond.size == 0}


def check_figures(got, want):
    for key, w in want.items():
        g = got[key]
        if isinstance(w, float):
            assert g == pytest.approx(w, rel=1e-6, abs=1e-9), key
        else:
            assert g == w, key


def test_compare_against_numpy():
    """Synthesized arrays (distinct values, so the top-k has no ties): codes
    with a quantization, float arrays as their values, a tolerance in units
    and in percent of B's range."""
    rng = np.random.default_rng(44)
    a = rng.permutation(256).astype(np.uint8).reshape(4, 8, 8)
    b = a.copy()
    b.reshape(-1)[rng.choice(256, 40, replace=False)] = rng.permutation(256)[:40].astype(np.uint8)
    got = nbgkit.compare(a, b, quantization=(0.05, 128), top_k=7)
    check_figures(got, numpy_figures(a, b, 128, 0.05, 0.0, 7))
    assert not got["equal"] and got["tolerance"] == 0
    got = nbgkit.compare(a, b, tolerance=3, top_k=7)  # no scale: no dequantized figures
    check_figures(got, numpy_figures(a, b, 0, 0, 3.0, 7))
    got = nbgkit.compare(a, b, tolerance="10%")
    check_figures(got, numpy_figures(a, b, 0, 0, 0.1 * (int(b.max()) - int(b.min())), 5))
    x = rng.standard_normal(1000).astype(np.float32)
    y = x + rng.standard_normal(1000).astype(np.float32) * 1e-3
    got = nbgkit.compare(x, y)
    check_figures(got, numpy_figures(x, y, 0, 1.0, 0.0, 5))
    assert nbgkit.compare(x, x.copy())["equal"]
    with pytest.raises(nbgkit.ArrayError) as e:
        nbgkit.compare(x, x[:999])
    assert e.value.code == "tensor-shape-mismatch"
    for bad in (-1, "x%", float("nan")):
        with pytest.raises(nbgkit.UsageError):
            nbgkit.compare(x, x, tolerance=bad)
    with pytest.raises(nbgkit.UsageError):
        nbgkit.compare(x, x, top_k=0)


def test_dump_refused_as_run():
    """The sample's softmax does not run on the CPU backend: run(dump=True)
    refuses it with run's class and code, and off the CPU backend dump=True
    is a usage error."""
    x = np.zeros((1, 28, 28, 1), np.uint8)
    with nbgkit.open(SAMPLE) as m:
        with pytest.raises(nbgkit.RuntimeUnavailableError) as plain:
            m.run([x], "cpu")
        with pytest.raises(nbgkit.RuntimeUnavailableError) as dumped:
            m.run([x], "cpu", dump=True)
        assert dumped.value.code == plain.value.code == "unsupported-operation"
        assert str(dumped.value) == str(plain.value)
        with pytest.raises(nbgkit.RuntimeUnavailableError):
            next(m.run_many([[x]], "cpu", dump=True))
        with pytest.raises(nbgkit.UsageError):
            m.run([x], "viplite", dump=True)
