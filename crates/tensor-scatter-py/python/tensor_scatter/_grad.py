"""Backward passes: the vector-Jacobian products as plain functions (NumPy arrays, torch
tensors) and ``torch.autograd`` support, for the graph-learning family (``scatter``,
``segment_coo``, ``segment_csr``, the two gathers, the composites) and for the six operators
(the three scatters and three gathers).

The rules are the Rust library's (``tensor_scatter::segment::scatter_vjp``): sum gives each
element its cell's gradient, mean divides it by the cell's count (``out``'s value counted),
mul multiplies it by the product of the cell's other values (no division: zeros are exact),
min and max give it to the values equal to the result, split evenly (``ties="split"``, as
PyTorch's ``scatter_reduce``) or all to the one ``arg`` names (``ties="first"``, as
torch_scatter). Every gradient is bit-identical for any ``threads``.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from ._arrays import recorded, traced_jax
from ._core import (
    GATHER_NAMES, SCATTER_NAMES, SEGMENT_NAMES, GatherVjpOptions, ScatterVjpOptions,
    gather_vjp_raw, scatter_vjp_raw, segment_vjp_raw, vjp_name,
)
from ._errors import ArgumentError

__all__ = [
    "scatter_vjp", "segment_coo_vjp", "segment_csr_vjp", "gather_coo_vjp", "gather_csr_vjp",
    "scatter_softmax_vjp", "scatter_log_softmax_vjp", "scatter_logsumexp_vjp", "scatter_std_vjp",
    "scatter_elements_vjp", "scatter_nd_vjp", "scatter_update_vjp", "gather_vjp",
    "gather_elements_vjp", "gather_nd_vjp",
]


def _vjp(op, grad, src, index, out, dim, dim_size, reduce, ties, threads):
    """A segment-family backward: its operator when torch traces or records the call, else
    :func:`_core.segment_vjp_raw`."""
    if not isinstance(reduce, str):
        raise ArgumentError(f"{vjp_name(SEGMENT_NAMES, op)}: reduce: {reduce!r} is not a string")
    if not isinstance(ties, str):
        raise ArgumentError(f"{vjp_name(SEGMENT_NAMES, op)}: ties: {ties!r} is not a string")
    if recorded(grad, src, out):
        from . import _torch_ops
        return _torch_ops.segment_vjp(op, grad, src, index, out, dim, dim_size, reduce, ties,
                                      threads)
    if traced_jax(grad, src, index, out):
        from . import _jax_ops
        return _jax_ops.segment_vjp(op, grad, src, index, out, dim, dim_size, reduce, ties,
                                    threads)
    return segment_vjp_raw(op, grad, src, index, out, (dim, dim_size, reduce, ties, threads))


def scatter_vjp(grad, src, index, dim: int = -1, out=None, dim_size: Optional[int] = None,
                reduce: str = "sum", ties: str = "split", *,
                threads: Optional[int] = None) -> Tuple[Any, Any]:
    """The gradients ``(d src, d out)`` of :func:`scatter` (and of ``scatter_min`` /
    ``scatter_max``) given ``grad``, the gradient with respect to its result; ``out`` is the
    forward's starting values (``d out`` is ``None`` without it). Floating-point dtypes.

    >>> import numpy as np, tensor_scatter as ts
    >>> src, index = np.array([1.0, 5.0, 2.0, 5.0]), np.array([0, 0, 1, 0])
    >>> ts.scatter_vjp(np.array([6.0, 1.0]), src, index, reduce="max")
    (array([0., 3., 1., 3.]), None)
    >>> ts.scatter_vjp(np.array([6.0, 1.0]), src, index, reduce="max", ties="first")[0]
    array([0., 6., 1., 0.])
    """
    return _vjp("scatter", grad, src, index, out, dim, dim_size, reduce, ties, threads)


def segment_coo_vjp(grad, src, index, out=None, dim_size: Optional[int] = None,
                    reduce: str = "sum", ties: str = "split", *,
                    threads: Optional[int] = None) -> Tuple[Any, Any]:
    """The gradients ``(d src, d out)`` of :func:`segment_coo` (see :func:`scatter_vjp`).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.segment_coo_vjp(np.array([4.0, 9.0]), np.ones(3), np.array([0, 0, 1]), reduce="mean")
    (array([2., 2., 9.]), None)
    """
    return _vjp("coo", grad, src, index, out, -1, dim_size, reduce, ties, threads)


def segment_csr_vjp(grad, src, indptr, out=None, reduce: str = "sum", ties: str = "split", *,
                    threads: Optional[int] = None) -> Tuple[Any, Any]:
    """The gradients ``(d src, d out)`` of :func:`segment_csr` (see :func:`scatter_vjp`);
    positions outside every segment get 0.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.segment_csr_vjp(np.array([2.0, 3.0]), np.array([1.0, 0.0, 4.0, 7.0]),
    ...                    np.array([0, 3, 3]), reduce="mul")
    (array([0., 8., 0., 0.]), None)
    """
    return _vjp("csr", grad, src, indptr, out, -1, None, reduce, ties, threads)


def gather_coo_vjp(grad, index, dim_size: int, *, threads: Optional[int] = None):
    """The gradient of :func:`gather_coo` with respect to its ``src``, whose extent along
    ``dim = index.ndim - 1`` was ``dim_size``: the sum of ``grad`` by ``index``.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.gather_coo_vjp(np.array([1.0, 2.0, 4.0]), np.array([2, 0, 2]), 3)
    array([2., 0., 5.])
    """
    return _vjp("gather_coo", grad, None, index, None, -1, dim_size, "sum", "split", threads)[0]


def gather_csr_vjp(grad, indptr, *, threads: Optional[int] = None):
    """The gradient of :func:`gather_csr` with respect to its ``src``: the sum of ``grad`` over
    each segment.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.gather_csr_vjp(np.array([1.0, 2.0, 4.0]), np.array([0, 2, 2, 3]))
    array([3., 0., 4.])
    """
    return _vjp("gather_csr", grad, None, indptr, None, -1, None, "sum", "split", threads)[0]


def scatter_softmax_vjp(grad, src, index, dim: int = -1, dim_size: Optional[int] = None, *,
                        threads: Optional[int] = None):
    """The gradient of :func:`scatter_softmax` with respect to ``src`` (``grad`` has its
    shape): ``y * (grad - sum(grad * y))`` over each cell, ``y`` the softmax.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_softmax_vjp(np.array([1.0, -1.0]), np.zeros(2), np.array([0, 0]))
    array([ 0.5, -0.5])
    """
    return _vjp("softmax", grad, src, index, None, dim, dim_size, "sum", "split", threads)[0]


def scatter_log_softmax_vjp(grad, src, index, dim: int = -1, dim_size: Optional[int] = None,
                            *, threads: Optional[int] = None):
    """The gradient of :func:`scatter_log_softmax`: ``grad - exp(y) * sum(grad)`` over each
    cell, ``y`` the log-softmax.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_log_softmax_vjp(np.array([1.0, 1.0]), np.zeros(2), np.array([0, 0]))
    array([0., 0.])
    """
    return _vjp("log_softmax", grad, src, index, None, dim, dim_size, "sum", "split", threads)[0]


def scatter_logsumexp_vjp(grad, src, index, dim: int = -1, dim_size: Optional[int] = None, *,
                          threads: Optional[int] = None):
    """The gradient of :func:`scatter_logsumexp` (``grad`` shaped as its result): each element
    gets its cell's gradient times its softmax.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_logsumexp_vjp(np.array([4.0]), np.zeros(2), np.array([0, 0]))
    array([2., 2.])
    """
    return _vjp("logsumexp", grad, src, index, None, dim, dim_size, "sum", "split", threads)[0]


def scatter_std_vjp(grad, src, index, dim: int = -1, dim_size: Optional[int] = None,
                    unbiased: bool = True, *, threads: Optional[int] = None):
    """The gradient of :func:`scatter_std` (``grad`` shaped as its result):
    ``grad * (x - mean) / (d * std)`` with ``d`` its divisor; 0 where the std is 0 (one
    element, or all equal: no derivative there; PyTorch gives NaN).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_std_vjp(np.array([1.0]), np.array([1.0, 3.0]), np.array([0, 0]))
    array([-0.70710678,  0.70710678])
    """
    op = "std" if unbiased else "std_biased"
    return _vjp(op, grad, src, index, None, dim, dim_size, "sum", "split", threads)[0]


# --- the six operators ----------------------------------------------------------------------


# The public backwards pass their options as a plain tuple in the fields' order (a named
# tuple costs 0.5 µs to make, a plain one nothing), named where an adapter reads them.

def _scatter_vjp(op, grad, data, indices, updates, options: tuple):
    """A scatter's backward (``options``: :class:`_core.ScatterVjpOptions`' fields): its
    operator when torch traces or records the call, else :func:`_core.scatter_vjp_raw`."""
    if recorded(grad, data, updates):
        from . import _torch_ops
        return _torch_ops.scatter_vjp(op, grad, data, indices, updates,
                                      ScatterVjpOptions._make(options))
    if traced_jax(grad, data, indices, updates):
        from . import _jax_ops
        return _jax_ops.scatter_vjp(op, grad, data, indices, updates,
                                    ScatterVjpOptions._make(options))
    return scatter_vjp_raw(op, grad, data, indices, updates, options)


def _gather_vjp(op, grad, indices, data_shape, options: tuple):
    """A gather's backward (``options``: :class:`_core.GatherVjpOptions`' fields), as
    :func:`_scatter_vjp`."""
    if recorded(grad):
        from . import _torch_ops
        return _torch_ops.gather_vjp(op, grad, indices, data_shape, GatherVjpOptions._make(options))
    if traced_jax(grad, indices):
        from . import _jax_ops
        return _jax_ops.gather_vjp(op, grad, indices, data_shape, GatherVjpOptions._make(options))
    return gather_vjp_raw(op, grad, indices, data_shape, options)


def scatter_elements_vjp(grad, data, indices, updates, *, axis: int = 0,
                         reduction: str = "none", include_self: bool = True,
                         negative_indices: str = "wrap", out_of_range: str = "error",
                         updates_window: bool = False, ties: str = "split",
                         threads: Optional[int] = None) -> Tuple[Any, Any]:
    """The gradients ``(d data, d updates)`` of :func:`scatter_elements` given ``grad``, the
    gradient with respect to its result; the other arguments are the forward's. ``none``:
    only the update that won gets its cell's gradient and the overwritten cell none; ``mean``
    divides by the count (data counted with ``include_self``); ``mul`` multiplies by the
    product of the others (no division); ``min`` / ``max`` give it to the values equal to the
    result, split evenly (``ties="split"``) or all to the first (``"first"``, data's value
    first). Floating-point dtypes.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_elements_vjp(np.array([6.0, 7.0]), np.array([4.0, 0.0]), np.array([0, 0]),
    ...                         np.array([4.0, 1.0]), reduction="max")
    (array([3., 7.]), array([3., 0.]))
    """
    return _scatter_vjp("elements", grad, data, indices, updates, (
        axis, reduction, include_self, negative_indices, out_of_range, ties, threads,
        updates_window))


def scatter_nd_vjp(grad, data, indices, updates, *, reduction: str = "none",
                   include_self: bool = True, negative_indices: str = "wrap",
                   out_of_range: str = "error", ties: str = "split",
                   threads: Optional[int] = None) -> Tuple[Any, Any]:
    """The gradients ``(d data, d updates)`` of :func:`scatter_nd` (see
    :func:`scatter_elements_vjp`).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_nd_vjp(np.array([1.0, 2.0]), np.zeros(2), np.array([[1], [1]]),
    ...                   np.array([5.0, 6.0]))
    (array([1., 0.]), array([0., 2.]))
    """
    return _scatter_vjp("nd", grad, data, indices, updates, (
        0, reduction, include_self, negative_indices, out_of_range, ties, threads, False))


def scatter_update_vjp(grad, data, indices, updates, *, axis: int = 0,
                       reduction: str = "none", include_self: bool = True,
                       negative_indices: str = "wrap", out_of_range: str = "error",
                       ties: str = "split", threads: Optional[int] = None) -> Tuple[Any, Any]:
    """The gradients ``(d data, d updates)`` of :func:`scatter_update` (see
    :func:`scatter_elements_vjp`).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_update_vjp(np.array([1.0, 2.0]), np.ones(2), np.array([1, 1]),
    ...                       np.array([2.0, 3.0]), reduction="mul")
    (array([ 1., 12.]), array([6., 4.]))
    """
    return _scatter_vjp("update", grad, data, indices, updates, (
        axis, reduction, include_self, negative_indices, out_of_range, ties, threads, False))


def gather_vjp(grad, indices, data_shape, *, axis: int = 0, batch_dims: int = 0,
               negative_indices: str = "wrap", out_of_range: str = "error",
               threads: Optional[int] = None):
    """The gradient of :func:`gather` with respect to a ``data`` of shape ``data_shape``: the
    sum of ``grad`` into the cells it read (a clamped index adds into the cell it read, a
    filled position adds nothing). Any dtype.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.gather_vjp(np.array([1.0, 2.0, 4.0]), np.array([2, 0, 2]), (3,))
    array([2., 0., 5.])
    """
    return _gather_vjp("gather", grad, indices, data_shape, (
        axis, batch_dims, negative_indices, out_of_range, threads))


def gather_elements_vjp(grad, indices, data_shape, *, axis: int = 0,
                        negative_indices: str = "wrap", out_of_range: str = "error",
                        threads: Optional[int] = None):
    """The gradient of :func:`gather_elements` (see :func:`gather_vjp`).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.gather_elements_vjp(np.array([[1.0, 2.0]]), np.array([[1, 1]]), (1, 2), axis=1)
    array([[0., 3.]])
    """
    return _gather_vjp("elements", grad, indices, data_shape, (
        axis, 0, negative_indices, out_of_range, threads))


def gather_nd_vjp(grad, indices, data_shape, *, batch_dims: int = 0,
                  negative_indices: str = "wrap", out_of_range: str = "error",
                  threads: Optional[int] = None):
    """The gradient of :func:`gather_nd` (see :func:`gather_vjp`).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.gather_nd_vjp(np.array([1.0, 2.0]), np.array([[1, 0], [1, 0]]), (2, 2))
    array([[0., 0.],
           [3., 0.]])
    """
    return _gather_vjp("nd", grad, indices, data_shape, (
        0, batch_dims, negative_indices, out_of_range, threads))
