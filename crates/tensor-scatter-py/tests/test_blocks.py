"""The block rule on one machine (``block=``): a float sum, mean or product folds each block of
``block`` positions per cell in order, and the blocks combine in the fixed pairwise tree
(neighbours left to right, an odd last node passed up). Checked bit for bit against a scalar
oracle written from that sentence; one block is the plain call; exact reductions ignore the
cut; errors name the whole call's positions."""

import numpy as np
import pytest

import tensor_scatter as ts
from reference import BF16

FLOATS = [np.float64, np.float32, np.float16] + ([BF16] if BF16 is not None else [])
SPECIAL = [-0.0, 0.0, np.nan, np.inf, -np.inf, 1e30, -1e30, 6e4, 3.0, -2.5, 1e-3]


def _wide(dtype):
    d = np.dtype(dtype)
    return np.dtype(np.float32) if d.itemsize == 2 else d


def oracle(src, index, dim, cells, reduce, block, out=None, per_update=False):
    """The block rule, one scalar step at a time: per output element, the positions that
    reach it (in order), each block's fold from the identity (or ``out``'s value, in block
    0), the tree over the blocks by recursion, then the mean's division, NaN made canonical,
    one rounding to the dtype."""
    dtype = src.dtype
    w = dtype if per_update else _wide(dtype)
    n = src.shape[dim]
    nblocks = max(1, -(-n // block))
    ident = w.type(1.0 if reduce == "mul" else -0.0)
    if index.ndim == 1:
        shape = [1] * src.ndim
        shape[dim] = n
        index = index.reshape(shape)
    index = np.broadcast_to(index, src.shape)
    oshape = list(src.shape)
    oshape[dim] = cells
    res = np.zeros(oshape, w)
    for cell in np.ndindex(*oshape):
        folds = {}  # block -> (value, count)
        if out is not None:
            folds[0] = (w.type(out[cell]), 1)
        for p in range(n):
            at = cell[:dim] + (p,) + cell[dim + 1:]
            if index[at] != cell[dim]:
                continue
            b = p // block
            v, c = folds.get(b, (ident, 0))
            x = w.type(src[at])
            folds[b] = (v * x if reduce == "mul" else v + x, c + 1)

        def tree(level, j):
            if level == 0:
                return folds.get(j)
            left = tree(level - 1, 2 * j)
            if (2 * j + 1) << (level - 1) >= nblocks:
                return left
            right = tree(level - 1, 2 * j + 1)
            if left is None or right is None:
                return left if right is None else right
            v = left[0] * right[0] if reduce == "mul" else left[0] + right[0]
            return v, left[1] + right[1]

        top = max(0, (nblocks - 1).bit_length())
        got = tree(top, 0)
        if got is None:
            v = w.type(1.0 if reduce == "mul" else 0.0)
        else:
            v, c = got
            if reduce == "mean":
                v = v / w.type(c)
        res[cell] = w.type(np.nan) if np.isnan(v) else v
    return res.astype(dtype)


def _data(rng, dtype, shape, special=True):
    x = rng.standard_normal(shape) * 3
    if special:
        flat = x.reshape(-1)
        k = rng.integers(0, flat.size, flat.size // 3)
        flat[k] = rng.choice(SPECIAL, k.size)
    return x.astype(dtype)


def _bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert a.tobytes() == b.tobytes(), (a, b)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("reduce", ["sum", "mean", "mul"])
@pytest.mark.parametrize("block", [1, 3, 4, 7, 64])
def test_block_rule_is_the_oracle(dtype, reduce, block):
    rng = np.random.default_rng(block * 7 + len(reduce))
    # rows: a 1-D index along dim 0 of a [n, 2] src
    src = _data(rng, dtype, (37, 2))
    index = rng.integers(0, 5, 37)
    _bits(ts.scatter(src, index, dim=0, dim_size=6, reduce=reduce, block=block),
          oracle(src, index, 0, 6, reduce, block))
    # per element: a [2, n] index along dim 1, and out= starting the fold
    src = _data(rng, dtype, (2, 23))
    index = rng.integers(0, 4, (2, 23))
    _bits(ts.scatter(src, index, dim=1, dim_size=4, reduce=reduce, block=block),
          oracle(src, index, 1, 4, reduce, block))
    out = _data(rng, dtype, (2, 4))
    want = oracle(src, index, 1, 4, reduce, block, out=out)
    got = ts.scatter(src, index, dim=1, out=out, reduce=reduce, block=block)
    assert got is out
    _bits(got, want)
    # the ONNX forms: data starts the fold, 16-bit floats round at every step ("per_update")
    red = "add" if reduce == "sum" else reduce
    if red == "mean":
        return
    data = _data(rng, dtype, (5, 2))
    idx = rng.integers(-5, 5, (4, 9))
    upd = _data(rng, dtype, (4, 9, 2))
    want = oracle(upd.reshape(36, 2), idx.reshape(36) % 5, 0, 5, reduce, block, out=data,
                  per_update=True)
    _bits(ts.scatter_update(data, idx, upd, reduction=red, block=block), want)
    ie = rng.integers(0, 5, (7, 2))
    ue = _data(rng, dtype, (7, 2))
    _bits(ts.scatter_elements(data, ie, ue, reduction=red, block=block),
          oracle(ue, ie, 0, 5, reduce, block, out=data, per_update=True))


def test_signed_zero_and_nan():
    # A cell of -0.0 updates stays -0.0 in any cut; a cell nothing reaches is +0.0; inf + -inf
    # in different blocks gives the canonical NaN.
    src = np.array([-0.0, -0.0, -0.0, np.inf, 1.0, -np.inf], np.float32)
    index = np.array([0, 0, 0, 2, 2, 2])
    for block in (1, 2, 3, 6):
        r = ts.scatter(src, index, dim=0, dim_size=3, block=block)
        assert r.view(np.uint32).tolist() == [0x80000000, 0, 0x7FC00000]


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.int32, np.int8, np.uint8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("reduce", ["sum", "mean", "mul", "min", "max"])
def test_one_block_is_the_plain_call(dtype, reduce):
    rng = np.random.default_rng(5)
    src = (_data(rng, np.float64, (41, 3)) if np.dtype(dtype).kind == "f" or dtype == BF16
           else rng.integers(-100, 100, (41, 3))).astype(dtype)
    index = rng.integers(0, 6, 41)
    out = (rng.standard_normal((6, 3)) * 4).astype(dtype)
    if dtype == np.bool_ and reduce == "mean":  # an error either way
        for block in (None, 4):
            with pytest.raises(ts.DTypeError, match="mean is not defined for bool"):
                ts.scatter(src, index, dim=0, reduce=reduce, block=block)
        return
    for block in (41, 1000):
        _bits(ts.scatter(src, index, dim=0, dim_size=6, reduce=reduce, block=block),
              ts.scatter(src, index, dim=0, dim_size=6, reduce=reduce))
        _bits(ts.scatter(src, index, dim=0, out=out.copy(), reduce=reduce, block=block),
              ts.scatter(src, index, dim=0, out=out.copy(), reduce=reduce))
    exact = reduce in ("min", "max") or np.dtype(dtype).kind in "iub"
    if exact:  # any cut: the plain call's bits
        for block in (1, 4, 9):
            _bits(ts.scatter(src, index, dim=0, dim_size=6, reduce=reduce, block=block),
                  ts.scatter(src, index, dim=0, dim_size=6, reduce=reduce))
    # the ONNX forms (a replacement too), negative indices wrapping
    if reduce == "mean":
        return
    red = "add" if reduce == "sum" else reduce
    idx = rng.integers(-6, 6, (3, 7))
    upd = src[:21].reshape(3, 7, 3)
    for r in (red, "none"):
        blocks = (21, 50) + ((1, 4) if exact or r == "none" else ())
        for block in blocks:
            _bits(ts.scatter_update(out, idx, upd, reduction=r, block=block),
                  ts.scatter_update(out, idx, upd, reduction=r))
            _bits(ts.scatter_elements(out, index[:15].reshape(5, 3), src[:5], reduction=r,
                                      block=block),
                  ts.scatter_elements(out, index[:15].reshape(5, 3), src[:5], reduction=r))


def test_segment_forms():
    rng = np.random.default_rng(9)
    src = _data(rng, np.float32, (50, 2))
    index = np.sort(rng.integers(0, 8, 50))
    indptr = np.searchsorted(index, np.arange(9))
    for reduce in ("sum", "mean"):
        want = ts.scatter(src, index, dim=0, dim_size=8, reduce=reduce, block=6)
        _bits(ts.segment_coo(src, index, dim_size=8, reduce=reduce, block=6), want)
        _bits(ts.segment_csr(src, indptr, reduce=reduce, block=6), want)
        out = np.full((8, 2), 7.0, np.float32)
        assert ts.segment_csr(src, indptr, out=out, reduce=reduce, block=6) is out
        _bits(out, want)  # segment_csr overwrites out
    # Positions outside [indptr[0], indptr[-1]) take no part but keep their place in the blocks.
    seg = np.repeat([3, 0, 2, 3], [3, 7, 20, 20])
    _bits(ts.segment_csr(src, np.array([3, 10, 10, 30]), block=4),
          oracle(src, seg, 0, 4, "sum", 4)[:3])
    with pytest.raises(ts.ArgumentError, match=r"segment_coo: index: must be sorted"):
        ts.segment_coo(src, index[::-1].copy(), block=6)


def test_block_is_more_accurate_on_long_sums():
    # 2**20 copies of 0.1 in float32: the sequential sum drifts (about 4e-3 relative);
    # 1024-position blocks paired in a tree stay within 2e-5 of the exact value.
    n = 1 << 20
    src = np.full(n, 0.1, np.float32)
    index = np.zeros(n, np.int64)
    exact = float(np.float32(0.1)) * n
    plain = float(ts.scatter(src, index, dim=0, dim_size=1)[0])
    blocked = float(ts.scatter(src, index, dim=0, dim_size=1, block=1024)[0])
    assert abs(blocked - exact) < abs(plain - exact) / 100
    assert abs(blocked - exact) / exact < 2e-5


def test_errors():
    src = np.ones(10, np.float32)
    index = np.array([0, 1, 2, 3, 4, 5, 6, 7, 9, 3])
    for bad in (0, -1, 1.5, True, "4"):
        with pytest.raises(ts.ArgumentError, match="scatter: block"):
            ts.scatter(src, index, dim=0, block=bad)
    with pytest.raises(ts.OutOfRangeError,
                       match=r"index 9 at position \[8\] is out of range for dimension 0 of size 8"):
        ts.scatter(src, index, dim=0, dim_size=8, block=2)
    with pytest.raises(ts.DTypeError, match="mean is not defined for bool"):
        ts.scatter(src > 0, index, dim=0, reduce="mean", block=2)
    with pytest.raises(ts.DTypeError, match="index: dtype float64 is not accepted"):
        ts.scatter(src, index.astype(np.float64), dim=0, block=2)
    with pytest.raises(ts.ArgumentError, match="out: expected shape"):
        ts.scatter(src, index, dim=0, out=np.zeros(10), block=2)
    with pytest.raises(ts.ArgumentError, match="scatter_update: block: takes the default"):
        ts.scatter_update(src, index, src, include_self=False, block=2)
    with pytest.raises(ts.ArgumentError, match="scatter_elements: indices: block="):
        ts.scatter_elements(np.zeros((2, 3)), np.zeros((1, 3), np.int64), np.zeros((1, 3)),
                            axis=1, block=2)
    torch = pytest.importorskip("torch")
    with pytest.raises(ts.ArgumentError, match="block= takes NumPy arrays"):
        ts.scatter(torch.ones(10), torch.tensor(index), dim=0, block=2)
