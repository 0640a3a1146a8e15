//! The parallel, destination-partitioned strategies (issue 3).
//!
//! * [`elements`]: `scatter_elements` on contiguous tensors collapsed to
//!   `(outer, axis, inner)`. Tasks own *column tiles* `(o, [i0, i1))` of the destination,
//!   sized so that the tile (all `n` rows of it) stays in L2 while the `k` update rows stream
//!   through; the copy of `data` for the out-of-place forms is fused into the tile.
//! * [`ranges`]: every other plan (ScatterND, ScatterUpdate, strided views). Tasks own
//!   contiguous *buffer ranges* of the destination and apply the clipped part of every run
//!   that falls in their range, in index order; the copy of `data` is fused per range.
//!
//! Every task applies the updates that hit its cells in row-major index order, so the result
//! equals the sequential fold bit for bit, whatever the number of tasks or threads.

use crate::dtype::Element;
use crate::index::{IndexInt, IndexPolicy, resolve_accepted};
use crate::kernels::{DestPtr, combine_slices};
use crate::par::{self, TILE_BYTES, line_cells};
use crate::reduce::Combiner;
use crate::shape::Odometer;

/// `[start, end)` of part `t` of `total` items cut into `parts`, boundaries rounded down to a
/// multiple of `align` (the last part ends at `total`).
pub(crate) fn split(total: usize, parts: usize, t: usize, align: usize) -> (usize, usize) {
    let at = |t: usize| {
        if t >= parts {
            return total;
        }
        let (q, r) = (total / parts, total % parts);
        let raw = q * t + t.min(r);
        raw - raw % align.max(1)
    };
    (at(t), at(t + 1))
}

/// `scatter_elements` geometry over contiguous tensors: destination `(outer, n, inner)`,
/// indices and updates `(outer, k, inner)`, at the given buffer offsets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ElemGeom {
    pub(crate) outer: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) inner: usize,
    pub(crate) dest_off: usize,
    pub(crate) idx_off: usize,
    pub(crate) upd_off: usize,
}

/// The element-scatter job: validated indices, updates, and the optional source of the copy
/// (`src[j]` becomes destination cell `dest_off + j`).
#[derive(Debug)]
pub(crate) struct ElemJob<'a, T, I> {
    pub(crate) g: ElemGeom,
    pub(crate) idx: &'a [I],
    pub(crate) upd: &'a [T],
    pub(crate) src: Option<&'a [T]>,
    pub(crate) policy: IndexPolicy,
    /// Starting value of every targeted cell when `include_self` is false.
    pub(crate) fill: Option<T>,
}

/// Runs an element scatter whose every index was accepted by the index pass.
pub(crate) fn elements<T: Element, I: IndexInt, C: Combiner<T>>(
    job: &ElemJob<'_, T, I>,
    dest: DestPtr<'_, T>,
    threads: usize,
) {
    let g = job.g;
    let size = std::mem::size_of::<T>().max(1);
    let line = line_cells::<T>();
    let width = if g.n.saturating_mul(g.inner).saturating_mul(size) <= TILE_BYTES {
        g.inner
    } else {
        (TILE_BYTES / g.n.saturating_mul(size) / line * line)
            .max(line)
            .min(g.inner)
    }
    .max(1);
    let per_o = g.inner.div_ceil(width);
    let tiles = g.outer * per_o;
    let bytes = (g.outer * g.n * g.inner)
        .saturating_mul(size)
        .saturating_add((g.outer * g.k * g.inner).saturating_mul(size + std::mem::size_of::<I>()));
    let tasks = par::task_count(threads, bytes, 4).min(tiles).max(1);
    par::run_tasks(threads, tasks, |t| {
        let (a, b) = split(tiles, tasks, t, 1);
        for tile in a..b {
            let o = tile / per_o;
            let i0 = (tile % per_o) * width;
            let i1 = (i0 + width).min(g.inner);
            // SAFETY: tile (o, [i0, i1)) is visited by exactly one task; see `elem_tile`.
            unsafe { elem_tile::<T, I, C>(job, dest, o, i0, i1) };
        }
    });
}

/// One column tile: copy (if asked), optional identity fill, then the fold in index order.
///
/// # Safety
/// `dest` covers the destination geometry `job.g` (cells `dest_off + (o*n + p)*inner + i`),
/// every index of `job.idx` in this tile was accepted for a dimension of `n` under
/// `job.policy`, and no other task touches columns `[i0, i1)` of outer block `o`.
unsafe fn elem_tile<T: Element, I: IndexInt, C: Combiner<T>>(
    job: &ElemJob<'_, T, I>,
    dest: DestPtr<'_, T>,
    o: usize,
    i0: usize,
    i1: usize,
) {
    let g = job.g;
    let w = i1 - i0;
    let block = o * g.n * g.inner; // relative start of outer block o
    let dbase = g.dest_off + block + i0;
    if let Some(src) = job.src {
        for p in 0..g.n {
            let rel = block + p * g.inner + i0;
            // SAFETY: row p of the tile lies in the destination and belongs to this task.
            unsafe { dest.copy_in(g.dest_off + rel, &src[rel..rel + w]) };
        }
    }
    let rows = |kk: usize| {
        let r = (o * g.k + kk) * g.inner + i0;
        (
            &job.idx[g.idx_off + r..g.idx_off + r + w],
            &job.upd[g.upd_off + r..g.upd_off + r + w],
        )
    };
    let n = g.n;
    if let Some(id) = job.fill {
        for kk in 0..g.k {
            let (irow, _) = rows(kk);
            for (j, x) in irow.iter().enumerate() {
                if let Some(p) = resolve_accepted(x.to_i64_sat(), n, job.policy) {
                    // SAFETY: p < n (accepted index), j < w: a cell of this tile.
                    unsafe { dest.set(dbase + p * g.inner + j, id) };
                }
            }
        }
    }
    for kk in 0..g.k {
        let (irow, urow) = rows(kk);
        for (j, (x, &u)) in irow.iter().zip(urow).enumerate() {
            if let Some(p) = resolve_accepted(x.to_i64_sat(), n, job.policy) {
                // SAFETY: p < n (accepted index), j < w: an initialised cell of this tile
                // (copied above or initialised by the caller), owned by this task.
                unsafe { dest.combine::<C>(dbase + p * g.inner + j, u) };
            }
        }
    }
}

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
    pub(crate) upd: &'a [T],
    /// The copy source: `src[j]` becomes buffer position `span_lo + j` (contiguous views only).
    pub(crate) src: Option<&'a [T]>,
    pub(crate) fill: Option<T>,
}

impl<T> RangeJob<'_, T> {
    /// Calls `f(dest_pos, upd_pos, len)` for the part inside `[lo, hi)` of every run, in
    /// application order.
    fn walk_owned(&self, lo: isize, hi: isize, mut f: impl FnMut(usize, usize, usize)) {
        if self.run_count == 0 || self.resolved.is_empty() {
            return;
        }
        let (mut rmin, mut rmax) = (isize::MAX, isize::MIN);
        for &r in self.resolved.iter().filter(|&&r| r != self.skip) {
            rmin = rmin.min(r);
            rmax = rmax.max(r);
        }
        if rmin > rmax {
            return; // every tuple was dropped
        }
        let outer_n: usize = self.outer_shape.iter().product();
        let mut outer = Odometer::new(
            self.outer_shape,
            [self.dest_outer, self.upd_outer],
            [self.dest_base, self.upd_base],
            outer_n,
        );
        let run = self.run_len as isize;
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
            for &rel in self.resolved {
                let Some([u_tuple]) = tuples.next_offsets() else {
                    break;
                };
                let d0 = d_outer + rel;
                if rel == self.skip || d0 + self.slice_lo >= hi || d0 + self.slice_hi < lo {
                    continue;
                }
                let mut inner = Odometer::new(
                    self.run_shape,
                    [self.run_dest, self.run_upd],
                    [d0, u_tuple],
                    self.run_count,
                );
                while let Some([d, u]) = inner.next_offsets() {
                    let (a, b) = (d.max(lo), (d + run).min(hi));
                    if a < b {
                        f(a as usize, (u + (a - d)) as usize, (b - a) as usize);
                    }
                }
            }
        }
    }
}

/// Runs a generic validated plan with destination-range tasks.
pub(crate) fn ranges<T: Element, C: Combiner<T>>(
    job: &RangeJob<'_, T>,
    dest: DestPtr<'_, T>,
    threads: usize,
) {
    let total = job.span_hi + 1 - job.span_lo;
    let size = std::mem::size_of::<T>().max(1);
    let outer_n: usize = job.outer_shape.iter().product();
    let bytes = total
        .saturating_mul(size)
        .saturating_add(job.upd.len() * size);
    // Many outer blocks: tasks skip foreign blocks cheaply, so cut finely (tiles that stay in
    // cache between the fused copy and the updates). One outer block: every task scans all
    // tuples, so use one task per thread.
    let tasks = if outer_n >= 4 * threads {
        par::task_count(threads, bytes, 4)
            .max(if threads > 1 {
                (total * size) / TILE_BYTES
            } else {
                1
            })
            .min(outer_n)
    } else {
        par::task_count(threads, bytes, 1)
    }
    .max(1);
    let line = line_cells::<T>();
    par::run_tasks(threads, tasks, |t| {
        let (a, b) = split(total, tasks, t, line);
        if a >= b {
            return;
        }
        let (lo, hi) = (job.span_lo + a, job.span_lo + b);
        if let Some(src) = job.src {
            // SAFETY: [lo, hi) is inside the destination span and owned by task t.
            unsafe { dest.copy_in(lo, &src[a..b]) };
        }
        let (lo, hi) = (lo as isize, hi as isize);
        if let Some(id) = job.fill {
            job.walk_owned(lo, hi, |d, _, len| {
                // SAFETY: the clipped run is inside [lo, hi), owned by this task, and inside
                // the destination view (proven by the view checks and the index pass).
                unsafe { dest.slice_mut(d, len) }.fill(id);
            });
        }
        job.walk_owned(lo, hi, |d, u, len| {
            // SAFETY: as above; the cells are initialised (copied above or by the caller).
            let dst = unsafe { dest.slice_mut(d, len) };
            combine_slices::<T, C>(dst, &job.upd[u..u + len]);
        });
    });
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_covers_everything_once_with_aligned_cuts() {
        for total in [0usize, 1, 15, 16, 17, 1000, 4097] {
            for parts in 1..9 {
                let mut next = 0;
                for t in 0..parts {
                    let (a, b) = split(total, parts, t, 16);
                    assert_eq!(a, next);
                    assert!(a <= b);
                    assert!(b == total || b % 16 == 0);
                    next = b;
                }
                assert_eq!(next, total);
            }
        }
    }
}
