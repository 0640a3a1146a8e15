"""Arguments taken as NumPy and PyTorch take them: integers as `operator.index` takes them,
updates as `ufunc.at` takes them (a scalar, a list, a broadcast, NumPy's `same_kind` casting),
strict options (every bad one a `tensor_scatter.Error` naming the operator), no silent wrong
answer, and public names."""

import numpy as np
import pytest

import tensor_scatter as ts


def bits(a):
    a = np.asarray(a)
    return a.view(np.uint8).tobytes()


def test_integer_arguments_take_what_operator_index_takes():
    src = np.arange(6, dtype=np.float32)
    idx = np.array([0, 2, 2, 1, 0, 2])
    want = ts.scatter(src, idx, 0, dim_size=3)
    assert bits(ts.scatter(src, idx, 0, dim_size=idx.max() + 1)) == bits(want)  # np.int64
    assert bits(ts.scatter(src, idx, np.int32(0), dim_size=np.uint8(3))) == bits(want)
    assert bits(ts.scatter_mean(src, idx, dim_size=np.int64(3))) == bits(ts.scatter_mean(src, idx, dim_size=3))
    x = np.zeros((2, 3), np.float32)
    got = ts.scatter_update(x, np.array([1]), np.ones((2, 1), np.float32), axis=np.int64(-1),
                            threads=np.int64(2))
    assert got.tolist() == [[0, 1, 0], [0, 1, 0]]
    t = np.arange(6).reshape(3, 2)
    assert ts.gather(t, np.array([2]), axis=np.int16(0), batch_dims=np.int64(0)).tolist() == [[4, 5]]


def test_integer_arguments_refuse_other_types_naming_the_operator():
    x = np.zeros(3, np.float32)
    for call, arg in [
        (lambda: ts.scatter_update(x, np.array([0]), np.ones(1, np.float32), axis=0.0), "axis"),
        (lambda: ts.gather(x, np.array([0]), axis="0"), "axis"),
        (lambda: ts.gather(x, np.array([0]), batch_dims=0.5), "batch_dims"),
        (lambda: ts.scatter(x, np.array([0, 0, 1]), dim=1.0), "dim"),
        (lambda: ts.scatter(x, np.array([0, 0, 1]), dim_size=2.0), "dim_size"),
        (lambda: ts.gather(x, np.array([0]), threads=1.0), "threads"),
        (lambda: ts.scatter_update(x, np.array([0]), np.ones(1, np.float32), axis=True), "axis"),
    ]:
        with pytest.raises(ts.ArgumentTypeError, match=arg) as e:
            call()
        assert isinstance(e.value, TypeError) and isinstance(e.value, ts.Error)
        assert str(e.value).split(":")[0] in ("scatter_update", "gather", "scatter")
    with pytest.raises(ts.ArgumentError, match="dim_size"):
        ts.scatter(x, np.array([0, 0, 1]), dim_size=-1)


def test_updates_as_ufunc_at_takes_them():
    i = np.array([0, 3, 3, 1])
    want = np.zeros(5, np.float32)
    np.add.at(want, i, 2.0)
    x = np.zeros(5, np.float32)
    ts.scatter_update(x, i, 2.0, reduction="add", out=x)  # a Python scalar, np.add.at(x, i, 2.0)
    assert bits(x) == bits(want)
    assert bits(ts.scatter_elements(np.zeros(5, np.float32), i, 2.0, reduction="add")) == bits(want)
    assert bits(ts.scatter_nd(np.zeros(5, np.float32), i[:, None], np.float32(2), reduction="add")) == bits(want)
    # A list is an array; an empty list an empty int64 index.
    got = ts.scatter_update(np.zeros(5, np.float32), [0, 3, 3, 1], [2.0, 2.0, 2.0, 2.0], reduction="add")
    assert bits(got) == bits(want)
    assert bits(ts.scatter_update(np.ones(3), [], [], reduction="add")) == bits(np.ones(3))
    assert ts.gather(np.arange(3.0), []).shape == (0,)
    # Rows broadcast to the shape the scatter needs (one row for every index).
    rows = ts.scatter_update(np.zeros((3, 2)), np.array([0, 2, 0]), np.array([1.0, 2.0]), reduction="add")
    assert rows.tolist() == [[2, 4], [0, 0], [1, 2]]
    # Another dtype: NumPy's same_kind rule, as ufunc.at.
    want64 = np.zeros(5, np.float32)
    np.add.at(want64, i, np.array([0.1, 0.2, 0.3, 0.4]))
    got = ts.scatter_update(np.zeros(5, np.float32), i, np.array([0.1, 0.2, 0.3, 0.4]), reduction="add")
    assert bits(got) == bits(want64)
    assert ts.scatter_update(np.zeros(3, np.int8), [1], np.array([5], np.int64), reduction="add").tolist() == [0, 5, 0]
    with pytest.raises(ts.DTypeError, match="same_kind"):
        ts.scatter_update(np.zeros(3, np.int64), [1], np.array([0.5]), reduction="add")
    with pytest.raises(TypeError, match="same_kind"):
        ts.scatter_update(np.zeros(3, np.int64), [1], 2.5, reduction="add")
    with pytest.raises(ValueError, match="updates"):  # a shape that does not broadcast
        ts.scatter_update(np.zeros(5, np.float32), i, np.ones(3, np.float32))


def test_torch_updates_of_another_dtype_say_how_to_cast():
    torch = pytest.importorskip("torch")
    with pytest.raises(ts.DTypeError, match=r"\.to\("):
        ts.scatter_update(torch.zeros(3), torch.tensor([1]), torch.ones(1, dtype=torch.float64), reduction="add")
    got = ts.scatter(torch.arange(4.0), torch.tensor([0, 1, 1, 0]), 0, dim_size=torch.tensor(2))
    assert got.tolist() == [3.0, 3.0]


def test_options_are_strict():
    x = np.zeros(3, np.float32)
    i, u = np.array([0]), np.ones(1, np.float32)
    with pytest.raises(ts.ArgumentTypeError, match="include_self"):
        ts.scatter_update(x, i, u, reduction="add", include_self="no")
    with pytest.raises(ts.ArgumentTypeError, match="updates_window"):
        ts.scatter_elements(x, i, u, updates_window=1)
    assert ts.scatter_update(x, i, u, reduction="max", include_self=np.bool_(False)).tolist() == [1, 0, 0]
    # fill_value: held exactly by an integer dtype, given only with out_of_range="fill".
    t = np.arange(4, dtype=np.int64)
    with pytest.raises(ts.ArgumentError, match="fill_value"):
        ts.gather(t, np.array([9]), out_of_range="fill", fill_value=1.5)
    with pytest.raises(ts.ArgumentError, match="fill_value"):
        ts.gather(np.arange(4, dtype=np.uint8), np.array([9]), out_of_range="fill", fill_value=256)
    with pytest.raises(ts.ArgumentError, match="fill_value.*out_of_range"):
        ts.gather(t, np.array([1]), fill_value=-1)
    with pytest.raises(ts.ArgumentError, match="overflows"):
        ts.gather(np.zeros(2, np.float32), np.array([9]), out_of_range="fill", fill_value=1e300)
    assert ts.gather(t, np.array([9, 1]), out_of_range="fill", fill_value=np.int64(-7)).tolist() == [-7, 1]
    f = ts.gather(np.zeros(2, np.float32), np.array([9]), out_of_range="fill", fill_value=0.1)
    assert bits(f) == bits(np.array([0.1], np.float32))  # to the nearest float32, as NumPy
    # A bad reduction names the caller's keyword and what that function accepts.
    with pytest.raises(ts.ArgumentError, match=r"scatter: reduce: 'none' is not one of 'sum'"):
        ts.scatter(x, np.array([0, 0, 1]), reduce="none")
    with pytest.raises(ts.ArgumentError, match=r"scatter_max: reduce|scatter: reduce"):
        ts.scatter(x, np.array([0, 0, 1]), reduce="avg")
    with pytest.raises(ts.ArgumentError, match=r"scatter_elements: reduction: 'avg' is not one of 'none', 'add'"):
        ts.scatter_elements(x, i, u, reduction="avg")
    with pytest.raises(ts.ArgumentTypeError, match="reduction"):
        ts.scatter_elements(x, i, u, reduction=None)
    with pytest.raises(ts.ArgumentTypeError, match="unbiased"):
        ts.scatter_std(x, np.array([0, 0, 1]), unbiased="yes")
    # The peers' names still work.
    assert ts.scatter(x + 1, np.array([0, 0, 1]), reduce="amax").tolist() == [1, 1]
    assert ts.scatter_elements(x, i, u, reduction="sum").tolist() == [1, 0, 0]


def test_option_lists_are_the_native_signatures():
    """Each family's options (``_core``'s named tuples, which every caller builds and the
    adapters read by name) are, in order, what its native function takes after the arrays:
    a field out of place would hand one option's value to another."""
    import inspect
    from tensor_scatter import _core, _native

    families = {
        "scatter": (_core.ScatterOptions, ["op", "data", "indices", "updates", "out"]),
        "gather": (_core.GatherOptions, ["op", "data", "indices", "out"]),
        "segment": (_core.SegmentOptions, ["op", "src", "index", "out"]),
        "scatter_vjp": (_core.ScatterVjpOptions, ["op", "grad", "data", "indices", "updates"]),
        "gather_vjp": (_core.GatherVjpOptions, ["op", "grad", "indices", "data_shape"]),
        "segment_vjp": (_core.SegmentVjpOptions, ["op", "grad", "src", "index", "out"]),
    }
    for name, (options, arrays) in families.items():
        params = list(inspect.signature(getattr(_native, name)).parameters)
        assert params == arrays + list(options._fields), name
    # A public call's options reach the general path by name (a JAX-free, torch-free list
    # input takes it): a wrong field order would refuse or misread these.
    got = ts.scatter_elements([[0.0, 0.0, 0.0]], [[2, 2]], [[1.0, 2.0]], axis=1,
                              reduction="add", updates_window=True)
    assert np.asarray(got).tolist() == [[0.0, 0.0, 3.0]]
    got = ts.gather([[1, 2], [3, 4]], [[5, 0]], axis=1, batch_dims=0, out_of_range="fill",
                    fill_value=-7)
    assert np.asarray(got).tolist() == [[[-7, 1]], [[-7, 3]]]


def test_public_names():
    assert ts.segment_max_csr.__name__ == "segment_max_csr"
    assert ts.segment_sum_coo.__qualname__ == "segment_sum_coo"
    for cls in (ts.Error, ts.ArgumentError, ts.ArgumentTypeError, ts.OutOfRangeError, ts.DTypeError):
        assert cls.__module__ == "tensor_scatter"
    with pytest.raises(ts.ArgumentError) as e:
        ts.gather(np.zeros(2), np.array([0]), axis=4)
    assert type(e.value).__module__ + "." + type(e.value).__name__ == "tensor_scatter.ArgumentError"
    listed = dir(ts)
    for helper in ("np", "Any", "Optional", "as_arr", "done", "result", "readable", "scalar"):
        assert helper not in listed, helper
    assert "scatter_elements" in listed and "segment_max_csr" in listed


def test_no_silent_second_derivative():
    torch = pytest.importorskip("torch")
    s = torch.tensor([1.0, 5.0, 2.0, 4.0, 9.0], dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([0, 1, 0, 2, 4])
    # max: the first derivative, then the second is refused (torch's scatter_reduce("amax")
    # gives [0, 5, 0, 0, 9] for it: silently dropping terms would be a wrong answer).
    y = ts.scatter(s, idx, reduce="max").pow(2).sum()
    (g,) = torch.autograd.grad(y, s, create_graph=True)
    assert g.tolist() == [0.0, 10.0, 4.0, 8.0, 18.0]
    with pytest.raises(RuntimeError, match="second derivative"):
        g.sum().backward()
    # mul with a gradient that does not require grad: the backward depends on s itself.
    y = ts.scatter(s, idx, reduce="mul").sum()
    (g,) = torch.autograd.grad(y, s, create_graph=True)
    with pytest.raises(RuntimeError, match="second derivative"):
        g.sum().backward()
    # The six operators too.
    d = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    y = ts.scatter_elements(d, idx, s, reduction="mul").sum()
    (g,) = torch.autograd.grad(y, s, create_graph=True)
    with pytest.raises(RuntimeError, match="second derivative"):
        g.sum().backward()
    # A linear reduction keeps every order.
    y = ts.scatter(s, idx, reduce="sum").pow(2).sum()
    (g,) = torch.autograd.grad(y, s, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), s)
    assert h.tolist() == [4.0, 2.0, 4.0, 2.0, 2.0]
