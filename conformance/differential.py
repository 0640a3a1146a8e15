"""Differential testing: tensor-scatter against ONNX Runtime and a literal NumPy reference.

For every ONNX operator we implement (ScatterElements and ScatterND with each reduction,
Gather, GatherElements, GatherND, TensorScatter) it generates random valid cases from a fixed
seed: every dtype, int32/int64 indices where ONNX allows them, duplicates, negative indices,
zero-size dimensions, NaN/inf/±0 and integer extremes. Each case runs through
`tensor-scatter onnx` (the library's ONNX adapter) and is compared with

  * the NumPy reference below (one literal loop per operator, our documented semantics: last
    update wins for duplicates with `none`, reductions fold in row-major index order from the
    data value, IEEE minimum/maximum for min/max, bool add/mul/max/min = OR/AND/OR/AND):
    always, exact (NaN matches NaN, the sign of zero counts);
  * ONNX Runtime (one thread), where ONNX defines the result: exact, except float add/mul on
    non-whole values, where ORT's order of combination may differ from ours and a relative
    tolerance (stated below) applies. Not compared, and counted: duplicates with `none`
    (undefined in ONNX), min/max with NaN or signed zeros (peers disagree; DESIGN.md), and
    dtypes ORT does not implement for the operator.

Then bad-input cases (index = size, index = -size-1, i64/i32 extremes, axis = ±rank,
an unknown reduction, wrong updates shape, GatherND k = 0, TensorScatter past the end), which
must be errors in ours with no output file written.

Environment: DIFF_CASES (cases per operator × reduction, default 2000), DIFF_SEED (default 2026).
"""
from __future__ import annotations

import os
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from harness import run_batch, same_values

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = ["float64", "float32", "float16", "bfloat16"]
INTS = ["int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8"]
DTYPES = FLOATS + INTS + ["bool"]
REDUCTIONS = ["none", "add", "mul", "max", "min"]
OPSET = {"ScatterElements": 18, "ScatterND": 18, "Gather": 13, "GatherElements": 13,
         "GatherND": 13, "TensorScatter": 24}
# Relative tolerance for float add/mul against ORT on non-whole values only.
RTOL = {"float64": 1e-12, "float32": 1e-5, "float16": 1e-2, "bfloat16": 6e-2}


def npdtype(name: str) -> np.dtype:
    return BF16 if name == "bfloat16" else np.dtype(name)


# --------------------------------------------------------------------------------------------
# The NumPy reference: our documented semantics, literally.

def combine(red: str, a, b, dt: np.dtype):
    if dt == np.bool_:
        return {"none": b, "add": a or b, "mul": a and b, "max": a or b, "min": a and b}[red]
    if red == "none":
        return b
    if dt.kind == "f" or dt == BF16:
        x, y = float(a), float(b)
        if red in ("max", "min"):
            if np.isnan(x) or np.isnan(y):
                return dt.type(np.nan)
            if x == y == 0.0:  # -0 < +0
                neg = np.signbit(x) if red == "max" else not np.signbit(x)
                return b if neg else a
            return a if (x > y if red == "max" else x < y) else b
        r = dt.type(np.float32(x) + np.float32(y) if dt in (np.float16, BF16) else a + b) if red == "add" else \
            dt.type(np.float32(x) * np.float32(y) if dt in (np.float16, BF16) else a * b)
        return dt.type(np.nan) if np.isnan(float(r)) else r
    # integers: wrapping, as in the library
    if red in ("max", "min"):
        return max(a, b) if red == "max" else min(a, b)
    bits = dt.itemsize * 8
    v = (int(a) + int(b)) if red == "add" else (int(a) * int(b))
    v &= (1 << bits) - 1
    if dt.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return dt.type(v)


def norm(i: int, size: int) -> int:
    return i + size if i < 0 else i


def ref_scatter_elements(data, idx, upd, axis, red):
    out = data.copy()
    axis %= data.ndim
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[axis] = norm(int(idx[pos]), data.shape[axis])
        out[tuple(tgt)] = combine(red, out[tuple(tgt)], upd[pos], data.dtype)
    return out


def ref_scatter_nd(data, idx, upd, red):
    out = data.copy()
    k = idx.shape[-1]
    for pos in np.ndindex(*idx.shape[:-1]):
        t = tuple(norm(int(idx[pos + (j,)]), data.shape[j]) for j in range(k))
        for inner in np.ndindex(*data.shape[k:]):
            out[t + inner] = combine(red, out[t + inner], upd[pos + inner], data.dtype)
    return out


def ref_gather(data, idx, axis):
    axis %= data.ndim
    shape = data.shape[:axis] + idx.shape + data.shape[axis + 1:]
    out = np.zeros(shape, data.dtype)
    for pos in np.ndindex(*shape):
        i = pos[axis:axis + idx.ndim]
        src = pos[:axis] + (norm(int(idx[i]), data.shape[axis]),) + pos[axis + idx.ndim:]
        out[pos] = data[src]
    return out


def ref_gather_elements(data, idx, axis):
    axis %= data.ndim
    out = np.zeros(idx.shape, data.dtype)
    for pos in np.ndindex(*idx.shape):
        src = list(pos)
        src[axis] = norm(int(idx[pos]), data.shape[axis])
        out[pos] = data[tuple(src)]
    return out


def ref_gather_nd(data, idx, b):
    k = idx.shape[-1]
    shape = idx.shape[:-1] + data.shape[b + k:]
    out = np.zeros(shape, data.dtype)
    for pos in np.ndindex(*idx.shape[:-1]):
        t = tuple(norm(int(idx[pos + (j,)]), data.shape[b + j]) for j in range(k))
        for inner in np.ndindex(*data.shape[b + k:]):
            out[pos + inner] = data[pos[:b] + t + inner]
    return out


def ref_tensor_scatter(cache, upd, w, axis, mode):
    out = cache.copy()
    axis %= cache.ndim
    L, S = cache.shape[axis], upd.shape[axis]
    for prefix in np.ndindex(*cache.shape[:axis]):
        for s in range(S):
            p = int(w[prefix[0]]) + s
            if mode == "circular":
                p %= L
            out[prefix + (p,)] = upd[prefix + (s,)]
    return out


# --------------------------------------------------------------------------------------------
# Random cases.

class Gen:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def shape(self, rank: int, lo: int = 0, hi: int = 5) -> tuple[int, ...]:
        return tuple(int(0 if self.rng.random() < 0.06 else self.rng.integers(max(lo, 1), hi + 1))
                     for _ in range(rank))

    def values(self, shape, dt: np.dtype, red: str) -> tuple[np.ndarray, bool]:
        """Values, and whether they are all whole numbers (so float sums are exact)."""
        n = int(np.prod(shape))
        wild = self.rng.random() < 0.3
        if dt == np.bool_:
            return (self.rng.random(n) < 0.5).reshape(shape), True
        if dt.kind == "f" or dt == BF16:
            if not wild:
                return self.rng.integers(-6, 7, n).astype(np.float64).astype(dt).reshape(shape), True
            v = self.rng.normal(0, 100, n)
            special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e-30]
            if red in ("max", "min"):
                special = [np.inf, -np.inf, 1e30]
            mask = self.rng.random(n) < 0.15
            v[mask] = self.rng.choice(special, int(mask.sum()))
            return v.astype(dt).reshape(shape), False
        info = np.iinfo(dt)
        if wild:
            v = self.rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        else:
            v = self.rng.integers(max(info.min, -6), 7, n).astype(dt)
        return v.reshape(shape), True

    def index(self, size: int, n: int, negative: bool = True) -> np.ndarray:
        if size == 0:
            return np.zeros(n, np.int64)
        v = self.rng.integers(0, size, n)
        if negative:
            flip = self.rng.random(n) < 0.3
            v[flip] -= size
        return v

    def unique_index(self, size: int, n: int) -> np.ndarray:
        v = self.rng.permutation(size)[:n]
        flip = self.rng.random(len(v)) < 0.3
        v[flip] -= size
        return v


def make_case(g: Gen, op: str, red: str, dtname: str):
    """Returns (inputs, attrs, expected, ort_comparable, reason, whole)."""
    dt = npdtype(dtname)
    rng = g.rng
    itype = np.int32 if (op in ("ScatterElements", "Gather", "GatherElements") and rng.random() < 0.4) else np.int64
    unique = red == "none" and rng.random() < 0.7
    if op == "ScatterElements":
        r = int(rng.integers(1, 5))
        d = g.shape(r)
        axis = int(rng.integers(-r, r))
        a = axis % r
        ishape = list(int(rng.integers(0, s + 1)) for s in d)
        ishape[a] = int(rng.integers(0, (d[a] if unique else 5) + 1))
        if d[a] == 0:
            ishape[a] = 0
        ishape = tuple(ishape)
        idx = np.zeros(ishape, np.int64)
        for line in np.ndindex(*(ishape[:a] + ishape[a + 1:])):
            sl = line[:a] + (slice(None),) + line[a:]
            idx[sl] = g.unique_index(d[a], ishape[a]) if unique else g.index(d[a], ishape[a])
        data, w1 = g.values(d, dt, red)
        upd, w2 = g.values(ishape, dt, red)
        exp = ref_scatter_elements(data, idx, upd, axis, red)
        return [data, idx.astype(itype), upd], {"axis": axis, "reduction": red}, exp, unique or red != "none", w1 and w2
    if op == "ScatterND":
        r = int(rng.integers(1, 5))
        d = g.shape(r)
        k = int(rng.integers(0 if rng.random() < 0.1 else 1, r + 1))
        batch = g.shape(int(rng.integers(0, 3)))
        n = int(np.prod(batch))
        if any(s == 0 for s in d[:k]):
            batch, n = (0,), 0
        if unique and k > 0:
            cells = int(np.prod(d[:k]))
            n = min(n, cells)
            batch = (n,)
            flat = rng.permutation(cells)[:n]
            cols = np.stack(np.unravel_index(flat, d[:k]), axis=-1) if n else np.zeros((0, k), np.int64)
            flip = rng.random(cols.shape) < 0.3
            cols = np.where(flip, cols - np.array(d[:k]), cols)
            idx = cols.reshape(batch + (k,)).astype(np.int64)
        elif unique and k == 0:
            batch, n = (min(n, 1),), min(n, 1)
            idx = np.zeros((n, 0), np.int64)
        else:
            idx = np.stack([g.index(d[j], n) for j in range(k)], axis=-1).reshape(batch + (k,)) if k else np.zeros(batch + (0,), np.int64)
        data, w1 = g.values(d, dt, red)
        upd, w2 = g.values(tuple(batch) + tuple(d[k:]), dt, red)
        exp = ref_scatter_nd(data, idx, upd, red)
        return [data, idx.astype(np.int64), upd], {"reduction": red}, exp, unique or red != "none", w1 and w2
    if op == "Gather":
        r = int(rng.integers(1, 5))
        d = g.shape(r)
        axis = int(rng.integers(-r, r))
        ish = g.shape(int(rng.integers(0, 3)))
        if d[axis % r] == 0:
            ish = ish + (0,)
        idx = g.index(d[axis % r], int(np.prod(ish))).reshape(ish)
        data, _ = g.values(d, dt, red)
        return [data, idx.astype(itype)], {"axis": axis}, ref_gather(data, idx, axis), True, True
    if op == "GatherElements":
        r = int(rng.integers(1, 5))
        d = g.shape(r)
        axis = int(rng.integers(-r, r))
        a = axis % r
        ish = list(int(rng.integers(0, s + 1)) for s in d)
        ish[a] = 0 if d[a] == 0 else int(rng.integers(0, 6))
        idx = g.index(d[a], int(np.prod(ish))).reshape(ish)
        data, _ = g.values(d, dt, red)
        return [data, idx.astype(itype)], {"axis": axis}, ref_gather_elements(data, idx, axis), True, True
    if op == "GatherND":
        r = int(rng.integers(1, 5))
        d = g.shape(r)
        b = int(rng.integers(0, r))
        k = int(rng.integers(1, r - b + 1))
        mid = g.shape(int(rng.integers(0, 3)))
        lead = tuple(d[:b]) + tuple(mid)
        n = int(np.prod(lead))
        if any(s == 0 for s in d[b:b + k]):
            mid, lead, n = mid + (0,), tuple(d[:b]) + tuple(mid) + (0,), 0
        idx = np.stack([g.index(d[b + j], n) for j in range(k)], axis=-1).reshape(lead + (k,))
        data, _ = g.values(d, dt, red)
        return [data, idx], {"batch_dims": b}, ref_gather_nd(data, idx, b), True, True
    if op == "TensorScatter":
        r = int(rng.integers(3, 5))
        d = list(g.shape(r, lo=1))
        d[0] = max(d[0], 1)
        axis = int(rng.integers(1, r))
        attr_axis = axis - r if rng.random() < 0.5 else axis
        L = d[axis]
        S = int(rng.integers(0, L + 1))
        us = list(d)
        us[axis] = S
        mode = "circular" if rng.random() < 0.5 else "linear"
        hi = (2 * L + 1) if mode == "circular" else (L - S + 1)
        w = rng.integers(0, max(hi, 1), d[0]).astype(np.int64)
        cache, _ = g.values(tuple(d), dt, "none")
        upd, _ = g.values(tuple(us), dt, "none")
        exp = ref_tensor_scatter(cache, upd, w, attr_axis, mode)
        return [cache, upd, w], {"axis": attr_axis, "mode": mode}, exp, True, True
    raise ValueError(op)


# --------------------------------------------------------------------------------------------
# ONNX Runtime.

ONNX_TYPE = {np.dtype(k): v for k, v in {
    "float64": TensorProto.DOUBLE, "float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
    "int64": TensorProto.INT64, "int32": TensorProto.INT32, "int16": TensorProto.INT16,
    "int8": TensorProto.INT8, "uint64": TensorProto.UINT64, "uint32": TensorProto.UINT32,
    "uint16": TensorProto.UINT16, "uint8": TensorProto.UINT8, "bool": TensorProto.BOOL}.items()}
ONNX_TYPE[BF16] = TensorProto.BFLOAT16

_SESSION_OPTS = ort.SessionOptions()
_SESSION_OPTS.intra_op_num_threads = 1
_SESSION_OPTS.inter_op_num_threads = 1
_SESSION_OPTS.log_severity_level = 4


def run_ort(op: str, inputs, attrs: dict, out_dtype: np.dtype):
    """ORT's output, or the exception it raised."""
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "diff",
        [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype], a.shape) for n, a in zip(names, inputs)],
        [helper.make_tensor_value_info("y", ONNX_TYPE[out_dtype], None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET[op])])
    model.ir_version = 10 if OPSET[op] < 23 else 11
    try:
        sess = ort.InferenceSession(model.SerializeToString(), _SESSION_OPTS,
                                    providers=["CPUExecutionProvider"])
        return sess.run(None, dict(zip(names, inputs)))[0]
    except Exception as e:  # noqa: BLE001 -- any ORT failure is recorded, not fatal
        return e


def ort_comparable(op, red, inputs, whole, unique_or_defined):
    if not unique_or_defined:
        return "duplicates with none (undefined in ONNX)"
    if red in ("max", "min") and inputs[0].dtype.kind == "f" or (red in ("max", "min") and inputs[0].dtype == BF16):
        vals = np.concatenate([inputs[0].astype(np.float64).ravel(), inputs[-1].astype(np.float64).ravel()])
        if np.isnan(vals).any() or (vals == 0).any():
            return "min/max with NaN or a zero (peers disagree on NaN and on -0 vs +0)"
    return None


def close(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    x, y = a.astype(np.float64), b.astype(np.float64)
    both_nan = np.isnan(x) & np.isnan(y)
    same = x == y
    near = np.abs(x - y) <= rtol * np.maximum(np.abs(x), np.abs(y))
    return bool(np.all(both_nan | same | near))


# --------------------------------------------------------------------------------------------
# Bad inputs: every one must be an error in ours, with no output written.

def bad_cases(g: Gen):
    f = np.arange(12, dtype=np.float32).reshape(3, 4)
    i64 = np.iinfo(np.int64)
    i32 = np.iinfo(np.int32)
    upd = np.ones((1, 4), np.float32)
    yield "ScatterElements index = size", "ScatterElements", [f, np.full((1, 4), 3, np.int64), upd], {"axis": 0}
    yield "ScatterElements index = -size-1", "ScatterElements", [f, np.full((1, 4), -4, np.int64), upd], {"axis": 0}
    yield "ScatterElements i64::MIN", "ScatterElements", [f, np.full((1, 4), i64.min, np.int64), upd], {"axis": 0}
    yield "ScatterElements i64::MAX", "ScatterElements", [f, np.full((1, 4), i64.max, np.int64), upd], {"axis": 0}
    yield "ScatterElements i32::MIN", "ScatterElements", [f, np.full((1, 4), i32.min, np.int32), upd], {"axis": 0}
    yield "ScatterElements axis = rank", "ScatterElements", [f, np.zeros((1, 4), np.int64), upd], {"axis": 2}
    yield "ScatterElements axis = -rank-1", "ScatterElements", [f, np.zeros((1, 4), np.int64), upd], {"axis": -3}
    yield "ScatterElements unknown reduction", "ScatterElements", [f, np.zeros((1, 4), np.int64), upd], {"axis": 0, "reduction": "sum"}
    yield "ScatterElements updates shape", "ScatterElements", [f, np.zeros((1, 4), np.int64), np.ones((1, 3), np.float32)], {"axis": 0}
    yield "ScatterElements bad index last of 1e5", "ScatterElements", [
        np.zeros((100000,), np.float32), np.concatenate([np.arange(99999), [100000]]).astype(np.int64),
        np.ones(100000, np.float32)], {"axis": 0}
    yield "ScatterND component out of range, offset valid", "ScatterND", [f, np.array([[0, 4]], np.int64), np.ones(1, np.float32)], {}
    yield "ScatterND k > rank", "ScatterND", [f, np.zeros((1, 3), np.int64), np.ones(1, np.float32)], {}
    yield "ScatterND updates shape", "ScatterND", [f, np.zeros((1, 1), np.int64), np.ones((1, 3), np.float32)], {}
    yield "ScatterND int32 indices (ONNX: int64 only)", "ScatterND", [f, np.zeros((1, 1), np.int32), upd], {}
    yield "ScatterND non-empty indices into empty data", "ScatterND", [np.zeros((0, 3), np.float32), np.zeros((1, 1), np.int64), np.ones((1, 3), np.float32)], {}
    yield "Gather index = size", "Gather", [f, np.array([3], np.int64)], {"axis": 0}
    yield "Gather index -size-1", "Gather", [f, np.array([-5], np.int64)], {"axis": 1}
    yield "Gather axis = rank", "Gather", [f, np.array([0], np.int64)], {"axis": 2}
    yield "Gather into empty axis", "Gather", [np.zeros((0, 3), np.float32), np.array([0], np.int64)], {"axis": 0}
    yield "GatherElements index = size", "GatherElements", [f, np.full((3, 4), 4, np.int64)], {"axis": 1}
    yield "GatherElements rank mismatch", "GatherElements", [f, np.zeros(4, np.int64)], {"axis": 0}
    yield "GatherND k = 0", "GatherND", [f, np.zeros((2, 0), np.int64)], {}
    yield "GatherND component out of range, offset valid", "GatherND", [f, np.array([[1, 4]], np.int64)], {}
    yield "GatherND batch_dims = rank", "GatherND", [f, np.zeros((3, 4, 1), np.int64)], {"batch_dims": 2}
    yield "GatherND batch mismatch (ORT #23828)", "GatherND", [
        np.arange(9, dtype=np.int32).reshape(3, 3), np.array([[1], [2]], np.int64)], {"batch_dims": 1}
    cache = np.zeros((2, 1, 4, 3), np.float32)
    u = np.ones((2, 1, 2, 3), np.float32)
    yield "TensorScatter linear past the end", "TensorScatter", [cache, u, np.array([0, 3], np.int64)], {"axis": -2, "mode": "linear"}
    yield "TensorScatter negative write index", "TensorScatter", [cache, u, np.array([-1, 0], np.int64)], {"axis": -2, "mode": "circular"}
    yield "TensorScatter axis 0", "TensorScatter", [cache, u, np.array([0, 0], np.int64)], {"axis": 0}
    yield "TensorScatter unknown mode", "TensorScatter", [cache, u], {"mode": "ring"}
    yield "TensorScatter update longer than cache", "TensorScatter", [cache, np.ones((2, 1, 5, 3), np.float32)], {}


# --------------------------------------------------------------------------------------------

def save(arr: np.ndarray, path: Path) -> list[str]:
    np.save(path, arr)
    return ["--input", str(path)]


def main() -> int:
    n_per = int(os.environ.get("DIFF_CASES", "2000"))
    seed = int(os.environ.get("DIFF_SEED", "2026"))
    g = Gen(seed)
    groups = [("ScatterElements", r) for r in REDUCTIONS] + [("ScatterND", r) for r in REDUCTIONS] + \
        [("Gather", "none"), ("GatherElements", "none"), ("GatherND", "none"), ("TensorScatter", "none")]
    stats = Counter()
    failures: list[str] = []
    print(f"differential: seed {seed}, {n_per} cases per operator x reduction, "
          f"onnxruntime {ort.__version__}, numpy {np.__version__}")
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        work = Path(tmp)
        cases, invocations = [], []
        for op, red in groups:
            for j in range(n_per):
                dtname = DTYPES[j % len(DTYPES)]
                inputs, attrs, exp, defined, whole = make_case(g, op, red, dtname)
                if op not in ("ScatterElements", "ScatterND"):
                    attrs.pop("reduction", None)
                n = len(cases)
                args = ["onnx", op]
                for i, a in enumerate(inputs):
                    args += save(a, work / f"c{n}_{i}.npy")
                out = work / f"c{n}_out.npy"
                args += ["--out", str(out)] + [x for k, v in attrs.items() for x in ("--attr", f"{k}={v}")]
                if inputs[0].dtype == BF16:
                    args.append("--bf16")
                invocations.append(args)
                cases.append((op, red, dtname, inputs, attrs, exp, defined, whole, out))
        results = run_batch(invocations, work)
        for (op, red, dtname, inputs, attrs, exp, defined, whole, out), status in zip(cases, results):
            tag = f"{op}/{red}/{dtname}"
            stats["valid cases"] += 1
            if status != "ok":
                failures.append(f"{tag}: ours failed on a valid case: {status} (attrs {attrs}, shapes {[a.shape for a in inputs]})")
                continue
            got = np.load(out)
            if got.dtype.kind == "V":
                got = got.view(BF16)
            if not same_values(got, exp):
                failures.append(f"{tag}: ours differs from the NumPy reference (attrs {attrs}, shapes {[a.shape for a in inputs]})\n"
                                f"  inputs {inputs}\n  expected {exp!r}\n  got {got!r}")
                continue
            stats["equal to NumPy reference"] += 1
            why = ort_comparable(op, red, inputs, whole, defined)
            if why:
                stats[f"ORT not compared: {why}"] += 1
                continue
            o = run_ort(op, inputs, attrs, got.dtype)
            if isinstance(o, Exception):
                msg = str(o)
                unsupported = ("NOT_IMPLEMENTED", "Could not find an implementation", "is not supported with",
                               "can't be converted to MLDataType")
                key = "NOT_IMPLEMENTED" if any(u in msg for u in unsupported) else "error"
                if key == "NOT_IMPLEMENTED":
                    stats[f"ORT not compared: ORT has no kernel for {op}/{red}/{dtname} (or cannot take bfloat16 from Python)"] += 1
                else:
                    stats[f"ORT raised on a valid case: {op}/{red}/{dtname}"] += 1
                    if os.environ.get("DIFF_VERBOSE"):
                        print(f"  ORT raised on valid {tag} {attrs} {[a.shape for a in inputs]}: {msg[:300]}")
                continue
            o = np.asarray(o)
            if same_values(got, o):
                stats["equal to ONNX Runtime (exact)"] += 1
            elif red in ("add", "mul") and not whole and dtname in RTOL and close(got, o, RTOL[dtname]):
                stats["equal to ONNX Runtime within tolerance (float add/mul, non-whole values)"] += 1
            else:
                failures.append(f"{tag}: ours differs from ONNX Runtime (attrs {attrs}, shapes {[a.shape for a in inputs]})\n"
                                f"  inputs {inputs}\n  ours {got!r}\n  ort {o!r}")
        # Bad inputs.
        bad, invocations = [], []
        for n, (name, op, inputs, attrs) in enumerate(bad_cases(g)):
            args = ["onnx", op]
            for i, a in enumerate(inputs):
                args += save(a, work / f"b{n}_{i}.npy")
            out = work / f"b{n}_out.npy"
            args += ["--out", str(out)] + [x for k, v in attrs.items() for x in ("--attr", f"{k}={v}")]
            invocations.append(args)
            bad.append((name, op, inputs, attrs, out))
        for (name, op, inputs, attrs, out), status in zip(bad, run_batch(invocations, work)):
            stats["bad-input cases"] += 1
            if status == "ok" or out.exists():
                failures.append(f"bad input '{name}': ours did not refuse it ({status})")
                continue
            stats["bad inputs refused by ours"] += 1
            o = run_ort(op, inputs, attrs, inputs[0].dtype)
            stats["bad inputs ORT also refused" if isinstance(o, Exception) else "bad inputs ORT accepted"] += 1
            if not isinstance(o, Exception):
                print(f"  note: ORT accepted bad input '{name}'")
    for k in sorted(stats):
        print(f"  {stats[k]:6d}  {k}")
    for f in failures[:20]:
        print("FAIL", f)
    print(f"differential: {stats['valid cases']} valid + {stats['bad-input cases']} bad-input cases, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
