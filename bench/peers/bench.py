"""Side-by-side scatter and gather benchmark: tensor-scatter against its peers on identical data.

Run through ./run (which builds the environment). Every system runs in its own subprocess,
pinned to N CPUs with its thread settings made before import; every timed run produces the
output from `data` afresh (copy included); every system's output is checked bit-exact against
the NumPy reference before its time counts; medians of >= 7 runs after a warm-up.
"""
import argparse, json, os, platform, subprocess, sys, time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import workloads as W  # noqa: E402

# Also accepted: "tensor-scatter (baseline)", the CLI at $TS_BASELINE_CLI (A/B runs of a change).
SYSTEMS = ["floor", "tensor-scatter", "tensor-scatter (in place)", "numpy", "torch",
           "onnxruntime", "openvino", "jax", "candle", "tract"]
# Also available: "tensor-scatter (python)", the Python package in the peers' interpreter
# (bench/peers/run installs it when it is asked for), and "numpy_groupies" (1-D sums only).
RUST_PEERS = HERE / "rust" / "target" / "release" / "rust-peers"


def timeit(fn, min_runs=7, max_runs=30, budget_s=3.0):
    fn()  # warm-up (compilation, page faults)
    times, start = [], time.perf_counter()
    while len(times) < max_runs and (len(times) < min_runs or time.perf_counter() - start < budget_s):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return times


def load(data_dir, name):
    w = {k: np.load(data_dir / f"{name}_{k}.npy") for k in ("data", "indices", "updates", "expected")
         if (data_dir / f"{name}_{k}.npy").exists()}
    w.update(json.loads((data_dir / f"{name}.json").read_text()))
    return w


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# --- one function per system: returns (callable producing the output, fetch of the output) ---

def sys_floor(w, n):
    nbytes = W.min_bytes(w) // 2  # a copy of B bytes moves 2B, the out-of-place traffic
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    best = None
    fns = [lambda: np.copyto(dst, src)]
    try:
        import torch
        torch.set_num_threads(n)
        ts, td = torch.from_numpy(src), torch.from_numpy(dst)
        fns.append(lambda: td.copy_(ts))
    except ImportError:
        pass
    for f in fns:
        t = float(np.median(timeit(f)))
        best = t if best is None else min(best, t)
    return best


def gather_numpy(w):
    d, i = w["data"], w["indices"]
    if w["op"] == "gather":
        out = np.empty(w["expected"].shape, d.dtype)
        return (lambda: np.take(d, i, axis=w["axis"], out=out)), (lambda: out)
    res = {}

    def f():
        res["out"] = np.take_along_axis(d, i, axis=w["axis"])
    return f, lambda: res["out"]


def sys_numpy(w, n):
    if W.is_gather(w):
        return gather_numpy(w)
    d, i, u = w["data"], w["indices"], w["updates"]
    out = np.empty_like(d)
    op, red = w["op"], w["reduction"]
    if op == "scatter_elements":
        key = W.elements_key(w, i)
    elif op == "scatter_nd":
        key = i[:, 0]
    else:
        key = (slice(None), i.reshape(-1))
        u = u.reshape(u.shape[0], -1, *u.shape[3:])

    def f():
        np.copyto(out, d)
        if red == "add":
            np.add.at(out, key, u)
        else:
            out[key] = u
    return f, lambda: out


def sys_torch(w, n):
    import torch
    torch.set_num_threads(n)
    if W.is_gather(w):
        d, i = torch.from_numpy(w["data"]), torch.from_numpy(w["indices"])
        out = torch.empty(w["expected"].shape, dtype=d.dtype)
        if w["op"] == "gather":
            f = lambda: torch.index_select(d, w["axis"], i, out=out)
        else:
            f = lambda: torch.gather(d, w["axis"], i, out=out)
        return f, lambda: out.numpy()
    d, i, u = (torch.from_numpy(w[k]) for k in ("data", "indices", "updates"))
    out = torch.empty_like(d)
    op, red = w["op"], w["reduction"]
    if op == "scatter_elements":
        a = w["axis"]
        g = (lambda: out.scatter_add_(a, i, u)) if red == "add" else (lambda: out.scatter_(a, i, u))
    elif op == "scatter_nd":
        r = i[:, 0].contiguous()
        g = (lambda: out.index_add_(0, r, u)) if red == "add" else (lambda: out.index_copy_(0, r, u))
    else:
        r = i.reshape(-1).contiguous()
        uu = u.reshape(u.shape[0], -1, *u.shape[3:])
        g = lambda: out.index_copy_(1, r, uu)

    def f():
        out.copy_(d)
        g()
    return f, lambda: out.numpy()


def onnx_model(w):
    import onnx
    from onnx import TensorProto, helper
    d, i, u = w["data"], w["indices"], w.get("updates")
    ty = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16}[d.dtype]
    op, red = w["op"], w["reduction"]
    feeds = {"data": d, "indices": i, "updates": u}
    out_shape = list(w["expected"].shape)
    if W.is_gather(w):
        del feeds["updates"]
        kind = "Gather" if op == "gather" else "GatherElements"
        node = helper.make_node(kind, ["data", "indices"], ["out"], axis=w["axis"])
    elif op == "scatter_elements":
        node = helper.make_node("ScatterElements", ["data", "indices", "updates"], ["out"], axis=w["axis"], reduction=red)
    elif op == "scatter_nd":
        node = helper.make_node("ScatterND", ["data", "indices", "updates"], ["out"], reduction=red)
    else:  # ScatterUpdate has no ONNX op: ScatterND over (b, idx) tuples
        b = d.shape[0]
        flat = i.reshape(-1)
        tup = np.stack(np.broadcast_arrays(np.arange(b)[:, None], flat[None, :]), axis=-1).astype(np.int64)
        feeds["indices"] = np.ascontiguousarray(tup)
        feeds["updates"] = np.ascontiguousarray(u.reshape(b, -1, *u.shape[3:]))
        node = helper.make_node("ScatterND", ["data", "indices", "updates"], ["out"])
    inputs = [helper.make_tensor_value_info(k, ty if k != "indices" else TensorProto.INT64, list(v.shape))
              for k, v in feeds.items()]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("out", ty, out_shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model, feeds


def sys_onnxruntime(w, n):
    import onnxruntime as ort
    model, feeds = onnx_model(w)
    so = ort.SessionOptions()
    so.intra_op_num_threads = n
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    io = sess.io_binding()
    for k, v in feeds.items():
        io.bind_ortvalue_input(k, ort.OrtValue.ortvalue_from_numpy(v))
    out = ort.OrtValue.ortvalue_from_numpy(np.empty_like(w["expected"]))
    io.bind_ortvalue_output("out", out)
    return (lambda: sess.run_with_iobinding(io)), (lambda: out.numpy())


def sys_openvino(w, n):
    import openvino as ov
    import openvino.opset15 as ops
    core = ov.Core()
    cfg = {"INFERENCE_NUM_THREADS": n, "NUM_STREAMS": 1, "INFERENCE_PRECISION_HINT": "f32"}
    if W.is_gather(w):
        d, i = w["data"], w["indices"]
        pd = ops.parameter(d.shape, d.dtype, name="data")
        pi = ops.parameter(i.shape, np.int64, name="indices")
        if w["op"] == "gather":
            node = ops.gather(pd, pi, ops.constant(np.int64(w["axis"])))
        else:
            node = ops.gather_elements(pd, pi, w["axis"])
        req = core.compile_model(ov.Model([node], [pd, pi]), "CPU", cfg).create_infer_request()
        ins = {0: d, 1: i}
        return (lambda: req.infer(ins)), (lambda: req.get_output_tensor(0).data)
    d, i, u = w["data"], w["indices"], w["updates"]
    op, red = w["op"], w["reduction"]
    pd = ops.parameter(d.shape, d.dtype, name="data")
    pi = ops.parameter(i.shape, np.int64, name="indices")
    pu = ops.parameter(u.shape, u.dtype, name="updates")
    if op == "scatter_elements":
        node = ops.scatter_elements_update(pd, pi, pu, ops.constant(np.int64(w["axis"])),
                                           "sum" if red == "add" else "none")
    elif op == "scatter_nd":
        node = ops.scatter_nd_update(pd, pi, pu, "sum" if red == "add" else "none")
    else:
        node = ops.scatter_update(pd, pi, pu, ops.constant(np.int64(1)))
    model = ov.Model([node], [pd, pi, pu])
    core = ov.Core()
    cm = core.compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": n, "NUM_STREAMS": 1,
                                           "INFERENCE_PRECISION_HINT": "f32"})
    req = cm.create_infer_request()
    ins = {0: d, 1: i, 2: u}
    return (lambda: req.infer(ins)), (lambda: req.get_output_tensor(0).data)


def sys_jax(w, n):
    import jax, jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")
    # 64-bit mode: otherwise jnp.asarray turns the int64 indices into int32 (half the index
    # traffic of every other system), which is not the same input.
    jax.config.update("jax_enable_x64", True)
    res = {}
    if W.is_gather(w):
        d, i, a = jnp.asarray(w["data"]), jnp.asarray(w["indices"]), w["axis"]
        if w["op"] == "gather":
            fn = jax.jit(lambda d, i: jnp.take(d, i, axis=a, mode="clip"))
        else:
            fn = jax.jit(lambda d, i: jnp.take_along_axis(d, i, axis=a, mode="clip"))

        def g():
            res["out"] = fn(d, i).block_until_ready()
        return g, lambda: np.asarray(res["out"])
    d, i, u = (jnp.asarray(w[k]) for k in ("data", "indices", "updates"))
    op, red = w["op"], w["reduction"]
    if op == "scatter_elements":
        if w["data"].ndim == 1:
            key = lambda i: i
        elif w["axis"] == 0:
            cols = jnp.broadcast_to(jnp.arange(w["data"].shape[1]), w["indices"].shape)
            key = lambda i: (i, cols)
        else:
            rows = jnp.broadcast_to(jnp.arange(w["data"].shape[0])[:, None], w["indices"].shape)
            key = lambda i: (rows, i)
    elif op == "scatter_nd":
        key = lambda i: i[:, 0]
    else:
        key = lambda i: (slice(None), i.reshape(-1))
        u = u.reshape(u.shape[0], -1, *u.shape[3:])
    if red == "add":
        fn = jax.jit(lambda d, i, u: d.at[key(i)].add(u, indices_are_sorted=False, unique_indices=False))
    else:
        fn = jax.jit(lambda d, i, u: d.at[key(i)].set(u))

    def f():
        res["out"] = fn(d, i, u).block_until_ready()
    return f, lambda: np.asarray(res["out"])


def sys_ts_python(w, n):
    """The Python package, writing into a reused output like the CLI's --repeat."""
    import tensor_scatter as ts
    d, i, a = w["data"], w["indices"], w["axis"]
    out = np.empty_like(w["expected"])
    op, red = w["op"], w["reduction"]
    if op == "gather":
        f = lambda: ts.gather(d, i, axis=a, threads=n, out=out)
    elif op == "gather_elements":
        f = lambda: ts.gather_elements(d, i, axis=a, threads=n, out=out)
    else:
        u = w["updates"]
        call = {"scatter_elements": lambda: ts.scatter_elements(d, i, u, axis=a, reduction=red, threads=n, out=out),
                "scatter_nd": lambda: ts.scatter_nd(d, i, u, reduction=red, threads=n, out=out),
                "scatter_update": lambda: ts.scatter_update(d, i, u, axis=a, reduction=red, threads=n, out=out)}
        f = call[op]
    return f, lambda: out


def sys_numpy_groupies(w, n):
    """numpy_groupies' aggregate (a bincount for sums) added to data: 1-D scatter-adds only."""
    import numpy_groupies as npg
    if not (w["op"] == "scatter_elements" and w["reduction"] == "add" and w["data"].ndim == 1):
        raise NotImplementedError("numpy_groupies: 1-D sums only")
    d, i, u = w["data"], w["indices"], w["updates"]
    out = np.empty_like(d)

    def f():
        np.add(d, npg.aggregate(i, u, func="sum", size=d.shape[0], dtype=d.dtype), out=out)
    return f, lambda: out


def sys_tensor_scatter(w, n, in_place=False, data_dir=None, name=None, exe=None):
    exe = exe or ROOT / "target" / "release" / "tensor-scatter"
    sub = w["op"].replace("_", "-")
    out = data_dir / f"{name}_ts_out.npy"
    if W.is_gather(w):
        cmd = [str(exe), sub, "--data", str(data_dir / f"{name}_data.npy"),
               "--indices", str(data_dir / f"{name}_indices.npy"), "--out", str(out),
               "--axis", str(w["axis"]), "--threads", str(n), "--repeat", "15"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip())
        return json.loads(p.stderr.strip().splitlines()[-1]), np.load(out)
    cmd = [str(exe), sub, "--data", str(data_dir / f"{name}_data.npy"),
           "--indices", str(data_dir / f"{name}_indices.npy"),
           "--updates", str(data_dir / f"{name}_updates.npy"), "--out", str(out),
           "--axis", str(w["axis"]), "--reduction", w["reduction"], "--threads", str(n),
           "--repeat", "9"] + (["--time-in-place"] if in_place else [])
    if w["op"] == "scatter_update":
        cmd += ["--negative-indices", "error"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    stats = json.loads(p.stderr.strip().splitlines()[-1])
    return stats, np.load(out)


def sys_rust(system, w, data_dir, name):
    """candle and tract, timed by bench/peers/rust (same timing rule as `timeit`)."""
    out = data_dir / f"{name}_{system}_out.npy"
    if system == "candle":
        upd = data_dir / f"{name}_updates.npy"
        cmd = [str(RUST_PEERS), "candle", w["op"], str(w["axis"]), w["reduction"],
               str(data_dir / f"{name}_data.npy"), str(data_dir / f"{name}_indices.npy"),
               str(upd) if upd.exists() else "-", str(out)]
    else:  # tract runs the ONNX model that ONNX Runtime runs, on the same feeds
        model, feeds = onnx_model(w)
        path = data_dir / f"{name}.onnx"
        path.write_bytes(model.SerializeToString())
        files = []
        for k, v in feeds.items():
            f = data_dir / f"{name}_feed_{k}.npy"
            np.save(f, v)
            files.append(str(f))
        cmd = [str(RUST_PEERS), "tract", str(path), str(out)] + files
    p = subprocess.run(cmd, capture_output=True, text=True)
    if system == "tract":
        for f in data_dir.glob(f"{name}_feed_*.npy"):
            f.unlink()
    if p.returncode == 3:
        return {"unsupported": p.stderr.strip()}
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip()[-300:])
    stats = json.loads(p.stdout.strip().splitlines()[-1])
    got = np.load(out)
    out.unlink()
    return stats | {"ok": same(got, w["expected"])}


def worker(system, name, n, data_dir):
    os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:n]))
    w = load(data_dir, name)
    if system == "floor":
        return {"median_ms": sys_floor(w, n)}
    if system.startswith("tensor-scatter") and system != "tensor-scatter (python)":
        # "tensor-scatter (baseline)": another build of the CLI, for A/B runs of a change.
        exe = os.environ["TS_BASELINE_CLI"] if "baseline" in system else None
        stats, out = sys_tensor_scatter(w, n, "in place" in system, data_dir, name, exe)
        return {"median_ms": stats["median_ms"], "min_ms": stats["min_ms"], "runs": stats["runs"],
                "ok": same(out, w["expected"])}
    if system in ("candle", "tract"):  # single-threaded libraries; pinned like the others
        return sys_rust(system, w, data_dir, name)
    fn = sys_ts_python if system == "tensor-scatter (python)" else globals()["sys_" + system]
    f, fetch = fn(w, n)
    f()
    ok = same(fetch(), w["expected"])
    times = timeit(f)
    ok = ok and same(fetch(), w["expected"])
    return {"median_ms": float(np.median(times)), "min_ms": float(min(times)), "runs": len(times), "ok": ok}


def spawn(system, name, n, data_dir):
    env = dict(os.environ, OMP_NUM_THREADS=str(n), MKL_NUM_THREADS=str(n), OPENBLAS_NUM_THREADS=str(n))
    if system == "jax":
        env["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
                            if n == 1 else "")
    p = subprocess.run([sys.executable, __file__, "--worker", system, name, str(n), str(data_dir)],
                       capture_output=True, text=True, env=env, timeout=900)
    if p.returncode != 0 and "NotImplementedError" in p.stderr:
        return {"unsupported": p.stderr.strip().splitlines()[-1][:200]}
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def versions():
    v = {"python": platform.python_version(), "numpy": np.__version__}
    for mod in ("torch", "onnxruntime", "openvino", "jax", "numpy_groupies", "tensor_scatter"):
        try:
            v[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            v[mod] = "missing"
    lock = HERE / "rust" / "Cargo.lock"
    if lock.exists():  # the crates.io versions the Rust peers were built with
        text = lock.read_text()
        for crate in ("candle-core", "tract-onnx"):
            key = f'name = "{crate}"\nversion = "'
            at = text.find(key)
            v[crate] = text[at + len(key):text.index('"', at + len(key))] if at >= 0 else "missing"
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=4)
    ap.add_argument("--workloads", default=",".join(W.WORKLOADS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--rounds", type=int, default=1,
                    help="time every system this many times per workload, the systems "
                         "alternating (reversed every other round); each cell is then the "
                         "median of the rounds' medians, so a slow phase of the machine "
                         "falls on every system alike")
    a = ap.parse_args()
    if a.worker:
        s, name, n, dd = a.worker
        print(json.dumps(worker(s, name, int(n), Path(dd))))
        return
    out_dir = Path(a.out)
    data_dir = out_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    names = a.workloads.split(",")
    systems = a.systems.split(",")
    threads = [int(t) for t in a.threads.split(",")]
    results = {}
    for name in names:
        w = W.make(name, a.scale)
        for k in ("data", "indices", "updates"):
            if k in w:
                np.save(data_dir / f"{name}_{k}.npy", w[k])
        np.save(data_dir / f"{name}_expected.npy", W.reference(w))
        (data_dir / f"{name}.json").write_text(json.dumps(
            {k: w[k] for k in ("op", "axis", "reduction")} | {"bytes": W.min_bytes(w)}))
        for n in threads:
            runs = {}
            for rnd in range(max(1, a.rounds)):
                order = systems if rnd % 2 == 0 else systems[::-1]
                for s in order:
                    if W.is_gather(w) and s == "tensor-scatter (in place)":
                        continue  # a gather has no in-place form
                    r = spawn(s, name, n, data_dir)
                    runs.setdefault(s, []).append(r)
                    print(f"{name} {n}T {s:28s} {r}", flush=True)
            for s, rs in runs.items():
                results[(name, n, s)] = combine_rounds(rs)
        for k in ("data", "indices", "updates", "expected", "ts_out"):
            (data_dir / f"{name}_{k}.npy").unlink(missing_ok=True)
    write_report(results, names, threads, systems, out_dir, a.scale)


def combine_rounds(rs):
    """One cell from a system's rounds (each round's answer is printed as it comes): the
    median of their medians (the first error or unsupported answer otherwise), outputs
    correct only if correct in every round."""
    if len(rs) == 1:
        return rs[0]
    bad = [r for r in rs if "median_ms" not in r]
    if bad:
        return bad[0]
    out = {"median_ms": float(np.median([r["median_ms"] for r in rs]))}
    if any("ok" in r for r in rs):
        out["ok"] = all(r.get("ok", True) for r in rs)
    return out


def write_report(results, names, threads, systems, out_dir, scale):
    peers = [s for s in systems if s not in ("floor",) and not s.startswith("tensor-scatter")]
    lines = [f"Generated {time.strftime('%Y-%m-%d %H:%M')} by `bench/peers/run` on "
             f"{platform.machine()}, {os.cpu_count()} CPUs; scale {scale}.", "",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()), ""]
    base_col = "tensor-scatter (baseline)" in systems
    extra = [s for s in systems if s != "floor"] + (["ours / baseline"] if base_col else [])
    for n in threads:
        lines += [f"### {n} thread{'s' if n > 1 else ''}", "",
                  "| workload | floor | " + " | ".join(extra) +
                  " | best peer | ours / best peer | ours / floor |",
                  "|---|---|" + "---|" * len(extra) + "---|---|---|"]
        for name in names:
            meta = json.loads((out_dir / "data" / f"{name}.json").read_text())
            nbytes = meta["bytes"]
            floor = results.get((name, n, "floor"), {}).get("median_ms")
            cells, best = [], None
            for s in systems:
                if s == "floor":
                    continue
                r = results.get((name, n, s), {})
                if W.is_gather(meta) and s == "tensor-scatter (in place)":
                    cells.append("-")  # a gather has no in-place form
                    continue
                if "unsupported" in r:
                    cells.append("n/s")
                    continue
                if "median_ms" not in r:
                    cells.append("error")
                    continue
                ms = r["median_ms"]
                mark = "" if r.get("ok", True) else " **wrong**"
                cells.append(f"{ms:.1f} ({nbytes / ms / 1e6:.1f}){mark}")
                if s in peers and r.get("ok") and (best is None or ms < best[1]):
                    best = (s, ms)
            ours = results.get((name, n, "tensor-scatter"), {}).get("median_ms")
            base = results.get((name, n, "tensor-scatter (baseline)"), {}).get("median_ms")
            if base_col:
                cells.append(f"{ours / base:.2f}" if ours and base else "-")
            ratio_peer = f"{ours / best[1]:.2f}" if ours and best else "-"
            ratio_floor = f"{ours / floor:.2f}" if ours and floor else "-"
            fl = f"{floor:.1f} ({nbytes / floor / 1e6:.1f})" if floor else "-"
            lines.append(f"| {name} | {fl} | " + " | ".join(cells) +
                         f" | {best[0] if best else '-'} | {ratio_peer} | {ratio_floor} |")
        lines.append("")
    lines += ["Cells: median ms (effective GB/s over the minimum out-of-place bytes). "
              "`tensor-scatter` writes into a reused output (`*_out`, copy of data included); "
              "`(in place)` scatters into a buffer already holding data (the copy is not timed), "
              "a separate column, not a peer. candle and tract are single-threaded whatever N is; "
              "candle reports the fastest of its formulations (copy into a reused output then "
              "`scatter_set`, or an allocating `scatter`; `index_add` for row adds), with "
              "ScatterND rows given one index per element, built outside the timing; "
              "`n/s`: the library cannot express the operation."]
    (out_dir / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(threads), figsize=(7 * len(threads), 4.5), squeeze=False)
        for ax, n in zip(axes[0], threads):
            xs = np.arange(len(names))
            shown = [s for s in systems if s != "floor"]
            width = 0.8 / len(shown)
            for j, s in enumerate(shown):
                ratio = []
                for name in names:
                    r = results.get((name, n, s), {})
                    floor = results.get((name, n, "floor"), {}).get("median_ms")
                    ratio.append(r["median_ms"] / floor if "median_ms" in r and floor else 0)
                ax.bar(xs + j * width, ratio, width, label=s)
            ax.axhline(1.0, color="k", lw=0.8)
            ax.set_yscale("log")
            ax.set_xticks(xs + 0.4 - width / 2, names)
            ax.set_ylabel("time / memory-bandwidth floor (lower is better)")
            ax.set_title(f"{n} thread(s)")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out_dir / "chart.png", dpi=110)
    except Exception as e:  # noqa: BLE001
        print("chart skipped:", e)


if __name__ == "__main__":
    main()
