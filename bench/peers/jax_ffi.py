"""Inside jax.jit (issue 54, item 7): tensor_scatter's scatter sum and max, as XLA FFI calls,
beside jax.ops.segment_sum / segment_max jitted on the same arrays, in one process, the calls
alternating every round; then the same with their gradient (jax.grad of the result's dot with
fixed random weights: a plain sum's cotangent is all ones, which XLA folds into JAX's own
backward but not into an FFI call's), then the 1-D form (1e7 updates into 1e6 cells, int32
index), then a 10-element call, where the call's fixed cost is all there is.

    crates/tensor-scatter-py/.venv/bin/python bench/peers/jax_ffi.py --threads 2 [--scale 1.0]

E = 2e6 edges, N = 1e5 nodes, F = 64, f32 (times --scale for E and N). Large cells: the median
of --rounds x 3 calls after a warm-up call (which compiles); the results are checked against
JAX's (allclose for sums, which JAX adds in another order; equal for max). The small cell: the
best of 7 rounds of 300 calls each, per call.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import tensor_scatter as ts


def pairs(n):
    ours_sum = lambda s, i: ts.scatter(s, i, dim=0, dim_size=n)  # noqa: E731
    ours_max = lambda s, i: ts.scatter(s, i, dim=0, dim_size=n, reduce="max")  # noqa: E731
    jax_sum = lambda s, i: jax.ops.segment_sum(s, i, num_segments=n)  # noqa: E731
    jax_max = lambda s, i: jax.ops.segment_max(s, i, num_segments=n)  # noqa: E731
    return {"sum": (ours_sum, jax_sum), "max": (ours_max, jax_max)}


def grad_of(f, w):
    return jax.grad(lambda s, i: (f(s, i) * w).sum())


def row(label, ours, theirs, src, idx, rounds, exact):
    """One table row: both jitted, checked against each other, the median of 3 x rounds."""
    a, b = jax.jit(ours), jax.jit(theirs)
    ra, rb = a(src, idx), b(src, idx)
    if exact:
        # A cell nothing reaches: torch_scatter's 0 for us, -inf for segment_max.
        rb = np.where(np.isneginf(rb), 0, rb)
        np.testing.assert_array_equal(np.asarray(ra), rb)
    else:
        np.testing.assert_allclose(np.asarray(ra), np.asarray(rb), rtol=1e-4, atol=1e-3)
    ta, tb = [], []
    for _ in range(3 * rounds):
        ta.append(timed(a, src, idx))
        tb.append(timed(b, src, idx))
    ma, mb = float(np.median(ta)) * 1e3, float(np.median(tb)) * 1e3
    print(f"| {label} | {ma:,.1f} | {mb:,.1f} | {ma / mb:.2f} |")


def timed(f, *args):
    t = time.perf_counter()
    jax.block_until_ready(f(*args))
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    ts.set_default_threads(args.threads)
    e, n, f = int(2e6 * args.scale), int(1e5 * args.scale), 64
    rng = np.random.default_rng(0)
    src = jnp.asarray(rng.standard_normal((e, f), dtype=np.float32))
    idx = jnp.asarray(rng.integers(0, n, e).astype(np.int32))
    print(f"E={e} N={n} F={f} f32, threads={args.threads}, jax {jax.__version__}")
    print("| call (jitted) | tensor_scatter ms | jax.ops ms | ratio |")
    print("|---|---:|---:|---:|")
    w = jnp.asarray(rng.standard_normal((n, f), dtype=np.float32))
    for label, (ours, theirs) in pairs(n).items():
        row(f"scatter {label}", ours, theirs, src, idx, args.rounds, label == "max")
        row(f"scatter {label} + grad", grad_of(ours, w), grad_of(theirs, w), src, idx,
            args.rounds, False)
    e1, n1 = int(1e7 * args.scale), int(1e6 * args.scale)
    src1 = jnp.asarray(rng.standard_normal(e1, dtype=np.float32))
    idx1 = jnp.asarray(rng.integers(0, n1, e1).astype(np.int32))
    for label, (ours, theirs) in pairs(n1).items():
        row(f"scatter {label}, 1-D", ours, theirs, src1, idx1, args.rounds, label == "max")
    s10, i10 = src[:10, 0], idx[:10] % 4
    for label, (ours, theirs) in pairs(4).items():
        a, b = jax.jit(ours), jax.jit(theirs)
        a(s10, i10), b(s10, i10)
        best = [1e9, 1e9]
        for _ in range(7):
            for k, g in enumerate((a, b)):
                t = time.perf_counter()
                for _ in range(300):
                    r = g(s10, i10)
                r.block_until_ready()
                best[k] = min(best[k], (time.perf_counter() - t) / 300)
        print(f"| scatter {label}, 10 elements (us) | {best[0] * 1e6:.1f} | "
              f"{best[1] * 1e6:.1f} | {best[0] / best[1]:.2f} |")


if __name__ == "__main__":
    main()
