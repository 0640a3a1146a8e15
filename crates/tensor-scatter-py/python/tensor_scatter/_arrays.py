"""Arrays as users have them (NumPy, PyTorch CPU tensors, JAX arrays, anything array-like),
seen as NumPy arrays over the same memory, and results handed back in the caller's kind."""

from __future__ import annotations

import sys
from typing import Any, NamedTuple, Optional

import numpy as np

from . import _native
from ._errors import DTypeError, ArgumentError

# NumPy dtype names the library knows (bfloat16 is ml_dtypes' name for its NumPy dtype).
DTYPES = {
    "float64", "float32", "float16", "bfloat16",
    "int64", "int32", "int16", "int8",
    "uint64", "uint32", "uint16", "uint8",
    "bool",
}
INDEX_DTYPES = {"int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8"}


class Arr(NamedTuple):
    """An argument as the native half sees it."""

    array: np.ndarray  # over the caller's memory (bf16 from torch: its bits, as int16)
    dtype: str  # the library's dtype name
    kind: str  # "numpy", "torch" or "jax"

    def prepared(self, array: Optional[np.ndarray] = None) -> Any:
        """What the native half always accepts: `array` (else this argument's) with the dtype
        of its bits."""
        return _native.Prepared(self.array if array is None else array, self.dtype)


def _torch():
    return sys.modules.get("torch")


# torch's two tracing tests and its forward-mode AD module, looked up once torch is imported
# (every call asks: a third of a NumPy call's Python time when looked up each time).
_tracing: Optional[tuple] = None


def _torch_checks() -> Optional[tuple]:
    global _tracing
    if _tracing is None:
        t = sys.modules.get("torch")
        if t is None:
            return None
        import torch.autograd.forward_ad  # noqa: F401  (torch imports it itself)
        _tracing = (t.compiler.is_compiling, t._C._get_tracing_state, t.autograd.forward_ad)
    return _tracing


def compiling() -> bool:
    """Whether torch.compile, torch.export or torch.jit.trace is tracing the caller: the
    public functions then call the operators of ``_torch_ops``, which the tracer records (it
    cannot see into the native half: jit.trace would keep its result as a constant)."""
    checks = _tracing or _torch_checks()
    return checks is not None and (checks[0]() or checks[1]() is not None)


def forward_ad_open() -> bool:
    """Whether a forward-mode AD level is open (``torch.autograd.forward_ad.dual_level``,
    ``torch.func.jvp``): a float tensor may carry a tangent, which the native half cannot
    see, so a call with tensors goes to the operators, which refuse a tangent instead of
    dropping it."""
    checks = _tracing or _torch_checks()
    return checks is not None and checks[2]._current_level >= 0


def native_first() -> bool:
    """Whether a public call asks the native half first: torch need not see it as its
    operator before anything runs (:func:`compiling`, :func:`forward_ad_open`; the Python
    half decides after, from the arguments, as :func:`recorded` says). Both tests inline, on
    one lookup: every public call asks."""
    checks = _tracing or _torch_checks()
    return checks is None or not (checks[0]() or checks[1]() is not None
                                  or checks[2]._current_level >= 0)


def recorded(*xs) -> bool:
    """Whether torch must see the call as its operator (``_torch_ops``): a tracer
    (:func:`compiling`) sees it, autograd records it (one of ``xs`` requires grad), a
    functorch transform (``vmap``, ``grad``) wraps its tensors, or a tensor may carry a
    forward-mode tangent (the native half can read none of these)."""
    t = sys.modules.get("torch")
    return t is not None and (
        compiling() or t._C._are_functorch_transforms_active()
        or (t.is_grad_enabled() and any(isinstance(x, t.Tensor) and x.requires_grad for x in xs))
        or (forward_ad_open() and any(isinstance(x, t.Tensor) for x in xs)))


def traced_jax(*xs) -> bool:
    """Whether one of ``xs`` is a value JAX traces (``jax.jit``, ``grad``, ``vmap``): the call
    then goes to ``_jax_ops``, which JAX records as an XLA FFI call (a traced value has no
    memory to read)."""
    jax = sys.modules.get("jax")
    return jax is not None and any(isinstance(x, jax.core.Tracer) for x in xs)


def _is_torch(x: Any) -> bool:
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def modified(x: Any) -> None:
    """Tells autograd that ``x``, when a torch tensor written through its memory (a NumPy view
    of it), changed in place, as torch's own in-place operations do: its version counter, so
    that a backward which saved it fails instead of silently using the new values."""
    if _is_torch(x):
        _torch().autograd.graph.increment_version(x)


def _is_jax(x: Any) -> bool:
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(x, jax.Array)


def as_arr(x: Any, arg: str, op: str, write: bool = False) -> Arr:
    """`x` as an `Arr`, without a copy for NumPy arrays, CPU tensors and JAX CPU arrays. A
    negative or conjugate view is read through a resolved copy, and refused when it is to be
    written (`write`: the copy would take the result, not the caller's tensor)."""
    if isinstance(x, np.ndarray):
        a, kind = x, "numpy"
    elif _is_torch(x):
        torch = _torch()
        if x.device.type != "cpu":
            raise ArgumentError(
                f"{op}: {arg}: a tensor on {x.device} was given; tensor_scatter runs on the CPU "
                f"and does not copy silently: pass x.cpu() (and copy the result back)"
            )
        t = x.detach()
        if t._is_zerotensor():  # autograd's zeros without memory: read as zeros
            if write:
                raise ArgumentError(f"{op}: {arg}: a ZeroTensor has no memory to write")
            t = torch.zeros(t.shape, dtype=t.dtype)
        if t.is_conj() or t.is_neg():
            if write:
                raise ArgumentError(
                    f"{op}: {arg}: a negative or conjugate view (is_neg() or is_conj()) is not "
                    f"written in place; write into a plain tensor and copy_ it into the view"
                )
            t = t.resolve_conj().resolve_neg()
        if t.dtype == torch.bfloat16:
            return Arr(t.view(torch.int16).numpy(), "bfloat16", "torch")
        a, kind = t.numpy(), "torch"
    elif _is_jax(x):
        devices = x.devices() if callable(getattr(x, "devices", None)) else set()
        if any(d.platform != "cpu" for d in devices):
            raise ArgumentError(f"{op}: {arg}: a JAX array on {devices} was given; only CPU arrays are read")
        a, kind = np.asarray(x), "jax"
    else:
        a, kind = np.asarray(x), "numpy"
    name = a.dtype.name
    if name not in DTYPES:
        raise DTypeError(
            f"{op}: {arg}: dtype {a.dtype} is not accepted; expected one of "
            f"{', '.join(sorted(DTYPES))}"
        )
    return Arr(a, name, kind)


def index_arr(x: Any, arg: str, op: str) -> Arr:
    """`x` as an `Arr` of an integer index dtype, else a `DTypeError` naming `arg`. A list or
    tuple is an array (NumPy's conversion), and an empty one an empty int64 index."""
    if isinstance(x, (list, tuple)):
        a = np.asarray(x)
        if a.size == 0:
            return Arr(a.astype(np.int64), "int64", "numpy")
    i = as_arr(x, arg, op)
    if i.dtype not in INDEX_DTYPES:
        raise DTypeError(
            f"{op}: {arg}: dtype {i.dtype} is not accepted; expected an integer index dtype "
            f"(int8, int16, int32, int64, uint8, uint16, uint32 or uint64)"
        )
    return i


def done(r: Any) -> Any:
    """The native half's answer for arguments the Python half prepared (never `None` then)."""
    if r is None:
        raise RuntimeError("tensor_scatter: prepared arguments were refused (a bug: please report it)")
    return r


def element_strided(a: np.ndarray) -> bool:
    """Whether every stride of `a` is a whole number of elements (what the native half reads
    in place, with any steps and gaps between the elements)."""
    item = a.itemsize
    return a.size == 0 or not any(s % item for s in a.strides)


def staged(target: np.ndarray, keep: bool) -> np.ndarray:
    """`target` itself when the native half can write it where it lies; else a new C-order
    array of its dtype in native byte order (holding its values when `keep`), which the
    caller copies back into `target` after success."""
    if target.flags.aligned and target.dtype.isnative and element_strided(target):
        return target
    native = target.dtype.newbyteorder("=")
    return target.astype(native, order="C") if keep else np.empty(target.shape, native)


def readable(arr: Arr, arg: str, op: str) -> Arr:
    """`arr` in a form the native half reads in place: native byte order, aligned, strides of
    whole elements (each copied only when it is not), bool bytes checked."""
    a = arr.array
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if not (a.flags.aligned and element_strided(a)):
        a = a.copy()  # a new C-order buffer (ascontiguousarray keeps a misaligned one)
    if arr.dtype == "bool" and a.size and a.view(np.uint8).max() > 1:
        raise ArgumentError(f"{op}: {arg}: a bool array holds bytes other than 0 and 1")
    return arr._replace(array=a)


def writable(arr: Arr, arg: str, op: str) -> None:
    """Raises unless the caller's array can be written in place."""
    if arr.kind == "jax":
        raise ArgumentError(f"{op}: {arg}: JAX arrays are immutable; pass out=None and use the result")
    if not arr.array.flags.writeable:
        raise ArgumentError(f"{op}: {arg}: the array is read-only (writeable=False)")


# From this size up, JAX adopting a result through DLPack (a fixed cost of about 60-110 us)
# beats copying it (jnp.asarray: about 75 us at 256 KiB, 130 us at 1 MiB, 1.6 ms at 16 MiB).
JAX_ADOPT_BYTES = 1 << 20


def new_result(shape, like: Arr) -> np.ndarray:
    """A new C-order array for a result of `like`'s dtype. For JAX its buffer starts on a
    64-byte boundary, which JAX adopts through DLPack without a copy (from 1 MiB up)."""
    dt = like.array.dtype
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if like.kind != "jax" or n < JAX_ADOPT_BYTES:
        return np.empty(shape, dt)
    raw = np.empty(n + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start:start + n].view(dt).reshape(shape)


def torch_result(a: np.ndarray, bfloat16: bool) -> Any:
    """A new NumPy array as a tensor over the same memory (`a` holds bfloat16 bits as int16
    when `bfloat16`)."""
    torch = _torch()
    t = torch.from_numpy(a)
    return t.view(torch.bfloat16) if bfloat16 else t


def result(a: np.ndarray, like: Arr) -> Any:
    """The result `a` (a new array) in the kind of `like`: torch in, torch out; JAX in, JAX
    out; otherwise NumPy."""
    if like.kind == "torch":
        return torch_result(a, like.dtype == "bfloat16")
    if like.kind == "jax":
        import jax.numpy as jnp

        if a.nbytes >= JAX_ADOPT_BYTES:
            try:
                return jnp.from_dlpack(a)  # no copy: an aligned buffer of a DLPack dtype
            except Exception:  # noqa: BLE001 (bfloat16: NumPy's DLPack export lacks it)
                pass
        return jnp.asarray(a)  # one copy
    return a


def scalar(value: Any, like: Arr, op: str) -> np.ndarray:
    """`value` as a one-element array of `like`'s dtype (its bits, for torch bf16). The value
    must be one the dtype holds: exactly for integers and bool (1.5 is no int64, 256 no
    uint8), to the nearest for floats (0.1 as a float32), but never a finite value that
    overflows to infinity."""
    bad = f"{op}: fill_value: {value!r} is not a {like.dtype}"
    try:
        v = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"{bad}: {e}") from None
    if v.size != 1 or v.dtype.kind not in "biuf":
        raise ArgumentError(f"{bad} (one number is expected)")
    v = v.reshape(())
    with np.errstate(all="ignore"):
        if like.dtype == "bfloat16" and like.kind == "torch":
            torch = _torch()
            t = torch.tensor([float(v)], dtype=torch.bfloat16)
            out, back = t.view(torch.int16).numpy(), float(t[0])
        else:
            out = v.astype(like.array.dtype).reshape(1)
            back = out[0]
    if like.dtype in ("float64", "float32", "float16", "bfloat16"):
        if np.isfinite(v) and not np.isfinite(float(back)):
            raise ArgumentError(f"{bad}: it overflows the dtype")
    elif not (np.isfinite(v) and back == v):
        raise ArgumentError(f"{bad}: the dtype cannot hold it exactly")
    return out


def receive(out: Any, value: Any, op: str) -> Any:
    """``value``, a result computed apart, written into ``out`` (returned); ``value`` itself
    without ``out``. Their shapes and dtypes must be the same: never a broadcast or a cast."""
    if out is None:
        return value
    if _is_torch(value) and _is_torch(out):
        # torch's copy_, which autograd and the compilers record (no NumPy view: traceable).
        if out.shape != value.shape:
            raise ArgumentError(f"{op}: out: shape {list(out.shape)} does not match; expected "
                                f"{list(value.shape)} (the result's shape)")
        if out.dtype != value.dtype:
            raise DTypeError(f"{op}: out: dtype {out.dtype} does not match; expected the "
                             f"result's {value.dtype}")
        return out.copy_(value)
    o, v = as_arr(out, "out", op, write=True), as_arr(value, "out", op)
    writable(o, "out", op)
    if o.array.shape != v.array.shape:
        raise ArgumentError(
            f"{op}: out: shape {list(o.array.shape)} does not match; expected "
            f"{list(v.array.shape)} (the result's shape)"
        )
    if o.dtype != v.dtype:
        raise DTypeError(f"{op}: out: dtype {o.dtype} does not match; expected the result's {v.dtype}")
    o.array[...] = v.array
    modified(out)
    return out


def overlaps(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the memory of `a` and `b` may overlap (their address ranges intersect)."""
    return a.size > 0 and b.size > 0 and np.may_share_memory(a, b)


def same_view(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether `a` and `b` are the same elements in the same layout."""
    return (
        a.shape == b.shape
        and a.strides == b.strides
        and a.dtype == b.dtype
        and a.ctypes.data == b.ctypes.data
    )
