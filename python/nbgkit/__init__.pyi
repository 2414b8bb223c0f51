"""Type stubs of nbgkit (doc/python.md)."""

import os
from dataclasses import dataclass
from typing import (Any, Dict, Iterable, Iterator, List, Literal, Optional, Sequence, Tuple,
                    Union, overload)

import numpy as np
from numpy.typing import NDArray

__version__: str
BACKENDS: Tuple[str, ...]
LAYOUTS: Tuple[Optional[str], ...]
UNLIMITED: int
RUN_MAX_OUTPUT: int
RUN_MAX_MEMORY: int
DUMP_LIMIT: int

# a path (str, os.PathLike) or the file's bytes (bytes-like)
Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]
Backend = Literal["auto", "nnsdk", "viplite", "cpu"]

class Error(Exception):
    code: str
    offset: int
    field: str
    message: str
    exit_code: int
    errno: int
    index: int
    path: Optional[str]

class InvalidFileError(Error, ValueError): ...
class ArrayError(Error, ValueError): ...
class ArrayTypeError(ArrayError, TypeError): ...
class UsageError(Error, ValueError): ...
class ReadError(Error, OSError): ...
class MissingFileError(ReadError, FileNotFoundError): ...
class IsDirectoryError(ReadError, IsADirectoryError): ...
class AccessDeniedError(ReadError, PermissionError): ...
class RuntimeUnavailableError(Error, RuntimeError): ...

@dataclass(frozen=True)
class Quantization:
    format: str
    scale: Optional[float] = ...
    zero_point: Optional[int] = ...
    fixed_point_position: Optional[int] = ...
    raw: Dict[str, Any] = ...

@dataclass(frozen=True)
class Tensor:
    index: int
    name: Optional[str]
    shape: Tuple[int, ...]
    dtype: Optional[str]
    numpy_descr: Optional[str]
    quantization: Quantization
    element_count: int
    byte_size: Optional[int]
    record: Dict[str, Any] = ...
    @property
    def numpy_dtype(self) -> Optional[np.dtype[Any]]: ...

@dataclass(frozen=True)
class Target:
    value: int
    config_name: Optional[str]
    soc: Optional[str]

@dataclass(frozen=True)
class Checksum:
    kind: str
    section: str
    offset: int
    stored: int
    computed: int
    matches: bool

@dataclass(frozen=True)
class Report:
    path: str
    ok: bool
    family: Optional[int]
    version: Optional[int]
    target: Optional[int]
    section_count: Optional[int]
    integrity: Optional[str]
    integrity_detail: Optional[str]
    checksums: List[Checksum]
    error: Optional[Error] = ...

@dataclass
class Weights:
    index: int
    operation: int
    command: int
    status: str
    reason_id: str
    reason: str
    format: str
    order: str
    data_type: str
    shape: Tuple[int, int, int, int]
    zero_point: int
    input_zero_point: int
    stream_offset: int
    stream_size: int
    cores: int
    bit_offset: Optional[int]
    codes: Optional[NDArray[Any]] = ...
    bias: Optional[NDArray[Any]] = ...
    bias_stored: Optional[NDArray[Any]] = ...
    scale: Optional[NDArray[Any]] = ...
    lut_inputs: Optional[NDArray[Any]] = ...
    lut_table: Optional[NDArray[np.float32]] = ...
    def floats(self) -> Tuple[Optional[NDArray[Any]], Optional[str]]: ...

@dataclass
class RunResult:
    backend: str
    library: str
    outputs: List[NDArray[Any]]
    reference_semantics: List[Dict[str, Any]] = ...
    caveat: Optional[str] = ...
    dump: Optional[List["DumpTensor"]] = ...

@dataclass
class DumpTensor:
    operation: int
    layer_id: int
    layer: str
    operator: str
    shape: Tuple[int, ...]
    data_type: Optional[str]
    quantization: Dict[str, Any]
    bytes: int
    whole_layer: bool
    tiles: int
    output_record: Optional[int]
    array: Optional[NDArray[Any]] = ...
    def to_dict(self) -> Dict[str, Any]: ...

class Model:
    def __enter__(self) -> "Model": ...
    def __exit__(self, *exc: object) -> None: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> str: ...
    def to_dict(self, *, layers: bool = ..., operations: bool = ..., patches: bool = ...,
                commands: bool = ..., network: bool = ..., memory: bool = ...,
                weights: bool = ..., only: bool = ...) -> Dict[str, Any]: ...
    def report(self) -> str: ...
    @property
    def valid(self) -> bool: ...
    @property
    def family(self) -> int: ...
    @property
    def version(self) -> int: ...
    @property
    def version_hex(self) -> str: ...
    @property
    def target(self) -> Target: ...
    @property
    def file_size(self) -> int: ...
    @property
    def sha256(self) -> str: ...
    @property
    def integrity(self) -> str: ...
    @property
    def network_name(self) -> Optional[str]: ...
    @property
    def inputs(self) -> List[Tensor]: ...
    @property
    def outputs(self) -> List[Tensor]: ...
    @property
    def sections(self) -> List[Dict[str, Any]]: ...
    @property
    def notes(self) -> List[Dict[str, Any]]: ...
    @property
    def layers(self) -> List[Dict[str, Any]]: ...
    @property
    def operations(self) -> List[Dict[str, Any]]: ...
    @property
    def commands(self) -> Dict[str, Any]: ...
    @property
    def network(self) -> Dict[str, Any]: ...
    @property
    def memory(self) -> Dict[str, Any]: ...
    def ledger(self) -> Dict[str, Any]: ...
    def cpu_plan(self, *, max_work: Optional[int] = ..., max_memory: Optional[int] = ...,
                 max_plan_steps: Optional[int] = ...) -> Dict[str, Any]: ...
    @overload
    def weights(self) -> List[Weights]: ...
    @overload
    def weights(self, op: int) -> Weights: ...
    def quantize(self, array: Any, input: int = ...) -> NDArray[Any]: ...
    def dequantize(self, array: Any, output: int = ...) -> NDArray[Any]: ...
    @overload
    def run(self, inputs: Sequence[Any], backend: Backend = ..., *,
            library: Optional[str] = ..., device_root: Optional[str] = ...,
            force_target: bool = ..., skip_probe: bool = ..., timeout_ms: int = ...,
            details: Literal[False] = ..., max_output: Optional[int] = ...,
            max_memory: Optional[int] = ..., max_work: Optional[int] = ...,
            max_plan_steps: Optional[int] = ...,
            layout: Optional[Literal["nchw", "nhwc"]] = ..., dump: Literal[False] = ...,
            dump_limit: Optional[int] = ..., threads: Optional[int] = ...) -> List[NDArray[Any]]: ...
    @overload
    def run(self, inputs: Sequence[Any], backend: Backend = ..., *,
            library: Optional[str] = ..., device_root: Optional[str] = ...,
            force_target: bool = ..., skip_probe: bool = ..., timeout_ms: int = ...,
            details: bool = ..., max_output: Optional[int] = ...,
            max_memory: Optional[int] = ..., max_work: Optional[int] = ...,
            max_plan_steps: Optional[int] = ...,
            layout: Optional[Literal["nchw", "nhwc"]] = ..., dump: Literal[True],
            dump_limit: Optional[int] = ..., threads: Optional[int] = ...) -> RunResult: ...
    @overload
    def run(self, inputs: Sequence[Any], backend: Backend = ..., *,
            library: Optional[str] = ..., device_root: Optional[str] = ...,
            force_target: bool = ..., skip_probe: bool = ..., timeout_ms: int = ...,
            details: Literal[True], max_output: Optional[int] = ...,
            max_memory: Optional[int] = ..., max_work: Optional[int] = ...,
            max_plan_steps: Optional[int] = ...,
            layout: Optional[Literal["nchw", "nhwc"]] = ..., dump: bool = ...,
            dump_limit: Optional[int] = ..., threads: Optional[int] = ...) -> RunResult: ...
    def run_many(self, inputs: Iterable[Sequence[Any]], backend: Backend = ..., *,
                 library: Optional[str] = ..., device_root: Optional[str] = ...,
                 force_target: bool = ..., skip_probe: bool = ..., timeout_ms: int = ...,
                 details: bool = ..., max_output: Optional[int] = ...,
                 max_memory: Optional[int] = ..., max_work: Optional[int] = ...,
                 max_plan_steps: Optional[int] = ...,
                 layout: Optional[Literal["nchw", "nhwc"]] = ..., dump: bool = ...,
                 dump_limit: Optional[int] = ..., threads: Optional[int] = ...) -> Iterator[Any]: ...

def open(source: Source, *, strict: bool = ..., map: bool = ...) -> Model: ...
def verify(path: Union[str, bytes, "os.PathLike[str]"], *, map: bool = ...) -> Report: ...
def diff(a: Union[Source, Model], b: Union[Source, Model]) -> Dict[str, Any]: ...
def codes() -> List[Tuple[str, int, str]]: ...
def compare(a: Any, b: Any, *, tolerance: Union[float, str, None] = ..., top_k: int = ...,
            quantization: Any = ...) -> Dict[str, Any]: ...
