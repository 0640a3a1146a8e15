"""Runs many tensor-scatter CLI invocations through `tensor-scatter batch` and reads results.

Shared by the ONNX node-test runner and the differential tester. A case is a list of CLI
arguments (without the program name); the result is "ok" or the error message.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(os.environ.get("TENSOR_SCATTER_BIN", ROOT / "target" / "release" / "tensor-scatter"))


def run_batch(cases: list[list[str]], workdir: Path) -> list[str]:
    """Runs every case in one process; returns one result line per case, in order."""
    if not cases:
        return []
    for args in cases:
        assert all("\t" not in a and "\n" not in a for a in args), args
    listing = workdir / "cases.tsv"
    listing.write_text("".join("\t".join(a) + "\n" for a in cases))
    proc = subprocess.run(
        [str(BIN), "batch", "--cases", str(listing)],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = proc.stdout.splitlines()
    # Exit status 1: some case failed (its line says why); anything else is the batch's own.
    if proc.returncode not in (0, 1) or len(lines) != len(cases):
        raise RuntimeError(
            f"tensor-scatter batch failed (exit {proc.returncode}, {len(lines)} of {len(cases)} "
            f"results): {proc.stderr.strip()}"
        )
    return lines


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Exact equality: dtype, shape and every element's bits (NaN == NaN of the same bits,
    -0.0 != +0.0)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == np.bool_:
        return bool(np.array_equal(a, b))
    width = a.dtype.itemsize
    view = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width]
    return bool(np.array_equal(np.ascontiguousarray(a).view(view), np.ascontiguousarray(b).view(view)))


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equality of values: dtype, shape, every element equal, NaN matching NaN in any payload,
    and the sign of zero respected."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        x, y = a.astype(np.float64), b.astype(np.float64)
        nan = np.isnan(x) & np.isnan(y)
        eq = (x == y) & (np.signbit(x) == np.signbit(y))
        return bool(np.all(nan | eq))
    return bool(np.array_equal(a, b))
