//! The segment family on erased tensors: [`SegmentOp`] and `segment_dyn*`, for callers that
//! know dtypes only at run time (the CLI, the Python package).

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::index::IndexInt;
use crate::segment::{self as seg, Float, SegmentOptions};
use crate::view::Tensor;

use super::view::{DynView, DynViewMut, ViewElement, typed, typed_mut};
use super::{DynTensor, with_dtype, with_float_dtype, with_native_index, with_native_index_dtype};

/// The segment family's operators (see [`segment`](crate::segment)), for dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SegmentOp {
    /// [`scatter`](seg::scatter) (with `want_arg`: [`scatter_arg`](seg::scatter_arg)).
    Scatter,
    /// [`segment_coo`](seg::segment_coo) (and its `_arg` form).
    Coo,
    /// [`segment_csr`](seg::segment_csr) (and its `_arg` form).
    Csr,
    /// [`gather_coo`](seg::gather_coo).
    GatherCoo,
    /// [`gather_csr`](seg::gather_csr).
    GatherCsr,
    /// [`scatter_softmax`](seg::scatter_softmax).
    Softmax,
    /// [`scatter_log_softmax`](seg::scatter_log_softmax).
    LogSoftmax,
    /// [`scatter_logsumexp`](seg::scatter_logsumexp).
    LogSumExp,
    /// [`scatter_std`](seg::scatter_std).
    Std {
        /// Divide by `n − 1` (torch's default) instead of `n`.
        unbiased: bool,
    },
}

impl SegmentOp {
    /// The operator's name in errors.
    pub fn name(self) -> &'static str {
        match self {
            SegmentOp::Scatter => "scatter",
            SegmentOp::Coo => "segment_coo",
            SegmentOp::Csr => "segment_csr",
            SegmentOp::GatherCoo => "gather_coo",
            SegmentOp::GatherCsr => "gather_csr",
            SegmentOp::Softmax => "scatter_softmax",
            SegmentOp::LogSoftmax => "scatter_log_softmax",
            SegmentOp::LogSumExp => "scatter_logsumexp",
            SegmentOp::Std { .. } => "scatter_std",
        }
    }

    fn index_name(self) -> &'static str {
        match self {
            SegmentOp::Csr | SegmentOp::GatherCsr => "indptr",
            _ => "index",
        }
    }
}

/// The values and, for min/max with `want_arg`, the positions.
pub type Segmented = (DynTensor, Option<Tensor<i64>>);

fn typed_alloc<T: ViewElement, I: IndexInt + ViewElement>(
    op: SegmentOp,
    src: &DynView<'_>,
    index: &DynView<'_>,
    opts: &SegmentOptions,
    want_arg: bool,
) -> Result<Segmented> {
    let s = typed::<T>(src, op.name(), "src")?;
    let i = typed::<I>(index, op.name(), op.index_name())?;
    let (v, a) = match (op, want_arg) {
        (SegmentOp::Scatter, true) => seg::scatter_arg(s, i, opts).map(|(v, a)| (v, Some(a)))?,
        (SegmentOp::Coo, true) => seg::segment_coo_arg(s, i, opts).map(|(v, a)| (v, Some(a)))?,
        (SegmentOp::Csr, true) => seg::segment_csr_arg(s, i, opts).map(|(v, a)| (v, Some(a)))?,
        (SegmentOp::Scatter, false) => (seg::scatter(s, i, opts)?, None),
        (SegmentOp::Coo, false) => (seg::segment_coo(s, i, opts)?, None),
        (SegmentOp::Csr, false) => (seg::segment_csr(s, i, opts)?, None),
        (SegmentOp::GatherCoo, _) => (seg::gather_coo(s, i, opts)?, None),
        (SegmentOp::GatherCsr, _) => (seg::gather_csr(s, i, opts)?, None),
        _ => return with_float::<I>(op, src, i, opts),
    };
    Ok((v.into(), a))
}

/// The composites, for the float dtypes only.
fn with_float<I: IndexInt + ViewElement>(
    op: SegmentOp,
    src: &DynView<'_>,
    index: &crate::TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Segmented> {
    fn run<T: Float + ViewElement, I: IndexInt>(
        op: SegmentOp,
        src: &DynView<'_>,
        i: &crate::TensorView<'_, I>,
        opts: &SegmentOptions,
    ) -> Result<Segmented> {
        let s = typed::<T>(src, op.name(), "src")?;
        let v = match op {
            SegmentOp::Softmax => seg::scatter_softmax(s, i, opts)?,
            SegmentOp::LogSoftmax => seg::scatter_log_softmax(s, i, opts)?,
            SegmentOp::LogSumExp => seg::scatter_logsumexp(s, i, opts)?,
            SegmentOp::Std { unbiased } => seg::scatter_std(s, i, unbiased, opts)?,
            _ => unreachable!("the reductions are dispatched by typed_alloc"),
        };
        Ok((v.into(), None))
    }
    match src.dtype() {
        DType::F64 => run::<f64, I>(op, src, index, opts),
        DType::F32 => run::<f32, I>(op, src, index, opts),
        DType::F16 => run::<half::f16, I>(op, src, index, opts),
        DType::BF16 => run::<half::bf16, I>(op, src, index, opts),
        other => Err(seg::not_float(op.name(), "src", other)),
    }
}

fn unsupported_index(op: SegmentOp, dtype: DType) -> Error {
    Error::unsupported_dtype(
        op.name(),
        op.index_name(),
        dtype,
        crate::index::INDEX_DTYPES_TEXT,
    )
}

/// Runs one segment operator on erased tensors, into a new tensor; with `want_arg` (min and
/// max of `Scatter`, `Coo`, `Csr` only) the positions too.
///
/// # Errors
/// A non-integer index dtype, a non-float `src` for the composites, then every error of the
/// typed operator.
///
/// ```
/// use tensor_scatter::segment::SegmentOptions;
/// use tensor_scatter::{segment_dyn, DynTensor, SegmentOp};
/// let (out, _) = segment_dyn(
///     SegmentOp::Scatter,
///     &DynTensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap(),
///     &DynTensor::from_vec(vec![1u8, 1, 0], &[3]).unwrap(),
///     &SegmentOptions::new(),
///     false,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<i32>(), Some(&[3, 3][..]));
/// ```
pub fn segment_dyn<'s, 'i>(
    op: SegmentOp,
    src: impl Into<DynView<'s>>,
    index: impl Into<DynView<'i>>,
    opts: &SegmentOptions,
    want_arg: bool,
) -> Result<Segmented> {
    alloc(op, &src.into(), &index.into(), opts, want_arg)
}

// The public functions take `impl Into<DynView>` and convert at once: the dispatch below is not
// generic, so its kernels are compiled in this crate, not again in every caller's.
fn alloc(
    op: SegmentOp,
    src: &DynView<'_>,
    index: &DynView<'_>,
    opts: &SegmentOptions,
    want_arg: bool,
) -> Result<Segmented> {
    with_native_index(
        op.name(),
        op.index_name(),
        index,
        |index| with_dtype!(src.dtype(), T => with_native_index_dtype!(index.dtype(), I => typed_alloc::<T, I>(op, src, index, opts, want_arg), _ => Err(unsupported_index(op, index.dtype())))),
    )
}

fn typed_out<T: ViewElement, I: IndexInt + ViewElement>(
    op: SegmentOp,
    src: &DynView<'_>,
    index: &DynView<'_>,
    out: &mut DynViewMut<'_>,
    opts: &SegmentOptions,
    want_arg: bool,
) -> Result<Option<Tensor<i64>>> {
    let s = typed::<T>(src, op.name(), "src")?;
    let i = typed::<I>(index, op.name(), op.index_name())?;
    let o = typed_mut::<T>(out, op.name(), "out")?;
    Ok(match (op, want_arg) {
        (SegmentOp::Scatter, true) => Some(seg::scatter_arg_out(s, i, o, opts)?),
        (SegmentOp::Coo, true) => Some(seg::segment_coo_arg_out(s, i, o, opts)?),
        (SegmentOp::Csr, true) => Some(seg::segment_csr_arg_out(s, i, o, opts)?),
        (SegmentOp::Scatter, false) => seg::scatter_out(s, i, o, opts).map(|()| None)?,
        (SegmentOp::Coo, false) => seg::segment_coo_out(s, i, o, opts).map(|()| None)?,
        (SegmentOp::Csr, false) => seg::segment_csr_out(s, i, o, opts).map(|()| None)?,
        _ => {
            return Err(Error::invalid(
                op.name(),
                "out",
                "only scatter, segment_coo and segment_csr write into an existing output",
            ));
        }
    })
}

/// [`segment_dyn`] into `out` (torch_scatter's `out=`): its values start each fold of
/// `Scatter` and `Coo`, and `Csr` overwrites them. On error `out` is unchanged.
///
/// # Errors
/// As [`segment_dyn`], plus a dtype or shape mismatch of `out`.
pub fn segment_dyn_out<'s, 'i, 'o>(
    op: SegmentOp,
    src: impl Into<DynView<'s>>,
    index: impl Into<DynView<'i>>,
    out: impl Into<DynViewMut<'o>>,
    opts: &SegmentOptions,
    want_arg: bool,
) -> Result<Option<Tensor<i64>>> {
    into_out(
        op,
        &src.into(),
        &index.into(),
        &mut out.into(),
        opts,
        want_arg,
    )
}

fn into_out(
    op: SegmentOp,
    src: &DynView<'_>,
    index: &DynView<'_>,
    out: &mut DynViewMut<'_>,
    opts: &SegmentOptions,
    want_arg: bool,
) -> Result<Option<Tensor<i64>>> {
    with_native_index(
        op.name(),
        op.index_name(),
        index,
        |index| with_dtype!(src.dtype(), T => with_native_index_dtype!(index.dtype(), I => typed_out::<T, I>(op, src, index, out, opts, want_arg), _ => Err(unsupported_index(op, index.dtype())))),
    )
}

/// The gradients `(with respect to src, with respect to out)` of a segment operator on erased
/// tensors, from `grad` (the gradient with respect to its output) and the forward's inputs:
/// [`scatter_vjp`](seg::scatter_vjp), [`segment_coo_vjp`](seg::segment_coo_vjp),
/// [`segment_csr_vjp`](seg::segment_csr_vjp) (they need `src`, and `out` when the forward had
/// one), [`gather_coo_vjp`](seg::gather_coo_vjp) (src's extent along dim from `src`'s shape,
/// else `opts.dim_size`), [`gather_csr_vjp`](seg::gather_csr_vjp) and the composites'
/// (`scatter_softmax_vjp` and the others: with respect to src only). Float dtypes only.
///
/// # Errors
/// A `grad` of another dtype than float (or than `src`'s), a missing `src`, then every error
/// of the typed function.
pub fn segment_vjp_dyn<'g, 'i>(
    op: SegmentOp,
    grad: impl Into<DynView<'g>>,
    src: Option<DynView<'_>>,
    index: impl Into<DynView<'i>>,
    out: Option<DynView<'_>>,
    opts: &SegmentOptions,
) -> Result<(DynTensor, Option<DynTensor>)> {
    vjp(
        op,
        &grad.into(),
        src.as_ref(),
        &index.into(),
        out.as_ref(),
        opts,
    )
}

fn vjp(
    op: SegmentOp,
    grad: &DynView<'_>,
    src: Option<&DynView<'_>>,
    index: &DynView<'_>,
    out: Option<&DynView<'_>>,
    opts: &SegmentOptions,
) -> Result<(DynTensor, Option<DynTensor>)> {
    fn run<T: Float + ViewElement, I: IndexInt + ViewElement>(
        op: SegmentOp,
        grad: &DynView<'_>,
        src: Option<&DynView<'_>>,
        index: &DynView<'_>,
        out: Option<&DynView<'_>>,
        opts: &SegmentOptions,
    ) -> Result<(DynTensor, Option<DynTensor>)> {
        let name = op.name();
        let g = typed::<T>(grad, name, "grad")?;
        let i = typed::<I>(index, name, op.index_name())?;
        let o = out.map(|o| typed::<T>(o, name, "out")).transpose()?;
        let typed_src = || {
            let s = src.ok_or_else(|| Error::invalid(name, "src", "required for this backward"))?;
            typed::<T>(s, name, "src")
        };
        let grads = match op {
            SegmentOp::Scatter => seg::scatter_vjp(g, typed_src()?, i, o, opts)?,
            SegmentOp::Coo => seg::segment_coo_vjp(g, typed_src()?, i, o, opts)?,
            SegmentOp::Csr => seg::segment_csr_vjp(g, typed_src()?, i, o, opts)?,
            SegmentOp::GatherCoo => {
                let d = i.shape().len().saturating_sub(1);
                let n = match (src, opts.dim_size) {
                    (Some(s), _) => s.shape().get(d).copied().unwrap_or(0),
                    (None, Some(n)) => n,
                    (None, None) => {
                        return Err(Error::invalid(name, "dim_size", "required without src"));
                    }
                };
                return Ok((seg::gather_coo_vjp(g, i, n, opts)?.into(), None));
            }
            SegmentOp::GatherCsr => return Ok((seg::gather_csr_vjp(g, i, opts)?.into(), None)),
            SegmentOp::Softmax => {
                return Ok((
                    seg::scatter_softmax_vjp(g, typed_src()?, i, opts)?.into(),
                    None,
                ));
            }
            SegmentOp::LogSoftmax => {
                return Ok((
                    seg::scatter_log_softmax_vjp(g, typed_src()?, i, opts)?.into(),
                    None,
                ));
            }
            SegmentOp::LogSumExp => {
                return Ok((
                    seg::scatter_logsumexp_vjp(g, typed_src()?, i, opts)?.into(),
                    None,
                ));
            }
            SegmentOp::Std { unbiased } => {
                return Ok((
                    seg::scatter_std_vjp(g, typed_src()?, i, unbiased, opts)?.into(),
                    None,
                ));
            }
        };
        Ok((grads.src.into(), grads.out.map(Into::into)))
    }
    with_native_index(
        op.name(),
        op.index_name(),
        index,
        |index| with_float_dtype!(grad.dtype(), T => with_native_index_dtype!(index.dtype(), I => run::<T, I>(op, grad, src, index, out, opts), _ => Err(unsupported_index(op, index.dtype()))), other => Err(seg::not_float(op.name(), "grad", other))),
    )
}

/// [`segment_vjp_dyn`]'s gradient with respect to `src`, written into `dst` (src's dtype and
/// shape), for `Scatter`, `Coo` and `Csr` without `out`: the sum's and the mean's are gathered
/// there directly, with no result of src's size allocated (a caller that owns the buffer, such
/// as XLA, saves a copy of src's size); the other reductions are copied there.
///
/// # Errors
/// As [`segment_vjp_dyn`], plus another operator, or a `dst` of another dtype or shape. On
/// error `dst` is unchanged.
///
/// ```
/// use tensor_scatter::segment::SegmentOptions;
/// use tensor_scatter::{DynTensor, Reduction, SegmentOp, segment_vjp_dyn_out};
/// let src = DynTensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
/// let index = DynTensor::from_vec(vec![1i64, 1, 0], &[3]).unwrap();
/// let grad = DynTensor::from_vec(vec![4.0f32, 6.0], &[2]).unwrap();
/// let mut dst = DynTensor::from_vec(vec![0.0f32; 3], &[3]).unwrap();
/// let opts = SegmentOptions::new().reduce(Reduction::Mean);
/// segment_vjp_dyn_out(SegmentOp::Scatter, &grad, &src, &index, &opts, &mut dst).unwrap();
/// assert_eq!(dst.as_slice::<f32>(), Some(&[3.0f32, 3.0, 4.0][..]));
/// ```
pub fn segment_vjp_dyn_out<'g, 's, 'i, 'd>(
    op: SegmentOp,
    grad: impl Into<DynView<'g>>,
    src: impl Into<DynView<'s>>,
    index: impl Into<DynView<'i>>,
    opts: &SegmentOptions,
    dst: impl Into<DynViewMut<'d>>,
) -> Result<()> {
    vjp_out(
        op,
        &grad.into(),
        &src.into(),
        &index.into(),
        opts,
        &mut dst.into(),
    )
}

fn vjp_out(
    op: SegmentOp,
    grad: &DynView<'_>,
    src: &DynView<'_>,
    index: &DynView<'_>,
    opts: &SegmentOptions,
    dst: &mut DynViewMut<'_>,
) -> Result<()> {
    fn run<T: Float + ViewElement, I: IndexInt + ViewElement>(
        kind: seg::Kind,
        op: SegmentOp,
        grad: &DynView<'_>,
        src: &DynView<'_>,
        index: &DynView<'_>,
        opts: &SegmentOptions,
        dst: &mut DynViewMut<'_>,
    ) -> Result<()> {
        let name = op.name();
        let g = typed::<T>(grad, name, "grad")?;
        let s = typed::<T>(src, name, "src")?;
        let i = typed::<I>(index, name, op.index_name())?;
        let d = typed_mut::<T>(dst, name, "dst")?;
        seg::vjp_out(kind, g, s, i, opts, d)
    }
    let kind = match op {
        SegmentOp::Scatter => seg::Kind::Scatter,
        SegmentOp::Coo => seg::Kind::Coo,
        SegmentOp::Csr => seg::Kind::Csr,
        _ => {
            return Err(Error::invalid(
                op.name(),
                "dst",
                "only scatter, segment_coo and segment_csr write their backward into dst",
            ));
        }
    };
    with_native_index(
        op.name(),
        op.index_name(),
        index,
        |index| with_float_dtype!(grad.dtype(), T => with_native_index_dtype!(index.dtype(), I => run::<T, I>(kind, op, grad, src, index, opts, dst), _ => Err(unsupported_index(op, index.dtype()))), other => Err(seg::not_float(op.name(), "grad", other))),
    )
}
