//! The fed fold: a single row of cells (`outer == 1`, `inner == 1`) folded by one task, in
//! index order, while a second task resolves and checks the indices a few chunks ahead of it.
//!
//! The single fold ([`elem_checked`](super::single_fold::elem_checked)) runs one loop on one core:
//! each update costs an index load, its sign fix-up and its bound check besides the
//! read-modify-write. Here the second core does that part: the *feeder* turns each chunk of
//! indices into `u32` cell numbers in a small ring, and the *folder* applies a chunk from the
//! ring when the feeder has published it, and straight from the indices (checking each, as
//! the single fold does) when it has not. The folder never waits for the feeder, so the
//! result and the time never depend on whether, when or on which thread the feeder runs:
//! with no second thread the folder is the single fold. Every cell still sees its updates in
//! index order, so the result is the sequential fold's, bit for bit.
//!
//! The feeder publishes a chunk only when it accepted every index in it; a rejected index is
//! found again by the folder, which checks the unpublished chunk itself and so names the
//! same first bad index as the index pass would. The row is folded in scratch and copied to
//! the destination only after the last update, so an error leaves the destination untouched.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicUsize, Ordering};

use super::single_fold::fold_run_checked;
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

/// The folder's state, as the feeder sees it.
const NOT_STARTED: u8 = 0;
const RUNNING: u8 = 1;
const FINISHED: u8 = 2;

/// The shared state of one call. Each flag sits on a cache line of its own ([`Line`]): the
/// folder's progress is read by the spinning feeder, and the feeder's flags by the folder.
struct Ring {
    /// `RING` slots of `CHUNK` cell numbers.
    cell: Box<[AtomicU32]>,
    /// Per slot: 1 + the chunk whose cell numbers it holds (all accepted), 0 for none.
    ready: Line<[AtomicUsize; RING]>,
    /// Chunks the folder has finished.
    consumed: Line<AtomicUsize>,
    /// [`NOT_STARTED`], [`RUNNING`] or [`FINISHED`].
    folder: Line<AtomicU8>,
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
                cell: (0..RING * CHUNK).map(|_| AtomicU32::new(0)).collect(),
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

/// The element scatter of one row (`outer == 1`, `inner == 1`) whose indices were *not*
/// checked: the row is copied into scratch (from the copy source, else from the
/// destination), folded there in index order by the calling thread while a second task
/// resolves the indices ahead of it, and copied out once every index was accepted.
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
    // SAFETY: the caller's contract, forwarded.
    unsafe { fed_with::<T, I, C>(job, dest, cx.level, |tasks| run_tasks(2, 2, tasks)) }
}

/// [`elem_fed`] with its two tasks (0 the folder, 1 the feeder) run by `run`, which must run
/// each exactly once before it returns, in any order, on any threads.
///
/// # Safety
/// As [`elem_fed`].
unsafe fn fed_with<T: Element, I: IndexInt, C: Combiner<T>>(
    job: &ElemJob<'_, T, I>,
    dest: DestPtr<'_, T>,
    level: Level,
    run: impl FnOnce(&(dyn Fn(usize) + Sync)),
) -> Result<(), usize> {
    let g = job.g;
    let n = g.n;
    let (idx, upd, shift) = job.single_row(FED_MAX_CELLS);
    let taken = Taken::take();
    let ring = taken.ring();
    let first_bad = AtomicUsize::new(usize::MAX);
    run(&|t| {
        if t != 0 {
            feed(ring, idx, n, shift);
            return;
        }
        ring.folder.0.store(RUNNING, Ordering::Release);
        // Marks the folder finished however it ends, so a feeder waiting for it stops (a
        // panic here, a bug, then reaches the caller instead of leaving the feeder spinning).
        let _finished = Finished(&ring.folder.0);
        let mut stage = Stage::<T>::take(n.max(1));
        match job.src {
            Some(src) => stage.0.extend_from_slice(&src[..n]),
            // SAFETY: the row is in the destination, initialised (contract) and ours; the
            // slice is dropped before the row is written.
            None => stage
                .0
                .extend_from_slice(unsafe { dest.slice_mut(g.dest_off, n) }),
        }
        let folded = fold::<T, I, C>(ring, &mut stage.0, idx, upd, job, level);
        match folded {
            // SAFETY: the row is in the destination and ours (contract); the scratch is a
            // separate buffer.
            Ok(()) => unsafe { dest.copy_in(g.dest_off, &stage.0) },
            Err(bad) => first_bad.store(bad, Ordering::Relaxed),
        }
    });
    match first_bad.into_inner() {
        usize::MAX => Ok(()),
        bad => Err(bad),
    }
}

/// The folder: every chunk in order, from the ring when the feeder published it, else from
/// the indices, checked. Returns the position of the first rejected index.
fn fold<T: Element, I: IndexInt, C: Combiner<T>>(
    ring: &Ring,
    cells: &mut [T],
    idx: &[I],
    upd: &[T],
    job: &ElemJob<'_, T, I>,
    level: crate::isa::Level,
) -> Result<(), usize> {
    let bounds = crate::index::accepted_range(cells.len(), job.policy);
    for (c, lo) in (0..idx.len()).step_by(CHUNK).enumerate() {
        let hi = (lo + CHUNK).min(idx.len());
        let slot = c % RING;
        if ring.ready.0[slot].load(Ordering::Acquire) == c + 1 {
            let at = &ring.cell[slot * CHUNK..slot * CHUNK + (hi - lo)];
            // SAFETY: the feeder published chunk `c` in this slot (the acquire load above
            // pairs with its release store, made after it wrote every number) only after
            // it found each of its cells below `n == cells.len()` (`feed`); it writes the
            // slot again only after `consumed` passes `c`, which is stored below.
            unsafe { fold_fed::<T, C>(level, cells, at, &upd[lo..hi]) };
        } else {
            fold_run_checked::<T, I, C>(
                level,
                cells,
                &idx[lo..hi],
                &upd[lo..hi],
                job.policy,
                bounds,
            )
            .map_err(|e| lo + e)?;
        }
        ring.consumed.0.store(c + 1, Ordering::Release);
    }
    Ok(())
}

/// The feeder: resolves chunk after chunk into the ring, at most [`RING`] chunks ahead of the
/// folder and never behind it, until every chunk is done, the folder has finished, or a
/// chunk holds a rejected index (left unpublished for the folder to find).
fn feed<I: IndexInt>(ring: &Ring, idx: &[I], n: usize, shift: i64) {
    let chunks = idx.len().div_ceil(CHUNK);
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
        let hi = (lo + CHUNK).min(idx.len());
        let slot = c % RING;
        let at = &ring.cell[slot * CHUNK..slot * CHUNK + (hi - lo)];
        let mut ok = true;
        for (a, x) in at.iter().zip(&idx[lo..hi]) {
            let p = crate::index::shifted_cell(x.to_i64_sat(), shift);
            ok &= p < n as u64;
            // `n <= FED_MAX_CELLS`: an accepted cell fits; a rejected chunk is not published.
            a.store(p as u32, Ordering::Relaxed);
        }
        if !ok {
            return;
        }
        ring.ready.0[slot].store(c + 1, Ordering::Release);
        c += 1;
    }
}

crate::kernels::simd::multiversion! {
    if (const { crate::kernels::simd::isa_folds::<T, C>() })
    /// `cells[at[j]] = C(cells[at[j]], upd[j])` for one published chunk, in order. One
    /// version per instruction set: the canonical-NaN select of the float combines is one
    /// blend with AVX instead of four SSE2 mask operations.
    ///
    /// Contract: every `at[j] < cells.len()`, and nothing writes `at` during the call.
    unsafe fn fold_fed<T: Element, C: Combiner<T>>(
        cells: &mut [T],
        at: &[AtomicU32],
        upd: &[T],
    ) -> () {
        for (a, &u) in at.iter().zip(upd) {
            // SAFETY: the cell is in bounds (contract).
            let c = unsafe { crate::kernels::at_mut(cells, a.load(Ordering::Relaxed) as usize) };
            *c = C::combine(*c, u);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{IndexPolicy, NegativeIndices, OutOfRange};
    use crate::kernels::scatter::ElemGeom;
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

    /// Runs the fed fold with `run` scheduling its two tasks; returns the destination.
    fn fed(
        data: &[f32],
        idx: &[i64],
        upd: &[f32],
        run: impl FnOnce(&(dyn Fn(usize) + Sync)),
    ) -> (Result<(), usize>, Vec<f32>) {
        let g = ElemGeom {
            outer: 1,
            n: data.len(),
            inner: 1,
            k: idx.len(),
            dest_off: 0,
        };
        let job = ElemJob {
            g,
            idx,
            upd,
            src: Some(data),
            policy: IndexPolicy::new(NegativeIndices::Wrap, OutOfRange::Error),
            fill: None,
            staged: false,
        };
        let mut dest = vec![-7.0f32; data.len()];
        // SAFETY: one row of `data.len()` cells, the default out-of-range rule, no fill;
        // `dest` covers the row and nothing else touches it.
        let r = unsafe {
            fed_with::<f32, i64, AddC>(
                &job,
                DestPtr::new(&mut dest),
                crate::isa::active_level(),
                run,
            )
        };
        (r, dest)
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
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut below = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
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
            for (name, run) in schedules() {
                let (got, dest) = fed(&data, &idx, &upd, run);
                match &want {
                    Ok(out) => {
                        assert_eq!(got, Ok(()), "case {case}, {name}");
                        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(out), bits(&dest), "case {case}, {name}");
                    }
                    Err(bad) => {
                        assert_eq!(got, Err(*bad), "case {case}, {name}");
                        assert!(dest.iter().all(|&v| v == -7.0), "written on error: {name}");
                    }
                }
            }
        }
    }
}
