"""The Python API as users call it: strided and broadcast inputs, out= and in place, aliasing,
errors (their classes, and that nothing was written), other array kinds."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import reference as ref
import tensor_scatter as ts


def bits(a) -> bytes:
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def test_strided_negative_and_broadcast_inputs_give_the_contiguous_result():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    data = base[::-1, 1::2]  # reversed rows, every other column: gaps
    data_t = base.T[::-1]  # transposed, reversed: no gaps, read in place
    idx = np.array([[2, 0, 1], [0, 0, 2]])
    for d in (data, data_t[:2, :3]):
        upd = np.broadcast_to(np.float32(0.5), idx.shape)  # stride 0
        want = ref.scatter_elements(np.ascontiguousarray(d), idx, np.ascontiguousarray(upd), 1, "add")
        got = ts.scatter_elements(d, idx, upd, axis=1, reduction="add")
        assert bits(got) == bits(want)
    # A broadcast table of a huge logical size is gathered without being copied.
    row = np.arange(1 << 14, dtype=np.float32)
    table = np.broadcast_to(row, (1 << 14, 1 << 14))  # 1 GiB logically
    got = ts.gather(table, np.array([7, -1]))
    assert got.shape == (2, 1 << 14) and (got == row).all()


def test_out_receives_the_result_and_out_equal_data_scatters_in_place():
    data = np.zeros(5, np.int32)
    idx, upd = np.array([4, 1, 4]), np.array([1, 2, 3], np.int32)
    out = np.full(5, -1, np.int32)
    r = ts.scatter_update(data, idx, upd, reduction="add", out=out)
    assert r is out and out.tolist() == [0, 2, 0, 0, 4] and data.tolist() == [0] * 5
    r = ts.scatter_update(data, idx, upd, reduction="add", out=data)
    assert r is data and data.tolist() == [0, 2, 0, 0, 4]
    # In place into a strided view of a bigger array changes that array.
    big = np.zeros((3, 4), np.float64)
    col = big[:, 2]
    ts.scatter_elements(col, np.array([2, 0]), np.array([1.5, 2.5]), out=col)
    assert big[:, 2].tolist() == [2.5, 0.0, 1.5] and big.sum() == 4.0
    # A stepped output (gaps) is written where it lies; the cells between are not touched.
    wide = np.full(8, -1.0)
    view = wide[::2]
    g = ts.gather(np.array([1.0, 2.0, 3.0]), np.array([2, 0, 1, 1]), out=view)
    assert g is view
    assert wide.tolist() == [3, -1, 1, -1, 2, -1, 2, -1]
    grid = np.full((3, 8), -1.0)
    block = grid[:, 2:6:2]  # a block with gaps, scattered into in place
    ts.scatter_elements(block, np.array([[2, 0]]), np.array([[5.0, 7.0]]), out=block, reduction="add")
    assert grid[:, 2:6:2].tolist() == [[-1, 6], [-1, -1], [4, -1]]
    assert (np.delete(grid, [2, 4], axis=1) == -1).all()


def test_an_output_that_shares_memory_with_an_input_gives_the_bits_of_separate_arrays():
    buf = np.arange(8, dtype=np.float32)
    out = buf[:4]
    updates = buf[2:6]  # overlaps out
    idx = np.array([3, 2, 1, 0])
    want = ref.scatter_elements(np.zeros(4, np.float32), idx, updates.copy(), 0, "add")
    ts.scatter_elements(np.zeros(4, np.float32), idx, updates, reduction="add", out=out)
    assert bits(out) == bits(want)
    # In place with updates a view of the destination.
    x = np.arange(6, dtype=np.int64)
    want = ref.scatter_update(x.copy(), np.array([0, 5]), x[1:3].copy(), 0, "add")
    ts.scatter_update(x, np.array([0, 5]), x[1:3], reduction="add", out=x)
    assert x.tolist() == want.tolist()
    # A gather into its own table.
    t = np.array([1, 2, 3, 4])
    ts.gather(t, np.array([3, 2, 1, 0]), out=t)
    assert t.tolist() == [4, 3, 2, 1]


def test_errors_have_python_classes_and_leave_out_untouched():
    data = np.zeros((2, 3), np.float32)
    out = np.full((2, 3), 7.0, np.float32)
    with pytest.raises(IndexError, match="indices") as e:
        ts.scatter_elements(data, np.array([[0, 3]]), np.ones((1, 2), np.float32), axis=1, out=out)
    assert isinstance(e.value, ts.OutOfRangeError) and isinstance(e.value, ts.Error)
    assert "3" in str(e.value)
    assert (out == 7).all()
    with pytest.raises(TypeError):
        ts.scatter_elements(data, np.array([[0.0]]), np.ones((1, 1), np.float32))
    with pytest.raises(TypeError, match="updates"):  # float into int: no same_kind cast
        ts.scatter_elements(data.astype(np.int32), np.array([[0]]), np.ones((1, 1), np.float64))
    with pytest.raises(TypeError):
        ts.gather(np.array(["a", "b"]), np.array([0]))
    with pytest.raises(ValueError, match="axis"):
        ts.gather(data, np.array([0]), axis=5)
    with pytest.raises(ValueError, match="reduction|bogus"):
        ts.scatter_nd(data, np.array([[0]]), np.ones((1, 3), np.float32), reduction="bogus")
    with pytest.raises(ValueError, match="out_of_range"):
        ts.gather(data, np.array([0]), out_of_range="wrap")
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros((2, 3), np.float32)
        ro.flags.writeable = False
        ts.scatter_elements(data, np.array([[0]]), np.ones((1, 1), np.float32), out=ro)
    # In place (out is data, read once by the native half): refused too, nothing written.
    with pytest.raises(ValueError, match="read-only"):
        ts.scatter_elements(ro, np.array([[0]]), np.ones((1, 1), np.float32), out=ro)
    assert not ro.any()
    with pytest.raises(ValueError, match="shape"):
        ts.scatter_elements(data, np.array([[0]]), np.ones((1, 1), np.float32), out=np.zeros(6, np.float32))
    with pytest.raises(ValueError, match="0 and 1"):
        ts.scatter_update(np.array([2], np.uint8).view(bool), np.array([0]), np.array([True]))
    with pytest.raises(IndexError):
        ts.gather_nd(data, np.array([[1, -4]]), out=out[:1, 0])
    assert (out == 7).all()
    # A tuple is an array-like, never the general path's prepared argument.
    with pytest.raises((ValueError, TypeError)):
        ts.gather((np.zeros(2, np.int16), "bfloat16"), np.array([0]))


def test_every_dtype_round_trips_including_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dt in ["float64", "float32", "float16", ml_dtypes.bfloat16, "int8", "uint64", "bool"]:
        d = np.zeros(3, dtype=dt)
        u = np.ones(2, dtype=dt)
        got = ts.scatter_elements(d, np.array([2, 0], np.uint8), u)
        assert got.dtype == d.dtype and bits(got) == bits(np.array([1, 0, 1]).astype(dt))
    # A bool output is only written: whatever bytes it held before do not matter.
    out = np.full(3, 7, np.uint8).view(bool)
    ts.scatter_elements(np.zeros(3, bool), np.array([1]), np.array([True]), out=out)
    assert out.view(np.uint8).tolist() == [0, 1, 0]
    g = np.full((2, 2), 9, np.uint8).view(bool)
    ts.gather(np.array([True, False]), np.array([[1, 0], [0, 0]]), out=g)
    assert g.view(np.uint8).tolist() == [[0, 1], [1, 1]]


def test_byte_swapped_and_misaligned_inputs_are_read_correctly():
    d = np.arange(4, dtype=">f8")
    got = ts.gather(d, np.array([3, 0], dtype=">i4"))
    assert got.tolist() == [3.0, 0.0]
    raw = np.zeros(4 * 8 + 1, np.uint8)
    mis = raw[1:].view(np.float64)  # misaligned
    mis[:] = [1, 2, 3, 4]
    assert ts.gather(mis, np.array([1])).tolist() == [2.0]


def test_threads_give_the_same_bits_and_the_gil_is_released():
    rng = np.random.default_rng(5)
    n = 1 << 18
    data = rng.standard_normal(n).astype(np.float32)
    idx = rng.integers(0, 1000, n)
    one = ts.scatter_update(np.zeros(1000, np.float32), idx, data, reduction="add", threads=1)
    for t in (2, 4, None):
        assert bits(ts.scatter_update(np.zeros(1000, np.float32), idx, data, reduction="add", threads=t)) == bits(one)
    results = []
    workers = [threading.Thread(target=lambda: results.append(
        ts.scatter_update(np.zeros(1000, np.float32), idx, data, reduction="add"))) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert all(bits(r) == bits(one) for r in results)
    with pytest.raises(ValueError, match="threads"):
        ts.gather(data, idx, threads=-1)


def test_torch_tensors_in_and_out():
    torch = pytest.importorskip("torch")
    x = torch.zeros(5)
    idx = torch.tensor([0, 4, 0])
    src = torch.tensor([1.0, 2.0, 3.0])
    got = ts.scatter_update(x, idx, src, reduction="add")
    assert isinstance(got, torch.Tensor) and got.tolist() == [4.0, 0, 0, 0, 2.0]
    assert torch.equal(got, torch.zeros(5).index_add_(0, idx, src))
    ts.scatter_update(x, idx, src, reduction="add", out=x)
    assert x.tolist() == [4.0, 0, 0, 0, 2.0]
    b = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    g = ts.gather(b, torch.tensor([1, 1, 0]))
    assert g.dtype == torch.bfloat16 and g.tolist() == [-2.0, -2.0, 1.5]
    m = torch.tensor([[1.0, 5.0], [3.0, 2.0]])
    i = torch.tensor([[0, 0], [1, 0]])
    want = torch.zeros(2, 2).scatter_reduce(1, i, m, "amax", include_self=False)
    assert torch.equal(ts.scatter_elements(torch.zeros(2, 2), i, m, axis=1, reduction="max", include_self=False), want)
    assert torch.equal(ts.gather_elements(m, i, axis=1), torch.gather(m, 1, i))


def test_writing_a_torch_tensor_in_place_is_seen_by_autograd():
    """A tensor written through its memory (the native half, or the general path's NumPy view
    of it) has its version counter bumped, as torch's own in-place operations do: a backward
    that saved it raises instead of silently using the new values."""
    torch = pytest.importorskip("torch")
    idx = torch.tensor([0, 1])
    two = torch.tensor([5.0, 5.0])
    writes = {
        "scatter_elements in place": lambda c: ts.scatter_elements(c, idx, two, out=c),
        "scatter_update into out": lambda c: ts.scatter_update(torch.zeros(5), idx, two, out=c),
        "scatter_nd into out": lambda c: ts.scatter_nd(torch.zeros(5), idx[:, None], two, out=c),
        "gather into out": lambda c: ts.gather(torch.arange(5.0), idx.repeat(3)[:5], out=c),
        "scatter (torch_scatter) into out": lambda c: ts.scatter(two, idx, 0, out=c),
        "segment_coo into out": lambda c: ts.segment_coo(two, idx, out=c),
        # The general path (an input overlapping out is copied first), which writes out
        # through a NumPy view of the tensor.
        "scatter_elements, general path": lambda c: ts.scatter_elements(c, idx, c[2:4], out=c),
        "gather, general path": lambda c: ts.gather(c, idx.repeat(3)[:5], out=c),
    }
    for name, write in writes.items():
        x = torch.randn(5, requires_grad=True)
        c = torch.ones(5)
        y = (x * c).sum()  # saves c for the backward
        before = c._version
        write(c)
        assert c._version > before, name
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
    # A new result is not a write: its version starts at 0.
    assert ts.gather(torch.arange(5.0), idx)._version == 0


def test_new_torch_results_own_their_memory_in_every_dtype_and_size():
    """A new result on torch tensors is handed to torch through its DLPack import (memory of
    ours, freed by torch's tensor), from 4 MiB on made in NumPy's memory: either way a plain
    contiguous tensor of data's dtype and the expected values, its own memory, writable, and
    alive after everything else of the call is gone."""
    torch = pytest.importorskip("torch")
    import gc

    dtypes = (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64,
              torch.int32, torch.int16, torch.int8, torch.uint64, torch.uint32, torch.uint16,
              torch.uint8, torch.bool)
    for dt in dtypes:
        for n in (0, 7, (1 << 22) // dt.itemsize + 3):  # empty, small, past 4 MiB
            x = (torch.arange(n) % 3).to(dt)
            i = torch.arange(n - 1, -1, -1)
            got = ts.gather(x, i)
            want = torch.flip(x, (0,))
            upd = ts.scatter_update(x, i[:2], x[:2]) if n else ts.scatter_update(x, i, x)
            del x
            gc.collect()
            assert type(got) is torch.Tensor and got.dtype == dt and got.is_contiguous()
            assert torch.equal(got, want), (dt, n)
            assert upd.dtype == dt and upd.shape == (n,)
            if n:
                assert got.data_ptr() != upd.data_ptr()
                got[0] = want[1]
                assert torch.equal(got[:2], want[1].expand(2))
    # The segment family's results (values and positions, every dtype its kernels give).
    s = torch.tensor([[1.0, -2.0], [3.0, 4.0], [-5.0, 6.0]])
    idx = torch.tensor([1, 0, 1])
    for dt in (torch.float32, torch.float64, torch.bfloat16, torch.int32, torch.int64):
        v, arg = ts.scatter_max(s.to(dt), idx, dim=0, dim_size=3)
        assert v.dtype == dt and arg.dtype == torch.int64 and type(arg) is torch.Tensor
        assert v.to(torch.float64).tolist() == [[3.0, 4.0], [1.0, 6.0], [0.0, 0.0]]
        assert arg.tolist() == [[1, 1], [0, 2], [3, 3]]
        summed = ts.scatter(s.to(dt), idx, 0, dim_size=2)
        assert summed.dtype == dt and summed.to(torch.float64).tolist() == [[3.0, 4.0], [-4.0, 4.0]]


def test_torch_tensors_read_in_one_call_equal_those_read_by_attribute():
    """A torch.Tensor is read through torch's DLPack exchange table; a subclass through its
    attributes. Every layout (views with an offset, steps, transposes, stride 0, 0-d, empty)
    and dtype gives the same bits either way, and both are read where they lie."""
    torch = pytest.importorskip("torch")
    from tensor_scatter import _native

    class Sub(torch.Tensor):
        pass

    def tbits(t):
        return torch.empty(t.shape, dtype=t.dtype).copy_(t).view(torch.uint8).numpy().tobytes()

    g = torch.Generator().manual_seed(3)
    base = torch.randn(7, 12, generator=g)
    opts = (0, 0, "wrap", "error", None, None)
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32,
               torch.uint8, torch.bool):
        b = base > 0 if dt is torch.bool else base.to(dt)
        for t in (b, b[1:, 2:], b[::2, ::3], b.t(), b[2].expand(5, 12)):
            n = t.shape[0]
            stepped = torch.tensor([[1, 2], [0, 9]], dtype=torch.int32).t()[0]  # stride 2
            for idx in (torch.tensor([n - 1, 0, -1]), stepped, torch.zeros(0, dtype=torch.int64)):
                assert _native.gather("gather", t, idx, None, *opts) is not None
                assert _native.gather("gather", t.as_subclass(Sub), idx.as_subclass(Sub), None, *opts) is not None
                want = ts.gather(t.as_subclass(Sub), idx.as_subclass(Sub))
                got = ts.gather(t, idx)
                assert type(got) is torch.Tensor and got.dtype == t.dtype
                assert got.shape == want.shape and tbits(got) == tbits(want.as_subclass(torch.Tensor))
    # Scatter into out=, in place, from a stepped view.
    data = base.clone()
    upd = base[:, ::2].contiguous()[:3]
    idx = torch.tensor([[0, 6, 6, 1, 2, 0]] * 3)
    want = ts.scatter_elements(data.as_subclass(Sub), idx.as_subclass(Sub), upd.as_subclass(Sub), axis=1,
                               reduction="add")
    out = torch.empty_like(base)
    ts.scatter_elements(data, idx, upd, axis=1, reduction="add", out=out)
    assert torch.equal(out, want.as_subclass(torch.Tensor))
    view = data[:3]
    ts.scatter_elements(view, idx, upd, axis=1, reduction="add", out=view)
    assert torch.equal(data[:3], out[:3]) and torch.equal(data[3:], base[3:])
    # A 0-d tensor is read too (gather of a 0-d table is an error, here as there).
    for t in (base[3, 4], base[3, 4].as_subclass(Sub)):
        with pytest.raises(ValueError):
            ts.gather(t, torch.tensor([0]))


def test_negative_views_are_read_resolved_and_never_written_in_place():
    """The imaginary part of a conjugate view is a negative view: its values are the negated
    bits. It is read as its values (the native half refuses its bits), and an out= that is one
    is refused: the general path would write a resolved copy, leaving the tensor unchanged."""
    torch = pytest.importorskip("torch")
    from tensor_scatter import _native

    z = torch.complex(torch.arange(6.0), torch.arange(6.0) + 1)
    im = z.conj().imag
    assert im.is_neg()
    idx = torch.tensor([0, 5, 5])
    assert _native.gather("gather", im, idx, None, 0, 0, "wrap", "error", None, None) is None
    assert torch.equal(ts.gather(im, idx), im.resolve_neg()[idx])
    upd = im[:3]
    want = torch.zeros(6).index_add_(0, idx, upd.resolve_neg())
    assert torch.equal(ts.scatter_update(torch.zeros(6), idx, upd, reduction="add"), want)
    before = im.resolve_neg().clone()
    for call in (lambda: ts.gather(torch.arange(6.0), idx, out=im[:3]),
                 lambda: ts.scatter_update(torch.zeros(6), idx, upd, out=im),
                 lambda: ts.scatter(torch.ones(3), idx, 0, im)):
        with pytest.raises(ValueError, match="negative or conjugate view"):
            call()
    assert torch.equal(im.resolve_neg(), before)


def test_a_zero_tensor_is_read_as_zeros_never_through_its_null_pointer():
    """autograd's ZeroTensor has elements and a data pointer of 0: reading it crashed the
    process. It is read as zeros, and refused as out=."""
    torch = pytest.importorskip("torch")
    z = torch._efficientzerotensor(4)
    i = torch.tensor([0, 3, 3])
    assert torch.equal(ts.gather(z, i), torch.zeros(3))
    assert torch.equal(ts.scatter(z, torch.tensor([0, 1, 1, 0]), 0), torch.zeros(2))
    assert torch.equal(ts.scatter_elements(torch.ones(4), i, z[:3], reduction="add"), torch.ones(4))
    with pytest.raises(ValueError, match="ZeroTensor"):
        ts.gather(torch.ones(4), i, out=torch._efficientzerotensor(3))


def test_jax_arrays_in_and_out():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.zeros(4)
    got = ts.scatter_update(x, jnp.array([1, 1]), jnp.array([1.0, 2.0]), reduction="add")
    assert type(got) is type(x)
    assert got.tolist() == x.at[jnp.array([1, 1])].add(jnp.array([1.0, 2.0])).tolist()
    with pytest.raises(ValueError, match="immutable"):
        ts.scatter_update(x, jnp.array([1]), jnp.array([1.0]), out=x)


def test_the_readme_python_quick_start_runs_as_written():
    from pathlib import Path

    readme = Path(__file__).resolve().parents[3] / "README.md"
    text = readme.read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    assert blocks, "no python block in README.md"
    import importlib.util
    for block in blocks:
        if "import torch" in block and importlib.util.find_spec("torch") is None:
            continue  # the autograd example needs torch (not installed here)
        exec(compile(block, str(readme), "exec"), {"__name__": "__main__"})


def test_the_native_path_and_the_general_path_agree():
    """Arrays the native half takes as they are (stepped ones included), and the same values
    in a layout it hands to the Python half (byte-swapped, misaligned), give the same bits and
    the same errors."""
    from tensor_scatter import _native

    rng = np.random.default_rng(5)
    data = rng.standard_normal((4, 6)).astype(np.float32)
    idx = rng.integers(-6, 6, (4, 5))
    upd = rng.standard_normal((4, 5)).astype(np.float32)
    opts = (1, "add", True, "wrap", "error", "per_update", None, False)
    assert _native.scatter("elements", data, idx, upd, None, *opts) is not None
    swapped = data.astype(">f4")
    stepped = np.zeros((4, 12), np.float32)[:, ::2]
    stepped[...] = data
    misaligned = np.frombuffer(bytearray(b"\0" + data.tobytes()), np.float32, offset=1).reshape(4, 6)
    assert not misaligned.flags.aligned
    assert _native.scatter("elements", swapped, idx, upd, None, *opts) is None
    assert _native.scatter("elements", misaligned, idx, upd, None, *opts) is None
    assert _native.scatter("elements", stepped, idx, upd, None, *opts) is not None
    others = (swapped, stepped, misaligned)
    for red in ["none", "add", "mul", "min", "max", "mean"]:
        want = ts.scatter_elements(data, idx, upd, axis=1, reduction=red)
        for d in others:
            assert bits(ts.scatter_elements(d, idx, upd, axis=1, reduction=red)) == bits(want)
    want = ts.gather(data, idx[:, :2], axis=1)
    for d in others:
        assert bits(ts.gather(d, idx[:, :2], axis=1)) == bits(want)
    for d in (data, *others):
        with pytest.raises(IndexError, match="indices"):
            ts.gather(d, np.array([9]), axis=1)


def test_a_byte_swapped_or_misaligned_out_is_written_through_a_native_stage():
    """An out of foreign byte order used to be staged in its own byte order, which the native
    half refuses (a RuntimeError); every operator now stages in native order."""
    want = ts.scatter_update(np.zeros(3, np.float32), np.array([1]), np.array([2.0], np.float32),
                             reduction="add")
    out = np.zeros(3, ">f4")
    ts.scatter_update(np.zeros(3, ">f4"), np.array([1]), np.array([2.0], ">f4"), reduction="add",
                      out=out)
    assert out.tolist() == want.tolist()
    data = np.arange(4.0).astype(">f8")
    ts.scatter_elements(data, np.array([0]), np.array([9.0], ">f8"), out=data)  # in place
    assert data.tolist() == [9.0, 1.0, 2.0, 3.0]
    g = np.zeros(2, ">f8")
    ts.gather(np.arange(4.0), np.array([3, 1]), out=g)
    assert g.tolist() == [3.0, 1.0]
    o = np.ones(2, ">f8")
    ts.scatter(np.array([1.0, 2.0, 3.0]), np.array([0, 1, 1]), 0, o)
    assert o.tolist() == [2.0, 6.0]


def test_package_modules_form_no_import_cycle():
    """Every import between the package's modules, function-level ones included, points one
    way: ``_errors`` / ``_native`` <- ``_arrays`` <- ``_core`` <- ``_grad`` <- ``_segment`` <-
    ``__init__`` (DESIGN.md, "The Python package")."""
    import ast
    import pathlib

    root = pathlib.Path(ts.__file__).parent
    edges = {}
    for path in root.glob("*.py"):
        mod = path.stem
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps.update(a.name for a in node.names)
        edges[mod] = {d for d in deps if (root / f"{d}.py").exists() and d != mod}
    assert {"_core", "_grad", "_segment", "__init__"} <= set(edges)
    seen, stack = set(), []

    def visit(m):
        assert m not in stack, f"import cycle: {' -> '.join(stack + [m])}"
        if m in seen:
            return
        stack.append(m)
        for d in edges.get(m, ()):
            visit(d)
        stack.pop()
        seen.add(m)

    for m in edges:
        visit(m)
