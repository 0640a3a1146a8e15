"""JAX: every operator inside jax.jit as an XLA FFI call (no host callback), the same bits as
the NumPy call at 1, 2 and 4 threads; gradients (custom_vjp over the backward handlers) checked
numerically and against JAX's own; vmap; jax.export run in a fresh process; errors, and call
frames no XLA would make, fed to the handlers directly."""

import ctypes
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

import tensor_scatter as ts  # noqa: E402
from tensor_scatter import _jax_ops, _native  # noqa: E402


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert a.tobytes() == b.tobytes()


def _cases():
    """(label, function of NumPy-or-JAX arrays, its array arguments): one per operator form."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 4))
    x32 = x.astype(np.float32)
    u = rng.standard_normal((5, 4))
    ie = rng.integers(0, 6, (5, 4))
    iu = np.array([5, 0, 5, 2, 0], np.int32)
    ind = np.array([[5], [0], [5], [2], [0]])
    src = rng.standard_normal((9, 3))
    idx = np.array([0, 2, 2, 1, 0, 3, 3, 3, 0])
    sidx = np.sort(idx)
    ptr = np.array([0, 3, 3, 7, 9])
    for red in ("none", "add", "mul", "min", "max", "mean"):
        yield f"scatter_elements {red}", (lambda d, i, v, r=red: ts.scatter_elements(
            d, i, v, reduction=r)), (x, ie, u)
        yield f"scatter_update {red}", (lambda d, i, v, r=red: ts.scatter_update(
            d, i, v, reduction=r)), (x, iu, u)
        yield f"scatter_nd {red}", (lambda d, i, v, r=red: ts.scatter_nd(
            d, i, v, reduction=r)), (x, ind, u)
    yield "scatter_elements f32 axis 1 wide", (lambda d, i, v: ts.scatter_elements(
        d, i, v, axis=1, reduction="add", accumulation="wide")), (x32, ie[:, :3] % 4,
                                                                   u[:, :3].astype(np.float32))
    yield "scatter_update int64", (lambda d, i, v: ts.scatter_update(d, i, v, reduction="add")), (
        np.arange(24).reshape(6, 4), iu, np.arange(20).reshape(5, 4))
    yield "gather", (lambda d, i: ts.gather(d, i, axis=1)), (x, np.array([[3, 0], [-1, 2]]))
    yield "gather fill", (lambda d, i: ts.gather(d, i, out_of_range="fill", fill_value=2.5)), (
        x, np.array([4, 9, -1]))
    yield "gather_elements clamp", (lambda d, i: ts.gather_elements(
        d, i, axis=0, out_of_range="clamp")), (x, ie + 2)
    yield "gather_nd batch", (lambda d, i: ts.gather_nd(d, i, batch_dims=1)), (
        x, np.array([[1], [3], [0], [2], [1], [0]]))
    for red in ("sum", "mean", "mul", "min", "max"):
        yield f"scatter {red}", (lambda s, i, r=red: ts.scatter(
            s, i, dim=0, dim_size=5, reduce=r)), (src, idx)
        yield f"segment_coo {red}", (lambda s, i, r=red: ts.segment_coo(
            s, i, dim_size=4, reduce=r)), (src, sidx)
        yield f"segment_csr {red}", (lambda s, i, r=red: ts.segment_csr(
            s, i, reduce=r)), (src, ptr)
    yield "scatter_max positions", (lambda s, i: ts.scatter_max(s, i, dim=0, dim_size=5)), (src, idx)
    yield "segment_min_csr positions", (lambda s, i: ts.segment_min_csr(s, i)), (src, ptr)
    yield "gather_coo", (lambda s, i: ts.gather_coo(s[:4], i)), (src, sidx)
    yield "gather_csr", (lambda s: ts.gather_csr(s[:4], ptr)), (src,)
    yield "scatter_softmax", (lambda s, i: ts.scatter_softmax(s, i, dim=0)), (src, idx)
    yield "scatter_log_softmax", (lambda s, i: ts.scatter_log_softmax(s, i, dim=0)), (src, idx)
    yield "scatter_logsumexp", (lambda s, i: ts.scatter_logsumexp(
        s, i, dim=0, dim_size=4)), (src, idx)
    yield "scatter_std", (lambda s, i: ts.scatter_std(s, i, dim=0, dim_size=4)), (src, idx)
    yield "scatter_std biased", (lambda s, i: ts.scatter_std(
        s, i, dim=0, dim_size=4, unbiased=False)), (src, idx)
    g = rng.standard_normal((5, 3))
    yield "scatter_vjp max", (lambda g, s, i: ts.scatter_vjp(
        g, s, i, dim=0, dim_size=5, reduce="max")[0]), (g, src, idx)
    yield "scatter_elements_vjp mul", (lambda g, d, i, v: ts.scatter_elements_vjp(
        g, d, i, v, reduction="mul")), (x, x, ie, u)
    yield "gather_vjp", (lambda g, i: ts.gather_vjp(g, i, (6, 4))), (u, iu)
    yield "gather_csr_vjp", (lambda g, i: ts.gather_csr_vjp(g, i)), (src, ptr)


CASES = list(_cases())


@pytest.mark.parametrize("label,f,args", CASES, ids=[c[0] for c in CASES])
def test_jit_gives_the_numpy_bits_at_every_thread_count(label, f, args):
    want = f(*args)
    for threads in (1, 2, 4):
        ts.set_default_threads(threads)
        try:
            got = jax.jit(f)(*[jnp.asarray(a) for a in args])
        finally:
            ts.set_default_threads(0)
        for w, g in zip(*(v if isinstance(v, tuple) else (v,) for v in (want, got))):
            if np.asarray(w).dtype == np.int64 and np.asarray(g).dtype == np.int64:
                _bits(w, g)
            else:
                _bits(np.asarray(w).astype(np.asarray(g).dtype), g)


def test_static_options_are_checked_when_traced():
    """Options are checked as the NumPy call checks them, when JAX traces the call."""
    x, i = jnp.zeros(5), jnp.array([0, 1])
    calls = [
        (lambda x: ts.scatter_elements(x, i, x[:2], threads=-1), "scatter_elements: threads"),
        (lambda x: ts.gather(x, i, threads=-1), "gather: threads"),
        (lambda x: ts.gather(x, i, negative_indices="clip"), "gather: negative_indices: 'clip'"),
        (lambda x: ts.scatter(x, i, dim_size=2, threads=-1), "scatter: threads"),
        (lambda x: ts.scatter_elements(x, i, x[:2], reduction="avg"),
         "scatter_elements: reduction: 'avg'"),
        (lambda x: ts.scatter(x, i, dim_size=2, reduce="avg"), "scatter: reduce: 'avg'"),
        (lambda x: ts.segment_max_csr(x, jnp.array([0, 5]), ties="all"), "ties: 'all'"),
    ]
    for f, message in calls:
        with pytest.raises(ts.ArgumentError, match=message):
            jax.jit(f)(x)


def test_jaxpr_holds_an_ffi_call_and_no_callback():
    src, idx = jnp.ones((4, 2)), jnp.array([0, 1, 1, 0])
    text = str(jax.make_jaxpr(lambda s: ts.scatter(s, idx, dim=0, dim_size=2, reduce="max"))(src))
    assert "ffi_call" in text and "tensor_scatter_segment" in text
    assert "callback" not in text
    hlo = jax.jit(lambda s: ts.gather(s, idx)).lower(src).as_text()
    assert "tensor_scatter_gather" in hlo and "callback" not in hlo


def test_small_scatters_inside_jit_give_the_numpy_bits():
    """A small 1-D scatter, which the handler folds on the stack (no views, no plan), against
    the NumPy call bit for bit: every reduction, f32, f64, int32 and int64 values, int32 and
    int64 indices, NaN payloads, -0.0, infinities, integer overflow, cells nothing reaches;
    an index out of range is the library's error."""
    f32 = np.array([1.5, -0.0, 0, 2.0, np.inf, -3.25, 0.0, -np.inf, 7.0, -0.0], np.float32)
    f32[2] = np.array([0x7FC01234], np.uint32).view(np.float32)[0]
    f64 = f32.astype(np.float64)
    f64[2] = np.array([0x7FF8000000001234], np.uint64).view(np.float64)[0]
    ints = [3, -1, 7, 2**31 - 1, 2**31 - 1, -(2**31), 0, 5, -8, 2]
    values = [f32, f64, np.array(ints, np.int32), np.array(ints, np.int64) * 2**32]
    idx = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 3])  # cells 4 and 5 receive nothing
    for src in values:
        for it in (np.int32, np.int64):
            i = idx.astype(it)
            for red in ("sum", "mul", "mean", "min", "max"):
                want = ts.scatter(src, i, dim=0, dim_size=6, reduce=red)
                got = jax.jit(lambda s, i, r=red: ts.scatter(s, i, dim=0, dim_size=6, reduce=r))(
                    jnp.asarray(src), jnp.asarray(i))
                assert np.asarray(got).tobytes() == want.tobytes(), (src.dtype, it, red)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"scatter: index: .*6"):
        jax.jit(lambda s, i: ts.scatter(s, i, dim=0, dim_size=6))(
            jnp.asarray(f32[:2]), jnp.asarray(np.array([0, 6], np.int32))).block_until_ready()


def test_errors_are_ours():
    src = jnp.ones((4, 2))
    # Out of range: the kernel's message, as XLA's runtime error (its class cannot cross XLA).
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"gather: indices: index 7 .* out of range"):
        jax.jit(lambda s, i: ts.gather(s, i))(src, jnp.array([7])).block_until_ready()
    with pytest.raises(jax.errors.JaxRuntimeError, match="scatter_elements: updates"):
        jax.jit(lambda s: ts.scatter_elements(s, jnp.array([[0, 0]]), s))(src)
    # A size the data decides, which jit cannot know: an error naming the argument.
    with pytest.raises(ts.ArgumentError, match="scatter: dim_size: required under jax.jit"):
        jax.jit(lambda s, i: ts.scatter(s, i, dim=0))(src, jnp.array([0, 1, 1, 0]))
    with pytest.raises(ts.ArgumentTypeError, match="scatter: dim_size: .*Tracer.* is not an integer"):
        jax.jit(lambda s, n: ts.scatter(s, jnp.array([0, 1, 1, 0]), dim=0, dim_size=n))(src, 3)
    with pytest.raises(ts.ArgumentError, match="gather_csr: under jax.jit"):
        jax.jit(lambda s, p: ts.gather_csr(s, p))(src[:, 0], jnp.array([0, 2, 4]))
    with pytest.raises(ts.DTypeError, match="indices: dtype float"):
        jax.jit(lambda s: ts.gather(s, s[:, 0]))(src)
    with pytest.raises(ts.ArgumentError, match="JAX arrays are immutable"):
        jax.jit(lambda s: ts.scatter_update(s, jnp.array([0]), s[:1], out=s))(src)
    # A backend other than the CPU is named.
    real = jax.default_backend
    try:
        jax.default_backend = lambda: "gpu"
        with pytest.raises(ts.ArgumentError, match="default backend is 'gpu'"):
            jax.jit(lambda s: ts.gather(s, jnp.array([0])))(src)
    finally:
        jax.default_backend = real


# --- gradients ------------------------------------------------------------------------------

def test_gradients_check_numerically():
    rng = np.random.default_rng(5)
    src = jnp.asarray(rng.standard_normal((9, 3)))
    idx = jnp.array([0, 2, 2, 1, 0, 3, 3, 3, 0])
    ptr = np.array([0, 3, 3, 7, 9])
    x, u = jnp.asarray(rng.standard_normal((6, 4))), jnp.asarray(rng.standard_normal((5, 4)))
    ie = jnp.asarray(rng.integers(0, 6, (5, 4)))
    fs = [
        lambda s: ts.scatter(s, idx, dim=0, dim_size=5, reduce="sum"),
        lambda s: ts.scatter(s, idx, dim=0, dim_size=5, reduce="mean"),
        lambda s: ts.scatter(s, idx, dim=0, dim_size=5, reduce="mul"),
        lambda s: ts.scatter(s, idx, dim=0, dim_size=5, reduce="max"),
        lambda s: ts.scatter_min(s, idx, dim=0, dim_size=5)[0],
        lambda s: ts.segment_csr(s, ptr, reduce="mean"),
        lambda s: ts.gather_csr(s[:4], ptr),
        lambda s: ts.gather_coo(s[:4], jnp.sort(idx)),
        lambda s: ts.scatter_softmax(s, idx, dim=0),
        lambda s: ts.scatter_log_softmax(s, idx, dim=0),
        lambda s: ts.scatter_logsumexp(s, idx, dim=0, dim_size=4),
        lambda s: ts.scatter_std(s, idx, dim=0, dim_size=4),
        lambda s: ts.gather(s, jnp.array([2, 0, 2, -1])),
    ]
    for f in fs:
        check_grads(jax.jit(f), (src,), order=1, modes=["rev"])
    for red in ("none", "add", "mul", "max", "mean"):
        check_grads(jax.jit(lambda d, v: ts.scatter_elements(d, ie, v, reduction=red)), (x, u),
                    order=1, modes=["rev"])
    check_grads(lambda d: ts.gather_elements(d, ie, axis=0), (x,), order=1, modes=["rev"])
    check_grads(lambda d: ts.gather_nd(d, jnp.array([[1, 2], [5, 0]])), (x,), order=1,
                modes=["rev"])


def test_gradients_equal_jax_own():
    rng = np.random.default_rng(6)
    src = jnp.asarray(rng.standard_normal((50, 8)))
    idx = jnp.asarray(rng.integers(0, 7, 50))
    w = jnp.asarray(rng.standard_normal((7, 8)))

    def ours(s):
        return (ts.scatter(s, idx, dim=0, dim_size=7) * w).sum()

    def theirs(s):
        return (jax.ops.segment_sum(s, idx, num_segments=7) * w).sum()
    np.testing.assert_allclose(jax.jit(jax.grad(ours))(src), jax.grad(theirs)(src), rtol=0, atol=0)

    d, u = jnp.asarray(rng.standard_normal((7, 8))), jnp.asarray(rng.standard_normal((50, 8)))

    def ours_add(d, u):
        return (ts.scatter_update(d, idx, u, reduction="add") ** 2).sum()

    def theirs_add(d, u):
        return (d.at[idx].add(u) ** 2).sum()
    for a, b in zip(jax.grad(ours_add, (0, 1))(d, u), jax.grad(theirs_add, (0, 1))(d, u)):
        np.testing.assert_allclose(a, b, rtol=1e-12)

    def ours_take(d):
        return (ts.gather(d, idx) * u).sum()
    np.testing.assert_allclose(jax.grad(ours_take)(d), jax.grad(lambda d: (d[idx] * u).sum())(d),
                               rtol=1e-12)


def test_ties_rule_reaches_the_backward():
    src = jnp.array([1.0, 5.0, 2.0, 5.0])
    idx = jnp.array([0, 0, 1, 0])
    split = jax.grad(lambda s: ts.scatter_max(s, idx, dim_size=2)[0].sum())(src)
    first = jax.grad(lambda s: ts.scatter_max(s, idx, dim_size=2, ties="first")[0].sum())(src)
    _bits(split, np.array([0.0, 0.5, 1.0, 0.5]))
    _bits(first, np.array([0.0, 1.0, 1.0, 0.0]))


def test_second_derivative_raises():
    src, idx = jnp.array([1.0, 2.0]), jnp.array([0, 0])
    with pytest.raises(Exception, match="tensor_scatter_segment_vjp. cannot be differentiated"):
        jax.grad(jax.grad(lambda s: ts.scatter(s, idx, dim_size=1).sum()))(src)


# --- vmap -----------------------------------------------------------------------------------

def test_vmap_is_a_loop_of_calls():
    rng = np.random.default_rng(7)
    src = jnp.asarray(rng.standard_normal((3, 9, 2)))
    idx = jnp.asarray(rng.integers(0, 4, (3, 9)))
    x, u = jnp.asarray(rng.standard_normal((3, 6))), jnp.asarray(rng.standard_normal((3, 4)))
    shared = jnp.array([0, 2, 2, 1, 0, 3, 3, 3, 0])
    # batched src over a shared index; batched index too; a min with positions; a gather.
    cases = [
        (lambda s: ts.scatter(s, shared, dim=0, dim_size=4, reduce="max"), (src,)),
        (lambda s, i: ts.scatter(s, i, dim=0, dim_size=4, reduce="mean"), (src, idx)),
        (lambda s, i: ts.scatter_min(s, i, dim=0, dim_size=4), (src, idx)),
        (lambda d, i, v: ts.scatter_elements(d, i[:4], v, reduction="add"), (x, idx, u)),
        (lambda s, i: ts.gather(s, i), (src, idx)),
    ]
    for f, args in cases:
        got = jax.vmap(f)(*args)
        want = [f(*[np.asarray(a)[b] for a in args]) for b in range(3)]
        got = got if isinstance(got, tuple) else (got,)
        want = [w if isinstance(w, tuple) else (w,) for w in want]
        for k, g in enumerate(got):
            _bits(g, np.stack([np.asarray(w[k]) for w in want]))
    # grad of a vmapped call: per member, as without vmap.
    gs = jax.vmap(jax.grad(lambda s: ts.scatter(s, shared, dim=0, dim_size=4,
                                                reduce="max").sum()))(src)
    for b in range(3):
        _bits(gs[b], jax.grad(lambda s: ts.scatter(s, shared, dim=0, dim_size=4,
                                                   reduce="max").sum())(src[b]))


# --- export ---------------------------------------------------------------------------------

LOAD = """
import sys
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)
import tensor_scatter
exported = jax.export.deserialize(bytearray(open(sys.argv[1], "rb").read()))
src = jnp.asarray(np.load(sys.argv[2]))
out, grad = exported.call(src)
np.save(sys.argv[3], np.asarray(out)); np.save(sys.argv[4], np.asarray(grad))
"""


def test_export_runs_in_a_fresh_process(tmp_path):
    idx = np.array([0, 2, 2, 1, 0, 3, 3, 3, 0])
    w = np.linspace(-1, 1, 12).reshape(4, 3)

    def layer(s):
        h = ts.scatter(s, idx, dim=0, dim_size=4, reduce="max") * w
        return ts.gather(h, idx) + ts.scatter_softmax(s, idx, dim=0)

    def f(s):
        return layer(s), jax.grad(lambda s: layer(s).sum())(s)

    src = np.random.default_rng(8).standard_normal((9, 3))
    exp = jax.export.export(jax.jit(f), disabled_checks=ts.jax_export_checks())(
        jax.ShapeDtypeStruct(src.shape, src.dtype))
    (tmp_path / "f.bin").write_bytes(exp.serialize())
    np.save(tmp_path / "src.npy", src)
    files = [str(tmp_path / n) for n in ("f.bin", "src.npy", "out.npy", "grad.npy")]
    subprocess.run([sys.executable, "-c", LOAD, *files], check=True)
    out, grad = jax.jit(f)(jnp.asarray(src))
    _bits(np.load(files[2]), out)
    _bits(np.load(files[3]), grad)


# --- call frames XLA would not make, straight to the handlers -------------------------------

class _Span(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_char_p), ("len", ctypes.c_size_t)]


class _Buffer(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ext", ctypes.c_void_p),
                ("dtype", ctypes.c_int), ("data", ctypes.c_void_p), ("rank", ctypes.c_int64),
                ("dims", ctypes.POINTER(ctypes.c_int64))]


class _List(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ext", ctypes.c_void_p),
                ("size", ctypes.c_int64), ("types", ctypes.POINTER(ctypes.c_int)),
                ("items", ctypes.POINTER(ctypes.c_void_p))]


class _Attrs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ext", ctypes.c_void_p),
                ("size", ctypes.c_int64), ("types", ctypes.POINTER(ctypes.c_int)),
                ("names", ctypes.POINTER(ctypes.POINTER(_Span))),
                ("attrs", ctypes.POINTER(ctypes.c_void_p))]


class _ErrorArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ext", ctypes.c_void_p),
                ("message", ctypes.c_char_p), ("errc", ctypes.c_int)]


_CREATE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_ErrorArgs))


class _Api(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ext", ctypes.c_void_p),
                ("v_size", ctypes.c_size_t), ("v_ext", ctypes.c_void_p), ("major", ctypes.c_int),
                ("minor", ctypes.c_int), ("internal", ctypes.c_void_p), ("create", _CREATE)]


class _Frame(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ext", ctypes.c_void_p),
                ("api", ctypes.POINTER(_Api)), ("ctx", ctypes.c_void_p), ("stage", ctypes.c_int),
                ("args", _List), ("rets", _List), ("attrs", _Attrs), ("future", ctypes.c_void_p)]


class _Ext(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
                ("next", ctypes.c_void_p), ("metadata", ctypes.c_void_p)]


class _Metadata(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("v_size", ctypes.c_size_t),
                ("v_ext", ctypes.c_void_p), ("major", ctypes.c_int), ("minor", ctypes.c_int),
                ("traits", ctypes.c_uint32), ("state", ctypes.c_int64)]


class _Harness:
    """Builds call frames by hand and calls a handler; the API's error call records the
    message and code."""

    def __init__(self, family):
        self.fn = getattr(ctypes.CDLL(_native.__file__), "tensor_scatter_xla_" + family)
        self.fn.restype, self.fn.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
        self.errors = []

        def create(args):
            self.errors.append((args.contents.message.decode(), args.contents.errc))
            return 1  # any non-null pointer stands for an error
        self.create = _CREATE(create)
        self.api = _Api(struct_size=ctypes.sizeof(_Api), create=self.create)
        self.keep = []

    def _list(self, bufs):
        n = len(bufs)
        types = (ctypes.c_int * n)(*[1] * n)
        items = (ctypes.c_void_p * n)(*[ctypes.addressof(b) for b in bufs])
        self.keep += [types, items, bufs]
        return _List(ctypes.sizeof(_List), None, n, types, items)

    def buffer(self, array, dtype=None, dims=None):
        array = np.ascontiguousarray(array)
        codes = {"float64": 12, "float32": 11, "int64": 5, "int32": 4, "bool": 1}
        shape = array.shape if dims is None else dims
        d = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.keep += [array, d]
        return _Buffer(ctypes.sizeof(_Buffer), None, codes[array.dtype.name] if dtype is None
                       else dtype, array.ctypes.data, len(shape), d)

    def call(self, args, rets, attrs, stage=3, size=None, ext=None):
        names, values, types = [], [], []
        for k, v in attrs.items():
            kb = k.encode()
            names.append(ctypes.pointer(_Span(kb, len(kb))))
            if isinstance(v, str):
                vb = v.encode()
                span = _Span(vb, len(vb))
                self.keep += [vb, span]
                values.append(ctypes.addressof(span))
                types.append(4)
            else:
                val = ctypes.c_int64(v)

                class Scalar(ctypes.Structure):
                    _fields_ = [("dtype", ctypes.c_int), ("value", ctypes.c_void_p)]
                s = Scalar(5, ctypes.addressof(val))
                self.keep += [val, s]
                values.append(ctypes.addressof(s))
                types.append(3)
            self.keep.append(kb)
        n = len(attrs)
        a = _Attrs(ctypes.sizeof(_Attrs), None, n, (ctypes.c_int * n)(*types),
                   (ctypes.POINTER(_Span) * n)(*names), (ctypes.c_void_p * n)(*values))
        self.keep += [a, names]
        frame = _Frame(ctypes.sizeof(_Frame) if size is None else size, ext,
                       ctypes.pointer(self.api), None, stage, self._list(args), self._list(rets),
                       a, None)
        self.errors.clear()
        r = self.fn(ctypes.addressof(frame))
        return (r, self.errors[0]) if r else (r, None)


GATHER_ATTRS = dict(op="gather", axis=0, batch_dims=0, negative_indices="wrap",
                    out_of_range="error", threads=0)


def test_handlers_answer_the_metadata_query():
    for family in _jax_ops.FAMILIES:
        h = _Harness(family)
        meta = _Metadata(struct_size=ctypes.sizeof(_Metadata) - 8)
        ext = _Ext(ctypes.sizeof(_Ext), 1, None, ctypes.addressof(meta))
        r, err = h.call([], [], {}, ext=ctypes.addressof(ext))
        assert r is None and err is None
        assert (meta.major, meta.minor, meta.traits) == (0, 3, 0)
        small = _Metadata(struct_size=8)
        ext = _Ext(ctypes.sizeof(_Ext), 1, None, ctypes.addressof(small))
        assert h.call([], [], {}, ext=ctypes.addressof(ext))[1] is not None


def test_handlers_refuse_malformed_frames():
    h = _Harness("gather")
    data, idx, out = np.arange(6.0).reshape(3, 2), np.array([2, 0]), np.zeros((2, 2))

    def run(args=None, rets=None, attrs=GATHER_ATTRS, **kw):
        args = args or [h.buffer(data), h.buffer(idx)]
        return h.call(args, rets or [h.buffer(out)], attrs, **kw)
    r, err = run()
    assert r is None and err is None
    _bits(out, data[[2, 0]])
    out[...] = 0
    bad = [
        (dict(stage=1), "stage 1"),
        (dict(size=16), "too small"),
        (dict(args=[h.buffer(data)]), "1 arguments"),
        (dict(args=[h.buffer(data, dtype=15), h.buffer(idx)]), "XLA dtype 15"),
        (dict(args=[h.buffer(data, dims=(3, -2)), h.buffer(idx)]), "negative"),
        (dict(args=[h.buffer(data, dims=(1 << 40, 1 << 40)), h.buffer(idx)]), "overflow"),
        (dict(args=[h.buffer(data, dims=(1,) * 65), h.buffer(idx)]), "rank 65"),
        (dict(rets=[h.buffer(out, dims=(3, 2))]), "shape"),
        (dict(rets=[h.buffer(data)]), "overlaps"),
        (dict(args=[h.buffer(data), h.buffer(np.array([2, 7]))]), "index 7"),
        (dict(args=[h.buffer(data), h.buffer(np.array([True, False]))]), "dtype"),
        (dict(attrs={k: v for k, v in GATHER_ATTRS.items() if k != "axis"}), "axis is missing"),
        (dict(attrs={**GATHER_ATTRS, "axis": "0"}), "not an integer"),
        (dict(attrs={**GATHER_ATTRS, "out_of_range": "wrap"}), "out_of_range: 'wrap'"),
        (dict(attrs={**GATHER_ATTRS, "op": "bogus"}), "unknown gather"),
    ]
    for kw, message in bad:
        r, err = run(**kw)
        assert r is not None and message in err[0], (kw, err)
        assert not out.any()  # nothing written
    flags = np.array([0, 2], np.uint8).view(np.bool_)
    h2 = _Harness("scatter")
    r, err = h2.call([h2.buffer(flags), h2.buffer(np.array([0])), h2.buffer(flags[:1])],
                     [h2.buffer(np.zeros(2, np.bool_))], {})
    assert "bytes other than 0 and 1" in err[0]
    assert h.fn(None) is None  # no frame: nothing to report to
