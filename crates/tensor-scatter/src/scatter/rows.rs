//! Scatters whose work is rows: every index moves a run of `k` contiguous cells. ScatterUpdate's
//! slices, ScatterND's with one component, and ScatterElements with an index that is constant
//! along the dims after the axis (PyTorch's `index.view(-1, 1).expand_as(src)`, a broadcast
//! view or the same values made contiguous) are the same work, so they run on the same kernel:
//! the row fold the segment family uses ([`crate::kernels::segment::fold`]), which groups the
//! updates by destination row and folds each row once, in index order, from `data`'s row (or
//! the identity without `include_self`). That is the element-wise fold's order, so the bits are
//! the same; rows no index reaches keep `data`'s bits.
//!
//! [`plan`] decides from shapes and options alone; [`prepare`] reads and checks the indices
//! (our index policy, our errors) before anything is written; [`run`] folds.

use std::borrow::Cow;

use crate::check::{
    after_axis, constant_rows, first_bad, fresh_vec, index_error, range_and_order, unravel,
};
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::exec::tuning::{ROWS_MIN_DENSITY, ROWS_MIN_DENSITY_COPY, ROWS_MIN_WIDTH};
use crate::index::{Fault, IndexInt, IndexPolicy, resolve, resolve_accepted};
use crate::kernels::Rows;
use crate::kernels::segment::fold::{self, Problem, Source, Start};
use crate::kernels::segment::{Dims, Lanes, Mode, read_walk};
use crate::reduce::Reduction;
use crate::shape::sat_product;
use crate::view::{Layout, TensorView};

use super::ScatterOptions;
use super::plan::Plan;
use super::sequential::widens;
use crate::view::is_contiguous;

/// A scatter recognised as rows, from shapes alone.
#[derive(Debug)]
pub(super) struct RowPlan {
    /// `[b, e, k]` of `updates`; the destination is `[b, n, k]`.
    dims: Dims,
    mode: Mode,
    /// The walk over `indices` that reads each lane's `e` values (lane-major).
    walk_shape: Vec<usize>,
    walk_strides: Vec<isize>,
    /// For each dim of `indices`, the walk dim its coordinate comes from (0 for the others).
    coord: Vec<Option<usize>>,
    /// ScatterND's error positions name the component too.
    nd_position: bool,
    /// `(extent, stride)` of the dims after the axis when `indices` steps along them (a
    /// contiguous expanded index): its values must then be checked to be constant along them.
    inner: Option<(usize, isize)>,
    /// The data dimension the index addresses.
    dim: usize,
}

/// A row scatter whose indices were read and checked.
pub(super) struct RowWork<'a> {
    dims: Dims,
    lanes: Lanes<'a>,
    sorted: bool,
}

/// Whether the row fold takes this reduction for `T`: not `none` or `sub` (the fold has
/// neither), and f16/bf16 sums, products and means only with wide accumulation (the fold
/// accumulates them in f32 and rounds once).
fn takes<T: Element>(opts: &ScatterOptions) -> bool {
    match opts.reduction {
        Reduction::Min | Reduction::Max => true,
        Reduction::Add | Reduction::Mul | Reduction::Mean => {
            T::DTYPE == <T::Wide as Element>::DTYPE || widens::<T>(opts)
        }
        Reduction::None | Reduction::Sub => false,
    }
}

/// The row plan of a scatter whose destination and updates are contiguous and whose every
/// index moves a run of at least [`ROWS_MIN_WIDTH`] cells, or `None`. The fold visits every
/// destination row, so sparse updates go to the slice kernel (which touches only the rows
/// they reach), unless the alternative is the one-thread sequential engine (mean, wide
/// f16/bf16 sums): in place from [`ROWS_MIN_DENSITY`] updates per destination row, and from
/// [`ROWS_MIN_DENSITY_COPY`] when `data` is copied (`copies`), which the slice kernel does with
/// streaming stores.
pub(super) fn plan<T: Element>(
    plan: &Plan,
    dest: &Layout,
    idx: &Layout,
    upd: &Layout,
    opts: &ScatterOptions,
    copies: bool,
) -> Option<RowPlan> {
    if !takes::<T>(opts) || plan.comps.len() != 1 || !is_contiguous(dest) || !is_contiguous(upd) {
        return None;
    }
    let rp = match plan.elem_axis {
        None => slice_rows(plan, dest),
        Some(axis) => element_rows(dest, idx, upd, axis),
    }?;
    let d = rp.dims;
    let empty = d.b == 0 || d.e == 0 || d.n == 0;
    let density = if copies {
        ROWS_MIN_DENSITY_COPY
    } else {
        ROWS_MIN_DENSITY
    };
    let dense = !super::strategy::fast_supported::<T>(opts) || d.e >= d.n.saturating_mul(density);
    (!empty && dense && d.k >= ROWS_MIN_WIDTH).then_some(rp)
}

/// ScatterUpdate and one-component ScatterND: `[b, n, k]` is `data.shape[..axis]`, the axis
/// and the slice; every outer coordinate shares the tuples' values.
fn slice_rows(plan: &Plan, dest: &Layout) -> Option<RowPlan> {
    let c = &plan.comps[0];
    let rank = dest.shape.len();
    let outer = plan.outer_shape.len();
    // The destination is `[outer.., dim, slice..]` in that order.
    if c.dim != outer || outer + 1 + plan.slice_shape.len() != rank {
        return None;
    }
    // Error positions: the tuple's coordinate (ScatterND's then names component 0).
    let coord = (0..plan.tuple_shape.len()).map(Some).collect();
    Some(RowPlan {
        dims: Dims {
            b: sat_product(&plan.outer_shape),
            e: sat_product(&plan.tuple_shape),
            k: sat_product(&plan.slice_shape),
            n: c.size,
        },
        mode: Mode::Shared,
        walk_shape: plan.tuple_shape.clone(),
        walk_strides: plan.idx_tuple.clone(),
        coord,
        nd_position: plan.nd_position,
        inner: None,
        dim: c.dim,
    })
}

/// ScatterElements whose `indices` has data's extent on every dim but the axis (and
/// `updates` its shape), broadcast or constant along the dims after the axis.
fn element_rows(dest: &Layout, idx: &Layout, upd: &Layout, axis: usize) -> Option<RowPlan> {
    let rank = dest.shape.len();
    let same = (0..rank).all(|d| d == axis || idx.shape[d] == dest.shape[d]);
    if !same || upd.shape != idx.shape {
        return None;
    }
    // The dims after the axis: broadcast (stride 0), or one run of whole elements.
    let inner = after_axis(&idx.shape, &idx.strides, axis)?;
    // Shared when no dim before the axis steps through the index.
    let per_outer = (0..axis).any(|d| idx.shape[d] > 1 && idx.strides[d] != 0);
    let (mode, lane_dims) = if per_outer {
        (Mode::PerOuter, (0..axis).collect::<Vec<_>>())
    } else {
        (Mode::Shared, vec![])
    };
    let mut walk_shape: Vec<usize> = lane_dims.iter().map(|&d| idx.shape[d]).collect();
    let mut walk_strides: Vec<isize> = lane_dims.iter().map(|&d| idx.strides[d]).collect();
    walk_shape.push(idx.shape[axis]);
    walk_strides.push(idx.strides[axis]);
    let coord = (0..rank)
        .map(|d| match d {
            d if d == axis => Some(lane_dims.len()),
            d if d < axis && per_outer => Some(d),
            _ => None,
        })
        .collect();
    Some(RowPlan {
        dims: Dims {
            b: sat_product(&dest.shape[..axis]),
            e: idx.shape[axis],
            k: sat_product(&dest.shape[axis + 1..]),
            n: dest.shape[axis],
        },
        mode,
        walk_shape,
        walk_strides,
        coord,
        nd_position: false,
        inner,
        dim: axis,
    })
}

/// Reads the indices along the row plan's walk and checks every value under the index policy
/// (the first refused one in row-major order is the error). `Ok(None)`: not rows after all
/// (a contiguous index that varies after the axis) or an update the policy skips; the caller
/// runs the other kernels, and nothing was written.
pub(super) fn prepare<'a, I: IndexInt>(
    plan: &Plan,
    rp: &RowPlan,
    indices: &TensorView<'a, I>,
    opts: &ScatterOptions,
    cx: Ctx,
) -> Result<Option<RowWork<'a>>> {
    let mut values = match rp.inner {
        // A contiguous expanded index: its rows' values, read in one pass that checks them.
        Some(inner) => {
            let (shape, strides) = (&rp.walk_shape, &rp.walk_strides);
            match constant_rows(indices, shape, strides, inner, cx, I::to_i64_sat) {
                Some(rows) => Cow::Owned(rows),
                None => return Ok(None),
            }
        }
        None => read_walk(
            plan.op,
            "indices",
            indices,
            &rp.walk_shape,
            &rp.walk_strides,
        )?,
    };
    let (n, e) = (rp.dims.n, rp.dims.e);
    // Every value a cell (what every policy accepts), and whether each lane is sorted: one
    // parallel read. Otherwise the policy's own pass names a refused value, and accepted
    // ones that are not cells (negative, clamped) are resolved.
    let (cells, mut sorted) = range_and_order(cx, &values, e, n);
    if !cells {
        let dims = [(rp.dim, n)];
        if let Some(bad) = first_bad(&values[..], &dims, opts.index_policy, cx) {
            return Err(error_at(plan.op, rp, &values, bad, opts.index_policy));
        }
        // Negative (wrapped) or clamped values become their cells, into a new buffer by the
        // threads; a skipped one is not a row.
        let (all, policy) = (&values[..], opts.index_policy);
        let resolved = fresh_vec(all.len(), std::mem::size_of_val(all), cx, |lo| {
            let mut p = lo;
            move || {
                p += 1;
                resolve_accepted(all[p - 1], n, policy).map(|c| c as i64)
            }
        });
        match resolved {
            Some(cells) => values = Cow::Owned(cells),
            None => return Ok(None),
        }
        sorted = range_and_order(cx, &values, e, n).1;
    }
    Ok(Some(RowWork {
        dims: rp.dims,
        lanes: Lanes {
            mode: rp.mode,
            values,
            len: e,
            narrow: None,
        },
        sorted,
    }))
}

/// The error for the value at walk position `bad`, at its coordinate in `indices`.
fn error_at(
    op: &'static str,
    rp: &RowPlan,
    values: &[i64],
    bad: usize,
    policy: IndexPolicy,
) -> Error {
    let walk = unravel(bad, &rp.walk_shape);
    let mut position: Vec<usize> = rp.coord.iter().map(|c| c.map_or(0, |w| walk[w])).collect();
    if rp.nd_position {
        position.push(0);
    }
    let value = i128::from(values[bad]);
    let fault = resolve(value, rp.dims.n, policy)
        .err()
        .unwrap_or(Fault::OutOfRange);
    index_error(op, fault, position, value, rp.dim, rp.dims.n)
}

/// Folds the rows of `upd` (contiguous `[b, e, k]`) into `out` (`[b, n, k]`): from `start`'s
/// values (`Start::Data`: `data`, for an output in other memory; `Start::Keep`: the output's
/// own, in place), every row no index reaches keeping them.
pub(super) fn run<T: Element>(
    op: &'static str,
    work: &RowWork<'_>,
    upd: &[T],
    out: Rows<'_, T>,
    start: Start<'_, T>,
    opts: &ScatterOptions,
    cx: Ctx,
) -> Result<()> {
    let problem = Problem {
        src: upd,
        dims: work.dims,
        mode: work.lanes.mode,
        reduce: opts.reduction,
        include_self: opts.include_self,
        start,
    };
    let source = Source::Index {
        lanes: &work.lanes,
        sorted: work.sorted,
    };
    fold::run(op, cx, &problem, &source, out, None)
}
