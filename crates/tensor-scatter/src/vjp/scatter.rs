//! Vector-Jacobian products (backward passes) of the three scatters: given the forward's
//! inputs and the gradient `grad` of a loss with respect to its output, the gradients with
//! respect to `data` and `updates`.
//!
//! The index pass of the forward gives every update element its destination cell (or none,
//! when its index was skipped); the updates reaching one cell arrive in row-major order of
//! `updates`, the forward's fold order. Each rule is then per cell, `g` being the cell's
//! gradient and `data`'s value, when `include_self`, the first member of the fold:
//!
//! | reduction | each update | data (a targeted cell) |
//! |---|---|---|
//! | none | `g` to the last (it won), 0 to the others | 0 (overwritten) |
//! | add / sub | `g` / `-g` | `g` with include_self, else 0 |
//! | mean | `g / count` (data counted with include_self) | `g / count` with include_self, else 0 |
//! | mul | `g` times the product of the fold's other members, never a division | the same |
//! | min / max | `g` split evenly among the members equal to the result (NaN equal to NaN), or all to the first of them ([`Ties::First`]) | the same |
//!
//! Untargeted cells pass `g` through. Add, sub and mean are linear: each update's gradient
//! is a per-cell table read by the mirror gather (parallel, as fast as a gather), the counts
//! a scatter-add of ones. The others run one serial pass in index order over a table of
//! destinations. Either way the gradients are bit-identical for any thread count.

use crate::dtype::Reduction;
use crate::error::{Error, Result};
use crate::gather::{GatherOptions, GatherOutOfRange};
use crate::index::{IndexInt, OutOfRange};
use crate::scatter::plan::{Planner, Runs, for_each_run, resolve_indices};
use crate::scatter::{ScatterOptions, elements, nd, update};
use crate::segment::{Float, Real, Ties, filled, same, share};
use crate::view::{Layout, Tensor, TensorView, TensorViewMut};

/// The gradients of a scatter.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ScatterGrads<T> {
    /// With respect to `data` (its shape).
    pub data: Tensor<T>,
    /// With respect to `updates` (its shape; 0 where an update was skipped or, with
    /// [`ScatterOptions::updates_window`], outside the window read).
    pub updates: Tensor<T>,
}

/// The backward of [`scatter_elements`](crate::scatter_elements) (and its `_into` / `_out`
/// forms): `grad` is the gradient with respect to the forward's output, the other arguments
/// and `opts` the forward's (plus [`ScatterOptions::ties`]).
///
/// ```
/// use tensor_scatter::{scatter_elements_vjp, Reduction, ScatterOptions, TensorView};
/// let data = TensorView::new(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
/// let indices = TensorView::new(&[0i64, 2, 0], &[3]).unwrap();
/// let updates = TensorView::new(&[4.0f32, 5.0, 4.0], &[3]).unwrap();
/// let grad = TensorView::new(&[6.0f32, 7.0, 8.0], &[3]).unwrap();
/// // Cell 0's maximum 4 is reached by two updates: they split its gradient.
/// let opts = ScatterOptions::new().reduction(Reduction::Max);
/// let g = scatter_elements_vjp(&grad, &data, &indices, &updates, &opts).unwrap();
/// assert_eq!(g.updates.as_slice(), &[3.0, 8.0, 3.0]);
/// assert_eq!(g.data.as_slice(), &[0.0, 7.0, 0.0]);
/// // With `none` the last write wins and the overwritten data cell gets nothing.
/// let g = scatter_elements_vjp(&grad, &data, &indices, &updates, &ScatterOptions::new()).unwrap();
/// assert_eq!(g.updates.as_slice(), &[0.0, 8.0, 6.0]);
/// assert_eq!(g.data.as_slice(), &[0.0, 7.0, 0.0]);
/// ```
///
/// # Errors
/// Those of the forward (naming `scatter_elements_vjp`), plus a `grad` not shaped as `data`.
pub fn scatter_elements_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<ScatterGrads<T>> {
    const OP: &str = "scatter_elements_vjp";
    let window = elements::window(updates, &indices.layout.shape, opts);
    let g = vjp(
        OP,
        (
            elements::plan,
            crate::gather_elements,
            crate::scatter_elements_into,
        ),
        grad,
        data,
        indices,
        &window,
        opts,
    )?;
    if window.layout.shape == updates.layout.shape {
        return Ok(g);
    }
    // The elements outside the window were never read: their gradient is 0.
    let mut full = filled(OP, "updates", updates.layout.numel, T::default())?;
    let strides = crate::shape::contiguous_strides(&updates.layout.shape);
    let inner = TensorView::new(g.updates.as_slice(), &window.layout.shape)?;
    TensorViewMut::with_strides(&mut full, 0, &window.layout.shape, &strides)?.copy_from(&inner);
    Ok(ScatterGrads {
        data: g.data,
        updates: Tensor::from_vec(full, &updates.layout.shape)?,
    })
}

/// The backward of [`scatter_nd`](crate::scatter_nd) (see [`scatter_elements_vjp`]).
///
/// # Errors
/// As [`scatter_elements_vjp`] (naming `scatter_nd_vjp`).
pub fn scatter_nd_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<ScatterGrads<T>> {
    vjp(
        "scatter_nd_vjp",
        (nd::plan, crate::gather_nd, crate::scatter_nd_into),
        grad,
        data,
        indices,
        updates,
        opts,
    )
}

/// The backward of [`scatter_update`](crate::scatter_update) (see [`scatter_elements_vjp`]).
///
/// # Errors
/// As [`scatter_elements_vjp`] (naming `scatter_update_vjp`).
pub fn scatter_update_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<ScatterGrads<T>> {
    vjp(
        "scatter_update_vjp",
        (update::plan, crate::gather, crate::scatter_update_into),
        grad,
        data,
        indices,
        updates,
        opts,
    )
}

/// No destination: the update's index was skipped.
const NONE: usize = usize::MAX;

/// The gather that reads what a scatter writes (same indices, same shapes).
type Mirror<T, I> =
    fn(&TensorView<'_, T>, &TensorView<'_, I>, &GatherOptions<T>) -> Result<Tensor<T>>;

/// The scatter itself, in place, on counts.
type CountInto<I> = fn(
    &mut TensorViewMut<'_, u64>,
    &TensorView<'_, I>,
    &TensorView<'_, u64>,
    &ScatterOptions,
) -> Result<()>;

fn vjp<T: Float, I: IndexInt>(
    op: &'static str,
    (planner, mirror, count_into): (Planner, Mirror<T, I>, CountInto<I>),
    grad: &TensorView<'_, T>,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<ScatterGrads<T>> {
    let (dshape, ushape) = (&data.layout.shape, &updates.layout.shape);
    let dl = Layout::contiguous_unchecked(dshape, data.layout.numel);
    let ul = Layout::contiguous_unchecked(ushape, updates.layout.numel);
    let plan = planner(&dl, &indices.layout, &ul, opts).map_err(|e| e.with_op(op))?;
    if grad.layout.shape != *dshape {
        return Err(Error::shape(
            op,
            "grad",
            format!("{dshape:?} (data's shape)"),
            &grad.layout.shape,
        ));
    }
    if matches!(
        opts.reduction,
        Reduction::Add | Reduction::Sub | Reduction::Mean
    ) {
        return linear(op, (mirror, count_into), grad, indices, ushape, opts);
    }
    // The destination of every update element, in row-major order of `updates`. Tuples
    // without components address one cell each and are never skipped: with no update element
    // their (unbounded) count is not materialised, as in the forward.
    let mut dest = filled(op, "updates", ul.numel, NONE)?;
    if !plan.comps.is_empty() || ul.numel > 0 {
        let resolved =
            resolve_indices(&plan, indices, opts.index_policy).map_err(|e| e.with_op(op))?;
        let runs = Runs::new(&plan.slice_shape, &plan.dest_slice, &plan.upd_slice);
        for_each_run(&plan, &runs, &resolved, 0, 0, |d, u, len| {
            for (i, slot) in dest[u..u + len].iter_mut().enumerate() {
                *slot = d + i;
            }
        });
    }
    let mut gd = grad.try_to_vec(op, "grad")?;
    let mut gu = filled(op, "updates", ul.numel, T::default())?;
    let r = opts.reduction;
    let s = opts.include_self && r != Reduction::None;
    let zero = T::default();
    match r {
        Reduction::None => {
            // The last update at a cell won; walking backwards it is the first one seen.
            let mut won = filled(op, "data", dl.numel, false)?;
            for (k, &c) in dest.iter().enumerate().rev() {
                if c != NONE && !won[c] {
                    won[c] = true;
                    gu[k] = std::mem::replace(&mut gd[c], zero);
                }
            }
        }
        Reduction::Mul => {
            let hit = reached(op, &dest, dl.numel)?;
            let dv = data.try_to_vec(op, "data")?;
            let uv = updates.try_to_vec(op, "updates")?;
            let one = T::Acc::count(1);
            // `before[k]`: the fold up to update k (data's value first with include_self).
            let mut run: Vec<T::Acc> = if s {
                dv.iter().map(|x| x.to_acc()).collect()
            } else {
                filled(op, "data", dl.numel, one)?
            };
            let mut before = filled(op, "updates", ul.numel, one)?;
            for (k, &c) in dest.iter().enumerate() {
                if c != NONE {
                    before[k] = run[c];
                    run[c] = run[c] * uv[k].to_acc();
                }
            }
            run.fill(one);
            for (k, &c) in dest.iter().enumerate().rev() {
                if c != NONE {
                    gu[k] = T::from_acc(before[k] * run[c] * gd[c].to_acc());
                    run[c] = run[c] * uv[k].to_acc();
                }
            }
            for (c, h) in hit.iter().enumerate() {
                if *h {
                    gd[c] = if s {
                        T::from_acc(run[c] * gd[c].to_acc())
                    } else {
                        zero
                    };
                }
            }
        }
        Reduction::Add | Reduction::Sub | Reduction::Mean => unreachable!("the linear path"),
        Reduction::Min | Reduction::Max => {
            let hit = reached(op, &dest, dl.numel)?;
            let dv = data.try_to_vec(op, "data")?;
            let uv = updates.try_to_vec(op, "updates")?;
            let f = |a: T, u: T| {
                if r == Reduction::Min {
                    a.reduce_min(u)
                } else {
                    a.reduce_max(u)
                }
            };
            let mut best = if s {
                dv.clone()
            } else {
                filled(op, "data", dl.numel, T::identity(r))?
            };
            for (k, &c) in dest.iter().enumerate() {
                if c != NONE {
                    best[c] = f(best[c], uv[k]);
                }
            }
            // How many members equal the result; data's value is the first member with
            // include_self. With Ties::First the first of them takes the whole gradient.
            let first = opts.ties == Ties::First;
            let mut ties = filled(op, "data", dl.numel, 0u64)?;
            for c in (0..dl.numel).filter(|&c| hit[c] && s && same(dv[c], best[c])) {
                ties[c] = 1;
            }
            for (k, &c) in dest.iter().enumerate() {
                if c != NONE && same(uv[k], best[c]) {
                    if first && ties[c] == 0 {
                        gu[k] = gd[c];
                    }
                    ties[c] += 1;
                }
            }
            if !first {
                for (k, &c) in dest.iter().enumerate() {
                    if c != NONE && same(uv[k], best[c]) {
                        gu[k] = share(gd[c], ties[c]);
                    }
                }
            }
            for c in (0..dl.numel).filter(|&c| hit[c]) {
                gd[c] = match s && same(dv[c], best[c]) {
                    false => zero,
                    true if first => gd[c],
                    true => share(gd[c], ties[c]),
                };
            }
        }
    }
    Ok(ScatterGrads {
        data: Tensor::from_vec(gd, dshape)?,
        updates: Tensor::from_vec(gu, ushape)?,
    })
}

/// Add, sub and mean: every update reads a per-cell table (`g`, `-g`, or `g / count`), 0
/// where its index was skipped: the mirror gather of the table, parallel, with the scatter's
/// policy (skip reads as fill). `data` passes `g` through where nothing landed; where updates
/// landed it gets the table's value with include_self (mean: `g / count`), else 0. The
/// counts, where needed, are the scatter-add of a broadcast 1 (u64).
fn linear<T: Float, I: IndexInt>(
    op: &'static str,
    (mirror, count_into): (Mirror<T, I>, CountInto<I>),
    grad: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    ushape: &[usize],
    opts: &ScatterOptions,
) -> Result<ScatterGrads<T>> {
    let dshape = &grad.layout.shape;
    let mut gd = grad.try_to_vec(op, "grad")?;
    let (r, s) = (opts.reduction, opts.include_self);
    let counts = if r == Reduction::Mean || !s {
        let mut c = filled(op, "data", gd.len(), 0u64)?;
        let ones = TensorView::with_strides(&[1u64], 0, ushape, &vec![0; ushape.len()])?;
        let copts = opts.reduction(Reduction::Add).include_self(true);
        count_into(
            &mut TensorViewMut::new(&mut c, dshape)?,
            indices,
            &ones,
            &copts,
        )
        .map_err(|e| e.with_op(op))?;
        Some(c)
    } else {
        None
    };
    // The per-cell table the updates read: `g` itself for add, else a scaled copy.
    let scaled: Option<Vec<T>> = match (r, &counts) {
        (Reduction::Sub, _) => {
            let mut v = filled(op, "grad", gd.len(), T::default())?;
            v.iter_mut().zip(&gd).for_each(|(n, &g)| *n = negate(g));
            Some(v)
        }
        (Reduction::Mean, Some(c)) => {
            let mut v = filled(op, "grad", gd.len(), T::default())?;
            for ((t, &g), &n) in v.iter_mut().zip(&gd).zip(c) {
                if n > 0 {
                    *t = share(g, n + u64::from(s));
                }
            }
            Some(v)
        }
        _ => None,
    };
    let table = scaled.as_deref().unwrap_or(&gd);
    let policy = opts.index_policy;
    let gopts = GatherOptions::new()
        .axis(opts.axis)
        .negative(policy.negative)
        .out_of_range(match policy.out_of_range {
            OutOfRange::Error => GatherOutOfRange::Error,
            OutOfRange::Clamp => GatherOutOfRange::Clamp,
            OutOfRange::Skip => GatherOutOfRange::Fill,
        })
        .par(opts.par);
    let gu =
        mirror(&TensorView::new(table, dshape)?, indices, &gopts).map_err(|e| e.with_op(op))?;
    debug_assert_eq!(
        gu.shape(),
        ushape,
        "the mirror gather's output is updates' shape"
    );
    // Where updates landed: 0 without include_self, the mean's share with it.
    if let Some(c) = &counts {
        for (i, d) in gd.iter_mut().enumerate() {
            if c[i] > 0 {
                *d = match (s, &scaled) {
                    (false, _) => T::default(),
                    (true, Some(v)) if r == Reduction::Mean => v[i],
                    (true, _) => *d,
                };
            }
        }
    }
    Ok(ScatterGrads {
        data: Tensor::from_vec(gd, dshape)?,
        updates: gu,
    })
}

/// The cells some update reached.
fn reached(op: &'static str, dest: &[usize], cells: usize) -> Result<Vec<bool>> {
    let mut hit = filled(op, "data", cells, false)?;
    dest.iter()
        .filter(|&&c| c != NONE)
        .for_each(|&c| hit[c] = true);
    Ok(hit)
}

/// `-g`, exact.
fn negate<T: Float>(g: T) -> T {
    T::from_acc(T::Acc::ZERO - g.to_acc())
}
