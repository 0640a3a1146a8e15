"""What a small call costs from Python: a 1-D scatter-add and a gather of n elements
(n = 1, 10, 100, 1000) through tensor_scatter (on NumPy arrays, and on torch tensors) beside
np.add.at / np.take, PyTorch (scatter_add_ / index_select, and scatter_reduce_ / gather) and
JAX (a jitted .at[].add / take), in one process, the systems alternating. Into reused
outputs, and on torch tensors also allocating (torch's scatter_reduce / gather beside ours).
Then torch_scatter's API (`ts.scatter` into out= and with dim_size) beside torch's calls of the
same meaning. Each cell: the best of 5 rounds of the mean per-call time, in µs.

    bench/peers/.venv/bin/python bench/peers/overhead.py [--threads 2]

Compare with the Rust call: `cargo bench -p tensor-scatter --bench call_overhead`."""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

SIZES = [1, 10, 100, 1000]


def per_call(fn, calls: int) -> float:
    fn()
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls * 1e6)
    return best


def systems(n: int, threads: int):
    """(name, scatter-add call, gather call) for inputs of n elements into a table of n."""
    rng = np.random.default_rng(n)
    data = rng.integers(-8, 9, n).astype(np.float32)
    idx = rng.integers(0, n, n)
    upd = rng.integers(-8, 9, n).astype(np.float32)
    out = np.empty_like(data)
    want_s = data.copy()
    np.add.at(want_s, idx, upd)
    want_g = data[idx]
    found = []

    import tensor_scatter as ts
    gout = np.empty_like(data)
    found.append(("tensor_scatter",
                  lambda: ts.scatter_elements(data, idx, upd, reduction="add", out=out),
                  lambda: ts.gather(data, idx, out=gout), lambda: (out, gout)))

    def np_scatter():
        np.copyto(out, data)
        np.add.at(out, idx, upd)
    found.append(("numpy (np.add.at / np.take)", np_scatter, lambda: np.take(data, idx, out=gout),
                  lambda: (out, gout)))
    try:
        import torch
        torch.set_num_threads(threads)
        td, ti, tu = torch.from_numpy(data), torch.from_numpy(idx), torch.from_numpy(upd)
        tout, tg = torch.from_numpy(out), torch.from_numpy(gout)

        def t_scatter():
            tout.copy_(td)
            tout.scatter_add_(0, ti, tu)
        found.append(("torch (scatter_add_ / index_select)", t_scatter,
                      lambda: torch.index_select(td, 0, ti, out=tg), lambda: (out, gout)))
        def t_reduce():
            tout.copy_(td)
            tout.scatter_reduce_(0, ti, tu, "sum")
        found.append(("torch (scatter_reduce_ / gather)", t_reduce,
                      lambda: torch.gather(td, 0, ti, out=tg), lambda: (out, gout)))
        found.append(("tensor_scatter on torch tensors",
                      lambda: ts.scatter_elements(td, ti, tu, reduction="add", out=tout),
                      lambda: ts.gather(td, ti, out=tg), lambda: (out, gout)))
        # The allocating forms: each call returns a new tensor.
        made = {}

        def keep(key, f):
            def call():
                made[key] = f()
            return call
        found.append(("torch, allocating (scatter_reduce / gather)",
                      keep("s", lambda: torch.scatter_reduce(td, 0, ti, tu, "sum")),
                      keep("g", lambda: torch.gather(td, 0, ti)),
                      lambda: (made["s"].numpy(), made["g"].numpy())))
        found.append(("tensor_scatter on torch tensors, allocating",
                      keep("s", lambda: ts.scatter_elements(td, ti, tu, reduction="add")),
                      keep("g", lambda: ts.gather(td, ti)),
                      lambda: (made["s"].numpy(), made["g"].numpy())))
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_platforms", "cpu")
        jax.config.update("jax_enable_x64", True)
        jd, ji, ju = jnp.asarray(data), jnp.asarray(idx), jnp.asarray(upd)
        add = jax.jit(lambda d, i, u: d.at[i].add(u))
        take = jax.jit(lambda d, i: jnp.take(d, i, mode="clip"))
        res = {}

        def j_scatter():
            res["s"] = add(jd, ji, ju).block_until_ready()

        def j_gather():
            res["g"] = take(jd, ji).block_until_ready()
        found.append(("jax (jit .at[].add / take)", j_scatter, j_gather,
                      lambda: (np.asarray(res["s"]), np.asarray(res["g"]))))
    except ImportError:
        pass
    return found, want_s, want_g


def segment_doors(n: int):
    """torch_scatter's API on torch tensors beside torch's own calls of the same meaning:
    ([(name, call, a call from a known start)], the expected result), or None without torch.
    Into out= (its values take part: `o.scatter_reduce_(0, i, u, "sum")`
    in place) and allocating with dim_size (`u.new_zeros(n).scatter_add_(0, i, u)`, what
    torch_scatter itself runs)."""
    try:
        import torch
    except ImportError:
        return None
    import tensor_scatter as ts
    rng = np.random.default_rng(n)
    idx = rng.integers(0, n, n)
    upd = rng.integers(-8, 9, n).astype(np.float32)
    want = np.zeros(n, np.float32)
    np.add.at(want, idx, upd)
    ti, tu = torch.from_numpy(idx), torch.from_numpy(upd)
    o = torch.zeros(n)
    return [
        ("torch `o.scatter_reduce_(0, i, u, \"sum\")` (in place)",
         lambda: o.scatter_reduce_(0, ti, tu, "sum"), lambda: o.zero_().scatter_reduce_(0, ti, tu, "sum")),
        ("`ts.scatter(u, i, 0, out=o)`", lambda: ts.scatter(tu, ti, 0, out=o),
         lambda: ts.scatter(tu, ti, 0, out=o.zero_())),
        ("torch `u.new_zeros(n).scatter_add_(0, i, u)`",
         lambda: tu.new_zeros(n).scatter_add_(0, ti, tu),
         lambda: tu.new_zeros(n).scatter_add_(0, ti, tu)),
        ("`ts.scatter(u, i, 0, dim_size=n)`", lambda: ts.scatter(tu, ti, 0, dim_size=n),
         lambda: ts.scatter(tu, ti, 0, dim_size=n)),
    ], want


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[: a.threads]))
    import tensor_scatter as ts
    ts.set_default_threads(a.threads)
    rows = {}
    for n in SIZES:
        found, want_s, want_g = systems(n, a.threads)
        for name, s, g, fetch in found:
            s()
            g()
            got_s, got_g = fetch()
            assert got_s.tobytes() == want_s.tobytes() and got_g.tobytes() == want_g.tobytes(), name
        calls = 20_000 if n <= 100 else 5_000
        for rnd in range(2):  # the systems alternate, in both orders
            for name, s, g, _ in (found if rnd == 0 else found[::-1]):
                cell = rows.setdefault((name, n), [float("inf"), float("inf")])
                cell[0] = min(cell[0], per_call(s, calls))
                cell[1] = min(cell[1], per_call(g, calls))
    names = list(dict.fromkeys(name for name, _ in rows))
    print(f"{a.threads} threads; µs per call, scatter-add / gather, n elements into a table of n\n")
    print("| system | " + " | ".join(f"n = {n}" for n in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    for name in names:
        cells = [f"{rows[(name, n)][0]:.2f} / {rows[(name, n)][1]:.2f}" for n in SIZES]
        print(f"| {name} | " + " | ".join(cells) + " |")
    doors = {}
    for n in SIZES:
        doors_n = segment_doors(n)
        if doors_n is None:
            return
        found, want = doors_n
        for name, _, check in found:
            assert check().numpy().tobytes() == want.tobytes(), name
        calls = 20_000 if n <= 100 else 5_000
        for rnd in range(2):
            for name, call, _ in (found if rnd == 0 else found[::-1]):
                doors[(name, n)] = min(doors.get((name, n), float("inf")), per_call(call, calls))
    print("\ntorch_scatter's API on torch tensors: µs per scatter-add call\n")
    print("| call | " + " | ".join(f"n = {n}" for n in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    for name in dict.fromkeys(name for name, _ in doors):
        print(f"| {name} | " + " | ".join(f"{doors[(name, n)]:.2f}" for n in SIZES) + " |")


if __name__ == "__main__":
    main()
