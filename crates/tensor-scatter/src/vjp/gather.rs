//! Vector-Jacobian products of the three gathers: the gradient with respect to `data` is the
//! scatter-add of `grad` by the same indices, into zeros of data's shape. Each gather runs its
//! mirror scatter ([`gather`] → `scatter_update`, [`gather_elements`] → `scatter_elements`,
//! [`gather_nd`] → `scatter_nd`), so the backward costs a forward scatter-add and is as
//! deterministic; batch dims, which the scatters do not have, first gather the flat data
//! position each output element read, then scatter-add by it. A clamped index sends its
//! gradient to the cell it read, a filled position sends none.
//!
//! [`gather`]: crate::gather
//! [`gather_elements`]: crate::gather_elements
//! [`gather_nd`]: crate::gather_nd

use crate::dtype::{Element, Reduction};
use crate::error::{Error, Result};
use crate::gather::GatherOptions;
use crate::gather::plan::{GatherPlanner, plan_gather, plan_gather_elements, plan_gather_nd};
use crate::index::{IndexInt, IndexPolicy, NegativeIndices, OutOfRange};
use crate::scatter::ScatterOptions;
use crate::segment::filled;
use crate::view::{Tensor, TensorView, TensorViewMut};

type Scatter<T, I> = fn(
    &mut TensorViewMut<'_, T>,
    &TensorView<'_, I>,
    &TensorView<'_, T>,
    &ScatterOptions,
) -> Result<()>;

/// The backward of [`gather`](crate::gather) from a `data` of shape `data_shape`: `grad` has
/// the gather's output shape; `opts` are the forward's (the fill value is not used).
///
/// ```
/// use tensor_scatter::{gather_vjp, GatherOptions, GatherOutOfRange, TensorView};
/// // Rows 2, 0, 2 and an out-of-range row (filled) of a 3 × 2 matrix.
/// let indices = TensorView::new(&[2i64, 0, 2, 7], &[4]).unwrap();
/// let grad = TensorView::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[4, 2]).unwrap();
/// let opts = GatherOptions::new().out_of_range(GatherOutOfRange::Fill);
/// let g = gather_vjp(&grad, &indices, &[3, 2], &opts).unwrap();
/// assert_eq!(g.as_slice(), &[3.0, 4.0, 0.0, 0.0, 6.0, 8.0]);
/// ```
///
/// # Errors
/// Those of the forward (naming `gather_vjp`), plus a `grad` not of the output's shape.
pub fn gather_vjp<T: Element, I: IndexInt>(
    grad: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    data_shape: &[usize],
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    let q = indices.layout.shape.len() as i64;
    let batched = opts.batch_dims != 0 && opts.batch_dims != -q;
    let direct: Scatter<T, I> = crate::scatter_update_into;
    vjp(
        "gather_vjp",
        plan_gather,
        grad,
        indices,
        data_shape,
        opts,
        (!batched).then_some(direct),
    )
}

/// The backward of [`gather_elements`](crate::gather_elements) (see [`gather_vjp`]).
///
/// # Errors
/// As [`gather_vjp`] (naming `gather_elements_vjp`).
pub fn gather_elements_vjp<T: Element, I: IndexInt>(
    grad: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    data_shape: &[usize],
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    let direct: Scatter<T, I> = crate::scatter_elements_into;
    vjp(
        "gather_elements_vjp",
        plan_gather_elements,
        grad,
        indices,
        data_shape,
        opts,
        Some(direct),
    )
}

/// The backward of [`gather_nd`](crate::gather_nd) (see [`gather_vjp`]).
///
/// # Errors
/// As [`gather_vjp`] (naming `gather_nd_vjp`).
pub fn gather_nd_vjp<T: Element, I: IndexInt>(
    grad: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    data_shape: &[usize],
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    let direct: Scatter<T, I> = crate::scatter_nd_into;
    vjp(
        "gather_nd_vjp",
        plan_gather_nd,
        grad,
        indices,
        data_shape,
        opts,
        (opts.batch_dims == 0).then_some(direct),
    )
}

fn vjp<T: Element, I: IndexInt>(
    op: &'static str,
    planner: GatherPlanner,
    grad: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    data_shape: &[usize],
    opts: &GatherOptions<T>,
    direct: Option<Scatter<T, I>>,
) -> Result<Tensor<T>> {
    let numel = crate::shape::numel(op, "data_shape", data_shape)?;
    let plan = planner(
        data_shape,
        &indices.layout.shape,
        opts.axis,
        opts.batch_dims,
    )
    .map_err(|e| e.with_op(op))?;
    if grad.layout.shape != plan.out_shape {
        return Err(Error::shape(
            op,
            "grad",
            format!("{:?} (the gather's output shape)", plan.out_shape),
            &grad.layout.shape,
        ));
    }
    let mut out = filled(op, "data_shape", numel, T::default())?;
    let sopts = ScatterOptions::new()
        .axis(opts.axis)
        .reduction(Reduction::Add)
        .index_policy(opts.policy())
        .par(opts.par);
    match direct {
        Some(scatter) => scatter(
            &mut TensorViewMut::new(&mut out, data_shape)?,
            indices,
            grad,
            &sopts,
        ),
        None => {
            // The flat data position each output element read (u64::MAX where filled), then
            // the scatter-add by position.
            let mut iota = filled(op, "data_shape", numel, 0u64)?;
            iota.iter_mut().zip(0u64..).for_each(|(p, i)| *p = i);
            let gopts = opts.with_fill(u64::MAX);
            let at = crate::gather::drive::drive_alloc(
                op,
                planner,
                &TensorView::new(&iota, data_shape)?,
                indices,
                &gopts,
            )?;
            let g = grad.try_to_vec(op, "grad")?;
            let n = g.len();
            let flat_opts = sopts
                .axis(0)
                .index_policy(IndexPolicy::new(NegativeIndices::Error, OutOfRange::Skip));
            let mut flat = TensorViewMut::new(&mut out, &[numel])?;
            crate::scatter_elements_into(
                &mut flat,
                &TensorView::new(at.as_slice(), &[n])?,
                &TensorView::new(&g, &[n])?,
                &flat_opts,
            )
        }
    }
    .map_err(|e| e.with_op(op))?;
    Tensor::from_vec(out, data_shape)
}
