"""A compiled two-layer GNN (issue 53, item 10): mean aggregation, then attention weights by
a softmax over each node's in-edges and a weighted sum, forward and backward, written with
tensor_scatter and written with torch's own index_add_ / scatter_reduce, each compiled with
torch.compile(fullgraph=True) and the default backend (inductor), in one process, the two
alternating every round.

    crates/tensor-scatter-py/.venv/bin/python bench/peers/compiled_gnn.py --threads 2 [--scale 1.0]

E = 2e6 edges, N = 1e5 nodes, F = 64, f32 (times --scale for E and N). Each cell: the median
of --rounds x 3 steps after two warm-up steps (the first compiles); the two models' outputs
and gradients are checked against each other (allclose: torch's sums run in another order).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import tensor_scatter as ts


class Ours(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        torch.manual_seed(0)
        self.lin1 = torch.nn.Linear(f, f)
        self.att = torch.nn.Linear(f, 1)
        self.lin2 = torch.nn.Linear(f, f)

    def forward(self, x, src, dst):
        n = x.shape[0]
        h = ts.scatter(ts.gather(self.lin1(x), src), dst, 0, dim_size=n, reduce="mean").relu()
        e = self.att(ts.gather(h, src)).squeeze(-1)
        a = ts.scatter_softmax(e, dst, 0, dim_size=n)
        return ts.scatter(a.unsqueeze(-1) * ts.gather(self.lin2(h), src), dst, 0, dim_size=n)


class Torch(Ours):
    """The same model with torch's own scatters (what PyG runs without torch_scatter)."""

    def forward(self, x, src, dst):
        n, f = x.shape
        ones = torch.ones_like(dst, dtype=x.dtype)
        count = torch.zeros(n, dtype=x.dtype).index_add_(0, dst, ones).clamp_(min=1)
        msg = self.lin1(x)[src]
        h = (torch.zeros(n, f, dtype=x.dtype).index_add_(0, dst, msg) / count[:, None]).relu()
        e = self.att(h[src]).squeeze(-1)
        m = torch.full((n,), float("-inf"), dtype=x.dtype).scatter_reduce(
            0, dst, e, "amax", include_self=True)
        ex = (e - m[dst]).exp()
        s = torch.zeros(n, dtype=x.dtype).index_add_(0, dst, ex)
        a = ex / s[dst]
        return torch.zeros(n, f, dtype=x.dtype).index_add_(0, dst, a[:, None] * self.lin2(h)[src])


def step(model, x, src, dst):
    out = model(x, src, dst)
    grads = torch.autograd.grad(out.square().mean(), list(model.parameters()))
    return out, grads


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ts.set_default_threads(args.threads)
    e, n, f = int(2e6 * args.scale), int(1e5 * args.scale), 64
    g = torch.Generator().manual_seed(1)
    x = torch.randn(n, f, generator=g)
    src = torch.randint(0, n, (e,), generator=g)
    dst = torch.randint(0, n, (e,), generator=g)
    models = {"tensor_scatter": Ours(f), "torch (index_add_ / scatter_reduce)": Torch(f)}
    compiled = {}
    for name, m in models.items():
        t = time.perf_counter()
        c = torch.compile(m, fullgraph=True)
        step(c, x, src, dst)
        compiled[name] = c
        print(f"{name}: first step (compiles) {time.perf_counter() - t:.1f} s", flush=True)
    (oa, ga), (ob, gb) = (step(c, x, src, dst) for c in compiled.values())
    assert torch.allclose(oa, ob, rtol=1e-3, atol=1e-5), (oa - ob).abs().max()
    for a, b in zip(ga, gb):
        assert torch.allclose(a, b, rtol=1e-3, atol=1e-6), (a - b).abs().max()
    times = {name: [] for name in compiled}
    for _ in range(args.rounds):
        for name, c in compiled.items():
            for _ in range(3):
                t = time.perf_counter()
                step(c, x, src, dst)
                times[name].append(time.perf_counter() - t)
    base = float(np.median(times["torch (index_add_ / scatter_reduce)"]))
    print(f"\nE={e} N={n} F={f} f32, {args.threads} threads, forward + backward, "
          f"median of {3 * args.rounds} steps:")
    print("| model | ms | ratio to torch's |\n|---|---:|---:|")
    for name, ts_ in times.items():
        med = float(np.median(ts_))
        print(f"| {name} (compiled) | {med * 1e3:.0f} | {med / base:.2f} |")


if __name__ == "__main__":
    main()
