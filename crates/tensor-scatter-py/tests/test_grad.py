"""The graph-learning family's backward passes: the NumPy VJP functions against a plain
reference written here from the documented rules (cell by cell) and against central finite
differences, the same bytes at 1, 2 and 4 threads, the errors; where torch is installed,
``torch.autograd`` through ``scatter`` / ``segment_*`` / ``gather_*``: gradcheck and
gradgradcheck in float64, PyTorch's own backward where it defines the same gradient, and a
two-layer mean-aggregation GNN trained with our functions against the same model written with
torch's ops."""

from __future__ import annotations

import numpy as np
import pytest

import tensor_scatter as ts

REDUCES = ("sum", "mean", "mul", "min", "max")


def reference_vjp(grad, src, index, n, out, reduce, ties):
    """Rows of ``src`` ([e, f]) reduced by ``index`` ([e], values in [0, n)) into [n, f]:
    the gradients by the rules, one cell at a time."""
    e, f = src.shape
    gs = np.zeros_like(src)
    go = None if out is None else np.zeros_like(out)
    for c in range(n):
        members = [i for i in range(e) if index[i] == c]
        for j in range(f):
            g = grad[c, j]
            xs = [src[i, j] for i in members]
            start = None if out is None else out[c, j]
            if reduce == "sum":
                for i in members:
                    gs[i, j] = g
                if go is not None:
                    go[c, j] = g
            elif reduce == "mean":
                count = len(members) + (out is not None)
                for i in members:
                    gs[i, j] = g / count
                if go is not None:
                    go[c, j] = g / count
            elif reduce == "mul":
                for k, i in enumerate(members):
                    others = ([] if start is None else [start]) + xs[:k] + xs[k + 1:]
                    gs[i, j] = g * np.prod(others)
                if go is not None:
                    go[c, j] = g * np.prod(xs)
            else:
                pick = np.nanmin if reduce == "min" else np.nanmax
                pool = xs + ([] if start is None else [start])
                if not pool:
                    continue
                r = np.nan if np.isnan(pool).any() else pick(pool)
                same = [(x == r) or (np.isnan(x) and np.isnan(r)) for x in xs]
                out_same = start is not None and ((start == r) or (np.isnan(start) and np.isnan(r)))
                if ties == "first":
                    # the first in fold order: out's value first, then the members
                    if out_same:
                        go[c, j] = g
                    else:
                        i = members[same.index(True)]
                        gs[i, j] = g
                else:
                    share = g / (sum(same) + out_same)
                    for i, s in zip(members, same):
                        if s:
                            gs[i, j] = share
                    if out_same:
                        go[c, j] = share
    return gs, go


def case(rng, e=9, f=3, n=4, ties_likely=True):
    values = rng.integers(-3, 4, size=(e, f)).astype(np.float64) if ties_likely else \
        rng.permutation(e * f).reshape(e, f).astype(np.float64) * 0.37 - 5
    index = rng.integers(0, n, size=e)
    return values, index


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("ties", ["split", "first"])
@pytest.mark.parametrize("with_out", [False, True])
def test_scatter_vjp_matches_reference(reduce, ties, with_out):
    rng = np.random.default_rng([REDUCES.index(reduce), ties == "first", with_out])
    for _ in range(20):
        src, index = case(rng)
        if rng.random() < 0.2:
            src[rng.integers(0, 9), rng.integers(0, 3)] = np.nan
        n = 4
        grad = rng.integers(-5, 6, size=(n, 3)).astype(np.float64)
        out = rng.integers(-3, 4, size=(n, 3)).astype(np.float64) if with_out else None
        want = reference_vjp(grad, src, index, n, out, reduce, ties)
        got = ts.scatter_vjp(grad, src, index, 0, None if out is None else out.copy(),
                             None if with_out else n, reduce, ties)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        if with_out:
            np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
        else:
            assert got[1] is None
        # The same through the sorted forms.
        order = np.argsort(index, kind="stable")
        s, i = src[order], index[order]
        coo = ts.segment_coo_vjp(grad, s, i, out, None if with_out else n, reduce, ties)
        np.testing.assert_allclose(coo[0], got[0][order], rtol=1e-12)
        # segment_csr overwrites out: its gradients are those without out (0 for out).
        indptr = np.searchsorted(i, np.arange(n + 1))
        csr = ts.segment_csr_vjp(grad, s, indptr, out, reduce, ties)
        fresh = ts.scatter_vjp(grad, src, index, 0, None, n, reduce, ties)[0]
        np.testing.assert_allclose(csr[0], fresh[order], rtol=1e-12)
        assert (csr[1] is None) if out is None else not csr[1].any()


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_vjp_matches_finite_differences(reduce):
    rng = np.random.default_rng(5)
    src, index = case(rng, ties_likely=False)
    out = rng.normal(size=(4, 3)) + 10
    w = rng.normal(size=(4, 3))

    def loss(s, o):
        return float((ts.scatter(s, index, 0, o.copy(), reduce=reduce) * w).sum())

    gs, go = ts.scatter_vjp(w, src, index, 0, out, reduce=reduce)
    h = 1e-6
    for buf, g, is_src in ((src, gs, True), (out, go, False)):
        for p in np.ndindex(buf.shape):
            a, b = buf.copy(), buf.copy()
            a[p] += h
            b[p] -= h
            d = ((loss(a, out) - loss(b, out)) if is_src else (loss(src, a) - loss(src, b))) / (2 * h)
            assert abs(d - g[p]) <= 1e-5 * (1 + abs(d)), (reduce, is_src, p, d, g[p])


def test_vjps_are_the_same_bytes_for_any_thread_count():
    rng = np.random.default_rng(11)
    e, f, n = 40_000, 8, 3_000
    src = rng.integers(-4, 5, size=(e, f)).astype(np.float32) / 3
    index = rng.integers(0, n, size=e)
    grad = rng.normal(size=(n, f)).astype(np.float32)
    for reduce in REDUCES:
        runs = [ts.scatter_vjp(grad, src, index, 0, None, n, reduce, threads=t)[0]
                for t in (1, 2, 4)]
        assert all(r.tobytes() == runs[0].tobytes() for r in runs), reduce
    g1 = [ts.gather_coo_vjp(src, index, n, threads=t) for t in (1, 2, 4)]
    assert all(r.tobytes() == g1[0].tobytes() for r in g1)


def test_gather_vjps():
    np.testing.assert_array_equal(
        ts.gather_coo_vjp(np.array([[1.0, 2.0], [4.0, 8.0]]), np.array([1, 1]), 3),
        [[0.0, 0.0], [5.0, 10.0], [0.0, 0.0]])
    np.testing.assert_array_equal(
        ts.gather_csr_vjp(np.array([9.0, 1.0, 2.0]), np.array([1, 3, 3])), [3.0, 0.0])


def test_vjp_errors():
    src, index, grad = np.ones(3), np.array([0, 0, 1]), np.ones(2)
    with pytest.raises(TypeError, match="grad"):
        ts.scatter_vjp(np.ones(2, np.int32), src.astype(np.int32), index)
    with pytest.raises(ValueError, match="grad"):
        ts.scatter_vjp(np.ones(3), src, index)
    with pytest.raises(IndexError, match="index"):
        ts.scatter_vjp(grad, src, np.array([0, 0, 5]), dim_size=2)
    with pytest.raises(ValueError, match="ties"):
        ts.scatter_vjp(grad, src, index, reduce="max", ties="last")
    with pytest.raises(ValueError, match="must be sorted"):
        ts.segment_coo_vjp(grad, src, np.array([1, 0, 0]))


def test_vjp_of_float16_and_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dt in (np.float16, ml_dtypes.bfloat16):
        src = np.array([1, 2, 3], dt)
        gs, _ = ts.scatter_vjp(np.array([3, 6], dt), src, np.array([0, 0, 1]), reduce="mean")
        assert gs.dtype == np.dtype(dt)
        np.testing.assert_array_equal(gs.astype(np.float32), [1.5, 1.5, 6.0])


# --- torch.autograd --------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("reduce", REDUCES)
def test_torch_gradcheck(reduce):
    torch = _torch()
    g = torch.Generator().manual_seed(0)
    src = torch.randn(7, 3, dtype=torch.float64, generator=g, requires_grad=True)
    out = torch.randn(4, 3, dtype=torch.float64, generator=g, requires_grad=True)
    index = torch.tensor([0, 2, 0, 1, 2, 2, 3])
    order = index.argsort(stable=True)
    indptr = torch.searchsorted(index[order], torch.arange(5))
    fs = [
        lambda s, o: ts.scatter(s, index, 0, dim_size=4, reduce=reduce),
        lambda s, o: ts.scatter(s, index, 0, o.clone(), reduce=reduce),
        lambda s, o: ts.segment_coo(s[order], index[order], o.clone(), reduce=reduce),
        lambda s, o: ts.segment_csr(s[order], indptr, reduce=reduce),
    ]
    for f in fs:
        assert torch.autograd.gradcheck(f, (src, out))
        if reduce in ("sum", "mean"):
            assert torch.autograd.gradgradcheck(f, (src, out))
    if reduce in ("min", "max"):
        fn = ts.scatter_min if reduce == "min" else ts.scatter_max
        assert torch.autograd.gradcheck(lambda s: fn(s, index, 0)[0], (src,))


def test_torch_gradcheck_gathers():
    torch = _torch()
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    index = torch.tensor([3, 0, 0, 2, 3])
    indptr = torch.tensor([0, 2, 2, 3, 5])
    for f in (lambda s: ts.gather_coo(s, index), lambda s: ts.gather_csr(s, indptr)):
        assert torch.autograd.gradcheck(f, (x,))
        assert torch.autograd.gradgradcheck(f, (x,))


def test_torch_matches_pytorch_backward():
    torch = _torch()
    g = torch.Generator().manual_seed(3)
    # Small integers: ties on purpose.
    src = torch.randint(-2, 3, (50, 4), generator=g).double().requires_grad_()
    index = torch.randint(0, 6, (50,), generator=g)
    w = torch.randn(6, 4, dtype=torch.float64, generator=g)
    for reduce, theirs in (("sum", "sum"), ("mean", "mean"), ("max", "amax"), ("min", "amin"),
                           ("mul", "prod")):
        ours = torch.autograd.grad((ts.scatter(src, index, 0, dim_size=6, reduce=reduce) * w).sum(), src)[0]
        base = torch.zeros(6, 4, dtype=torch.float64)
        ref = base.scatter_reduce(0, index[:, None].expand(-1, 4), src, theirs, include_self=False)
        want = torch.autograd.grad((ref * w).sum(), src)[0]
        torch.testing.assert_close(ours, want, msg=reduce)
    # With out: include_self=True.
    out = torch.randint(-2, 3, (6, 4), generator=g).double().requires_grad_()
    for reduce, theirs in (("sum", "sum"), ("mean", "mean"), ("max", "amax")):
        r = ts.scatter(src, index, 0, out.clone(), reduce=reduce)
        ours = torch.autograd.grad((r * w).sum(), (src, out))
        ref = out.scatter_reduce(0, index[:, None].expand(-1, 4), src, theirs, include_self=True)
        want = torch.autograd.grad((ref * w).sum(), (src, out))
        for a, b in zip(ours, want):
            torch.testing.assert_close(a, b, msg=reduce)


def test_torch_out_in_place_and_no_grad():
    torch = _torch()
    src = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([1.0, 1.0], requires_grad=True)
    out = w * 2  # not a leaf: in place is allowed
    r = ts.scatter(src, torch.tensor([0, 1, 1]), 0, out)
    assert r is out and out.tolist() == [3.0, 7.0]
    out.sum().backward()
    assert src.grad.tolist() == [1.0, 1.0, 1.0] and w.grad.tolist() == [2.0, 2.0]
    with torch.no_grad():
        assert ts.scatter(src, torch.tensor([0, 0, 0])).grad_fn is None


def _gnn_loss_curve(torch, aggregate, threads, steps=15):
    g = torch.Generator().manual_seed(0)
    n, e, f, h, c = 60, 300, 8, 16, 3
    x = torch.randn(n, f, dtype=torch.float64, generator=g)
    srcs = torch.randint(0, n, (e,), generator=g)
    dsts = torch.randint(0, n, (e,), generator=g)
    y = torch.randint(0, c, (n,), generator=g)
    w1 = (torch.randn(2 * f, h, dtype=torch.float64, generator=g) * 0.3).requires_grad_()
    w2 = (torch.randn(2 * h, c, dtype=torch.float64, generator=g) * 0.3).requires_grad_()
    opt = torch.optim.SGD([w1, w2], lr=0.5)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        h1 = torch.relu(torch.cat([x, aggregate(x[srcs], dsts, n, threads)], 1) @ w1)
        logits = torch.cat([h1, aggregate(h1[srcs], dsts, n, threads)], 1) @ w2
        loss = torch.nn.functional.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_torch_gnn_training_matches_pytorch_and_is_thread_independent():
    torch = _torch()

    def ours(msg, dst, n, threads):
        return ts.scatter(msg, dst, 0, dim_size=n, reduce="mean", threads=threads)

    def theirs(msg, dst, n, threads):
        z = torch.zeros(n, msg.shape[1], dtype=msg.dtype).index_add(0, dst, msg)
        count = torch.zeros(n, dtype=msg.dtype).index_add(0, dst, torch.ones_like(dst, dtype=msg.dtype))
        return z / count.clamp(min=1)[:, None]

    curves = [_gnn_loss_curve(torch, ours, t) for t in (1, 2, 4)]
    assert curves[0] == curves[1] == curves[2]  # bit for bit
    want = _gnn_loss_curve(torch, theirs, None)
    np.testing.assert_allclose(curves[0], want, rtol=1e-9)
    assert curves[0][-1] < curves[0][0]


def test_ties_keyword():
    src, index = np.array([3.0, 3.0, 1.0]), np.array([0, 0, 0])
    assert ts.scatter_max(src, index, ties="first")[1].tolist() == [0]  # no effect forward
    with pytest.raises(ValueError, match="ties"):
        ts.scatter(src, index, reduce="max", ties="all")
    torch = _torch()
    x = torch.tensor([3.0, 3.0, 1.0], dtype=torch.float64, requires_grad=True)
    i = torch.tensor([0, 0, 0])
    for ties, want in (("split", [0.5, 0.5, 0.0]), ("first", [1.0, 0.0, 0.0])):
        for f in (lambda: ts.scatter_max(x, i, ties=ties)[0],
                  lambda: ts.scatter(x, i, reduce="max", ties=ties),
                  lambda: ts.segment_max_coo(x, i, ties=ties)[0],
                  lambda: ts.segment_csr(x, torch.tensor([0, 3]), reduce="max", ties=ties)):
            (g,) = torch.autograd.grad(f().sum(), x)
            assert g.tolist() == want, (ties, g)


# --- the composites ---------------------------------------------------------------------

COMPOSITES = ("softmax", "log_softmax", "logsumexp", "std", "std_biased")


def _composite(name):
    """(forward, vjp) of one composite, over dim 0."""
    if name.startswith("std"):
        unbiased = name == "std"
        return (lambda x, i: ts.scatter_std(x, i, dim=0, dim_size=4, unbiased=unbiased),
                lambda g, x, i: ts.scatter_std_vjp(g, x, i, dim=0, dim_size=4, unbiased=unbiased))
    f = getattr(ts, f"scatter_{name}")
    v = getattr(ts, f"scatter_{name}_vjp")
    return (lambda x, i: f(x, i, dim=0, dim_size=4), lambda g, x, i: v(g, x, i, dim=0, dim_size=4))


@pytest.mark.parametrize("name", COMPOSITES)
def test_composite_vjp_matches_finite_differences(name):
    rng = np.random.default_rng(COMPOSITES.index(name))
    x = rng.uniform(-2, 2, (7, 3))
    i = np.array([0, 1, 0, 2, 1, 0, 2])  # cell 3 empty (logsumexp -inf there: left out)
    forward, vjp = _composite(name)
    y = forward(x, i)
    w = np.where(np.isfinite(y), rng.uniform(0.5, 1.5, y.shape), 0.0)
    loss = lambda x: (w * np.where(np.isfinite(forward(x, i)), forward(x, i), 0.0)).sum()
    g = vjp(w, x, i)
    h = 1e-6
    for k in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[k] += h
        down[k] -= h
        assert abs((loss(up) - loss(down)) / (2 * h) - g[k]) < 1e-6, (name, k)


def test_composite_vjp_at_zero_std_is_zero():
    g = ts.scatter_std_vjp(np.ones(2), np.array([5.0, 1.0, 1.0]), np.array([0, 1, 1]))
    assert g.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("name", COMPOSITES)
def test_torch_composites(name):
    torch = _torch()
    x = torch.rand(6, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    x.requires_grad_()
    i = torch.tensor([0, 1, 0, 2, 1, 1])
    forward, _ = _composite(name)
    assert torch.autograd.gradcheck(lambda x: forward(x, i)[:3], (x,))
    # One segment holding everything: torch's own functions over dim 0.
    one = torch.zeros(6, dtype=torch.int64)
    theirs = {"softmax": lambda x: torch.softmax(x, 0), "log_softmax": lambda x: torch.log_softmax(x, 0),
              "logsumexp": lambda x: torch.logsumexp(x, 0, keepdim=True),
              "std": lambda x: torch.std(x, 0, keepdim=True),
              "std_biased": lambda x: torch.std(x, 0, unbiased=False, keepdim=True)}[name]
    w = torch.rand(6, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    ours = forward(x, one)[: theirs(x).shape[0]]
    (a,) = torch.autograd.grad((w[: ours.shape[0]] * ours).sum(), x)
    (b,) = torch.autograd.grad((w[: ours.shape[0]] * theirs(x)).sum(), x)
    assert torch.allclose(a, b, rtol=1e-10, atol=1e-12)
