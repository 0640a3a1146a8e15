//! The backward passes of the scatters and gathers on erased tensors.

use crate::dtype::{DType, Element};
use crate::error::{Error, ErrorKind, Result};
use crate::index::IndexInt;
use crate::scatter::ScatterOptions;
use crate::segment::Float;

use super::gather::{DynGatherOptions, GatherOp};
use super::scatter::ScatterOp;
use super::view::{DynView, ViewElement, typed};
use super::{DynTensor, with_dtype, with_float_dtype, with_native_index, with_native_index_dtype};

/// The gradients `(d data, d updates)` of one scatter given `grad` (see
/// [`scatter_elements_vjp`](crate::scatter_elements_vjp)). Float dtypes only.
///
/// ```
/// use tensor_scatter::{scatter_vjp_dyn, DynTensor, Reduction, ScatterOp, ScatterOptions};
/// let t = |v: Vec<f64>| DynTensor::from_vec(v, &[2]).unwrap();
/// let (gd, gu) = scatter_vjp_dyn(
///     ScatterOp::Elements,
///     &t(vec![1.0, 2.0]),
///     &t(vec![0.0, 0.0]),
///     &DynTensor::from_vec(vec![1i64, 1], &[2]).unwrap(),
///     &t(vec![3.0, 5.0]),
///     &ScatterOptions::new().reduction(Reduction::Mean),
/// )
/// .unwrap();
/// assert_eq!(gu.as_slice::<f64>(), Some(&[2.0 / 3.0, 2.0 / 3.0][..]));
/// assert_eq!(gd.as_slice::<f64>(), Some(&[1.0, 2.0 / 3.0][..]));
/// ```
///
/// # Errors
/// `data`, `updates` or `grad` of another dtype than each other, a dtype other than float,
/// non-integer indices, then every error of the typed function.
pub fn scatter_vjp_dyn<'g, 'd, 'i, 'u>(
    op: ScatterOp,
    grad: impl Into<DynView<'g>>,
    data: impl Into<DynView<'d>>,
    indices: impl Into<DynView<'i>>,
    updates: impl Into<DynView<'u>>,
    opts: &ScatterOptions,
) -> Result<(DynTensor, DynTensor)> {
    let all = [&grad.into(), &data.into(), &indices.into(), &updates.into()];
    scatter_vjp(op, all, opts)
}

// As the forward functions: the public ones convert their `impl Into<DynView>` arguments and
// call a dispatch that is not generic, so that the kernels are compiled here only.
fn scatter_vjp(
    op: ScatterOp,
    [g, d, i, u]: [&DynView<'_>; 4],
    opts: &ScatterOptions,
) -> Result<(DynTensor, DynTensor)> {
    fn run<T: Float + ViewElement, I: IndexInt + ViewElement>(
        op: ScatterOp,
        [grad, data, indices, updates]: [&DynView<'_>; 4],
        opts: &ScatterOptions,
    ) -> Result<(DynTensor, DynTensor)> {
        let name = vjp_name(op);
        let g = typed::<T>(grad, name, "grad")?;
        let d = typed::<T>(data, name, "data")?;
        let i = typed::<I>(indices, name, "indices")?;
        let u = typed::<T>(updates, name, "updates")?;
        let r = match op {
            ScatterOp::Elements => crate::scatter_elements_vjp(g, d, i, u, opts),
            ScatterOp::Nd => crate::scatter_nd_vjp(g, d, i, u, opts),
            ScatterOp::Update => crate::scatter_update_vjp(g, d, i, u, opts),
        }?;
        Ok((r.data.into(), r.updates.into()))
    }
    let name = vjp_name(op);
    for (arg, v) in [("updates", u), ("grad", g)] {
        if v.dtype() != d.dtype() {
            return Err(Error::new(ErrorKind::DTypeMismatch {
                op: name,
                arg,
                expected: d.dtype(),
                got: v.dtype(),
            }));
        }
    }
    with_native_index(name, "indices", i, |i| {
        let all = [g, d, i, u];
        with_float_dtype!(d.dtype(), T => with_native_index_dtype!(i.dtype(), I => run::<T, I>(op, all, opts), _ => Err(unsupported(name, i.dtype()))), other => Err(crate::segment::not_float(name, "data", other)))
    })
}

/// The gradient with respect to `data` of one gather from a `data` of shape `data_shape`,
/// given `grad` (see [`gather_vjp`](crate::gather_vjp)); any dtype (the fill value is unused).
///
/// ```
/// use tensor_scatter::{gather_vjp_dyn, DynGatherOptions, DynTensor, GatherOp};
/// let g = gather_vjp_dyn(
///     GatherOp::Elements,
///     &DynTensor::from_vec(vec![1i32, 2, 4], &[3]).unwrap(),
///     &DynTensor::from_vec(vec![2u8, 0, 2], &[3]).unwrap(),
///     &[3],
///     &DynGatherOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(g.as_slice::<i32>(), Some(&[2, 0, 5][..]));
/// ```
///
/// # Errors
/// Non-integer indices, then every error of the typed function.
pub fn gather_vjp_dyn<'g, 'i>(
    op: GatherOp,
    grad: impl Into<DynView<'g>>,
    indices: impl Into<DynView<'i>>,
    data_shape: &[usize],
    opts: &DynGatherOptions,
) -> Result<DynTensor> {
    gather_vjp(op, &grad.into(), &indices.into(), data_shape, opts)
}

fn gather_vjp(
    op: GatherOp,
    g: &DynView<'_>,
    i: &DynView<'_>,
    data_shape: &[usize],
    opts: &DynGatherOptions,
) -> Result<DynTensor> {
    fn run<T: Element + ViewElement, I: IndexInt + ViewElement>(
        op: GatherOp,
        grad: &DynView<'_>,
        indices: &DynView<'_>,
        data_shape: &[usize],
        opts: &DynGatherOptions,
    ) -> Result<DynTensor> {
        let name = gather_name(op);
        let g = typed::<T>(grad, name, "grad")?;
        let i = typed::<I>(indices, name, "indices")?;
        let o = opts.clone().with_fill(T::default());
        let r = match op {
            GatherOp::Gather => crate::gather_vjp(g, i, data_shape, &o),
            GatherOp::Elements => crate::gather_elements_vjp(g, i, data_shape, &o),
            GatherOp::Nd => crate::gather_nd_vjp(g, i, data_shape, &o),
        }?;
        Ok(r.into())
    }
    with_native_index(
        gather_name(op),
        "indices",
        i,
        |i| with_dtype!(g.dtype(), T => with_native_index_dtype!(i.dtype(), I => run::<T, I>(op, g, i, data_shape, opts), _ => Err(unsupported(gather_name(op), i.dtype())))),
    )
}

fn vjp_name(op: ScatterOp) -> &'static str {
    match op {
        ScatterOp::Elements => "scatter_elements_vjp",
        ScatterOp::Nd => "scatter_nd_vjp",
        ScatterOp::Update => "scatter_update_vjp",
    }
}

fn gather_name(op: GatherOp) -> &'static str {
    match op {
        GatherOp::Gather => "gather_vjp",
        GatherOp::Elements => "gather_elements_vjp",
        GatherOp::Nd => "gather_nd_vjp",
    }
}

fn unsupported(op: &'static str, dtype: DType) -> Error {
    Error::unsupported_dtype(op, "indices", dtype, crate::index::INDEX_DTYPES_TEXT)
}
