"""PyTorch 2: every operator as a dispatcher op (opcheck), traced by torch.compile with no graph
break and the same bits as eager mode (forward and backward), exported and loaded in a fresh
process, and run under torch's deterministic mode."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensor_scatter as ts  # noqa: E402
from tensor_scatter import _torch_ops  # noqa: E402,F401  (registers the ops)
from tensor_scatter._core import GATHER_NAMES, SCATTER_NAMES, SEGMENT_NAMES  # noqa: E402

OPS = torch.ops.tensor_scatter
F64 = torch.float64


def _views(t):
    """``t`` as given, and as a non-contiguous view of the same values."""
    wide = torch.zeros(t.shape + (2,), dtype=t.dtype)
    wide[..., 1] = t.detach()
    view = wide[..., 1]
    assert t.numel() < 2 or not view.is_contiguous()
    return [t, view.requires_grad_(t.requires_grad)]


def _scatter_samples():
    g = torch.Generator().manual_seed(1)
    data = torch.randn(5, 3, dtype=F64, generator=g).requires_grad_()
    upd = torch.randn(4, 3, dtype=F64, generator=g).requires_grad_()
    # Each reduction once, with int64 and int32 indices and contiguous and strided inputs in
    # turn.
    for k, reduction in enumerate(("none", "add", "mean", "mul", "max", "sub")):
        idt = (torch.int64, torch.int32)[k % 2]
        d, u = _views(data)[k // 2 % 2], _views(upd)[k // 2 % 2]
        i = torch.tensor([[0, 1, 2], [4, 4, 0], [1, 2, 3], [0, 0, 0]], dtype=idt)
        yield "scatter_elements", (d, i, u, 0, reduction)
        yield "scatter_update", (d, torch.tensor([4, 0, 4, 2], dtype=idt), u, 0, reduction)
        yield "scatter_nd", (d, torch.tensor([[4], [0], [4], [2]], dtype=idt), u, 0, reduction)
    empty = torch.zeros(0, 3, dtype=F64)
    yield "scatter_update", (torch.randn(4, 3, dtype=F64, requires_grad=True),
                             torch.zeros(0, dtype=torch.int64), empty.requires_grad_(), 0, "add")


def _gather_samples():
    data = torch.randn(5, 3, dtype=F64, requires_grad=True)
    for idt, d in zip((torch.int64, torch.int32), _views(data)):
        yield "gather", (d, torch.tensor([4, -1, 2], dtype=idt), 0, 0, "wrap", "error", None)
        yield "gather", (d, torch.tensor([4, 9], dtype=idt), 0, 0, "wrap", "fill", 2.5)
        yield "gather_elements", (d, torch.tensor([[1, 0, 2]], dtype=idt), 1, 0, "wrap", "clamp",
                                  None)
        yield "gather_nd", (d, torch.tensor([[4, 2], [0, 1]], dtype=idt), 0, 0, "error", "error",
                            None)
    yield "gather", (data, torch.zeros(0, dtype=torch.int64), 0, 0, "wrap", "error", None)


def _segment_samples():
    g = torch.Generator().manual_seed(2)
    src = torch.randn(6, 2, dtype=F64, generator=g, requires_grad=True)
    out = torch.randn(4, 2, dtype=F64, generator=g, requires_grad=True)
    for idt, s in zip((torch.int64, torch.int32), _views(src)):
        index = torch.tensor([0, 0, 1, 3, 3, 3], dtype=idt)
        indptr = torch.tensor([0, 2, 3, 3, 6], dtype=idt)
        for reduce in ("sum", "mean", "max", "mul"):
            yield "scatter", (s, index, None, 0, 4, reduce)
            yield "scatter", (s, index, out, 0, None, reduce)
            yield "segment_csr", (s.t(), indptr.view(1, -1), None, -1, None, reduce)
        yield "scatter", (s, index, None, 0, None, "sum")  # dim_size from the data
        yield "segment_coo", (s.t(), index.view(1, -1), None, -1, 5, "mean")
        yield "scatter_arg", (s, index, None, 0, 4, "min")
        yield "segment_coo_arg", (s.t(), index.view(1, -1), None, -1, None, "max")
        yield "segment_csr_arg", (s.t(), indptr.view(1, -1), None, -1, None, "max")
        yield "gather_coo", (out.t(), index.view(1, -1), None, -1, None, "sum")
        yield "gather_csr", (out.t(), indptr.view(1, -1), None, -1, None, "sum")
        for name in ("scatter_softmax", "scatter_log_softmax", "scatter_logsumexp", "scatter_std"):
            yield name, (s, index, None, 0, None, "sum")
    empty = torch.zeros(0, 2, dtype=F64, requires_grad=True)
    yield "scatter", (empty, torch.zeros(0, dtype=torch.int64), None, 0, 3, "sum")
    yield "segment_csr", (empty.t(), torch.zeros(1, 1, dtype=torch.int64), None, -1, None, "sum")


def _full(name, args):
    """The op's whole argument list: the defaults the public functions pass after ``args``."""
    if name.startswith("scatter_") and name.split("_")[1] in ("elements", "nd", "update"):
        return args + (True, "wrap", "error", "per_update", False, "split", None)
    if name.startswith("gather") and name not in ("gather_coo", "gather_csr"):
        return args + (None,)
    return args + (True, "split", None)


SAMPLES = list(_scatter_samples()) + list(_gather_samples()) + list(_segment_samples())


def test_opcheck_every_op():
    """Schema, fake kernel, autograd registration and eager-vs-compiled dispatch, over samples
    with empty inputs, non-contiguous views, int32 and int64 indices and inputs requiring
    grad; every forward operator is covered."""
    seen = set()
    for name, args in SAMPLES:
        torch.library.opcheck(getattr(OPS, name), _full(name, args))
        seen.add(name)
    names = [*SCATTER_NAMES.values(), *GATHER_NAMES.values(), *SEGMENT_NAMES.values()]
    forward = set(names) | {n + "_arg" for n in ("scatter", "segment_coo", "segment_csr")}
    assert forward == seen, forward ^ seen


def test_opcheck_backward_ops():
    """The backward operators, with a gradient that requires grad (their own backward)."""
    for name, args in SAMPLES[::3]:
        op = getattr(OPS, name)
        full = _full(name, args)
        out = op(*full)
        out = out[0] if isinstance(out, tuple) else out
        vjp = getattr(OPS, name.removesuffix("_arg") + "_vjp")
        grad = torch.randn(out.shape, dtype=out.dtype).requires_grad_()
        if name.startswith("gather") and name not in ("gather_coo", "gather_csr"):
            data, index = full[0], full[1]
            vargs = (grad, index, list(data.shape)) + full[2:6] + (None,)
        elif name.startswith("scatter_") and name.split("_")[1] in ("elements", "nd", "update"):
            data, index, upd = full[0], full[1], full[2]
            vargs = (grad, data, index, upd) + full[3:8] + (False, "split", None)
        else:
            src, index, o, dim, dim_size, reduce = full[:6]
            vargs = (grad, src, index, o, dim, dim_size, reduce, True, "split", None)
            if name in ("gather_coo", "gather_csr"):
                d = index.dim() - 1
                vargs = (grad, None, index, None, d, src.shape[d], "sum", True, "split", None)
        torch.library.opcheck(vjp, vargs, test_utils=("test_schema", "test_faketensor"))


# --- torch.compile: the public functions, traced --------------------------------------------

def _calls():
    """One call of every public operator: ``(name, f(x, y) -> tensor or tuple)``, x and y
    float64 leaves of shapes (6, 2) and (4, 2)."""
    i6 = torch.tensor([0, 0, 1, 3, 3, 3])
    ptr = torch.tensor([0, 2, 3, 3, 6])
    i4 = torch.tensor([[1, 0], [5, 5], [2, 2], [0, 5]])
    return [
        ("scatter_elements", lambda x, y: ts.scatter_elements(x, i4, y, reduction="max")),
        ("scatter_nd", lambda x, y: ts.scatter_nd(x, i4[:, :1], y, reduction="add")),
        ("scatter_update", lambda x, y: ts.scatter_update(x, i4[:, 0], y, reduction="mean")),
        ("gather", lambda x, y: ts.gather(x, i4[:, 0], axis=0)),
        ("gather_elements", lambda x, y: ts.gather_elements(x, i4, axis=0)),
        ("gather_nd", lambda x, y: ts.gather_nd(x, i4[:, :1], out_of_range="fill",
                                                fill_value=0.5)),
        ("scatter", lambda x, y: ts.scatter(x, i6, 0, dim_size=4, reduce="mean")),
        ("scatter out=", lambda x, y: ts.scatter(x, i6, 0, out=y * 1, reduce="max")),
        ("scatter_max", lambda x, y: ts.scatter_max(x, i6, 0, dim_size=4)),
        ("scatter_mul", lambda x, y: ts.scatter_mul(x, i6, 0)),
        ("segment_coo", lambda x, y: ts.segment_coo(x.t(), i6.view(1, -1), reduce="sum")),
        ("segment_min_coo", lambda x, y: ts.segment_min_coo(x.t(), i6.view(1, -1))),
        ("segment_csr", lambda x, y: ts.segment_csr(x.t(), ptr.view(1, -1), reduce="mean")),
        ("segment_max_csr", lambda x, y: ts.segment_max_csr(x.t(), ptr.view(1, -1))),
        ("gather_coo", lambda x, y: ts.gather_coo(y.t(), i6.view(1, -1))),
        ("gather_csr", lambda x, y: ts.gather_csr(y.t(), ptr.view(1, -1))),
        ("scatter_softmax", lambda x, y: ts.scatter_softmax(x, i6, 0)),
        ("scatter_log_softmax", lambda x, y: ts.scatter_log_softmax(x, i6, 0)),
        ("scatter_logsumexp", lambda x, y: ts.scatter_logsumexp(x, i6, 0, dim_size=4)),
        ("scatter_std", lambda x, y: ts.scatter_std(x, i6, 0, out=torch.zeros_like(y))),
        ("scatter_vjp", lambda x, y: ts.scatter_vjp(y, x, i6, 0, reduce="mean")[0]),
        ("scatter_elements_vjp", lambda x, y: ts.scatter_elements_vjp(
            x, x, i4, y, reduction="add")[1]),
        ("gather_vjp", lambda x, y: ts.gather_vjp(y, i4[:, 0], (6, 2))),
    ]


def _run(f, x, y):
    """``f``'s result and the gradients of a weighted sum of it, as one flat tuple."""
    r = f(x, y)
    r = r if isinstance(r, tuple) else (r,)
    loss = sum((t * torch.arange(t.numel(), dtype=t.dtype).view(t.shape)).sum()
               for t in r if t.is_floating_point())
    grads = torch.autograd.grad(loss, (x, y), allow_unused=True)
    return tuple(t.detach() for t in r) + tuple(g for g in grads if g is not None)


@pytest.mark.parametrize("name,f", _calls(), ids=[c[0] for c in _calls()])
def test_compiled_forward_and_backward_are_eager_bits(name, f):
    torch._dynamo.reset()
    x = torch.randn(6, 2, dtype=F64, generator=torch.Generator().manual_seed(3))
    y = torch.randn(4, 2, dtype=F64, generator=torch.Generator().manual_seed(4))
    x[1] = x[0]  # a tie for min and max
    want = _run(f, x.clone().requires_grad_(), y.clone().requires_grad_())
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    got = _run(compiled, x.clone().requires_grad_(), y.clone().requires_grad_())
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), name


# --- a two-layer GNN: compile, dynamic sizes, export ----------------------------------------

class GNN(torch.nn.Module):
    """Mean aggregation, then attention weights by ``scatter_softmax`` and a weighted sum."""

    def __init__(self, f=8):
        super().__init__()
        torch.manual_seed(0)
        self.lin1 = torch.nn.Linear(f, f, dtype=F64)
        self.att = torch.nn.Linear(2 * f, 1, dtype=F64)
        self.lin2 = torch.nn.Linear(f, f, dtype=F64)

    def forward(self, x, src, dst):
        n = x.shape[0]
        h = ts.scatter(ts.gather(self.lin1(x), src), dst, 0, dim_size=n, reduce="mean").relu()
        e = self.att(torch.cat([ts.gather(h, src), ts.gather(h, dst)], -1)).squeeze(-1)
        a = ts.scatter_softmax(e, dst, 0, dim_size=n)
        return ts.scatter(a.unsqueeze(-1) * ts.gather(self.lin2(h), src), dst, 0, dim_size=n)


def _graph(e, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 8, dtype=F64, generator=g)
    return x, torch.randint(0, n, (e,), generator=g), torch.randint(0, n, (e,), generator=g)


def _train_bits(model, x, src, dst):
    out = model(x, src, dst)
    grads = torch.autograd.grad(out.pow(2).sum(), list(model.parameters()))
    return [out.detach(), *grads]


def test_gnn_compiles_without_graph_break_and_matches_eager():
    torch._dynamo.reset()
    model = GNN()
    graph = _graph(40, 12)
    explained = torch._dynamo.explain(model)(*graph)
    assert explained.graph_break_count == 0, explained.break_reasons
    assert explained.graph_count == 1
    want = _train_bits(model, *graph)
    got = _train_bits(torch.compile(model, fullgraph=True, backend="aot_eager"), *graph)
    assert all(torch.equal(a, b) for a, b in zip(got, want))


def test_gnn_with_five_sizes_compiles_at_most_twice():
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")
    model = GNN()
    compiled = torch.compile(model, fullgraph=True, backend=counter)
    for k, (e, n) in enumerate([(40, 12), (57, 20), (90, 31), (33, 9), (120, 44)]):
        graph = _graph(e, n, seed=k)
        got = _train_bits(compiled, *graph)
        want = _train_bits(model, *graph)
        assert all(torch.equal(a, b) for a, b in zip(got, want))
    assert counter.frame_count <= 2, counter.frame_count


def test_inductor_forward_and_backward_are_eager_bits():
    """The default backend (the one case here that pays inductor's compile time): our
    operators are opaque calls in its graph, so they give eager mode's bits, forward and
    backward."""
    torch._dynamo.reset()
    i = torch.tensor([0, 2, 2, 1, 0])

    def f(s):
        m = ts.scatter(s, i, 0, reduce="mean")
        return ts.scatter_max(s, i, 0)[0] + m, ts.scatter_softmax(s, i, 0), ts.gather(m, i)

    s = torch.randn(5, 3, dtype=F64)
    unused = torch.zeros(1, requires_grad=True)
    want = _run(lambda x, y: f(x), s.clone().requires_grad_(), unused)
    got = _run(torch.compile(lambda x, y: f(x), fullgraph=True), s.clone().requires_grad_(), unused)
    assert len(got) == len(want) == 4
    assert all(torch.equal(a, b) for a, b in zip(got, want))


def test_gnn_exports_and_loads_in_a_fresh_process(tmp_path):
    model = GNN()
    graph = _graph(40, 12)
    ep = torch.export.export(model, graph)
    path = tmp_path / "gnn.pt2"
    torch.export.save(ep, str(path))
    torch.save(list(graph), str(tmp_path / "inputs.pt"))
    code = (
        "import sys, torch, tensor_scatter\n"
        "ep = torch.export.load(sys.argv[1])\n"
        "inputs = torch.load(sys.argv[2])\n"
        "torch.save(ep.module()(*inputs), sys.argv[3])\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path), str(tmp_path / "inputs.pt"),
                    str(tmp_path / "out.pt")], check=True)
    assert torch.equal(torch.load(str(tmp_path / "out.pt")), model(*graph))


def test_deterministic_mode_runs_every_operator_without_a_warning():
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            x = torch.randn(6, 2, dtype=F64)
            y = torch.randn(4, 2, dtype=F64)
            for name, f in _calls():
                _run(f, x.clone().requires_grad_(), y.clone().requires_grad_())
            _train_bits(GNN(), *_graph(40, 12))
    finally:
        torch.use_deterministic_algorithms(was)


def test_errors_through_the_ops_are_the_packages():
    """A call autograd records runs through the ops: its errors are the same values."""
    s = torch.randn(4, 2, dtype=F64, requires_grad=True)
    with pytest.raises(ts.OutOfRangeError, match="index"):
        ts.scatter(s, torch.tensor([0, 1, 9, 2]), 0, dim_size=3)
    with pytest.raises(ts.ArgumentTypeError, match="dim_size"):
        ts.scatter(s, torch.tensor([0, 1, 1, 2]), 0, dim_size=True)
    with pytest.raises(ts.OutOfRangeError):
        ts.scatter_elements(s, torch.tensor([[0, 7]]), s[:1], axis=0)
    with pytest.raises(ts.ArgumentError, match="out: shape"):
        ts.scatter(s, torch.tensor([0, 1, 1, 2]), 0, out=torch.zeros(5, 3, dtype=F64))


def test_vmap_of_every_family_is_the_stack_of_its_calls():
    """torch.func.vmap: the segment family's natural batch (src batched over one index) and
    the loop every other op takes give the bits of calling each member alone."""
    batch = torch.randn(3, 6, 2, dtype=F64, generator=torch.Generator().manual_seed(5))
    i = torch.tensor([0, 0, 1, 3, 3, 3])
    ptr = torch.tensor([0, 2, 3, 3, 6])
    calls = [
        lambda s: ts.scatter(s, i, 0, dim_size=4, reduce="mean"),
        lambda s: ts.scatter(s, i, -2, dim_size=4, reduce="max"),
        # out's starting values, shared by the batch (the op itself: a public out= would be
        # written in place, which vmap refuses for an unbatched tensor, as for torch's own).
        lambda s: OPS.scatter(s, i, torch.ones(4, 2, dtype=F64), 0, None, "max", True, "split",
                              None),
        lambda s: ts.scatter_max(s, i, 0, dim_size=4),
        lambda s: ts.scatter_softmax(s, i, 0),
        lambda s: ts.scatter_std(s, i, 0, dim_size=4),
        lambda s: ts.segment_csr(s.t(), ptr.view(1, -1), reduce="min"),
        lambda s: ts.segment_coo(s.t(), i.view(1, -1), dim_size=4),
        lambda s: ts.gather_coo(s[:4].t(), i.view(1, -1)),
        lambda s: ts.scatter_elements(s, i.view(-1, 1).expand(6, 2), s, reduction="add"),
        lambda s: ts.scatter_update(s[:4], i[:3], s[:3], reduction="max"),
        lambda s: ts.gather(s, i),
        lambda s: ts.gather_nd(s, i.view(-1, 1)),
        lambda s: ts.scatter_vjp(s[:4], s, i, 0, reduce="mean")[0],
    ]
    for k, f in enumerate(calls):
        got = torch.func.vmap(f)(batch)
        want = [f(b) for b in batch]
        if isinstance(got, tuple):
            assert all(torch.equal(g, torch.stack(w)) for g, w in zip(got, zip(*want))), k
        else:
            assert torch.equal(got, torch.stack(want)), k
    # A batched index takes the loop.
    idx = torch.stack([i, i.flip(0), i.roll(1)])
    got = torch.func.vmap(lambda s, j: ts.scatter(s, j, 0, dim_size=4))(batch, idx)
    want = torch.stack([ts.scatter(s, j, 0, dim_size=4) for s, j in zip(batch, idx)])
    assert torch.equal(got, want)


@pytest.mark.parametrize("name,f", _calls(), ids=[c[0] for c in _calls()])
def test_torch_func_grad_is_autograd_bits(name, f):
    """torch.func.grad (functorch's transform, not autograd's tape) of every operator gives
    the bits of loss.backward(); vmap of it (per-sample gradients) the stack of its calls."""
    x = torch.randn(6, 2, dtype=F64, generator=torch.Generator().manual_seed(3))
    y = torch.randn(4, 2, dtype=F64, generator=torch.Generator().manual_seed(4))
    x[1] = x[0]  # a tie for min and max

    def loss(x, y):
        r = f(x, y)
        r = r if isinstance(r, tuple) else (r,)
        return sum((t * torch.arange(t.numel(), dtype=t.dtype).view(t.shape)).sum()
                   for t in r if t.is_floating_point())

    xl, yl = x.clone().requires_grad_(), y.clone().requires_grad_()
    want = torch.autograd.grad(loss(xl, yl), (xl, yl), allow_unused=True)
    got = torch.func.grad(loss, argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        assert torch.equal(g, torch.zeros_like(g) if w is None else w), name
    # Both batched: an out= made from y must be batched too (vmap refuses to write a batch
    # into an unbatched tensor, for torch's own in-place ops as for ours).
    xs, ys = torch.stack([x, x.flip(0), 2 * x]), torch.stack([y, -y, y.flip(0)])
    per_sample = torch.func.vmap(torch.func.grad(loss, argnums=(0, 1)))(xs, ys)
    one_by_one = [torch.func.grad(loss, argnums=(0, 1))(a, b) for a, b in zip(xs, ys)]
    for k in range(2):
        assert torch.equal(per_sample[k], torch.stack([g[k] for g in one_by_one])), name


def test_torch_func_jacobians_and_what_they_refuse():
    """jacrev of a linear operator is its matrix, jacfwd the same; hessian (forward over
    reverse) of a sum is exact, of a max it raises (its second derivative is not computed),
    as jacrev of jacrev does."""
    i = torch.tensor([0, 1, 1, 2])
    s = torch.randn(4, dtype=F64, generator=torch.Generator().manual_seed(1))
    lin = lambda s: ts.scatter(s, i, 0, dim_size=3)  # noqa: E731
    want = torch.eye(3, dtype=F64)[i].t()
    assert torch.equal(torch.func.jacrev(lin)(s), want)
    assert torch.equal(torch.func.jacfwd(lin)(s), want)
    square = lambda s: ts.scatter(s * s, i, 0, dim_size=3).sum()  # noqa: E731
    assert torch.equal(torch.func.hessian(square)(s), 2 * torch.eye(4, dtype=F64))
    assert torch.equal(torch.func.jacrev(torch.func.jacrev(square))(s), 2 * torch.eye(4, dtype=F64))
    mx = lambda s: ts.scatter(s, i, 0, dim_size=3, reduce="max").pow(2).sum()  # noqa: E731
    with pytest.raises(RuntimeError, match="second derivative"):
        torch.func.jacrev(torch.func.jacrev(mx))(s)
    with pytest.raises(NotImplementedError, match="forward-mode AD"):
        torch.func.hessian(mx)(s)


_FORWARD_LINEAR = {"scatter_nd", "scatter_update", "gather", "gather_elements", "gather_nd",
                   "scatter", "segment_coo", "segment_csr", "gather_coo", "gather_csr",
                   "scatter_vjp", "scatter_elements_vjp", "gather_vjp"}


@pytest.mark.parametrize("name,f", _calls(), ids=[c[0] for c in _calls()])
def test_forward_mode_is_the_jacobian_times_the_tangent_or_refused(name, f):
    """A dual tensor's tangent is invisible to the native half: a call on one used to return
    no tangent (derivatives of 0, silently). A linear operator's tangent is now the op on the
    tangents, equal to the reverse-mode Jacobian times them, through torch.func.jvp and
    forward_ad alike; any other raises. Inside a dual level a call without tangents computes
    as before (NumPy arrays included)."""
    import torch.autograd.forward_ad as fwAD

    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(6, 2, dtype=F64, generator=g), torch.randn(4, 2, dtype=F64, generator=g)
    tx, ty = torch.randn(6, 2, dtype=F64, generator=g), torch.randn(4, 2, dtype=F64, generator=g)

    def floats(x, y):
        r = f(x, y)
        return tuple(t for t in (r if isinstance(r, tuple) else (r,)) if t.is_floating_point())

    if name not in _FORWARD_LINEAR:
        with pytest.raises(NotImplementedError, match="forward-mode AD"):
            torch.func.jvp(floats, (x, y), (tx, ty))
        with fwAD.dual_level(), pytest.raises(NotImplementedError, match="forward-mode AD"):
            floats(fwAD.make_dual(x, tx), fwAD.make_dual(y, ty))
        return
    jx, jy = torch.func.jacrev(lambda x, y: floats(x, y)[0], argnums=(0, 1))(x, y)
    want = torch.tensordot(jx, tx, dims=2) + torch.tensordot(jy, ty, dims=2)
    assert torch.allclose(torch.func.jvp(floats, (x, y), (tx, ty))[1][0], want, atol=1e-12), name
    outside = floats(x, y)
    with fwAD.dual_level():
        plain = floats(x, y)  # no tangent: as outside the level
        assert all(torch.equal(a, b) for a, b in zip(plain, outside)), name
        r = floats(fwAD.make_dual(x, tx), fwAD.make_dual(y, ty))[0]
        assert torch.allclose(fwAD.unpack_dual(r).tangent, want, atol=1e-12), name
        n = np.arange(6.0)
        assert ts.scatter(n, np.array([0, 0, 1, 2, 2, 2]), 0).tolist() == [1.0, 2.0, 12.0]


def test_jit_trace_records_the_ops():
    """torch.jit.trace sees the dispatcher ops (the native call would be kept as a constant:
    a traced function silently giving the traced input's result)."""
    i = torch.tensor([0, 0, 1, 3, 3, 3])

    def f(s):
        return (ts.scatter(s, i, 0, dim_size=4, reduce="max") + ts.gather(s, i)[:4]
                + ts.scatter_update(s[:4], i[:2], s[:2], reduction="add"))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit's deprecation warning
        traced = torch.jit.trace(f, torch.randn(6, 2, dtype=F64))
    x = torch.randn(6, 2, dtype=F64)
    assert torch.equal(traced(x), f(x))
