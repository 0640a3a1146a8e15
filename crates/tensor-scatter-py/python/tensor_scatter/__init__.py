"""Exact, deterministic scatter and gather for NumPy arrays, PyTorch CPU tensors and JAX arrays.

Every operator gives the same bits for any thread count, checks every index before it writes
anything, and reads its inputs where they lie (any strides, negative and broadcast ones too).
The result has the kind of ``data``: NumPy in, NumPy out; torch in, torch out; JAX in, JAX out.

>>> import numpy as np, tensor_scatter as ts
>>> ts.scatter_elements(np.zeros(4), np.array([1, 1, 3]), np.array([1.0, 2.0, 5.0]), reduction="add")
array([0., 3., 0., 5.])
"""

from __future__ import annotations

import sys
from typing import Optional

from . import _native
from ._errors import (
    ArgumentError,
    ArgumentTypeError,
    DTypeError,
    Error,
    OutOfMemoryError,
    OutOfRangeError,
)
from ._segment import *  # noqa: F401,F403 (torch_scatter's API)
from ._segment import __all__ as _segment_all
from ._grad import *  # noqa: F401,F403 (the backward passes)
from ._grad import __all__ as _grad_all
from ._arrays import native_first, recorded, traced_jax
from ._core import GATHER_NAMES, SCATTER_NAMES, GatherOptions, ScatterOptions, _gather, _scatter

__version__ = "0.1.0"

__all__ = [
    "scatter_elements",
    "scatter_nd",
    "scatter_update",
    "gather",
    "gather_elements",
    "gather_nd",
    "default_threads",
    "set_default_threads",
    "jax_export_checks",
    "Error",
    "OutOfRangeError",
    "DTypeError",
    "ArgumentError",
    "ArgumentTypeError",
    "OutOfMemoryError",
    "__version__",
    *_segment_all,
    *_grad_all,
]


def default_threads() -> int:
    """The thread count ``threads=None`` uses: the value given to :func:`set_default_threads`,
    else every core of the process.

    >>> default_threads() >= 1
    True
    """
    return _native.default_threads()


def set_default_threads(n: int) -> None:
    """Sets the thread count ``threads=None`` uses (0: every core). Results never depend on it.

    >>> set_default_threads(0)
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ArgumentError(f"set_default_threads: {n!r} is not a count >= 0 (0: every core)")
    _native.set_default_threads(n)


def jax_export_checks() -> list:
    """The ``disabled_checks`` that ``jax.export.export`` needs for a program using these
    operators (their XLA FFI targets), and their registration (a process that runs a
    deserialized program registers them by importing ``tensor_scatter`` after ``jax``, or by
    calling this)::

        exp = jax.export.export(jax.jit(f), disabled_checks=ts.jax_export_checks())(*shapes)
    """
    from . import _jax_ops
    return _jax_ops.export_checks()


def __dir__():
    """The public names (the helpers the package imports for itself are not listed)."""
    return sorted(__all__)


def _scatter_any(op, data, indices, updates, out, options, ties):
    """A scatter the native half declined, or one torch traces (the public functions ask the
    native half first, unless torch traces the call or a forward-mode AD level is open):
    its dispatcher operator when torch traces it, records it for autograd, transforms it
    (``vmap``: the native half takes no such tensor) or may see a tangent, its XLA FFI call
    when JAX traces it, else converted by the general path."""
    if recorded(data, updates):
        from . import _torch_ops
        return _torch_ops.scatter(op, data, indices, updates, out, options, ties)
    if traced_jax(data, indices, updates):
        from . import _jax_ops
        return _jax_ops.scatter(op, data, indices, updates, out, options, ties)
    return _scatter(op, SCATTER_NAMES[op], data, indices, updates, out, options)


def _gather_any(op, data, indices, out, options):
    """A gather the native half declined, or one torch traces, as :func:`_scatter_any`."""
    if recorded(data):
        from . import _torch_ops
        return _torch_ops.gather(op, data, indices, out, options)
    if traced_jax(data, indices):
        from . import _jax_ops
        return _jax_ops.gather(op, data, indices, out, options)
    return _gather(op, GATHER_NAMES[op], data, indices, out, options)


def scatter_elements(data, indices, updates, *, axis: int = 0, reduction: str = "none",
                     include_self: bool = True, negative_indices: str = "wrap",
                     out_of_range: str = "error", accumulation: str = "per_update",
                     updates_window: bool = False, threads: Optional[int] = None, out=None,
                     ties: str = "split", block: Optional[int] = None):
    """ONNX ScatterElements / PyTorch ``scatter_reduce``: ``out = data``, then for every
    position ``p`` of ``indices`` (row-major), ``out[p with p[axis] = indices[p]]`` combines
    ``updates[p]`` by ``reduction`` ("none", "add", "sub", "mul", "min", "max", "mean"), in
    index order, so duplicates give the same bits every time.

    ``include_self=False`` starts every targeted cell from the reduction's identity;
    ``negative_indices`` is "wrap" (once, as Python) or "error"; ``out_of_range`` is "error",
    "clamp" or "skip"; ``accumulation="wide"`` accumulates float16/bfloat16 in float32 and
    rounds once. ``updates_window=True`` lets ``updates`` be larger than ``indices`` on any
    dim and reads only the window ``indices`` covers (PyTorch's ``src`` rule). ``out=data``
    scatters in place; another ``out`` receives the result. Returns ``out``, or a new array of
    ``data``'s kind. With torch tensors that require grad the call is differentiable (see
    :func:`scatter_elements_vjp`; ``ties`` is its rule for min and max). ``block=`` (NumPy
    arrays, default options) gives a float ``"add"`` by the block rule, the bits
    :mod:`tensor_scatter.dask` gives with the same ``block`` under any chunking.

    >>> import numpy as np
    >>> scatter_elements(np.zeros((2, 3), np.float32), np.array([[2, 2], [0, 1]]),
    ...                  np.ones((2, 2), np.float32), axis=1, reduction="add")
    array([[0., 0., 2.],
           [1., 1., 0.]], dtype=float32)
    """
    if ties != "split" and ties != "first":
        raise ArgumentError(f"{SCATTER_NAMES['elements']}: ties: {ties!r} is not 'split' or 'first'")
    if block is not None:
        return _blocked("elements", data, indices, updates, axis, reduction, block, out, threads,
                        (include_self, negative_indices, out_of_range, accumulation, updates_window))
    r = _native.scatter(
        "elements", data, indices, updates, out, axis, reduction, include_self, negative_indices,
        out_of_range, accumulation, threads, updates_window) if native_first() else None
    if r is not None:
        return r
    options = ScatterOptions(axis, reduction, include_self, negative_indices, out_of_range,
                             accumulation, threads, updates_window)
    return _scatter_any("elements", data, indices, updates, out, options, ties)


def _blocked(op, data, indices, updates, axis, reduction, block, out, threads, others):
    """``block=``: the block rule (see ``tensor_scatter.dask``), with the default options."""
    from . import _blocks
    block = _blocks.check_block(op, block)
    if others != (True, "wrap", "error", "per_update", False):
        raise ArgumentError(f"{SCATTER_NAMES[op]}: block: takes the default include_self, "
                            "negative_indices, out_of_range, accumulation and updates_window")
    return _blocks.one_machine_onnx(op, data, indices, updates, axis, reduction, block, out,
                                    threads)


def scatter_nd(data, indices, updates, *, reduction: str = "none", include_self: bool = True,
               negative_indices: str = "wrap", out_of_range: str = "error",
               accumulation: str = "per_update", threads: Optional[int] = None, out=None,
               ties: str = "split"):
    """ONNX ScatterND / PyTorch ``index_put_``: each row of ``indices`` (its last dim is the
    tuple length ``k``) addresses a slice ``data[t0, ..., tk-1]``, which combines the matching
    slice of ``updates`` (shape ``indices.shape[:-1] + data.shape[k:]``). Options as
    :func:`scatter_elements`.

    >>> import numpy as np
    >>> scatter_nd(np.zeros((3, 2), np.int64), np.array([[2], [0], [2]]),
    ...            np.array([[1, 2], [3, 4], [5, 6]]), reduction="add")
    array([[3, 4],
           [0, 0],
           [6, 8]])
    """
    if ties != "split" and ties != "first":
        raise ArgumentError(f"{SCATTER_NAMES['nd']}: ties: {ties!r} is not 'split' or 'first'")
    r = _native.scatter(
        "nd", data, indices, updates, out, 0, reduction, include_self, negative_indices,
        out_of_range, accumulation, threads, False) if native_first() else None
    if r is not None:
        return r
    options = ScatterOptions(0, reduction, include_self, negative_indices, out_of_range,
                             accumulation, threads, False)
    return _scatter_any("nd", data, indices, updates, out, options, ties)


def scatter_update(data, indices, updates, *, axis: int = 0, reduction: str = "none",
                   include_self: bool = True, negative_indices: str = "wrap",
                   out_of_range: str = "error", accumulation: str = "per_update",
                   threads: Optional[int] = None, out=None, ties: str = "split",
                   block: Optional[int] = None):
    """OpenVINO ScatterUpdate / PyTorch ``index_add_`` and ``index_copy_`` / ``np.add.at``
    with whole slices: every index ``j = indices[q]`` addresses the slice ``data[..., j, ...]``
    along ``axis``, which combines ``updates[..., q, ...]`` (``updates`` has shape
    ``data.shape[:axis] + indices.shape + data.shape[axis+1:]``). Options as
    :func:`scatter_elements`.

    >>> import numpy as np
    >>> scatter_update(np.zeros(4), np.array([0, 0, 3]), np.array([1.0, 2.0, 4.0]), reduction="add")
    array([3., 0., 0., 4.])
    """
    if ties != "split" and ties != "first":
        raise ArgumentError(f"{SCATTER_NAMES['update']}: ties: {ties!r} is not 'split' or 'first'")
    if block is not None:
        return _blocked("update", data, indices, updates, axis, reduction, block, out, threads,
                        (include_self, negative_indices, out_of_range, accumulation, False))
    r = _native.scatter(
        "update", data, indices, updates, out, axis, reduction, include_self, negative_indices,
        out_of_range, accumulation, threads, False) if native_first() else None
    if r is not None:
        return r
    options = ScatterOptions(axis, reduction, include_self, negative_indices, out_of_range,
                             accumulation, threads, False)
    return _scatter_any("update", data, indices, updates, out, options, ties)


def gather(data, indices, *, axis: int = 0, batch_dims: int = 0, negative_indices: str = "wrap",
           out_of_range: str = "error", fill_value=None, threads: Optional[int] = None, out=None):
    """ONNX Gather / ``np.take`` / ``torch.index_select``: the slices of ``data`` along
    ``axis`` that ``indices`` names; the result has shape
    ``data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis+1:]``.
    ``out_of_range`` is "error", "clamp" or "fill" (with ``fill_value``).

    >>> import numpy as np
    >>> gather(np.arange(6).reshape(3, 2), np.array([2, 0, 5]), out_of_range="fill", fill_value=-1)
    array([[ 4,  5],
           [ 0,  1],
           [-1, -1]])
    """
    r = _native.gather(
        "gather", data, indices, out, axis, batch_dims, negative_indices, out_of_range, fill_value,
        threads) if native_first() else None
    if r is not None:
        return r
    options = GatherOptions(axis, batch_dims, negative_indices, out_of_range, fill_value, threads)
    return _gather_any("gather", data, indices, out, options)


def gather_elements(data, indices, *, axis: int = 0, negative_indices: str = "wrap",
                    out_of_range: str = "error", fill_value=None, threads: Optional[int] = None,
                    out=None):
    """ONNX GatherElements / ``np.take_along_axis`` / ``torch.gather``: ``out[p] =
    data[p with p[axis] = indices[p]]``, the inverse of :func:`scatter_elements`.

    >>> import numpy as np
    >>> gather_elements(np.array([[1, 2], [3, 4]]), np.array([[1, 0], [0, 0]]), axis=1)
    array([[2, 1],
           [3, 3]])
    """
    r = _native.gather(
        "elements", data, indices, out, axis, 0, negative_indices, out_of_range, fill_value,
        threads) if native_first() else None
    if r is not None:
        return r
    options = GatherOptions(axis, 0, negative_indices, out_of_range, fill_value, threads)
    return _gather_any("elements", data, indices, out, options)


def gather_nd(data, indices, *, batch_dims: int = 0, negative_indices: str = "wrap",
              out_of_range: str = "error", fill_value=None, threads: Optional[int] = None, out=None):
    """ONNX GatherND / TensorFlow ``gather_nd``: each row of ``indices`` names a slice of
    ``data`` (after ``batch_dims`` shared leading dims), the inverse of :func:`scatter_nd`.

    >>> import numpy as np
    >>> gather_nd(np.arange(6).reshape(3, 2), np.array([[2, 1], [0, 0]]))
    array([5, 0])
    """
    r = _native.gather(
        "nd", data, indices, out, 0, batch_dims, negative_indices, out_of_range, fill_value,
        threads) if native_first() else None
    if r is not None:
        return r
    options = GatherOptions(0, batch_dims, negative_indices, out_of_range, fill_value, threads)
    return _gather_any("nd", data, indices, out, options)


# With torch imported first, its dispatcher operators are registered now: a process that
# loads an exported program (``torch.export.load``) needs them before it reads the graph.
# Otherwise they are registered on first need (a traced call, or one autograd records).
if "torch" in sys.modules:
    from . import _torch_ops  # noqa: E402,F401
# Likewise JAX's FFI targets, which a deserialized ``jax.export`` program calls.
if "jax" in sys.modules:
    from . import _jax_ops  # noqa: E402,F401
