//! The shape-only plan of a scatter call, and the sequential index pass over it.

use crate::error::{Error, Result};
use crate::index::{IndexInt, IndexPolicy, Resolved, resolve};
use crate::shape::Odometer;
use crate::view::{Layout, TensorView};

use super::ScatterOptions;

/// One index component: which data dimension it addresses.
#[derive(Clone, Debug)]
pub(crate) struct Component {
    pub(crate) dim: usize,
    pub(crate) size: usize,
    pub(crate) dest_stride: isize,
}

/// A contiguous-or-strided walk over a slice, split into runs contiguous in both operands.
#[derive(Clone, Debug)]
pub(crate) struct Runs {
    /// Elements per run (`dest` and `updates` both have stride 1 inside a run).
    pub(super) len: usize,
    /// The dims iterated around runs, with their strides.
    pub(super) shape: Vec<usize>,
    pub(super) dest: Vec<isize>,
    pub(super) upd: Vec<isize>,
    pub(super) count: usize,
}

impl Runs {
    /// Collapses the slice dims, then peels off the innermost dim as a run when both operands
    /// are contiguous along it.
    pub(crate) fn new(shape: &[usize], dest: &[isize], upd: &[isize]) -> Runs {
        let mut dims: Vec<(usize, isize, isize)> = Vec::new();
        for ((&n, &d), &u) in shape.iter().zip(dest).zip(upd) {
            if n == 1 {
                continue;
            }
            if let Some(last) = dims.last_mut() {
                // Merge into the previous (outer) dim when this one continues it exactly.
                if last.1 == d.wrapping_mul(n as isize) && last.2 == u.wrapping_mul(n as isize) {
                    *last = (last.0.saturating_mul(n), d, u);
                    continue;
                }
            }
            dims.push((n, d, u));
        }
        let count = crate::shape::sat_product(shape);
        let mut len = 1;
        if let Some(&(n, 1, 1)) = dims.last() {
            len = n;
            dims.pop();
        }
        Runs {
            len,
            shape: dims.iter().map(|d| d.0).collect(),
            dest: dims.iter().map(|d| d.1).collect(),
            upd: dims.iter().map(|d| d.2).collect(),
            count: count.checked_div(len).unwrap_or(0),
        }
    }
}

/// The shape-only plan of one scatter call (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) op: &'static str,
    pub(crate) outer_shape: Vec<usize>,
    pub(crate) dest_outer: Vec<isize>,
    pub(crate) upd_outer: Vec<isize>,
    pub(crate) tuple_shape: Vec<usize>,
    pub(crate) idx_tuple: Vec<isize>,
    pub(crate) upd_tuple: Vec<isize>,
    /// Destination stride of each tuple dim that also addresses data (ScatterElements' non-axis
    /// dims); zero elsewhere.
    pub(crate) dest_tuple: Vec<isize>,
    pub(crate) comps: Vec<Component>,
    /// Stride between the components of one tuple in `indices`.
    pub(crate) comp_stride: isize,
    /// Whether an error position names the component too (ScatterND).
    pub(crate) nd_position: bool,
    pub(crate) slice_shape: Vec<usize>,
    pub(crate) dest_slice: Vec<isize>,
    pub(crate) upd_slice: Vec<isize>,
    /// `Some(axis)` for `scatter_elements` (eligible for the column-tile kernel).
    pub(crate) elem_axis: Option<usize>,
}

/// Marks a dropped tuple in the resolved-offset buffer.
pub(super) const SKIP: isize = isize::MIN;

/// The index pass: reads every index once, in row-major order, and returns the destination
/// offset of each tuple (relative to the destination's origin), or the first error.
pub(crate) fn resolve_indices<I: IndexInt>(
    plan: &Plan,
    indices: &TensorView<'_, I>,
    policy: IndexPolicy,
) -> Result<Vec<isize>> {
    let n = crate::shape::sat_product(&plan.tuple_shape);
    // A broadcast `indices` view can hold more tuples than memory: an error, not an abort.
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| {
        Error::out_of_memory(
            plan.op,
            "indices",
            n.saturating_mul(std::mem::size_of::<isize>()),
        )
    })?;
    // The reads below are at positions of this walk: each must be one of the view's elements.
    let walk = plan
        .tuple_shape
        .iter()
        .copied()
        .zip(plan.idx_tuple.iter().copied());
    if !indices.walks_within(walk.chain([(plan.comps.len(), plan.comp_stride)])) {
        return Err(Error::invalid(
            plan.op,
            "indices",
            "a plan made for another layout of indices (a bug: please report it)",
        ));
    }
    let mut odo = Odometer::new(
        &plan.tuple_shape,
        [&plan.idx_tuple, &plan.dest_tuple],
        [indices.layout.offset as isize, 0],
        n,
    );
    let mut failure = None;
    while failure.is_none()
        && odo.next_with_coord(|coord, [idx_off, dest_static]| {
            let mut rel = dest_static;
            let mut skip = false;
            for (j, c) in plan.comps.iter().enumerate() {
                let pos = idx_off + j as isize * plan.comp_stride;
                // SAFETY: `pos` is the position of component `j` of the tuple at `coord`, a
                // step of the walk checked above, so one of the view's elements.
                let value = unsafe { indices.data.get(pos as usize) }.to_i128();
                match resolve(value, c.size, policy) {
                    // Wrapping: with an empty destination (a zero dim elsewhere) a stride
                    // and an accepted position can multiply past `isize::MAX`; only the
                    // index check matters then, and the offsets are never used.
                    Ok(Resolved::At(p)) => {
                        rel = rel.wrapping_add((p as isize).wrapping_mul(c.dest_stride))
                    }
                    Ok(Resolved::Skip) => skip = true,
                    Err(fault) => {
                        let mut position = coord.to_vec();
                        if plan.nd_position {
                            position.push(j);
                        }
                        failure = Some(crate::check::index_error(
                            plan.op, fault, position, value, c.dim, c.size,
                        ));
                        return;
                    }
                }
            }
            out.push(if skip { SKIP } else { rel });
        })
    {}
    match failure {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Calls `f(dest_pos, upd_pos, len)` for every run of every non-skipped tuple, in application
/// order. Positions are absolute buffer positions.
pub(crate) fn for_each_run(
    plan: &Plan,
    runs: &Runs,
    resolved: &[isize],
    dest_base: isize,
    upd_base: isize,
    mut f: impl FnMut(usize, usize, usize),
) {
    if runs.count == 0 || resolved.is_empty() {
        return;
    }
    let outer_n = crate::shape::sat_product(&plan.outer_shape);
    let mut outer = Odometer::new(
        &plan.outer_shape,
        [&plan.dest_outer, &plan.upd_outer],
        [dest_base, upd_base],
        outer_n,
    );
    while let Some([d_outer, u_outer]) = outer.next_offsets() {
        let mut tuples = Odometer::new(
            &plan.tuple_shape,
            [&plan.upd_tuple],
            [u_outer],
            resolved.len(),
        );
        for &rel in resolved {
            let Some([u_tuple]) = tuples.next_offsets() else {
                break;
            };
            if rel == SKIP {
                continue;
            }
            let d0 = d_outer + rel;
            let mut inner = Odometer::new(
                &runs.shape,
                [&runs.dest, &runs.upd],
                [d0, u_tuple],
                runs.count,
            );
            while let Some([d, u]) = inner.next_offsets() {
                f(d as usize, u as usize, runs.len);
            }
        }
    }
}

/// Signature of an operator's shape-only planner: destination, indices and updates layouts.
pub(crate) type Planner = fn(&Layout, &Layout, &Layout, &ScatterOptions) -> Result<Plan>;
