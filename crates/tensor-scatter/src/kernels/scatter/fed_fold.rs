//! The fed fold: a single row of cells (`outer == 1`, `inner == 1`) folded by one task, in
//! update order, while a second task resolves and checks the indices a few chunks ahead of it.
//!
//! The single fold ([`elem_checked`](super::single_fold::elem_checked)) runs one loop on one core:
//! each update costs an index load, its sign fix-up and its bound check besides the
//! read-modify-write. Here the second core does that part: the *feeder* turns each chunk of
//! indices into `u32` cell numbers in a small ring, and the *folder* applies a chunk from the
//! ring when the feeder has published it, and resolves the chunk itself (checking each index)
//! when it has not. The folder never waits for the feeder, so the result and the time never
//! depend on whether, when or on which thread the feeder runs: with no second thread the
//! folder does both. Every cell still sees its updates in order, so the result is the
//! sequential fold's, bit for bit.
//!
//! The indices are one per update, or ScatterND pairs and triples that each address one cell
//! (`x[r, c] += v`): the fold takes them as a [`Cells`] source, so it is compiled per value
//! type and reduction only. The feeder publishes a chunk only when it accepted every index in
//! it; a rejected index is found again by the folder, which resolves the unpublished chunk
//! itself and so names the same first bad update as the index pass would. The row is folded
//! in scratch and copied to the destination only after the last update, so an error leaves
//! the destination untouched.

use std::cell::UnsafeCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use super::fed_source::{Cells, Elems};
use super::{ElemJob, Line, Stage};
use crate::dtype::Element;
use crate::exec::tuning::{FED_CHUNK as CHUNK, FED_RING as RING};
use crate::exec::{Ctx, run_tasks};
use crate::index::IndexInt;
use crate::isa::Level;
use crate::kernels::DestPtr;
use crate::reduce::Combiner;

/// The largest row the fed fold takes (cell numbers are `u32`).
pub(crate) const FED_MAX_CELLS: usize = u32::MAX as usize;

/// Runs the two tasks of a fed fold (0 the folder, 1 the feeder), each exactly once, in any
/// order, on any threads.
type RunTasks<'a> = &'a dyn Fn(&(dyn Fn(usize) + Sync));

/// The folder's state, as the feeder sees it.
const NOT_STARTED: u8 = 0;
const RUNNING: u8 = 1;
const FINISHED: u8 = 2;

/// The shared state of one call. Each flag sits on a cache line of its own ([`Line`]): the
/// folder's progress is read by the spinning feeder, and the feeder's flags by the folder.
struct Ring {
    /// `RING` slots of `CHUNK` cell numbers, plain memory (so that resolving into them
    /// vectorises), handed between the two tasks by `ready` and `consumed`.
    cell: Box<[UnsafeCell<u32>]>,
    /// Per slot: 1 + the chunk whose cell numbers it holds (all accepted), 0 for none.
    ready: Line<[AtomicUsize; RING]>,
    /// Chunks the folder has finished.
    consumed: Line<AtomicUsize>,
    /// [`NOT_STARTED`], [`RUNNING`] or [`FINISHED`].
    folder: Line<AtomicU8>,
}

// SAFETY: the cells are written only by the feeder, in a slot holding no published chunk
// the folder has yet to finish (`feed`: chunk `c` goes to slot `c % RING` only once `consumed`
// is past `c - RING`, acquired), and read only by the folder, in a slot whose chunk the feeder
// published (`ready`, released after the writes); every other field is atomic.
unsafe impl Sync for Ring {}

impl Ring {
    /// The first `len` numbers of `slot`, to write.
    ///
    /// # Safety
    /// The caller is the feeder, and the folder does not read the slot while this lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slot_mut(&self, slot: usize, len: usize) -> &mut [u32] {
        let cells = &self.cell[slot * CHUNK..slot * CHUNK + len];
        // SAFETY: in bounds (sliced above); `UnsafeCell<u32>` has `u32`'s layout, and the
        // caller's contract makes this the only reference to these cells.
        unsafe { std::slice::from_raw_parts_mut(UnsafeCell::raw_get(cells.as_ptr()), len) }
    }

    /// The first `len` numbers of `slot`, to read.
    ///
    /// # Safety
    /// The slot holds a chunk the feeder published, and it does not write the slot while
    /// this lives.
    unsafe fn slot(&self, slot: usize, len: usize) -> &[u32] {
        let cells = &self.cell[slot * CHUNK..slot * CHUNK + len];
        // SAFETY: in bounds; no writer while it lives (contract).
        unsafe { std::slice::from_raw_parts(UnsafeCell::raw_get(cells.as_ptr()), len) }
    }
}

/// The ring kept between calls (a concurrent call allocates its own).
static KEPT: Mutex<Option<Box<Ring>>> = Mutex::new(None);

/// Stores [`FINISHED`] into the folder's state when dropped.
struct Finished<'a>(&'a AtomicU8);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.store(FINISHED, Ordering::Release);
    }
}

/// A ring taken from [`KEPT`], reset, and returned on drop.
struct Taken(Option<Box<Ring>>);

impl Taken {
    fn take() -> Taken {
        let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner()).take();
        let ring = kept.unwrap_or_else(|| {
            Box::new(Ring {
                cell: (0..RING * CHUNK).map(|_| UnsafeCell::new(0)).collect(),
                ready: Line(std::array::from_fn(|_| AtomicUsize::new(0))),
                consumed: Line(AtomicUsize::new(0)),
                folder: Line(AtomicU8::new(NOT_STARTED)),
            })
        });
        // A slot still marked with a chunk of the previous call must not pass for this
        // call's chunk of the same number. The tasks see these stores: the pool publishes
        // the job after them.
        for r in &ring.ready.0 {
            r.store(0, Ordering::Relaxed);
        }
        ring.consumed.0.store(0, Ordering::Relaxed);
        ring.folder.0.store(NOT_STARTED, Ordering::Relaxed);
        Taken(Some(ring))
    }

    fn ring(&self) -> &Ring {
        self.0.as_deref().expect("taken until dropped")
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if kept.is_none() {
            *kept = self.0.take();
        }
    }
}

/// The destination row of a fed fold: `n` cells from buffer position `dest_off`, and the
/// source of the copy of `data` when it is fused (`src[j]` becomes cell `dest_off + j`).
#[derive(Clone, Copy)]
pub(crate) struct Row<'a, T> {
    pub(crate) n: usize,
    pub(crate) dest_off: usize,
    pub(crate) src: Option<&'a [T]>,
}

/// The element scatter of one row (`outer == 1`, `inner == 1`) whose indices were *not*
/// checked: the fed fold over [`Elems`].
///
/// Returns the flat position of the first rejected index; the destination
/// is then untouched.
///
/// # Safety
/// `job.g.outer == 1`, `job.g.inner == 1`, `job.g.n <= FED_MAX_CELLS`, the policy's
/// out-of-range rule is `Error` and there is no identity fill; `dest` covers cells
/// `[dest_off, dest_off + n)`, initialised when `job.src` is `None`, and nothing else touches
/// them during the call.
pub(crate) unsafe fn elem_fed<T: Element, I: IndexInt, C: Combiner<T>>(
    job: &ElemJob<'_, T, I>,
    dest: DestPtr<'_, T>,
    cx: Ctx,
) -> Result<(), usize> {
    let (idx, upd, shift) = job.single_row(FED_MAX_CELLS);
    let (n, level) = (job.g.n, cx.level);
    let source = Elems {
        idx,
        n,
        shift,
        level,
    };
    let row = Row {
        n,
        dest_off: job.g.dest_off,
        src: job.src,
    };
    // SAFETY: the caller's contract, forwarded; `source` gives one cell per update.
    unsafe { fed_cells::<T, C>(&source, upd, row, dest, cx) }
}

/// [`fed_fold`] with its two tasks on the pool: the fed fold of any [`Cells`] source (the
/// drive's ScatterND pairs and triples, [`Tuples`](super::Tuples)).
///
/// # Safety
/// As [`fed_fold`].
pub(crate) unsafe fn fed_cells<T: Element, C: Combiner<T>>(
    source: &dyn Cells,
    upd: &[T],
    row: Row<'_, T>,
    dest: DestPtr<'_, T>,
    cx: Ctx,
) -> Result<(), usize> {
    // SAFETY: the caller's contract, forwarded.
    unsafe { fed_fold::<T, C>(source, upd, row, dest, cx.level, &|t| run_tasks(2, 2, t)) }
}

/// The fed fold of the updates `upd` into `row`, their cells from `source`: the row copied
/// into scratch, folded there in order by the calling thread (task 0) while task 1 resolves
/// the cells ahead of it, and copied out once every update was accepted. `run` runs each of
/// the two tasks exactly once before it returns, in any order, on any threads.
///
/// Returns the position of the first rejected update; the destination is then untouched.
///
/// # Safety
/// `row.n <= FED_MAX_CELLS` and `source.cells() == row.n`; `source` gives `upd.len()`
/// updates; `dest` covers cells `[row.dest_off, row.dest_off + row.n)`, initialised when
/// `row.src` is `None`, and nothing else touches them during the call.
#[inline(never)] // one copy per value type and reduction, whatever the source
unsafe fn fed_fold<T: Element, C: Combiner<T>>(
    source: &dyn Cells,
    upd: &[T],
    row: Row<'_, T>,
    dest: DestPtr<'_, T>,
    level: Level,
    run: RunTasks<'_>,
) -> Result<(), usize> {
    let n = row.n;
    debug_assert!(n <= FED_MAX_CELLS && source.cells() == n && source.count() == upd.len());
    let taken = Taken::take();
    let ring = taken.ring();
    let first_bad = AtomicUsize::new(usize::MAX);
    run(&|t| {
        if t != 0 {
            feed(ring, source);
            return;
        }
        ring.folder.0.store(RUNNING, Ordering::Release);
        // Marks the folder finished however it ends, so a feeder waiting for it stops (a
        // panic here, a bug, then reaches the caller instead of leaving the feeder spinning).
        let _finished = Finished(&ring.folder.0);
        let mut stage = Stage::<T>::take(n.max(1));
        match row.src {
            Some(src) => stage.0.extend_from_slice(&src[..n]),
            // SAFETY: the row is in the destination, initialised (contract) and ours; the
            // slice is dropped before the row is written.
            None => stage
                .0
                .extend_from_slice(unsafe { dest.slice_mut(row.dest_off, n) }),
        }
        match fold::<T, C>(ring, &mut stage.0, source, upd, level) {
            // SAFETY: the row is in the destination and ours (contract); the scratch is a
            // separate buffer.
            Ok(()) => unsafe { dest.copy_in(row.dest_off, &stage.0) },
            Err(bad) => first_bad.store(bad, Ordering::Relaxed),
        }
    });
    match first_bad.into_inner() {
        usize::MAX => Ok(()),
        bad => Err(bad),
    }
}

/// The folder: every chunk in order, from the ring when the feeder published it, else
/// resolved (and checked) here. Returns the position of the first rejected update.
fn fold<T: Element, C: Combiner<T>>(
    ring: &Ring,
    cells: &mut [T],
    source: &dyn Cells,
    upd: &[T],
    level: Level,
) -> Result<(), usize> {
    let mut own = [0u32; CHUNK];
    for (c, lo) in (0..upd.len()).step_by(CHUNK).enumerate() {
        let hi = (lo + CHUNK).min(upd.len());
        let slot = c % RING;
        let at: &[u32] = if ring.ready.0[slot].load(Ordering::Acquire) == c + 1 {
            // SAFETY: the feeder published chunk `c` in this slot (the acquire load above
            // pairs with its release store, made after it wrote every number); it writes the
            // slot again only after `consumed` passes `c`, which is stored below.
            unsafe { ring.slot(slot, hi - lo) }
        } else {
            let own = &mut own[..hi - lo];
            if !source.resolve(lo, own) {
                return Err(source.first_refused(lo, hi));
            }
            own
        };
        // SAFETY: every number of `at` was accepted by `source`, so lies below its `cells()`,
        // which is `n == cells.len()` (`fed_fold`'s contract, `Cells`' contract).
        unsafe { fold_cells::<T, C>(level, cells, at, &upd[lo..hi]) };
        ring.consumed.0.store(c + 1, Ordering::Release);
    }
    Ok(())
}

/// The feeder: resolves chunk after chunk into the ring, at most [`RING`] chunks ahead of the
/// folder and never behind it, until every chunk is done, the folder has finished, or a
/// chunk holds a rejected update (left unpublished for the folder to find).
fn feed(ring: &Ring, source: &dyn Cells) {
    let count = source.count();
    let chunks = count.div_ceil(CHUNK);
    let mut c = 0;
    let mut spins = 0u32;
    while c < chunks {
        let done = ring.consumed.0.load(Ordering::Acquire);
        if c < done {
            // The folder is on chunk `done` already: resolve the one after it.
            c = done + 1;
            continue;
        }
        if c >= done + RING {
            // The ring is full. Wait for a running folder; one that has finished, or has not
            // started (the same thread may run both tasks, this one first), needs nothing.
            if ring.folder.0.load(Ordering::Acquire) != RUNNING {
                return;
            }
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(256) {
                std::thread::yield_now();
            }
            continue;
        }
        let lo = c * CHUNK;
        let hi = (lo + CHUNK).min(count);
        let slot = c % RING;
        // SAFETY: this is the feeder; the slot's previous chunk, `c - RING`, is consumed
        // (`c < done + RING`, acquired above), and chunk `c` is not yet published, so the
        // folder does not read the slot.
        let at = unsafe { ring.slot_mut(slot, hi - lo) };
        if !source.resolve(lo, at) {
            return;
        }
        ring.ready.0[slot].store(c + 1, Ordering::Release);
        c += 1;
    }
}

crate::kernels::simd::multiversion! {
    if (const { crate::kernels::simd::isa_folds::<T, C>() })
    /// `cells[at[j]] = C(cells[at[j]], upd[j])` for one resolved chunk, in order. One
    /// version per instruction set: the canonical-NaN select of the float combines is one
    /// blend with AVX instead of four SSE2 mask operations.
    ///
    /// Contract: every `at[j] < cells.len()`.
    unsafe fn fold_cells<T: Element, C: Combiner<T>>(
        cells: &mut [T],
        at: &[u32],
        upd: &[T],
    ) -> () {
        for (&a, &u) in at.iter().zip(upd) {
            // SAFETY: the cell is in bounds (contract).
            let c = unsafe { crate::kernels::at_mut(cells, a as usize) };
            *c = C::combine(*c, u);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::scatter::fed_source::Tuples;
    use crate::reduce::AddC;

    /// The sequential fold of `idx`/`upd` into `data` (negative indices wrapped), or the
    /// position of the first rejected index.
    fn sequential(data: &[f32], idx: &[i64], upd: &[f32]) -> Result<Vec<f32>, usize> {
        let n = data.len() as i64;
        let mut out = data.to_vec();
        for (e, (&x, &u)) in idx.iter().zip(upd).enumerate() {
            let p = if x < 0 { x + n } else { x };
            if !(0..n).contains(&p) {
                return Err(e);
            }
            let c = &mut out[p as usize];
            *c = AddC::combine(*c, u);
        }
        Ok(out)
    }

    /// Runs the fed fold of `source` with `run` scheduling its two tasks; returns the
    /// destination (which starts as all -7).
    fn fed(
        data: &[f32],
        source: &dyn Cells,
        upd: &[f32],
        run: RunTasks<'_>,
    ) -> (Result<(), usize>, Vec<f32>) {
        let mut dest = vec![-7.0f32; data.len()];
        let row = Row {
            n: data.len(),
            dest_off: 0,
            src: Some(data),
        };
        let (d, level) = (DestPtr::new(&mut dest), crate::isa::active_level());
        // SAFETY: `dest` covers the row's cells and nothing else touches it; the sources
        // below address rows of `data.len()` cells.
        let r = unsafe { fed_fold::<f32, AddC>(source, upd, row, d, level, run) };
        (r, dest)
    }

    /// Uniform draws below `m` from a xorshift state seeded with `seed`.
    fn below_from(mut state: u64) -> impl FnMut(u64) -> u64 {
        move |m| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        }
    }

    /// The fold's result `got` and destination `dest` against the sequential `want` (on an
    /// error: the same first position, and the destination untouched).
    fn same(want: &Result<Vec<f32>, usize>, got: Result<(), usize>, dest: &[f32], what: &str) {
        match want {
            Ok(out) => {
                assert_eq!(got, Ok(()), "{what}");
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(out), bits(dest), "{what}");
            }
            Err(bad) => {
                assert_eq!(got, Err(*bad), "{what}");
                assert!(dest.iter().all(|&v| v == -7.0), "written on error: {what}");
            }
        }
    }

    /// A way of running the two tasks.
    type Schedule = Box<dyn Fn(&(dyn Fn(usize) + Sync))>;

    /// Every schedule of the two tasks: concurrent, folder first, feeder first.
    fn schedules() -> Vec<(&'static str, Schedule)> {
        vec![
            ("threads", Box::new(|f| run_tasks(2, 2, f))),
            (
                "scoped",
                Box::new(|f| {
                    std::thread::scope(|s| {
                        s.spawn(|| f(1));
                        f(0);
                    })
                }),
            ),
            ("folder first", Box::new(|f| (0..2).for_each(f))),
            ("feeder first", Box::new(|f| (0..2).rev().for_each(f))),
        ]
    }

    #[test]
    fn matches_the_sequential_fold_under_every_schedule() {
        let mut below = below_from(0x9e37_79b9_7f4a_7c15u64);
        for case in 0..200 {
            let n = 1 + below(40) as usize;
            let k = below(60) as usize;
            let data: Vec<f32> = (0..n).map(|_| below(9) as f32 - 4.0).collect();
            let mut idx: Vec<i64> = (0..k)
                .map(|_| below(2 * n as u64) as i64 - n as i64)
                .collect();
            let upd: Vec<f32> = (0..k).map(|_| below(9) as f32 - 4.0).collect();
            if case % 3 == 0 && k > 0 {
                // One bad index (or two, the first one counting).
                let at = below(k as u64) as usize;
                idx[at] = if case % 2 == 0 {
                    n as i64
                } else {
                    -(n as i64) - 1
                };
                idx[k - 1] = i64::MAX;
            }
            let want = sequential(&data, &idx, &upd);
            let source = Elems {
                idx: &idx,
                n,
                shift: n as i64,
                level: crate::isa::active_level(),
            };
            for (name, run) in schedules() {
                let (got, dest) = fed(&data, &source, &upd, &*run);
                same(&want, got, &dest, &format!("case {case}, {name}"));
            }
        }
    }

    #[test]
    fn tuples_match_the_sequential_fold_under_every_schedule() {
        let mut below = below_from(0x2545_f491_4f6c_dd1du64);
        for case in 0..200 {
            // Pairs into an r x c table, or triples into an r x c x 2 one, wrapped negatives.
            let k = 2 + (case % 2);
            let (r, c) = (1 + below(6) as usize, 1 + below(7) as usize);
            let shape: Vec<usize> = [r, c, 2][..k].to_vec();
            let n: usize = shape.iter().product();
            let strides: Vec<usize> = (0..k).map(|j| shape[j + 1..].iter().product()).collect();
            let count = below(40) as usize;
            let mut idx: Vec<i64> = (0..count * k)
                .map(|e| {
                    let size = shape[e % k] as i64;
                    below(2 * size as u64) as i64 - size
                })
                .collect();
            if case % 3 == 0 && count > 0 {
                let at = below((count * k) as u64) as usize;
                // Past the dim, far below it, and one that 32-bit arithmetic would see as 0.
                idx[at] = match (case / 3) % 3 {
                    0 => shape[at % k] as i64,
                    1 => i64::MIN,
                    _ => 1 << 32,
                };
            }
            let data: Vec<f32> = (0..n).map(|_| below(9) as f32 - 4.0).collect();
            let upd: Vec<f32> = (0..count).map(|_| below(9) as f32 - 4.0).collect();
            // The flat cell of each tuple, or the first refused tuple.
            let flat: Result<Vec<i64>, usize> = idx
                .chunks_exact(k)
                .enumerate()
                .map(|(e, t)| {
                    let mut off = 0i64;
                    for j in 0..k {
                        let size = shape[j] as i64;
                        let p = if t[j] < 0 {
                            t[j].wrapping_add(size)
                        } else {
                            t[j]
                        };
                        if !(0..size).contains(&p) {
                            return Err(e);
                        }
                        off += p * strides[j] as i64;
                    }
                    Ok(off)
                })
                .collect();
            let want = flat.and_then(|f| sequential(&data, &f, &upd));
            let dims: Vec<(usize, usize)> = shape.iter().copied().zip(strides).collect();
            let shifts: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
            let source = Tuples {
                idx: &idx,
                dims: &dims,
                shifts: &shifts,
                n,
                level: crate::isa::active_level(),
            };
            for (name, run) in schedules() {
                let (got, dest) = fed(&data, &source, &upd, &*run);
                same(&want, got, &dest, &format!("case {case}, {name}"));
            }
        }
    }
}
