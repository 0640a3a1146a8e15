"""JAX operators: every operator of the package inside the programs JAX traces (``jax.jit``,
``jax.grad``, ``jax.vmap``, ``jax.export``), as calls of XLA's FFI into the native half's
handlers (``src/xla.rs``): the kernels run inside the compiled program, with no host callback.

This module converts and registers, nothing else: each call checks its static arguments,
computes the result's shape and dtype (the rules ``_core`` states for every adapter), and
binds ``jax.ffi.ffi_call``; each gradient is a ``jax.custom_vjp`` over the backward handler
(the Rust library's rules, as ``_grad``). Concrete JAX arrays outside a trace keep the
NumPy path (``_core``): the same kernels, the same bits. Imported on first need (JAX is
optional), or with the package when JAX is imported first (a process that runs a
deserialized ``jax.export`` program needs the targets registered).
"""

from __future__ import annotations

import ctypes
import operator
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import _native
from ._arrays import DTYPES, INDEX_DTYPES, Arr, scalar
from ._core import (
    GATHER_NAMES, SCATTER_NAMES, SEGMENT_NAMES, GatherOptions, GatherVjpOptions, ScatterOptions,
    ScatterVjpOptions, segment_shape, updates_shape,
)
from ._errors import ArgumentError, ArgumentTypeError, DTypeError

FAMILIES = ("scatter", "gather", "segment", "scatter_vjp", "gather_vjp", "segment_vjp")
TARGETS = {f: "tensor_scatter_" + f for f in FAMILIES}


def _register():
    """Registers every handler with XLA for the CPU platform (the native library's symbols,
    wrapped in capsules as ``jax.ffi`` takes them)."""
    lib = ctypes.CDLL(_native.__file__)
    for family, target in TARGETS.items():
        handler = getattr(lib, "tensor_scatter_xla_" + family)
        jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(handler), platform="cpu")


_register()


def export_checks():
    """The ``disabled_checks`` ``jax.export.export`` needs for a program that calls these
    operators (it refuses custom calls it does not know to be stable)."""
    return [jax.export.DisabledSafetyCheck.custom_call(t) for t in TARGETS.values()]


# --- static arguments ------------------------------------------------------------------------

def _int(x, name, arg):
    """An attribute integer: what ``operator.index`` takes, never a bool or a traced value."""
    if isinstance(x, bool) or isinstance(x, jax.core.Tracer):
        what = "a traced value" if isinstance(x, jax.core.Tracer) else repr(x)
        raise ArgumentTypeError(
            f"{name}: {arg}: {what} is not a static integer (under jax.jit it must be a Python "
            f"int: pass it as a static argument)")
    try:
        return np.int64(operator.index(x))
    except TypeError:
        raise ArgumentTypeError(f"{name}: {arg}: {x!r} is not an integer") from None


def _flag(x, name, arg):
    if not isinstance(x, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name}: {arg}: {x!r} is not a bool")
    return np.bool_(x)


def _text(x, name, arg):
    if not isinstance(x, str):
        raise ArgumentTypeError(f"{name}: {arg}: {x!r} is not a string")
    return x


def _threads(t, name):
    if t is None:
        return np.int64(0)
    n = _int(t, name, "threads")
    if n < 0:
        raise ArgumentError(f"{name}: threads: {t!r} is not None or a count >= 0 (0: every core)")
    return n


def _cpu(name):
    backend = jax.default_backend()
    if backend != "cpu":
        raise ArgumentError(
            f"{name}: JAX's default backend is {backend!r}; tensor_scatter's XLA kernels run on "
            f"the CPU only (JAX_PLATFORMS=cpu runs the program there)")


def _array(x, name, arg, index=False):
    """``x`` as a JAX value (a tracer stays one) of a dtype the library takes."""
    x = x if isinstance(x, jax.Array) else jnp.asarray(x)
    dt = np.dtype(x.dtype).name
    if index and dt not in INDEX_DTYPES:
        raise DTypeError(f"{name}: {arg}: dtype {dt} is not accepted; expected an integer index "
                         f"dtype (int8, int16, int32, int64, uint8, uint16, uint32 or uint64)")
    if dt not in DTYPES:
        raise DTypeError(f"{name}: {arg}: dtype {dt} is not accepted; expected one of "
                         f"{', '.join(sorted(DTYPES))}")
    return x


def _no_out(out, name):
    if out is not None:
        raise ArgumentError(f"{name}: out: JAX arrays are immutable; pass out=None and use the "
                            f"result")


def _ffi(family, results, *args, **attrs):
    return jax.ffi.ffi_call(TARGETS[family], results, vmap_method="sequential")(*args, **attrs)


def _like(x, shape=None, dtype=None):
    return jax.ShapeDtypeStruct(x.shape if shape is None else tuple(shape),
                                x.dtype if dtype is None else dtype)


def _positions_dtype():
    return jnp.int64 if jax.config.jax_enable_x64 else jnp.int32


def _float0(x):
    return np.zeros(np.shape(x), dtype=jax.dtypes.float0)


# --- the three scatters ---------------------------------------------------------------------
# A call's spec: its checked options, static (hashable) for jax.custom_vjp, each field named as
# the XLA attribute it becomes.

class _ScatterSpec(NamedTuple):
    op: str
    axis: Any
    reduction: str
    include_self: bool
    negative_indices: str
    out_of_range: str
    accumulation: str
    updates_window: bool
    ties: str
    threads: Any


def _scatter_attrs(spec: _ScatterSpec, backward=False):
    """The handler's attributes: the forward's take ``accumulation``, the backward's ``ties``."""
    attrs = spec._asdict()
    del attrs["accumulation" if backward else "ties"]
    return attrs


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def _scatter_op(spec, data, indices, updates):
    return _ffi("scatter", _like(data), data, indices, updates, **_scatter_attrs(spec))


def _scatter_fwd(spec, data, indices, updates):
    return _scatter_op(spec, data, indices, updates), (data, indices, updates)


def _scatter_vjp(spec, g, data, indices, updates):
    """``(d data, d updates)``: the backward handler."""
    return tuple(_ffi("scatter_vjp", (_like(data), _like(updates)), g, data, indices, updates,
                      **_scatter_attrs(spec, backward=True)))


def _scatter_bwd(spec, res, g):
    data, indices, updates = res
    gd, gu = _scatter_vjp(spec, g, data, indices, updates)
    return gd, _float0(indices), gu


_scatter_op.defvjp(_scatter_fwd, _scatter_bwd)


def _scatter_spec(op, o: ScatterOptions, ties, name):
    return _ScatterSpec(
        op, _int(o.axis, name, "axis"), _text(o.reduction, name, "reduction"),
        _flag(o.include_self, name, "include_self"),
        _text(o.negative_indices, name, "negative_indices"),
        _text(o.out_of_range, name, "out_of_range"), _text(o.accumulation, name, "accumulation"),
        _flag(o.updates_window, name, "updates_window"), _text(ties, name, "ties"),
        _threads(o.threads, name))


def _updates(updates, data, indices, op, axis, window, name):
    """``updates`` cast by NumPy's ``same_kind`` rule and broadcast to the shape the scatter
    needs, as the NumPy path takes them."""
    u = jnp.asarray(updates)
    if u.dtype != data.dtype:
        if not np.can_cast(u.dtype, data.dtype, "same_kind"):
            raise DTypeError(f"{name}: updates: dtype {u.dtype} cannot be cast to data's dtype "
                             f"{data.dtype} under NumPy's 'same_kind' rule (as ufunc.at)")
        u = u.astype(data.dtype)
    want = updates_shape(op, tuple(data.shape), tuple(indices.shape), int(axis))
    if want is not None and u.shape != want and not window:
        try:
            u = jnp.broadcast_to(u, want)
        except ValueError:
            pass  # the kernel names the shapes
    return u


def scatter(op, data, indices, updates, out, options: ScatterOptions, ties):
    """A scatter of traced JAX values."""
    name = SCATTER_NAMES[op]
    _no_out(out, name)
    _cpu(name)
    spec = _scatter_spec(op, options, ties, name)
    d = _array(data, name, "data")
    i = _array(indices, name, "indices", index=True)
    u = _updates(updates, d, i, op, spec.axis, spec.updates_window, name)
    return _scatter_op(spec, d, i, u)


def scatter_vjp(op, grad, data, indices, updates, o: ScatterVjpOptions):
    """A scatter's backward on traced values."""
    name = SCATTER_NAMES[op] + "_vjp"
    forward = ScatterOptions(o.axis, o.reduction, o.include_self, o.negative_indices,
                             o.out_of_range, "per_update", o.threads, o.updates_window)
    spec = _scatter_spec(op, forward, o.ties, name)
    _cpu(name)
    d, u = _array(data, name, "data"), _array(updates, name, "updates")
    g, i = _array(grad, name, "grad"), _array(indices, name, "indices", index=True)
    return _scatter_vjp(spec, g, d, i, u)


# --- the three gathers ----------------------------------------------------------------------
class _GatherSpec(NamedTuple):
    op: str
    axis: Any
    batch_dims: Any
    negative_indices: str
    out_of_range: str
    threads: Any
    fill: Any  # a _Fill, or None; an operand of the call, not an attribute


def _gather_attrs(spec: _GatherSpec):
    attrs = spec._asdict()
    del attrs["fill"]
    return attrs


def _gather_shape(spec: _GatherSpec, data, indices):
    return _native.gather_shape(spec.op, np.dtype(data.dtype).name, tuple(data.shape),
                                tuple(indices.shape), int(spec.axis), int(spec.batch_dims))


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def _gather_op(spec, data, indices):
    fill = spec.fill
    args = (data, indices) if fill is None else (data, indices, jnp.asarray(fill.val))
    return _ffi("gather", _like(data, _gather_shape(spec, data, indices)), *args,
                **_gather_attrs(spec))


def _gather_fwd(spec, data, indices):
    return _gather_op(spec, data, indices), (data, indices)


def _gather_vjp(spec, g, indices, shape):
    """``d data`` of a ``data`` of ``shape``: the backward handler."""
    return _ffi("gather_vjp", _like(g, shape), g, indices, **_gather_attrs(spec))


def _gather_bwd(spec, res, g):
    data, indices = res
    return _gather_vjp(spec, g, indices, data.shape), _float0(indices)


_gather_op.defvjp(_gather_fwd, _gather_bwd)


class _Fill:
    """A fill value as a static (hashable) one-element array."""

    def __init__(self, val):
        self.val = val

    def __hash__(self):
        return hash((self.val.dtype.str, self.val.tobytes()))

    def __eq__(self, other):
        return (isinstance(other, _Fill) and self.val.dtype == other.val.dtype
                and self.val.tobytes() == other.val.tobytes())


def gather(op, data, indices, out, o: GatherOptions):
    """A gather of traced JAX values."""
    name = GATHER_NAMES[op]
    _no_out(out, name)
    _cpu(name)
    d = _array(data, name, "data")
    i = _array(indices, name, "indices", index=True)
    fill = None
    if o.fill_value is not None:
        if o.out_of_range != "fill":
            raise ArgumentError(f"{name}: fill_value: {o.fill_value!r} is given, but "
                                f"out_of_range is not 'fill' (it would be unused)")
        dt = np.dtype(d.dtype)
        fill = _Fill(scalar(o.fill_value, Arr(np.empty(0, dt), dt.name, "numpy"), name))
    spec = _GatherSpec(op, _int(o.axis, name, "axis"), _int(o.batch_dims, name, "batch_dims"),
                       _text(o.negative_indices, name, "negative_indices"),
                       _text(o.out_of_range, name, "out_of_range"), _threads(o.threads, name),
                       fill)
    return _gather_op(spec, d, i)


def gather_vjp(op, grad, indices, data_shape, o: GatherVjpOptions):
    """A gather's backward on traced values."""
    name = GATHER_NAMES[op] + "_vjp"
    _cpu(name)
    g, i = _array(grad, name, "grad"), _array(indices, name, "indices", index=True)
    spec = _GatherSpec(op, _int(o.axis, name, "axis"), _int(o.batch_dims, name, "batch_dims"),
                       _text(o.negative_indices, name, "negative_indices"),
                       _text(o.out_of_range, name, "out_of_range"), _threads(o.threads, name),
                       None)
    shape = tuple(int(_int(n, name, "data_shape")) for n in data_shape)
    return _gather_vjp(spec, g, i, shape)


# --- the segment family ---------------------------------------------------------------------
class _SegmentSpec(NamedTuple):
    op: str  # "std_biased": scatter_std(unbiased=False)
    dim: Any
    dim_size: Any  # -1: none
    reduce: str
    want_arg: bool  # the positions too (not an attribute: the forward's second result)
    ties: str  # the backward's only
    threads: Any


def _segment_attrs(spec: _SegmentSpec, backward=False):
    attrs = spec._asdict()
    del attrs["want_arg"]
    if not backward:
        del attrs["ties"]
    return attrs


def _base(op):
    return "std" if op == "std_biased" else op


def _segment_result(spec: _SegmentSpec, src, index):
    shape = segment_shape(_base(spec.op), tuple(src.shape), tuple(index.shape), int(spec.dim),
                          None if spec.dim_size < 0 else int(spec.dim_size))
    values = _like(src, shape)
    return (values, _like(src, shape, _positions_dtype())) if spec.want_arg else values


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def _segment_op(spec, src, index):
    return _ffi("segment", _segment_result(spec, src, index), src, index, **_segment_attrs(spec))


def _segment_fwd(spec, src, index):
    return _segment_op(spec, src, index), (src, index)


def _segment_vjp(spec, g, src, index, shape):
    """``d src`` (of ``shape``): the backward handler, given ``(grad, index)`` for the gathers
    (``src`` is ``None``), ``(grad, src, index)`` for the others."""
    args = (g, index) if src is None else (g, src, index)
    return _ffi("segment_vjp", _like(g, shape), *args, **_segment_attrs(spec, backward=True))


def _segment_bwd(spec, res, g):
    src, index = res
    if spec.want_arg:
        g = g[0]  # the positions have no gradient
    if spec.op in ("gather_coo", "gather_csr"):  # src's extent along dim as dim_size
        spec = spec._replace(dim_size=np.int64(src.shape[index.ndim - 1]))
        return _segment_vjp(spec, g, None, index, src.shape), _float0(index)
    return _segment_vjp(spec, g, src, index, src.shape), _float0(index)


_segment_op.defvjp(_segment_fwd, _segment_bwd)


def _data_extent(op, index, name):
    """The result's extent the data decides (``index.max() + 1``; gather_csr's
    ``indptr[..., -1]``, which the kernel checks every row agrees on), read from a concrete
    index; under ``jax.jit`` the index is traced: an error naming what to pass instead."""
    if isinstance(index, jax.core.Tracer):
        if op == "gather_csr":
            raise ArgumentError(
                f"{name}: under jax.jit the result's length (indptr[-1], a value of the data) is "
                f"not static: use gather_coo with the expanded index, or call gather_csr outside "
                f"jit")
        raise ArgumentError(
            f"{name}: dim_size: required under jax.jit (the result's extent would be "
            f"index.max() + 1, a value of the data; XLA needs static shapes)")
    i = np.asarray(index)
    if op == "gather_csr":
        return int(i.reshape(-1, i.shape[-1])[0, -1]) if i.size else 0
    return int(i.max()) + 1 if i.size else 0


def segment(op, src, index, out, dim, dim_size, reduce, want_arg, unbiased, threads, ties):
    """A segment-family call on traced JAX values: ``(values, positions or None)``."""
    name = SEGMENT_NAMES[op]
    _no_out(out, name)
    _cpu(name)
    arg = "indptr" if op in ("csr", "gather_csr") else "index"
    s = _array(src, name, "src")
    i = _array(index, name, arg, index=True)
    if op == "std" and not _flag(unbiased, name, "unbiased"):
        op = "std_biased"
    if op == "gather_csr" or (dim_size is None and op in ("scatter", "coo", "logsumexp", "std",
                                                          "std_biased")):
        dim_size = _data_extent(op, index, name)  # as given: a NumPy index is concrete
    size = np.int64(-1) if dim_size is None else _int(dim_size, name, "dim_size")
    if dim_size is not None and size < 0:
        raise ArgumentError(f"{name}: dim_size: {dim_size!r} is not None or a count >= 0")
    spec = _SegmentSpec(op, _int(dim, name, "dim"), size, _text(reduce, name, "reduce"),
                        bool(want_arg), _text(ties, name, "ties"), _threads(threads, name))
    r = _segment_op(spec, s, i)
    return tuple(r) if want_arg else (r, None)


def segment_vjp(op, grad, src, index, out, dim, dim_size, reduce, ties, threads):
    """A segment-family backward on traced values: ``(d src, None)``."""
    base = _base(op)
    name = SEGMENT_NAMES[base] + "_vjp"
    _cpu(name)
    if out is not None:
        raise ArgumentError(f"{name}: out: not taken with JAX values (JAX has no out=)")
    g = _array(grad, name, "grad")
    i = _array(index, name, "indptr" if base in ("csr", "gather_csr") else "index", index=True)
    size = np.int64(-1) if dim_size is None else _int(dim_size, name, "dim_size")
    spec = _SegmentSpec(op, _int(dim, name, "dim"), size, _text(reduce, name, "reduce"), False,
                        _text(ties, name, "ties"), _threads(threads, name))
    if base in ("gather_coo", "gather_csr"):
        d = i.ndim - 1
        shape = list(g.shape)
        shape[d] = int(size) if base == "gather_coo" else max(i.shape[d] - 1, 0)
        return _segment_vjp(spec, g, None, i, shape), None
    s = _array(src, name, "src")
    return _segment_vjp(spec, g, s, i, s.shape), None
