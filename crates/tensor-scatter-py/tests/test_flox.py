"""tensor_scatter.flox: our Aggregations as func= of flox.groupby_reduce and
flox.xarray.xarray_reduce give tensor_scatter.dask's bits (exact reductions under any chunking
and split_every; float sums and means with the grouped axis in equal multiples of
block * 2**k and split_every=2), and flox's own engine's values (exactly for min, max, their
positions and integers; within float tolerance for sums and means)."""

import numpy as np
import pytest

dask = pytest.importorskip("dask")
flox = pytest.importorskip("flox")
xr = pytest.importorskip("xarray")
import dask.array as da  # noqa: E402
import flox.xarray  # noqa: E402

import tensor_scatter as ts  # noqa: E402
import tensor_scatter.dask as tsd  # noqa: E402
import tensor_scatter.flox as tsf  # noqa: E402

N, G, BLOCK = 4096, 37, 64


def _data(dtype):
    rng = np.random.default_rng(4)
    v = (rng.standard_normal((3, N)) * 5).astype(dtype) if np.dtype(dtype).kind == "f" else \
        rng.integers(-1000, 1000, (3, N)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        v[:, ::97] = -0.0
        v[1, 5] = np.nan
    g = rng.integers(0, G, N)
    g[:G] = np.arange(G)  # every group has members
    return v, g


def _ours(name, v, g, chunks):
    red = {"argmin": "min", "argmax": "max"}.get(name, name)
    if name == "sum" and v.dtype == np.int32:
        v = v.astype(np.int64)  # flox sums int32 in int64, as NumPy does
    src = da.from_array(v, chunks=(1, chunks))
    if name.startswith("arg"):
        return getattr(tsd, f"scatter_{red}")(src, g, -1, dim_size=G)[1].compute()
    return tsd.scatter(src, g, -1, dim_size=G, reduce=red, block=BLOCK).compute()


def _flox(func, v, g, chunks):
    return flox.groupby_reduce(da.from_array(v, chunks=(1, chunks)), g, func=func,
                               expected_groups=np.arange(G))[0].compute()


@pytest.mark.parametrize("name", ["sum", "mean", "min", "max", "argmin", "argmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_the_bits_of_tensor_scatter_dask(name, dtype):
    if name == "mean" and dtype == np.int32:
        dtype = np.float64  # flox's mean of integers is a float mean
    v, g = _data(dtype)
    agg = tsf.aggregation(name, BLOCK)
    exact = name not in ("sum", "mean") or np.dtype(dtype).kind != "f"
    aligned = [BLOCK * 4, BLOCK * 8, (BLOCK * 2,) * 31 + (N - BLOCK * 62,)]
    ragged = [(1000, 7, 2000, 1089), 333]
    for every in ((2, 4) if exact else (2,)):
        with dask.config.set(split_every=every):
            for chunks in aligned + (ragged if exact else []):
                got = _flox(agg, v, g, chunks)
                want = _ours(name, v, g, 100)
                assert got.dtype == want.dtype
                assert got.tobytes() == want.tobytes(), (name, every, chunks)
    # flox's own engine (which does not propagate NaN through arg reductions: without it)
    v = np.nan_to_num(v, nan=0.5)
    got, own = _flox(agg, v, g, 500), _flox(name, v, g, 500)
    if exact:
        np.testing.assert_array_equal(got, own)
    else:
        np.testing.assert_allclose(got, own, rtol=1e-5, atol=1e-5)


def test_xarray_and_in_memory_arrays():
    v, g = _data(np.float32)
    x = xr.DataArray(da.from_array(v, chunks=(3, BLOCK * 4)), dims=("s", "t"),
                     coords={"g": ("t", g)})
    with dask.config.set(split_every=2):
        r = flox.xarray.xarray_reduce(x, "g", func=tsf.aggregation("mean", BLOCK),
                                      expected_groups=np.arange(G))
    assert r.dims == ("s", "g")
    assert r.values.tobytes() == tsd.scatter(v, g, -1, dim_size=G, reduce="mean",
                                             block=BLOCK).compute().tobytes()
    # NumPy arrays: the whole call at once, the block rule with the aggregation's block
    got = flox.groupby_reduce(v, g, func=tsf.sum, expected_groups=np.arange(G))[0]
    assert got.tobytes() == ts.scatter(v, g, -1, dim_size=G, block=tsf.B.DEFAULT_BLOCK).tobytes()
    with pytest.raises(ValueError, match="no aggregation 'median'"):
        tsf.aggregation("median")
    with pytest.raises(ts.ArgumentError, match="block"):
        tsf.aggregation("sum", 0)
