"""torch_scatter's API (scatter with ``dim_size``, argmin/argmax, sorted segments and the
softmax composites), deterministic, for NumPy arrays, CPU torch tensors and JAX arrays.

``from tensor_scatter import scatter, scatter_max, segment_csr`` replaces the same import from
``torch_scatter`` for CPU code. The rules (and where they depart from torch_scatter: integer
means round toward -inf, a cell whose minimum is +inf reports it, ``out=`` counts in a mean,
logsumexp has no ``eps``) are the Rust library's: see ``tensor_scatter::segment``.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _native
from ._arrays import native_first, receive, recorded, traced_jax
from ._core import SEGMENT_NAMES as _NAMES, SegmentOptions, segment_general
from ._errors import ArgumentError

__all__ = [
    "scatter", "scatter_sum", "scatter_add", "scatter_mul", "scatter_mean", "scatter_min",
    "scatter_max", "segment_csr", "segment_coo", "segment_sum_csr", "segment_add_csr",
    "segment_mean_csr", "segment_min_csr", "segment_max_csr", "segment_sum_coo",
    "segment_add_coo", "segment_mean_coo", "segment_min_coo", "segment_max_coo", "gather_csr",
    "gather_coo", "scatter_softmax", "scatter_log_softmax", "scatter_logsumexp", "scatter_std",
]


def _run(op, src, index, out=None, dim=-1, dim_size=None, reduce="sum", want_arg=False,
         unbiased=True, threads=None, ties="split"):
    # Every other argument is checked by the native half (dim and dim_size as operator.index
    # takes them, reduce against the names the function accepts).
    if ties not in ("split", "first"):
        raise ArgumentError(f"{_NAMES[op]}: ties: {ties!r} is not 'split' or 'first'")
    if native_first():  # the native half first (Dynamo cannot trace into it)
        r = _native.segment(op, src, index, out, dim, dim_size, reduce, want_arg, unbiased,
                            threads)
        if r is not None:
            return r
    if recorded(src, out):  # traced, recorded or transformed by torch: its operator
        from . import _torch_ops
        return _torch_ops.segment(op, src, index, out, dim, dim_size, reduce, want_arg,
                                  unbiased, threads, ties)
    if traced_jax(src, index, out):  # traced by JAX: its XLA FFI call
        from . import _jax_ops
        return _jax_ops.segment(op, src, index, out, dim, dim_size, reduce, want_arg,
                                unbiased, threads, ties)
    return segment_general(op, src, index, out,
                           SegmentOptions(dim, dim_size, reduce, want_arg, unbiased, threads))


def _extent(out, dim, dim_size):
    """``dim_size``, else ``out``'s extent along ``dim`` (the composites' output takes its size
    from ``out`` as :func:`scatter`'s does); an unusable ``dim`` is left to the native check."""
    if out is None or dim_size is not None:
        return dim_size
    shape = tuple(out.shape)
    try:
        return shape[dim] if -len(shape) <= dim < len(shape) else None
    except TypeError:
        return None


def scatter(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None,
            reduce: str = "sum", *, threads: Optional[int] = None, ties: str = "split",
            block: Optional[int] = None):
    """Reduces ``src`` into the cells ``index`` names along ``dim`` (torch_scatter's
    ``scatter``): ``reduce`` is ``"sum"`` (``"add"``), ``"mul"``, ``"mean"``, ``"min"`` or
    ``"max"``. ``index`` broadcasts against ``src`` (a 1-D index lies along ``dim``). The
    output is ``src``'s shape with ``dim`` of size ``dim_size``, else ``out``'s, else
    ``index.max() + 1``; cells that receive nothing are 0 (1 for mul); with ``out=`` its
    values take part and ``out`` is returned. With torch tensors that require grad the call
    is differentiable; ``ties`` says where a min or max cell's gradient goes when several
    values reach it: ``"split"`` evenly (PyTorch's rule) or ``"first"`` (torch_scatter's).
    ``block=`` (NumPy arrays) gives a float sum, mean or product by the block rule, the bits
    :mod:`tensor_scatter.dask` gives with the same ``block`` under any chunking.

    >>> import numpy as np, tensor_scatter as ts
    >>> src = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
    >>> ts.scatter(src, np.array([2, 0, 2]), dim=0, dim_size=4)
    array([[ 2., 20.],
           [ 0.,  0.],
           [ 4., 40.],
           [ 0.,  0.]])
    """
    if block is not None:
        return _blocked("scatter", src, index, out, dim, dim_size, reduce, block, threads)
    return _run("scatter", src, index, out, dim, dim_size, reduce, threads=threads, ties=ties)[0]


def _blocked(op, src, index, out, dim, dim_size, reduce, block, threads):
    from . import _blocks
    block = _blocks.check_block(op, block)
    return _blocks.one_machine(op, src, index, out, dim, dim_size, reduce, block, threads)


def scatter_sum(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None, *,
                threads: Optional[int] = None, block: Optional[int] = None):
    """:func:`scatter` with ``reduce="sum"``.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_sum(np.array([1, 2, 3]), np.array([1, 1, 0]))
    array([3, 3])
    """
    return scatter(src, index, dim, out, dim_size, "sum", threads=threads, block=block)


scatter_add = scatter_sum


def scatter_mul(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None, *,
                threads: Optional[int] = None, block: Optional[int] = None):
    """:func:`scatter` with ``reduce="mul"`` (empty cells are 1).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_mul(np.array([2.0, 3.0, 4.0]), np.array([0, 0, 2]))
    array([6., 1., 4.])
    """
    return scatter(src, index, dim, out, dim_size, "mul", threads=threads, block=block)


def scatter_mean(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None, *,
                 threads: Optional[int] = None, block: Optional[int] = None):
    """:func:`scatter` with ``reduce="mean"`` (integers round toward -inf).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_mean(np.array([1.0, 2.0, 6.0]), np.array([0, 0, 1]))
    array([1.5, 6. ])
    """
    return scatter(src, index, dim, out, dim_size, "mean", threads=threads, block=block)


def scatter_min(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None, *,
                threads: Optional[int] = None, ties: str = "split") -> Tuple[Any, Any]:
    """The minimum per cell and its position along ``dim`` in ``src`` (``src.shape[dim]`` for
    an empty cell, or one that kept ``out``'s value). Ties: the first; NaN propagates and the
    position is the first NaN's.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_min(np.array([5.0, 1.0, 1.0]), np.array([0, 0, 0]), dim_size=2)
    (array([1., 0.]), array([1, 3]))
    """
    return _run("scatter", src, index, out, dim, dim_size, "min", True, threads=threads, ties=ties)


def scatter_max(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None, *,
                threads: Optional[int] = None, ties: str = "split") -> Tuple[Any, Any]:
    """The maximum per cell and its position along ``dim`` (see :func:`scatter_min`).

    >>> import numpy as np, tensor_scatter as ts
    >>> src = np.array([[2, 0, 1, 4, 3], [0, 2, 1, 3, 4]])
    >>> index = np.array([[4, 5, 4, 2, 3], [0, 0, 2, 2, 1]])
    >>> out, arg = ts.scatter_max(src, index, dim=-1)
    >>> out
    array([[0, 0, 4, 3, 2, 0],
           [2, 4, 3, 0, 0, 0]])
    >>> arg
    array([[5, 5, 3, 4, 0, 1],
           [1, 4, 3, 5, 5, 5]])
    """
    return _run("scatter", src, index, out, dim, dim_size, "max", True, threads=threads, ties=ties)


def segment_csr(src, indptr, out=None, reduce: str = "sum", *, threads: Optional[int] = None,
                ties: str = "split", block: Optional[int] = None):
    """Reduces the segments ``[indptr[i], indptr[i + 1])`` of ``src`` along
    ``dim = indptr.ndim - 1`` (torch_scatter's ``segment_csr``); ``indptr`` must be
    non-decreasing within ``[0, src.shape[dim]]``. ``out=`` receives the result, its values
    taking no part (torch_scatter's rule; :func:`segment_coo` folds them in).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.segment_csr(np.arange(6.0), np.array([0, 2, 2, 6]))
    array([ 1.,  0., 14.])
    """
    if block is not None:
        return _blocked("csr", src, indptr, out, 0, None, reduce, block, threads)
    return _run("csr", src, indptr, out, -1, None, reduce, threads=threads, ties=ties)[0]


def segment_coo(src, index, out=None, dim_size: Optional[int] = None, reduce: str = "sum", *,
                threads: Optional[int] = None, ties: str = "split", block: Optional[int] = None):
    """Reduces ``src`` by a **sorted** ``index`` along ``dim = index.ndim - 1``
    (torch_scatter's ``segment_coo``): :func:`scatter`'s result, plus the check that
    ``index`` is sorted.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.segment_coo(np.arange(6.0), np.array([0, 0, 2, 2, 2, 2]))
    array([ 1.,  0., 14.])
    """
    if block is not None:
        return _blocked("coo", src, index, out, -1, dim_size, reduce, block, threads)
    return _run("coo", src, index, out, -1, dim_size, reduce, threads=threads, ties=ties)[0]


def _named(f, name, doc):
    """``f`` under its public name (``help`` and tracebacks show it)."""
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _csr(reduce, doc):
    def f(src, indptr, out=None, *, threads: Optional[int] = None, ties: str = "split"):
        r = _run("csr", src, indptr, out, -1, None, reduce, reduce in ("min", "max"),
                 threads=threads, ties=ties)
        return r if reduce in ("min", "max") else r[0]
    return _named(f, f"segment_{reduce}_csr", doc)


def _coo(reduce, doc):
    def f(src, index, out=None, dim_size: Optional[int] = None, *, threads: Optional[int] = None,
          ties: str = "split"):
        r = _run("coo", src, index, out, -1, dim_size, reduce, reduce in ("min", "max"),
                 threads=threads, ties=ties)
        return r if reduce in ("min", "max") else r[0]
    return _named(f, f"segment_{reduce}_coo", doc)


segment_sum_csr = _csr("sum", ":func:`segment_csr` with ``reduce='sum'``.")
segment_add_csr = segment_sum_csr
segment_mean_csr = _csr("mean", ":func:`segment_csr` with ``reduce='mean'``.")
segment_min_csr = _csr("min", ":func:`segment_csr` with ``reduce='min'``: ``(values, positions)``.")
segment_max_csr = _csr("max", ":func:`segment_csr` with ``reduce='max'``: ``(values, positions)``.")
segment_sum_coo = _coo("sum", ":func:`segment_coo` with ``reduce='sum'``.")
segment_add_coo = segment_sum_coo
segment_mean_coo = _coo("mean", ":func:`segment_coo` with ``reduce='mean'``.")
segment_min_coo = _coo("min", ":func:`segment_coo` with ``reduce='min'``: ``(values, positions)``.")
segment_max_coo = _coo("max", ":func:`segment_coo` with ``reduce='max'``: ``(values, positions)``.")


def gather_csr(src, indptr, out=None, *, threads: Optional[int] = None):
    """Every position of segment ``i`` reads row ``i`` of ``src`` (the inverse of
    :func:`segment_csr`); ``out=`` receives the result.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.gather_csr(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 2, 3]))
    array([1., 1., 3.])
    """
    r = _run("gather_csr", src, indptr, None, -1, None, "sum", threads=threads)[0]
    return receive(out, r, "gather_csr")


def gather_coo(src, index, out=None, *, threads: Optional[int] = None):
    """``out[..., e, ...] = src[..., index[..., e], ...]`` along ``dim = index.ndim - 1`` (the
    inverse of :func:`segment_coo`); ``out=`` receives the result.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.gather_coo(np.array([1.0, 2.0, 3.0]), np.array([0, 0, 2]))
    array([1., 1., 3.])
    """
    r = _run("gather_coo", src, index, None, -1, None, "sum", threads=threads)[0]
    return receive(out, r, "gather_coo")


def scatter_softmax(src, index, dim: int = -1, dim_size: Optional[int] = None, *,
                    threads: Optional[int] = None):
    """Softmax of ``src`` within each cell's elements (numerically stable: the cell maximum is
    subtracted); the result has ``src``'s shape. Floating-point dtypes only.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_softmax(np.array([0.0, 0.0, 5.0]), np.array([0, 0, 1]))
    array([0.5, 0.5, 1. ])
    """
    return _run("softmax", src, index, None, dim, dim_size, "sum", threads=threads)[0]


def scatter_log_softmax(src, index, dim: int = -1, dim_size: Optional[int] = None, *,
                        threads: Optional[int] = None):
    """Log-softmax of ``src`` within each cell's elements (see :func:`scatter_softmax`).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_log_softmax(np.array([0.0, 0.0]), np.array([0, 0]))
    array([-0.69314718, -0.69314718])
    """
    return _run("log_softmax", src, index, None, dim, dim_size, "sum", threads=threads)[0]


def scatter_logsumexp(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None, *,
                      threads: Optional[int] = None):
    """``log(sum(exp(x)))`` per cell: -inf for an empty or all -inf cell, +inf when one
    element is +inf, NaN propagates (no ``eps``). ``out=`` receives the result, which takes
    its size from it (its values do not take part, unlike torch_scatter's).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_logsumexp(np.array([0.0, 0.0, -np.inf]), np.array([0, 0, 1]), dim_size=3)
    array([0.69314718,       -inf,       -inf])
    """
    dim_size = _extent(out, dim, dim_size)
    r = _run("logsumexp", src, index, None, dim, dim_size, "sum", threads=threads)[0]
    return receive(out, r, "scatter_logsumexp")


def scatter_std(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None,
                unbiased: bool = True, *, threads: Optional[int] = None):
    """Standard deviation per cell: divided by ``max(n - 1, 1)`` (``max(n, 1)`` when not
    ``unbiased``), so one element or none gives 0. ``out=`` receives the result.

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.scatter_std(np.array([1.0, 3.0, 7.0]), np.array([0, 0, 1]))
    array([1.41421356, 0.        ])
    """
    dim_size = _extent(out, dim, dim_size)
    r = _run("std", src, index, None, dim, dim_size, "sum", unbiased=unbiased, threads=threads)
    return receive(out, r[0], "scatter_std")
