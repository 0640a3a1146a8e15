"""The benchmark workloads: W1-W6 and the gathers G1-G2 from the issues (see ../../BENCHMARKS.md
and shared research perf.md), plus W7 and G3, the element scatter and the gather along the last
axis, where an early version of tensor-scatter was 3x slower than PyTorch, and W8, a 1-D
scatter-add into a destination that fits L2, where the bucketed kernel was 2.3x slower than
PyTorch's plain loop at 1 thread.

Every workload is built from a fixed seed with whole-number values, so every reduction is
exact in every summation order and all systems must agree bit for bit.
"""
import numpy as np

# `make(name, scale)` builds one; `scale` shrinks the sizes for smoke runs.
WORKLOADS = ["W1", "W2", "W3a", "W3b", "W4", "W5", "W6", "W7", "W8", "G1", "G2", "G3"]

DESCRIPTIONS = {
    "W1": "ScatterElements axis 0, f32 data [4096,4096], idx [1024,4096] unique per column, none",
    "W2": "W1 with random (duplicate) indices, add",
    "W3a": "ScatterND rows, f32 data [1e6,64], idx [1e5,1] random, add",
    "W3b": "ScatterND rows, unique indices, none",
    "W4": "ScatterUpdate axis 1, f32 data [1000,256,10,15], idx [125,20]",
    "W5": "1-D scatter-add, f32 data [1e6], idx [1e7] random",
    "W6": "W1 in f16",
    "W7": "ScatterElements axis 1 (the last), f32 data [4096,4096], idx [4096,1024] random, add",
    "W8": "1-D scatter-add, f32 data [4e5] (1.6 MB, fits L2), idx [2e6] random",
    "G1": "Gather (embedding lookup), f32 table [1e6,64], idx [1e5] random rows",
    "G2": "GatherElements (take_along_axis) axis 1, f32 data [4096,4096], idx [4096,1024] random",
    "G3": "Gather axis 1 (index_select on the last dim), f32 data [4096,4096], idx [1024] random",
}


def ints(rng, shape, dtype):
    return rng.integers(-8, 9, size=shape).astype(dtype)


def make(name, scale=1.0):
    """Returns dict(op, axis, reduction, data, indices, updates)."""
    rng = np.random.default_rng([ord(c) for c in name])
    s = lambda n: max(1, int(n * scale))
    if name in ("W1", "W2", "W6"):
        n, k, m = s(4096), s(1024), s(4096)
        dt = np.float16 if name == "W6" else np.float32
        data = ints(rng, (n, m), dt)
        if name == "W2":
            idx = rng.integers(0, n, size=(k, m), dtype=np.int64)
        else:
            # unique per column: the first k of an independent permutation per column
            idx = np.argsort(rng.random((n, m)), axis=0)[:k].astype(np.int64)
        upd = ints(rng, (k, m), dt)
        red = "add" if name == "W2" else "none"
        return dict(op="scatter_elements", axis=0, reduction=red, data=data, indices=idx, updates=upd)
    if name == "W7":
        n, k = s(4096), s(1024)
        data = ints(rng, (n, n), np.float32)
        idx = rng.integers(0, n, size=(n, k), dtype=np.int64)
        upd = ints(rng, (n, k), np.float32)
        return dict(op="scatter_elements", axis=1, reduction="add", data=data, indices=idx, updates=upd)
    if name in ("W3a", "W3b"):
        n, k = s(1_000_000), s(100_000)
        data = ints(rng, (n, 64), np.float32)
        if name == "W3a":
            idx = rng.integers(0, n, size=(k, 1), dtype=np.int64)
        else:
            idx = rng.permutation(n)[:k].reshape(k, 1).astype(np.int64)
        upd = ints(rng, (k, 64), np.float32)
        red = "add" if name == "W3a" else "none"
        return dict(op="scatter_nd", axis=0, reduction=red, data=data, indices=idx, updates=upd)
    if name == "W4":
        b, a = s(1000), 256
        data = ints(rng, (b, a, 10, 15), np.float32)
        idx = rng.integers(0, a, size=(125, 20), dtype=np.int64)
        table = ints(rng, (b, a, 10, 15), np.float32)
        # duplicates carry identical slices, so "last write wins" is the same for everyone
        upd = np.ascontiguousarray(table[:, idx])
        return dict(op="scatter_update", axis=1, reduction="none", data=data, indices=idx, updates=upd)
    if name in ("W5", "W8"):
        n, k = (s(1_000_000), s(10_000_000)) if name == "W5" else (s(400_000), s(2_000_000))
        data = ints(rng, (n,), np.float32)
        idx = rng.integers(0, n, size=(k,), dtype=np.int64)
        upd = ints(rng, (k,), np.float32)
        return dict(op="scatter_elements", axis=0, reduction="add", data=data, indices=idx, updates=upd)
    if name == "G1":
        n, k = s(1_000_000), s(100_000)
        data = ints(rng, (n, 64), np.float32)
        idx = rng.integers(0, n, size=(k,), dtype=np.int64)
        return dict(op="gather", axis=0, reduction="none", data=data, indices=idx)
    if name == "G2":
        n, k = s(4096), s(1024)
        data = ints(rng, (n, n), np.float32)
        idx = rng.integers(0, n, size=(n, k), dtype=np.int64)
        return dict(op="gather_elements", axis=1, reduction="none", data=data, indices=idx)
    if name == "G3":
        n, k = s(4096), s(1024)
        data = ints(rng, (n, n), np.float32)
        idx = rng.integers(0, n, size=(k,), dtype=np.int64)
        return dict(op="gather", axis=1, reduction="none", data=data, indices=idx)
    raise KeyError(name)


def elements_key(w, idx):
    """The NumPy index of a 1-D or 2-D ScatterElements: `idx` along the axis, the other
    coordinate broadcast."""
    data = w["data"]
    if data.ndim == 1:
        return idx
    if w["axis"] == 0:
        return (idx, np.broadcast_to(np.arange(data.shape[1]), idx.shape))
    return (np.broadcast_to(np.arange(data.shape[0])[:, None], idx.shape), idx)


def is_gather(w):
    return w["op"].startswith("gather")


def reference(w):
    """The expected output, by NumPy (exact: whole numbers)."""
    if w["op"] == "gather":
        return np.take(w["data"], w["indices"], axis=w["axis"])
    if w["op"] == "gather_elements":
        return np.take_along_axis(w["data"], w["indices"], axis=w["axis"])
    data, idx, upd = w["data"], w["indices"], w["updates"]
    out = data.copy()
    if w["op"] == "scatter_elements":
        key = elements_key(w, idx)
        if w["reduction"] == "add":
            np.add.at(out, key, upd)
        else:
            out[key] = upd
    elif w["op"] == "scatter_nd":
        rows = idx[:, 0]
        if w["reduction"] == "add":
            np.add.at(out, rows, upd)
        else:
            out[rows] = upd
    else:  # scatter_update axis 1, identical duplicates
        out[:, idx.reshape(-1)] = upd.reshape(upd.shape[0], -1, *upd.shape[3:])
    return out


def min_bytes(w):
    """Bytes an out-of-place run must move: read data + write output + read indices + updates;
    for a gather, read the gathered values + write them + read indices."""
    if is_gather(w):
        out = reference(w)
        return 2 * out.nbytes + w["indices"].nbytes
    return 2 * w["data"].nbytes + w["indices"].nbytes + w["updates"].nbytes
