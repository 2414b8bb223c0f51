"""nbgkit: read, verify, explain and run VeriSilicon NPU compiled models (NBG files).

A Python face of libnbg, the library behind the ``nbg`` command:

>>> import nbgkit
>>> with nbgkit.open("samples/sample.nb") as m:
...     print(m.version_hex, m.inputs[0].shape, m.inputs[0].numpy_dtype)

Every object is built from the JSON document ``nbg inspect --json`` writes
(``Model.to_dict()`` is that document), so the Python fields and the
command's report are the same values by construction.  Failures raise
:class:`Error` (``code``, ``offset``, ``field``, ``message``) through one of
its subclasses, each also the builtin exception a Python caller catches:
:class:`InvalidFileError` and :class:`UsageError` are ValueErrors,
:class:`ArrayError` (a ValueError) and :class:`ArrayTypeError` (also a
TypeError) name an array passed in, :class:`ReadError` is an OSError (a
missing file raises :class:`MissingFileError`, a FileNotFoundError; a
directory :class:`IsDirectoryError`, an IsADirectoryError; an unreadable
file :class:`AccessDeniedError`, a PermissionError) and
:class:`RuntimeUnavailableError` a RuntimeError.
"""

from __future__ import annotations

import json as _json
import os as _os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from . import _nbgkit

__all__ = [
    "open", "verify", "diff", "codes", "compare", "Model", "DumpTensor", "Tensor", "Quantization", "Target",
    "Report", "Checksum", "Weights", "RunResult", "Error", "InvalidFileError",
    "ArrayError", "ArrayTypeError", "UsageError", "ReadError", "MissingFileError",
    "IsDirectoryError", "AccessDeniedError", "RuntimeUnavailableError", "UNLIMITED",
    "RUN_MAX_OUTPUT", "RUN_MAX_MEMORY", "DUMP_LIMIT", "BACKENDS", "LAYOUTS", "__version__",
]

__version__ = _nbgkit.libnbg_version

Error = _nbgkit.Error
InvalidFileError = _nbgkit.InvalidFileError
ArrayError = _nbgkit.ArrayError
ArrayTypeError = _nbgkit.ArrayTypeError
UsageError = _nbgkit.UsageError
ReadError = _nbgkit.ReadError
MissingFileError = _nbgkit.MissingFileError
IsDirectoryError = _nbgkit.IsDirectoryError
AccessDeniedError = _nbgkit.AccessDeniedError
RuntimeUnavailableError = _nbgkit.RuntimeUnavailableError
# the exception of a failure code (the class the library's failure with that
# code raises), not raised: _error("work-limit", "...", field="max_memory")
_error = _nbgkit.error

BACKENDS = ("auto", "nnsdk", "viplite", "cpu")
# Model.run's layout (nbg run --layout), in nbg_tensor_layout's order
LAYOUTS = (None, "nchw", "nhwc")

# A limit that lifts the limit (``nbg run``'s ``none``): the largest count.
UNLIMITED = (1 << 64) - 1
# What Model.run may return and hold unless told otherwise: ``nbg run``'s
# --max-output and --max-memory defaults (doc/python.md, "Run limits").
RUN_MAX_OUTPUT = 1 << 30
RUN_MAX_MEMORY = 2 << 30
# What Model.run(dump=True) may keep of the operations' outputs unless told
# otherwise: ``nbg run --dump-limit``'s default.
DUMP_LIMIT = 1 << 30


def _limit(name: str, value: Optional[int]) -> int:
    """A limit for the library: None takes its default (0), else a whole
    number from 1 to UNLIMITED."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= UNLIMITED:
        raise _usage("%s must be a whole number from 1 to nbgkit.UNLIMITED, or None" % name)
    return value


def _numpy():
    import numpy  # imported when an array is asked for: inspection needs no numpy
    return numpy


@dataclass(frozen=True)
class Quantization:
    """How a tensor's stored values map to real numbers.

    ``format`` is ``"none"``, ``"dynamic_fixed_point"`` or ``"affine"`` (the
    report's ``interpretation``); ``scale``/``zero_point`` apply to affine,
    ``fixed_point_position`` to dynamic fixed point; ``raw`` is the report's
    quantization object as it is."""
    format: str
    scale: Optional[float] = None
    zero_point: Optional[int] = None
    fixed_point_position: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Tensor:
    """One input or output record.

    ``shape`` is outermost first (NHWC for the corpus: the numpy convention);
    ``dtype`` is the NBG data format name (``"UINT8"``...), ``numpy_dtype``
    the :class:`numpy.dtype` (``dtype('uint8')``) and ``numpy_descr`` its
    string (``"|u1"``), both None where numpy has none (4-bit)."""
    index: int
    name: Optional[str]
    shape: tuple
    dtype: Optional[str]
    numpy_descr: Optional[str]
    quantization: Quantization
    element_count: int
    byte_size: Optional[int]
    record: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def numpy_dtype(self):
        """The record's :class:`numpy.dtype` (None for a format numpy has
        not: 4-bit).  It compares equal to the dtype string earlier
        versions returned (``t.numpy_dtype == "|u1"``); ``numpy_descr`` is
        that string.  numpy is imported when it is first asked for."""
        return None if self.numpy_descr is None else _numpy().dtype(self.numpy_descr)


@dataclass(frozen=True)
class Target:
    """The hardware target (CID) word and what public sources call it
    (``config_name``, ``soc``: None when no source names it)."""
    value: int
    config_name: Optional[str]
    soc: Optional[str]


@dataclass(frozen=True)
class Checksum:
    """One checksum a file carries: ``kind`` is ``"section"`` (a CHECKSUM
    record, ``section`` its type), ``"file"`` (the v2 header's crc_sum) or
    ``"v1-crc-sum"``; ``offset`` is where the record sits."""
    kind: str
    section: str
    offset: int
    stored: int
    computed: int
    matches: bool


@dataclass(frozen=True, repr=False)
class Report:
    """What ``verify`` checked: the structure, then every checksum listed.

    ``ok`` is True when every rule held; ``integrity`` says what proved the
    bytes (``verified``, ``structure-only``, ``checksum-unknown``,
    ``failed``) and ``integrity_detail`` in a sentence.  ``error`` is the
    failure (an :class:`Error`) when not ok; ``checksums`` is empty when the
    structure failed before any could be read."""
    path: str
    ok: bool
    family: Optional[int]
    version: Optional[int]
    target: Optional[int]
    section_count: Optional[int]
    integrity: Optional[str]
    integrity_detail: Optional[str]
    checksums: List[Checksum]
    error: Optional[Error] = None

    def __repr__(self) -> str:
        how = self.integrity if self.ok else "failed: %s at offset %d" % (
            self.error.code, self.error.offset) if self.error else "failed"
        return "<nbgkit.Report %r %s, %d checksums>" % (self.path, how, len(self.checksums))


@dataclass(repr=False)
class Weights:
    """One NN-engine operation's kernel stream (``status`` ``decoded`` or
    ``not-decoded`` with ``reason_id``/``reason``).  For a decoded stream,
    ``codes`` is a uint8 array of ``shape`` [out, z, ky, kx] as stored
    (int8, int16 for those kernels), ``bias`` (int32, the compiler's
    zero-point correction undone; None for int16 kernels) and
    ``bias_stored`` per output channel (int64 for int16 kernels), ``scale`` (float32) when the stream
    carries one.  An NN_LUT operation's table (``format`` ``lut``): ``codes``
    are its 1,024 entries' values (float32, shape [1024, 1, 1, 1]) and
    ``lut_inputs`` the input each holds the function at (float16) where that
    is established (fp16 data).  A convolution's NN_LUT operation (its
    kernels, then a table, in one stream) has its kernels as ``codes`` and
    the table's values in ``lut_table`` (float32 [1024]).  The arrays are
    read-only views of the decoded result."""
    index: int
    operation: int
    command: int
    status: str
    reason_id: str
    reason: str
    format: str
    order: str
    data_type: str
    shape: tuple
    zero_point: int
    input_zero_point: int
    stream_offset: int
    stream_size: int
    cores: int
    bit_offset: Optional[int]
    codes: Any = None
    bias: Any = None
    bias_stored: Any = None
    scale: Any = None
    lut_inputs: Any = None
    lut_table: Any = None

    def floats(self):
        """The weights as float32 where the file gives them, with where
        from: ``(array, "float16 codes")`` for fp16 kernels,
        ``(array, "per-channel scale carried by the stream")`` for (codes -
        zero_point) x scale; ``(None, None)`` otherwise (no scale is known:
        ``nbg weights --float`` says the same)."""
        np = _numpy()
        if self.codes is None:
            return None, None
        if self.format == "lut":
            return self.codes.astype(np.float32), "table values (float32)"
        if self.data_type == "fp16":
            return self.codes.astype(np.float32), "float16 codes"
        if self.scale is None or self.data_type == "int16":
            return None, None
        q = self.codes.astype(np.float32) - np.float32(self.zero_point)
        return (q * self.scale.reshape(-1, 1, 1, 1)).astype(np.float32), \
            "per-channel scale carried by the stream"

    def __repr__(self) -> str:
        """One line, the arrays by dtype and shape, never their values."""
        if self.status != "decoded":
            what = "%s (%s)" % (self.status, self.reason_id)
        else:
            what = ", ".join("%s %s%s" % (k, a.dtype, list(a.shape)) for k, a in (
                ("codes", self.codes), ("bias", self.bias), ("scale", self.scale)) if a is not None)
        return "<nbgkit.Weights operation %d command %d %s %s: %s>" % (
            self.operation, self.command, self.data_type, list(self.shape), what)


@dataclass(repr=False)
class RunResult:
    """What ``Model.run`` returns besides the outputs: which runtime ran
    (``backend``, ``library``) and the outputs as numpy arrays.  For the CPU
    backend also, as ``nbg run`` says them: ``reference_semantics``, the
    operations computed by reference semantics, not from their code (dicts
    with ``operation``, ``layer``, ``what``), and ``caveat``, the sentence
    when the file's record layout was inferred (else None)."""
    backend: str
    library: str
    outputs: list
    reference_semantics: list = field(default_factory=list)
    caveat: Optional[str] = None
    dump: Optional[list] = None

    def __repr__(self) -> str:
        """One line, the outputs by dtype and shape, never their values."""
        return "<nbgkit.RunResult %s: %s%s%s>" % (
            self.backend, ", ".join("%s%s" % (a.dtype, list(a.shape)) for a in self.outputs),
            ", %d by reference semantics" % len(self.reference_semantics)
            if self.reference_semantics else "",
            ", %d dumped tensors" % len(self.dump) if self.dump is not None else "")


@dataclass(repr=False)
class DumpTensor:
    """One executed operation's output, as the CPU backend wrote it
    (``Model.run(dump=True)``; ``nbg run --dump``'s files and dump.json
    entries, doc/debugging.md): ``array`` (its stored type: uint8 codes,
    float16 values; outermost dimension first), ``operation`` (the
    OPERATIONS record; a whole layer: its last tile), ``layer_id``,
    ``layer``, ``operator`` (the backend's kind of operation), ``shape``,
    ``data_type``, ``quantization`` (dump.json's: an output record's own,
    fp16 ``{"format": "none"}``, else the command's ``zero_point`` and
    ``scale`` None), ``bytes``, ``whole_layer`` and ``tiles`` (a tiled
    layer's tiles stacked), ``output_record`` (the OUTPUT record the tensor
    is, byte for byte, or None)."""
    operation: int
    layer_id: int
    layer: str
    operator: str
    shape: tuple
    data_type: Optional[str]
    quantization: Dict[str, Any]
    bytes: int
    whole_layer: bool
    tiles: int
    output_record: Optional[int]
    array: Any = None

    def to_dict(self) -> Dict[str, Any]:
        """The metadata as dump.json's entry has it (no ``file``)."""
        return {k: getattr(self, k) for k in (
            "operation", "layer_id", "layer", "operator", "shape", "data_type", "quantization",
            "bytes", "whole_layer", "tiles", "output_record")}

    def __repr__(self) -> str:
        """One line: the operation, layer, kind, dtype and shape."""
        return "<nbgkit.DumpTensor operation %d %s (%s): %s%s%s>" % (
            self.operation, self.layer, self.operator, self.data_type, list(self.shape),
            " whole layer" if self.whole_layer else "")


def _dump_tensor(np, meta: Dict[str, Any], data: Optional[bytes]) -> DumpTensor:
    descr = "<f2" if meta["data_type"] == "FP16" else "|u1"
    arr = None if data is None else np.frombuffer(data, dtype=descr).reshape(meta["shape"])
    return DumpTensor(meta["operation"], meta["layer_id"], meta["layer"], meta["operator"],
                      tuple(meta["shape"]), meta["data_type"], meta["quantization"], meta["bytes"],
                      meta["whole_layer"], meta["tiles"], meta["output_record"], arr)


def _quantization(q: Dict[str, Any]) -> Quantization:
    kind = q.get("interpretation") or "none"
    return Quantization(format=kind, scale=q.get("scale"), zero_point=q.get("zero_point"),
                        fixed_point_position=q.get("fixed_point_position"), raw=q)


def _tensor(rec: Dict[str, Any]) -> Tensor:
    return Tensor(
        index=rec["index"], name=rec.get("name"),
        shape=tuple(rec["dimensions_outermost_first"]),
        dtype=rec.get("data_format_name"),
        numpy_descr=_nbgkit.npy_descr(rec["data_format"]),
        quantization=_quantization(rec.get("quantization") or {}),
        element_count=rec["element_count"], byte_size=rec.get("byte_size"), record=rec)


class Model:
    """A parsed NBG file, read into memory or mapped (a path), or over the
    caller's buffer (bytes: not copied; keep a mutable buffer unchanged while
    the model is open).

    Use it as a context manager or call :meth:`close`.  The properties are
    plain Python objects built from the JSON report and cached; every
    method that decodes or hashes releases the GIL, and a model may be read
    from several threads at once."""

    def __init__(self, raw: "_nbgkit.RawModel"):
        self._raw = raw
        self._doc: Optional[Dict[str, Any]] = None
        self._parts: Dict[int, Dict[str, Any]] = {}

    # -- life cycle
    def __enter__(self) -> "Model":
        """``with nbgkit.open(path) as m:`` closes the model when the block ends."""
        return self

    def __exit__(self, *exc) -> None:
        """Closes the model (exceptions pass on)."""
        self.close()

    def close(self) -> None:
        """Frees the file's bytes (or unmaps them) and the parsed model."""
        self._raw.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran (or the ``with`` block ended)."""
        return self._raw.closed

    @property
    def path(self) -> str:
        """The path as given to :func:`open`, ``"-"`` for a buffer."""
        return self._raw.path

    def __repr__(self) -> str:
        if self.closed:
            return "<nbgkit.Model closed>"
        return "<nbgkit.Model %r v%d %s target 0x%x>" % (
            self.path, self.family, self.version_hex, self.target.value)

    # -- the report
    def _document(self, what: int) -> Dict[str, Any]:
        doc = self._parts.get(what)
        if doc is None:
            doc = _json.loads(self._raw.json(what))
            self._parts[what] = doc
        return doc

    def to_dict(self, *, layers: bool = False, operations: bool = False,
                patches: bool = False, commands: bool = False, network: bool = False,
                memory: bool = False, weights: bool = False,
                only: bool = False) -> Dict[str, Any]:
        """The document ``nbg inspect --json`` prints for this file, with the
        same options (``--layers``, ``--operations``, ``--patches``,
        ``--commands``, ``--network``, ``--memory``, ``--weights``,
        ``--only``).  A new dict each call."""
        what = 0
        graph = ((_nbgkit.GRAPH_LAYERS if layers else 0) |
                 (_nbgkit.GRAPH_OPERATIONS if operations else 0) |
                 (_nbgkit.GRAPH_PATCHES if patches else 0))
        if graph:
            what |= graph | _nbgkit.GRAPH_SUMMARY | _nbgkit.GRAPH_TABLES | _nbgkit.GRAPH_FINDINGS
        if commands:
            what |= _nbgkit.DOC_COMMANDS
        if network:
            what |= _nbgkit.DOC_NETWORK
        if memory:
            what |= _nbgkit.DOC_MEMORY
        if weights:
            what |= _nbgkit.DOC_WEIGHTS
        if only:
            if not what:
                raise UsageError("only=True keeps just the tables asked for: add layers, "
                                 "operations, patches, commands, network, memory or weights")
            what |= _nbgkit.DOC_NO_CORE
        return _json.loads(self._raw.json(what))

    def report(self) -> str:
        """The text report ``nbg inspect FILE`` prints."""
        return self._raw.text()

    @property
    def _core(self) -> Dict[str, Any]:
        return self._document(0)

    @property
    def valid(self) -> bool:
        """False only for a file opened with ``strict=False`` whose checksum failed."""
        return self._core["valid"]

    @property
    def family(self) -> int:
        """1 for v1 (0x0001xxxx), 2 for v2 (0x00020000)."""
        return self._core["family"]

    @property
    def version(self) -> int:
        """The version word."""
        return self._core["version"]

    @property
    def version_hex(self) -> str:
        """The version word in hex (``"0x00020000"``), as the report writes it."""
        return self._core["version_hex"]

    @property
    def target(self) -> Target:
        """The target word with its configuration name and SoC."""
        c = self._core
        return Target(c["target"], c.get("target_name"), c.get("target_soc"))

    @property
    def file_size(self) -> int:
        """The file's size in bytes."""
        return self._core["file_size"]

    @property
    def sha256(self) -> str:
        """SHA-256 of the whole file (hex)."""
        return self._core["sha256"]

    @property
    def integrity(self) -> str:
        """What proved the bytes: verified, structure-only, checksum-unknown or failed."""
        return self._core["integrity"]

    @property
    def network_name(self) -> Optional[str]:
        """The network's name the file carries (None when it has none)."""
        return self._core.get("network_name")

    @property
    def inputs(self) -> List[Tensor]:
        """The input records, as :class:`Tensor` objects."""
        return [_tensor(r) for r in self._core["inputs"]]

    @property
    def outputs(self) -> List[Tensor]:
        """The output records, as :class:`Tensor` objects."""
        return [_tensor(r) for r in self._core["outputs"]]

    @property
    def sections(self) -> List[Dict[str, Any]]:
        """The section directory (v1: entries), as the report's ``sections``."""
        return self._core["sections"]

    @property
    def notes(self) -> List[Dict[str, Any]]:
        """Deviations from the reference corpus and findings (never failures)."""
        return self._core["notes"]

    @property
    def layers(self) -> List[Dict[str, Any]]:
        """The LAYER records (``nbg inspect --json --layers``'s ``layers``)."""
        return self._document(_nbgkit.DOC_NO_CORE | _nbgkit.GRAPH_LAYERS)["layers"]

    @property
    def operations(self) -> List[Dict[str, Any]]:
        """The OPERATIONS records (``--operations``'s ``operations``)."""
        return self._document(_nbgkit.DOC_NO_CORE | _nbgkit.GRAPH_OPERATIONS)["operations"]

    @property
    def commands(self) -> Dict[str, Any]:
        """The decoded NN/TP commands (``--commands``'s ``commands``)."""
        return self._document(_nbgkit.DOC_NO_CORE | _nbgkit.DOC_COMMANDS)["commands"]

    @property
    def network(self) -> Dict[str, Any]:
        """The network as its layers compute it (``--network``'s ``network``):
        each layer's operator, whole input and output tensors with the basis
        of each shape, and the edges with their bytes and basis."""
        return self._document(_nbgkit.DOC_NO_CORE | _nbgkit.DOC_NETWORK)["network"]

    @property
    def memory(self) -> Dict[str, Any]:
        """The memory analysis (``--memory``'s ``memory``)."""
        return self._document(_nbgkit.DOC_NO_CORE | _nbgkit.DOC_MEMORY)["memory"]

    # -- other documents
    def ledger(self) -> Dict[str, Any]:
        """The byte ledger: every byte's owner and class, the decoded kernel
        streams' bytes as decoded-coefficients (``nbg ledger --json``)."""
        return _json.loads(self._raw.ledger_json())

    def cpu_plan(self, *, max_work: Optional[int] = None, max_memory: Optional[int] = None,
                 max_plan_steps: Optional[int] = None) -> Dict[str, Any]:
        """What ``run(..., backend="cpu")`` would execute and refuse, nothing
        run (``nbg run --backend cpu --check --json``): the counts,
        ``runs_whole`` and ``refusal`` (why a run would be refused whole, the
        same answer the run gives), ``totals`` and ``limits``, ``caveat`` (a
        string when the record layout was inferred, else None),
        ``first_refused`` and ``steps``, one per operation with its
        ``verdict`` (execute, nothing, refused), ``reason_id``, ``reason``,
        ``work`` and ``scratch``.  ``max_work``, ``max_memory`` and
        ``max_plan_steps`` are the plan's limits (``nbg run``'s --max-work,
        --max-memory, --max-plan-steps; None: the default, UNLIMITED: none)."""
        return _json.loads(self._raw.cpu_plan_json(
            _limit("max_work", max_work), _limit("max_memory", max_memory),
            _limit("max_plan_steps", max_plan_steps)))

    def weights(self, op: Optional[int] = None):
        """The kernel streams of the NN-engine operations: a list of
        :class:`Weights`, or with ``op`` (an OPERATIONS index) that
        operation's.  Raises UsageError when ``op`` has no NN kernel."""
        np = _numpy()
        out = []
        for d in self._raw.weights():
            if op is not None and d["operation"] != op:
                continue
            shape = tuple(d["shape"])
            codes, bias, stored, scale, inputs, table = (d.pop(k, None) for k in (
                "codes", "bias", "bias_stored", "scale", "lut_inputs", "lut_table"))
            w = Weights(**{k: v for k, v in d.items() if k != "shape"}, shape=shape)
            if inputs is not None:
                w.lut_inputs = np.frombuffer(inputs, dtype="<f2")
            if table is not None:
                w.lut_table = np.frombuffer(table, dtype="<f4")
            if codes is not None:
                # int8 and int16 kernels hold signed codes, tables float32
                # values (doc/weights.md)
                kind = "<f4" if d.get("format") == "lut" else {
                    "int8": np.int8, "int16": "<i2", "fp16": "<f2"}.get(d.get("data_type"), np.uint8)
                w.codes = np.frombuffer(codes, dtype=kind).reshape(shape)
            if bias is not None:
                w.bias = np.frombuffer(bias, dtype="<i4")
            if stored is not None:
                # int16 kernels: the 48-bit biases as stored, in int64
                w.bias_stored = np.frombuffer(
                    stored, dtype="<i8" if d.get("data_type") == "int16" else "<i4")
            if scale is not None:
                w.scale = np.frombuffer(scale, dtype="<f4")
            out.append(w)
        if op is None:
            return out
        if not out:
            raise _usage("operation %d has no NN-engine kernel stream" % op)
        return out[0]

    # -- tensors
    def _io(self, is_output: bool, index: int) -> Tensor:
        recs = self.outputs if is_output else self.inputs
        if not 0 <= index < len(recs):
            raise _usage("the model has %d %s; there is no %s %d" % (
                len(recs), "outputs" if is_output else "inputs",
                "output" if is_output else "input", index))
        return recs[index]

    def _shaped(self, t: Tensor, array, is_output: bool = False, layout: Optional[str] = None):
        """array as C-order values in the record's memory order: its shape,
        size-1 dimensions aside, must be the record's outermost first, or
        (layout "nchw"/"nhwc") a 4-D array in that layout is transposed to
        it -- nbg run's rule and --layout (nbg_tensor_shape_check)."""
        np = _numpy()
        a = np.asarray(array)
        if self._raw.shape_check(is_output, t.index, tuple(a.shape), LAYOUTS.index(layout)):
            a = np.transpose(a, (0, 2, 3, 1) if layout == "nchw" else (0, 3, 1, 2))
        return np.ascontiguousarray(a)

    def quantize(self, array, input: int = 0):
        """Real values -> the stored values of input record ``input`` (its
        data format and quantization), shaped as the record (outermost
        first).  Raises InvalidFileError (``tensor-format-unsupported``)
        where the record has no element-wise conversion."""
        np = _numpy()
        t = self._io(False, input)
        a = self._shaped(t, array).astype("<f4", copy=False)
        raw = self._raw.quantize(False, input, a.tobytes())
        return _from_raw(np, t, raw)

    def dequantize(self, array, output: int = 0):
        """Stored values of output record ``output`` -> float32, with the
        record's quantization.  ``array`` holds the record's dtype (or its
        raw bytes)."""
        np = _numpy()
        t = self._io(True, output)
        if isinstance(array, (bytes, bytearray, memoryview)):
            raw = bytes(array)
        else:
            a = self._shaped(t, array, True)
            if t.numpy_descr is None or a.dtype != t.numpy_dtype:
                raise _error("tensor-type-mismatch", "the array's dtype %s is not the record's %s"
                             % (a.dtype, t.numpy_descr))
            raw = a.tobytes()
        out = self._raw.dequantize(True, output, raw)
        return np.frombuffer(out, dtype="<f4").reshape(t.shape)

    def _run_budget(self, max_output: int, max_memory: int, dump_limits=None,
                    dump_limit: int = 0) -> None:
        """What a run would hand back and hold in this process, from the
        records the model declares, against max_output and max_memory,
        before anything is converted, allocated or run: the outputs' bytes
        (the result the runtime writes, then the bytes objects they become,
        2x), the inputs' bytes and the float32 an array may be converted
        from (4 bytes an element); with dump_limits (the CPU limits of a
        dumping run), the dump's bytes from its plan, nothing run, against
        dump_limit, and twice them (the block the run fills, the arrays)
        against max_memory."""
        out = sum(t.byte_size or 0 for t in self.outputs)
        held = 2 * out + sum((t.byte_size or 0) + 4 * t.element_count for t in self.inputs)
        checks = [("max_output", out, max_output)]
        dumped = ""
        if dump_limits is not None:
            size = sum(t["bytes"] for t in self._raw.dump_list(*dump_limits))
            held += 2 * size
            checks.append(("dump_limit", size, dump_limit))
            dumped = " and a dump of its operations' tensors of %d bytes" % size
        checks.append(("max_memory", held, max_memory))
        for what, figure, limit in checks:
            if figure > limit:
                raise _error(
                    "work-limit", "the model's records declare outputs of %d bytes%s, and a run "
                    "would hold about %d bytes of tensors in this process, over %s %d: refused "
                    "before anything is converted, allocated or run; %s= raises the limit "
                    "(nbgkit.UNLIMITED lifts it)" % (out, dumped, held, what, limit, what),
                    field=what)

    def run(self, inputs: Sequence[Any], backend: str = "auto", *, library: Optional[str] = None,
            device_root: Optional[str] = None, force_target: bool = False,
            skip_probe: bool = False, timeout_ms: int = 0, details: bool = False,
            max_output: Optional[int] = None, max_memory: Optional[int] = None,
            max_work: Optional[int] = None, max_plan_steps: Optional[int] = None,
            layout: Optional[str] = None, dump: bool = False,
            dump_limit: Optional[int] = None, threads: Optional[int] = None):
        """Runs the model once on the NPU, through the same runtime layer as
        ``nbg run`` (the vendor library is called in an isolated child
        process).  ``inputs``: one array per input record, float (quantized
        with the record) or the record's own dtype; ``backend`` ``"auto"``,
        ``"nnsdk"``, ``"viplite"`` or ``"cpu"`` (nbgkit's CPU backend, no
        board).  Returns the outputs as numpy arrays in their records' dtypes and shapes (``details=True``:
        a :class:`RunResult`).  ``library``, ``device_root``, ``force_target``
        and ``timeout_ms`` are ``nbg run``'s ``--lib``, ``--device-root``,
        ``--force-target`` and ``--timeout``; ``skip_probe`` runs without a
        device node (a test double).  RuntimeUnavailableError when no
        runtime or device is there.  Ctrl-C ends the runtime process and
        raises KeyboardInterrupt at once.

        Limits, as ``nbg run``'s (doc/python.md, "Run limits"; None takes the
        default, UNLIMITED lifts a limit): ``max_output`` (1 GiB) bounds the
        bytes of the outputs the model declares, ``max_memory`` (2 GiB) the
        tensors the run holds in this process and, with the CPU backend,
        its buffers and scratch; ``max_work`` and ``max_plan_steps`` the
        CPU backend's work and planning.  A run over one raises
        InvalidFileError with code ``work-limit`` before anything is
        converted, allocated or run.  ``threads`` (``nbg run``'s
        ``--threads``; None: the online CPUs, at most 64) is how many
        threads one CPU backend operation may use: the outputs are the same
        bytes for any number.

        An array whose shape is the record's dimensions in another order
        raises ArrayError (``tensor-shape-mismatch``) naming both, one of
        neither float nor the record's dtype ArrayTypeError (a TypeError);
        ``layout`` (``"nchw"`` or ``"nhwc"``, ``nbg run``'s ``--layout``)
        says what the 4-D arrays are, and one in that layout is transposed
        to the model's order.

        ``dump=True`` (with ``backend="cpu"``) also keeps every executed
        operation's output, as ``nbg run --dump`` writes them: returns a
        :class:`RunResult` whose ``dump`` lists them as :class:`DumpTensor`
        in execution order.  ``dump_limit`` (default ``DUMP_LIMIT``, 1 GiB)
        bounds their bytes; a dump over it, or over ``max_memory`` with
        them counted twice, raises InvalidFileError ``work-limit`` before
        anything runs."""
        return self._run(inputs, backend, library, device_root, force_target, skip_probe,
                         timeout_ms, details, max_output, max_memory, max_work, max_plan_steps,
                         layout, dump, dump_limit, False, threads)

    def run_many(self, inputs: Iterable[Sequence[Any]], backend: str = "auto", *,
                 library: Optional[str] = None, device_root: Optional[str] = None,
                 force_target: bool = False, skip_probe: bool = False, timeout_ms: int = 0,
                 details: bool = False, max_output: Optional[int] = None,
                 max_memory: Optional[int] = None, max_work: Optional[int] = None,
                 max_plan_steps: Optional[int] = None, layout: Optional[str] = None,
                 dump: bool = False, dump_limit: Optional[int] = None,
                 threads: Optional[int] = None) -> Iterator[Any]:
        """An iterator over ``run`` of each item of ``inputs`` (each one
        ``run``'s inputs: one array per input record), with the same
        keywords, taken as they are needed.  With the CPU backend its plan
        is built once, by the first run, and kept by the model for the
        others (until ``close()``); each run is isolated as ``run``'s is."""
        for one in inputs:
            yield self._run(one, backend, library, device_root, force_target, skip_probe,
                            timeout_ms, details, max_output, max_memory, max_work,
                            max_plan_steps, layout, dump, dump_limit, True, threads)

    def _run(self, inputs, backend, library, device_root, force_target, skip_probe, timeout_ms,
             details, max_output, max_memory, max_work, max_plan_steps, layout, dump, dump_limit,
             keep_plan, threads=None):
        np = _numpy()
        if backend not in BACKENDS:
            raise _usage("backend must be one of %s" % ", ".join(BACKENDS))
        if layout not in LAYOUTS:
            raise _usage("layout must be None, \"nchw\" or \"nhwc\"")
        max_output = _limit("max_output", max_output) or RUN_MAX_OUTPUT
        max_memory = _limit("max_memory", max_memory) or RUN_MAX_MEMORY
        if threads is None:
            threads = min(_os.cpu_count() or 1, 64)
        elif not isinstance(threads, int) or not 1 <= threads <= 64:
            raise _usage("threads must be None or an int from 1 to 64")
        cpu_limits = (_limit("max_work", max_work), max_memory, _limit("max_plan_steps", max_plan_steps),
                      threads)
        ins = self.inputs
        if len(inputs) != len(ins):
            raise _error("input-count-mismatch", "the model has %d inputs; %d arrays were given"
                         % (len(ins), len(inputs)))
        if dump and backend != "cpu":
            raise _usage("dump=True keeps what the CPU backend computes: give backend=\"cpu\"")
        dump_limit = _limit("dump_limit", dump_limit) or DUMP_LIMIT
        self._run_budget(max_output, max_memory, cpu_limits if dump else None, dump_limit)
        raws = []
        for t, a in zip(ins, inputs):
            a = np.asarray(a)
            if a.dtype.kind == "f":
                raws.append(self._raw.quantize(False, t.index,
                                               self._shaped(t, a, False, layout).astype("<f4").tobytes()))
            elif t.numpy_descr is not None and a.dtype == t.numpy_dtype:
                raws.append(self._shaped(t, a, False, layout).tobytes())
            else:
                raise _error("tensor-type-mismatch", "input %d: dtype %s is neither float nor "
                             "the record's %s" % (t.index, a.dtype, t.numpy_descr))
        flags = ((_nbgkit.SESSION_FORCE_TARGET if force_target else 0) |
                 (_nbgkit.SESSION_SKIP_PROBE if skip_probe else 0))
        if dump:
            cpu_details, outs, tensors = self._raw.run_dump(raws, dump_limit, timeout_ms, *cpu_limits,
                                                           keep_plan)
            run = _json.loads(cpu_details)
            refs = [{k: op[k] for k in ("operation", "layer", "what")}
                    for op in run["reference_semantics"]]
            return RunResult("cpu", "nbgkit CPU backend",
                             [_from_raw(np, t, data) for t, data in zip(self.outputs, outs)],
                             refs, run["caveat"], [_dump_tensor(np, m, d) for m, d in tensors])
        info, outs = self._raw.run(backend, raws, flags, library, device_root, timeout_ms,
                                   *cpu_limits, keep_plan)
        arrays = []
        for t, (data, fmt) in zip(self.outputs, outs):
            arrays.append(_from_raw(np, t, data, fmt))
        if details and info["backend"] == "cpu":
            # the run's own plan's details (nbg_cpu_run_details_json), the
            # document nbg run's summary.json takes them from, without its notes
            run = _json.loads(info["cpu_details"])
            refs = [{k: op[k] for k in ("operation", "layer", "what")}
                    for op in run["reference_semantics"]]
            return RunResult(info["backend"], info["library"], arrays, refs, run["caveat"])
        if details:
            return RunResult(info["backend"], info["library"], arrays)
        return arrays


def _from_raw(np, t: Tensor, raw: bytes, fmt: Optional[int] = None):
    descr = _nbgkit.npy_descr(fmt) if fmt is not None else t.numpy_descr
    if descr is None:
        return np.frombuffer(raw, dtype=np.uint8)
    return np.frombuffer(raw, dtype=descr).reshape(t.shape)


def _usage(message: str) -> UsageError:
    return _error("invalid-argument", message)


def open(source, *, strict: bool = True, map: bool = False) -> Model:
    """Opens an NBG file: ``source`` is a path (str or os.PathLike;
    ``os.fsdecode`` gives a str for a name that is not UTF-8) or a
    bytes-like object holding the file (bytes, bytearray, memoryview, mmap:
    used in place, not copied).  A path is read into memory (at most 1 GiB;
    more raises ReadError ``input-too-large``), so another process
    truncating the file cannot touch the model; ``map=True`` maps it
    instead (not copied, any size): then a call that finds the file cut
    short meanwhile raises ReadError ``file-changed`` instead of returning
    what it read (nbgkit's SIGBUS guard is installed for the mapping).
    Parses and checks every rule and checksum, as ``nbg inspect`` does.
    ``strict=False`` opens a file whose only failure is a checksum, as
    ``nbg inspect`` still reports it (``valid`` False, integrity
    ``failed``).  Raises InvalidFileError (a ValueError), ReadError (an
    OSError: MissingFileError, a FileNotFoundError, for a missing file;
    IsDirectoryError for a directory)."""
    return Model(_nbgkit.open(source, strict, 0, map))


def verify(path, *, map: bool = False) -> Report:
    """The checks ``nbg verify`` makes: the structure and every checksum
    the file carries (no SHA-256 is computed).  A file that fails returns a
    Report with ``ok`` False and ``error`` set; a file that cannot be read
    raises ReadError.  The file is read into memory, or mapped with
    ``map=True``, as :func:`open` does."""
    summary, error = _nbgkit.verify(path, map)
    s = summary or {}
    sums = [Checksum(**c) for c in s.get("checksums", [])]
    return Report(path=str(path), ok=error is None, family=s.get("family"),
                  version=s.get("version"), target=s.get("target"),
                  section_count=s.get("sections"), integrity=s.get("integrity"),
                  integrity_detail=s.get("integrity_detail"), checksums=sums, error=error)


def diff(a, b) -> Dict[str, Any]:
    """Compares two NBG files (paths, bytes or open Models): the document
    ``nbg diff --json A B`` prints (verdict, owners, differences, the
    dynamic-I/O reconstruction).  As the command does, a file whose only
    failure is a checksum is compared all the same (its ``checksums_match``
    is false); any other failure raises."""
    opened = []
    try:
        ma = a if isinstance(a, Model) else opened.append(open(a, strict=False)) or opened[-1]
        mb = b if isinstance(b, Model) else opened.append(open(b, strict=False)) or opened[-1]
        return _json.loads(_nbgkit.diff(ma._raw, mb._raw))
    finally:
        for m in opened:
            m.close()


def codes() -> List[tuple]:
    """Every failure code: (name, exit code, meaning), as ``nbg codes`` lists them."""
    return _nbgkit.codes()


def _side(np, x, quantization):
    """A tensor as measure's side: its stored values as float32, its zero
    point and scale (0: not known), as ``nbg compare`` takes them: a float
    array is its values (scale 1), codes have the scale given (or a dump
    entry's) and else none."""
    if isinstance(x, DumpTensor):
        q = x.quantization or {}
        arr = x.array
        zp = q.get("zero_point") if isinstance(q.get("zero_point"), int) else 0
        scale = q.get("scale") if isinstance(q.get("scale"), (int, float)) and q.get("scale") > 0 else None
    else:
        arr = np.asarray(x)
        zp, scale = 0, None
        if quantization is not None:
            scale, zp = (quantization.scale, quantization.zero_point) if isinstance(
                quantization, Quantization) else quantization
            zp = zp or 0
    if arr.dtype.kind not in "fiub":
        raise _error("tensor-type-mismatch", "an array of dtype %s has no values to compare" % arr.dtype)
    if scale is None:
        scale = 1.0 if arr.dtype.kind == "f" else 0.0
    return arr, np.ascontiguousarray(arr, dtype="<f4").tobytes(), float(zp), float(scale)


def _tolerance(tolerance):
    if tolerance is None:
        return 0.0, False
    if isinstance(tolerance, str) and tolerance.endswith("%"):
        value, relative = tolerance[:-1], True
    else:
        value, relative = tolerance, False
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = -1.0
    if not v >= 0 or v == float("inf"):
        raise _usage("tolerance takes a number >= 0, or a percentage (\"1%\")")
    return (v / 100 if relative else v), relative


def _measure(np, a, b, quantization, tol, top_k) -> Dict[str, Any]:
    arr_a, fa, za, sa = _side(np, a, quantization)
    arr_b, fb, zb, sb = _side(np, b, quantization)
    if arr_a.shape != arr_b.shape:
        raise _error("tensor-shape-mismatch", "A holds %s %s, B %s %s; only tensors of one shape "
                     "compare" % (list(arr_a.shape), arr_a.dtype, list(arr_b.shape), arr_b.dtype))
    figures = _nbgkit.measure(fa, fb, za, sa, zb, sb, tol[0], tol[1], top_k)
    for k in ("max_abs_diff_dequantized", "mean_abs_diff_dequantized", "cosine"):
        if figures[k] != figures[k]:  # NaN: not known, as nbg compare's null
            figures[k] = None
    figures["equal"] = figures["beyond"] == 0
    return figures


def compare(a, b, *, tolerance: Union[float, str, None] = None, top_k: int = 5,
            quantization: Any = None) -> Dict[str, Any]:
    """Measures two tensors as ``nbg compare`` does (its library measure,
    ``nbg_tensor_measure``): ``a`` and ``b`` arrays of one shape (or two
    :class:`DumpTensor`), their elements' stored values (codes, or a float
    array's values).  Returns ``nbg compare --json``'s figures of a pair:
    ``elements``, ``tolerance``, ``beyond``, ``first_beyond``,
    ``max_abs_diff_stored``, ``mean_abs_diff_stored``,
    ``max_abs_diff_dequantized``, ``mean_abs_diff_dequantized`` (None where
    the scale is not known), ``cosine`` (None when a side is all zero),
    ``top_k``, ``top_k_common``, ``top1_equal`` and ``equal``.

    ``a`` and ``b`` may also be two dumps (``RunResult``s of
    ``run(dump=True)``, or their ``dump`` lists, of one model): then
    ``{"tensors": [figures with "a": A's entry...], "first_divergent": A's
    entry of the first tensor beyond the tolerance or None, "equal"}``.

    ``tolerance``: in stored units (default 0), or ``"X%"`` of the range of
    B's stored values; ``quantization``: a :class:`Quantization` or
    ``(scale, zero_point)`` of codes (both sides), for the dequantized
    figures (a float array is its values; a dump entry has its own).
    Raises ArrayError ``tensor-shape-mismatch`` for tensors of two shapes
    or dumps of other operations, UsageError for a bad tolerance."""
    np = _numpy()
    tol = _tolerance(tolerance)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 1 << 20:
        raise _usage("top_k must be a whole number from 1 to 1048576")
    da = a.dump if isinstance(a, RunResult) else a
    db = b.dump if isinstance(b, RunResult) else b
    if not (isinstance(da, list) and isinstance(db, list)):
        return _measure(np, a, b, quantization, tol, top_k)
    if len(da) != len(db) or any((x.operation, x.whole_layer) != (y.operation, y.whole_layer)
                                 for x, y in zip(da, db)):
        raise _error("tensor-shape-mismatch", "the dumps hold %d and %d tensors of other operations: "
                     "only dumps of one model compare" % (len(da), len(db)))
    tensors = []
    first = None
    for x, y in zip(da, db):
        f = _measure(np, x, y, None, tol, top_k)
        f["a"] = x.to_dict()
        tensors.append(f)
        if first is None and not f["equal"]:
            first = f["a"]
    return {"tensors": tensors, "first_divergent": first, "equal": first is None}
