"""The same work through every door gives the same bits: the doors benchmark's smoke run
(every door of every workload at a tiny scale, checked against the first), and the index
layouts PyTorch users write (an expanded index) against the plain operator."""

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import tensor_scatter as ts

DOORS = Path(__file__).resolve().parents[3] / "bench" / "peers" / "doors.py"


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def test_the_doors_benchmark_runs_and_every_door_agrees(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [str(DOORS), "--smoke", "--threads", "2"])
    try:
        runpy.run_path(str(DOORS), run_name="__main__")
    finally:
        ts.set_default_threads(0)
    out = capsys.readouterr().out
    assert out.count("doors checked") >= 10, out


@pytest.mark.parametrize("reduction", ["add", "mul", "min", "max", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_an_expanded_index_is_the_row_scatter(reduction, dtype):
    rng = np.random.default_rng(7)
    e, n, f = 300, 40, 5
    dst = rng.integers(-n, n, e)  # negative indices wrap
    src = rng.integers(-3, 4, (e, f)).astype(dtype)
    data = rng.integers(-3, 4, (n, f)).astype(dtype)
    want = ts.scatter_update(data, dst, src, reduction=reduction)
    expanded = np.broadcast_to(dst[:, None], (e, f))
    for index in (expanded, np.ascontiguousarray(expanded)):
        for threads in (1, 2):
            got = ts.scatter_elements(data, index, src, reduction=reduction, threads=threads)
            assert bits(got) == bits(want)
            out = data.copy()
            ts.scatter_elements(out, index, src, reduction=reduction, out=out, threads=threads)
            assert bits(out) == bits(want)
    assert bits(ts.scatter_nd(data, dst[:, None], src, reduction=reduction)) == bits(want)
    for include_self in (True, False):
        a = ts.scatter_update(data, dst, src, reduction=reduction, include_self=include_self)
        b = ts.scatter_elements(data, expanded, src, reduction=reduction, include_self=include_self)
        assert bits(a) == bits(b)


def test_an_expanded_index_is_the_row_gather_and_errors_name_its_coordinate():
    rng = np.random.default_rng(3)
    table = rng.standard_normal((50, 8)).astype(np.float32)
    idx = rng.integers(-50, 50, 400)
    want = np.take(table, idx, axis=0)
    expanded = np.broadcast_to(idx[:, None], (400, 8))
    assert bits(ts.gather_elements(table, expanded)) == bits(want)
    assert bits(ts.gather_elements(table, np.ascontiguousarray(expanded))) == bits(want)
    out = np.empty_like(want)
    ts.gather_elements(table, expanded, out=out)
    assert bits(out) == bits(want)
    assert bits(ts.gather_elements(table[:, 0], idx)) == bits(want[:, 0])  # 1-D: a gather
    bad = idx.copy()
    bad[123] = 50
    with pytest.raises(ts.OutOfRangeError, match=r"\[123, 0\]"):
        ts.gather_elements(table, np.broadcast_to(bad[:, None], (400, 8)))
    with pytest.raises(ts.OutOfRangeError, match=r"\[123, 0\]"):
        ts.scatter_elements(table, np.broadcast_to(bad[:, None], (400, 8)),
                            np.ones((400, 8), np.float32), reduction="add")


def test_torch_expanded_index_idioms():
    torch = pytest.importorskip("torch")
    e, n, f = 200, 30, 4
    dst = torch.randint(0, n, (e,))
    src = torch.randn(e, f, dtype=torch.float64)
    full = dst.view(-1, 1).expand_as(src)
    want = torch.zeros(n, f, dtype=torch.float64).index_add_(0, dst, src)
    got = ts.scatter_elements(torch.zeros(n, f, dtype=torch.float64), full, src, reduction="add")
    assert torch.allclose(got, want)
    assert torch.equal(ts.gather_elements(want, full), want.index_select(0, dst))
