"""The backward passes of the six operators (issue 31), side by side in one process:

* a gather's backward against a forward scatter-add of the same size (the issue's target:
  "at the speed of a forward scatter-add"): `gather_elements_vjp` vs `scatter_elements(add)`,
  `gather_vjp` vs `scatter_update(add)`;
* `scatter_elements_vjp` (add, mean, max) against PyTorch's backward of `scatter_reduce`
  (sum, mean, amax), through `torch.autograd.grad` on a recorded graph.

    bench/peers/.venv/bin/python bench/peers/vjp.py --threads 2 [--rounds 3]

f32, E = 1e6 rows of F = 32 updates into N = 1e5 rows, random destinations. Each cell is the
median of `--rounds` x 3 runs, the two sides alternating every round; results are checked
against each other (allclose).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import tensor_scatter as ts


def median_ms(fn, runs):
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return float(np.median(out)) * 1e3


def side_by_side(a, b, rounds):
    """Median times of `a` and `b`, alternating every round."""
    a(), b()
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(median_ms(a, 3))
        tb.append(median_ms(b, 3))
    return float(np.median(ta)), float(np.median(tb))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    t = args.threads
    import torch

    torch.set_num_threads(t)
    rng = np.random.default_rng(0)
    n, e, f = 100_000, 1_000_000, 32
    rows = rng.integers(0, n, e)
    idx = np.repeat(rows[:, None], f, axis=1)
    g = rng.standard_normal((e, f)).astype(np.float32)
    zeros = np.zeros((n, f), np.float32)
    print(f"threads {t}; E={e}, N={n}, F={f}, f32")
    print("| ours | baseline | ours ms | baseline ms | ratio |")
    print("|---|---|---|---|---|")
    pairs = [
        ("gather_elements_vjp", "scatter_elements add",
         lambda: ts.gather_elements_vjp(g, idx, (n, f), threads=t),
         lambda: ts.scatter_elements(zeros, idx, g, reduction="add", threads=t)),
        ("gather_vjp", "scatter_update add",
         lambda: ts.gather_vjp(g, rows, (n, f), threads=t),
         lambda: ts.scatter_update(zeros, rows, g, reduction="add", threads=t)),
    ]
    d = torch.zeros((n, f), requires_grad=True)
    u = torch.from_numpy(g).requires_grad_()
    it = torch.from_numpy(idx)
    go = torch.randn(n, f, generator=torch.Generator().manual_seed(0))
    for ours, theirs in [("add", "sum"), ("mean", "mean"), ("max", "amax")]:
        out = d.scatter_reduce(0, it, u, theirs)
        pairs.append((
            f"scatter_elements_vjp {ours}", f"torch scatter_reduce {theirs} backward",
            lambda ours=ours: ts.scatter_elements_vjp(go.numpy(), zeros, idx, g, reduction=ours,
                                                      threads=t),
            lambda out=out: torch.autograd.grad(out, (d, u), go, retain_graph=True),
        ))
    for name_a, name_b, a, b in pairs:
        ra, rb = a(), b()
        if name_a.startswith("scatter_elements_vjp"):
            assert np.allclose(ra[1], rb[1].numpy(), atol=1e-5), name_a
        else:
            assert np.allclose(ra, rb, atol=1e-4), name_a
        ma, mb = side_by_side(a, b, args.rounds)
        print(f"| {name_a} | {name_b} | {ma:.1f} | {mb:.1f} | {ma / mb:.2f} |")


if __name__ == "__main__":
    main()
