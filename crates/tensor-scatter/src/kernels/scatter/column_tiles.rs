//! Column tiles: `scatter_elements` over contiguous tensors collapsed to `(outer, axis,
//! inner)`. Tasks own column tiles `(o, [i0, i1))` of the destination, sized so that the tile
//! (all `n` rows of it) stays in L2 while the `k` update rows stream through; a tile narrower
//! than the rows is staged (see [`ElemJob::staged`]).

use crate::dtype::Element;
use crate::exec::Ctx;
use crate::exec::task_count;
use crate::exec::tuning::{ELEM_TASKS_PER_THREAD, STAGE_PREFETCH_ROWS, TILE_BYTES, line_cells};
use crate::index::{IndexInt, IndexPolicy, resolve_accepted};
use crate::kernels::DestPtr;
use crate::reduce::Combiner;
use crate::shape::part;

use super::{ElemGeom, ElemJob, Stage};

/// Runs an element scatter whose every index was accepted by the index pass.
pub(crate) fn elements<T: Element, I: IndexInt, C: Combiner<T>>(
    job: &ElemJob<'_, T, I>,
    dest: DestPtr<'_, T>,
    cx: Ctx,
) {
    let threads = cx.threads;
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
    let tasks = cx
        .tasks(elem_bytes::<T, I>(g), ELEM_TASKS_PER_THREAD)
        .min(tiles)
        .max(1);
    let level = cx.level;
    cx.run(tasks, |t| {
        let (a, b) = part(tiles, tasks, t, 1);
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
            crate::kernels::stream_fence();
        }
    });
}

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
/// enough to run in parallel at all ([`task_count`]). Blocks that fit a tile are then
/// cut when there are fewer of them than threads; larger blocks are cut anyway.
pub(crate) fn column_parallel<T, I>(g: ElemGeom, threads: usize) -> bool {
    g.inner >= 2 * line_cells::<T>()
        && task_count(threads, elem_bytes::<T, I>(g), ELEM_TASKS_PER_THREAD) > 1
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
        let irow = &job.idx[first..first + g.k];
        let urow = &job.upd[first..first + g.k];
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

crate::kernels::simd::multiversion! {
    if (const { crate::kernels::simd::isa_folds::<T, C>() })
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
                let ip = job.idx.as_ptr().wrapping_add(r).cast::<u8>();
                // The first 512 bytes of the index row (`prefetch` takes 256 at a time).
                for at in (0..(w * std::mem::size_of::<I>()).min(512)).step_by(256) {
                    crate::kernels::prefetch(ip.wrapping_add(at), 256);
                }
                crate::kernels::prefetch(job.upd.as_ptr().wrapping_add(r), 256);
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

crate::kernels::simd::multiversion! {
    if (const { crate::kernels::simd::isa_folds::<T, C>() })
    /// `cells[p] = C(cells[p], u)` for each index and update of a contiguous run, in order, `p`
    /// resolved under `policy` (every index was accepted for `cells.len()` by the index pass).
    /// The default policy takes a loop without the clamp or skip. One version per instruction
    /// set ([`multiversion`](crate::kernels::simd::multiversion)): the canonical-NaN select of the float
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
        if g.inner == 1 {
            // Rows of one cell (the axis is the innermost dim): the block's cells, indices
            // and updates are contiguous runs.
            let (irow, urow) = (&job.idx[first..first + g.k], &job.upd[first..first + g.k]);
            if job.src.is_none() {
                // In place, the block was not just copied: ask for all of its lines in
                // order first, so that the fold's random cells hit cache instead of each
                // waiting on memory.
                for at in (0..n * std::mem::size_of::<T>()).step_by(256) {
                    crate::kernels::prefetch(dest.addr_at(dbase).wrapping_byte_add(at), 256);
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
            if let Some(p) = resolve_accepted(job.idx[first + q].to_i64_sat(), n, job.policy) {
                // SAFETY: p < n (accepted index): a cell of this tile, initialised and owned.
                unsafe { dest.combine::<C>(dbase + p * g.inner, job.upd[first + q]) };
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
