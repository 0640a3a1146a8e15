"""Backward passes of the graph-learning family: the vector-Jacobian products as plain
functions (NumPy arrays, torch tensors), and ``torch.autograd`` support for ``scatter``,
``segment_coo``, ``segment_csr`` and the two gathers.

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
from ._arrays import as_arr, done, index_arr, readable, result
from ._errors import ArgumentError

__all__ = [
    "scatter_vjp", "segment_coo_vjp", "segment_csr_vjp", "gather_coo_vjp", "gather_csr_vjp",
]

_NAMES = {
    "scatter": "scatter_vjp", "coo": "segment_coo_vjp", "csr": "segment_csr_vjp",
    "gather_coo": "gather_coo_vjp", "gather_csr": "gather_csr_vjp",
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


# --- torch.autograd ---------------------------------------------------------------------

def needs_grad(*xs) -> bool:
    """Whether torch is recording and one of ``xs`` requires a gradient."""
    torch = sys.modules.get("torch")
    return (torch is not None and torch.is_grad_enabled()
            and any(isinstance(x, torch.Tensor) and x.requires_grad for x in xs))


_functions = None


def _make():
    """The autograd functions, made on first use (torch is optional)."""
    import torch

    from . import _segment

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
            res = _segment._run(op, s, index, o, dim, dim_size, reduce, want_arg,
                                threads=threads)
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
                (src,) = ctx.saved_tensors
                gs, go = _vjp(op, g.detach().contiguous(), src.detach(), ctx.index,
                              ctx.out_init, dim, dim_size, reduce, ties, threads)
            return gs, go, None, None

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
            return _segment._run(op, src.detach(), index, None, -1, None, "sum",
                                 threads=threads)[0]

        @staticmethod
        def backward(ctx, g):
            op, threads = ctx.spec
            if op == "gather_coo":
                spec = ("scatter", ctx.index.dim() - 1, ctx.n, "sum", False, "split", threads)
            else:
                spec = ("csr", -1, None, "sum", False, "split", threads)
            return Reduce.apply(g, None, ctx.index, spec), None, None

    return Reduce, Gather


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
    if out is not None:
        out.copy_(values)
        values = out
    return values, arg
