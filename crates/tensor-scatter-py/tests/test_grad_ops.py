"""The backward passes of the six operators: the NumPy VJP functions against central finite
differences (every scatter x reduction x include_self, every gather x out-of-range rule), the
tie rules, the same bytes at 1, 2 and 4 threads, the errors; where torch is installed,
``torch.autograd`` through the torch-facing operators: gradcheck (and gradgradcheck where the
backward is linear) in float64, and PyTorch's own backward where it defines the same gradient
(``scatter_reduce``, ``index_add``, ``gather``, ``index_select``, ``take_along_dim``)."""

from __future__ import annotations

import numpy as np
import pytest

import tensor_scatter as ts

REDUCTIONS = ("none", "add", "sub", "mul", "min", "max", "mean")


def problem(op, rng):
    """A small case with duplicates: (forward, vjp, data, indices, updates, options)."""
    if op == "elements":
        data, idx, upd = rng.uniform(0.5, 1.5, (3, 4)), rng.integers(0, 3, (2, 4)), (2, 4)
        return ts.scatter_elements, ts.scatter_elements_vjp, data, idx, rng.uniform(0.5, 1.5, upd), {}
    if op == "nd":
        data, idx, upd = rng.uniform(0.5, 1.5, (4, 3)), rng.integers(0, 4, (5, 1)), (5, 3)
        return ts.scatter_nd, ts.scatter_nd_vjp, data, idx, rng.uniform(0.5, 1.5, upd), {}
    data, idx, upd = rng.uniform(0.5, 1.5, (2, 3, 2)), rng.integers(0, 3, 5), (2, 5, 2)
    return ts.scatter_update, ts.scatter_update_vjp, data, idx, rng.uniform(0.5, 1.5, upd), {"axis": 1}


def numeric(f, x, w, h=1e-6):
    """Central differences of ``sum(w * f(x))`` with respect to every element of ``x``."""
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[k] += h
        down[k] -= h
        g[k] = ((w * f(up)).sum() - (w * f(down)).sum()) / (2 * h)
    return g


@pytest.mark.parametrize("op", ["elements", "nd", "update"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_vjp_matches_finite_differences(op, reduction, include_self):
    rng = np.random.default_rng([REDUCTIONS.index(reduction), include_self, len(op)])
    forward, vjp, data, idx, upd, kw = problem(op, rng)
    kw = dict(kw, reduction=reduction, include_self=include_self)
    w = rng.uniform(0.5, 1.5, data.shape)
    gd, gu = vjp(w, data, idx, upd, **kw)
    assert gd.shape == data.shape and gu.shape == upd.shape
    np.testing.assert_allclose(gd, numeric(lambda d: forward(d, idx, upd, **kw), data, w), atol=1e-6)
    np.testing.assert_allclose(gu, numeric(lambda u: forward(data, idx, u, **kw), upd, w), atol=1e-6)


def test_tie_rules():
    data, idx, upd, grad = np.array([5.0, 1.0]), np.array([0, 0, 1]), np.array([5.0, 5.0, 0.0]), np.array([6.0, 2.0])
    gd, gu = ts.scatter_elements_vjp(grad, data, idx, upd, reduction="max")
    assert gd.tolist() == [2.0, 2.0] and gu.tolist() == [2.0, 2.0, 0.0]
    gd, gu = ts.scatter_elements_vjp(grad, data, idx, upd, reduction="max", ties="first")
    assert gd.tolist() == [6.0, 2.0] and gu.tolist() == [0.0, 0.0, 0.0]
    gd, gu = ts.scatter_elements_vjp(grad, data, idx, upd, reduction="max", ties="first",
                                     include_self=False)
    assert gd.tolist() == [0.0, 0.0] and gu.tolist() == [6.0, 0.0, 2.0]
    # none: the last write wins
    gd, gu = ts.scatter_elements_vjp(grad, data, np.array([1, 1]), np.array([3.0, 4.0]))
    assert gd.tolist() == [6.0, 0.0] and gu.tolist() == [0.0, 2.0]


@pytest.mark.parametrize("op", ["gather", "elements", "nd"])
@pytest.mark.parametrize("mode", ["error", "clamp", "fill"])
def test_gather_vjp_adds_into_the_cells_read(op, mode):
    rng = np.random.default_rng([len(op), len(mode)])
    data = rng.uniform(size=(4, 3))
    bad = mode != "error"
    fill = 2.0 if mode == "fill" else None  # given only with out_of_range="fill"
    if op == "gather":
        idx = rng.integers(-4, 6 if bad else 4, 7)
        f = lambda d: ts.gather(d, idx, axis=0, out_of_range=mode, fill_value=fill)
        vjp = lambda g: ts.gather_vjp(g, idx, d.shape, axis=0, out_of_range=mode)
    elif op == "elements":
        idx = rng.integers(-3, 5 if bad else 3, (4, 5))
        f = lambda d: ts.gather_elements(d, idx, axis=1, out_of_range=mode, fill_value=fill)
        vjp = lambda g: ts.gather_elements_vjp(g, idx, d.shape, axis=1, out_of_range=mode)
    else:
        idx = np.stack([rng.integers(0, 6 if bad else 4, 5), rng.integers(0, 3, 5)], axis=1)
        f = lambda d: ts.gather_nd(d, idx, out_of_range=mode, fill_value=fill)
        vjp = lambda g: ts.gather_nd_vjp(g, idx, d.shape, out_of_range=mode)
    d = data
    w = rng.uniform(size=f(d).shape)
    np.testing.assert_allclose(vjp(w), numeric(f, d, w), atol=1e-6)


def test_gather_vjp_batch_dims_and_dtypes():
    idx = np.array([[1, 1], [0, 1]])
    grad = np.array([[1, 2], [3, 4]], np.int32)
    g = ts.gather_vjp(grad, idx, (2, 2), axis=1, batch_dims=1)
    assert g.dtype == np.int32 and g.tolist() == [[0, 3], [3, 4]]


def test_the_same_bytes_for_any_thread_count():
    rng = np.random.default_rng(3)
    data = rng.integers(-3, 4, (300, 64)).astype(np.float32)
    idx = rng.integers(0, 300, (2000, 64))
    upd = rng.integers(-3, 4, (2000, 64)).astype(np.float32)
    grad = rng.standard_normal((300, 64)).astype(np.float32)
    for reduction in REDUCTIONS:
        runs = [ts.scatter_elements_vjp(grad, data, idx, upd, reduction=reduction, threads=t)
                for t in (1, 2, 4)]
        for gd, gu in runs[1:]:
            assert gd.tobytes() == runs[0][0].tobytes() and gu.tobytes() == runs[0][1].tobytes()
    g = rng.standard_normal((2000, 64)).astype(np.float32)
    runs = [ts.gather_elements_vjp(g, idx, (300, 64), threads=t).tobytes() for t in (1, 2, 4)]
    assert runs[0] == runs[1] == runs[2]


def test_errors():
    g, d, i, u = np.ones(3), np.zeros(3), np.array([0, 1]), np.ones(2)
    with pytest.raises(ValueError, match="ties"):
        ts.scatter_elements_vjp(g, d, i, u, reduction="max", ties="last")
    # The forward checks ties= on every call, recorded by autograd or not (as segment_* do).
    for f, idx in ((ts.scatter_elements, i), (ts.scatter_nd, i[:, None]),
                   (ts.scatter_update, i)):
        out = d.copy()
        with pytest.raises(ValueError, match=f"{f.__name__}: ties: 'last'"):
            f(d, idx, u, reduction="max", ties="last", out=out)
        assert out.tobytes() == d.tobytes()
    with pytest.raises(ValueError, match="grad"):
        ts.scatter_elements_vjp(np.ones(2), d, i, u)
    with pytest.raises(TypeError, match="scatter_elements_vjp"):
        ts.scatter_elements_vjp(g.astype(np.int32), d.astype(np.int32), i, u.astype(np.int32))
    with pytest.raises(IndexError, match="scatter_nd_vjp"):
        ts.scatter_nd_vjp(g, d, np.array([[5]]), np.ones(1))
    with pytest.raises(IndexError, match="gather_vjp"):
        ts.gather_vjp(np.ones(2), np.array([0, 9]), (3,))
    with pytest.raises(ValueError, match="grad"):
        ts.gather_vjp(np.ones(3), np.array([0, 1]), (3,))


# --- torch.autograd ---------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_torch_gradcheck_scatters(reduction):
    torch = _torch()
    gen = torch.Generator().manual_seed(REDUCTIONS.index(reduction))
    d = torch.rand(4, 3, dtype=torch.float64, generator=gen).requires_grad_()
    u = torch.rand(5, 3, dtype=torch.float64, generator=gen).requires_grad_()
    i = torch.tensor([[0, 1, 2], [0, 1, 2], [3, 3, 3], [0, 0, 0], [1, 2, 3]])
    linear = reduction in ("none", "add", "sub", "mean")
    for include_self in (True, False):
        fs = [lambda d, u: ts.scatter_elements(d, i, u, reduction=reduction, include_self=include_self),
              lambda d, u: ts.scatter_nd(d, i[:, :1], u, reduction=reduction, include_self=include_self),
              lambda d, u: ts.scatter_update(d.T, i[:, 0], u.T, axis=1, reduction=reduction,
                                             include_self=include_self)]
        for f in fs:
            assert torch.autograd.gradcheck(f, (d, u))
            if linear:
                assert torch.autograd.gradgradcheck(f, (d, u))


def test_torch_gradcheck_gathers():
    torch = _torch()
    d = torch.rand(4, 3, dtype=torch.float64).requires_grad_()
    i = torch.tensor([[2, 0, 5], [1, -1, 1]])
    for mode in ("error", "clamp", "fill"):
        ii = i.clamp(-4, 3) if mode == "error" else i
        fill = 9.0 if mode == "fill" else None
        fs = [lambda d: ts.gather(d, ii, axis=0, out_of_range=mode, fill_value=fill),
              lambda d: ts.gather_elements(d, ii[:, :3] % 3 if mode == "error" else ii, axis=1,
                                           out_of_range=mode, fill_value=fill),
              lambda d: ts.gather_nd(d, ii[:, :2], out_of_range=mode, fill_value=fill)]
        for f in fs:
            assert torch.autograd.gradcheck(f, (d,))
            assert torch.autograd.gradgradcheck(f, (d,))


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_torch_matches_scatter_reduce(reduce, include_self):
    torch = _torch()
    gen = torch.Generator().manual_seed(len(reduce) + include_self)
    # Small integers: ties between updates and with data, on purpose. Without include_self,
    # data is kept off the updates' values: PyTorch still counts a data cell equal to the
    # result among the ties (then zeroes its share, so the cell's gradient does not sum to g);
    # ours splits among the updates, the only members of the fold.
    d = torch.randint(1, 4, (5, 4), generator=gen).double()
    if not include_self:
        d = d + 10
    d.requires_grad_()
    u = torch.randint(1, 4, (9, 4), generator=gen).double().requires_grad_()
    i = torch.randint(0, 5, (9, 4), generator=gen)
    w = torch.randn(5, 4, dtype=torch.float64, generator=gen)
    ours = {"sum": "add", "prod": "mul", "mean": "mean", "amax": "max", "amin": "min"}[reduce]
    (w * ts.scatter_elements(d, i, u, reduction=ours, include_self=include_self)).sum().backward()
    mine = d.grad.clone(), u.grad.clone()
    d.grad = u.grad = None
    (w * d.scatter_reduce(0, i, u, reduce, include_self=include_self)).sum().backward()
    torch.testing.assert_close(mine, (d.grad, u.grad), rtol=1e-12, atol=1e-12)


def test_torch_matches_index_add_scatter_gather_index_select_take_along_dim():
    torch = _torch()
    gen = torch.Generator().manual_seed(5)
    d = torch.rand(6, 4, dtype=torch.float64, generator=gen).requires_grad_()
    u = torch.rand(6, 9, dtype=torch.float64, generator=gen).requires_grad_()
    i = torch.randint(0, 4, (9,), generator=gen)
    perm = torch.stack([torch.randperm(4, generator=gen) for _ in range(6)])  # unique per row
    j = torch.randint(0, 6, (6, 4), generator=gen)
    pairs = [
        (lambda: ts.scatter_update(d, i, u, axis=1, reduction="add"), lambda: d.index_add(1, i, u)),
        (lambda: ts.scatter_elements(d, perm, u[:, :4], axis=1), lambda: d.scatter(1, perm, u[:, :4])),
        (lambda: ts.gather_elements(d, j, axis=0), lambda: torch.gather(d, 0, j)),
        (lambda: ts.gather(d, i, axis=1), lambda: d.index_select(1, i)),
        (lambda: ts.gather_elements(d, j, axis=0), lambda: torch.take_along_dim(d, j, 0)),
    ]
    for ours, theirs in pairs:
        grads = []
        for f in (ours, theirs):
            d.grad = u.grad = None
            y = f()
            w = torch.randn(y.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
            (w * y).sum().backward()
            grads.append([x.grad for x in (d, u)])
        for m, t in zip(*grads):
            assert (m is None and t is None) or torch.allclose(m, t, rtol=1e-12, atol=1e-12)


def test_torch_out_and_no_grad():
    torch = _torch()
    d = torch.rand(3, dtype=torch.float64, requires_grad=True)
    u = torch.rand(2, dtype=torch.float64, requires_grad=True)
    out = torch.zeros(3, dtype=torch.float64)
    r = ts.scatter_elements(d, torch.tensor([0, 0]), u, reduction="add", out=out)
    assert r is out and out.requires_grad
    out.sum().backward()
    assert d.grad.tolist() == [1.0, 1.0, 1.0] and u.grad.tolist() == [1.0, 1.0]
    with torch.no_grad():
        assert not ts.gather(d, torch.tensor([1])).requires_grad
