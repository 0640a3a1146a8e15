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

import sys
from typing import Any, Optional, Tuple

from . import _native
from ._arrays import as_arr, done, index_arr, readable, receive, result
from ._core import GATHER_NAMES, SCATTER_NAMES, SEGMENT_NAMES, gather_raw, scatter_raw, segment_raw
from ._errors import ArgumentError

__all__ = [
    "scatter_vjp", "segment_coo_vjp", "segment_csr_vjp", "gather_coo_vjp", "gather_csr_vjp",
    "scatter_softmax_vjp", "scatter_log_softmax_vjp", "scatter_logsumexp_vjp", "scatter_std_vjp",
    "scatter_elements_vjp", "scatter_nd_vjp", "scatter_update_vjp", "gather_vjp",
    "gather_elements_vjp", "gather_nd_vjp",
]

_NAMES = {
    "scatter": "scatter_vjp", "coo": "segment_coo_vjp", "csr": "segment_csr_vjp",
    "gather_coo": "gather_coo_vjp", "gather_csr": "gather_csr_vjp",
    "softmax": "scatter_softmax_vjp", "log_softmax": "scatter_log_softmax_vjp",
    "logsumexp": "scatter_logsumexp_vjp", "std": "scatter_std_vjp", "std_biased": "scatter_std_vjp",
}


def _vjp(op, grad, src, index, out, dim, dim_size, reduce, ties, threads):
    """The native backward, through the general path when an argument needs preparing."""
    if not isinstance(reduce, str):
        raise ArgumentError(f"{_NAMES[op]}: reduce: {reduce!r} is not a string")
    if not isinstance(ties, str):
        raise ArgumentError(f"{_NAMES[op]}: ties: {ties!r} is not a string")
    options = (dim, dim_size, reduce, ties, threads)
    r = _native.segment_vjp(op, grad, src, index, out, *options)
    if r is not None:
        return r
    name = _NAMES[op]
    arg = "indptr" if op in ("csr", "gather_csr") else "index"
    g = readable(as_arr(grad, "grad", name), "grad", name)
    i = readable(index_arr(index, arg, name), arg, name)
    s = None if src is None else readable(as_arr(src, "src", name), "src", name)
    o = None if out is None else readable(as_arr(out, "out", name), "out", name)
    r = done(_native.segment_vjp(
        op, g.prepared(), None if s is None else s.prepared(), i.prepared(),
        None if o is None else o.prepared(), *options))
    return result(r[0], g), (None if r[1] is None else result(r[1], g))


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


# --- torch.autograd ---------------------------------------------------------------------

def needs_grad(*xs) -> bool:
    """Whether torch is recording and one of ``xs`` requires a gradient."""
    torch = sys.modules.get("torch")
    return (torch is not None and torch.is_grad_enabled()
            and any(isinstance(x, torch.Tensor) and x.requires_grad for x in xs))


_functions = None


def _once_differentiable(fn):
    """``torch.autograd.function.once_differentiable`` for the backwards that are not linear in
    the gradient (mul, min, max): their result depends on the saved inputs too, so it must
    refuse a second derivative also when only those require grad (torch's decorator looks at
    the gradient alone, and a gradient that does not require grad would silently drop the
    second derivative's terms). The refusal comes when that derivative is asked for."""
    import functools

    import torch

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with torch.no_grad():
            outputs = fn(ctx, *args)
        if not torch.is_grad_enabled():
            return outputs
        inputs = [a for a in args if isinstance(a, torch.Tensor)] + list(ctx.saved_tensors)
        if not any(t.requires_grad for t in inputs):
            return outputs
        from torch._C import _functions

        err = _functions.DelayedError(
            b"tensor_scatter: the second derivative of a mul, min or max reduction is not "
            b"computed (its backward is differentiable once)", len(outputs))

        def requiring_grad(v):
            if v is None:
                return None
            v = v.detach()
            v.requires_grad = True
            return v
        return err(*[requiring_grad(v) for v in outputs])
    return wrapper


def _make():
    """The autograd functions, made on first use (torch is optional)."""
    import torch

    class Reduce(torch.autograd.Function):
        """``scatter`` / ``segment_coo`` / ``segment_csr`` as a function of ``(src, out)``."""

        @staticmethod
        def forward(ctx, src, out, index, spec):
            op, dim, dim_size, reduce, want_arg, ties, threads = spec
            s = src.detach()
            o = None if out is None else out.detach().clone()
            ctx.spec, ctx.index, ctx.with_out = spec, index, out is not None
            if reduce in ("sum", "mean"):
                ctx.src = s  # its shape and dtype only
            else:
                # out's starting values, kept apart: `out=` then receives the result in place.
                ctx.save_for_backward(src)
                ctx.out_init = None if o is None else o.clone()
            res = segment_raw(op, s, index, o, (dim, dim_size, reduce, want_arg, True, threads))
            if want_arg:
                ctx.mark_non_differentiable(res[1])
                return res[0], res[1]
            return res[0]

        @staticmethod
        def backward(ctx, g, *_):
            op, dim, dim_size, reduce, _, ties, threads = ctx.spec
            if reduce in ("sum", "mean"):
                r = Linear.apply(g, ctx.src, ctx.index, ctx.with_out, ctx.spec)
                gs, go = r if ctx.with_out else (r, None)
            else:
                gs, go = _nonlinear_reduce(ctx, g)
            return gs, go, None, None

    @_once_differentiable
    def _nonlinear_reduce(ctx, g):
        op, dim, dim_size, reduce, _, ties, threads = ctx.spec
        (src,) = ctx.saved_tensors
        return _vjp(op, g.detach().contiguous(), src.detach(), ctx.index, ctx.out_init, dim,
                    dim_size, reduce, ties, threads)

    class Linear(torch.autograd.Function):
        """The backward of a sum or mean, ``g -> (d src, d out)``: linear in ``g``, so its
        own backward is the forward reduction again (every order of derivative)."""

        @staticmethod
        def forward(ctx, g, src, index, with_out, spec):
            op, dim, dim_size, reduce, _, ties, threads = spec
            out = None
            if with_out:  # the forward's out values do not enter a sum's or mean's backward
                out = torch.zeros_like(g)
            ctx.spec, ctx.index, ctx.with_out = spec, index, with_out
            gs, go = _vjp(op, g.detach().contiguous(), src, index, out, dim, dim_size, reduce,
                          ties, threads)
            return (gs, go) if with_out else gs

        @staticmethod
        def backward(ctx, hs, ho=None):
            op, dim, dim_size, reduce, _, ties, threads = ctx.spec
            spec = (op, dim, dim_size, reduce, False, ties, threads)
            out = (ho if ho is not None else torch.zeros_like(hs)) if ctx.with_out else None
            return Reduce.apply(hs, out, ctx.index, spec), None, None, None, None

    class Gather(torch.autograd.Function):
        """``gather_coo`` / ``gather_csr``; the backward is the segment sum."""

        @staticmethod
        def forward(ctx, src, index, spec):
            op, threads = spec
            ctx.spec, ctx.index, ctx.n = spec, index, src.shape[index.dim() - 1]
            return segment_raw(op, src.detach(), index, None,
                               (-1, None, "sum", False, True, threads))[0]

        @staticmethod
        def backward(ctx, g):
            op, threads = ctx.spec
            if op == "gather_coo":
                spec = ("scatter", ctx.index.dim() - 1, ctx.n, "sum", False, "split", threads)
            else:
                spec = ("csr", -1, None, "sum", False, "split", threads)
            return Reduce.apply(g, None, ctx.index, spec), None, None

    return Reduce, Gather


_composite_function = None


def composite_autograd(op, src, index, dim, dim_size, unbiased, threads):
    """A composite (softmax, log-softmax, logsumexp, std) recorded by torch.autograd
    (differentiable once)."""
    global _composite_function
    if _composite_function is None:
        import torch
        from torch.autograd.function import once_differentiable

        class Composite(torch.autograd.Function):
            @staticmethod
            def forward(ctx, src, index, spec):
                op, dim, dim_size, unbiased, threads = spec
                ctx.save_for_backward(src)
                ctx.index, ctx.spec = index, spec
                return segment_raw(op, src.detach(), index, None,
                                   (dim, dim_size, "sum", False, unbiased, threads))[0]

            @staticmethod
            @once_differentiable
            def backward(ctx, g):
                op, dim, dim_size, unbiased, threads = ctx.spec
                (src,) = ctx.saved_tensors
                vop = "std_biased" if op == "std" and not unbiased else op
                gs, _ = _vjp(vop, g.contiguous(), src, ctx.index, None, dim, dim_size, "sum",
                             "split", threads)
                return gs, None, None

        _composite_function = Composite
    return _composite_function.apply(src, index, (op, dim, dim_size, unbiased, threads))


def autograd_run(op, src, index, out, dim, dim_size, reduce, want_arg, ties, threads):
    """``_segment._run`` recorded by torch.autograd; ``out=`` receives the result in place
    (as torch's own in-place operations, an ``out`` that is a leaf requiring grad is an
    error)."""
    global _functions
    reduce = "sum" if reduce == "add" else reduce
    if _functions is None:
        _functions = _make()
    reduce_fn, gather_fn = _functions
    if op in ("gather_coo", "gather_csr"):
        return gather_fn.apply(src, index, (op, threads)), None
    spec = (op, dim, dim_size, reduce, want_arg, ties, threads)
    r = reduce_fn.apply(src, out, index, spec)
    values, arg = r if want_arg else (r, None)
    return receive(out, values, SEGMENT_NAMES[op]), arg


# --- the six operators ----------------------------------------------------------------------

_OP_NAMES = {"elements": "scatter_elements_vjp", "nd": "scatter_nd_vjp",
             "update": "scatter_update_vjp"}
_GATHER_NAMES = {"gather": "gather_vjp", "elements": "gather_elements_vjp", "nd": "gather_nd_vjp"}


def _scatter_vjp(op, grad, data, indices, updates, *options):
    """The native backward of one scatter, through the general path when needed."""
    name = _OP_NAMES[op]
    r = _native.scatter_vjp(op, grad, data, indices, updates, *options)
    if r is not None:
        return r
    g = readable(as_arr(grad, "grad", name), "grad", name)
    d = readable(as_arr(data, "data", name), "data", name)
    i = readable(index_arr(indices, "indices", name), "indices", name)
    u = readable(as_arr(updates, "updates", name), "updates", name)
    r = done(_native.scatter_vjp(op, g.prepared(), d.prepared(), i.prepared(), u.prepared(),
                                 *options))
    return result(r[0], g), result(r[1], g)


def _gather_vjp(op, grad, indices, data_shape, *options):
    """The native backward of one gather, through the general path when needed."""
    name = _GATHER_NAMES[op]
    shape = tuple(int(n) for n in data_shape)
    r = _native.gather_vjp(op, grad, indices, shape, *options)
    if r is not None:
        return r
    g = readable(as_arr(grad, "grad", name), "grad", name)
    i = readable(index_arr(indices, "indices", name), "indices", name)
    return result(done(_native.gather_vjp(op, g.prepared(), i.prepared(), shape, *options)), g)


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
    return _scatter_vjp("elements", grad, data, indices, updates, axis, reduction, include_self,
                        negative_indices, out_of_range, ties, threads, updates_window)


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
    return _scatter_vjp("nd", grad, data, indices, updates, 0, reduction, include_self,
                        negative_indices, out_of_range, ties, threads, False)


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
    return _scatter_vjp("update", grad, data, indices, updates, axis, reduction, include_self,
                        negative_indices, out_of_range, ties, threads, False)


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
    return _gather_vjp("gather", grad, indices, data_shape, axis, batch_dims, negative_indices,
                       out_of_range, threads)


def gather_elements_vjp(grad, indices, data_shape, *, axis: int = 0,
                        negative_indices: str = "wrap", out_of_range: str = "error",
                        threads: Optional[int] = None):
    """The gradient of :func:`gather_elements` (see :func:`gather_vjp`).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.gather_elements_vjp(np.array([[1.0, 2.0]]), np.array([[1, 1]]), (1, 2), axis=1)
    array([[0., 3.]])
    """
    return _gather_vjp("elements", grad, indices, data_shape, axis, 0, negative_indices,
                       out_of_range, threads)


def gather_nd_vjp(grad, indices, data_shape, *, batch_dims: int = 0,
                  negative_indices: str = "wrap", out_of_range: str = "error",
                  threads: Optional[int] = None):
    """The gradient of :func:`gather_nd` (see :func:`gather_vjp`).

    >>> import numpy as np, tensor_scatter as ts
    >>> ts.gather_nd_vjp(np.array([1.0, 2.0]), np.array([[1, 0], [1, 0]]), (2, 2))
    array([[0., 0.],
           [3., 0.]])
    """
    return _gather_vjp("nd", grad, indices, data_shape, 0, batch_dims, negative_indices,
                       out_of_range, threads)


_LINEAR = ("none", "add", "sum", "sub", "mean")
_op_functions = None


def _make_ops():
    """The autograd functions of the six operators, made on first use."""
    import torch

    def _vjp_options(spec):
        (axis, reduction, include_self, negative_indices, out_of_range, _accumulation, threads,
         updates_window, ties) = spec
        return (axis, reduction, include_self, negative_indices, out_of_range, ties, threads,
                updates_window)

    class Scatter(torch.autograd.Function):
        """A scatter as a function of ``(data, updates)``."""

        @staticmethod
        def forward(ctx, data, updates, indices, op, spec):
            d, u = data.detach(), updates.detach()
            ctx.op, ctx.spec, ctx.indices = op, spec, indices
            if spec[1] in _LINEAR:
                ctx.d, ctx.u = d, u  # shapes and dtypes only: the backward is linear
            else:
                ctx.save_for_backward(data, updates)
            return scatter_raw(op, d, indices, u, None, spec[:-1])

        @staticmethod
        def backward(ctx, g):
            if ctx.spec[1] in _LINEAR:
                gd, gu = ScatterLinear.apply(g, ctx.d, ctx.u, ctx.indices, ctx.op, ctx.spec)
            else:
                gd, gu = _nonlinear(ctx, g)
            return gd, gu, None, None, None

    @_once_differentiable
    def _nonlinear(ctx, g):
        data, updates = ctx.saved_tensors
        return _scatter_vjp(ctx.op, g.detach().contiguous(), data.detach(), ctx.indices,
                            updates.detach(), *_vjp_options(ctx.spec))

    class ScatterLinear(torch.autograd.Function):
        """The backward of none / add / sub / mean, ``g -> (d data, d updates)``: linear in
        ``g``; its transpose is the forward scatter itself, so every order works."""

        @staticmethod
        def forward(ctx, g, d, u, indices, op, spec):
            ctx.op, ctx.spec, ctx.indices = op, spec, indices
            return _scatter_vjp(op, g.detach().contiguous(), d, indices, u, *_vjp_options(spec))

        @staticmethod
        def backward(ctx, hd, hu):
            return Scatter.apply(hd, hu, ctx.indices, ctx.op, ctx.spec), None, None, None, None, None

    class Gather(torch.autograd.Function):
        """A gather as a function of ``data``; the fill value is a constant."""

        @staticmethod
        def forward(ctx, data, indices, op, spec):
            ctx.op, ctx.spec, ctx.indices, ctx.shape = op, spec, indices, tuple(data.shape)
            return gather_raw(op, data.detach(), indices, spec)

        @staticmethod
        def backward(ctx, g):
            return GatherLinear.apply(g, ctx.indices, ctx.shape, ctx.op, ctx.spec), None, None, None

    class GatherLinear(torch.autograd.Function):
        """The backward of a gather (a scatter-add); its transpose is the gather with a zero
        fill value."""

        @staticmethod
        def forward(ctx, g, indices, shape, op, spec):
            ctx.op, ctx.spec, ctx.indices = op, spec, indices
            axis, batch_dims, negative_indices, out_of_range, _fill, threads = spec
            return _gather_vjp(op, g.detach().contiguous(), indices, shape, axis, batch_dims,
                               negative_indices, out_of_range, threads)

        @staticmethod
        def backward(ctx, h):
            spec = ctx.spec[:4] + (None,) + ctx.spec[5:]  # the fill value is a constant
            return Gather.apply(h, ctx.indices, ctx.op, spec), None, None, None, None

    return Scatter, Gather


def _functions_of_ops():
    global _op_functions
    if _op_functions is None:
        _op_functions = _make_ops()
    return _op_functions


def scatter_autograd(op, data, indices, updates, out, spec):
    """A scatter recorded by torch.autograd; ``out=`` receives the result in place (as torch's
    own in-place operations)."""
    scatter_fn, _ = _functions_of_ops()
    return receive(out, scatter_fn.apply(data, updates, indices, op, spec), SCATTER_NAMES[op])


def gather_autograd(op, data, indices, out, spec):
    """A gather recorded by torch.autograd; ``out=`` receives the result."""
    _, gather_fn = _functions_of_ops()
    return receive(out, gather_fn.apply(data, indices, op, spec), GATHER_NAMES[op])
