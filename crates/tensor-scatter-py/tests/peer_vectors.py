"""Results of PyTorch and JAX on random small cases, recorded so that every test run (CI's,
which installs neither) checks the package against them bit for bit (test_peers.py).

Each case is a peer call and the tensor_scatter call that must give the same bits: values are
small integers (in every dtype), so sums, products and means are exact whatever order a peer
adds in, and duplicates are kept only where the peer defines the result. Regenerate with the
peers installed (bench/peers/.venv has them; the versions are recorded in the file):

    bench/peers/.venv/bin/python crates/tensor-scatter-py/tests/peer_vectors.py
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("peer_vectors.json")
CASES_PER_KIND = 12


def ints(rng, shape, dtype, lo=-4, hi=5):
    return rng.integers(lo, hi, shape).astype(dtype)


def torch_cases(rng):
    """(kind, peer call, ts call, arrays) for torch.scatter_reduce, index_add, index_copy,
    gather and index_select."""
    import torch

    tdt = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32,
           "int64": torch.int64, "float16": torch.float16, "bfloat16": torch.bfloat16}
    reduce_of = {"sum": "add", "prod": "mul", "mean": "mean", "amax": "max", "amin": "min"}
    for n in range(CASES_PER_KIND * 5):
        dname = ["float32", "float64", "int32", "int64", "float16", "bfloat16"][n % 6]
        red = list(reduce_of)[n % 5]
        include_self = bool(rng.integers(2))
        shape = tuple(int(x) for x in rng.integers(1, 5, 2))
        dim = int(rng.integers(2))
        ishape = tuple(int(rng.integers(1, 6)) if d == dim else int(rng.integers(1, shape[d] + 1))
                       for d in range(2))
        lo, hi = (-2, 3) if red == "prod" else (-4, 5)
        data = ints(rng, shape, np.float64, lo, hi)
        src = ints(rng, ishape, np.float64, lo, hi)
        idx = rng.integers(0, shape[dim], ishape)
        t = lambda a: torch.tensor(a).to(tdt[dname])
        got = t(data).scatter_reduce(dim, torch.tensor(idx), t(src), red, include_self=include_self)
        yield dict(kind="torch.scatter_reduce", op="scatter_elements", dtype=dname,
                   options=dict(axis=dim, reduction=reduce_of[red], include_self=include_self),
                   peer=f"scatter_reduce({dim}, index, src, {red!r}, include_self={include_self})",
                   data=data, indices=idx, updates=src, expected=got.to(torch.float64).numpy())
    for n in range(CASES_PER_KIND):
        dname = ["float32", "float64", "int32", "int64"][n % 4]
        shape = tuple(int(x) for x in rng.integers(1, 5, 2))
        dim = int(rng.integers(2))
        k = int(rng.integers(1, 7))
        idx = rng.integers(0, shape[dim], k)
        ushape = tuple(k if d == dim else shape[d] for d in range(2))
        data, src = ints(rng, shape, np.float64), ints(rng, ushape, np.float64)
        t = lambda a: torch.tensor(a).to(tdt[dname])
        got = t(data).index_add(dim, torch.tensor(idx), t(src))
        yield dict(kind="torch.index_add", op="scatter_update", dtype=dname,
                   options=dict(axis=dim, reduction="add"), peer=f"index_add({dim}, index, src)",
                   data=data, indices=idx, updates=src, expected=got.to(torch.float64).numpy())
        uidx = rng.permutation(shape[dim])[: min(k, shape[dim])]
        ushape = tuple(len(uidx) if d == dim else shape[d] for d in range(2))
        src = ints(rng, ushape, np.float64)
        got = t(data).index_copy(dim, torch.tensor(uidx), t(src))
        yield dict(kind="torch.index_copy", op="scatter_update", dtype=dname,
                   options=dict(axis=dim, reduction="none"), peer=f"index_copy({dim}, unique index, src)",
                   data=data, indices=uidx, updates=src, expected=got.to(torch.float64).numpy())
        gshape = tuple(int(rng.integers(1, 6)) if d == dim else int(rng.integers(1, shape[d] + 1))
                       for d in range(2))
        gidx = rng.integers(0, shape[dim], gshape)
        got = torch.gather(t(data), dim, torch.tensor(gidx))
        yield dict(kind="torch.gather", op="gather_elements", dtype=dname, options=dict(axis=dim),
                   peer=f"torch.gather(data, {dim}, index)", data=data, indices=gidx,
                   expected=got.to(torch.float64).numpy())
        sidx = rng.integers(0, shape[dim], k)
        got = torch.index_select(t(data), dim, torch.tensor(sidx))
        yield dict(kind="torch.index_select", op="gather", dtype=dname, options=dict(axis=dim),
                   peer=f"torch.index_select(data, {dim}, index)", data=data, indices=sidx,
                   expected=got.to(torch.float64).numpy())


def jax_cases(rng):
    """x.at[i].add/mul/min/max/set (out-of-range updates dropped, negative indices wrapped),
    .get(mode="clip" / "fill") and take_along_axis."""
    import jax

    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    jdt = {"float32": jnp.float32, "float64": jnp.float64, "int32": jnp.int32, "int64": jnp.int64}
    for n in range(CASES_PER_KIND * 5):
        dname = list(jdt)[n % 4]
        method = ["add", "multiply", "min", "max", "set"][n % 5]
        shape = (int(rng.integers(1, 6)), int(rng.integers(1, 4)))
        k = int(rng.integers(1, 8))
        rows = shape[0]
        if method == "set":  # JAX leaves the winner of duplicates unspecified
            idx = rng.permutation(np.arange(-rows, rows + 2))[:k]
            idx = idx[np.unique((idx % rows) if rows else idx, return_index=True)[1]]
            k = len(idx)
        else:
            idx = rng.integers(-rows - 2, rows + 2, k)  # out of range both ways: dropped
        lo, hi = (-2, 3) if method == "multiply" else (-4, 5)
        data = ints(rng, shape, np.float64, lo, hi)
        upd = ints(rng, (k, shape[1]), np.float64, lo, hi)
        x = jnp.asarray(data, jdt[dname])
        got = getattr(x.at[jnp.asarray(idx)], method)(jnp.asarray(upd, jdt[dname]), mode="drop")
        red = {"add": "add", "multiply": "mul", "min": "min", "max": "max", "set": "none"}[method]
        yield dict(kind=f"jax .at[].{method}", op="scatter_update", dtype=dname,
                   options=dict(axis=0, reduction=red, out_of_range="skip"),
                   peer=f"x.at[idx].{method}(u, mode='drop')", data=data, indices=idx, updates=upd,
                   expected=np.asarray(got, np.float64))
    for n in range(CASES_PER_KIND * 2):
        dname = list(jdt)[n % 4]
        shape = (int(rng.integers(1, 6)), int(rng.integers(1, 4)))
        idx = rng.integers(-shape[0] - 3, shape[0] + 3, int(rng.integers(1, 8)))
        data = ints(rng, shape, np.float64)
        x = jnp.asarray(data, jdt[dname])
        if n % 2:
            got = x.at[jnp.asarray(idx)].get(mode="fill", fill_value=-7)
            yield dict(kind="jax .at[].get fill", op="gather", dtype=dname,
                       options=dict(axis=0, out_of_range="fill", fill_value=-7),
                       peer="x.at[idx].get(mode='fill', fill_value=-7)", data=data, indices=idx,
                       expected=np.asarray(got, np.float64))
        else:
            got = x.at[jnp.asarray(idx)].get(mode="clip")
            yield dict(kind="jax .at[].get clip", op="gather", dtype=dname,
                       options=dict(axis=0, out_of_range="clamp"), peer="x.at[idx].get(mode='clip')",
                       data=data, indices=idx, expected=np.asarray(got, np.float64))
    for n in range(CASES_PER_KIND):
        dname = list(jdt)[n % 4]
        shape = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
        axis = int(rng.integers(2))
        ishape = tuple(int(rng.integers(1, 6)) if d == axis else shape[d] for d in range(2))
        idx = rng.integers(-shape[axis], shape[axis], ishape)
        data = ints(rng, shape, np.float64)
        got = jnp.take_along_axis(jnp.asarray(data, jdt[dname]), jnp.asarray(idx), axis=axis)
        yield dict(kind="jnp.take_along_axis", op="gather_elements", dtype=dname,
                   options=dict(axis=axis), peer=f"jnp.take_along_axis(data, idx, axis={axis})",
                   data=data, indices=idx, expected=np.asarray(got, np.float64))


def main() -> None:
    import jax
    import torch

    rng = np.random.default_rng(20261125)
    cases = []
    for case in [*torch_cases(rng), *jax_cases(rng)]:
        for name in ("data", "indices", "updates", "expected"):
            if name in case:
                a = np.asarray(case[name])
                # Integers as integers, except -0.0, whose sign is part of the result.
                values = [int(v) if float(v).is_integer() and math.copysign(1, v) > 0 else float(v)
                          for v in a.ravel().tolist()]
                case[name] = dict(shape=list(a.shape), values=values)
        cases.append(case)
    versions = dict(torch=torch.__version__, jax=jax.__version__, numpy=np.__version__)
    text = json.dumps(dict(source=__doc__.split("\n\n")[0], versions=versions, cases=cases),
                      separators=(",", ":"))
    OUT.write_text(text.replace('{"kind"', '\n{"kind"') + "\n")
    print(f"{len(cases)} cases from {versions} -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
