"""The block rule: scatter reductions whose bits depend on the data and one block size alone,
however the work is cut (``block=`` on one machine, every chunking and scheduler of
:mod:`tensor_scatter.dask`).

The positions along ``dim`` are cut into blocks of ``block`` consecutive positions. A float
sum, mean or product folds each block's updates per cell in position order (from the
reduction's exact identity, -0.0 or 1.0), and the blocks' partial tables combine in a fixed
pairwise tree: at each level neighbours ``(2j, 2j + 1)`` combine left to right, and an odd last
node passes up unchanged. One block (``block >= src.shape[dim]``) is the plain call. Exact
reductions (min, max with their positions, integer and bool sums and products) give the plain
call's bits under any cut; their partials combine in position order so the first among equals
and the first NaN still win.

A piece of work here is a *node* of that tree, computed from the positions it covers and
restricted to a range ``[lo, hi)`` of output cells along ``dim``; nodes combine into their
parent with :func:`combine` and the root becomes the result with :func:`finish`. Everything is
NumPy over the one-machine kernels: the Dask graph and the one-machine call run the same
functions.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

from . import _native
from ._core import (
    SCATTER_NAMES, SEGMENT_NAMES, ScatterOptions, SegmentOptions, _scatter, segment_general,
)
from ._errors import ArgumentError, DTypeError

# The block size the Dask functions use when none is given: large enough that a block's
# partial table (one per block, dense over the output's range) costs little next to the
# block's updates, and that a chunk of typical size (a few million positions) is at most one
# block or two (record/2026-11-29-dask.md: 2^24 ran a 1e8-update sum on two workers in 0.7x
# dask.array.bincount's time, 2^22 in 0.9x, 2^20 in 1.3x). A smaller block= sums more
# accurately.
DEFAULT_BLOCK = 1 << 24


class Spec(NamedTuple):
    """One reduction as the block rule runs it."""
    op: str           # "scatter", "coo", "csr", "update" or "elements": the public function
    reduce: str       # "sum", "mul", "mean", "min", "max" ("none" for the ONNX forms)
    dim: int          # the scattered axis, >= 0
    rows: bool        # a 1-D index along dim (one destination per position), else per element
    dtype: Any        # the result's dtype
    wide: Any         # the dtype partial tables accumulate in (float32 for 16-bit floats)
    n: int            # src.shape[dim]: positions, and an empty cell's arg
    block: int        # positions per block (n or more: one block)
    want_arg: bool    # min/max positions wanted

    @property
    def tree(self) -> bool:
        """Whether the reduction rounds, so the blocks' tree decides its bits."""
        return self.reduce in ("sum", "mean", "mul") and is_float(self.wide)

    @property
    def blocks(self) -> int:
        return max(1, -(-self.n // self.block))


ONNX = ("update", "elements")  # data-first operators: every cell starts from data
_NAME = {**{op: SEGMENT_NAMES[op] for op in ("scatter", "coo", "csr")},
         **{op: SCATTER_NAMES[op] for op in ONNX}}


def is_float(dtype) -> bool:
    """A float dtype (ml_dtypes' bfloat16 is a NumPy "void" kind)."""
    d = np.dtype(dtype)
    return d.kind == "f" or d.name == "bfloat16"


def wide_dtype(dtype):
    """float32 for float16 and bfloat16 (their sums accumulate there and round once)."""
    d = np.dtype(dtype)
    return np.dtype(np.float32) if d.kind == "f" and d.itemsize == 2 or d.name == "bfloat16" else d


def check_block(op: str, block) -> Optional[int]:
    """``block`` as a positive int, or ``None``."""
    if block is None:
        return None
    if isinstance(block, (bool, np.bool_)) or not isinstance(block, (int, np.integer)):
        raise ArgumentError(f"{_NAME.get(op, op)}: block: expected a positive int or None, "
                            f"got {block!r}")
    if block <= 0:
        raise ArgumentError(f"{_NAME.get(op, op)}: block: {block} is not positive")
    return int(block)


def levels(nblocks: int) -> int:
    """The root's level: the smallest ``L`` with ``2**L >= nblocks``."""
    return max(0, (nblocks - 1).bit_length())


def node_span(spec: Spec, level: int, j: int) -> Tuple[int, int]:
    """The positions ``[a, b)`` node ``(level, j)`` covers (empty past the last block)."""
    a = min(spec.n, (j << level) * spec.block)
    b = min(spec.n, ((j + 1) << level) * spec.block)
    return a, b


def children(spec: Spec, level: int, j: int):
    """The children of node ``(level, j)`` that exist: one when the right one lies past the
    last block (the left passes up unchanged)."""
    left = (level - 1, 2 * j)
    if ((2 * j + 1) << (level - 1)) >= spec.blocks:
        return (left,)
    return left, (level - 1, 2 * j + 1)


# ---------------------------------------------------------------------------------------------
# Partials, tuples of arrays over the cells [lo, hi): a float sum's (values, the flat cells a
# -0.0 update reached), a mean's (sums, counts), a product's and an exact sum's (values,),
# min/max (values, arg: global, n for none, -1 for a kept starting value); the ONNX forms'
# (values,), and a replacement's (values, the cells it wrote).

def _run(op, src, index, out, dim, dim_size, reduce, want_arg=False, threads=None):
    """The one-machine kernel on NumPy arrays (``_segment._run`` without the other kinds)."""
    options = SegmentOptions(dim, dim_size, reduce, want_arg, True, threads)
    r = _native.segment(op, src, index, out, *options)
    return r if r is not None else segment_general(op, src, index, out, options)


def _kernel(spec: Spec, vals, src, index, table: int, red: str, threads=None):
    """Folds the piece into ``vals`` in place with the operator's own kernel."""
    if spec.op in ONNX:
        options = ScatterOptions(spec.dim, "add" if red == "sum" else red, True, "error", "error",
                                 "per_update", threads, False)
        r = _native.scatter(spec.op, vals, index, src, vals, *options)
        if r is None:
            _scatter(spec.op, _NAME[spec.op], vals, index, src, vals, options)
        return
    _run("scatter", src, index, vals, spec.dim, table, red, threads=threads)


def _identity(spec: Spec, shape):
    """A table of the reduction's identity (zeros for a replacement)."""
    d, red = np.dtype(spec.wide), spec.reduce
    if red in ("min", "max"):
        if d == np.bool_:
            v = red == "min"
        elif d.kind in "iu":
            v = np.iinfo(d).max if red == "min" else np.iinfo(d).min
        else:
            v = np.inf if red == "min" else -np.inf
    else:
        v = 1 if red == "mul" else (-0.0 if is_float(d) else 0)
    return np.full(shape, v, d)


def _take(spec: Spec, src, index, lo: int, hi: int, cells: int, pos0: int):
    """The positions of a piece that reach ``[lo, hi)``, as (src, index relative to ``lo``, the
    positions kept or ``None`` for all, the table's extent): rows out of range are dropped;
    per-element updates out of range go to one spare cell past the range (cut off by
    :func:`_cut`). The whole output (``lo = 0``, ``hi = cells``) is the kernel's to check."""
    index = np.asarray(index)
    if spec.op in ONNX and index.size and index.min() < 0:  # negative indices wrap once
        index = np.where(index < 0, index + cells, index)
    if lo == 0 and hi == cells:
        return src, index, None, cells
    check_index(spec, cells, index, pos0)
    inside = (index >= lo) & (index < hi)
    if inside.all():
        return src, (index - lo if lo else index), None, hi - lo
    if spec.rows:
        keep = np.flatnonzero(inside)
        return np.take(src, keep, axis=spec.dim), index[keep] - lo, keep, hi - lo
    return src, np.where(inside, index - lo, hi - lo), None, hi - lo + 1


def _cut(spec: Spec, part, cells: int):
    """The partial's arrays without the spare cell :func:`_take` may have added."""
    if spec.rows:
        return tuple(part)
    return tuple(p if p.shape[spec.dim] == cells else
                 np.take(p, np.arange(cells), axis=spec.dim) for p in part)


def _along(spec: Spec, a, start: int, stop: int, index=False):
    """Positions ``[start, stop)`` of ``src`` (or of the index: a 1-D one in row mode)."""
    if index and spec.rows:
        return a[start:stop]
    sl = [slice(None)] * a.ndim
    sl[spec.dim] = slice(start, stop)
    return a[tuple(sl)]


def _counts(spec: Spec, index, cells: int, threads: Optional[int] = None):
    """How many positions reach each cell (per row in row mode), on the caller's ``threads`` (a
    Dask task's one): a 1-D index counted by the native half from the index alone, another
    by the scatter kernel's sum of ones, in int32 while a piece is shorter than 2**31
    (np.bincount took 1.7x as long: record/2026-11-29-dask.md)."""
    if index.ndim == 1:
        counts = _native.counts(index, cells, threads)
        if counts is not None:
            return counts.view(np.int64)
    small = index.size < 2**31
    ones = np.ones(index.shape, np.int32 if small else np.int64)
    counts = _run("scatter", ones, index, None, spec.dim if not spec.rows else 0, cells, "sum",
                  threads=threads)[0]
    return counts.astype(np.int64, copy=False)


def _start(spec: Spec, start, exact: bool):
    """The starting values (``out=``'s) of the cells ``[lo, hi)`` as a private table, with the
    spare cell of :func:`_take` unless ``exact``."""
    table = np.array(start)
    if exact:
        return table
    shape = list(table.shape)
    shape[spec.dim] = 1
    return np.concatenate([table, np.zeros(shape, table.dtype)], axis=spec.dim)


def span(spec: Spec, src, index, pos0: int, a: int, b: int, lo: int, hi: int, start=None,
         threads: Optional[int] = None, cells: Optional[int] = None):
    """The exact reductions' partial of positions ``[a, b)`` for the cells ``[lo, hi)``,
    from a piece that starts at position ``pos0``; ``start`` (the output's starting values,
    only for the piece holding position 0) folds first."""
    cells = hi if cells is None else cells
    src = _along(spec, src, a - pos0, b - pos0)
    index = np.asarray(_along(spec, index, a - pos0, b - pos0, index=True))
    whole = index
    src, index, kept, table = _take(spec, src, index, lo, hi, cells, a)
    red, m = spec.reduce, src.shape[spec.dim]
    out = None if start is None else _start(spec, start, table == hi - lo)
    if spec.op in ONNX:
        return _onnx_span(spec, src, index, whole, a, out, table, lo, hi, cells, threads)
    if red in ("min", "max"):
        vals, arg = _checked(spec, cells, a, whole, _run, "scatter", src, index, out, spec.dim,
                             table, red, True, threads=threads)
        where = arg if kept is None else kept[np.minimum(arg, max(m - 1, 0))] if m else arg
        # None: n, or -1 for a cell that kept its starting value (present, earliest).
        arg = np.where(arg == m, spec.n if out is None else -1, where + a)
        return _cut(spec, (vals, arg), hi - lo)
    vals = _checked(spec, cells, a, whole, _run, "scatter", src, index, out, spec.dim, table,
                    "sum" if red == "mean" else red, threads=threads)[0]
    if red != "mean":  # integer and bool sums and products
        return _cut(spec, (vals,), hi - lo)
    counts = _counts(spec, index, table, threads) + (out is not None)
    return _cut(spec, (vals, counts), hi - lo)


def _zero_bits(x):
    """Where ``x`` is -0.0 (by its bits: one pass)."""
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
    return x.view(u) == u(1 << (8 * x.dtype.itemsize - 1))


def _has_zero_bits(x) -> bool:
    """Whether a contiguous ``x`` holds a -0.0: its bits are the signed integers' minimum, so
    one vectorised minimum over them tells, with nothing allocated."""
    if x.size == 0:
        return False
    i = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
    return bool(x.view(i).min() == np.iinfo(i).min)


def _zeros_reached(spec: Spec, src, index, table_shape, cells: int):
    """The flat offsets (sorted, unique) of the cells that a -0.0 update reaches: of a sum that
    ends at -0.0 every update was -0.0, so this tells it from a cell nothing reached."""
    src = np.ascontiguousarray(src)
    if not _has_zero_bits(src):
        return np.empty(0, np.int64)
    hit = _zero_bits(src)
    coords = list(np.nonzero(hit))
    coords[spec.dim] = index[coords[spec.dim]] if spec.rows else index[tuple(coords)]
    keep = coords[spec.dim] < cells  # not the spare cell
    flat = np.ravel_multi_index([c[keep] for c in coords], table_shape)
    return np.unique(flat)


def fold(spec: Spec, part, src, index, pos0: int, lo: int, hi: int, cells: int, start=None,
         threads: Optional[int] = None):
    """A block's partial for the cells ``[lo, hi)`` continued with the positions of a piece
    (``src`` and ``index`` aligned, starting at position ``pos0``): ``part`` ``None`` starts
    the block from the exact identity (-0.0, 1.0), or from ``start`` (the starting values of
    those cells) for block 0. Continuing a fold with the next positions is the fold of them
    all: a block cut across chunks folds as one."""
    src, index, kept, table = _take(spec, src, index, lo, hi, cells, pos0)
    spare = table != hi - lo
    if part is not None:
        vals = _start(spec, part[0], not spare)
    elif start is not None:
        vals = _start(spec, start, not spare).astype(spec.wide)
    else:
        shape = list(src.shape)
        shape[spec.dim] = table
        vals = np.full(shape, 1.0 if spec.reduce == "mul" else -0.0, spec.wide)
    wide = src.astype(spec.wide) if src.dtype != spec.wide else src
    if src.shape[spec.dim]:
        _checked(spec, cells, pos0, index, _kernel, spec, vals, wide, index, table,
                 "mul" if spec.reduce == "mul" else "sum", threads)
    vals = _cut(spec, (vals,), hi - lo)[0]
    if spec.reduce == "mul" or spec.op in ONNX:  # (every cell of the ONNX forms starts
        return (vals,)                          # from data: none is empty)
    if spec.reduce == "mean":
        counts = _cut(spec, (_counts(spec, index, table, threads),), hi - lo)[0]
        counts += (start is not None) if part is None else part[1]
        return vals, counts
    zeros = _zeros_reached(spec, src, index, vals.shape, hi - lo)
    if part is not None:
        return vals, np.union1d(part[1], zeros)
    if start is not None:  # a starting -0.0 is kept as it is
        zeros = np.union1d(np.flatnonzero(_zero_bits(np.ascontiguousarray(start))), zeros)
    return vals, zeros


def _checked(spec: Spec, cells: int, pos0: int, index, f, *args, **kw):
    """``f(*args)`` whose index error names the whole call's position."""
    from ._errors import OutOfRangeError
    try:
        return f(*args, **kw)
    except OutOfRangeError:
        check_index(spec, cells, index, pos0)
        raise


def _onnx_span(spec: Spec, src, index, whole, a, out, table, lo, hi, cells, threads):
    """An exact reduction of the ONNX forms: data (``out``) starts the piece holding position
    0, the identity the others; a replacement also marks the cells it wrote."""
    shape = list(src.shape)
    shape[spec.dim] = table
    vals = out if out is not None else _identity(spec, shape)
    if src.shape[spec.dim]:
        _checked(spec, cells, a, whole, _kernel, spec, vals, src, index, table, spec.reduce,
                 threads)
    if spec.reduce != "none":
        return _cut(spec, (vals,), hi - lo)
    wrote = np.zeros(shape, np.bool_)
    if src.shape[spec.dim]:
        _kernel(spec._replace(wide=np.dtype(np.bool_)), wrote, np.ones(src.shape, np.bool_),
                index, table, "none")
    return _cut(spec, (vals, wrote), hi - lo)


def node(spec: Spec, src, index, pos0: int, level: int, j: int, lo: int, hi: int, start=None,
         threads: Optional[int] = None, cells: Optional[int] = None):
    """Node ``(level, j)``'s partial for the cells ``[lo, hi)``, from a piece of ``src`` and
    ``index`` (aligned with it) that covers the node's positions and starts at ``pos0``.
    ``start`` (the starting values of the cells ``[lo, hi)``) begins block 0's fold."""
    a, b = node_span(spec, level, j)
    cells = hi if cells is None else cells
    if not spec.tree:
        return span(spec, src, index, pos0, a, b, lo, hi, start, threads, cells)
    stack = []  # (level, partial), levels decreasing: each block paired as a binary counter
    for blk in range(j << level, min(spec.blocks, (j + 1) << level)):
        ba, bb = blk * spec.block, min(spec.n, (blk + 1) * spec.block)
        part = fold(spec, None, _along(spec, src, ba - pos0, bb - pos0),
                    _along(spec, index, ba - pos0, bb - pos0, index=True), ba, lo, hi, cells,
                    start if blk == 0 else None, threads)
        stack.append((0, part))
        while len(stack) >= 2 and stack[-1][0] == stack[-2][0]:
            lv = stack[-2][0]
            stack[-2:] = [(lv + 1, combine(spec, stack[-2][1], stack[-1][1], True))]
    part = stack[-1][1]
    for _, left in reversed(stack[:-1]):  # an odd tail passes up: combine from the right
        part = combine(spec, left, part, True)
    return part


def combine(spec: Spec, left, right, private: bool = False):
    """The parent of two neighbouring nodes (``left`` covers the earlier positions);
    ``private``: ``left``'s arrays are this caller's own and take the result in place."""
    red = spec.reduce
    if spec.op in ONNX and red in ("min", "max", "none"):
        if red == "none":  # the later write wins where it wrote
            return np.where(right[1], right[0], left[0]), left[1] | right[1]
        return (np.where(_later_wins(left[0], right[0], red), right[0], left[0]),)
    if red in ("min", "max"):
        (lv, la), (rv, ra) = left, right
        # (arg -1: the cell's starting value, present and earliest)
        take = (la == spec.n) | (_later_wins(lv, rv, red) & (ra != spec.n))
        return np.where(take, rv, lv), np.where(take, ra, la)
    if left[0].dtype == np.bool_:
        return (left[0] * right[0] if red == "mul" else left[0] | right[0],)
    op = np.multiply if red == "mul" else np.add
    with np.errstate(all="ignore"):  # overflow to inf, as the kernels' own steps
        vals = op(left[0], right[0], out=left[0] if private else None)
    if red == "mul" or (red == "sum" and not spec.tree) or spec.op in ONNX:
        return (vals,)
    if red == "mean":
        return vals, np.add(left[1], right[1], out=left[1] if private else None)
    # a float sum: the cells -0.0 updates reached
    return vals, (np.union1d(left[1], right[1]) if right[1].size else left[1])


def _later_wins(lv, rv, red):
    """Where the later value replaces the earlier under the library's min/max: NaN propagates
    (the first NaN stays), +0 > -0, the first among equals stays."""
    if not is_float(lv.dtype):
        return rv > lv if red == "max" else rv < lv
    lw, rw = lv.astype(np.float64) if lv.dtype.itemsize < 4 else lv, \
        rv.astype(np.float64) if rv.dtype.itemsize < 4 else rv
    lnan, rnan = np.isnan(lw), np.isnan(rw)
    better = rw > lw if red == "max" else rw < lw
    zeros = (lw == 0) & (rw == 0)
    ls, rs = np.signbit(lw), np.signbit(rw)
    better |= zeros & ((ls & ~rs) if red == "max" else (rs & ~ls))
    return ~lnan & (rnan | better)


def finish(spec: Spec, part):
    """The result (and positions, when wanted) from the root's partial."""
    red = spec.reduce
    if spec.op in ONNX:
        return ((_canonical(part[0]) if spec.tree else part[0]).astype(spec.dtype, copy=False),)
    if red in ("min", "max"):
        vals, arg = part
        return (vals, np.where(arg < 0, spec.n, arg)) if spec.want_arg else (vals,)
    vals = part[0]
    if not spec.tree and red != "mean":
        return (vals,)
    if red == "sum":  # a cell nothing reached is +0.0; a sum of -0.0 updates stays -0.0
        vals = vals.copy()
        flat = vals.reshape(-1)
        negzero = _zero_bits(flat)
        if part[1].size:
            negzero[part[1]] = False
        flat[negzero] = 0
        return (_canonical(vals).astype(spec.dtype, copy=False),)
    counts = _spread(spec, part[1], vals) if red != "mul" else None
    if not spec.tree:  # integer means: the wrapped sum floor-divided by the count
        wide = np.uint64 if vals.dtype.kind == "u" else np.int64
        q = vals.astype(wide) // np.maximum(counts, 1).astype(wide)
        return (np.where(counts == 0, 0, q).astype(spec.dtype),)
    if red == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            vals = vals / counts.astype(spec.wide)
        vals = np.where(counts == 0, np.zeros((), spec.wide), vals)
    return (_canonical(vals).astype(spec.dtype, copy=False),)


def _canonical(vals):
    """NaN made canonical, as the kernels make it (inf + -inf gives the hardware's own NaN)."""
    nan = np.isnan(vals)
    return np.where(nan, np.array(np.nan, vals.dtype), vals) if nan.any() else vals


def _spread(spec: Spec, counts, vals):
    """Per-row counts shaped to broadcast against the table."""
    if not spec.rows:
        return counts
    shape = [1] * vals.ndim
    shape[spec.dim] = counts.shape[0]
    return counts.reshape(shape)


def root(spec: Spec, src, index, lo: int, hi: int, start=None,
         threads: Optional[int] = None, cells: Optional[int] = None):
    """The whole tree over an in-memory ``src`` for the cells ``[lo, hi)`` of ``cells``
    (default ``hi``): :func:`finish` of the root's partial."""
    cells = hi if cells is None else cells
    if not spec.tree:
        return finish(spec, span(spec, src, index, 0, 0, spec.n, lo, hi, start, threads, cells))
    return finish(spec, node(spec, src, index, 0, levels(spec.blocks), 0, lo, hi, start,
                             threads, cells))


def make_spec(op, src_dtype, ndim, dim, index_ndim, reduce, n, block, want_arg) -> Spec:
    """The :class:`Spec` of a call, after the operator's own checks."""
    name = _NAME.get(op, op)
    if reduce == "add":
        reduce = "sum"
    allowed = ("none", "sum", "mul", "min", "max") if op in ONNX else \
        ("sum", "mul", "mean", "min", "max")
    if reduce not in allowed:
        what = "reduction" if op in ONNX else "reduce"
        raise ArgumentError(f"{name}: {what}: {reduce!r} is not one of "
                            f"{', '.join(map(repr, allowed))}")
    d = np.dtype(src_dtype)
    if d.kind == "c":
        raise DTypeError(f"{name}: src: dtype {d} is not supported")
    if d == np.bool_ and reduce == "mean":
        raise DTypeError(f"{name}: reduction: 'mean' is not supported: mean is not defined for "
                         "bool data")
    if not -ndim <= dim < ndim:
        raise ArgumentError(f"{name}: dim: {dim} is out of range for src of rank {ndim}")
    dim = dim + ndim if dim < 0 else dim
    return Spec(op, reduce, dim, index_ndim == 1, d, d if op in ONNX else wide_dtype(d), n,
                block if block is not None else max(n, 1), want_arg)


def check_index(spec: Spec, cells: int, index, pos0: int = 0):
    """``index`` with every value checked in ``[0, cells)`` before anything runs: the error
    names the whole call's position, as the one-machine kernels do."""
    from ._errors import OutOfRangeError
    index = np.asarray(index)
    if index.size:
        bad = (index < 0) | (index >= cells)
        if bad.any():
            at = np.unravel_index(int(np.argmax(bad)), index.shape)
            pos = list(at)
            pos[0 if spec.rows else spec.dim] += pos0
            where = ", ".join(map(str, pos))
            raise OutOfRangeError(f"{_NAME[spec.op]}: index: index {int(index[at])} at position "
                                  f"[{where}] is out of range for dimension {spec.dim} of size "
                                  f"{cells}")
    return index


def check_sorted(spec: Spec, index, pos0: int = 0):
    """A ``segment_coo`` index checked sorted along its last axis."""
    if index.shape[-1] > 1:
        down = np.diff(index, axis=-1) < 0
        if down.any():
            at = np.unravel_index(int(np.argmax(down)), down.shape)
            nxt = at[:-1] + (at[-1] + 1,)
            pos = ", ".join(map(str, nxt[:-1] + (nxt[-1] + pos0,)))
            raise ArgumentError(f"segment_coo: index: must be sorted along dim {index.ndim - 1}, "
                                f"but {int(index[nxt])} at position [{pos}] follows "
                                f"{int(index[at])}")


def one_machine(op: str, src, index, out, dim: int, dim_size, reduce: str, block: int,
                threads: Optional[int]):
    """``scatter`` / ``segment_coo`` / ``segment_csr`` with ``block=``, for NumPy arrays: the
    float sums, means and products by the block rule; the others as without it."""
    name = _NAME[op]
    for a, what in ((src, "src"), (index, "index" if op != "csr" else "indptr"), (out, "out")):
        if a is not None and not isinstance(a, np.ndarray):
            raise ArgumentError(f"{name}: {what}: block= takes NumPy arrays, got "
                                f"{type(a).__name__}")
    if op == "csr":
        if index.ndim != 1:
            raise ArgumentError(f"segment_csr: indptr: block= takes a 1-D indptr, got rank "
                                f"{index.ndim}")
        n = src.shape[0] if src.ndim else 0
        if index.size == 0 or (np.diff(index) < 0).any() or index[0] < 0 or index[-1] > n:
            raise ArgumentError(f"segment_csr: indptr: must be non-decreasing within [0, {n}]")
        cells = index.size - 1
        seg = np.full(n, cells, np.int64)
        seg[index[0]:index[-1]] = np.repeat(np.arange(cells), np.diff(index))
        spec = make_spec(op, src.dtype, src.ndim, 0, 1, reduce, n, block, False)
        r = root(spec, src, seg, 0, cells, threads=threads, cells=cells + 1)[0]
        if out is not None:
            out[...] = r
            return out
        return r
    if op == "coo":
        dim = index.ndim - 1
    if index.dtype.kind not in "iu":
        raise DTypeError(f"{name}: index: dtype {index.dtype} is not accepted; expected an "
                         "integer index dtype")
    if not -src.ndim <= dim < src.ndim:
        raise ArgumentError(f"{name}: dim: {dim} is out of range for src of rank {src.ndim}")
    d = dim + src.ndim if dim < 0 else dim
    spec = make_spec(op, src.dtype, src.ndim, d, index.ndim, reduce, src.shape[d], block, False)
    if not spec.rows:
        shape = index.shape + (1,) * (src.ndim - index.ndim)
        try:
            index = np.broadcast_to(index.reshape(shape), src.shape)
        except ValueError:
            raise ArgumentError(f"{name}: index: shape {index.shape} does not broadcast against "
                                f"src's {src.shape}") from None
    elif index.shape[0] != src.shape[d]:
        raise ArgumentError(f"{name}: index: its {index.shape[0]} entries do not match src's "
                            f"{src.shape[d]} along dim {d}")
    if op == "coo":
        check_sorted(spec, index)
    if dim_size is None:
        dim_size = out.shape[d] if out is not None else (int(index.max()) + 1 if index.size
                                                          else 0)
    # (the kernels check the index; an error names the whole call's position)
    if out is not None:
        want = src.shape[:d] + (dim_size,) + src.shape[d + 1:]
        if out.shape != want or out.dtype != src.dtype:
            raise ArgumentError(f"{name}: out: expected shape {want} and dtype {src.dtype}, got "
                                f"{out.shape} and {out.dtype}")
    r = root(spec, src, index, 0, dim_size, start=out, threads=threads)[0]
    if out is not None:
        out[...] = r
        return out
    return r


def onnx_operands(op: str, data_shape, indices, updates, axis: int):
    """(updates, index, dim) of ``scatter_update`` / ``scatter_elements`` as the block rule
    reads them: ``scatter_update``'s indices flattened (one destination per slice, a row
    mode) with ``updates`` to match; ``scatter_elements``' as they are, with ``updates`` of
    ``data``'s shape but along ``axis``."""
    name = _NAME[op]
    r = len(data_shape)
    if not -r <= axis < r:
        raise ArgumentError(f"{name}: axis: {axis} is out of range for data of rank {r}")
    a = axis + r if axis < 0 else axis
    ishape, ushape = tuple(indices.shape), tuple(updates.shape)
    if op == "update":
        want = tuple(data_shape[:a]) + ishape + tuple(data_shape[a + 1:])
        if ushape != want:
            raise ArgumentError(f"{name}: updates: shape {ushape} does not match {want} "
                                "(data.shape[:axis] + indices.shape + data.shape[axis+1:])")
        k = int(np.prod(ishape, dtype=np.int64))
        return (updates.reshape(tuple(data_shape[:a]) + (k,) + tuple(data_shape[a + 1:])),
                indices.reshape(k), a)
    if ushape != ishape:
        raise ArgumentError(f"{name}: updates: shape {ushape} does not match indices' {ishape}")
    if len(ishape) != r or any(i != d for j, (i, d) in enumerate(zip(ishape, data_shape))
                               if j != a):
        raise ArgumentError(f"{name}: indices: block= and the Dask functions take indices of "
                            f"data's shape but along axis, got {ishape} for data {tuple(data_shape)}")
    return updates, indices, a


def one_machine_onnx(op: str, data, indices, updates, axis: int, reduction: str, block: int,
                     out, threads: Optional[int]):
    """``scatter_update`` / ``scatter_elements`` with ``block=``, for NumPy arrays."""
    name = _NAME[op]
    for x, what in ((data, "data"), (indices, "indices"), (updates, "updates"), (out, "out")):
        if x is not None and not isinstance(x, np.ndarray):
            raise ArgumentError(f"{name}: {what}: block= takes NumPy arrays, got "
                                f"{type(x).__name__}")
    if np.ndim(updates) == 0 or updates.dtype != data.dtype:
        raise ArgumentError(f"{name}: updates: block= takes updates of data's dtype and full "
                            "shape")
    src, index, a = onnx_operands(op, data.shape, indices, updates, axis)
    spec = make_spec(op, data.dtype, data.ndim, a, index.ndim if op == "elements" else 1,
                     reduction, src.shape[a], block, False)
    r = root(spec, src, index, 0, data.shape[a], start=data)[0]
    if out is None:
        return r
    if out.shape != data.shape or out.dtype != data.dtype:
        raise ArgumentError(f"{name}: out: expected shape {data.shape} and dtype {data.dtype}, "
                            f"got {out.shape} and {out.dtype}")
    out[...] = r
    return out
