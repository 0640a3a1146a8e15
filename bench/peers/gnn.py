"""The graph-learning workloads of issue 30, side by side in one process: tensor_scatter's
torch_scatter API against PyTorch, JAX and numpy_groupies (torch_scatter and PyG are timed when
installed), with the memory-bandwidth floor of each workload.

    bench/peers/.venv/bin/python bench/peers/gnn.py --threads 2 [--scale 1.0] [--rounds 3]

Workloads (f32 unless said): (a) E = 2e6 messages, N = 1e5 nodes, F = 64, random destinations:
sum, mean, max, max with argmax; (b) the same sorted, via segment_coo / segment_csr; (c)
softmax of [E, 8] scores by destination; (d) (a)'s sum in bf16 with F = 128; (e) the backward of
(a)'s sum and mean (issue 31; `tensor_scatter (torch autograd)` is ours through torch.autograd,
not counted as a peer). Each cell is the
median of `--rounds` x 3 runs, the systems alternating every round; every result is checked
against the first system's (allclose: the peers' float sums run in another order).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def median_ms(fn, runs):
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e3


def floor_ms(nbytes, threads):
    """The time to move `nbytes` at the machine's copy bandwidth (a copy of B moves 2B)."""
    import torch
    torch.set_num_threads(threads)
    n = max(nbytes // 2 // 4, 1)
    s, d = torch.ones(n), torch.empty(n)
    d.copy_(s)
    return median_ms(lambda: d.copy_(s), 5)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="run the workloads whose name starts with this")
    args = ap.parse_args()
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import ml_dtypes
    import numpy_groupies as npg
    import torch

    import tensor_scatter as ts

    torch.set_num_threads(args.threads)
    ts.set_default_threads(args.threads)
    try:
        import torch_scatter
    except ImportError:
        torch_scatter = None
    try:
        import torch_geometric.utils as pyg
    except ImportError:
        pyg = None

    E, N, F = int(2e6 * args.scale), int(1e5 * args.scale), 64
    rng = np.random.default_rng(0)
    src = rng.standard_normal((E, F), dtype=np.float32)
    dst = rng.integers(0, N, E).astype(np.int64)
    order = np.argsort(dst, kind="stable")
    src_s, dst_s = src[order], dst[order]
    indptr = np.searchsorted(dst_s, np.arange(N + 1)).astype(np.int64)
    counts = np.diff(indptr)
    scores = rng.standard_normal((E, 8), dtype=np.float32)
    src_bf = rng.standard_normal((E, 128), dtype=np.float32).astype(ml_dtypes.bfloat16)

    t_src, t_dst = torch.from_numpy(src), torch.from_numpy(dst)
    t_full = t_dst.view(-1, 1).expand(E, F)
    t_src_s, t_len = torch.from_numpy(src_s), torch.from_numpy(counts)
    t_dst_s, t_indptr = torch.from_numpy(dst_s), torch.from_numpy(indptr)
    t_scores = torch.from_numpy(scores)
    t_full8 = t_dst.view(-1, 1).expand(E, 8)
    t_bf = torch.from_numpy(src_bf.view(np.int16)).view(torch.bfloat16)
    t_full128 = t_dst.view(-1, 1).expand(E, 128)
    j_src, j_dst = jnp.asarray(src), jnp.asarray(dst)
    j_src_s, j_dst_s = jnp.asarray(src_s), jnp.asarray(dst_s)
    j_scores = jnp.asarray(scores)
    j_bf = jnp.asarray(src_bf)
    seg_sum = jax.jit(lambda x, i: jax.ops.segment_sum(x, i, N))
    seg_sum_sorted = jax.jit(lambda x, i: jax.ops.segment_sum(x, i, N, indices_are_sorted=True))
    seg_max = jax.jit(lambda x, i: jax.ops.segment_max(x, i, N))
    ones = jnp.ones(E, jnp.float32)
    seg_mean = jax.jit(lambda x, i: jax.ops.segment_sum(x, i, N) /
                       jnp.maximum(jax.ops.segment_sum(ones, i, N), 1)[:, None])

    def jax_softmax(x, i):
        m = jax.ops.segment_max(x, i, N)
        e = jnp.exp(x - m[i])
        return e / jax.ops.segment_sum(e, i, N)[i]
    jax_softmax = jax.jit(jax_softmax)

    def torch_argmax(x):
        """The two passes a torch user writes: the max, then the first position holding it."""
        mx = torch.zeros(N, F).scatter_reduce_(0, t_full, x, "amax", include_self=False)
        pos = torch.arange(E).view(-1, 1).expand(E, F)
        hit = torch.where(x == mx[t_dst], pos, torch.full_like(pos, E))
        arg = torch.full((N, F), E).scatter_reduce_(0, t_full, hit, "amin", include_self=True)
        return mx, arg

    def torch_softmax(x, full):
        mx = torch.zeros(N, x.shape[1]).scatter_reduce_(0, full, x, "amax", include_self=False)
        e = (x - mx[t_dst]).exp()
        s = torch.zeros(N, x.shape[1]).index_add_(0, t_dst, e)
        return e / s[t_dst]

    # (e): the backward of (a)'s sum and mean, given the gradient of the [N, F] result. The
    # torch systems run autograd's backward of a graph built once (retain_graph).
    g_out = rng.standard_normal((N, F), dtype=np.float32)
    t_g, j_g = torch.from_numpy(g_out), jnp.asarray(g_out)
    xs = t_src.clone().requires_grad_()

    def torch_bwd(y):
        return lambda: torch.autograd.grad(y, xs, t_g, retain_graph=True)[0]
    bwd_of = {
        "torch index_add": torch.zeros(N, F).index_add(0, t_dst, xs),
        "torch scatter_reduce sum": torch.zeros(N, F).scatter_reduce(0, t_full, xs, "sum", include_self=False),
        "torch scatter_reduce mean": torch.zeros(N, F).scatter_reduce(0, t_full, xs, "mean", include_self=False),
        "tensor_scatter autograd sum": ts.scatter(xs, t_dst, 0, None, N, "sum"),
        "tensor_scatter autograd mean": ts.scatter(xs, t_dst, 0, None, N, "mean"),
    }
    if torch_scatter:
        bwd_of["torch_scatter sum"] = torch_scatter.scatter(xs, t_dst, 0, dim_size=N)
        bwd_of["torch_scatter mean"] = torch_scatter.scatter(xs, t_dst, 0, dim_size=N, reduce="mean")
    jax_vjp_sum = jax.jit(lambda x, i, g: jax.vjp(lambda x: jax.ops.segment_sum(x, i, N), x)[1](g)[0])
    jax_vjp_mean = jax.jit(lambda x, i, g: jax.vjp(lambda x: seg_mean(x, i), x)[1](g)[0])

    f32b, i64b = 4, 8
    w = {
        "a sum": (E * F * f32b + E * i64b + N * F * f32b, {
            "tensor_scatter": lambda: ts.scatter(src, dst, 0, None, N, "sum"),
            "torch index_add_": lambda: torch.zeros(N, F).index_add_(0, t_dst, t_src),
            "torch scatter_reduce": lambda: torch.zeros(N, F).scatter_reduce_(0, t_full, t_src, "sum", include_self=False),
            "jax segment_sum": lambda: seg_sum(j_src, j_dst).block_until_ready(),
            "numpy_groupies": lambda: npg.aggregate(dst, src, "sum", size=N, axis=0),
            **({"torch_scatter": lambda: torch_scatter.scatter(t_src, t_dst, 0, dim_size=N)} if torch_scatter else {}),
            **({"pyg scatter": lambda: pyg.scatter(t_src, t_dst, 0, dim_size=N, reduce="sum")} if pyg else {}),
        }),
        "a mean": (E * F * f32b + E * i64b + N * F * f32b, {
            "tensor_scatter": lambda: ts.scatter(src, dst, 0, None, N, "mean"),
            "torch scatter_reduce": lambda: torch.zeros(N, F).scatter_reduce_(0, t_full, t_src, "mean", include_self=False),
            "jax segment_sum / count": lambda: seg_mean(j_src, j_dst).block_until_ready(),
            "numpy_groupies": lambda: npg.aggregate(dst, src, "mean", size=N, axis=0, fill_value=0),
            **({"torch_scatter": lambda: torch_scatter.scatter(t_src, t_dst, 0, dim_size=N, reduce="mean")} if torch_scatter else {}),
            **({"pyg scatter": lambda: pyg.scatter(t_src, t_dst, 0, dim_size=N, reduce="mean")} if pyg else {}),
        }),
        "a max": (E * F * f32b + E * i64b + N * F * f32b, {
            "tensor_scatter": lambda: ts.scatter(src, dst, 0, None, N, "max"),
            "torch scatter_reduce": lambda: torch.zeros(N, F).scatter_reduce_(0, t_full, t_src, "amax", include_self=False),
            "jax segment_max": lambda: seg_max(j_src, j_dst).block_until_ready(),
            "numpy_groupies": lambda: npg.aggregate(dst, src, "max", size=N, axis=0, fill_value=0),
            **({"torch_scatter": lambda: torch_scatter.scatter(t_src, t_dst, 0, dim_size=N, reduce="max")} if torch_scatter else {}),
            **({"pyg scatter": lambda: pyg.scatter(t_src, t_dst, 0, dim_size=N, reduce="max")} if pyg else {}),
        }),
        "a max+argmax": (E * F * f32b + E * i64b + N * F * (f32b + i64b), {
            "tensor_scatter": lambda: ts.scatter_max(src, dst, 0, None, N),
            "torch two passes": lambda: torch_argmax(t_src),
            **({"torch_scatter": lambda: torch_scatter.scatter_max(t_src, t_dst, 0, dim_size=N)} if torch_scatter else {}),
        }),
        "b segment_coo sum": (E * F * f32b + E * i64b + N * F * f32b, {
            "tensor_scatter": lambda: ts.segment_coo(src_s, dst_s, None, N),
            "torch segment_reduce": lambda: torch.segment_reduce(t_src_s, "sum", lengths=t_len, axis=0),
            "jax segment_sum sorted": lambda: seg_sum_sorted(j_src_s, j_dst_s).block_until_ready(),
            **({"torch_scatter": lambda: torch_scatter.segment_coo(t_src_s, t_dst_s, dim_size=N)} if torch_scatter else {}),
        }),
        "b segment_csr sum": (E * F * f32b + N * i64b + N * F * f32b, {
            "tensor_scatter": lambda: ts.segment_csr(src_s, indptr),
            "torch segment_reduce": lambda: torch.segment_reduce(t_src_s, "sum", lengths=t_len, axis=0),
            **({"torch_scatter": lambda: torch_scatter.segment_csr(t_src_s, t_indptr)} if torch_scatter else {}),
        }),
        "c softmax [E, 8]": (2 * E * 8 * f32b + E * i64b, {
            "tensor_scatter": lambda: ts.scatter_softmax(scores, dst, 0, N),
            "torch (max, exp, index_add_)": lambda: torch_softmax(t_scores, t_full8),
            "jax": lambda: jax_softmax(j_scores, j_dst).block_until_ready(),
            **({"pyg softmax": lambda: pyg.softmax(t_scores, t_dst, num_nodes=N)} if pyg else {}),
            **({"torch_scatter": lambda: torch_scatter.composite.scatter_softmax(t_scores, t_dst, 0, dim_size=N)} if torch_scatter else {}),
        }),
        "d sum bf16, F=128": (E * 128 * 2 + E * i64b + N * 128 * 2, {
            "tensor_scatter": lambda: ts.scatter(src_bf, dst, 0, None, N, "sum"),
            "torch index_add_": lambda: torch.zeros(N, 128, dtype=torch.bfloat16).index_add_(0, t_dst, t_bf),
            "torch scatter_reduce": lambda: torch.zeros(N, 128, dtype=torch.bfloat16).scatter_reduce_(0, t_full128, t_bf, "sum", include_self=False),
            "jax segment_sum": lambda: seg_sum(j_bf, j_dst).block_until_ready(),
            **({"torch_scatter": lambda: torch_scatter.scatter(t_bf, t_dst, 0, dim_size=N)} if torch_scatter else {}),
        }),
        "e backward of sum": (E * F * f32b + E * i64b + N * F * f32b, {
            "tensor_scatter": lambda: ts.scatter_vjp(g_out, src, dst, 0, None, N, "sum")[0],
            "tensor_scatter (torch autograd)": torch_bwd(bwd_of["tensor_scatter autograd sum"]),
            "torch index_add": torch_bwd(bwd_of["torch index_add"]),
            "torch scatter_reduce": torch_bwd(bwd_of["torch scatter_reduce sum"]),
            "jax segment_sum vjp": lambda: jax_vjp_sum(j_src, j_dst, j_g).block_until_ready(),
            **({"torch_scatter": torch_bwd(bwd_of["torch_scatter sum"])} if torch_scatter else {}),
        }),
        "e backward of mean": (E * F * f32b + E * i64b + N * F * f32b, {
            "tensor_scatter": lambda: ts.scatter_vjp(g_out, src, dst, 0, None, N, "mean")[0],
            "tensor_scatter (torch autograd)": torch_bwd(bwd_of["tensor_scatter autograd mean"]),
            "torch scatter_reduce": torch_bwd(bwd_of["torch scatter_reduce mean"]),
            "jax vjp of segment_sum / count": lambda: jax_vjp_mean(j_src, j_dst, j_g).block_until_ready(),
            **({"torch_scatter": torch_bwd(bwd_of["torch_scatter mean"])} if torch_scatter else {}),
        }),
    }

    print(f"E={E} N={N} F={F}, {args.threads} threads, numpy {np.__version__}, torch {torch.__version__}, "
          f"jax {jax.__version__}, numpy_groupies {npg.__version__}, torch_scatter "
          f"{getattr(torch_scatter, '__version__', 'not installed')}, torch_geometric "
          f"{'installed' if pyg else 'not installed'}")
    print()
    print("| workload | floor ms | tensor_scatter ms | best peer | its ms | ours / best peer | ours / floor | every system (ms) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (nbytes, systems) in w.items():
        if not name.startswith(args.only):
            continue
        outs = {s: f() for s, f in systems.items()}  # warm-up (JIT), and the check
        ref = outs["tensor_scatter"]
        ref = ref[0] if isinstance(ref, tuple) else ref
        ref = np.asarray(ref).astype(np.float64)
        for s, o in outs.items():
            o = o[0] if isinstance(o, tuple) else o
            o = np.asarray(o.float() if hasattr(o, "float") and "bfloat16" in str(getattr(o, "dtype", "")) else o).astype(np.float64)
            # bf16 peers round after every update (ours: once, from an f32 sum).
            rtol, atol = (0.05, 1.0) if "bf16" in name else (1e-4, 1e-4)
            if not np.allclose(o, ref, rtol=rtol, atol=atol):
                raise SystemExit(f"{name}: {s} differs from tensor_scatter by {np.nanmax(np.abs(o - ref))}")
        times = {s: [] for s in systems}
        for _ in range(args.rounds):
            for s, f in systems.items():
                times[s].append(median_ms(f, 3))
        med = {s: float(np.median(v)) for s, v in times.items()}
        ours = med["tensor_scatter"]
        peers = {s: t for s, t in med.items() if not s.startswith("tensor_scatter")}
        best = min(peers, key=peers.get)
        fl = floor_ms(nbytes, args.threads)
        every = ", ".join(f"{s} {t:.1f}" for s, t in med.items())
        print(f"| {name} | {fl:.1f} | {ours:.1f} | {best} | {peers[best]:.1f} | "
              f"{ours / peers[best]:.2f} | {ours / fl:.2f} | {every} |", flush=True)


if __name__ == "__main__":
    main()
