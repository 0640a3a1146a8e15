"""A plain, slow NumPy reference of every operator, written from the library's documented
semantics (DESIGN.md): updates combine in row-major index order, one scalar step at a time,
in the data's dtype (float16 and bfloat16 through float32, rounded after every step unless
accumulation is "wide"); a NaN result is the canonical quiet NaN; min and max propagate NaN
and order -0 below +0; integers wrap; an integer mean rounds toward -inf."""

from __future__ import annotations

import warnings

import numpy as np

# NaN and overflow arise on purpose here; NumPy's warnings about them are noise.
warnings.filterwarnings("ignore", category=RuntimeWarning)

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None

FLOATS = {"float64", "float32", "float16", "bfloat16"}


def _wrap(a, dtype):
    """`a` (a Python or NumPy number) as a scalar of `dtype`, wrapping integers."""
    return np.array([a]).astype(dtype)[0] if np.dtype(dtype).kind in "iu" else np.dtype(dtype).type(a)


def identity(reduction: str, dtype: np.dtype):
    if dtype == np.bool_:
        return {"min": True, "mul": True}.get(reduction, False)
    if reduction in ("add", "sub", "mean", "none"):
        # -0.0 for floats: the true identity of +, so that an update of -0.0 stays -0.0.
        return dtype.type(-0.0) if dtype.name in FLOATS else dtype.type(0)
    if reduction == "mul":
        return dtype.type(1)
    if dtype.name in FLOATS:
        return dtype.type(np.inf if reduction == "min" else -np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.max if reduction == "min" else info.min)


def _canon(x, dtype):
    return dtype.type(np.nan) if np.isnan(x) else x


def step(a, u, reduction: str, dtype: np.dtype, compute: np.dtype):
    """One combine of `u` into `a`, both of dtype `compute`; the result in `compute`."""
    if reduction == "none":
        return u
    if dtype == np.bool_:
        a, u = bool(a), bool(u)
        return {"add": a | u, "sub": a ^ u, "mul": a & u, "min": a & u, "max": a | u, "mean": a | u}[reduction]
    if compute.name in ("float64", "float32"):
        if reduction in ("min", "max"):
            if np.isnan(a) or np.isnan(u):
                return compute.type(np.nan)
            if a == u:
                neg = np.signbit(a)
                return (a if neg else u) if reduction == "min" else (u if neg else a)
            return min(a, u) if reduction == "min" else max(a, u)
        r = {"add": a + u, "mean": a + u, "sub": a - u, "mul": a * u}[reduction]
        return _canon(compute.type(r), compute)
    # integers: wrap
    if reduction in ("min", "max"):
        return min(a, u) if reduction == "min" else max(a, u)
    x, y = np.array([a], compute), np.array([u], compute)
    return {"add": x + y, "mean": x + y, "sub": x - y, "mul": x * y}[reduction][0]


def fold(start, updates, reduction: str, include_self: bool, dtype: np.dtype, wide: bool):
    """The value of one cell that starts at `start` and receives `updates`, in order."""
    if reduction == "none":
        return updates[-1]
    half = dtype.name in ("float16", "bfloat16")
    compute = np.dtype(np.float32) if half else dtype
    narrow = (lambda x: dtype.type(x)) if half else (lambda x: x)
    acc = start if include_self else identity(reduction, dtype)
    acc = compute.type(acc)
    for u in updates:
        acc = step(acc, compute.type(u), reduction, dtype, compute)
        if half and not wide:
            acc = compute.type(narrow(acc))
    if reduction == "mean":
        count = len(updates) + int(include_self)
        if dtype == np.bool_:
            return acc
        if dtype.name in FLOATS:
            acc = _canon(compute.type(acc / compute.type(count)), compute)
        else:
            acc = _wrap(int(acc) // count, dtype)
    return narrow(acc) if half else dtype.type(acc)


def _resolve(j: int, n: int, negative: str, out_of_range: str):
    """The position index `j` names along a dim of size `n`, or None (skipped)."""
    if j < 0 and negative == "wrap":
        j += n
    if 0 <= j < n:
        return j
    if out_of_range == "clamp":
        return min(max(j, 0), n - 1)
    if out_of_range in ("skip", "fill"):
        return None
    raise IndexError(j)


def _apply(data, contributions, reduction, include_self, wide):
    """`data` with every cell that receives `(cell, update)` contributions folded."""
    out = data.copy()
    cells: dict = {}
    for cell, u in contributions:
        cells.setdefault(cell, []).append(u)
    for cell, us in cells.items():
        out[cell] = fold(data[cell], us, reduction, include_self, data.dtype, wide)
    return out


def scatter_elements(data, indices, updates, axis=0, reduction="none", include_self=True,
                     negative="wrap", out_of_range="error", wide=False):
    ax = axis % data.ndim
    contributions = []
    for p in np.ndindex(*indices.shape):
        j = _resolve(int(indices[p]), data.shape[ax], negative, out_of_range)
        if j is not None:
            contributions.append((p[:ax] + (j,) + p[ax + 1:], updates[p]))
    return _apply(data, contributions, reduction, include_self, wide)


def scatter_nd(data, indices, updates, reduction="none", include_self=True, negative="wrap",
               out_of_range="error", wide=False):
    k = indices.shape[-1]
    contributions = []
    for t in np.ndindex(*indices.shape[:-1]):
        dest = []
        for c in range(k):
            j = _resolve(int(indices[t + (c,)]), data.shape[c], negative, out_of_range)
            if j is None:
                break
            dest.append(j)
        else:
            for s in np.ndindex(*data.shape[k:]):
                contributions.append((tuple(dest) + s, updates[t + s]))
    return _apply(data, contributions, reduction, include_self, wide)


def scatter_update(data, indices, updates, axis=0, reduction="none", include_self=True,
                   negative="wrap", out_of_range="error", wide=False):
    ax = axis % data.ndim
    contributions = []
    for outer in np.ndindex(*data.shape[:ax]):
        for q in np.ndindex(*indices.shape):
            j = _resolve(int(indices[q]), data.shape[ax], negative, out_of_range)
            if j is None:
                continue
            for s in np.ndindex(*data.shape[ax + 1:]):
                contributions.append((outer + (j,) + s, updates[outer + q + s]))
    return _apply(data, contributions, reduction, include_self, wide)


def gather(data, indices, axis=0, negative="wrap", out_of_range="error", fill=0):
    ax = axis % data.ndim
    out = np.empty(data.shape[:ax] + indices.shape + data.shape[ax + 1:], data.dtype)
    for outer in np.ndindex(*data.shape[:ax]):
        for q in np.ndindex(*indices.shape):
            j = _resolve(int(indices[q]), data.shape[ax], negative, out_of_range)
            for s in np.ndindex(*data.shape[ax + 1:]):
                out[outer + q + s] = fill if j is None else data[outer + (j,) + s]
    return out


def gather_elements(data, indices, axis=0, negative="wrap", out_of_range="error", fill=0):
    ax = axis % data.ndim
    out = np.empty(indices.shape, data.dtype)
    for p in np.ndindex(*indices.shape):
        j = _resolve(int(indices[p]), data.shape[ax], negative, out_of_range)
        out[p] = fill if j is None else data[p[:ax] + (j,) + p[ax + 1:]]
    return out


def gather_nd(data, indices, negative="wrap", out_of_range="error", fill=0):
    k = indices.shape[-1]
    out = np.empty(indices.shape[:-1] + data.shape[k:], data.dtype)
    for t in np.ndindex(*indices.shape[:-1]):
        src = []
        for c in range(k):
            j = _resolve(int(indices[t + (c,)]), data.shape[c], negative, out_of_range)
            if j is None:
                break
            src.append(j)
        for s in np.ndindex(*data.shape[k:]):
            out[t + s] = fill if len(src) < k else data[tuple(src) + s]
    return out
