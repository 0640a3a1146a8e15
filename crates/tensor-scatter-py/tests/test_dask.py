"""tensor_scatter.dask: every reduction over Dask arrays gives the one-machine call's bits (with
the same ``block=`` for float sums, means and products) for any chunking of src and index
(ragged, one position per chunk, blocks across chunks), any cut of the output, and the sync,
threads and distributed schedulers (a LocalCluster of two worker processes, one of which is
killed mid-computation); bad inputs raise our errors when computed, with nothing written."""

import os
import time

import numpy as np
import pytest

dask = pytest.importorskip("dask")
import dask.array as da  # noqa: E402

import tensor_scatter as ts  # noqa: E402
import tensor_scatter.dask as tsd  # noqa: E402

N = 300
CHUNKINGS = [(N,), (100, 100, 100), (1, 299), (7,) * 42 + (6,), (50, 1, 120, 129)]


def _bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert a.tobytes() == b.tobytes()


def _src(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3
    flat = x.reshape(-1)
    k = rng.integers(0, flat.size, flat.size // 10)
    flat[k] = rng.choice([-0.0, np.nan, np.inf, -np.inf, 1e30], k.size)
    if np.dtype(dtype).kind in "iub":
        x = rng.integers(-50, 50, shape)
    return x.astype(dtype)


def _cases():
    """(label, one-machine thunk, Dask thunk): the same call both ways."""
    rng = np.random.default_rng(1)
    cases = []
    idx = rng.integers(0, 40, N)
    for dtype in (np.float32, np.float64, np.float16, np.int32, np.bool_):
        src = _src(dtype, (N, 3))
        reds = ["sum", "mul", "min", "max"] + ([] if dtype == np.bool_ else ["mean"])
        for red in reds:
            for ci, ch in enumerate(CHUNKINGS):
                for block in (16, 1000):
                    for oc in (None, 7, (3, 30, 7)):
                        if (ci + block + (oc is None)) % 3 and dtype != np.float32:
                            continue  # a spread of the combinations, all of them for f32
                        d = da.from_array(src, chunks=(ch, 2))
                        di = da.from_array(idx, chunks=((N // 2, N - N // 2),))
                        cases.append((
                            f"{np.dtype(dtype).name}-{red}-{ci}-{block}-{oc}",
                            lambda s=src, r=red, b=block: ts.scatter(s, idx, 0, None, 40, r,
                                                                     block=b),
                            lambda d=d, di=di, r=red, b=block, oc=oc: tsd.scatter(
                                d, di, 0, None, 40, r, block=b, out_chunks=oc)))
    # per-element index along dim 1, src chunked along both dims
    se = _src(np.float32, (3, N), 2)
    ie = rng.integers(0, 9, (3, N))
    for red in ("sum", "mean", "max"):
        for ch in CHUNKINGS[1:4]:
            cases.append((f"elements-{red}-{ch[:2]}",
                          lambda r=red: ts.scatter(se, ie, 1, None, 9, r, block=32),
                          lambda r=red, ch=ch: tsd.scatter(da.from_array(se, chunks=(2, ch)),
                                                           da.from_array(ie, chunks=(3, 50)), 1,
                                                           None, 9, r, block=32, out_chunks=4)))
    # positions, global; out= of another chunking, kept
    sp = _src(np.float64, (N, 2), 3)
    out = _src(np.float64, (40, 2), 4)
    for red in ("min", "max"):
        f, g = getattr(ts, f"scatter_{red}"), getattr(tsd, f"scatter_{red}")
        for ch in CHUNKINGS:
            cases.append((f"arg-{red}-{ch[:2]}", lambda f=f: f(sp, idx, 0, None, 40),
                          lambda g=g, ch=ch: g(da.from_array(sp, chunks=(ch, 2)), idx, 0, None,
                                               40, out_chunks=(10, 30))))
            cases.append((f"arg-out-{red}-{ch[:2]}", lambda f=f: f(sp, idx, 0, out.copy()),
                          lambda g=g, ch=ch: g(da.from_array(sp, chunks=(ch, 2)), idx, 0,
                                               da.from_array(out, chunks=(11, 1)))))
    for red in ("sum", "mean", "mul"):
        for ch in CHUNKINGS[1:]:
            cases.append((f"out-{red}-{ch[:2]}",
                          lambda r=red: ts.scatter(sp, idx, 0, out.copy(), reduce=r, block=8),
                          lambda r=red, ch=ch: tsd.scatter(da.from_array(sp, chunks=(ch, 2)),
                                                           idx, 0, da.from_array(out, chunks=7),
                                                           reduce=r, block=8)))
    # sorted segments
    si = np.sort(idx)
    indptr = np.searchsorted(si, np.arange(41))
    for red in ("sum", "mean", "min", "max"):
        for ch in CHUNKINGS[1:]:
            cases.append((f"coo-{red}-{ch[:2]}",
                          lambda r=red: ts.segment_coo(sp, si, None, 40, r, block=16),
                          lambda r=red, ch=ch: tsd.segment_coo(
                              da.from_array(sp, chunks=(ch, 2)), da.from_array(si, chunks=60),
                              None, 40, r, block=16, out_chunks=9)))
            cases.append((f"csr-{red}-{ch[:2]}",
                          lambda r=red: ts.segment_csr(sp, indptr, None, r, block=16),
                          lambda r=red, ch=ch: tsd.segment_csr(
                              da.from_array(sp, chunks=(ch, 2)), indptr, None, r, block=16,
                              out_chunks=11)))
    # the ONNX forms into a chunked Dask data (np.add.at into a table), negative indices
    data = _src(np.float32, (40, 2), 5)
    ui = rng.integers(-40, 40, N)
    upd = _src(np.float32, (N, 2), 6)
    for red in ("none", "add", "mul", "min", "max"):
        for ch in CHUNKINGS[1:]:
            cases.append((f"update-{red}-{ch[:2]}",
                          lambda r=red: ts.scatter_update(data, ui, upd, reduction=r, block=16),
                          lambda r=red, ch=ch: tsd.scatter_update(
                              da.from_array(data, chunks=(9, 1)), da.from_array(ui, chunks=ch),
                              da.from_array(upd, chunks=(ch, 2)), reduction=r, block=16)))
    de = _src(np.float64, (3, 40), 7)
    ie2 = rng.integers(0, 40, (3, N))
    ue = _src(np.float64, (3, N), 8)
    for red in ("none", "add", "max"):
        for ch in CHUNKINGS[1:]:
            cases.append((f"elements-{red}-{ch[:2]}",
                          lambda r=red: ts.scatter_elements(de, ie2, ue, axis=1, reduction=r,
                                                            block=16),
                          lambda r=red, ch=ch: tsd.scatter_elements(
                              da.from_array(de, chunks=(2, 7)), da.from_array(ie2, chunks=(3, ch)),
                              da.from_array(ue, chunks=(1, ch)), axis=1, reduction=r, block=16)))
    return cases


CASES = _cases()


def _check(cases, compute):
    """Builds every case's Dask arrays, computes them all in one call, compares by bytes."""
    lazy, parts = [], []
    for _, _, build in cases:
        r = build()
        r = r if isinstance(r, tuple) else (r,)
        parts.append(len(r))
        lazy.extend(r)
    got = iter(compute(lazy))
    for (label, plain, _), k in zip(cases, parts):
        want = plain()
        want = want if isinstance(want, tuple) else (want,)
        assert len(want) == k, label
        for w in want:
            _bits(next(got), w)


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_every_chunking_gives_the_one_machine_bits(scheduler):
    assert len(CASES) > 300
    _check(CASES, lambda lazy: dask.compute(*lazy, scheduler=scheduler))


def test_chunking_changes_nothing_but_the_block_does():
    # The block decides a float sum's bits; the chunking and the output's cut never do.
    rng = np.random.default_rng(7)
    src = rng.standard_normal(20_000).astype(np.float32) * 1e3
    idx = rng.integers(0, 3, 20_000)
    got = {}
    for block in (64, 4096):
        for ch in (20_000, 1000, 999, 64, 7000):
            r = tsd.scatter(da.from_array(src, chunks=ch), idx, 0, dim_size=3, block=block,
                            out_chunks=2).compute(scheduler="threads")
            got.setdefault(block, set()).add(r.tobytes())
    assert all(len(v) == 1 for v in got.values())
    assert got[64] != got[4096]


def test_nothing_runs_until_asked():
    calls = []

    def chunk(x):
        calls.append(1)
        return x

    src = da.from_array(np.ones(100, np.float32), chunks=10).map_blocks(
        chunk, dtype=np.float32, meta=np.empty(0, np.float32))
    r = tsd.scatter(src, np.zeros(100, np.int64), 0, dim_size=2, out_chunks=1)
    assert calls == [] and isinstance(r, da.Array) and r.chunks == ((1, 1),)
    assert r.compute(scheduler="sync").tolist() == [100.0, 0.0]
    # the ONNX forms keep data's chunks
    calls.clear()
    data = da.zeros((10, 4), chunks=(3, 2), dtype=np.float32)
    r = tsd.scatter_update(data, np.zeros((5, 20), np.int64), src.reshape(5, 20, 1) *
                           np.ones(4, np.float32), reduction="add")
    assert r.chunks == data.chunks and calls == []
    assert r.compute(scheduler="sync")[0].tolist() == [100.0] * 4


def test_errors_when_computed_and_nothing_written():
    src = da.from_array(np.ones(30, np.float32), chunks=10)
    data = np.arange(5.0, dtype=np.float32)
    bad = np.arange(30) % 5
    bad[27] = 5
    r = tsd.scatter(src, da.from_array(bad, chunks=7), 0, out=da.from_array(data, chunks=2))
    with pytest.raises(ts.OutOfRangeError,
                       match=r"scatter: index: index 5 at position \[27\] is out of range"):
        r.compute(scheduler="threads")
    assert data.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]  # the Dask data's memory untouched
    r = tsd.scatter_update(da.from_array(data, chunks=2), da.from_array(bad, chunks=7), src,
                           reduction="add")
    with pytest.raises(ts.OutOfRangeError, match=r"scatter_update: index: index 5 at position"):
        r.compute(scheduler="threads")
    ok = tsd.scatter_update(da.from_array(data, chunks=2), np.arange(30) % 5, src,
                            reduction="add").compute()
    assert ok.tolist() == [6.0, 7.0, 8.0, 9.0, 10.0]
    assert data.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    # sorted within every chunk, not across: found when computed
    coo = da.from_array(np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1] + [9] * 18), chunks=10)
    r = tsd.segment_coo(src, coo, dim_size=10)
    with pytest.raises(ts.ArgumentError, match=r"segment_coo: index: must be sorted"):
        r.compute(scheduler="sync")
    # unsorted inside one chunk: the position is the whole index's
    coo = da.from_array(np.r_[np.zeros(15, np.int64), [3, 2], np.full(13, 4)], chunks=10)
    with pytest.raises(ts.ArgumentError, match=r"but 2 at position \[16\] follows 3"):
        tsd.segment_coo(src, coo, dim_size=10).compute(scheduler="sync")
    with pytest.raises(ts.ArgumentError, match="dim_size: required with a Dask index"):
        tsd.scatter(src, da.from_array(bad, chunks=7), 0)
    with pytest.raises(ts.ArgumentError, match=r"index: its 29 entries do not match"):
        tsd.scatter(src, np.zeros(29, np.int64), 0)
    with pytest.raises(ts.ArgumentError, match="block"):
        tsd.scatter(src, np.zeros(30, np.int64), 0, block=0)
    with pytest.raises(ts.ArgumentError, match="out: expected shape"):
        tsd.scatter(src, np.zeros(30, np.int64), 0, out=da.zeros(3))
    with pytest.raises(ts.DTypeError, match="mean is not defined for bool"):
        tsd.scatter(src > 0, np.zeros(30, np.int64), 0, reduce="mean")
    with pytest.raises(ts.DTypeError, match="index: dtype float64 is not accepted"):
        tsd.scatter(src, np.zeros(30), 0, dim_size=2)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_no_task_holds_the_whole_table(reduce):
    # A 40 MB table cut into 40 output chunks: every output chunk is reduced from partials
    # restricted to its range, so the peak (all Python-side allocations, NumPy's included,
    # computing the sum of the result chunk by chunk) stays under half the table; uncut, the
    # same call holds the table at least once.
    import tracemalloc

    rng = np.random.default_rng(2)
    cells = 10_000_000
    src = da.from_array(rng.standard_normal(200_000).astype(np.float32), chunks=50_000)
    idx = da.from_array(rng.integers(0, cells, 200_000), chunks=50_000)
    peaks = []
    for out_chunks in (cells // 40, None):
        r = tsd.scatter(src, idx, 0, dim_size=cells, reduce=reduce, out_chunks=out_chunks)
        tracemalloc.start()
        try:
            r.sum().compute(scheduler="sync")
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[0] < cells * 4 // 2 <= cells * 4 <= peaks[1], peaks


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def test_cluster_of_two_processes(client):
    # Every fourth case (each kind and chunking is among them): two worker processes.
    _check(CASES[::4], lambda lazy: client.gather(client.compute(lazy)))


def test_worker_killed_mid_computation(client):
    rng = np.random.default_rng(11)
    src = rng.standard_normal(400_000).astype(np.float32)
    idx = rng.integers(0, 1000, 400_000)
    want = ts.scatter(src, idx, 0, dim_size=1000, reduce="mean", block=4096)

    def slow(x):
        time.sleep(0.1)
        return x

    d = da.from_array(src, chunks=10_000).map_blocks(slow)
    fut = client.compute(tsd.scatter(d, idx, 0, dim_size=1000, reduce="mean", block=4096,
                                     out_chunks=250))
    deadline = time.time() + 30
    while not any(client.processing().values()) and time.time() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    victim = next(w for w, tasks in client.processing().items() if tasks)
    try:
        client.run(os._exit, 1, workers=[victim])
    except Exception:  # the worker dies before it answers
        pass
    _bits(fut.result(timeout=120), want)
    client.wait_for_workers(2, timeout=60)
    # its nanny started a new worker in its place: the lost tasks ran again there
    assert victim not in client.scheduler_info()["workers"]
