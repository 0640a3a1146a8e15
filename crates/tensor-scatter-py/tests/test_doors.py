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


def _stepped(a):
    """The same values through a stepped view, which the small calls do not take."""
    b = np.empty(2 * len(a), a.dtype)
    b[::2] = a
    return b[::2]


def test_small_onnx_style_calls_give_the_planned_paths_bits():
    """A 1-D scatter_elements / scatter_update of at most 1,024 updates into at most 1,024
    cells, and a 1-D gather / gather_elements of at most 1,024 indices from at most 1,024
    cells, run with no plan: against the same call through stepped views (the planned path),
    bit for bit, every reduction, allocating, in place and into another out=, on NumPy arrays
    and torch tensors; negative and out-of-range indices follow each policy as planned."""
    torch = pytest.importorskip("torch")
    nan = np.frombuffer(np.uint32(0x7FC01234).tobytes(), np.float32)[0]
    floats = [0.0, -0.0, 1.5, -2.25, 3e38, -3e38, np.inf, -np.inf, nan, 7.0, 0.1]
    ints = [0, 1, -1, 7, -13, 2**31 - 1, -(2**31), 100_000]
    rng = np.random.default_rng(11)
    sizes = [(1, 1), (10, 10), (200, 64), (1024, 7), (1025, 3), (5, 1024), (5, 1025)]
    for dtype in ("float32", "float64", "int32", "int64"):
        pool = np.array(floats if dtype.startswith("float") else ints).astype(dtype)
        for idt in ("int32", "int64"):
            for e, n in sizes:
                upd = pool[rng.integers(0, len(pool), e)]
                idx = rng.integers(0, n, e).astype(idt)
                data = pool[rng.integers(0, len(pool), n)]
                for op in (ts.scatter_elements, ts.scatter_update):
                    for red in ("none", "add", "sub", "mul", "min", "max", "mean"):
                        label = (dtype, idt, e, n, op.__name__, red)
                        want = bits(op(_stepped(data), _stepped(idx), _stepped(upd), reduction=red))
                        assert bits(op(data, idx, upd, reduction=red)) == want, label
                        x = data.copy()
                        assert op(x, idx, upd, reduction=red, out=x) is x and bits(x) == want, label
                        y = np.full_like(data, 5)
                        assert op(data, idx, upd, reduction=red, out=y) is y and bits(y) == want
                        t = torch.from_numpy(data.copy())
                        v = t._version
                        r = op(t, torch.from_numpy(idx), torch.from_numpy(upd), reduction=red, out=t)
                        assert r is t and bits(t.numpy()) == want and t._version > v, label
                        r = op(torch.from_numpy(data), torch.from_numpy(idx), torch.from_numpy(upd),
                               reduction=red)
                        assert isinstance(r, torch.Tensor) and bits(r.numpy()) == want, label
                        if red != "none":  # without include_self: the planned path's, too
                            want = op(_stepped(data), _stepped(idx), _stepped(upd), reduction=red,
                                      include_self=False)
                            got = op(data, idx, upd, reduction=red, include_self=False)
                            assert bits(got) == bits(want), label
                g = data[rng.integers(0, n, e).astype(idt)]
                gi = rng.integers(0, n, e).astype(idt)
                for op in (ts.gather, ts.gather_elements):
                    want = bits(op(_stepped(data), _stepped(gi)))
                    assert want == bits(data[gi]) and bits(op(data, gi)) == want
                    o = np.empty_like(g)
                    assert op(data, gi, out=o) is o and bits(o) == want
                    r = op(torch.from_numpy(data), torch.from_numpy(gi))
                    assert isinstance(r, torch.Tensor) and bits(r.numpy()) == want
    # Other widths are gathered by their bytes.
    for dtype in ("bool", "int8", "float16", "uint16"):
        data = rng.integers(0, 2, 9).astype(dtype)
        gi = rng.integers(0, 9, 20)
        assert bits(ts.gather(data, gi)) == bits(data[gi])
        assert bits(ts.gather_elements(data, gi)) == bits(data[gi])
    # Negative and out-of-range indices: each policy as the planned path has it, and an error
    # leaves the output as it was.
    data = np.arange(5, dtype=np.float32)
    neg = np.array([0, -1, 2])
    assert ts.scatter_elements(data, neg, np.ones(3, np.float32), reduction="add").tolist() == \
        [1, 1, 3, 3, 5]
    for op in (ts.scatter_elements, ts.scatter_update):
        x = data.copy()
        with pytest.raises(IndexError, match=r"index 5 at position \[1\]"):
            op(x, np.array([0, 5, 1]), np.ones(3, np.float32), reduction="add", out=x)
        assert x.tolist() == data.tolist()
        with pytest.raises(IndexError, match=r"index -1 at position \[1\]"):
            op(x, neg, np.ones(3, np.float32), negative_indices="error", out=x)
        assert x.tolist() == data.tolist()
        got = op(data, np.array([0, 9, 1]), np.ones(3, np.float32), reduction="add",
                 out_of_range="skip")
        assert got.tolist() == [1, 2, 2, 3, 4]
    for op in (ts.gather, ts.gather_elements):
        assert op(data, neg).tolist() == [0, 4, 2]
        assert op(data, np.array([1, 7]), out_of_range="clamp").tolist() == [1, 4]
        assert op(data, np.array([1, 7]), out_of_range="fill", fill_value=-2).tolist() == [1, -2]
        o = np.full(2, 9, np.float32)
        with pytest.raises(IndexError, match=r"index 7 at position \[1\]"):
            op(data, np.array([1, 7]), out=o)
        assert o.tolist() == [9, 9]
