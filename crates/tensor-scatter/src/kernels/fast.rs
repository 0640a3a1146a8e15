//! The parallel, destination-partitioned strategies (issue 3).
//!
//! * [`elements`]: `scatter_elements` on contiguous tensors collapsed to
//!   `(outer, axis, inner)`. Tasks own *column tiles* `(o, [i0, i1))` of the destination,
//!   sized so that the tile (all `n` rows of it) stays in L2 while the `k` update rows stream
//!   through; the copy of `data` for the out-of-place forms is fused into the tile. A tile
//!   narrower than the rows is *staged*: gathered into a contiguous scratch buffer, updated
//!   there, and streamed back (see [`ElemJob::staged`]).
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
        (
            &self.idx[g.idx_off + r..g.idx_off + r + w],
            &self.upd[g.upd_off + r..g.upd_off + r + w],
        )
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
            &self.idx[g.idx_off..g.idx_off + g.k],
            &self.upd[g.upd_off..g.upd_off + g.k],
            crate::index::negative_shift(g.n, self.policy.negative),
        )
    }
}

/// Update rows of the staged kernel whose first lines are prefetched ahead (each row of a
/// tile is a separate short run of `indices` and `updates`, too short for the hardware
/// prefetchers to follow).
const STAGE_PREFETCH_ROWS: usize = 2;

/// Runs an element scatter whose every index was accepted by the index pass.
pub(crate) fn elements<T: Element, I: IndexInt, C: Combiner<T>>(
    job: &ElemJob<'_, T, I>,
    dest: DestPtr<'_, T>,
    threads: usize,
) {
    let g = job.g;
    let size = std::mem::size_of::<T>().max(1);
    let line = line_cells::<T>();
    let staged = job.staged;
    let width = if g.n.saturating_mul(g.inner).saturating_mul(size) <= TILE_BYTES {
        if !staged && g.outer < threads && column_parallel::<T, I>(g, threads) {
            // Fewer blocks than threads: each block is cut into `parts` column tiles of
            // whole lines, so every thread gets one (a block that is one tile would leave
            // the other threads idle).
            let parts = threads.div_ceil(g.outer);
            g.inner.div_ceil(parts).div_ceil(line).saturating_mul(line)
        } else {
            g.inner
        }
    } else {
        (TILE_BYTES / g.n.saturating_mul(size) / line * line)
            .max(line)
            .min(g.inner)
    }
    .clamp(1, g.inner.max(1));
    // Tiles of whole rows are one contiguous block each, staged and streamed in one piece.
    let whole = width == g.inner;
    // Staged tiles are streamed back by whole 64-byte lines, so their grid is shifted to
    // start on one: tile 0 of block `o` is `[0, shift + width)` and tile `j > 0` is
    // `[shift + j * width, shift + (j + 1) * width)`, where `shift` cells take the block's
    // first row to a line boundary (every row, when the row length is a multiple of a
    // line). One extra tile per block holds what the shift pushes past the last one.
    let per_o = g.inner.div_ceil(width) + usize::from(staged && !whole);
    let shift = |o: usize| {
        let phase = dest.addr_at(g.dest_off + o * g.n * g.inner).addr() % 64;
        if staged && !whole && phase.is_multiple_of(size) {
            (64 - phase) % 64 / size
        } else {
            0
        }
    };
    let tiles = g.outer * per_o;
    let tasks = par::task_count(threads, elem_bytes::<T, I>(g), ELEM_TASKS_PER_THREAD)
        .min(tiles)
        .max(1);
    let level = crate::isa::active_level();
    par::run_tasks(threads, tasks, |t| {
        let (a, b) = split(tiles, tasks, t, 1);
        let cap = match (staged, whole) {
            (false, _) => 0,
            (true, true) => g.n * g.inner,
            (true, false) => g.n * (width + line),
        };
        let mut stage = Stage::<T>::take(cap);
        for tile in a..b {
            let (o, j) = (tile / per_o, tile % per_o);
            let s = shift(o);
            let i0 = if j == 0 {
                0
            } else {
                (s + j * width).min(g.inner)
            };
            let i1 = (s + (j + 1) * width).min(g.inner);
            if i0 >= i1 {
                continue;
            }
            if staged {
                // SAFETY: as below; see `elem_staged_tile`.
                unsafe { elem_staged_tile::<T, I, C>(job, dest, o, i0, i1, &mut stage.0, level) };
            } else {
                // SAFETY: tile (o, [i0, i1)) is visited by exactly one task; see `elem_tile`.
                unsafe { elem_tile::<T, I, C>(job, dest, o, i0, i1, level) };
            }
        }
        if staged {
            super::stream_fence();
        }
    });
}

/// Tasks per thread [`elements`] cuts a parallel scatter into (for balance), when the work
/// allows ([`par::task_count`]).
const ELEM_TASKS_PER_THREAD: usize = 4;

/// The bytes an element scatter moves: its destination, updates and indices.
fn elem_bytes<T, I>(g: ElemGeom) -> usize {
    let size = std::mem::size_of::<T>();
    g.outer
        .saturating_mul(g.n)
        .saturating_mul(g.inner)
        .saturating_mul(size)
        .saturating_add(
            g.outer
                .saturating_mul(g.k)
                .saturating_mul(g.inner)
                .saturating_mul(size + std::mem::size_of::<I>()),
        )
}

/// Whether [`elements`] gives each of `threads` threads its own column tiles: the rows are at
/// least two cache lines wide (so they can be cut on line boundaries) and the scatter is big
/// enough to run in parallel at all ([`par::task_count`]). Blocks that fit a tile are then
/// cut when there are fewer of them than threads; larger blocks are cut anyway.
pub(crate) fn column_parallel<T, I>(g: ElemGeom, threads: usize) -> bool {
    g.inner >= 2 * line_cells::<T>()
        && par::task_count(threads, elem_bytes::<T, I>(g), ELEM_TASKS_PER_THREAD) > 1
}

/// Staging buffers kept between calls, at most [`STAGE_POOL_MAX`] of them and
/// [`STAGE_POOL_MAX_BYTES`] in all: a fresh buffer of up to [`TILE_BYTES`] per task would be
/// page-faulted in (and zeroed by the OS) on every call. Each entry is a `Vec<T>` and its
/// capacity in bytes.
static STAGE_POOL: std::sync::Mutex<Vec<(Box<dyn std::any::Any + Send>, usize)>> =
    std::sync::Mutex::new(Vec::new());

/// The most staging buffers kept between calls.
const STAGE_POOL_MAX: usize = 16;

/// The most bytes of staging buffers kept between calls. The fed fold stages a whole row of
/// any size; a buffer that would take the pool past this is freed instead.
const STAGE_POOL_MAX_BYTES: usize = 64 << 20;

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

/// One staged column tile: its `n` rows of `w` cells gathered into `scratch` (from the copy
/// source, else from the destination), the identity fill and the fold in index order applied
/// there, then every row streamed back ([`DestPtr::stream_in`]).
///
/// # Safety
/// As [`elem_tile`]; in addition the destination cells of the tile are initialised when
/// `job.src` is `None`.
unsafe fn elem_staged_tile<T: Element, I: IndexInt, C: Combiner<T>>(
    job: &ElemJob<'_, T, I>,
    dest: DestPtr<'_, T>,
    o: usize,
    i0: usize,
    i1: usize,
    scratch: &mut Vec<T>,
    level: crate::isa::Level,
) {
    let g = job.g;
    let (n, w) = (g.n, i1 - i0);
    let block = o * n * g.inner; // relative start of outer block o
    // A tile of whole rows is the contiguous block: copied and streamed as one run, not
    // `n` runs of `w` cells.
    let whole = w == g.inner;
    let (runs, len) = if whole { (1, n * w) } else { (n, w) };
    scratch.clear();
    for p in 0..runs {
        let rel = block + p * g.inner + i0;
        match job.src {
            Some(src) => scratch.extend_from_slice(&src[rel..rel + len]),
            // SAFETY: run p of the tile is in the destination, initialised (contract) and
            // owned by this task; the slice is dropped before the run is written.
            None => scratch.extend_from_slice(unsafe { dest.slice_mut(g.dest_off + rel, len) }),
        }
    }
    let sc = &mut scratch[..];
    let rows = |kk: usize| job.rows(o, kk, i0, w);
    if let Some(id) = job.fill {
        for kk in 0..g.k {
            for (j, x) in rows(kk).0.iter().enumerate() {
                if let Some(p) = resolve_accepted(x.to_i64_sat(), n, job.policy) {
                    sc[p * w + j] = id;
                }
            }
        }
    }
    if whole && w == 1 {
        // Rows of one cell (the axis is the innermost dim): the block's indices and updates
        // are contiguous runs.
        let first = o * g.k;
        let irow = &job.idx[g.idx_off + first..g.idx_off + first + g.k];
        let urow = &job.upd[g.upd_off + first..g.upd_off + first + g.k];
        fold_run::<T, I, C>(level, sc, irow, urow, job.policy);
    } else {
        fold_rows::<T, I, C>(level, job, sc, o, i0, w);
    }
    for p in 0..runs {
        // SAFETY: run p of the tile is in the destination and owned by this task; the
        // scratch is a separate buffer. The caller fences after its last tile.
        unsafe {
            dest.stream_in(
                level,
                g.dest_off + block + p * g.inner + i0,
                &sc[p * len..(p + 1) * len],
            )
        };
    }
}

super::simd::multiversion! {
    if (const { super::simd::isa_folds::<T>() })
    /// The fold of a staged tile of `w` columns from `i0`, update row by update row, each row's
    /// first lines of indices and updates prefetched [`STAGE_PREFETCH_ROWS`] rows ahead.
    fn fold_rows<T: Element, I: IndexInt, C: Combiner<T>>(
        job: &ElemJob<'_, T, I>,
        sc: &mut [T],
        o: usize,
        i0: usize,
        w: usize,
    ) -> () {
        let (g, n) = (job.g, job.g.n);
        for kk in 0..g.k {
            if kk + STAGE_PREFETCH_ROWS < g.k {
                let r = (o * g.k + kk + STAGE_PREFETCH_ROWS) * g.inner + i0;
                let ip = job.idx.as_ptr().wrapping_add(g.idx_off + r).cast::<u8>();
                // The first 512 bytes of the index row (`prefetch` takes 256 at a time).
                for at in (0..(w * std::mem::size_of::<I>()).min(512)).step_by(256) {
                    super::prefetch(ip.wrapping_add(at), 256);
                }
                super::prefetch(job.upd.as_ptr().wrapping_add(g.upd_off + r), 256);
            }
            let (irow, urow) = job.rows(o, kk, i0, w);
            for (j, (x, &u)) in irow.iter().zip(urow).enumerate() {
                if let Some(p) = resolve_accepted(x.to_i64_sat(), n, job.policy) {
                    let c = &mut sc[p * w + j];
                    *c = C::combine(*c, u);
                }
            }
        }
    }
}

super::simd::multiversion! {
    if (const { super::simd::isa_folds::<T>() })
    /// `cells[p] = C(cells[p], u)` for each index and update of a contiguous run, in order, `p`
    /// resolved under `policy` (every index was accepted for `cells.len()` by the index pass).
    /// The default policy takes a loop without the clamp or skip. One version per instruction
    /// set ([`multiversion`](super::simd::multiversion)): the canonical-NaN select of the float
    /// combines is one blend with AVX instead of four SSE2 mask operations (see DESIGN.md).
    fn fold_run<T: Element, I: IndexInt, C: Combiner<T>>(
        cells: &mut [T],
        idx: &[I],
        upd: &[T],
        policy: IndexPolicy,
    ) -> () {
        let n = cells.len();
        if policy.out_of_range == crate::index::OutOfRange::Error {
            for (x, &u) in idx.iter().zip(upd) {
                let v = x.to_i64_sat();
                // Accepted values lie in [-n, n) (negative ones only under `Wrap`).
                let p = if v < 0 { v.wrapping_add(n as i64) } else { v } as usize;
                let c = &mut cells[p];
                *c = C::combine(*c, u);
            }
        } else {
            for (x, &u) in idx.iter().zip(upd) {
                if let Some(p) = resolve_accepted(x.to_i64_sat(), n, policy) {
                    let c = &mut cells[p];
                    *c = C::combine(*c, u);
                }
            }
        }
    }
}

/// The element scatter of a single whole-row block (`outer == 1`) whose indices were *not*
/// checked by an index pass: the block is copied into a scratch buffer (from the copy source,
/// else from the destination), every index is checked as the fold reads it (first by the
/// identity fill's pass when there is one), and the destination is written, in one copy of
/// the block, only once every index was accepted. It replaces the index pass, which would read the
/// indices once more before the fold; the plan takes it when the indices outweigh the block.
///
/// Returns the flat position (from `idx_off`) of the first rejected index; the destination
/// is then untouched.
///
/// # Safety
/// `job.g.outer == 1`; `dest` covers cells `[dest_off, dest_off + n * inner)`, initialised
/// when `job.src` is `None`, and nothing else touches them during the call.
pub(crate) unsafe fn elem_checked<T: Element, I: IndexInt, C: Combiner<T>>(
    job: &ElemJob<'_, T, I>,
    dest: DestPtr<'_, T>,
) -> Result<(), usize> {
    let g = job.g;
    debug_assert_eq!(g.outer, 1);
    let (n, inner) = (g.n, g.inner.max(1));
    let cells = n * g.inner;
    let count = g.k * g.inner;
    let mut stage = Stage::<T>::take(cells.max(1));
    let sc = &mut stage.0;
    match job.src {
        Some(src) => sc.extend_from_slice(&src[..cells]),
        // SAFETY: the block is in the destination, initialised (contract) and ours; the
        // slice is dropped before the block is written.
        None => sc.extend_from_slice(unsafe { dest.slice_mut(g.dest_off, cells) }),
    }
    let sc = &mut sc[..];
    let idx = &job.idx[g.idx_off..g.idx_off + count];
    let upd = &job.upd[g.upd_off..g.upd_off + count];
    let (lo, hi) = crate::index::accepted_range(n, job.policy);
    let policy = job.policy;
    if let Some(id) = job.fill {
        // The identity fill reads every index before the fold: it checks them first.
        for (e, x) in idx.iter().enumerate() {
            let v = x.to_i64_sat();
            if v < lo || v > hi {
                return Err(e);
            }
            if let Some(p) = resolve_accepted(v, n, policy) {
                sc[p * inner + e % inner] = id;
            }
        }
    }
    // The fold checks every index (again, after a fill pass: one compare each).
    if inner == 1 {
        // This runs on the calling thread, so its level is the operation's.
        let level = crate::isa::active_level();
        fold_run_checked::<T, I, C>(level, sc, idx, upd, policy, (lo, hi))?;
    } else {
        let rows = idx.chunks_exact(inner).zip(upd.chunks_exact(inner));
        for (kk, (irow, urow)) in rows.enumerate() {
            for (j, (x, &u)) in irow.iter().zip(urow).enumerate() {
                let v = x.to_i64_sat();
                if v < lo || v > hi {
                    return Err(kk * inner + j);
                }
                if let Some(p) = resolve_accepted(v, n, policy) {
                    let c = &mut sc[p * inner + j];
                    *c = C::combine(*c, u);
                }
            }
        }
    }
    // SAFETY: the block is in the destination and ours (contract); the scratch is a
    // separate buffer.
    unsafe { dest.copy_in(g.dest_off, sc) };
    Ok(())
}

super::simd::multiversion! {
    if (const { super::simd::isa_folds::<T>() })
    /// [`fold_run`] over indices not checked yet: each is checked against the accepted range
    /// `[lo, hi]` before its update is applied; the first rejected one stops the fold and its
    /// position is returned. Kept out of line: inlined into [`elem_checked`], its loop kept two
    /// of its pointers on the stack. One version per instruction set, as [`fold_run`].
    #[inline(never)]
    pub(super) fn fold_run_checked<T: Element, I: IndexInt, C: Combiner<T>>(
        cells: &mut [T],
        idx: &[I],
        upd: &[T],
        policy: IndexPolicy,
        bounds: (i64, i64),
    ) -> Result<(), usize> {
        let (lo, hi) = bounds;
        let n = cells.len();
        if policy.out_of_range == crate::index::OutOfRange::Error {
            // One unsigned bound check accepts the index and finds its cell (`shifted_cell`).
            let shift = crate::index::negative_shift(n, policy.negative);
            for (e, (x, &u)) in idx.iter().zip(upd).enumerate() {
                let p = crate::index::shifted_cell(x.to_i64_sat(), shift);
                let Some(c) = usize::try_from(p).ok().and_then(|p| cells.get_mut(p)) else {
                    return Err(e);
                };
                *c = C::combine(*c, u);
            }
        } else {
            for (e, (x, &u)) in idx.iter().zip(upd).enumerate() {
                let v = x.to_i64_sat();
                if v < lo || v > hi {
                    return Err(e);
                }
                if let Some(p) = resolve_accepted(v, n, policy) {
                    let c = &mut cells[p];
                    *c = C::combine(*c, u);
                }
            }
        }
        Ok(())
    }
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
    level: crate::isa::Level,
) {
    let g = job.g;
    let w = i1 - i0;
    let block = o * g.n * g.inner; // relative start of outer block o
    let dbase = g.dest_off + block + i0;
    if let Some(src) = job.src {
        // A tile of whole rows is the contiguous block: one copy, not one per row (a scatter
        // along the last axis has rows of a single cell).
        let (runs, len) = if w == g.inner { (1, g.n * w) } else { (g.n, w) };
        for p in 0..runs {
            let rel = block + p * g.inner + i0;
            // SAFETY: run p of the tile lies in the destination and belongs to this task.
            unsafe { dest.copy_in(g.dest_off + rel, &src[rel..rel + len]) };
        }
    }
    let rows = |kk: usize| job.rows(o, kk, i0, w);
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
    if w == 1 {
        // One column (the axis is the innermost dim, or a 1-D scatter): walk it with a
        // stride instead of slicing a one-element row per update.
        let first = (o * g.k) * g.inner + i0;
        let (ib, ub) = (g.idx_off + first, g.upd_off + first);
        if g.inner == 1 {
            // Rows of one cell (the axis is the innermost dim): the block's cells, indices
            // and updates are contiguous runs.
            let (irow, urow) = (&job.idx[ib..ib + g.k], &job.upd[ub..ub + g.k]);
            if job.src.is_none() {
                // In place, the block was not just copied: ask for all of its lines in
                // order first, so that the fold's random cells hit cache instead of each
                // waiting on memory.
                for at in (0..n * std::mem::size_of::<T>()).step_by(256) {
                    super::prefetch(dest.addr_at(dbase).wrapping_byte_add(at), 256);
                }
            }
            // SAFETY: the block's n cells are in the destination, initialised (copied above
            // or by the caller) and owned by this task (its tile is the whole block).
            let cells = unsafe { dest.slice_mut(dbase, n) };
            fold_run::<T, I, C>(level, cells, irow, urow, job.policy);
            return;
        }
        for kk in 0..g.k {
            let q = kk * g.inner;
            if let Some(p) = resolve_accepted(job.idx[ib + q].to_i64_sat(), n, job.policy) {
                // SAFETY: p < n (accepted index): a cell of this tile, initialised and owned.
                unsafe { dest.combine::<C>(dbase + p * g.inner, job.upd[ub + q]) };
            }
        }
        return;
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
    pub(crate) upd: &'a [T],
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

/// How many tuples ahead [`RangeJob::walk_owned`] offers a slice for prefetching.
const TUPLE_LOOKAHEAD: usize = 8;

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
    threads: usize,
) {
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
    // Taken on the calling thread: the tasks' streaming copies use the operation's level.
    let level = crate::isa::active_level();
    par::run_tasks(threads, tasks, |t| {
        let (a, b) = split(total, tasks, t, line);
        if a >= b {
            return;
        }
        let (lo, hi) = (job.span_lo + a, job.span_lo + b);
        if let Some(src) = job.src {
            if (b - a) * size >= par::RANGE_STREAM_MIN_BYTES {
                // At this size the streamed copy (no read-for-ownership of its lines) measured
                // faster than the cached one (`par::RANGE_STREAM_MIN_BYTES`); the fence orders
                // it before the slices below read the streamed cells.
                // SAFETY: [lo, hi) is inside the destination span and owned by task t.
                unsafe { dest.stream_in(level, lo, &src[a..b]) };
                super::stream_fence();
            } else {
                // SAFETY: as above.
                unsafe { dest.copy_in(lo, &src[a..b]) };
            }
        }
        let (lo, hi) = (lo as isize, hi as isize);
        let run_bytes = job.run_len * size;
        let ahead = |d: usize| super::prefetch(dest.addr_at(d), run_bytes);
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
            combine_slices::<T, C>(dst, &job.upd[u..u + len]);
        };
        job.walk_owned(lo, hi, apply, ahead);
    });
}

/// One chunk's updates, bucketed by destination block, in index order. An entry is the cell's
/// offset inside its block and the update's bits: one `u64` (`offset << 32 | bits`) for
/// types of at most 4 bytes, two (`offset`, `bits`) for 8-byte types. The vectors come from,
/// and return to, [`SCRATCH`]: a fresh tens-of-megabytes allocation per call would cost more
/// in page faults than the kernel itself.
pub(crate) struct Buckets {
    lists: Vec<Line<Vec<u64>>>,
}

/// A value alone on its cache line(s). Every append to a bucket stores the list's length, so
/// the list headers of two tasks must never share a line. With persistent helper threads,
/// W5's bucket tasks ran 45-50 ms each against 15-28 until the lists were padded (2 threads;
/// shared lines are our reading of that, not counted).
#[repr(align(64))]
pub(super) struct Line<T>(pub(super) T);

/// Recycled bucket vectors (empty, with capacity), at most [`SCRATCH_MAX_BYTES`] in all.
static SCRATCH: std::sync::Mutex<Vec<Vec<u64>>> = std::sync::Mutex::new(Vec::new());

/// The most scratch memory kept between calls.
const SCRATCH_MAX_BYTES: usize = 256 << 20;

fn scratch_take(n: usize, cap: usize) -> Vec<Line<Vec<u64>>> {
    let mut pool = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    (0..n)
        .map(|_| {
            let mut v = pool.pop().unwrap_or_default();
            v.reserve(cap);
            Line(v)
        })
        .collect()
}

impl Drop for Buckets {
    fn drop(&mut self) {
        let mut pool = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
        let mut kept: usize = pool.iter().map(|v| v.capacity() * 8).sum();
        for Line(mut v) in self.lists.drain(..) {
            if kept + v.capacity() * 8 <= SCRATCH_MAX_BYTES {
                kept += v.capacity() * 8;
                v.clear();
                pool.push(v);
            }
        }
    }
}

/// Whether an entry takes two words (8-byte types).
const fn two_words<T>() -> bool {
    std::mem::size_of::<T>() > 4
}

/// Pass 1 of the element-scatter radix kernel, for destinations too large for cache: in
/// parallel over chunks of updates (in index order), resolve and range-check every index and
/// append `(offset in block, value)` to its destination block's bucket. Writes only scratch
/// memory; returns the flat position of the first index the policy rejects.
pub(crate) fn radix_bucket<T: Element, I: IndexInt>(
    job: &ElemJob<'_, T, I>,
    block_cells: usize,
    threads: usize,
) -> Result<Vec<Buckets>, usize> {
    debug_assert!(block_cells.is_power_of_two() && block_cells <= 1 << 32);
    let g = job.g;
    let total = g.outer * g.n * g.inner;
    let count = g.outer * g.k * g.inner;
    let shift = block_cells.trailing_zeros();
    let blocks = total.div_ceil(block_cells);
    let size = std::mem::size_of::<T>().max(1) + std::mem::size_of::<I>();
    let chunks = par::task_count(threads, count.saturating_mul(size), 1).max(1);
    let (lo, hi) = crate::index::accepted_range(g.n, job.policy);
    type Slot = std::sync::Mutex<Option<Result<Buckets, usize>>>;
    let mut results: Vec<Slot> = (0..chunks).map(|_| std::sync::Mutex::new(None)).collect();
    par::run_tasks(threads, chunks, |c| {
        let (a, b) = split(count, chunks, c, 1);
        let words = if two_words::<T>() { 2 } else { 1 };
        let expect = ((b - a) / blocks.max(1) + (b - a) / blocks.max(1) / 8 + 16) * words;
        let mut bk = Buckets {
            lists: scratch_take(blocks, expect),
        };
        let out = bucket_range(job, a, b, lo, hi, shift, &mut bk).map(|()| bk);
        *results[c].lock().unwrap_or_else(|e| e.into_inner()) = Some(out);
    });
    let mut buckets = Vec::with_capacity(chunks);
    for r in &mut results {
        match r.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            Some(Ok(bk)) => buckets.push(bk),
            Some(Err(bad)) => return Err(bad), // chunks are in index order: the first error
            None => return Err(0),             // unreachable: every chunk ran
        }
    }
    Ok(buckets)
}

/// Pass 2 of the radix kernel: in parallel over destination blocks (contiguous, about L2
/// sized), copy the block from `src` if given, then apply its buckets chunk by chunk, so every
/// cell sees its updates in index order.
pub(crate) fn radix_apply<T: Element, C: Combiner<T>>(
    g: ElemGeom,
    buckets: &[Buckets],
    src: Option<&[T]>,
    dest: DestPtr<'_, T>,
    block_cells: usize,
    threads: usize,
) {
    let total = g.outer * g.n * g.inner;
    let blocks = total.div_ceil(block_cells);
    let tasks = if threads > 1 { blocks } else { 1 };
    par::run_tasks(threads, tasks, |t| {
        let (b0, b1) = split(blocks, tasks, t, 1);
        for blk in b0..b1 {
            let start = blk * block_cells;
            let end = (start + block_cells).min(total);
            let base = g.dest_off + start;
            if let Some(src) = src {
                // SAFETY: block `blk` is owned by this task and lies inside the destination.
                unsafe { dest.copy_in(base, &src[start..end]) };
            }
            for bk in buckets {
                let list = &bk.lists[blk].0;
                let apply = |o: u64, bits: u64| {
                    // SAFETY: o < end - start (pass 1 derived it from a cell of this block,
                    // computed from an accepted index); the block is initialised and owned.
                    unsafe { dest.combine::<C>(base + o as usize, T::from_bits_u64(bits)) };
                };
                if two_words::<T>() {
                    for e in list.chunks_exact(2) {
                        apply(e[0], e[1]);
                    }
                } else {
                    for &e in list {
                        apply(e >> 32, e & 0xffff_ffff);
                    }
                }
            }
        }
    });
}

/// Pass 1 over updates `[a, b)` (flat, row-major over `(o, k, i)`).
#[allow(clippy::too_many_arguments)]
fn bucket_range<T: Element, I: IndexInt>(
    job: &ElemJob<'_, T, I>,
    a: usize,
    b: usize,
    lo: i64,
    hi: i64,
    shift: u32,
    bk: &mut Buckets,
) -> Result<(), usize> {
    let g = job.g;
    if a >= b {
        return Ok(());
    }
    let mask = (1usize << shift) - 1;
    let idx = &job.idx[g.idx_off + a..g.idx_off + b];
    let upd = &job.upd[g.upd_off + a..g.upd_off + b];
    // (i, k, o) of position a; `row_base` is the destination cell of (o, 0, i).
    let (mut i, mut kk, mut o) = (a % g.inner, a / g.inner % g.k, a / g.inner / g.k);
    let mut row_base = o * g.n * g.inner + i;
    for (j, (x, &v)) in idx.iter().zip(upd).enumerate() {
        let raw = x.to_i64_sat();
        if raw < lo || raw > hi {
            return Err(a + j);
        }
        if let Some(p) = resolve_accepted(raw, g.n, job.policy) {
            let cell = row_base + p * g.inner;
            let list = &mut bk.lists[cell >> shift].0;
            let off = (cell & mask) as u64;
            if two_words::<T>() {
                list.extend_from_slice(&[off, v.to_bits_u64()]);
            } else {
                list.push(off << 32 | v.to_bits_u64());
            }
        }
        i += 1;
        row_base += 1;
        if i == g.inner {
            i = 0;
            row_base -= g.inner;
            kk += 1;
            if kk == g.k {
                // The axis is exhausted: next outer block.
                kk = 0;
                o += 1;
                row_base = o * g.n * g.inner;
            }
        }
    }
    Ok(())
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
