"""torch_scatter's reductions over Dask arrays, with bits fixed by the data alone.

``tensor_scatter.dask.scatter(src, index, dim=0, dim_size=n)`` takes Dask arrays (``index`` may
also be a NumPy array) chunked along ``dim`` in any way, and returns a Dask array: nothing is
computed until you ask. The result does not depend on the chunking, the scheduler (sync,
threads, processes, distributed), or the number of workers and threads:

* min, max, their positions (global), and integer and bool sums, products and means give the
  one-machine call's bits;
* float sums, means and products follow the block rule (``block=`` positions per block, each
  folded in order, the blocks combined in a fixed pairwise tree; see ``DESIGN.md``), which the
  one-machine functions give too when called with the same ``block=``.

``out_chunks=`` (or a chunked ``out=``) cuts the output along ``dim``: each output chunk is
reduced from partials restricted to its range, so no task holds the whole table.

>>> import numpy as np, dask.array as da, tensor_scatter as ts, tensor_scatter.dask as tsd
>>> src = da.from_array(np.arange(8.0), chunks=3)
>>> index = np.array([0, 1, 0, 1, 2, 2, 2, 0])
>>> tsd.scatter(src, index, dim=0, dim_size=3, block=4).compute()
array([ 9.,  4., 15.])
>>> bool((tsd.scatter(src, index, dim=0, dim_size=3, block=4).compute()
...       == ts.scatter(np.arange(8.0), index, dim=0, dim_size=3, block=4)).all())
True
"""

from __future__ import annotations

import bisect
import operator
from functools import partial
from typing import Any, Optional, Tuple

import numpy as np
import dask.array as da
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _blocks as B
from ._errors import ArgumentError, DTypeError

__all__ = [
    "scatter", "scatter_sum", "scatter_add", "scatter_mul", "scatter_mean", "scatter_min",
    "scatter_max", "segment_coo", "segment_csr", "scatter_update", "scatter_elements",
    "DEFAULT_BLOCK",
]

DEFAULT_BLOCK = B.DEFAULT_BLOCK


# ---------------------------------------------------------------------------------------------
# The tasks (module-level functions: a process or distributed scheduler pickles them by name).

def _leaf(spec, cells, pos0, level, j, lo, hi, src, index, start=None):
    """Tree node ``(level, j)`` from one chunk (float sums, means, products)."""
    return B.node(spec, src, index, pos0, level, j, lo, hi, start=start, threads=1, cells=cells)


def _continue(spec, cells, pos0, a, b, lo, hi, part, src, index, start=None):
    """A block's fold over positions ``[a, b)`` continued with a chunk (from ``pos0``) it
    spans: the block cut across chunks folds as one."""
    pa, pb = a - pos0, b - pos0
    return B.fold(spec, part, B._along(spec, src, pa, pb),
                  B._along(spec, np.asarray(index), pa, pb, index=True), a, lo, hi, cells,
                  start, threads=1)


def _span(spec, cells, pos0, lo, hi, src, index, start=None):
    """A whole chunk's partial (exact reductions: the order of the combination is all that
    matters)."""
    m = src.shape[spec.dim]
    return B.span(spec, src, index, pos0, pos0, pos0 + m, lo, hi, start=start, threads=1,
                  cells=cells)


def _ends(spec, pos0, x):
    """A chunk of a coo index checked sorted along its last axis, and its first and last
    values (to check the boundaries between chunks)."""
    x = np.asarray(x)
    B.check_sorted(spec, x, pos0)
    return None if x.shape[-1] == 0 else (x[..., 0], x[..., -1])


def _sorted_across(name, dim, bounds, *ends):
    """Checks that a coo index is sorted across its chunks' boundaries."""
    last = None
    for c, e in enumerate(ends):
        if e is None:
            continue
        if last is not None and (e[0] < last).any():
            k = int(np.argmax((e[0] < last).reshape(-1)))
            raise ArgumentError(f"{name}: index: must be sorted along dim {dim}, but "
                                f"{e[0].reshape(-1)[k]} at position [{bounds[c]}] follows "
                                f"{last.reshape(-1)[k]}")
        last = e[1]
    return True


def _finish(spec, part, *_checks):
    return B.finish(spec, part)


# ---------------------------------------------------------------------------------------------
# Arguments.

def _dask(x, name):
    if isinstance(x, da.Array):
        return x
    if hasattr(x, "__array__") or isinstance(x, (list, tuple)):
        return da.from_array(np.asarray(x), chunks=-1)
    raise ArgumentError(f"{name}: expected a Dask or NumPy array, got {type(x).__name__}")


def _index_along(op, src, index, dim):
    """The index as the block rule reads it: 1-D along ``dim`` (rows) or src's full shape,
    chunked as ``src`` along ``dim``."""
    name = B._NAME[op]
    if index.ndim == 1:
        if index.shape[0] != src.shape[dim]:
            raise ArgumentError(f"{name}: index: its {index.shape[0]} entries do not match "
                                f"src's {src.shape[dim]} along dim {dim}")
        return index.rechunk((src.chunks[dim],))
    if index.ndim > src.ndim:
        raise ArgumentError(f"{name}: index: rank {index.ndim} exceeds src's {src.ndim}")
    shape = tuple(index.shape) + (1,) * (src.ndim - index.ndim)
    index = index.reshape(shape) if shape != tuple(index.shape) else index
    for ax, (i, s) in enumerate(zip(index.shape, src.shape)):
        if i not in (1, s):
            raise ArgumentError(f"{name}: index: shape {tuple(index.shape)} does not broadcast "
                                f"against src's {tuple(src.shape)} (dim {ax})")
    return da.broadcast_to(index, src.shape).rechunk(src.chunks)


def _dim_size(op, index, dim_size, out, dim):
    name = B._NAME[op]
    if dim_size is not None:
        if isinstance(dim_size, bool) or int(dim_size) != dim_size or dim_size < 0:
            raise ArgumentError(f"{name}: dim_size: expected a non-negative int, got {dim_size!r}")
        return int(dim_size)
    if out is not None:
        return int(out.shape[dim])
    if isinstance(index, np.ndarray):
        return int(index.max()) + 1 if index.size else 0
    raise ArgumentError(f"{name}: dim_size: required with a Dask index (its maximum would have "
                        "to be computed first)")


def _dest_chunks(op, out_chunks, cells):
    if out_chunks is None:
        return (cells,)
    try:
        return da.core.normalize_chunks((out_chunks,), (cells,))[0]
    except (ValueError, TypeError) as e:
        raise ArgumentError(f"{B._NAME[op]}: out_chunks: {out_chunks!r}: {e}") from None


# ---------------------------------------------------------------------------------------------
# The graph.

def _reduce(op, src, index, dim, out, dim_size, reduce, block, out_chunks, want_arg,
            ends_check=False, dests=None):
    name = B._NAME[op]
    block = B.check_block(op, block)
    src = _dask(src, name)
    np_index = index if isinstance(index, np.ndarray) else None
    index = _dask(index, name)
    spec = B.make_spec(op, src.dtype, src.ndim, dim, index.ndim, reduce, src.shape[dim] if
                       -src.ndim <= dim < src.ndim else 0, block or DEFAULT_BLOCK, want_arg)
    dim = spec.dim
    if index.dtype.kind not in "iu":
        raise DTypeError(f"{name}: index: dtype {index.dtype} is not accepted; expected an "
                         "integer index dtype")
    cells = _dim_size(op, np_index, dim_size, out, dim)
    single = {ax: -1 for ax in range(src.ndim) if ax != dim and len(src.chunks[ax]) > 1}
    if single:
        src = src.rechunk(single)
    index = _index_along(op, src, index, dim)
    keep_chunks = None
    if out is not None:
        out = _dask(out, name)
        want = src.shape[:dim] + (cells,) + src.shape[dim + 1:]
        if tuple(out.shape) != want or out.dtype != src.dtype:
            raise ArgumentError(f"{name}: out: expected shape {want} and dtype {src.dtype}, got "
                                f"{tuple(out.shape)} and {out.dtype}")
        keep_chunks = out.chunks
        dests = out.chunks[dim]
        out = out.rechunk({ax: -1 for ax in range(out.ndim) if ax != dim})
    elif dests is None:
        dests = _dest_chunks(op, out_chunks, cells)
    tok = tokenize(op, src, index, out, spec, cells, dests, ends_check)
    g = f"ts-{name}-{tok}"
    dsk: dict = {}
    offs = [0]
    for c in src.chunks[dim]:
        offs.append(offs[-1] + c)
    nchunks = len(src.chunks[dim])

    def key(arr, c, d=None):
        if arr is index and spec.rows:
            return (arr.name, c)
        k = [0] * arr.ndim
        k[dim] = c if d is None else d
        return (arr.name,) + tuple(k)

    checks = []
    if ends_check:
        ends = []
        for c in range(nchunks):
            ends.append((f"{g}-ends", c))
            dsk[ends[-1]] = (partial(_ends, spec, offs[c]), key(index, c))
        checks.append((f"{g}-sorted",))
        dsk[checks[0]] = (partial(_sorted_across, name, dim, offs), *ends)

    bounds = [0]
    for d in dests:
        bounds.append(bounds[-1] + d)
    for d in range(len(dests)):
        lo, hi = bounds[d], bounds[d + 1]
        start = key(out, 0, d) if out is not None else None
        if spec.tree:
            root = _tree(dsk, g, spec, cells, d, lo, hi, offs, key, src, index, start)
        else:
            root = _chunks(dsk, g, spec, cells, d, lo, hi, offs, key, src, index, start)
        dsk[(f"{g}-fin", d)] = (partial(_finish, spec), root, *checks)
    outs = []
    chunks = src.chunks[:dim] + (tuple(dests),) + src.chunks[dim + 1:]
    deps = [src, index] + ([out] if out is not None else [])
    parts = 2 if want_arg else 1
    for p in range(parts):
        oname = f"{g}-{p}"
        layer = dict(dsk) if p == 0 else {}
        for d in range(len(dests)):
            k = [0] * src.ndim
            k[dim] = d
            layer[(oname,) + tuple(k)] = (operator.getitem, (f"{g}-fin", d), p)
        graph = HighLevelGraph.from_collections(oname, layer, dependencies=deps if p == 0
                                                else deps + [outs[0]])
        dtype = spec.dtype if p == 0 else np.dtype(np.int64)
        a = da.Array(graph, oname, chunks, meta=np.empty((0,) * src.ndim, dtype))
        if keep_chunks is not None and p == 0 and a.chunks != keep_chunks:
            a = a.rechunk(keep_chunks)
        outs.append(a)
    return tuple(outs)


def _tree(dsk, g, spec, cells, d, lo, hi, offs, key, src, index, start):
    """The keys of the block rule's tree for output chunk ``d``: a node inside one chunk is
    one task, a block across chunks one task over their pieces, the rest pairs."""

    def chunk_of(p):
        return bisect.bisect_right(offs, p) - 1

    def build(level, j):
        a, b = B.node_span(spec, level, j)
        c0, c1 = chunk_of(a), chunk_of(max(a, b - 1))
        first = start if a == 0 else None
        k = (f"{g}-node", d, level, j)
        if c0 == c1 or b == a:
            c0 = min(c0, len(offs) - 2)
            dsk[k] = (partial(_leaf, spec, cells, offs[c0], level, j, lo, hi),
                      key(src, c0), key(index, c0), first)
            return k
        if level == 0:  # a block across chunks: its fold continued chunk by chunk
            part = None
            for c in range(c0, c1 + 1):
                pa, pb = max(a, offs[c]), min(b, offs[c + 1])
                k = (f"{g}-fold", d, j, c)
                dsk[k] = (partial(_continue, spec, cells, offs[c], pa, pb, lo, hi), part,
                          key(src, c), key(index, c), first if c == c0 else None)
                part = k
            return part
        kids = [build(*c) for c in B.children(spec, level, j)]
        if len(kids) == 1:
            return kids[0]
        dsk[k] = (partial(B.combine, spec), *kids)
        return k

    return build(B.levels(spec.blocks), 0)


def _chunks(dsk, g, spec, cells, d, lo, hi, offs, key, src, index, start):
    """The keys of an exact reduction for output chunk ``d``: one task per chunk, then pairs
    in order."""
    level = []
    for c in range(len(offs) - 1):
        k = (f"{g}-span", d, c)
        dsk[k] = (partial(_span, spec, cells, offs[c], lo, hi), key(src, c), key(index, c),
                  start if c == 0 else None)
        level.append(k)
    depth = 0
    while len(level) > 1:
        depth += 1
        up = []
        for i in range(0, len(level) - 1, 2):
            k = (f"{g}-pair", d, depth, i // 2)
            dsk[k] = (partial(B.combine, spec), level[i], level[i + 1])
            up.append(k)
        if len(level) % 2:
            up.append(level[-1])
        level = up
    return level[0]


# ---------------------------------------------------------------------------------------------
# The public functions (torch_scatter's names, arguments and defaults).

def scatter(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None,
            reduce: str = "sum", *, block: Optional[int] = None, out_chunks=None):
    """:func:`tensor_scatter.scatter` over Dask arrays: a lazy Dask array. ``block`` (default
    :data:`DEFAULT_BLOCK`) fixes a float sum, mean or product's bits; ``out_chunks`` cuts the
    output along ``dim`` (``out=``'s own chunks when it is given; its values start the fold)."""
    return _reduce("scatter", src, index, dim, out, dim_size, reduce, block, out_chunks,
                   False)[0]


def scatter_sum(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None, *,
                block: Optional[int] = None, out_chunks=None):
    """:func:`scatter` with ``reduce="sum"``."""
    return scatter(src, index, dim, out, dim_size, "sum", block=block, out_chunks=out_chunks)


scatter_add = scatter_sum


def scatter_mul(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None, *,
                block: Optional[int] = None, out_chunks=None):
    """:func:`scatter` with ``reduce="mul"``."""
    return scatter(src, index, dim, out, dim_size, "mul", block=block, out_chunks=out_chunks)


def scatter_mean(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None, *,
                 block: Optional[int] = None, out_chunks=None):
    """:func:`scatter` with ``reduce="mean"``."""
    return scatter(src, index, dim, out, dim_size, "mean", block=block, out_chunks=out_chunks)


def scatter_min(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None, *,
                out_chunks=None) -> Tuple[Any, Any]:
    """The minimum per cell and its global position along ``dim`` (``src.shape[dim]`` for
    none), as two lazy Dask arrays."""
    return _reduce("scatter", src, index, dim, out, dim_size, "min", None, out_chunks, True)


def scatter_max(src, index, dim: int = -1, out=None, dim_size: Optional[int] = None, *,
                out_chunks=None) -> Tuple[Any, Any]:
    """The maximum per cell and its global position (see :func:`scatter_min`)."""
    return _reduce("scatter", src, index, dim, out, dim_size, "max", None, out_chunks, True)


def segment_coo(src, index, out=None, dim_size: Optional[int] = None, reduce: str = "sum", *,
                block: Optional[int] = None, out_chunks=None):
    """:func:`tensor_scatter.segment_coo` over Dask arrays: ``index`` sorted along its last
    axis, across chunks too (checked when computed)."""
    index = _dask(index, "segment_coo")
    return _reduce("coo", src, index, index.ndim - 1, out, dim_size, reduce, block,
                   out_chunks, False, ends_check=True)[0]


def segment_csr(src, indptr, out=None, reduce: str = "sum", *, block: Optional[int] = None,
                out_chunks=None):
    """:func:`tensor_scatter.segment_csr` over Dask arrays, for a 1-D ``indptr`` (NumPy, or a
    small Dask array, computed when the graph is built). ``out``'s values take no part."""
    indptr = np.asarray(indptr.compute() if isinstance(indptr, da.Array) else indptr)
    src = _dask(src, "segment_csr")
    if indptr.ndim != 1:
        raise ArgumentError(f"segment_csr: indptr: the Dask functions take a 1-D indptr, got "
                            f"rank {indptr.ndim}")
    n = src.shape[0] if src.ndim else 0
    if indptr.size == 0 or (np.diff(indptr) < 0).any() or indptr[0] < 0 or indptr[-1] > n:
        raise ArgumentError(f"segment_csr: indptr: must be non-decreasing within [0, {n}], "
                            f"got {indptr.tolist()[:8]}{'...' if indptr.size > 8 else ''}")
    cells = indptr.size - 1
    # Segment of each position (a spare cell past the end outside [indptr[0], indptr[-1])),
    # made chunk by chunk.
    index = da.arange(n, chunks=(src.chunks[0],), dtype=np.int64).map_blocks(
        partial(_csr_rows, indptr), dtype=np.int64)
    dests = _dest_chunks("csr", out_chunks if out is None else out.chunks[0], cells)
    r = _reduce("csr", src, index, 0, None, cells + 1, reduce, block, None, False,
                dests=dests)[0]
    return r if out is None else r.rechunk(out.chunks)


def _csr_rows(indptr, pos):
    seg = np.searchsorted(indptr, pos, side="right") - 1
    return np.where((pos < indptr[0]) | (pos >= indptr[-1]), indptr.size - 1, seg)


def _onnx(op, data, indices, updates, axis, reduction, block):
    name = B._NAME[op]
    data, indices, updates = (_dask(x, name) for x in (data, indices, updates))
    if updates.dtype != data.dtype:
        raise ArgumentError(f"{name}: updates: dtype {updates.dtype} does not match data's "
                            f"{data.dtype}")
    src, index, a = B.onnx_operands(op, data.shape, indices, updates, axis)
    return _reduce(op, src, index, a, data, None, reduction, block, None, False)[0]


def scatter_update(data, indices, updates, *, axis: int = 0, reduction: str = "none",
                   block: Optional[int] = None):
    """:func:`tensor_scatter.scatter_update` with a Dask ``data`` (``np.add.at`` into a table
    larger than a worker): a lazy Dask array with ``data``'s chunks, each reduced from the
    updates that reach it. ``reduction`` is "none" (the last write wins), "add", "mul",
    "min" or "max"; negative indices wrap once; a float "add" follows the block rule."""
    return _onnx("update", data, indices, updates, axis, reduction, block)


def scatter_elements(data, indices, updates, *, axis: int = 0, reduction: str = "none",
                     block: Optional[int] = None):
    """:func:`tensor_scatter.scatter_elements` with a Dask ``data``, for ``indices`` and
    ``updates`` of ``data``'s shape but along ``axis`` (see :func:`scatter_update`)."""
    return _onnx("elements", data, indices, updates, axis, reduction, block)
