"""The package against PyTorch and JAX: their recorded results (peer_vectors.json, written by
peer_vectors.py where they are installed) replayed on NumPy arrays, bit for bit, so that every
run checks them; test_api.py calls the peers live where they are installed."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import tensor_scatter as ts

ml_dtypes = pytest.importorskip("ml_dtypes")

VECTORS = json.loads(Path(__file__).with_name("peer_vectors.json").read_text())


def array(spec, dtype) -> np.ndarray:
    return np.array(spec["values"], np.float64).reshape(spec["shape"]).astype(dtype)


def test_every_recorded_torch_and_jax_result_is_reproduced_bit_for_bit():
    kinds = Counter()
    failures = []
    for case in VECTORS["cases"]:
        dt = np.dtype(ml_dtypes.bfloat16) if case["dtype"] == "bfloat16" else np.dtype(case["dtype"])
        args = [array(case["data"], dt), array(case["indices"], np.int64)]
        if "updates" in case:
            args.append(array(case["updates"], dt))
        got = getattr(ts, case["op"])(*args, **case["options"])
        want = array(case["expected"], dt)
        kinds[case["kind"]] += 1
        if got.shape != want.shape or got.tobytes() != want.tobytes():
            failures.append(f"{case['kind']} {case['dtype']} {case['peer']}: {got.tolist()} != {want.tolist()}")
    assert not failures, f"{len(failures)} of {len(VECTORS['cases'])}:\n" + "\n".join(failures[:10])
    # Every peer operation the file claims is present.
    assert len(kinds) == 13 and min(kinds.values()) >= 12, kinds
