"""PyTorch dispatcher operators: every operator of the package, and the backward passes they
use, as ``torch.ops.tensor_scatter.*``, so that ``torch.compile`` traces them into its graph
(no break), ``torch.export`` captures them, and autograd records them (eager mode too).

This module converts and registers, nothing else: each CPU kernel is the package's core call
(``_core``: the native half, else its general path; every check and rule is there), each fake
kernel computes shapes and dtypes only, and each backward is made of these operators, so it
traces and its own backward works where the maths is linear. A schema per family, an
operator per public name. Imported on first need (torch is optional), or with the package when
torch is imported first (a process that loads an exported program needs them registered).
"""

from __future__ import annotations

import operator

import torch
import torch.autograd.forward_ad as forward_ad

from . import _core
from ._core import GATHER_NAMES, SCATTER_NAMES, SEGMENT_NAMES
from ._arrays import compiling, receive
from ._errors import ArgumentTypeError

NS = "tensor_scatter"
_ops = torch.ops.tensor_scatter

_SCATTER = ("(Tensor data, Tensor indices, Tensor updates, int axis, str reduction, "
            "bool include_self, str negative_indices, str out_of_range, str accumulation, "
            "bool updates_window, str ties, int? threads) -> Tensor")
_SCATTER_VJP = ("(Tensor grad, Tensor data, Tensor indices, Tensor updates, int axis, "
                "str reduction, bool include_self, str negative_indices, str out_of_range, "
                "bool updates_window, str ties, int? threads) -> (Tensor, Tensor)")
_GATHER = ("(Tensor data, Tensor indices, int axis, int batch_dims, str negative_indices, "
           "str out_of_range, Scalar? fill_value, int? threads) -> Tensor")
_GATHER_VJP = ("(Tensor grad, Tensor indices, SymInt[] data_shape, int axis, int batch_dims, "
               "str negative_indices, str out_of_range, int? threads) -> Tensor")
# The segment family shares one argument list (an operator ignores what it does not take:
# segment_csr's dim_size, a gather's reduce); ``out`` is the starting values where they take
# part (scatter, segment_coo), never written: the result is a new tensor.
_SEGMENT_ARGS = ("(Tensor src, Tensor index, Tensor? out, int dim, SymInt? dim_size, str reduce, "
                 "bool unbiased, str ties, int? threads)")
_SEGMENT_VJP = ("(Tensor grad, Tensor? src, Tensor index, Tensor? out, int dim, SymInt? dim_size, "
                "str reduce, bool unbiased, str ties, int? threads) -> (Tensor, Tensor)")

_LINEAR = ("none", "add", "sum", "sub", "mean")
_WITH_ARG = ("scatter", "coo", "csr")  # the reductions that also give positions
_SECOND = ("tensor_scatter: the second derivative of a mul, min or max reduction or of a "
           "composite is not computed (its backward is differentiable once)")
_FORWARD = ("tensor_scatter: forward-mode AD (torch.func.jvp, jacfwd, hessian, "
            "torch.autograd.forward_ad) is implemented for the linear operators only (sums, "
            "means, none/sub scatters, gathers, and their backwards); reverse mode covers "
            "every operator (torch.autograd, torch.func.grad, vjp, jacrev)")
_lib = torch.library.Library(NS, "FRAGMENT")


def _register(name, schema, kernel, fake, backward, vmap=None):
    qualname = f"{NS}::{name}"
    _lib.define(name + schema)
    torch.library.impl(qualname, "CPU", lib=_lib)(kernel)
    torch.library.register_fake(qualname, fake, lib=_lib)
    op = getattr(_ops, name).default
    _lib.impl(name, _autograd_kernel(op, backward), "Autograd", with_keyset=True)
    torch.library.register_vmap(qualname, (vmap or _vmap_loop)(op), lib=_lib)
    _EAGER[name] = (kernel, backward)


# name -> (CPU kernel, backward): what an eager call runs without the dispatcher.
_EAGER = {}


def _call(name, *args):
    """The op ``name`` on ``args``. Through the dispatcher when torch must see it: Dynamo,
    export or jit.trace traces the call, a functorch transform or a dispatch mode is active, or a tensor
    is not a plain one (fake, functional, a subclass). Otherwise, in eager mode, its CPU
    kernel directly, recorded by autograd (the same ``_Recorded`` function the dispatcher's
    autograd kernel uses) when a tensor requires grad: the dispatcher's path through Python
    kernels costs about 40 us a call more."""
    if compiling():
        return getattr(_ops, name)(*args)
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    kernel, backward = _EAGER[name]
    differentiated = (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
                      or forward_ad._current_level >= 0)
    transformed = torch._C._are_functorch_transforms_active()
    if transformed and differentiated:
        # torch.func's grad, jacrev, jvp, vmap of them: functorch takes the autograd.Function
        # here, above the dispatcher, and runs its forward a level down, where the op is
        # dispatched again (its vmap rule for a batch). Inside the op's autograd kernel it
        # could not: functorch's layers are behind the call.
        return _Transformed.apply(getattr(_ops, name), backward, *args)
    if (transformed or torch._C._len_torch_dispatch_stack() > 0
            or any(type(t) is not torch.Tensor for t in tensors)):
        return getattr(_ops, name)(*args)
    if differentiated:
        return _Recorded.apply(kernel, backward, *args)
    return kernel(*args)


def _vmap_loop(op):
    """``torch.func.vmap`` of any op: one call per member of the batch, stacked (the same
    bits as calling it on each)."""
    def rule(info, in_dims, *args):
        # A list argument (gather_vjp's data_shape) has in_dims of its own, all None.
        results = [op(*[a.select(d, b) if isinstance(a, torch.Tensor) and d is not None else a
                        for a, d in zip(args, in_dims)])
                   for b in range(info.batch_size)]
        if isinstance(results[0], tuple):
            return tuple(torch.stack(r) for r in zip(*results)), (0,) * len(results[0])
        return torch.stack(results), 0
    return rule


def _segment_vmap(op):
    """The segment family's natural batch: ``src`` (and ``out``) batched over one shared
    ``index`` is one call with the batch as a new leading dim (the index gains a leading dim
    of 1, which broadcasts); a batched index takes the loop."""
    def vmap(opn):
        loop = _vmap_loop(opn)

        def rule(info, in_dims, src, index, out, dim, dim_size, reduce, unbiased, ties, threads):
            if in_dims[0] is None or in_dims[1] is not None:
                return loop(info, in_dims, src, index, out, dim, dim_size, reduce, unbiased,
                            ties, threads)
            src = src.movedim(in_dims[0], 0)
            if out is not None:
                out = (out.movedim(in_dims[2], 0) if in_dims[2] is not None
                       else out.expand(info.batch_size, *out.shape))
            by_dim = op in ("scatter", "softmax", "log_softmax", "logsumexp", "std")
            if not by_dim or index.dim() > 1:
                index = index.unsqueeze(0)
            if by_dim and dim >= 0:
                dim += 1
            r = opn(src, index, out, dim, dim_size, reduce, unbiased, ties, threads)
            return r, ((0, 0) if isinstance(r, tuple) else 0)
        return rule
    return vmap


class _Recorded(torch.autograd.Function):
    """One call of an op as autograd records it: ``run`` computes it below autograd (the
    op's CPU kernel, or a redispatch), the inputs are saved, and ``backward`` is the op's
    (its ``jvp`` attribute, where the op is linear, its forward-mode rule).
    What ``torch.library.register_autograd`` makes, without its per-call rebuilding of the
    schema's arguments (about 90 us a call with our 9 to 12; none has a default to fill)."""

    @staticmethod
    def forward(ctx, run, backward, *args):
        with torch._C._AutoDispatchBelowAutograd():
            result = run(*args)
        ctx.backward = backward
        _save(ctx, args, result)
        return result

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, *ctx.backward(ctx, *grads))

    @staticmethod
    def jvp(ctx, *tangents):
        rule = getattr(ctx.backward, "jvp", None)
        if rule is None:
            raise NotImplementedError(_FORWARD)
        return rule(ctx, *tangents[2:])


class _Transformed(_Recorded):
    """``_Recorded`` in the form functorch's transforms take (``torch.func.grad``, ``jacrev``,
    ``vmap`` of them): a forward without ``ctx``, ``setup_context``, a vmap rule made from
    the op's own. Only for those: ``apply`` then binds the arguments by signature, about
    55 us a call."""

    generate_vmap_rule = True

    @staticmethod
    def forward(run, backward, *args):
        with torch._C._AutoDispatchBelowAutograd():
            return run(*args)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.backward = inputs[1]
        _save(ctx, inputs[2:], output)


def _autograd_kernel(op, backward):
    """The op's ``Autograd`` dispatch kernel."""
    after = torch._C._after_autograd_keyset

    def kernel(keyset, *args):
        def run(*a):
            return op.redispatch(keyset & after, *a)
        if (torch.is_grad_enabled() and torch._C._any_requires_grad(*args)
                or forward_ad._current_level >= 0):
            return _Recorded.apply(run, backward, *args)
        with torch._C._AutoDispatchBelowAutograd():
            return run(*args)
    return kernel


def _save(ctx, inputs, output):
    """Every forward keeps its inputs, the tensors through ``save_for_backward`` (an input
    changed in place before the backward is then an error, never a wrong gradient)."""
    ctx.tensor_at = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor)]
    tensors = [inputs[i] for i in ctx.tensor_at]
    ctx.save_for_backward(*tensors)
    if forward_ad._current_level >= 0:  # a forward-mode rule (``_linear_jvp``) reads them
        ctx.save_for_forward(*tensors)
    ctx.options = [None if isinstance(x, torch.Tensor) else x for x in inputs]


def _linear_jvp(name, at, linear, unfill=None):
    """The forward-mode rule of op ``name`` where it is linear (``linear(args)``) in its float
    tensors at positions ``at``: the op itself on their tangents (zeros for an input without
    one; the argument at ``unfill``, a gather's fill value, made None: a filled cell's
    tangent is 0). Elsewhere it raises."""
    def jvp(ctx, *tangents):
        args = _inputs(ctx)
        if not linear(args):
            raise NotImplementedError(_FORWARD)
        for p in at:
            if args[p] is not None:
                args[p] = torch.zeros_like(args[p]) if tangents[p] is None else tangents[p]
        if unfill is not None:
            args[unfill] = None
        return _call(name, *args)
    return jvp


def _with_jvp(backward, jvp):
    """``backward`` carrying the op's forward-mode rule (``_Recorded.jvp`` looks it up)."""
    backward.jvp = jvp
    return backward


def _inputs(ctx):
    """The forward's inputs, as ``_save`` kept them."""
    xs = list(ctx.options)
    for i, t in zip(ctx.tensor_at, ctx.saved_tensors):
        xs[i] = t
    return xs


# --- the three scatters ---------------------------------------------------------------------

def _scatter_kernel(op):
    def kernel(data, indices, updates, axis, reduction, include_self, negative_indices,
               out_of_range, accumulation, updates_window, ties, threads):
        options = _core.ScatterOptions(axis, reduction, include_self, negative_indices,
                                       out_of_range, accumulation, threads, updates_window)
        return _core.scatter_raw(op, data.detach(), indices, updates.detach(), None, options)
    return kernel


def _scatter_fake(data, indices, updates, *options):
    return data.new_empty(data.shape)


def _scatter_backward(op):
    def backward(ctx, g):
        (data, indices, updates, axis, reduction, include_self, negative_indices, out_of_range,
         _accumulation, updates_window, ties, threads) = _inputs(ctx)
        gd, gu = _call(
            SCATTER_NAMES[op] + "_vjp", g, data, indices, updates, axis, reduction, include_self,
            negative_indices, out_of_range, updates_window, ties, threads)
        return gd, None, gu, None, None, None, None, None, None, None, None, None
    return backward


def _scatter_vjp_kernel(op):
    def kernel(grad, data, indices, updates, axis, reduction, include_self, negative_indices,
               out_of_range, updates_window, ties, threads):
        options = _core.ScatterVjpOptions(axis, reduction, include_self, negative_indices,
                                          out_of_range, ties, threads, updates_window)
        return _core.scatter_vjp_raw(op, grad.detach().contiguous(), data.detach(), indices,
                                     updates.detach(), options)
    return kernel


def _scatter_vjp_fake(grad, data, indices, updates, *options):
    return data.new_empty(data.shape), updates.new_empty(updates.shape)


def _scatter_vjp_backward(op):
    def backward(ctx, hd, hu):
        (_g, data, indices, updates, axis, reduction, include_self, negative_indices,
         out_of_range, updates_window, ties, threads) = _inputs(ctx)
        if reduction not in _LINEAR:
            raise RuntimeError(_SECOND)
        # Linear in the gradient: its transpose is the forward scatter of (hd, hu).
        hd = torch.zeros_like(data) if hd is None else hd
        hu = torch.zeros_like(updates) if hu is None else hu
        h = _call(SCATTER_NAMES[op], hd, indices, hu, axis, reduction, include_self,
                  negative_indices, out_of_range, "per_update", updates_window, ties, threads)
        return (h,) + (None,) * 11
    return backward


# --- the three gathers ----------------------------------------------------------------------

def _gather_kernel(op):
    def kernel(data, indices, axis, batch_dims, negative_indices, out_of_range, fill_value,
               threads):
        options = _core.GatherOptions(axis, batch_dims, negative_indices, out_of_range,
                                      fill_value, threads)
        return _core.gather_raw(op, data.detach(), indices, options)
    return kernel


def _gather_shape(op, data, indices, axis, batch_dims):
    d, i = list(data.shape), list(indices.shape)
    if op == "elements":
        return i
    if op == "nd":
        return i[:-1] + d[batch_dims + i[-1]:]
    a = axis + len(d) if axis < 0 else axis
    return d[:a] + i[batch_dims:] + d[a + 1:]


def _gather_fake(op):
    def fake(data, indices, axis, batch_dims, *options):
        return data.new_empty(_gather_shape(op, data, indices, axis, batch_dims))
    return fake


def _gather_backward(op):
    def backward(ctx, g):
        data, indices, axis, batch_dims, negative_indices, out_of_range, _fill, threads = _inputs(ctx)
        gd = _call(
            GATHER_NAMES[op] + "_vjp", g, indices, list(data.shape), axis, batch_dims,
            negative_indices, out_of_range, threads)
        return (gd,) + (None,) * 7
    return backward


def _gather_vjp_kernel(op):
    def kernel(grad, indices, data_shape, axis, batch_dims, negative_indices, out_of_range,
               threads):
        options = _core.GatherVjpOptions(axis, batch_dims, negative_indices, out_of_range, threads)
        return _core.gather_vjp_raw(op, grad.detach().contiguous(), indices, data_shape, options)
    return kernel


def _gather_vjp_fake(grad, indices, data_shape, *options):
    return grad.new_empty(data_shape)


def _gather_vjp_backward(op):
    def backward(ctx, h):
        _g, indices, _shape, axis, batch_dims, negative_indices, out_of_range, threads = _inputs(ctx)
        # The transpose of a sum into the cells read: the gather, a filled position reading 0.
        gh = _call(GATHER_NAMES[op], h, indices, axis, batch_dims, negative_indices,
                   out_of_range, None, threads)
        return (gh,) + (None,) * 7
    return backward


# --- the segment family ---------------------------------------------------------------------

def _segment_kernel(op, want_arg):
    def kernel(src, index, out, dim, dim_size, reduce, unbiased, ties, threads):
        o = None if out is None else out.detach().clone()
        r = _core.segment_raw(op, src.detach(), index, o,
                              _core.SegmentOptions(dim, dim_size, reduce, want_arg, unbiased, threads))
        return (r[0], r[1]) if want_arg else r[0]
    return kernel


def _segment_shape(op, src, index, out, dim, dim_size):
    """The result's shape (``_core.segment_shape``), an unbacked size where only the data says
    the reduced dim's extent."""
    shape = _core.segment_shape(op, list(src.shape), list(index.shape), dim, dim_size,
                                None if out is None else list(out.shape))
    return [torch.library.get_ctx().new_dynamic_size() if n is None else n for n in shape]


def _segment_fake(op, want_arg):
    def fake(src, index, out, dim, dim_size, reduce, unbiased, ties, threads):
        values = src.new_empty(_segment_shape(op, src, index, out, dim, dim_size))
        return (values, values.new_empty(values.shape, dtype=torch.int64)) if want_arg else values
    return fake


def _segment_backward(op):
    def backward(ctx, g, *_positions):
        src, index, out, dim, dim_size, reduce, unbiased, ties, threads = _inputs(ctx)
        if op == "gather_coo":  # the sum by index, then its gather: every order
            d = index.dim() - 1
            gs = _call("scatter", g, index, None, d, src.shape[d], "sum", True, "split", threads)
            return gs, None, None, None, None, None, None, None, None
        if op == "gather_csr":
            gs = _call("segment_csr", g, index, None, -1, None, "sum", True, "split", threads)
            return gs, None, None, None, None, None, None, None, None
        gs, go = _call(
            SEGMENT_NAMES[op] + "_vjp", g, src, index, out, dim, dim_size, reduce, unbiased, ties,
            threads)
        return gs, None, (None if out is None else go), None, None, None, None, None, None
    return backward


def _segment_vjp_kernel(op):
    def kernel(grad, src, index, out, dim, dim_size, reduce, unbiased, ties, threads):
        vop = "std_biased" if op == "std" and not unbiased else op
        s = None if src is None else src.detach()
        o = None if out is None else out.detach()
        gs, go = _core.segment_vjp_raw(vop, grad.detach().contiguous(), s, index, o,
                                       _core.SegmentVjpOptions(dim, dim_size, reduce, ties, threads))
        return gs, (grad.new_empty(0) if go is None else go)
    return kernel


def _segment_vjp_fake(op):
    def fake(grad, src, index, out, dim, dim_size, reduce, unbiased, ties, threads):
        if op in ("gather_coo", "gather_csr"):
            d = index.dim() - 1
            shape = list(grad.shape)
            shape[d] = dim_size if op == "gather_coo" else max(index.shape[d] - 1, 0)
            gs = grad.new_empty(shape)
        else:
            gs = src.new_empty(src.shape)
        return gs, (grad.new_empty(0) if out is None else out.new_empty(out.shape))
    return fake


def _segment_vjp_backward(op):
    def backward(ctx, hs, ho):
        grad, src, index, out, dim, dim_size, reduce, unbiased, ties, threads = _inputs(ctx)
        if op not in ("scatter", "coo", "csr") or reduce not in ("sum", "add", "mean"):
            raise RuntimeError(_SECOND)
        # A sum's or mean's backward is linear in grad: its transpose is the forward reduction
        # of (hs, ho), ho standing where out stood (its values do not enter the backward).
        hs = torch.zeros_like(src) if hs is None else hs
        h0 = None if out is None else (torch.zeros_like(out) if ho is None else ho)
        gg = _call(SEGMENT_NAMES[op], hs, index, h0, dim, dim_size, reduce, unbiased,
                                              ties, threads)
        return (gg,) + (None,) * 9
    return backward


def _register_all():
    # Forward mode where the op is linear: a scatter's reduction is argument 4 (5 for its
    # backward, which is linear in grad for those reductions), a segment op's reduce 5 (6).
    always = lambda args: True  # noqa: E731
    for op, name in SCATTER_NAMES.items():
        _register(name, _SCATTER, _scatter_kernel(op), _scatter_fake, _with_jvp(
            _scatter_backward(op), _linear_jvp(name, (0, 2), lambda a: a[4] in _LINEAR)))
        _register(name + "_vjp", _SCATTER_VJP, _scatter_vjp_kernel(op), _scatter_vjp_fake,
                  _with_jvp(_scatter_vjp_backward(op),
                            _linear_jvp(name + "_vjp", (0,), lambda a: a[5] in _LINEAR)))
    for op, name in GATHER_NAMES.items():
        _register(name, _GATHER, _gather_kernel(op), _gather_fake(op), _with_jvp(
            _gather_backward(op), _linear_jvp(name, (0,), always, unfill=6)))
        _register(name + "_vjp", _GATHER_VJP, _gather_vjp_kernel(op), _gather_vjp_fake,
                  _with_jvp(_gather_vjp_backward(op), _linear_jvp(name + "_vjp", (0,), always)))
    for op, name in SEGMENT_NAMES.items():
        if op in ("gather_coo", "gather_csr"):
            linear, vjp_linear = always, always
        elif op in _WITH_ARG:
            linear = lambda a: a[5] in ("sum", "add", "mean")  # noqa: E731
            vjp_linear = lambda a: a[6] in ("sum", "add", "mean")  # noqa: E731
        else:  # mul and the composites
            linear = vjp_linear = lambda a: False  # noqa: E731
        _register(name, _SEGMENT_ARGS + " -> Tensor", _segment_kernel(op, False),
                  _segment_fake(op, False),
                  _with_jvp(_segment_backward(op), _linear_jvp(name, (0, 2), linear)),
                  _segment_vmap(op))
        if op in _WITH_ARG:
            _register(name + "_arg", _SEGMENT_ARGS + " -> (Tensor, Tensor)",
                      _segment_kernel(op, True), _segment_fake(op, True), _segment_backward(op),
                      _segment_vmap(op))
        _register(name + "_vjp", _SEGMENT_VJP, _segment_vjp_kernel(op), _segment_vjp_fake(op),
                  _with_jvp(_segment_vjp_backward(op),
                            _linear_jvp(name + "_vjp", (0,), vjp_linear)))


_register_all()


# --- the calls the public functions make when traced or recorded ----------------------------

def _tensor(x):
    """An index or updates argument as a tensor (a list, a NumPy array, a Python scalar: the
    kernel then checks it as it checks a tensor)."""
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(x)


def _size(n, name):
    """A ``dim_size`` as the schema takes it: an int as given (a symbolic size stays
    symbolic: ``x.shape[0]`` traced with dynamic sizes; ``operator.index`` would specialise
    it), else what ``operator.index`` gives; never a bool."""
    if isinstance(n, bool):
        raise ArgumentTypeError(f"{name}: dim_size: {n!r} is not an integer")
    return n if n is None or isinstance(n, (int, torch.SymInt)) else operator.index(n)


def scatter(op, data, indices, updates, out, o: _core.ScatterOptions, ties):
    """A scatter through its operator."""
    r = _call(
        SCATTER_NAMES[op], data, _tensor(indices), _tensor(updates), operator.index(o.axis),
        o.reduction, o.include_self, o.negative_indices, o.out_of_range, o.accumulation,
        o.updates_window, ties, o.threads)
    return receive(out, r, SCATTER_NAMES[op])


def gather(op, data, indices, out, o: _core.GatherOptions):
    """A gather through its operator."""
    r = _call(
        GATHER_NAMES[op], data, _tensor(indices), operator.index(o.axis),
        operator.index(o.batch_dims), o.negative_indices, o.out_of_range, o.fill_value, o.threads)
    return receive(out, r, GATHER_NAMES[op])


def segment(op, src, index, out, dim, dim_size, reduce, want_arg, unbiased, threads, ties):
    """A segment-family call through its operator: ``(values, positions or None)``."""
    dim_size = _size(dim_size, SEGMENT_NAMES[op])
    name = SEGMENT_NAMES[op] + ("_arg" if want_arg else "")
    # out's starting values, apart from out itself, which receives the result after: the
    # backward reads them (a min or max cell that kept its value), and autograd passes the
    # gradient back to them through the clone.
    init = out.clone() if out is not None and op in _WITH_ARG else None
    r = _call(name, src, _tensor(index), init, operator.index(dim), dim_size,
                            reduce, unbiased, ties, threads)
    values, positions = r if want_arg else (r, None)
    return receive(out, values, SEGMENT_NAMES[op]), positions


def scatter_vjp(op, grad, data, indices, updates, o: _core.ScatterVjpOptions):
    """A scatter's backward through its operator."""
    return _call(
        SCATTER_NAMES[op] + "_vjp", grad, data, _tensor(indices), updates, operator.index(o.axis),
        o.reduction, o.include_self, o.negative_indices, o.out_of_range, o.updates_window,
        o.ties, o.threads)


def gather_vjp(op, grad, indices, shape, o: _core.GatherVjpOptions):
    """A gather's backward through its operator."""
    return _call(
        GATHER_NAMES[op] + "_vjp", grad, _tensor(indices), list(shape), operator.index(o.axis),
        operator.index(o.batch_dims), o.negative_indices, o.out_of_range, o.threads)


def segment_vjp(op, grad, src, index, out, dim, dim_size, reduce, ties, threads):
    """A segment-family backward through its operator: ``(d src, d out or None)``."""
    unbiased = op != "std_biased"
    op = "std" if op == "std_biased" else op
    dim_size = _size(dim_size, SEGMENT_NAMES[op] + "_vjp")
    gs, go = _call(
        SEGMENT_NAMES[op] + "_vjp", grad, src, _tensor(index), out, operator.index(dim), dim_size,
        reduce, unbiased, ties, threads)
    return gs, (None if out is None else go)
