"""Every operator x reduction x dtype x index dtype against the NumPy reference, bit for bit,
on random small cases (hypothesis), at 1 and several threads."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference as ref
import tensor_scatter as ts

ml_dtypes = pytest.importorskip("ml_dtypes")

DTYPES = [np.dtype(n) for n in ("float64", "float32", "float16", "int64", "int32", "int16", "int8",
                                "uint64", "uint32", "uint16", "uint8", "bool")] + [np.dtype(ml_dtypes.bfloat16)]
INDEX_DTYPES = [np.dtype(n) for n in ("int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8")]
REDUCTIONS = ["none", "add", "sub", "mul", "min", "max", "mean"]
# Derandomized, so a test run is reproducible (CI included); TS_HYPOTHESIS_RANDOM=1 explores
# new cases (and TS_HYPOTHESIS_EXAMPLES more of them).
SETTINGS = settings(
    max_examples=int(os.environ.get("TS_HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    derandomize=not os.environ.get("TS_HYPOTHESIS_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow],
)


def values(draw, dtype: np.dtype, shape) -> np.ndarray:
    """Small values with the edge cases of the dtype: NaN, ±inf, -0, extremes."""
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = st.one_of(st.integers(-3, 3), st.sampled_from([info.min, info.max]))
        xs = draw(st.lists(pool, min_size=n, max_size=n))
        return np.array([x % (1 << (8 * dtype.itemsize)) if dtype.kind == "u" else x for x in xs],
                        dtype=dtype).reshape(shape)
    pool = st.one_of(st.sampled_from([0.0, -0.0, 1.5, -2.25, np.nan, np.inf, -np.inf, 1e30]),
                     st.floats(-8, 8, width=16))
    xs = draw(st.lists(pool, min_size=n, max_size=n))
    return np.array(xs, dtype=np.float64).astype(dtype).reshape(shape)


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def valid_indices(draw, n: int, shape, idx_dtype: np.dtype) -> np.ndarray:
    lo = -n if idx_dtype.kind == "i" and n <= abs(np.iinfo(idx_dtype).min) else 0
    xs = draw(st.lists(st.integers(lo, n - 1), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    return np.array(xs, dtype=idx_dtype).reshape(shape)


@st.composite
def elements_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    axis = draw(st.integers(-rank, rank - 1))
    ax = axis % rank
    ishape = tuple(draw(st.integers(0, 5)) if d == ax else draw(st.integers(0, shape[d])) for d in range(rank))
    idx_dtype = draw(st.sampled_from(INDEX_DTYPES))
    reductions = [r for r in REDUCTIONS if not (dtype == np.bool_ and r == "mean")]
    return dict(
        data=values(draw, dtype, shape),
        indices=valid_indices(draw, shape[ax], ishape, idx_dtype),
        updates=values(draw, dtype, ishape),
        axis=axis,
        reduction=draw(st.sampled_from(reductions)),
        include_self=draw(st.booleans()),
        wide=draw(st.booleans()),
        threads=draw(st.sampled_from([1, 2, 4])),
    )


@SETTINGS
@given(elements_case())
def test_scatter_elements_matches_the_reference(c):
    want = ref.scatter_elements(c["data"], c["indices"], c["updates"], c["axis"], c["reduction"],
                                c["include_self"], wide=c["wide"])
    got = ts.scatter_elements(c["data"], c["indices"], c["updates"], axis=c["axis"], reduction=c["reduction"],
                              include_self=c["include_self"], threads=c["threads"],
                              accumulation="wide" if c["wide"] else "per_update")
    assert got.dtype == want.dtype and got.shape == want.shape
    assert bits(got) == bits(want), (got, want)


@st.composite
def nd_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    k = draw(st.integers(1, rank))
    tuples = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(1, 2))))
    idx_dtype = draw(st.sampled_from(INDEX_DTYPES))
    cols = [valid_indices(draw, shape[c], tuples + (1,), idx_dtype) for c in range(k)]
    reductions = [r for r in REDUCTIONS if not (dtype == np.bool_ and r == "mean")]
    return dict(
        data=values(draw, dtype, shape),
        indices=np.concatenate(cols, axis=-1),
        updates=values(draw, dtype, tuples + shape[k:]),
        reduction=draw(st.sampled_from(reductions)),
        include_self=draw(st.booleans()),
        threads=draw(st.sampled_from([1, 2, 4])),
    )


@SETTINGS
@given(nd_case())
def test_scatter_nd_matches_the_reference(c):
    want = ref.scatter_nd(c["data"], c["indices"], c["updates"], c["reduction"], c["include_self"])
    got = ts.scatter_nd(c["data"], c["indices"], c["updates"], reduction=c["reduction"],
                        include_self=c["include_self"], threads=c["threads"])
    assert bits(got) == bits(want), (got, want)


@st.composite
def update_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    axis = draw(st.integers(-rank, rank - 1))
    ax = axis % rank
    ishape = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(1, 2))))
    idx_dtype = draw(st.sampled_from(INDEX_DTYPES))
    reductions = [r for r in REDUCTIONS if not (dtype == np.bool_ and r == "mean")]
    return dict(
        data=values(draw, dtype, shape),
        indices=valid_indices(draw, shape[ax], ishape, idx_dtype),
        updates=values(draw, dtype, shape[:ax] + ishape + shape[ax + 1:]),
        axis=axis,
        reduction=draw(st.sampled_from(reductions)),
        include_self=draw(st.booleans()),
        threads=draw(st.sampled_from([1, 2, 4])),
    )


@SETTINGS
@given(update_case())
def test_scatter_update_matches_the_reference(c):
    want = ref.scatter_update(c["data"], c["indices"], c["updates"], c["axis"], c["reduction"],
                              c["include_self"])
    got = ts.scatter_update(c["data"], c["indices"], c["updates"], axis=c["axis"], reduction=c["reduction"],
                            include_self=c["include_self"], threads=c["threads"])
    assert bits(got) == bits(want), (got, want)


@st.composite
def gather_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    axis = draw(st.integers(-rank, rank - 1))
    idx_dtype = draw(st.sampled_from([d for d in INDEX_DTYPES if d.kind == "i"]))
    policy = draw(st.sampled_from(["error", "clamp", "fill"]))
    n = shape[axis % rank]
    # Out-of-range values only where the policy accepts them.
    span = 0 if policy == "error" else 3
    ishape = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(1, 2))))
    m = int(np.prod(ishape))
    xs = draw(st.lists(st.integers(-n - span, n - 1 + span), min_size=m, max_size=m))
    return dict(data=values(draw, dtype, shape), indices=np.array(xs, idx_dtype).reshape(ishape),
                axis=axis, policy=policy, threads=draw(st.sampled_from([1, 2, 4])))


@SETTINGS
@given(gather_case())
def test_gathers_match_the_reference(c):
    d, i, axis, policy = c["data"], c["indices"], c["axis"], c["policy"]
    fill = d.dtype.type(1)
    fill_value = fill if policy == "fill" else None  # given only with out_of_range="fill"
    want = ref.gather(d, i, axis, out_of_range=policy, fill=fill)
    got = ts.gather(d, i, axis=axis, out_of_range=policy, fill_value=fill_value, threads=c["threads"])
    assert bits(got) == bits(want)
    # gather_elements: indices of data's rank, along the axis.
    ie = np.resize(i, d.shape) if i.size else np.zeros(d.shape, i.dtype)
    want = ref.gather_elements(d, ie, axis, out_of_range=policy, fill=fill)
    got = ts.gather_elements(d, ie, axis=axis, out_of_range=policy, fill_value=fill_value, threads=c["threads"])
    assert bits(got) == bits(want)
    # gather_nd: tuples of length 1 over dim 0 (in range for it when the policy needs that).
    ind = i.reshape(-1, 1)
    if policy == "error":
        ind = (ind.astype(np.int64) % d.shape[0]).astype(i.dtype)
    want = ref.gather_nd(d, ind, out_of_range=policy, fill=fill)
    got = ts.gather_nd(d, ind, out_of_range=policy, fill_value=fill_value, threads=c["threads"])
    assert bits(got) == bits(want)
