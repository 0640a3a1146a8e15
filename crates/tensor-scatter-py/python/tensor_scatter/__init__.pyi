from typing import Any, Literal, Optional, TypeVar

__version__: str

Array = TypeVar("Array")  # a NumPy array, a torch.Tensor or a JAX array; results follow `data`

Reduction = Literal["none", "add", "sub", "mul", "min", "max", "mean", "sum", "prod", "amin", "amax"]
Negative = Literal["wrap", "error"]
ScatterOutOfRange = Literal["error", "clamp", "skip"]
GatherOutOfRange = Literal["error", "clamp", "fill"]
AccumulationMode = Literal["per_update", "wide"]

class Error(Exception): ...
class OutOfRangeError(Error, IndexError): ...
class DTypeError(Error, TypeError): ...
class ArgumentError(Error, ValueError): ...
class OutOfMemoryError(Error, MemoryError): ...

def default_threads() -> int: ...
def set_default_threads(n: int) -> None: ...
def scatter_elements(
    data: Array, indices: Any, updates: Any, *, axis: int = 0, reduction: Reduction = "none",
    include_self: bool = True, negative_indices: Negative = "wrap",
    out_of_range: ScatterOutOfRange = "error", accumulation: AccumulationMode = "per_update",
    updates_window: bool = False, threads: Optional[int] = None, out: Optional[Any] = None,
) -> Array: ...
def scatter_nd(
    data: Array, indices: Any, updates: Any, *, reduction: Reduction = "none",
    include_self: bool = True, negative_indices: Negative = "wrap",
    out_of_range: ScatterOutOfRange = "error", accumulation: AccumulationMode = "per_update",
    threads: Optional[int] = None, out: Optional[Any] = None,
) -> Array: ...
def scatter_update(
    data: Array, indices: Any, updates: Any, *, axis: int = 0, reduction: Reduction = "none",
    include_self: bool = True, negative_indices: Negative = "wrap",
    out_of_range: ScatterOutOfRange = "error", accumulation: AccumulationMode = "per_update",
    threads: Optional[int] = None, out: Optional[Any] = None,
) -> Array: ...
def gather(
    data: Array, indices: Any, *, axis: int = 0, batch_dims: int = 0,
    negative_indices: Negative = "wrap", out_of_range: GatherOutOfRange = "error",
    fill_value: Any = 0, threads: Optional[int] = None, out: Optional[Any] = None,
) -> Array: ...
def gather_elements(
    data: Array, indices: Any, *, axis: int = 0, negative_indices: Negative = "wrap",
    out_of_range: GatherOutOfRange = "error", fill_value: Any = 0,
    threads: Optional[int] = None, out: Optional[Any] = None,
) -> Array: ...
def gather_nd(
    data: Array, indices: Any, *, batch_dims: int = 0, negative_indices: Negative = "wrap",
    out_of_range: GatherOutOfRange = "error", fill_value: Any = 0,
    threads: Optional[int] = None, out: Optional[Any] = None,
) -> Array: ...
