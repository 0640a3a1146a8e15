"""The one general path under every public function and every autograd function: an
operator's call into the native half, and, when the native half declines its arguments as
they are, the conversion that makes them acceptable. Every caller (the ONNX-style operators,
torch_scatter's API, the autograd functions) comes through here; nothing here imports them."""

from __future__ import annotations

import operator
from typing import Any, NamedTuple, Optional

import numpy as np

from . import _native
from ._arrays import (
    as_arr, done, index_arr, modified, new_result, overlaps, readable, result, same_view, scalar,
    staged, writable,
)
from ._errors import DTypeError

SCATTER_NAMES = {"elements": "scatter_elements", "nd": "scatter_nd", "update": "scatter_update"}
GATHER_NAMES = {"gather": "gather", "elements": "gather_elements", "nd": "gather_nd"}
SEGMENT_NAMES = {
    "scatter": "scatter", "coo": "segment_coo", "csr": "segment_csr", "gather_coo": "gather_coo",
    "gather_csr": "gather_csr", "softmax": "scatter_softmax", "log_softmax": "scatter_log_softmax",
    "logsumexp": "scatter_logsumexp", "std": "scatter_std",
}


# Each operator family's options, by name, in the order its native function takes them after
# the arrays (``_native.scatter(op, data, indices, updates, out, *options)``); a test checks
# every list against the native function's signature. The values are the caller's, unchecked:
# the native half checks them (and names the operator and the argument when one is wrong).
# Whatever reads a field takes the named tuple; a call that only unpacks them (the backwards'
# ``*_vjp_raw``) also takes a plain tuple in the same order, which the public backwards pass
# (a named tuple costs 0.5 µs to make, a plain one nothing).

class ScatterOptions(NamedTuple):
    axis: Any
    reduction: Any
    include_self: Any
    negative_indices: Any
    out_of_range: Any
    accumulation: Any
    threads: Any
    updates_window: Any


class GatherOptions(NamedTuple):
    axis: Any
    batch_dims: Any
    negative_indices: Any
    out_of_range: Any
    fill_value: Any
    threads: Any


class SegmentOptions(NamedTuple):
    dim: Any
    dim_size: Any
    reduce: Any
    want_arg: Any
    unbiased: Any
    threads: Any


class ScatterVjpOptions(NamedTuple):
    axis: Any
    reduction: Any
    include_self: Any
    negative_indices: Any
    out_of_range: Any
    ties: Any
    threads: Any
    updates_window: Any


class GatherVjpOptions(NamedTuple):
    axis: Any
    batch_dims: Any
    negative_indices: Any
    out_of_range: Any
    threads: Any


class SegmentVjpOptions(NamedTuple):
    dim: Any
    dim_size: Any
    reduce: Any
    ties: Any
    threads: Any


def vjp_name(names, op):
    """The public name of an operator's backward (``scatter_std_vjp`` for both std rules)."""
    return names["std" if op == "std_biased" else op] + "_vjp"


def _read(x, arg, name, index=False):
    """An input as the native half reads it in place (``None`` stays ``None``)."""
    if x is None:
        return None
    return readable(index_arr(x, arg, name) if index else as_arr(x, arg, name), arg, name)


def _p(a):
    return None if a is None else a.prepared()


def _private(a: np.ndarray, *others: np.ndarray) -> np.ndarray:
    """`a`, copied when its memory may overlap one of `others` (an output being written)."""
    return a.copy() if any(overlaps(a, o) for o in others) else a


# The general path, when the native half cannot take an argument as it is: other array kinds
# (JAX, lists, tensors torch will not export), foreign byte order, misaligned layouts or
# strides that are not whole elements, an output that overlaps an input or that the native half cannot write in place.
# Each argument is converted (copied only when needed), the checks the native half leaves to
# Python are made here, and the native half is called on `_native.Prepared` arrays (an array
# and the dtype of its bits), which it always accepts.

def updates_shape(op, data_shape, index_shape, axis):
    """The shape ``updates`` must have, or ``None`` when the shapes or the axis are invalid (the
    library then says why)."""
    if op == "elements":
        return index_shape
    if op == "nd":
        if not index_shape or index_shape[-1] > len(data_shape):
            return None
        return index_shape[:-1] + data_shape[index_shape[-1]:]
    r = len(data_shape)
    a = axis + r if axis < 0 else axis
    if not 0 <= a < r:
        return None
    return data_shape[:a] + index_shape + data_shape[a + 1:]


def _as_updates(u, d, op, name, index_shape, axis, window):
    """``updates`` as the scatter takes it: of another dtype, cast by NumPy's ``same_kind``
    rule (as ``ufunc.at`` casts; a Python scalar or list follows NumPy's conversion; a torch
    tensor must have data's dtype, as torch's own scatters require); of another shape,
    broadcast to the shape the scatter needs (``np.add.at(x, i, 2.0)``), as a view."""
    if u.dtype != d.dtype:
        if u.kind == "torch" or d.kind == "torch":
            raise DTypeError(f"{name}: updates: dtype {u.dtype} does not match; expected data's "
                             f"dtype {d.dtype} (torch's scatters do not cast either: pass "
                             f"updates.to(data.dtype))")
        if not np.can_cast(u.array.dtype, d.array.dtype, "same_kind"):
            raise DTypeError(f"{name}: updates: dtype {u.dtype} cannot be cast to data's dtype "
                             f"{d.dtype} under NumPy's 'same_kind' rule (as ufunc.at); cast it "
                             f"first, e.g. updates.astype(data.dtype)")
        u = u._replace(array=u.array.astype(d.array.dtype), dtype=d.dtype)
    want = updates_shape(op, tuple(d.array.shape), tuple(index_shape), axis)
    if want is not None and u.array.shape != want and not window:
        try:
            u = u._replace(array=np.broadcast_to(u.array, want))
        except ValueError:
            pass  # the library names the shapes
    return u


def segment_shape(op, src_shape, index_shape, dim, dim_size, out_shape=None):
    """A segment-family result's shape (every adapter's shape rule): src's, with the reduced
    dim's extent what the operator gives: ``dim_size``, else ``out``'s, else ``None`` where only
    the data says it (``index.max() + 1``; gather_csr's ``indptr[-1]``, given as ``dim_size``
    when known). An invalid dim leaves src's shape (the kernel names the error)."""
    shape = list(src_shape)
    if op in ("softmax", "log_softmax"):
        return shape
    d = dim if op in ("scatter", "logsumexp", "std") else len(index_shape) - 1
    d = d + len(shape) if d < 0 else d
    if not 0 <= d < len(shape) or (op in ("csr", "gather_coo") and d >= len(index_shape)):
        return shape
    if op == "csr":
        shape[d] = max(index_shape[d] - 1, 0)
    elif op == "gather_coo":
        shape[d] = index_shape[d]
    elif dim_size is not None:
        shape[d] = dim_size
    elif out_shape is not None and op != "gather_csr":
        shape[d] = out_shape[d]
    else:
        shape[d] = None
    return shape


def _scatter(op, name, data, indices, updates, out, options: ScatterOptions):
    d, u = _read(data, "data", name), _read(updates, "updates", name)
    i = _read(indices, "indices", name, index=True)
    try:
        axis = operator.index(options.axis)
    except TypeError:
        axis = 0  # the native half raises
    w = options.updates_window
    window = w is True or (type(w) is np.bool_ and bool(w))
    u = _as_updates(u, d, op, name, i.array.shape, axis, window)
    if out is None:
        res = new_result(d.array.shape, d)
        done(_native.scatter(op, d.prepared(), i.prepared(), u.prepared(), d.prepared(res), *options))
        return result(res, d)
    o = as_arr(out, "out", name, write=True)
    writable(o, "out", name)
    if o.dtype != d.dtype:
        raise DTypeError(f"{name}: out: dtype {o.dtype} does not match; expected data's dtype {d.dtype}")
    target = o.array
    in_place = same_view(target, d.array)
    # An output the native half cannot write in place (misaligned, foreign byte order)
    # is written through a contiguous stage, copied back only after success.
    stage = staged(target, keep=in_place)
    ip = i.prepared(_private(i.array, target))
    up = u.prepared(_private(u.array, target))
    dp = d.prepared(stage if in_place else _private(d.array, target))
    done(_native.scatter(op, dp, ip, up, d.prepared(stage), *options))
    if stage is not target:
        target[...] = stage
    modified(out)
    return out


def _gather(op, name, data, indices, out, options: GatherOptions):
    d, i = _read(data, "data", name), _read(indices, "indices", name, index=True)
    # A fill value the native half reads as data's dtype (None, or one it refuses without
    # out_of_range="fill", stays as it is).
    if options.out_of_range == "fill" and options.fill_value is not None:
        options = options._replace(fill_value=d.prepared(scalar(options.fill_value, d, name)))
    if out is None:
        shape = _native.gather_shape(op, d.dtype, d.array.shape, i.array.shape, options.axis,
                                     options.batch_dims)
        res = new_result(shape, d)
        done(_native.gather(op, d.prepared(), i.prepared(), d.prepared(res), *options))
        return result(res, d)
    o = as_arr(out, "out", name, write=True)
    writable(o, "out", name)
    if o.dtype != d.dtype:
        raise DTypeError(f"{name}: out: dtype {o.dtype} does not match; expected data's dtype {d.dtype}")
    target = o.array
    stage = staged(target, keep=False)
    dp = d.prepared(_private(d.array, target))
    ip = i.prepared(_private(i.array, target))
    done(_native.gather(op, dp, ip, d.prepared(stage), *options))
    if stage is not target:
        target[...] = stage
    modified(out)
    return out


def scatter_raw(op, data, indices, updates, out, options: ScatterOptions):
    """One scatter without autograd: the native half, else the general path."""
    r = _native.scatter(op, data, indices, updates, out, *options)
    if r is None:
        return _scatter(op, SCATTER_NAMES[op], data, indices, updates, out, options)
    return r


def gather_raw(op, data, indices, options: GatherOptions, out=None):
    """One gather without autograd: the native half, else the general path."""
    r = _native.gather(op, data, indices, out, *options)
    return _gather(op, GATHER_NAMES[op], data, indices, out, options) if r is None else r


def _positions(a: Optional[np.ndarray], like) -> Any:
    if a is None or like.kind == "numpy":
        return a
    if like.kind == "torch":
        import torch
        return torch.from_numpy(a)
    import jax.numpy as jnp
    return jnp.asarray(a)


def segment_general(op, src, index, out, options: SegmentOptions):
    """The general path (see ``__init__``): convert, copy what overlaps ``out``, stage an
    ``out`` the native half cannot write, and call it with prepared arrays."""
    name = SEGMENT_NAMES[op]
    arg = "indptr" if op in ("csr", "gather_csr") else "index"
    s, i = _read(src, "src", name), _read(index, arg, name, index=True)
    if out is None:
        r = done(_native.segment(op, s.prepared(), i.prepared(), None, *options))
        return result(r[0], s), _positions(r[1], s)
    o = as_arr(out, "out", name, write=True)
    writable(o, "out", name)
    if o.dtype != s.dtype:
        raise DTypeError(f"{name}: out: dtype {o.dtype} does not match; expected src's dtype {s.dtype}")
    target = o.array
    stage = staged(target, keep=True)
    sp = s.prepared(s.array.copy() if overlaps(s.array, target) else None)
    ip = i.prepared(i.array.copy() if overlaps(i.array, target) else None)
    r = done(_native.segment(op, sp, ip, s.prepared(stage), *options))
    if stage is not target:
        target[...] = stage
    modified(out)
    return out, _positions(r[1], s)



def segment_raw(op, src, index, out, options: SegmentOptions):
    """One segment-family call without autograd: the native half, else the general path."""
    r = _native.segment(op, src, index, out, *options)
    return r if r is not None else segment_general(op, src, index, out, options)


def segment_vjp_raw(op, grad, src, index, out, options: tuple):
    """One segment-family backward (``options``: :class:`SegmentVjpOptions`' fields): the
    native half, else the general path."""
    r = _native.segment_vjp(op, grad, src, index, out, *options)
    if r is not None:
        return r
    name = vjp_name(SEGMENT_NAMES, op)
    g, s, o = _read(grad, "grad", name), _read(src, "src", name), _read(out, "out", name)
    arg = "indptr" if op in ("csr", "gather_csr") else "index"
    i = _read(index, arg, name, index=True)
    r = done(_native.segment_vjp(op, g.prepared(), _p(s), i.prepared(), _p(o), *options))
    return result(r[0], g), (None if r[1] is None else result(r[1], g))


def scatter_vjp_raw(op, grad, data, indices, updates, options: tuple):
    """One scatter's backward (``options``: :class:`ScatterVjpOptions`' fields): the native
    half, else the general path."""
    r = _native.scatter_vjp(op, grad, data, indices, updates, *options)
    if r is not None:
        return r
    name = vjp_name(SCATTER_NAMES, op)
    g, d, u = _read(grad, "grad", name), _read(data, "data", name), _read(updates, "updates", name)
    i = _read(indices, "indices", name, index=True)
    r = done(_native.scatter_vjp(op, g.prepared(), d.prepared(), i.prepared(), u.prepared(),
                                 *options))
    return result(r[0], g), result(r[1], g)


def gather_vjp_raw(op, grad, indices, data_shape, options: tuple):
    """One gather's backward (``options``: :class:`GatherVjpOptions`' fields): the native half,
    else the general path."""
    shape = tuple(int(n) for n in data_shape)
    r = _native.gather_vjp(op, grad, indices, shape, *options)
    if r is not None:
        return r
    name = vjp_name(GATHER_NAMES, op)
    g, i = _read(grad, "grad", name), _read(indices, "indices", name, index=True)
    return result(done(_native.gather_vjp(op, g.prepared(), i.prepared(), shape, *options)), g)
