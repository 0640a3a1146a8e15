"""Beyond one machine (issue 55, item 6): a scatter-add of --n f32 updates in --chunks chunks
into --cells cells, and a group mean of the same, on a LocalCluster of --workers worker
processes of one thread each: tensor_scatter.dask beside dask.array.bincount(weights=) and
flox's default engine (flox.groupby_reduce, and flox.xarray.xarray_reduce for the mean), the
calls alternating every round, in one process; then, on one machine, the Dask path with the
threads scheduler beside the one-machine call on the same arrays in memory.

    crates/tensor-scatter-py/.venv/bin/python bench/peers/dask_scatter.py [--n 1e8]

The updates and the index are made on the workers (dask.array.random) and persisted before
any timing; each cell is the median of --rounds calls of `.compute()` (the result comes back to
the client). The results are checked against each other (allclose: the peers add in other
orders; bincount returns float64).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def timed(f):
    t = time.perf_counter()
    r = f()
    return time.perf_counter() - t, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=1e8)
    ap.add_argument("--cells", type=float, default=1e6)
    ap.add_argument("--chunks", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--block", type=int, default=None)
    ap.add_argument("--skip-cluster", action="store_true")
    ap.add_argument("--skip-flox", action="store_true", help="leave flox's engine out (slow)")
    args = ap.parse_args()
    import dask
    import dask.array as da
    import distributed
    import flox
    import flox.xarray
    import xarray as xr

    import tensor_scatter as ts
    import tensor_scatter.dask as tsd

    n, cells, k = int(args.n), int(args.cells), args.chunks
    ch = -(-n // k)
    groups = np.arange(cells)
    print(f"n={n:.0e} f32 in {k} chunks into {cells:.0e} cells; dask {dask.__version__}, "
          f"flox {flox.__version__}; block={args.block or tsd.DEFAULT_BLOCK}")

    def calls(src, idx):
        x = xr.DataArray(src, dims="e", coords={"g": ("e", idx)}, name="v")
        if args.skip_flox:
            return {"sum": {
                "tensor_scatter.dask": lambda: tsd.scatter(src, idx, 0, dim_size=cells,
                                                           block=args.block),
                "dask.array.bincount": lambda: da.bincount(idx, weights=src, minlength=cells)}}
        return {
            "sum": {
                "tensor_scatter.dask": lambda: tsd.scatter(src, idx, 0, dim_size=cells,
                                                           block=args.block),
                "dask.array.bincount": lambda: da.bincount(idx, weights=src, minlength=cells),
                "flox.groupby_reduce": lambda: flox.groupby_reduce(
                    src, idx, func="sum", expected_groups=groups)[0],
            },
            "mean": {
                "tensor_scatter.dask": lambda: tsd.scatter(src, idx, 0, dim_size=cells,
                                                           reduce="mean", block=args.block),
                "flox.xarray.xarray_reduce": lambda: flox.xarray.xarray_reduce(
                    x, "g", func="mean", expected_groups=groups).data,
            },
        }

    def table(title, compute, src, idx):
        print(f"\n{title}\n| work | call | median s | vs ours |\n|---|---|---:|---:|")
        for work, peers in calls(src, idx).items():
            times = {name: [] for name in peers}
            results = {}
            for _ in range(args.rounds):
                for name, f in peers.items():
                    t, r = timed(lambda: compute(f()))
                    times[name].append(t)
                    results[name] = np.asarray(r)
            ref = results["tensor_scatter.dask"]
            for name, r in results.items():
                np.testing.assert_allclose(r, ref, rtol=1e-3, atol=1e-2)
            ours = float(np.median(times["tensor_scatter.dask"]))
            for name, t in times.items():
                m = float(np.median(t))
                print(f"| {work} | {name} | {m:.2f} | {m / ours:.2f} |")

    if not args.skip_cluster:
        with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                      processes=True, host="127.0.0.1",
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            rs = da.random.default_rng(0)
            src = rs.standard_normal(n, dtype=np.float32, chunks=ch).persist()
            idx = rs.integers(0, cells, n, chunks=ch).persist()
            distributed.wait([src, idx])
            table(f"LocalCluster, {args.workers} workers x 1 thread", lambda a: a.compute(),
                  src, idx)
            del src, idx, client

    rng = np.random.default_rng(0)
    src_np = rng.standard_normal(n, dtype=np.float32)
    idx_np = rng.integers(0, cells, n)
    src, idx = da.from_array(src_np, chunks=ch), da.from_array(idx_np, chunks=ch)
    print("\nOne machine: the Dask path (threads scheduler) / the one-machine call\n"
          "| work | Dask threads s | one-machine s | ratio |\n|---|---:|---:|---:|")
    for red in ("sum", "mean"):
        td, to = [], []
        for _ in range(args.rounds):
            t, a = timed(lambda: tsd.scatter(src, idx, 0, dim_size=cells, reduce=red,
                                             block=args.block).compute(scheduler="threads"))
            td.append(t)
            t, b = timed(lambda: ts.scatter(src_np, idx_np, 0, dim_size=cells, reduce=red,
                                            block=args.block or tsd.DEFAULT_BLOCK))
            to.append(t)
            assert a.tobytes() == b.tobytes()
        d, o = float(np.median(td)), float(np.median(to))
        print(f"| {red} (block rule) | {d:.2f} | {o:.2f} | {d / o:.2f} |")
        t, _ = timed(lambda: ts.scatter(src_np, idx_np, 0, dim_size=cells, reduce=red))
        print(f"| {red}, plain one-machine call (no block) | | {t:.2f} | |")


if __name__ == "__main__":
    main()
