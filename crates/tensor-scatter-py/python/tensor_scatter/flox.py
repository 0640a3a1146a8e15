"""Group reductions for xarray through flox, on tensor_scatter's kernels: ``sum``, ``mean``,
``min``, ``max``, ``argmin`` and ``argmax`` as ``flox.aggregations.Aggregation`` objects, for
``func=`` of ``flox.groupby_reduce`` and ``flox.xarray.xarray_reduce``.

Min, max and their positions give the same bits as :mod:`tensor_scatter.dask` under any
chunking and any ``split_every``; integer sums too, in flox's accumulation type (int64 for
int32, as NumPy sums them). A float sum or mean follows the block rule inside
each chunk and combines the chunks in a left-aligned pairwise tree: with the grouped axis
chunked in equal multiples of ``block * 2**k`` (a shorter last chunk allowed) and
``dask.config.set(split_every=2)`` that is the block rule of the whole axis, the bits of
:mod:`tensor_scatter.dask` with the same ``block``; otherwise still the same bits for any
scheduler and worker count, fixed by the chunking. Groups no element reaches take flox's fill
values (NaN for a float mean, -1 for a position).

>>> import numpy as np, dask.array as da, flox, tensor_scatter.flox as tsf
>>> values = da.from_array(np.arange(8.0), chunks=4)
>>> labels = np.array([0, 1, 0, 1, 2, 2, 2, 0])
>>> flox.groupby_reduce(values, labels, func=tsf.sum, expected_groups=np.arange(3))[0].compute()
array([ 9.,  4., 15.])
"""

from __future__ import annotations

import numpy as np
from flox.aggregations import Aggregation

from . import _blocks as B

__all__ = ["sum", "mean", "min", "max", "argmin", "argmax", "aggregation"]


def _grouped(reduce, block, want_arg=False):
    """flox's chunk callable: ``(group_idx, array, size=, ...)`` -> the reduction of each
    group along the last axis (a float sum's tree partial from -0.0)."""

    def f(group_idx, array, *, size=None, fill_value=None, dtype=None, **_):
        array = np.asarray(array)
        if reduce == "sum" and dtype is not None and np.dtype(dtype) != array.dtype:
            array = array.astype(dtype)  # flox's accumulation type (int64 for int32 sums)
        group_idx = np.asarray(group_idx).reshape(-1)
        spec = B.make_spec("scatter", array.dtype, array.ndim, -1, 1, reduce,
                           array.shape[-1], block, want_arg)
        if spec.tree:
            return B.node(spec, array, group_idx, 0, B.levels(spec.blocks), 0, 0, size,
                          cells=size)[0]
        if reduce in ("min", "max"):
            vals, arg = B.span(spec, array, group_idx, 0, 0, spec.n, 0, size, cells=size)
            empty = arg == spec.n
            if not want_arg:
                return np.where(empty, B._identity(spec, ()), vals)
            m = array.shape[-1]  # a flat position in the chunk, as flox unravels it
            lead = np.arange(int(np.prod(array.shape[:-1], dtype=np.int64))).reshape(
                array.shape[:-1] + (1,))
            return np.where(empty, 0, lead * m + arg)
        return B.span(spec, array, group_idx, 0, 0, spec.n, 0, size, cells=size)[0]

    return f


def _count(group_idx, array, *, size=None, **_):
    """How many elements each group has (per leading index)."""
    counts = np.bincount(np.asarray(group_idx).reshape(-1), minlength=size)
    return np.broadcast_to(counts, np.shape(array)[:-1] + (size,)).astype(np.intp)


def _tree(op):
    """flox's combine callable: the chunks' partials (concatenated along ``axis``) paired
    left to right in the fixed tree, an odd last one passed up."""

    def f(array, axis, keepdims=True):
        ax = axis[0] if isinstance(axis, tuple) else axis
        parts = [np.take(array, [i], axis=ax) for i in range(array.shape[ax])]
        with np.errstate(all="ignore"):
            while len(parts) > 1:
                up = [op(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
                parts = up + (parts[-1:] if len(parts) % 2 else [])
        return parts[0] if keepdims else np.squeeze(parts[0], axis=ax)

    return f


def _finish(reduce):
    def f(total, count):
        if reduce == "mean":
            with np.errstate(all="ignore"):
                total = total / count.astype(total.dtype)
        total = np.where(count == 0, np.zeros((), total.dtype), total)
        return B._canonical(total)

    return f


def aggregation(name: str, block: int = B.DEFAULT_BLOCK) -> Aggregation:
    """The Aggregation ``name`` ("sum", "mean", "min", "max", "argmin", "argmax") with the
    block rule's ``block`` for float sums and means."""
    block = B.check_block("scatter", block)
    if name in ("sum", "mean"):
        return Aggregation(
            f"tensor_scatter_{name}", numpy=_numpy(name, block),
            chunk=(_grouped("sum", block), _count), combine=(_tree(np.add), "sum"),
            finalize=_finish(name), fill_value=(-0.0, 0),
            dtypes=(None, np.intp), final_dtype=np.floating if name == "mean" else None)
    if name in ("min", "max"):
        return Aggregation(
            f"tensor_scatter_{name}", numpy=_numpy(name, block),
            chunk=_grouped(name, block), combine=_tree(_pick(name)),
            fill_value=np.inf if name == "min" else -np.inf, preserves_dtype=True)
    if name in ("argmin", "argmax"):
        red = name[3:]
        from flox.aggregations import _pick_second, argreduce_preprocess
        return Aggregation(
            f"tensor_scatter_{name}", preprocess=argreduce_preprocess,
            chunk=(_grouped(red, block), _grouped(red, block, True)),
            combine=(_grouped(red, block), _grouped(red, block, True)),
            reduction_type="argreduce", fill_value=(np.inf if red == "min" else -np.inf, 0),
            final_fill_value=-1, finalize=_pick_second, dtypes=(None, np.intp),
            final_dtype=np.intp)
    raise ValueError(f"tensor_scatter.flox: no aggregation {name!r}")


def _pick(red):
    def pick(left, right):
        return np.where(B._later_wins(left, right, red), right, left)
    return pick


def _numpy(name, block):
    """In-memory arrays: the whole call at once (empty groups take flox's fill)."""
    red = "sum" if name == "sum" else name

    def f(group_idx, array, *, size=None, fill_value=None, dtype=None, **_):
        from ._segment import scatter
        group_idx = np.asarray(group_idx).reshape(-1)
        r = scatter(np.asarray(array), group_idx, dim=-1, dim_size=size, reduce=red,
                    block=block if name in ("sum", "mean") else None)
        if fill_value is not None and name != "sum":
            counts = np.bincount(group_idx, minlength=size)
            r = np.where(counts == 0, fill_value, r)
        return r

    return f


sum = aggregation("sum")  # noqa: A001 (flox's names)
mean = aggregation("mean")
min = aggregation("min")  # noqa: A001
max = aggregation("max")  # noqa: A001
argmin = aggregation("argmin")
argmax = aggregation("argmax")
