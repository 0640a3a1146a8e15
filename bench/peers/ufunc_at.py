"""The package against `np.add.at` and `np.maximum.at` on the matrix's scatter-add workloads
(W2, W3a, W5, W7, W8), each also with `max`: side by side in one process, the systems
alternating, median ms of each. Two forms: out of place (NumPy copies `data` into `out`, then
`ufunc.at`; ours writes `out`) and in place (`ufunc.at` alone; ours with `out=data`).

Beside them, each form's memory-bandwidth floor, timed in the same run: a copy that moves the
bytes the form must move (out of place: read data, write out, read indices and updates; in
place: read and write every destination cache line an update reaches, read indices and
updates). "bound" = NumPy's time / the floor: the most any kernel could be ahead of NumPy on
this machine in that cell.

    bench/peers/.venv/bin/python bench/peers/ufunc_at.py [--threads 2] [--scale 1.0]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import workloads as W  # noqa: E402

NAMES = ["W2", "W3a", "W5", "W7", "W8"]


def median_ms(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def floor_ms(nbytes: int, threads: int, runs: int) -> float:
    """The time to copy nbytes / 2 bytes (a copy moves twice what it copies): NumPy's copy,
    or torch's with `threads` threads where torch is installed, whichever is faster."""
    src = np.ones(max(1, nbytes // 8), np.float32)
    dst = np.empty_like(src)
    best = median_ms(lambda: np.copyto(dst, src), runs)
    try:
        import torch
    except ImportError:
        return best
    torch.set_num_threads(threads)
    ts_, td = torch.from_numpy(src), torch.from_numpy(dst)
    return min(best, median_ms(lambda: td.copy_(ts_), runs))


def in_place_bytes(w, key) -> int:
    """Bytes an in-place scatter must move: every destination line an update reaches, read and
    written, plus the indices and updates."""
    d = w["data"]
    hit = np.zeros(d.shape, bool)
    hit[key] = True
    per_line = max(1, 64 // d.itemsize)
    flat = np.concatenate([hit.reshape(-1), np.zeros(-hit.size % per_line, bool)])
    lines = int(flat.reshape(-1, per_line).any(axis=1).sum())
    return 2 * 64 * lines + w["indices"].nbytes + w["updates"].nbytes


def key_of(w):
    if w["op"] == "scatter_elements":
        return W.elements_key(w, w["indices"])
    return w["indices"][:, 0]  # scatter_nd rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[: a.threads]))
    import tensor_scatter as ts

    print(f"{a.threads} threads, scale {a.scale}, median of {a.runs} runs, ms "
          f"(numpy {np.__version__}); ratio = numpy / ours\n")
    print("| workload | reduction | numpy out of place | ours | ratio | floor | bound "
          "| numpy in place | ours in place | ratio | floor | bound |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in NAMES:
        w = W.make(name, a.scale)
        d, i, u, key = w["data"], w["indices"], w["updates"], key_of(w)
        floor_out = floor_ms(W.min_bytes(w), a.threads, a.runs)
        floor_in = floor_ms(in_place_bytes(w, key), a.threads, a.runs)
        kw = {"axis": w["axis"]} if w["op"] == "scatter_elements" else {}
        op = getattr(ts, w["op"])
        for red, ufunc in (("add", np.add), ("max", np.maximum)):
            want = d.copy()
            ufunc.at(want, key, u)
            out, mine, theirs = np.empty_like(d), d.copy(), d.copy()

            def numpy_out():
                np.copyto(out, d)
                ufunc.at(out, key, u)

            ours_out = lambda: op(d, i, u, **kw, reduction=red, threads=a.threads, out=out)
            numpy_in = lambda: ufunc.at(theirs, key, u)
            ours_in = lambda: op(mine, i, u, **kw, reduction=red, threads=a.threads, out=mine)
            ours_out()
            assert out.tobytes() == want.tobytes(), (name, red)
            cells = []
            for rnd in range(2):  # alternate, both orders
                pair = [(numpy_out, ours_out), (numpy_in, ours_in)]
                for k, (f, g) in enumerate(pair):
                    order = (f, g) if rnd == 0 else (g, f)
                    got = {id(h): median_ms(h, a.runs) for h in order}
                    if rnd == 0:
                        cells.append([got[id(f)], got[id(g)]])
                    else:
                        cells[k] = [min(cells[k][0], got[id(f)]), min(cells[k][1], got[id(g)])]
            (no, oo), (ni, oi) = cells
            print(f"| {name} | {red} | {no:.1f} | {oo:.1f} | {no / oo:.1f} | {floor_out:.1f} "
                  f"| {no / floor_out:.1f} | {ni:.1f} | {oi:.1f} | {ni / oi:.1f} | {floor_in:.1f} "
                  f"| {ni / floor_in:.1f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
