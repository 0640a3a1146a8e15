"""The same work through every door: each logical workload run through every tensor_scatter
operator that can express it (the three scatters, the three gathers, torch_scatter's `scatter`,
`segment_coo` when the index is sorted; contiguous and broadcast indices; allocating and `out=`
forms), beside NumPy's and torch's own call on it, side by side in one process, the doors
alternating every round. Every result is checked against the first door's bit for bit (ours) or
to float tolerance (the peers, whose sums may run in another order).

    bench/peers/.venv/bin/python bench/peers/doors.py [--threads 2] [--scale 1.0] [--rounds 5]

Each cell is the median over `--rounds` rounds of the median of 3 calls, in ms. Per workload:
"/ fastest door" is a door's time over the fastest of our doors on that work (target: at most
1.2), "/ best peer" over the fastest peer (target: below 1). `--smoke` runs every door once at a
tiny scale and checks the results (the test suite runs that; nothing is timed in CI).
"""

from __future__ import annotations

import argparse
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import tensor_scatter as ts


def median_ms(fn, runs):
    ts_ = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts_.append(time.perf_counter() - t)
    return float(np.median(ts_)) * 1e3


def touch_rows(shape, threads):
    """A reference row (neither ours nor a peer's) for a fresh f32 result of `shape`: its first
    touch, `np.empty` then one write per 4 KiB page from `threads` threads at once (the pages'
    faults and the system's zeroing of them), which every allocating door pays beside its `out=`
    form. (`np.empty` then a fill, minus a fill of touched memory, undercounts it: the fill runs
    in the cache the zeroing has just written.)"""
    pool = ThreadPoolExecutor(threads)

    def touch():
        a = np.empty(shape, np.float32)
        flat = a.reshape(-1)
        cut = np.linspace(0, flat.size, threads + 1).astype(np.int64) // 1024 * 1024
        list(pool.map(lambda k: flat[cut[k]:cut[k + 1]:1024].fill(0), range(threads)))
        return a

    return [("(first touch of a new result)", touch, None)]


def workloads(scale, torch, threads):
    """Yields (name, kind, [(door, fn, ours)]) per workload; its doors must run before the next
    is asked for (they read the loop's current arrays). `kind` is "in place" (the result is the
    table itself, updated) or "fresh" (a new result, or one written into a separate `out=`).
    Each fn returns its result; in-place doors run on a copy of the same table every call."""
    rng = np.random.default_rng(0)

    # 1. 1-D scatter-add: 1e7 f32 updates into 1e6 cells (np.add.at's own work).
    n, m = max(int(1e6 * scale), 8), max(int(1e7 * scale), 8)
    i = rng.integers(0, n, m)
    v = rng.standard_normal(m, dtype=np.float32)
    table = np.zeros(n, np.float32)
    x = table.copy()
    ti, tv, tx = (torch.from_numpy(a) for a in (i, v, x)) if torch else (None,) * 3

    def inplace(f, x=x, table=table):
        def run():
            x[...] = table
            return f()
        return run
    # The same table seen as a matrix, addressed by (row, column) pairs: `x[r, c] += v`.
    w = 1000 if n % 1000 == 0 else 1
    x2, rc = x.reshape(n // w, w), np.stack([i // w, i % w], axis=1)
    doors = [
        ("np.add.at", inplace(lambda: np.add.at(x, i, v) or x), False),
        ("ts.scatter_elements(out=x)", inplace(lambda: ts.scatter_elements(x, i, v, reduction="add", out=x)), True),
        ("ts.scatter_update(out=x)", inplace(lambda: ts.scatter_update(x, i, v, reduction="add", out=x)), True),
        ("ts.scatter_nd(i[:, None], out=x)", inplace(lambda: ts.scatter_nd(x, i[:, None], v, reduction="add", out=x)), True),
        ("ts.scatter(out=x)", inplace(lambda: ts.scatter(v, i, 0, out=x)), True),
        ("ts.scatter_nd(x as a matrix, (row, col), out=)",
         inplace(lambda: ts.scatter_nd(x2, rc, v, reduction="add", out=x2)), True),
    ]
    r_, c_ = rc[:, 0], rc[:, 1]
    doors += [("np.add.at(x as a matrix, (row, col))", inplace(lambda: np.add.at(x2, (r_, c_), v) or x2), False)]
    if torch:
        tx2, tr, tc = tx.view(n // w, w), torch.from_numpy(r_.copy()), torch.from_numpy(c_.copy())
        doors += [
            ("torch index_add_", inplace(lambda: tx.index_add_(0, ti, tv)), False),
            ("torch scatter_add_", inplace(lambda: tx.scatter_add_(0, ti, tv)), False),
            ("torch index_put_((row, col), accumulate=True)",
             inplace(lambda: tx2.index_put_((tr, tc), tv, accumulate=True)), False),
        ]
    yield (f"1-D add, {m:.0e} into {n:.0e} f32", "in place", doors)
    y = np.empty_like(table)
    doors = [
        ("ts.scatter_elements", lambda: ts.scatter_elements(table, i, v, reduction="add"), True),
        ("ts.scatter_elements(out=y)", lambda: ts.scatter_elements(table, i, v, reduction="add", out=y), True),
        ("ts.scatter_update", lambda: ts.scatter_update(table, i, v, reduction="add"), True),
        ("ts.scatter_nd(i[:, None])", lambda: ts.scatter_nd(table, i[:, None], v, reduction="add"), True),
        ("ts.scatter(dim_size=n)", lambda: ts.scatter(v, i, 0, dim_size=n), True),
        ("np.zeros + np.add.at", lambda: (lambda z: (np.add.at(z, i, v), z)[1])(np.zeros(n, np.float32)), False),
    ]
    if torch:
        doors += [("torch index_add", lambda: torch.zeros(n).index_add(0, ti, tv), False)]
    yield (f"1-D add, {m:.0e} into {n:.0e} f32", "fresh", doors)

    # 2. Row scatter-add / max / mean: 2e6 rows of F f32 into 2e5 rows (graph aggregation).
    e, nodes = max(int(2e6 * scale), 8), max(int(2e5 * scale), 4)
    dst = rng.integers(0, nodes, e)
    for F, reds in ((16, ("add", "max", "mean")), (64, ("add",))):
        src = rng.standard_normal((e, F), dtype=np.float32)
        bidx = np.broadcast_to(dst[:, None], (e, F))   # index.view(-1, 1).expand_as(src)
        cidx = np.ascontiguousarray(bidx)
        tab = np.zeros((nodes, F), np.float32)
        xr = tab.copy()
        t_dst, t_src, t_x = (torch.from_numpy(a) for a in (dst, src, xr)) if torch else (None,) * 3
        t_full = t_dst.view(-1, 1).expand(e, F) if torch else None
        order = np.argsort(dst, kind="stable")
        src_s, dst_s = src[order], dst[order]
        for red in reds:
            np_ufunc = {"add": np.add, "max": np.maximum}.get(red)
            torch_red = {"add": "sum", "max": "amax", "mean": "mean"}[red]
            seg_red = {"add": "sum", "max": "max", "mean": "mean"}[red]

            def inplace_r(f, xr=xr, tab=tab):
                def run():
                    xr[...] = tab
                    return f()
                return run
            doors = [
                ("ts.scatter_elements(broadcast index, out=x)",
                 inplace_r(lambda: ts.scatter_elements(xr, bidx, src, reduction=red, out=xr)), True),
                ("ts.scatter_elements(contiguous index, out=x)",
                 inplace_r(lambda: ts.scatter_elements(xr, cidx, src, reduction=red, out=xr)), True),
                ("ts.scatter_update(out=x)", inplace_r(lambda: ts.scatter_update(xr, dst, src, reduction=red, out=xr)), True),
                ("ts.scatter_nd(i[:, None], out=x)",
                 inplace_r(lambda: ts.scatter_nd(xr, dst[:, None], src, reduction=red, out=xr)), True),
                ("ts.scatter(out=x)", inplace_r(lambda: ts.scatter(src, dst, 0, out=xr, reduce=seg_red)), True),
            ]
            if np_ufunc is not None:
                doors.append((f"np.{np_ufunc.__name__}.at", inplace_r(lambda: np_ufunc.at(xr, dst, src) or xr), False))
            if torch:
                if red == "add":
                    doors.append(("torch index_add_", inplace_r(lambda: t_x.index_add_(0, t_dst, t_src)), False))
                    doors.append(("torch scatter_add_(expanded)", inplace_r(lambda: t_x.scatter_add_(0, t_full, t_src)), False))
                else:
                    doors.append(("torch index_reduce_", inplace_r(
                        lambda: t_x.index_reduce_(0, t_dst, t_src, torch_red if red != "max" else "amax")), False))
                doors.append(("torch scatter_reduce_(expanded)", inplace_r(
                    lambda: t_x.scatter_reduce_(0, t_full, t_src, torch_red)), False))
            yield (f"rows {red}, {e:.0e} x {F} into {nodes:.0e} f32", "in place", doors)
            yr = np.empty_like(tab)
            doors = [
                ("ts.scatter_elements(broadcast index)", lambda: ts.scatter_elements(tab, bidx, src, reduction=red), True),
                ("ts.scatter_elements(broadcast index, out=y)",
                 lambda: ts.scatter_elements(tab, bidx, src, reduction=red, out=yr), True),
                ("ts.scatter_update", lambda: ts.scatter_update(tab, dst, src, reduction=red), True),
                ("ts.scatter_update(out=y)", lambda: ts.scatter_update(tab, dst, src, reduction=red, out=yr), True),
                ("ts.scatter_nd(i[:, None])", lambda: ts.scatter_nd(tab, dst[:, None], src, reduction=red), True),
            ]
            if torch:
                t_tab = torch.from_numpy(tab)
                if red == "add":
                    doors.append(("torch index_add", lambda: t_tab.index_add(0, t_dst, t_src), False))
                doors.append(("torch scatter_reduce(expanded)", lambda: t_tab.scatter_reduce(0, t_full, t_src, torch_red), False))
            yield (f"rows {red}, {e:.0e} x {F} into {nodes:.0e} f32", "fresh", doors)
            if red != "add":
                continue
            # The same work with the index sorted (edges grouped by destination).
            bidx_s = np.broadcast_to(dst_s[:, None], (e, F))
            t_dst_s, t_src_s = (torch.from_numpy(a) for a in (dst_s, src_s)) if torch else (None,) * 2
            doors = [
                ("ts.scatter_update(out=x)", inplace_r(lambda: ts.scatter_update(xr, dst_s, src_s, reduction=red, out=xr)), True),
                ("ts.scatter_nd(i[:, None], out=x)",
                 inplace_r(lambda: ts.scatter_nd(xr, dst_s[:, None], src_s, reduction=red, out=xr)), True),
                ("ts.scatter_elements(broadcast index, out=x)",
                 inplace_r(lambda: ts.scatter_elements(xr, bidx_s, src_s, reduction=red, out=xr)), True),
                ("ts.scatter(out=x)", inplace_r(lambda: ts.scatter(src_s, dst_s, 0, out=xr)), True),
                ("ts.segment_coo(out=x)", inplace_r(lambda: ts.segment_coo(src_s, dst_s, out=xr)), True),
                ("np.add.at", inplace_r(lambda: np.add.at(xr, dst_s, src_s) or xr), False),
            ]
            if torch:
                doors.append(("torch index_add_", inplace_r(lambda: t_x.index_add_(0, t_dst_s, t_src_s)), False))
            yield (f"rows add, sorted index, {e:.0e} x {F} into {nodes:.0e} f32", "in place", doors)

    # 3. Row gather: 2e6 rows of 16 f32 from 2e5 (the message gather x[edge_src]).
    F = 16
    rows = rng.standard_normal((nodes, F), dtype=np.float32)
    bidx = np.broadcast_to(dst[:, None], (e, F))
    cidx = np.ascontiguousarray(bidx)
    go = np.empty((e, F), np.float32)
    doors = [
        ("ts.gather", lambda: ts.gather(rows, dst), True),
        ("ts.gather(out=)", lambda: ts.gather(rows, dst, out=go), True),
        ("ts.gather_nd(i[:, None])", lambda: ts.gather_nd(rows, dst[:, None]), True),
        ("ts.gather_elements(broadcast index)", lambda: ts.gather_elements(rows, bidx), True),
        ("ts.gather_elements(contiguous index)", lambda: ts.gather_elements(rows, cidx), True),
        ("ts.gather_coo(sorted)", lambda: ts.gather_coo(rows, np.sort(dst)), None),
        ("np.take", lambda: np.take(rows, dst, axis=0), False),
    ]
    doors = [d for d in doors if d[2] is not None] + touch_rows((e, F), threads)
    if torch:
        t_tab, t_dst = torch.from_numpy(rows), torch.from_numpy(dst)
        t_full = t_dst.view(-1, 1).expand(e, F)
        doors += [
            ("torch index_select", lambda: t_tab.index_select(0, t_dst), False),
            ("torch.gather(expanded)", lambda: torch.gather(t_tab, 0, t_full), False),
        ]
    yield (f"row gather, {e:.0e} x {F} from {nodes:.0e} f32", "fresh", doors)

    # 4. 1-D gather: 1e7 f32 from 1e6.
    t1 = rng.standard_normal(n, dtype=np.float32)
    g1 = np.empty(m, np.float32)
    doors = [
        ("ts.gather", lambda: ts.gather(t1, i), True),
        ("ts.gather(out=)", lambda: ts.gather(t1, i, out=g1), True),
        ("ts.gather_elements", lambda: ts.gather_elements(t1, i), True),
        ("ts.gather_nd(i[:, None])", lambda: ts.gather_nd(t1, i[:, None]), True),
        ("np.take", lambda: np.take(t1, i), False),
    ] + touch_rows((m,), threads)
    if torch:
        t_t1, t_i = torch.from_numpy(t1), torch.from_numpy(i)
        doors += [
            ("torch index_select", lambda: t_t1.index_select(0, t_i), False),
            ("torch.gather", lambda: torch.gather(t_t1, 0, t_i), False),
        ]
    yield (f"1-D gather, {m:.0e} from {n:.0e} f32", "fresh", doors)


def as_np(r):
    r = r[0] if isinstance(r, tuple) else r
    return r.numpy() if hasattr(r, "numpy") else np.asarray(r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="", help="run the workloads whose name contains this")
    ap.add_argument("--smoke", action="store_true", help="every door once at scale 0.001, checked")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message="index_reduce")
    if args.smoke:
        args.scale, args.rounds = 0.001, 0
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    ts.set_default_threads(args.threads)
    print(f"{args.threads} threads, scale {args.scale}, numpy {np.__version__}, torch "
          f"{torch.__version__ if torch else 'not installed'}")
    print()
    print("| workload | form | door | ms | / fastest door | / best peer |")
    print("|---|---|---|---|---|---|")
    for name, kind, doors in workloads(args.scale, torch, args.threads):
        if args.only not in name:
            continue
        ref = None
        for door, fn, ours in doors:
            got = as_np(fn()).copy()
            if ours is None:
                continue  # a reference row
            if ref is None:
                ref = got
            elif ours:
                if got.tobytes() != ref.tobytes():
                    raise SystemExit(f"{name} ({kind}): {door} differs from {doors[0][0]} in its bits")
            elif got.size != ref.size or not np.allclose(got.ravel(), ref.ravel(), rtol=1e-4, atol=1e-3):
                raise SystemExit(f"{name} ({kind}): {door} differs from {doors[0][0]}")
        if args.rounds == 0:
            print(f"| {name} | {kind} | {len(doors)} doors checked | | | |")
            continue
        times = {d: [] for d, _, _ in doors}
        for _ in range(args.rounds):
            for d, fn, _ in doors:
                times[d].append(median_ms(fn, 3))
        med = {d: float(np.median(t)) for d, t in times.items()}
        ours = {d: med[d] for d, _, o in doors if o}
        peers = {d: med[d] for d, _, o in doors if o is False}
        fastest = min(ours.values())
        best_peer = min(peers.values()) if peers else float("nan")
        for d, _, o in doors:
            rel = f"{med[d] / fastest:.2f}" if o else ""
            peer = f"{med[d] / best_peer:.2f}" if o is not None else ""
            print(f"| {name} | {kind} | {d} | {med[d]:.1f} | {rel} | {peer} |", flush=True)


if __name__ == "__main__":
    main()
