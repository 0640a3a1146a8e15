//! Destination ranges: every plan the element kernels do not take (ScatterND, ScatterUpdate,
//! strided views). Tasks own contiguous buffer ranges of the destination and apply the
//! clipped part of every run that falls in their range, in index order.

use crate::dtype::Element;
use crate::exec::Ctx;
use crate::exec::tuning::{RANGE_STREAM_MIN_BYTES, TILE_BYTES, TUPLE_LOOKAHEAD, line_cells};
use crate::kernels::{DestPtr, combine_slices};
use crate::reduce::Combiner;
use crate::shape::{Odometer, part};
use crate::view::elems::Elems;

/// A generic validated plan, flattened for [`ranges`]: the same walk as the sequential
/// engine, with positions relative to absolute buffer positions.
#[derive(Debug)]
pub(crate) struct RangeJob<'a, T> {
    pub(crate) outer_shape: &'a [usize],
    pub(crate) dest_outer: &'a [isize],
    pub(crate) upd_outer: &'a [isize],
    pub(crate) tuple_shape: &'a [usize],
    pub(crate) upd_tuple: &'a [isize],
    /// Destination offset of each tuple relative to its outer block (`skip` = dropped).
    pub(crate) resolved: &'a [isize],
    pub(crate) skip: isize,
    /// Lowest and highest non-skipped entry of `resolved` ([`rel_range`]), computed once per
    /// call rather than once per task.
    pub(crate) rel_range: Option<(isize, isize)>,
    /// Runs inside one slice: `run_len` cells contiguous in both operands, repeated over
    /// `run_shape` with these strides.
    pub(crate) run_len: usize,
    pub(crate) run_shape: &'a [usize],
    pub(crate) run_dest: &'a [isize],
    pub(crate) run_upd: &'a [isize],
    pub(crate) run_count: usize,
    /// Lowest and highest destination offset of a slice's cells relative to its start.
    pub(crate) slice_lo: isize,
    pub(crate) slice_hi: isize,
    /// Buffer positions of the destination's and the updates' origins.
    pub(crate) dest_base: isize,
    pub(crate) upd_base: isize,
    /// Destination buffer positions `[span_lo, span_hi]` reached by the destination view.
    pub(crate) span_lo: usize,
    pub(crate) span_hi: usize,
    /// The updates' buffer: its runs are read where they lie (a view with gaps included).
    pub(crate) upd: Elems<'a, T>,
    /// The copy source: `src[j]` becomes buffer position `span_lo + j` (contiguous views only).
    pub(crate) src: Option<&'a [T]>,
    pub(crate) fill: Option<T>,
}

impl<T> RangeJob<'_, T> {
    /// Calls `f(dest_pos, upd_pos, len)` for the part inside `[lo, hi)` of every run, in
    /// application order.
    ///
    /// `ahead(pos)` is called with the first destination position of the slice
    /// [`TUPLE_LOOKAHEAD`] tuples later, when it lies in `[lo, hi)`, so the caller can
    /// prefetch it: the slices of a large scatter land on random, long-evicted lines.
    fn walk_owned(
        &self,
        lo: isize,
        hi: isize,
        mut f: impl FnMut(usize, usize, usize),
        mut ahead: impl FnMut(usize),
    ) {
        let Some((rmin, rmax)) = self.rel_range.filter(|_| self.run_count > 0) else {
            return; // no runs, no tuples, or every tuple dropped
        };
        let outer_n = crate::shape::sat_product(self.outer_shape);
        let mut outer = Odometer::new(
            self.outer_shape,
            [self.dest_outer, self.upd_outer],
            [self.dest_base, self.upd_base],
            outer_n,
        );
        while let Some([d_outer, u_outer]) = outer.next_offsets() {
            if d_outer + rmin + self.slice_lo >= hi || d_outer + rmax + self.slice_hi < lo {
                continue; // no tuple of this outer block reaches [lo, hi)
            }
            let mut tuples = Odometer::new(
                self.tuple_shape,
                [self.upd_tuple],
                [u_outer],
                self.resolved.len(),
            );
            for (t, &rel) in self.resolved.iter().enumerate() {
                let Some([u_tuple]) = tuples.next_offsets() else {
                    break;
                };
                if let Some(&next) = self.resolved.get(t + TUPLE_LOOKAHEAD) {
                    let p = d_outer + next;
                    if next != self.skip && p >= lo && p < hi {
                        ahead(p as usize);
                    }
                }
                let d0 = d_outer + rel;
                if rel == self.skip || d0 + self.slice_lo >= hi || d0 + self.slice_hi < lo {
                    continue;
                }
                self.walk_tuple(d0, u_tuple, lo, hi, &mut f);
            }
        }
    }

    /// Calls `f(dest_pos, upd_pos, len)` for the part inside `[lo, hi)` of every run of the
    /// slice that starts at destination position `d0` with its updates at `u0`.
    #[inline]
    fn walk_tuple(
        &self,
        d0: isize,
        u0: isize,
        lo: isize,
        hi: isize,
        f: &mut impl FnMut(usize, usize, usize),
    ) {
        let run = self.run_len as isize;
        let mut clip = |d: isize, u: isize| {
            let (a, b) = (d.max(lo), (d + run).min(hi));
            if a < b {
                f(a as usize, (u + (a - d)) as usize, (b - a) as usize);
            }
        };
        if self.run_count == 1 {
            clip(d0, u0); // the whole slice is one run (the common case)
            return;
        }
        let mut inner = Odometer::new(
            self.run_shape,
            [self.run_dest, self.run_upd],
            [d0, u0],
            self.run_count,
        );
        while let Some([d, u]) = inner.next_offsets() {
            clip(d, u);
        }
    }
}

/// The lowest and highest entry of `resolved` other than `skip`; `None` when there is none.
pub(crate) fn rel_range(resolved: &[isize], skip: isize) -> Option<(isize, isize)> {
    let mut kept = resolved.iter().copied().filter(|&r| r != skip);
    let first = kept.next()?;
    Some(kept.fold((first, first), |(lo, hi), r| (lo.min(r), hi.max(r))))
}

/// Runs a generic validated plan with destination-range tasks.
pub(crate) fn ranges<T: Element, C: Combiner<T>>(
    job: &RangeJob<'_, T>,
    dest: DestPtr<'_, T>,
    cx: Ctx,
) {
    let threads = cx.threads;
    let total = job.span_hi + 1 - job.span_lo;
    let size = std::mem::size_of::<T>().max(1);
    let outer_n = crate::shape::sat_product(job.outer_shape);
    let bytes = total
        .saturating_mul(size)
        .saturating_add(job.upd.len() * size);
    // Many outer blocks: tasks skip foreign blocks cheaply, so cut finely (tiles that stay in
    // cache between the fused copy and the updates). One outer block: every task scans all
    // tuples, so use one task per thread.
    let tasks = if outer_n >= 4 * threads {
        cx.tasks(bytes, 4)
            .max(if threads > 1 {
                (total * size) / TILE_BYTES
            } else {
                1
            })
            .min(outer_n)
    } else {
        cx.tasks(bytes, 1)
    }
    .max(1);
    let line = line_cells::<T>();
    let level = cx.level;
    cx.run(tasks, |t| {
        let (a, b) = part(total, tasks, t, line);
        if a >= b {
            return;
        }
        let (lo, hi) = (job.span_lo + a, job.span_lo + b);
        if let Some(src) = job.src {
            if (b - a) * size >= RANGE_STREAM_MIN_BYTES {
                // At this size the streamed copy (no read-for-ownership of its lines) measured
                // faster than the cached one ([`RANGE_STREAM_MIN_BYTES`]); the fence orders
                // it before the slices below read the streamed cells.
                // SAFETY: [lo, hi) is inside the destination span and owned by task t.
                unsafe { dest.stream_in(level, lo, &src[a..b]) };
                crate::kernels::stream_fence();
            } else {
                // SAFETY: as above.
                unsafe { dest.copy_in(lo, &src[a..b]) };
            }
        }
        let (lo, hi) = (lo as isize, hi as isize);
        let run_bytes = job.run_len * size;
        let ahead = |d: usize| crate::kernels::prefetch(dest.addr_at(d), run_bytes);
        if let Some(id) = job.fill {
            let fill = |d, _, len| {
                // SAFETY: the clipped run is inside [lo, hi), owned by this task, and inside
                // the destination view (proven by the view checks and the index pass).
                unsafe { dest.slice_mut(d, len) }.fill(id);
            };
            job.walk_owned(lo, hi, fill, ahead);
        }
        let apply = |d, u: usize, len| {
            // SAFETY: as above; the cells are initialised (copied above or by the caller).
            let dst = unsafe { dest.slice_mut(d, len) };
            // SAFETY: a clipped run of the updates: `len` cells contiguous in the updates
            // view at an in-shape coordinate (the plan's runs), all of them its elements.
            combine_slices::<T, C>(dst, unsafe { job.upd.run(u, len) });
        };
        job.walk_owned(lo, hi, apply, ahead);
    });
}
