"""torch_scatter's API (scatter, scatter_min/max, segment_coo/csr, gather_coo/csr, the
composites) against a plain NumPy reference written here from the documented rules, bit for
bit for the reductions (tolerances only for exp/log, where NumPy's math library differs from
Rust's), at several thread counts; errors; torch tensors in and out where torch is installed."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference as ref
import tensor_scatter as ts
from test_reference import bits, values

ml_dtypes = pytest.importorskip("ml_dtypes")

DTYPES = [np.dtype(n) for n in ("float64", "float32", "float16", "int64", "int32", "int8",
                                "uint8", "bool")] + [np.dtype(ml_dtypes.bfloat16)]
FLOATS = [np.dtype(n) for n in ("float64", "float32", "float16")] + [np.dtype(ml_dtypes.bfloat16)]
INDEX_DTYPES = [np.dtype(n) for n in ("int64", "int32", "int16", "uint8")]
SETTINGS = settings(
    max_examples=int(os.environ.get("TS_HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    derandomize=not os.environ.get("TS_HYPOTHESIS_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow],
)
RED = {"sum": "add", "mul": "mul", "mean": "mean", "min": "min", "max": "max"}


def broadcast(index: np.ndarray, shape, dim: int) -> np.ndarray:
    """torch_scatter's broadcast: a 1-D index lies along dim, trailing dims are added, then
    every dim of extent 1 expands."""
    if index.ndim == 1:
        index = index.reshape([1] * dim + [index.shape[0]])
    while index.ndim < len(shape):
        index = index[..., None]
    return np.broadcast_to(index, shape)


def reference(src, index, dim, dim_size, reduce, out=None):
    """torch_scatter's scatter, one cell at a time: the values and the positions (the last
    position at which a cell's running fold changed bits; src.shape[dim] if none)."""
    dim = dim % src.ndim
    full = broadcast(index, src.shape, dim)
    if out is not None:
        n = out.shape[dim]
    elif dim_size is not None:
        n = dim_size
    else:
        n = int(index.max()) + 1 if index.size else 0
    oshape = list(src.shape)
    oshape[dim] = n
    cells = {}
    for c in itertools.product(*[range(s) for s in src.shape]):
        v = int(full[c])
        assert 0 <= v < n
        oc = list(c)
        oc[dim] = v
        cells.setdefault(tuple(oc), []).append((c[dim], src[c]))
    r = RED[reduce]
    vals = np.empty(oshape, src.dtype)
    arg = np.full(oshape, src.shape[dim], np.int64)
    for oc in itertools.product(*[range(s) for s in oshape]):
        items = cells.get(oc, [])
        us = [u for _, u in items]
        if out is not None:
            start, inc = out[oc], True
        elif items:
            start, inc = None, False
        else:
            vals[oc] = 1 if r == "mul" else 0
            continue
        vals[oc] = ref.fold(start, us, r, inc, src.dtype, wide=True)
        if r in ("min", "max"):
            prev = bits(np.array([start], src.dtype)) if inc else None
            for j, (pos, _) in enumerate(items):
                now = bits(np.array([ref.fold(start, us[: j + 1], r, inc, src.dtype, True)], src.dtype))
                if now != prev:
                    arg[oc] = pos
                prev = now
    return vals, arg


@st.composite
def scatter_case(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    dim = draw(st.integers(0, rank - 1))
    dtype = draw(st.sampled_from(DTYPES))
    reduce = draw(st.sampled_from(["sum", "mul", "min", "max"] + ([] if dtype == np.bool_ else ["mean"])))
    n = draw(st.integers(1, 5))
    if draw(st.booleans()):
        ishape = (shape[dim],)
    else:
        ri = draw(st.integers(dim + 1, rank))
        ishape = tuple(shape[d] if d == dim or draw(st.booleans()) else 1 for d in range(ri))
    idt = draw(st.sampled_from(INDEX_DTYPES))
    index = np.array(draw(st.lists(st.integers(0, n - 1), min_size=int(np.prod(ishape)),
                                   max_size=int(np.prod(ishape)))), idt).reshape(ishape)
    src = values(draw, dtype, shape)
    oshape = list(shape)
    oshape[dim] = n
    out = values(draw, dtype, tuple(oshape)) if draw(st.integers(0, 3)) == 0 else None
    dim_size = n if draw(st.booleans()) else None
    neg_dim = draw(st.booleans())
    return src, index, dim - rank if neg_dim else dim, dim_size, reduce, out


@SETTINGS
@given(scatter_case(), st.sampled_from([1, 2, 4]))
def test_scatter_matches_the_reference(c, threads):
    src, index, dim, dim_size, reduce, out = c
    want, want_arg = reference(src, index, dim, dim_size, reduce, out)
    if reduce in ("min", "max"):
        f = ts.scatter_min if reduce == "min" else ts.scatter_max
        o = None if out is None else out.copy()
        got, arg = f(src, index, dim, o, dim_size, threads=threads)
        assert bits(got) == bits(want) and got.shape == want.shape
        assert np.array_equal(arg, want_arg), (arg, want_arg)
        if o is not None:
            assert got is o
    o = None if out is None else out.copy()
    got = ts.scatter(src, index, dim, o, dim_size, reduce, threads=threads)
    assert got.shape == want.shape and bits(got) == bits(want)


@SETTINGS
@given(scatter_case())
def test_segment_coo_and_csr_equal_scatter_on_sorted_input(c):
    src, index, _, dim_size, reduce, _ = c
    src = src.reshape(-1)  # 1-D: dim 0 for all three
    e = src.shape[0]
    index = np.sort(np.resize(index.reshape(-1), e)) if e else np.zeros(0, np.int64)
    top = int(index.max()) + 1 if e else 0
    n = top if dim_size is None else max(dim_size, top)
    want = ts.scatter(src, index, 0, None, n, reduce)
    assert bits(ts.segment_coo(src, index, None, n, reduce)) == bits(want)
    indptr = np.searchsorted(index, np.arange(n + 1)).astype(np.int64)
    assert bits(ts.segment_csr(src, indptr, None, reduce)) == bits(want)
    if reduce in ("min", "max"):
        a1 = getattr(ts, f"segment_{reduce}_coo")(src, index, None, n)[1]
        a2 = getattr(ts, f"segment_{reduce}_csr")(src, indptr)[1]
        a3 = (ts.scatter_min if reduce == "min" else ts.scatter_max)(src, index, 0, None, n)[1]
        assert np.array_equal(a1, a3) and np.array_equal(a2, a3)
    # The inverses read each segment's row back.
    if e:
        red = ts.segment_csr(src, indptr, None, reduce)
        assert bits(ts.gather_csr(red, indptr)) == bits(red[index])
        assert bits(ts.gather_coo(red, index)) == bits(red[index])


@pytest.mark.parametrize("reduce", ["sum", "mean", "mul", "min", "max"])
def test_segment_out_is_folded_where_it_lies(reduce):
    """``out=`` of the sorted forms: a contiguous out is written in place, a stepped one where
    it lies; both give the reference's bits (rows of 280 bytes, which the fold prefetches).
    segment_coo folds out's values in; segment_csr overwrites them (torch_scatter's rules)."""
    rng = np.random.default_rng(7)
    src = rng.standard_normal((60, 70)).astype(np.float32)
    index = np.sort(rng.integers(0, 9, 60))
    index[index == 4] = 5  # an empty segment: coo keeps out's value, csr writes the empty one
    indptr = np.searchsorted(index, np.arange(10)).astype(np.int64)
    start = rng.standard_normal((9, 70)).astype(np.float32)
    folded = reference(src, index, 0, 9, reduce, start)
    fresh = reference(src, index, 0, 9, reduce)
    calls = {
        "coo": (lambda o: ts.segment_coo(src, index, o, reduce=reduce), folded),
        "csr": (lambda o: ts.segment_csr(src, indptr, o, reduce), fresh),
    }
    if reduce in ("min", "max"):
        calls["coo arg"] = (lambda o: getattr(ts, f"segment_{reduce}_coo")(src, index, o), folded)
        calls["csr arg"] = (lambda o: getattr(ts, f"segment_{reduce}_csr")(src, indptr, o), fresh)
    for name, (call, (want, want_arg)) in calls.items():
        dense = start.copy()
        r = call(dense)
        if name.endswith("arg"):
            r, arg = r
            assert np.array_equal(arg, want_arg), name
        assert r is dense and bits(dense) == bits(want), name
        wide = np.zeros((9, 140), np.float32)
        wide[:, ::2] = start
        view = wide[:, ::2]
        r = call(view)
        r = r[0] if name.endswith("arg") else r
        assert r is view and bits(view) == bits(want) and not wide[:, 1::2].any(), name


@pytest.mark.parametrize("reduce", ["sum", "mean", "mul", "min", "max"])
def test_segment_csr_overwrites_out_as_torch_scatter(reduce):
    """torch_scatter's own test: ``out`` filled with -2 and the result is the one without it
    (its ``segment_coo`` folds ``out`` in, its ``segment_csr`` does not)."""
    src = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 10.0]])
    indptr = np.array([0, 2, 2, 5, 5])
    want = ts.segment_csr(src, indptr, reduce=reduce)
    out = np.full((4, 2), -2.0)
    assert ts.segment_csr(src, indptr, out, reduce=reduce) is out
    assert bits(out) == bits(want)
    assert out[1].tolist() == ([1.0, 1.0] if reduce == "mul" else [0.0, 0.0])
    if reduce in ("min", "max"):
        out = np.full((4, 2), -2.0)
        values, arg = getattr(ts, f"segment_{reduce}_csr")(src, indptr, out)
        assert bits(values) == bits(want) and arg[1].tolist() == [5, 5]
    # Its gradient with respect to out's old values is 0.
    gs, go = ts.segment_csr_vjp(np.ones((4, 2)), src, indptr, np.full((4, 2), -2.0), reduce)
    assert not go.any()
    assert bits(gs) == bits(ts.segment_csr_vjp(np.ones((4, 2)), src, indptr, None, reduce)[0])


def test_segment_out_torch_tensor_is_written_in_place():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    src = rng.standard_normal((40, 70)).astype(np.float32)
    indptr = np.array([0, 5, 5, 22, 40], np.int64)
    start = rng.standard_normal((4, 70)).astype(np.float32)
    index = np.repeat(np.arange(4), np.diff(indptr))
    want, _ = reference(src, index, 0, 4, "sum")
    t = torch.from_numpy(start.copy())
    assert ts.segment_csr(torch.from_numpy(src), torch.from_numpy(indptr), t) is t
    assert bits(t.numpy()) == bits(want)
    want, _ = reference(src, index, 0, 4, "sum", start)
    t = torch.from_numpy(start.copy())
    assert ts.segment_coo(torch.from_numpy(src), torch.from_numpy(index), t) is t
    assert bits(t.numpy()) == bits(want)


def composite_reference(src, index, dim, n, what):
    """The composites in NumPy, per cell, in the compute type (float64, else float32)."""
    x = src.astype(np.float64 if src.dtype == np.float64 else np.float32)
    dim = dim % src.ndim
    full = broadcast(index, src.shape, dim)
    oshape = list(src.shape)
    oshape[dim] = n
    groups = {}
    for c in itertools.product(*[range(s) for s in src.shape]):
        oc = list(c)
        oc[dim] = int(full[c])
        groups.setdefault(tuple(oc), []).append(c)
    np.seterr(all="ignore")
    if what in ("softmax", "log_softmax"):
        out = np.empty(src.shape, x.dtype)
        for cs in groups.values():
            xs = np.array([x[c] for c in cs], x.dtype)
            m = np.max(xs) if not np.isnan(xs).any() else np.nan
            with np.errstate(all="ignore"):
                s = np.sum(np.exp(xs - m))
                for c, v in zip(cs, xs):
                    out[c] = np.exp(v - m) / s if what == "softmax" else (v - m) - np.log(s)
        return out
    out = np.empty(oshape, x.dtype)
    for oc in itertools.product(*[range(s) for s in oshape]):
        xs = np.array([x[c] for c in groups.get(oc, [])], x.dtype)
        if what == "logsumexp":
            if xs.size == 0:
                out[oc] = -np.inf
            elif np.isnan(xs).any():
                out[oc] = np.nan
            else:
                m = xs.max()
                out[oc] = m if np.isinf(m) else m + np.log(np.sum(np.exp(xs - m)))
        else:
            k = len(xs)
            mean = xs.sum() / max(k, 1) if k else 0.0
            d = max(k - 1, 1) if what == "std_unbiased" else max(k, 1)
            out[oc] = np.sqrt(((xs - mean) ** 2).sum() / d) if k else 0.0
    return out


@SETTINGS
@given(scatter_case(), st.sampled_from(FLOATS),
       st.sampled_from(["softmax", "log_softmax", "logsumexp", "std_unbiased", "std_biased"]),
       st.sampled_from([1, 2, 4]))
def test_composites_match_the_reference(c, dtype, what, threads):
    src, index, dim, _, _, _ = c
    src = np.nan_to_num(src.astype(np.float64), nan=0.5, posinf=3.0, neginf=-3.0).astype(dtype)
    n = int(index.max()) + 1 if index.size else 0
    if what == "softmax":
        got = ts.scatter_softmax(src, index, dim, n, threads=threads)
    elif what == "log_softmax":
        got = ts.scatter_log_softmax(src, index, dim, n, threads=threads)
    elif what == "logsumexp":
        got = ts.scatter_logsumexp(src, index, dim, None, n, threads=threads)
    else:
        got = ts.scatter_std(src, index, dim, None, n, what == "std_unbiased", threads=threads)
    want = composite_reference(src, index, dim, n, what)
    tol = {"float64": 1e-12, "float32": 2e-6}.get(dtype.name, 1e-2)
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)
    # Bit-identical at every thread count.
    if threads != 1:
        again = {"softmax": ts.scatter_softmax, "log_softmax": ts.scatter_log_softmax}.get(what)
        if again is not None:
            assert bits(again(src, index, dim, n, threads=1)) == bits(got)


def test_composite_edge_cases():
    inf = np.inf
    src = np.array([1.0, 2.0, -inf, -inf, inf, 0.0, np.nan, 1.0])
    index = np.array([0, 0, 2, 2, 3, 3, 4, 4])
    lse = ts.scatter_logsumexp(src, index)
    assert lse[0] == pytest.approx(np.log(np.exp(1) + np.exp(2)))
    assert lse[1] == -inf and lse[2] == -inf and lse[3] == inf and np.isnan(lse[4])
    sm = ts.scatter_softmax(src, index)
    assert sm[0] + sm[1] == pytest.approx(1.0) and np.isnan(sm[2:]).all()
    std = ts.scatter_std(np.array([1.0, 3.0, 5.0]), np.array([0, 0, 2]), dim_size=4)
    assert np.array_equal(std, [np.sqrt(2.0), 0.0, 0.0, 0.0])


def test_composites_out_takes_its_size_from_out():
    """torch_scatter's ``scatter_logsumexp(src=[-1, -50], index=[0, 0], out=[-10, -10])``:
    the result has out's size (cell 1 received nothing: -inf), never a broadcast."""
    out = np.array([-10.0, -10.0])
    r = ts.scatter_logsumexp(np.array([-1.0, -50.0]), np.array([0, 0]), out=out)
    assert r is out and out[0] == pytest.approx(-1.0) and out[1] == -np.inf
    out = np.full((3, 2), 5.0)
    src = np.array([[1.0, 2.0], [3.0, 6.0]])
    r = ts.scatter_std(src, np.array([0, 0]), dim=0, out=out)
    assert r is out and np.array_equal(out, [[np.sqrt(2.0), np.sqrt(8.0)], [0, 0], [0, 0]])
    # A shape the result does not have, or another dtype: an error, nothing written.
    for bad in (np.full(1, 3.0), np.full((2, 2), 3.0)):
        with pytest.raises(ValueError, match="out: shape"):
            ts.scatter_logsumexp(np.array([-1.0, -50.0]), np.array([0, 0]), dim_size=2, out=bad)
        assert (bad == 3.0).all()
    with pytest.raises(TypeError, match="out: dtype"):
        ts.scatter_std(src, np.array([0, 0]), dim=0, out=np.zeros((1, 2), np.float32))


def test_gathers_out_must_have_the_results_shape():
    src = np.array([1.0, 2.0, 3.0])
    out = np.zeros(3)
    assert ts.gather_coo(src, np.array([0, 0, 2]), out) is out and out.tolist() == [1, 1, 3]
    assert ts.gather_csr(src, np.array([0, 1, 1, 3]), out) is out and out.tolist() == [1, 3, 3]
    for call in (lambda o: ts.gather_coo(src, np.array([2]), o),
                 lambda o: ts.gather_csr(np.array([4.0]), np.array([0, 3]), o[:, None]),
                 lambda o: ts.gather_coo(src, np.array([0, 1]), o)):
        o = np.full((2, 3), 9.0)
        with pytest.raises(ValueError, match="out: shape"):
            call(o)
        assert (o == 9.0).all()


def test_zero_segments_agree():
    """torch_scatter's zero-element tests: an empty src and an empty indptr are zero segments
    for segment_csr and gather_csr alike (an indptr of one offset too)."""
    src = np.zeros((0, 0, 0, 16), np.float32)
    for indptr in (np.zeros(0, np.int64), np.zeros(1, np.int64)):
        assert ts.segment_csr(src, indptr).shape == (0, 0, 0, 16)
        assert ts.gather_csr(src, indptr).shape == (0, 0, 0, 16)
    assert ts.gather_csr(np.zeros((0, 3)), np.zeros(0, np.int64)).shape == (0, 3)
    with pytest.raises(ValueError, match="offsets"):
        ts.gather_csr(np.zeros((0, 3)), np.zeros(2, np.int64))
    index = np.zeros(0, np.int64)
    assert ts.scatter(src, index, dim=0, dim_size=0).shape == (0, 0, 0, 16)
    assert ts.segment_coo(src, index, dim_size=0).shape == (0, 0, 0, 16)
    assert ts.gather_coo(src, index).shape == (0, 0, 0, 16)


def test_autograd_out_must_have_the_results_shape():
    torch = pytest.importorskip("torch")
    src = torch.ones(3, 2, requires_grad=True)
    index = torch.tensor([0, 0, 1])
    for call in (
        lambda o: ts.scatter(src, index, 0, o, dim_size=2),
        lambda o: ts.gather_coo(src, torch.tensor([0, 2]), o),
        lambda o: ts.scatter_logsumexp(src, index, 0, o, dim_size=2),
        lambda o: ts.scatter_elements(torch.zeros(2, 2), index[:, None].expand(3, 2), src,
                                      reduction="add", out=o),
        lambda o: ts.gather(src, torch.tensor([0, 1]), out=o),
    ):
        o = torch.full((3, 2, 2), 9.0)
        with pytest.raises(ValueError, match="out"):
            call(o)
        assert (o == 9.0).all()


def test_errors_are_python_exceptions_and_out_is_untouched():
    src = np.ones(4, np.float32)
    with pytest.raises(IndexError, match=r"index: index 5 at position \[2\]"):
        ts.scatter(src, np.array([0, 1, 5, 0]), dim_size=3)
    with pytest.raises(IndexError):
        ts.scatter(src, np.array([0, -1, 0, 0]))
    with pytest.raises(ValueError, match="sorted"):
        ts.segment_coo(src, np.array([0, 2, 1, 3]))
    with pytest.raises(ValueError, match="non-decreasing"):
        ts.segment_csr(src, np.array([0, 3, 2]))
    with pytest.raises(TypeError):
        ts.scatter_softmax(np.array([1, 2]), np.array([0, 0]))
    with pytest.raises(TypeError):
        ts.scatter(src, np.array([0.0, 1.0, 0.0, 0.0]))
    with pytest.raises(TypeError):
        ts.scatter(np.array([True]), np.array([0]), reduce="mean")
    with pytest.raises(ValueError):
        ts.scatter(np.ones((2, 2)), np.zeros((2, 3), np.int64))
    out = np.full(3, 7.0, np.float32)
    with pytest.raises(IndexError):
        ts.scatter(src, np.array([0, 3, 0, 0]), out=out)
    assert np.array_equal(out, [7.0, 7.0, 7.0])


def test_small_calls_give_the_planned_paths_bits():
    """A 1-D scatter of at most 1,024 updates into at most 1,024 cells folds with no plan:
    against the same call made through a stepped view (the planned path), bit for bit, for
    out= (its values taking part) and a new result, on NumPy arrays and torch tensors."""
    torch = pytest.importorskip("torch")
    nan = np.float32(np.frombuffer(np.uint32(0x7FC01234).tobytes(), np.float32)[0])
    floats = [0.0, -0.0, 1.5, -2.25, 3e38, -3e38, np.inf, -np.inf, nan, 7.0, 0.1]
    ints = [0, 1, -1, 7, -13, 2**31 - 1, -(2**31), 100_000]
    rng = np.random.default_rng(5)

    def stepped(a):  # the same values through a view the stack fold does not take
        b = np.empty(2 * len(a), a.dtype)
        b[::2] = a
        return b[::2]

    for dtype in ("float32", "float64", "int32", "int64"):
        pool = np.array(floats if dtype.startswith("float") else ints).astype(dtype)
        for idt in ("int32", "int64"):
            for e, n in [(1, 1), (10, 10), (200, 64), (1024, 7), (1025, 3), (5, 65), (30, 1024),
                         (5, 1025)]:
                src = pool[rng.integers(0, len(pool), e)]
                idx = rng.integers(0, max(1, n // 2 + 1), e).astype(idt)
                start = pool[rng.integers(0, len(pool), n)]
                for reduce in ("sum", "mul", "mean", "min", "max"):
                    want = ts.scatter(stepped(src), stepped(idx), 0, None, n, reduce)
                    assert bits(ts.scatter(src, idx, 0, None, n, reduce)) == bits(want)
                    got = ts.scatter(torch.from_numpy(src), torch.from_numpy(idx), 0, None, n,
                                     reduce)
                    assert bits(got.numpy()) == bits(want), (dtype, idt, e, n, reduce)
                    want = ts.scatter(stepped(src), stepped(idx), 0, stepped(start), None,
                                      reduce)
                    o = start.copy()
                    assert ts.scatter(src, idx, 0, o, None, reduce) is o
                    assert bits(o) == bits(want), (dtype, idt, e, n, reduce)
                    t = torch.from_numpy(start.copy())
                    v = t._version
                    assert ts.scatter(torch.from_numpy(src), torch.from_numpy(idx), 0, t, None,
                                      reduce) is t
                    assert bits(t.numpy()) == bits(want) and t._version > v
    # Errors: the planned path's, and nothing written.
    o = np.full(3, 7.0, np.float32)
    for bad in (3, -1):
        for kind in (np.asarray, torch.from_numpy):
            idx = np.array([0, bad, 1])
            with pytest.raises(IndexError, match=rf"index {bad} at position \[1\]"):
                ts.scatter(kind(np.ones(3, np.float32)), kind(idx), 0, kind(o))
            with pytest.raises(IndexError, match=rf"index {bad} at position \[1\]"):
                ts.scatter(kind(np.ones(3, np.float32)), kind(idx), 0, None, 3)
    assert np.array_equal(o, [7.0, 7.0, 7.0])


def test_strided_and_foreign_inputs_take_the_general_path():
    base = np.arange(24.0).reshape(4, 6)
    src = base[:, ::2]  # stepped: read where it lies
    index = np.array([1, 0, 1, 1])
    want = ts.scatter(np.ascontiguousarray(src), index, 0)
    assert np.array_equal(ts.scatter(src, index, 0), want)
    assert np.array_equal(ts.scatter(src.tolist(), index.tolist(), 0), want)
    # A stepped out is written where it lies, with its values taking part.
    out = np.ones((2, 6))
    view = out[:, ::2]
    r = ts.scatter(src, index, 0, out=view)
    assert r is view and np.array_equal(view, want + 1) and np.array_equal(out[:, 1::2], np.ones((2, 3)))
    # Output and input sharing memory give the same bits as if they did not.
    buf = np.arange(8.0)
    ts.scatter(buf[:4], np.array([0, 0, 1, 1]), 0, buf[2:4])
    assert np.array_equal(buf[:4], [0.0, 1.0, 3.0, 8.0])


def test_torch_tensors_in_give_torch_out():
    torch = pytest.importorskip("torch")
    src = torch.tensor([[2.0, 0, 1, 4, 3], [0, 2, 1, 3, 4]])
    index = torch.tensor([[4, 5, 4, 2, 3], [0, 0, 2, 2, 1]])
    out, arg = ts.scatter_max(src, index, dim=-1)
    assert isinstance(out, torch.Tensor) and isinstance(arg, torch.Tensor) and arg.dtype == torch.int64
    assert out.tolist() == [[0, 0, 4, 3, 2, 0], [2, 4, 3, 0, 0, 0]]
    # Against torch's own ops where they define the same result.
    e, f, n = 300, 5, 17
    g = torch.Generator().manual_seed(0)
    src = torch.randn(e, f, generator=g, dtype=torch.float64)
    idx = torch.randint(0, n, (e,), generator=g)
    full = idx.view(-1, 1).expand(e, f)
    for reduce, tr in [("sum", "sum"), ("mean", "mean"), ("max", "amax"), ("min", "amin"), ("mul", "prod")]:
        want = torch.zeros(n, f, dtype=torch.float64).scatter_reduce(0, full, src, tr, include_self=False)
        got = ts.scatter(src, idx, 0, None, n, reduce)
        assert torch.allclose(got, want, rtol=1e-12, atol=1e-12), reduce
    want = torch.zeros(n, f, dtype=torch.float64).index_add(0, idx, src)
    assert torch.allclose(ts.scatter(src, idx, 0, None, n), want, rtol=1e-12, atol=1e-12)
    # Softmax by destination against a dense softmax per group.
    sm = ts.scatter_softmax(src, idx, 0, n)
    for j in range(n):
        rows = (idx == j).nonzero().view(-1)
        if len(rows):
            assert torch.allclose(sm[rows], torch.softmax(src[rows], 0), rtol=1e-12, atol=1e-14)
    # In place into a torch out: its values take part.
    o = torch.ones(n, f, dtype=torch.float64)
    r = ts.scatter(src, idx, 0, o)
    assert r is o and torch.allclose(o, 1 + torch.zeros(n, f, dtype=torch.float64).index_add(0, idx, src))


def test_jax_arrays_in_give_jax_out():
    jnp = pytest.importorskip("jax.numpy")
    src = jnp.arange(6.0).reshape(3, 2)
    idx = jnp.array([1, 0, 1])
    out = ts.scatter(src, idx, 0)
    assert type(out) is type(src) and out.tolist() == [[2.0, 3.0], [4.0, 6.0]]
    vals, arg = ts.scatter_max(src, idx, 0)
    assert type(arg) is type(src) and arg.tolist() == [[1, 1], [2, 2]]
    assert ts.segment_csr(src, jnp.array([0, 2, 3])).tolist() == [[2.0, 4.0], [4.0, 5.0]]
