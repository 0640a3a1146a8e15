//! The graph-learning family (torch_scatter's API) on NumPy arrays and CPU torch tensors:
//! one native entry, `segment`, for every operator of `tensor_scatter.segment`. As for the
//! six operators, `None` sends the Python half's general path to prepare the arguments.

use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use tensor_scatter::segment::{self as seg, SegmentOptions};
use tensor_scatter::{
    Buffer, DType, DynTensor, Element, IndexInt, Par, SegmentOp, Tensor, segment_dyn,
    segment_dyn_out, segment_vjp_dyn,
};

use crate::errors::{argument, raise};
use crate::operand::{Kind, Operand, c_order, torch_import};
use crate::options::{self, SEGMENT_REDUCTIONS as REDUCTIONS, WITH_POSITIONS};
use crate::{
    TORCH_FROM_NUMPY, bool_arg, cached, int_arg, modified, reduction_arg, released, repr, result,
    threads_arg, ties_arg, work,
};

fn segment_op(s: &str, unbiased: bool) -> PyResult<SegmentOp> {
    options::segment_op(s, unbiased).map_err(pyo3::exceptions::PyValueError::new_err)
}

/// The bytes of a tensor's elements (row-major).
pub(crate) fn tensor_bytes(t: &DynTensor) -> &[u8] {
    macro_rules! bytes {
        ($($v:ident),*) => {
            match t.buffer() {
                // SAFETY: every element type is plain data without padding; the slice covers
                // exactly the vector's elements and borrows it.
                $(Buffer::$v(v) => unsafe {
                    std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(&v[..]))
                },)*
            }
        };
    }
    bytes!(
        F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, Bool
    )
}

/// Copies the library's result into the new contiguous array `o` of its dtype and shape.
fn fill(o: &Operand<'_>, t: &DynTensor) {
    let src = tensor_bytes(t);
    if !src.is_empty() {
        // SAFETY: `o` is a new C-contiguous array of `t`'s dtype and shape (made by
        // `Operand::empty` for this result), so its buffer holds exactly `src.len()` bytes at
        // `origin`, and it cannot overlap the library's own vector.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), o.origin, src.len()) };
    }
}

/// `t` handed to torch as a new tensor, its vector kept (not copied), when torch can take
/// memory of ours (its DLPack import: one C call, where `torch.from_numpy` over a NumPy array
/// costs a small call's time again); `Err(t)` otherwise.
fn to_torch<'py>(py: Python<'py>, t: DynTensor) -> PyResult<Result<Bound<'py, PyAny>, DynTensor>> {
    let Some(api) = torch_import(py) else {
        return Ok(Err(t));
    };
    let shape = t.shape().to_vec();
    let strides = c_order(&shape);
    let dtype = t.dtype();
    macro_rules! hand {
        ($($v:ident),*) => {
            match t.into_buffer() {
                $(Buffer::$v(mut v) => {
                    let data = v.as_mut_ptr().cast::<u8>();
                    api.tensor(py, data, dtype, &shape, &strides, Box::new(v))
                })*
            }
        };
    }
    hand!(
        F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, Bool
    )
    .map(Ok)
}

/// The positions as an int64 array of the kind `like` has.
fn positions<'py>(py: Python<'py>, like: Kind, a: Tensor<i64>) -> PyResult<Bound<'py, PyAny>> {
    let shape = a.shape().to_vec();
    let mut v = a.into_vec();
    if like == Kind::Torch
        && let Some(api) = torch_import(py)
    {
        let data = v.as_mut_ptr().cast::<u8>();
        return api.tensor(py, data, DType::I64, &shape, &c_order(&shape), Box::new(v));
    }
    let arr = PyArray1::from_vec(py, v).reshape(shape)?.into_any();
    match like {
        Kind::NumPy => Ok(arr),
        Kind::Torch => cached(py, &TORCH_FROM_NUMPY, "torch", "from_numpy")?.call1((arr,)),
    }
}

/// The options the Python arguments name (`dim` and `dim_size` taken as `operator.index`
/// takes them, `reduce` checked against the names `name` accepts, `threads` checked).
#[allow(clippy::too_many_arguments)]
fn options(
    py: Python<'_>,
    name: &str,
    dim: &Bound<'_, PyAny>,
    dim_size: Option<&Bound<'_, PyAny>>,
    reduce: &Bound<'_, PyAny>,
    want_arg: bool,
    threads: &Bound<'_, PyAny>,
) -> PyResult<SegmentOptions> {
    let accepted = if want_arg { WITH_POSITIONS } else { REDUCTIONS };
    let reduce = reduction_arg(py, name, "reduce", reduce, accepted)?;
    let opts = SegmentOptions::new()
        .dim(int_arg(name, "dim", dim)?)
        .reduce(reduce)
        .par(Par::threads_exact(threads_arg(name, threads)?));
    let Some(n) = dim_size.filter(|n| !n.is_none()) else {
        return Ok(opts);
    };
    let count = usize::try_from(int_arg(name, "dim_size", n)?).map_err(|_| {
        argument(
            py,
            format!("{name}: dim_size: {} is not None or a count >= 0", repr(n)),
        )
    })?;
    Ok(opts.dim_size(count))
}

/// The values and, for min/max with positions, the positions.
type Answer<'py> = (Bound<'py, PyAny>, Option<Bound<'py, PyAny>>);

/// One operator of the family. Returns `(values, positions or None)`, or `None` when the
/// Python half must prepare an argument first. With `out`, the values fold into it (scatter,
/// coo and csr) and `out` itself is returned.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (op, src, index, out, dim, dim_size, reduce, want_arg, unbiased, threads))]
pub fn segment<'py>(
    py: Python<'py>,
    op: &str,
    src: &Bound<'py, PyAny>,
    index: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    dim: &Bound<'py, PyAny>,
    dim_size: Option<&Bound<'py, PyAny>>,
    reduce: &Bound<'py, PyAny>,
    want_arg: bool,
    unbiased: &Bound<'py, PyAny>,
    threads: &Bound<'py, PyAny>,
) -> PyResult<Option<Answer<'py>>> {
    let std_name = segment_op("std", true)?.name();
    let op = segment_op(op, bool_arg(std_name, "unbiased", unbiased)?)?;
    let name = op.name();
    // The options first: a call the Python half routes elsewhere (JAX's tracers) gets their
    // errors as a NumPy call would.
    let opts = options(py, name, dim, dim_size, reduce, want_arg, threads)?;
    let Some(s) = Operand::read(src) else {
        return Ok(None);
    };
    let Some(i) = Operand::read(index).filter(|i| i.dtype.is_integer()) else {
        return Ok(None);
    };
    let kind = s.kind;
    if let Some(out) = out {
        let Some(o) = Operand::output(out)
            .filter(|o| o.writeable && o.dtype == s.dtype && !o.overlaps(&s) && !o.overlaps(&i))
        else {
            return Ok(None);
        };
        if small_call(op, &s, &i, o.len(), &opts, want_arg)
            && line(&o)
            && let Some(done) = small_fold(&s, &i, (o.origin, o.len()), opts.reduce, true)
        {
            done.map_err(|e| raise(py, &e))?;
            modified(&o)?;
            return Ok(Some((out.clone(), None)));
        }
        // SAFETY: `out` overlaps no input (checked); all are held for the call.
        let (sv, iv, ov) = unsafe { (s.view()?, i.view()?, o.view_mut()?) };
        let arg = released(py, work(&[&s, &i, &o]), move || {
            segment_dyn_out(op, sv, iv, ov, &opts, want_arg)
        })
        .map_err(|e| raise(py, &e))?;
        modified(&o)?;
        let arg = arg.map(|a| positions(py, kind, a)).transpose()?;
        return Ok(Some((out.clone(), arg)));
    }
    if let Some(n) = opts.dim_size
        && small_call(op, &s, &i, n, &opts, want_arg)
        && let Some(values) = small_new(py, &s, &i, n, opts.reduce)
    {
        return Ok(Some((values?, None)));
    }
    // SAFETY: the inputs are held for the call and nothing writes them.
    let (sv, iv) = unsafe { (s.view()?, i.view()?) };
    let known = known_work(op, &s, &i, &opts).unwrap_or(usize::MAX);
    let (values, arg) = released(py, known, move || {
        segment_dyn(op, &sv, &iv, &opts, want_arg)
    })
    .map_err(|e| raise(py, &e))?;
    let values = new_array(py, &s, values)?;
    let arg = arg.map(|a| positions(py, kind, a)).transpose()?;
    Ok(Some((values, arg)))
}

/// Whether a `scatter` into `n` cells is small enough for [`seg::scatter_small`] (no views or
/// plan, the planned path's bits): torch_scatter's `scatter` along dim 0 with no positions, of
/// [`small_operands`] (checked before a result is allocated).
fn small_call(
    op: SegmentOp,
    s: &Operand<'_>,
    i: &Operand<'_>,
    n: usize,
    opts: &SegmentOptions,
    want_arg: bool,
) -> bool {
    op == SegmentOp::Scatter && !want_arg && matches!(opts.dim, 0 | -1) && small_operands(s, i, n)
}

/// Whether values `s` at `i` into `n` cells are what [`small_fold`] takes: `s` and `i` of one
/// dim and the same length, their elements contiguous, at most `SMALL_UPDATES` of them into at
/// most `SMALL_CELLS` cells, and the values' and indices' dtypes one of its pairs (empty
/// operands go the planned way: their data pointer may be null).
pub(crate) fn small_operands(s: &Operand<'_>, i: &Operand<'_>, n: usize) -> bool {
    line(s)
        && line(i)
        && i.len() == s.len()
        && (1..=seg::SMALL_UPDATES).contains(&s.len())
        && (1..=seg::SMALL_CELLS).contains(&n)
        && matches!(s.dtype, DType::F32 | DType::F64 | DType::I32 | DType::I64)
        && matches!(i.dtype, DType::I32 | DType::I64)
}

/// One dim of contiguous elements.
pub(crate) fn line(x: &Operand<'_>) -> bool {
    x.shape.len() == 1 && (x.strides[0] == 1 || x.shape[0] == 1)
}

/// [`seg::scatter_small`] of a [`small_call`] into `out` (of `src`'s dtype, overlapping
/// neither input), its values taking part with `include_self`. `None`: not small after all
/// (too many cells or updates, a reduction it does not take).
pub(crate) fn small_fold(
    s: &Operand<'_>,
    i: &Operand<'_>,
    out: (*mut u8, usize),
    red: tensor_scatter::Reduction,
    include_self: bool,
) -> Option<tensor_scatter::Result<()>> {
    // One copy per dtype pair, whoever calls (inlined into two callers, the fold's loop
    // compiled 2.3x slower at 1,000 updates).
    #[inline(never)]
    fn run<T: Element, I: IndexInt>(
        s: &Operand<'_>,
        i: &Operand<'_>,
        (o, n): (*mut u8, usize),
        red: tensor_scatter::Reduction,
        include_self: bool,
    ) -> Option<tensor_scatter::Result<()>> {
        // SAFETY: `s` and `i` are one dim of contiguous elements of their dtypes (`T`, `I`:
        // matched below) at aligned, non-null origins (`Operand` refuses others, and neither
        // is empty: `small_call`), held for the call; `o` is `n` aligned elements of `T` that
        // overlap neither (the caller's contract), so the mutable slice is disjoint.
        let (src, index, out) = unsafe {
            (
                std::slice::from_raw_parts(s.origin as *const T, s.shape[0]),
                std::slice::from_raw_parts(i.origin as *const I, i.shape[0]),
                std::slice::from_raw_parts_mut(o.cast::<T>(), n),
            )
        };
        seg::scatter_small(src, index, out, red, include_self)
    }
    match (s.dtype, i.dtype) {
        (DType::F32, DType::I32) => run::<f32, i32>(s, i, out, red, include_self),
        (DType::F32, DType::I64) => run::<f32, i64>(s, i, out, red, include_self),
        (DType::F64, DType::I32) => run::<f64, i32>(s, i, out, red, include_self),
        (DType::F64, DType::I64) => run::<f64, i64>(s, i, out, red, include_self),
        (DType::I32, DType::I32) => run::<i32, i32>(s, i, out, red, include_self),
        (DType::I32, DType::I64) => run::<i32, i64>(s, i, out, red, include_self),
        (DType::I64, DType::I32) => run::<i64, i32>(s, i, out, red, include_self),
        (DType::I64, DType::I64) => run::<i64, i64>(s, i, out, red, include_self),
        _ => None,
    }
}

/// A new 1-D array of `src`'s kind and dtype holding the small `scatter` of `n` cells, or `None`
/// when the call is not small after all. The array is made as every result is
/// ([`Operand::empty`]) and the fold writes every cell of it.
fn small_new<'py>(
    py: Python<'py>,
    s: &Operand<'py>,
    i: &Operand<'py>,
    n: usize,
    red: tensor_scatter::Reduction,
) -> Option<PyResult<Bound<'py, PyAny>>> {
    let o = match s.empty(&[n]) {
        Ok(o) => o,
        Err(e) => return Some(Err(e)),
    };
    // `o` is new: it overlaps no input.
    Some(match small_fold(s, i, (o.origin, n), red, false)? {
        Ok(()) => result(o),
        Err(e) => Err(raise(py, &e)),
    })
}

/// How many times each of `[0, n)` occurs in `index` (`segment::counts`), as a new NumPy
/// uint64 array: the counts of a mean's partial under the block rule (`_blocks._counts`),
/// read from the index alone. `None` when `index` is not one contiguous dim of an integer
/// dtype (the Python half then sums ones).
#[pyfunction]
pub fn counts<'py>(
    py: Python<'py>,
    index: &Bound<'py, PyAny>,
    n: usize,
    threads: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyArray1<u64>>>> {
    let Some(i) = Operand::read(index).filter(|i| i.dtype.is_integer() && line(i)) else {
        return Ok(None);
    };
    let par = Par::threads_exact(threads_arg("counts", threads)?);
    fn run<I: IndexInt>(py: Python<'_>, i: &Operand<'_>, n: usize, par: Par) -> PyResult<Vec<u64>> {
        let index: &[I] = match i.shape[0] {
            0 => &[],
            // SAFETY: `i` is one dim of contiguous elements of its dtype (`I`: matched below)
            // at an aligned, non-null origin (`Operand` refuses others; it is not empty), held
            // for the call and only read.
            len => unsafe { std::slice::from_raw_parts(i.origin as *const I, len) },
        };
        released(py, index.len(), move || seg::counts(index, n, par)).map_err(|e| raise(py, &e))
    }
    let c = match i.dtype {
        DType::I64 => run::<i64>(py, &i, n, par),
        DType::I32 => run::<i32>(py, &i, n, par),
        DType::I16 => run::<i16>(py, &i, n, par),
        DType::I8 => run::<i8>(py, &i, n, par),
        DType::U64 => run::<u64>(py, &i, n, par),
        DType::U32 => run::<u32>(py, &i, n, par),
        DType::U16 => run::<u16>(py, &i, n, par),
        DType::U8 => run::<u8>(py, &i, n, par),
        _ => return Ok(None),
    }?;
    Ok(Some(PyArray1::from_vec(py, c)))
}

/// The elements an allocating call reads and writes, when its result's size is known before
/// it runs: `dim_size` given to `scatter` or `segment_coo` (otherwise the result's extent is
/// a value of the data, `index.max() + 1` or `indptr`'s).
fn known_work(
    op: SegmentOp,
    s: &Operand<'_>,
    i: &Operand<'_>,
    opts: &SegmentOptions,
) -> Option<usize> {
    let n = opts.dim_size?;
    let d = match op {
        SegmentOp::Scatter => {
            let r = s.shape.len() as i64;
            usize::try_from(if opts.dim < 0 { opts.dim + r } else { opts.dim }).ok()?
        }
        SegmentOp::Coo => i.shape.len().checked_sub(1)?,
        _ => return None,
    };
    let along = *s.shape.get(d)?;
    let rows = s.len().checked_div(along)?;
    rows.checked_mul(n)?.checked_add(work(&[s, i]))
}

/// A new array of `like`'s kind and dtype holding `t` (of that dtype): every vector handed to
/// torch as it is ([`to_torch`]); f64 and f32 vectors handed to NumPy as they are (a result as
/// large as `src` is not copied again), the other dtypes copied into a new array.
pub(crate) fn new_array<'py>(
    py: Python<'py>,
    like: &Operand<'py>,
    t: DynTensor,
) -> PyResult<Bound<'py, PyAny>> {
    let t = match like.kind {
        Kind::Torch => match to_torch(py, t)? {
            Ok(tensor) => return Ok(tensor),
            Err(t) => t,
        },
        Kind::NumPy => t,
    };
    let shape = t.shape().to_vec();
    let arr = match t.into_buffer() {
        Buffer::F64(v) => PyArray1::from_vec(py, v).reshape(shape)?.into_any(),
        Buffer::F32(v) => PyArray1::from_vec(py, v).reshape(shape)?.into_any(),
        other => {
            let t = DynTensor::new(other, &shape).map_err(|e| raise(py, &e))?;
            let o = like.empty(t.shape())?;
            fill(&o, &t);
            return result(o);
        }
    };
    match like.kind {
        Kind::NumPy => Ok(arr),
        Kind::Torch => cached(py, &TORCH_FROM_NUMPY, "torch", "from_numpy")?.call1((arr,)),
    }
}

/// The backward of one operator: `(grad wrt src, grad wrt out or None)`, or `None` when the
/// Python half must prepare an argument first. `src` may be `None` for the gathers.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (op, grad, src, index, out, dim, dim_size, reduce, ties, threads))]
pub fn segment_vjp<'py>(
    py: Python<'py>,
    op: &str,
    grad: &Bound<'py, PyAny>,
    src: Option<&Bound<'py, PyAny>>,
    index: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    dim: &Bound<'py, PyAny>,
    dim_size: Option<&Bound<'py, PyAny>>,
    reduce: &Bound<'py, PyAny>,
    ties: &str,
    threads: &Bound<'py, PyAny>,
) -> PyResult<Option<Answer<'py>>> {
    // "std_biased": the backward of scatter_std(unbiased=False).
    let op = segment_op(op, true)?;
    let name = op.name();
    let Some(g) = Operand::read(grad) else {
        return Ok(None);
    };
    let Some(i) = Operand::read(index).filter(|i| i.dtype.is_integer()) else {
        return Ok(None);
    };
    let read = |x: Option<&Bound<'py, PyAny>>| match x {
        None => Some(None),
        Some(x) => Operand::read(x).map(Some),
    };
    let (Some(s), Some(o)) = (read(src), read(out)) else {
        return Ok(None);
    };
    let ties = ties_arg(py, name, ties)?;
    let opts = options(py, name, dim, dim_size, reduce, false, threads)?.ties(ties);
    // SAFETY: the inputs are held for the call and nothing writes them.
    let (gv, iv, sv, ov) = unsafe {
        (
            g.view()?,
            i.view()?,
            s.as_ref().map(|s| s.view()).transpose()?,
            o.as_ref().map(|o| o.view()).transpose()?,
        )
    };
    let (gs, go) = py
        .detach(move || segment_vjp_dyn(op, &gv, sv, &iv, ov, &opts))
        .map_err(|e| raise(py, &e))?;
    let gs_arr = new_array(py, &g, gs)?;
    let go_arr = go.map(|t| new_array(py, &g, t)).transpose()?;
    Ok(Some((gs_arr, go_arr)))
}
