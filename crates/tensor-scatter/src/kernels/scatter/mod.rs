//! The scatter kernels: each owns a part of the destination and applies, in row-major index
//! order, the updates that land in it, so the result equals the sequential fold bit for bit
//! whatever the number of tasks or threads.
//!
//! | kernel | takes | indices checked |
//! |---|---|---|
//! | [`column_tiles`] | element scatters over contiguous tensors, `(outer, axis, inner)`: column tiles that stay in L2 while the update rows stream through, staged in scratch when narrower than the rows | before (index pass) |
//! | [`single_fold`] | one whole-row block (`outer == 1`) whose indices outweigh it, folded in scratch by one task | in the fold |
//! | [`split_fold`] | one row (`inner == 1`) cut into one part per task, each task scanning every update | in the scans |
//! | [`fed_fold`] | one row folded by one task while a second resolves its indices (or ScatterND pairs and triples) ahead of it | by the two |
//! | [`radix`] | element scatters into a destination too large to tile: updates bucketed by destination block | in the bucketing pass |
//! | [`ranges`](mod@ranges) | every other plan (ScatterND, ScatterUpdate, strided views): contiguous buffer ranges | before (index pass) |
//!
//! The copy of `data` of the out-of-place forms is fused into each kernel's tasks. Which
//! kernel runs is decided once, in `scatter::strategy`.

pub(crate) mod column_tiles;
pub(crate) mod fed_fold;
pub(crate) mod fed_source;
pub(crate) mod flat;
pub(crate) mod radix;
pub(crate) mod ranges;
pub(crate) mod single_fold;
pub(crate) mod split_fold;

pub(crate) use column_tiles::{column_parallel, elements};
pub(crate) use fed_fold::{FED_MAX_CELLS, Row, elem_fed, fed_cells};
pub(crate) use fed_source::Tuples;
pub(crate) use flat::flat_offsets;
pub(crate) use radix::{radix_apply, radix_bucket};
pub(crate) use ranges::{RangeJob, ranges, rel_range};
pub(crate) use single_fold::elem_checked;
pub(crate) use split_fold::{SPLIT_MAX_CELLS, elem_split};

use crate::dtype::Element;
use crate::exec::tuning::{STAGE_POOL_MAX, STAGE_POOL_MAX_BYTES};
use crate::index::IndexPolicy;

/// `scatter_elements` geometry over contiguous tensors: destination `(outer, n, inner)` from
/// buffer position `dest_off`, indices and updates `(outer, k, inner)` (the job holds exactly
/// their elements).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ElemGeom {
    pub(crate) outer: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) inner: usize,
    pub(crate) dest_off: usize,
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
    /// Whether column tiles narrower than the rows are staged in a contiguous scratch buffer.
    /// Their rows are `inner` cells apart, often a power of two of bytes, so a tile written
    /// in place maps onto a few cache sets and is evicted long before it is full; staged, it
    /// is contiguous, and is written back with non-temporal stores of whole lines. The
    /// staged tile is read and written whole, so the plan stages only when most lines of the
    /// destination are written anyway (always when the copy of `data` is fused).
    pub(crate) staged: bool,
}

impl<'a, T, I> ElemJob<'a, T, I> {
    /// Columns `[i0, i0 + w)` of update row `kk` of outer block `o`: the indices and the
    /// updates.
    #[inline(always)]
    fn rows(&self, o: usize, kk: usize, i0: usize, w: usize) -> (&'a [I], &'a [T]) {
        let g = self.g;
        let r = (o * g.k + kk) * g.inner + i0;
        (&self.idx[r..r + w], &self.upd[r..r + w])
    }

    /// The indices and updates of a single-row job (`outer == 1`, `inner == 1`, at most
    /// `max_cells` cells, the `Error` out-of-range rule, no identity fill: the split and fed
    /// folds' jobs), and the shift of its negative indices
    /// ([`negative_shift`](crate::index::negative_shift)).
    pub(crate) fn single_row(&self, max_cells: usize) -> (&'a [I], &'a [T], i64) {
        let g = self.g;
        debug_assert!(g.outer == 1 && g.inner == 1 && g.n <= max_cells);
        debug_assert!(self.fill.is_none());
        debug_assert_eq!(self.policy.out_of_range, crate::index::OutOfRange::Error);
        (
            &self.idx[..g.k],
            &self.upd[..g.k],
            crate::index::negative_shift(g.n, self.policy.negative),
        )
    }
}

/// Staging buffers kept between calls, at most [`STAGE_POOL_MAX`] of them and
/// [`STAGE_POOL_MAX_BYTES`] in all: a fresh buffer of up to a tile per task would be
/// page-faulted in (and zeroed by the OS) on every call. Each entry is a `Vec<T>` and its
/// capacity in bytes.
static STAGE_POOL: std::sync::Mutex<Vec<(Box<dyn std::any::Any + Send>, usize)>> =
    std::sync::Mutex::new(Vec::new());

/// A staging buffer of the element kernel, taken from [`STAGE_POOL`] and returned on drop.
pub(super) struct Stage<T: Element>(pub(super) Vec<T>);

impl<T: Element> Stage<T> {
    /// An empty buffer with capacity for `cap` cells (none is taken for `cap == 0`).
    pub(super) fn take(cap: usize) -> Stage<T> {
        if cap == 0 {
            return Stage(Vec::new());
        }
        let mut pool = STAGE_POOL.lock().unwrap_or_else(|e| e.into_inner());
        let kept = pool.iter().position(|(b, _)| b.is::<Vec<T>>());
        let mut v = kept
            .and_then(|i| pool.swap_remove(i).0.downcast::<Vec<T>>().ok())
            .map_or_else(Vec::new, |b| *b);
        drop(pool);
        v.clear();
        v.reserve(cap);
        Stage(v)
    }
}

impl<T: Element> Drop for Stage<T> {
    fn drop(&mut self) {
        if self.0.capacity() == 0 {
            return;
        }
        let mine = self.0.capacity().saturating_mul(std::mem::size_of::<T>());
        let mut pool = STAGE_POOL.lock().unwrap_or_else(|e| e.into_inner());
        let kept = pool
            .iter()
            .fold(0usize, |sum, (_, b)| sum.saturating_add(*b));
        if pool.len() < STAGE_POOL_MAX && kept.saturating_add(mine) <= STAGE_POOL_MAX_BYTES {
            pool.push((Box::new(std::mem::take(&mut self.0)), mine));
        }
    }
}

/// A value alone on its cache line(s). Every append to a bucket stores the list's length, so
/// the list headers of two tasks must never share a line (unpadded, the bucket tasks ran
/// about twice as long; record/2026-11-19-to-24-kernel-notebook.md).
#[repr(align(64))]
pub(crate) struct Line<T>(pub(crate) T);
