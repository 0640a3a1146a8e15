from typing import Any, Literal, Optional, Tuple, TypeVar

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
class ArgumentTypeError(ArgumentError, TypeError): ...
class OutOfMemoryError(Error, MemoryError): ...

def default_threads() -> int: ...
def set_default_threads(n: int) -> None: ...
def jax_export_checks() -> list[Any]: ...
def scatter_elements(
    data: Array, indices: Any, updates: Any, *, axis: int = 0, reduction: Reduction = "none",
    include_self: bool = True, negative_indices: Negative = "wrap",
    out_of_range: ScatterOutOfRange = "error", accumulation: AccumulationMode = "per_update",
    updates_window: bool = False, threads: Optional[int] = None, out: Optional[Any] = None,
    ties: Ties = "split", block: Optional[int] = None,
) -> Array: ...
def scatter_nd(
    data: Array, indices: Any, updates: Any, *, reduction: Reduction = "none",
    include_self: bool = True, negative_indices: Negative = "wrap",
    out_of_range: ScatterOutOfRange = "error", accumulation: AccumulationMode = "per_update",
    threads: Optional[int] = None, out: Optional[Any] = None, ties: Ties = "split",
) -> Array: ...
def scatter_update(
    data: Array, indices: Any, updates: Any, *, axis: int = 0, reduction: Reduction = "none",
    include_self: bool = True, negative_indices: Negative = "wrap",
    out_of_range: ScatterOutOfRange = "error", accumulation: AccumulationMode = "per_update",
    threads: Optional[int] = None, out: Optional[Any] = None, ties: Ties = "split",
    block: Optional[int] = None,
) -> Array: ...
def gather(
    data: Array, indices: Any, *, axis: int = 0, batch_dims: int = 0,
    negative_indices: Negative = "wrap", out_of_range: GatherOutOfRange = "error",
    fill_value: Optional[Any] = None, threads: Optional[int] = None, out: Optional[Any] = None,
) -> Array: ...
def gather_elements(
    data: Array, indices: Any, *, axis: int = 0, negative_indices: Negative = "wrap",
    out_of_range: GatherOutOfRange = "error", fill_value: Optional[Any] = None,
    threads: Optional[int] = None, out: Optional[Any] = None,
) -> Array: ...
def gather_nd(
    data: Array, indices: Any, *, batch_dims: int = 0, negative_indices: Negative = "wrap",
    out_of_range: GatherOutOfRange = "error", fill_value: Optional[Any] = None,
    threads: Optional[int] = None, out: Optional[Any] = None,
) -> Array: ...

# torch_scatter's API (tensor_scatter._segment).
SegmentReduce = Literal["sum", "add", "mul", "mean", "min", "max"]
Ties = Literal["split", "first"]  # where a min/max cell's gradient goes (torch autograd)
def scatter(
    src: Array, index: Any, dim: int = -1, out: Optional[Any] = None,
    dim_size: Optional[int] = None, reduce: SegmentReduce = "sum", *,
    threads: Optional[int] = None, ties: Ties = "split", block: Optional[int] = None,
) -> Array: ...
def scatter_sum(src: Array, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None, *, threads: Optional[int] = None,
                block: Optional[int] = None) -> Array: ...
def scatter_add(src: Array, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None, *, threads: Optional[int] = None,
                block: Optional[int] = None) -> Array: ...
def scatter_mul(src: Array, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None, *, threads: Optional[int] = None,
                block: Optional[int] = None) -> Array: ...
def scatter_mean(src: Array, index: Any, dim: int = -1, out: Optional[Any] = None,
                 dim_size: Optional[int] = None, *, threads: Optional[int] = None,
                 block: Optional[int] = None) -> Array: ...
def scatter_min(src: Array, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None, *,
                threads: Optional[int] = None, ties: Ties = "split") -> Tuple[Array, Array]: ...
def scatter_max(src: Array, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None, *,
                threads: Optional[int] = None, ties: Ties = "split") -> Tuple[Array, Array]: ...
def segment_csr(src: Array, indptr: Any, out: Optional[Any] = None, reduce: SegmentReduce = "sum",
                *, threads: Optional[int] = None, ties: Ties = "split",
                block: Optional[int] = None) -> Array: ...
def segment_coo(src: Array, index: Any, out: Optional[Any] = None, dim_size: Optional[int] = None,
                reduce: SegmentReduce = "sum", *, threads: Optional[int] = None, ties: Ties = "split",
                block: Optional[int] = None) -> Array: ...
def segment_sum_csr(src: Array, indptr: Any, out: Optional[Any] = None, *,
                    threads: Optional[int] = None, ties: Ties = "split") -> Array: ...
def segment_add_csr(src: Array, indptr: Any, out: Optional[Any] = None, *,
                    threads: Optional[int] = None, ties: Ties = "split") -> Array: ...
def segment_mean_csr(src: Array, indptr: Any, out: Optional[Any] = None, *,
                     threads: Optional[int] = None, ties: Ties = "split") -> Array: ...
def segment_min_csr(src: Array, indptr: Any, out: Optional[Any] = None, *,
                    threads: Optional[int] = None, ties: Ties = "split") -> Tuple[Array, Array]: ...
def segment_max_csr(src: Array, indptr: Any, out: Optional[Any] = None, *,
                    threads: Optional[int] = None, ties: Ties = "split") -> Tuple[Array, Array]: ...
def segment_sum_coo(src: Array, index: Any, out: Optional[Any] = None,
                    dim_size: Optional[int] = None, *, threads: Optional[int] = None, ties: Ties = "split") -> Array: ...
def segment_add_coo(src: Array, index: Any, out: Optional[Any] = None,
                    dim_size: Optional[int] = None, *, threads: Optional[int] = None, ties: Ties = "split") -> Array: ...
def segment_mean_coo(src: Array, index: Any, out: Optional[Any] = None,
                     dim_size: Optional[int] = None, *, threads: Optional[int] = None, ties: Ties = "split") -> Array: ...
def segment_min_coo(src: Array, index: Any, out: Optional[Any] = None,
                    dim_size: Optional[int] = None, *,
                    threads: Optional[int] = None, ties: Ties = "split") -> Tuple[Array, Array]: ...
def segment_max_coo(src: Array, index: Any, out: Optional[Any] = None,
                    dim_size: Optional[int] = None, *,
                    threads: Optional[int] = None, ties: Ties = "split") -> Tuple[Array, Array]: ...
def gather_csr(src: Array, indptr: Any, out: Optional[Any] = None, *,
               threads: Optional[int] = None) -> Array: ...
def gather_coo(src: Array, index: Any, out: Optional[Any] = None, *,
               threads: Optional[int] = None) -> Array: ...
def scatter_softmax(src: Array, index: Any, dim: int = -1, dim_size: Optional[int] = None, *,
                    threads: Optional[int] = None) -> Array: ...
def scatter_log_softmax(src: Array, index: Any, dim: int = -1, dim_size: Optional[int] = None,
                        *, threads: Optional[int] = None) -> Array: ...
def scatter_logsumexp(src: Array, index: Any, dim: int = -1, out: Optional[Any] = None,
                      dim_size: Optional[int] = None, *, threads: Optional[int] = None) -> Array: ...
def scatter_std(src: Array, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None, unbiased: bool = True, *,
                threads: Optional[int] = None) -> Array: ...


def scatter_vjp(grad: Array, src: Array, index: Any, dim: int = -1, out: Optional[Any] = None,
                dim_size: Optional[int] = None, reduce: SegmentReduce = "sum",
                ties: Ties = "split", *,
                threads: Optional[int] = None) -> Tuple[Array, Optional[Array]]: ...
def segment_coo_vjp(grad: Array, src: Array, index: Any, out: Optional[Any] = None,
                    dim_size: Optional[int] = None, reduce: SegmentReduce = "sum",
                    ties: Ties = "split", *,
                    threads: Optional[int] = None) -> Tuple[Array, Optional[Array]]: ...
def segment_csr_vjp(grad: Array, src: Array, indptr: Any, out: Optional[Any] = None,
                    reduce: SegmentReduce = "sum", ties: Ties = "split", *,
                    threads: Optional[int] = None) -> Tuple[Array, Optional[Array]]: ...
def gather_coo_vjp(grad: Array, index: Any, dim_size: int, *,
                   threads: Optional[int] = None) -> Array: ...
def gather_csr_vjp(grad: Array, indptr: Any, *, threads: Optional[int] = None) -> Array: ...
def scatter_elements_vjp(
    grad: Array, data: Any, indices: Any, updates: Any, *, axis: int = 0,
    reduction: Reduction = "none", include_self: bool = True, negative_indices: Negative = "wrap",
    out_of_range: ScatterOutOfRange = "error", updates_window: bool = False, ties: Ties = "split",
    threads: Optional[int] = None,
) -> Tuple[Array, Array]: ...
def scatter_nd_vjp(
    grad: Array, data: Any, indices: Any, updates: Any, *, reduction: Reduction = "none",
    include_self: bool = True, negative_indices: Negative = "wrap",
    out_of_range: ScatterOutOfRange = "error", ties: Ties = "split",
    threads: Optional[int] = None,
) -> Tuple[Array, Array]: ...
def scatter_update_vjp(
    grad: Array, data: Any, indices: Any, updates: Any, *, axis: int = 0,
    reduction: Reduction = "none", include_self: bool = True, negative_indices: Negative = "wrap",
    out_of_range: ScatterOutOfRange = "error", ties: Ties = "split",
    threads: Optional[int] = None,
) -> Tuple[Array, Array]: ...
def gather_vjp(
    grad: Array, indices: Any, data_shape: Tuple[int, ...], *, axis: int = 0, batch_dims: int = 0,
    negative_indices: Negative = "wrap", out_of_range: GatherOutOfRange = "error",
    threads: Optional[int] = None,
) -> Array: ...
def gather_elements_vjp(
    grad: Array, indices: Any, data_shape: Tuple[int, ...], *, axis: int = 0,
    negative_indices: Negative = "wrap", out_of_range: GatherOutOfRange = "error",
    threads: Optional[int] = None,
) -> Array: ...
def gather_nd_vjp(
    grad: Array, indices: Any, data_shape: Tuple[int, ...], *, batch_dims: int = 0,
    negative_indices: Negative = "wrap", out_of_range: GatherOutOfRange = "error",
    threads: Optional[int] = None,
) -> Array: ...
def scatter_softmax_vjp(grad: Array, src: Any, index: Any, dim: int = -1,
                        dim_size: Optional[int] = None, *,
                        threads: Optional[int] = None) -> Array: ...
def scatter_log_softmax_vjp(grad: Array, src: Any, index: Any, dim: int = -1,
                            dim_size: Optional[int] = None, *,
                            threads: Optional[int] = None) -> Array: ...
def scatter_logsumexp_vjp(grad: Array, src: Any, index: Any, dim: int = -1,
                          dim_size: Optional[int] = None, *,
                          threads: Optional[int] = None) -> Array: ...
def scatter_std_vjp(grad: Array, src: Any, index: Any, dim: int = -1,
                    dim_size: Optional[int] = None, unbiased: bool = True, *,
                    threads: Optional[int] = None) -> Array: ...
