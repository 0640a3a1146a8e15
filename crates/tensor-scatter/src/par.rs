//! Deterministic parallelism: the [`Par`] setting, its global default, and the one place where
//! the sequential thresholds live.
//!
//! Every parallel kernel partitions by *destination*: each task owns a disjoint set of output
//! cells and applies the updates that target them in index order. No atomics, no floating
//! point `reduce`/`fold` across threads, so the result is bit-identical for every thread count
//! (and equal to the sequential reference oracle).

pub(crate) use crate::shape::part;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Whether the thresholds below take their small values, so that small inputs go through
/// every parallel split, tile, stage and ring: in the unit tests, and in builds made with
/// `RUSTFLAGS="--cfg tensor_scatter_small_thresholds"` (`fuzz/run.sh --small`, and the
/// integration tests when run that way). Results never depend on it; only speed does, so
/// it is never for production builds.
pub(crate) const SMALL_THRESHOLDS: bool = cfg!(any(test, tensor_scatter_small_thresholds));

/// Work below this many bytes of traffic (destination plus updates) runs on the calling
/// thread: below it a parallel call costs more than it saves.
pub(crate) const MIN_PARALLEL_BYTES: usize = if SMALL_THRESHOLDS { 0 } else { 1 << 18 };

/// A task of a parallel kernel should move at least this many bytes (keeps per-task overhead
/// below a few percent).
pub(crate) const MIN_TASK_BYTES: usize = if SMALL_THRESHOLDS { 1 } else { 1 << 16 };

/// A destination tile of the element-scatter kernel fits in this many bytes, so it stays in
/// L2 while the index and update rows stream through.
pub(crate) const TILE_BYTES: usize = if SMALL_THRESHOLDS { 16 } else { 1 << 20 };

/// A single-block element scatter (`outer == 1`) with at least as many index bytes as block
/// bytes is folded by one task, its indices checked by the fold, up to this many block bytes
/// divided by the thread count ([`fold_max_bytes`]); past it the buckets win.
pub(crate) const FOLD_BUDGET_BYTES: usize = if SMALL_THRESHOLDS { 64 } else { 4 << 20 };

/// The split fold ([`elem_split`](crate::kernels::scatter::elem_split)) takes a single row
/// of at most this many bytes per thread, with at most [`SPLIT_MAX_PARTS`] threads (8-byte
/// indices only above [`FED_ANY_ROW_THREADS`] threads and [`fold_max_bytes`]): past it each
/// task's part no longer fits the cache.
pub(crate) const SPLIT_PART_BYTES: usize = if SMALL_THRESHOLDS { 64 } else { 2 << 20 };

/// Up to this many threads the fed fold ([`elem_fed`](crate::kernels::scatter::elem_fed))
/// takes single rows of any size that the split fold does not (8-byte indices, rows past
/// `threads` × [`SPLIT_PART_BYTES`]); it uses two threads, so above that it keeps to the
/// single fold's budget.
pub(crate) const FED_ANY_ROW_THREADS: usize = 2;

/// The most parts the split fold cuts a row into: every task reads every index, so beyond a
/// few tasks the reads outgrow the updates each task applies (measured only at 2 threads
/// here; with more than this many threads a row takes the single fold or the buckets).
pub(crate) const SPLIT_MAX_PARTS: usize = 4;

/// The largest block folded by one task for `threads` threads (see [`FOLD_BUDGET_BYTES`]):
/// the bucketed kernel's cost per update falls with the thread count, the single fold's does
/// not.
pub(crate) fn fold_max_bytes(threads: usize) -> usize {
    (FOLD_BUDGET_BYTES / threads.max(1)).max(TILE_BYTES)
}

/// An element scatter whose tiles are whole rows (a block of `n * inner` cells fits a tile)
/// stages them (builds each block in scratch, then streams it out) when the copy of `data` is
/// fused and the destination has at least this many bytes: streamed lines skip the
/// read-for-ownership, while a smaller destination is better left in cache for its reader
/// (0 with [`SMALL_THRESHOLDS`], so small inputs take the staged path).
pub(crate) const STREAM_MIN_BYTES: usize = if SMALL_THRESHOLDS { 0 } else { 8 << 20 };

/// A slice scatter's task (ScatterND, ScatterUpdate) copies its destination range from `data`
/// with non-temporal stores when the range has at least this many bytes (64 with
/// [`SMALL_THRESHOLDS`], where the property tests take both copies): the streamed copy skips the
/// read-for-ownership of every line, while the cached one leaves the range in cache for the
/// slices applied after it.
pub(crate) const RANGE_STREAM_MIN_BYTES: usize = if SMALL_THRESHOLDS { 64 } else { 8 << 20 };

/// Slice scatters with `none` drop the tuples that a later tuple overwrites (so their updates
/// are never read) when each tuple moves at least this many cells: the bookkeeping, a bit per
/// possible offset, then costs little against the copies it can save (0 with [`SMALL_THRESHOLDS`], so
/// their small inputs go through it).
pub(crate) const DEDUP_MIN_CELLS: usize = if SMALL_THRESHOLDS { 0 } else { 512 };

/// Cells per cache line, the alignment of task boundaries (1 or 2 with [`SMALL_THRESHOLDS`], so
/// their small inputs are cut into many tiles).
pub(crate) fn line_cells<T>() -> usize {
    let line = if SMALL_THRESHOLDS { 4 } else { 64 };
    (line / std::mem::size_of::<T>().max(1)).max(1)
}

/// How many threads an operation may use.
///
/// `Auto` (the default) uses the global default set by [`set_default_threads`], which itself
/// defaults to every core. The result never depends on this setting: kernels partition by
/// destination, so any thread count gives bit-identical output.
///
/// ```
/// use tensor_scatter::Par;
/// assert_eq!(Par::Sequential.threads(), 1);
/// assert_eq!(Par::threads_exact(3).threads(), 3);
/// assert!(Par::Auto.threads() >= 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Par {
    /// The global default ([`default_threads`]).
    #[default]
    Auto,
    /// The calling thread only.
    Sequential,
    /// Exactly this many threads (at most; small inputs still run on the calling thread).
    Threads(NonZeroUsize),
}

impl Par {
    /// `Par::Threads(n)`, with `0` meaning [`Par::Auto`].
    pub fn threads_exact(n: usize) -> Par {
        NonZeroUsize::new(n).map_or(Par::Auto, Par::Threads)
    }

    /// The thread count this setting resolves to now (at least 1).
    pub fn threads(self) -> usize {
        match self {
            Par::Auto => default_threads(),
            Par::Sequential => 1,
            Par::Threads(n) => n.get(),
        }
    }
}

/// 0 = "every core".
static DEFAULT_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Sets the thread count [`Par::Auto`] resolves to; `0` restores "every core".
///
/// ```
/// use tensor_scatter::{default_threads, set_default_threads};
/// set_default_threads(1);
/// assert_eq!(default_threads(), 1);
/// set_default_threads(0);
/// assert!(default_threads() >= 1);
/// ```
pub fn set_default_threads(n: usize) {
    DEFAULT_THREADS.store(n, Ordering::Relaxed);
}

/// The thread count [`Par::Auto`] resolves to: the value given to [`set_default_threads`],
/// or the number of cores available to the process.
pub fn default_threads() -> usize {
    match DEFAULT_THREADS.load(Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        n => n,
    }
}

/// How many tasks to cut `bytes` of work into for `threads` threads: 1 below the thresholds,
/// else a few per thread (for balance) but none smaller than [`MIN_TASK_BYTES`].
#[allow(clippy::absurd_extreme_comparisons)] // the threshold is 0 in the unit-test build
pub(crate) fn task_count(threads: usize, bytes: usize, per_thread: usize) -> usize {
    if threads <= 1 || bytes < MIN_PARALLEL_BYTES {
        return 1;
    }
    (threads * per_thread).min(bytes / MIN_TASK_BYTES).max(1)
}

/// Runs `f(t)` for every `t < tasks`, on up to `threads` threads. Which thread runs which task
/// is unspecified; callers make every task own disjoint destination cells, so the order does
/// not matter.
///
/// Called from inside a rayon pool (a caller's own parallel code), the tasks join that pool.
/// Called from outside, the calling thread and up to `threads - 1` persistent helper threads
/// share them (`pool`): each drains its own range of tasks and then helps with the others',
/// and idle helpers spin briefly before they sleep, so a call neither starts a thread nor
/// waits for a sleeping one to wake. A call made while another holds the helpers starts
/// scoped threads. The pool gets `f` as a `dyn Fn`, so the pool, rayon and the scoped threads
/// are compiled once, not once per kernel closure.
pub(crate) fn run_tasks(threads: usize, tasks: usize, f: impl Fn(usize) + Sync) {
    if threads <= 1 || tasks <= 1 {
        (0..tasks).for_each(f);
        return;
    }
    imp::run(threads.min(tasks), tasks, &f);
}

#[cfg(feature = "parallel")]
mod imp {
    use std::sync::{Arc, Mutex};

    use rayon::prelude::*;

    /// Pools for explicit thread counts other than the global pool's, built once each.
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());

    fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
        let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
            return Some(Arc::clone(p));
        }
        let p = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("tensor-scatter-{i}"))
                .build()
                .ok()?,
        );
        pools.push((threads, Arc::clone(&p)));
        Some(p)
    }

    pub(super) fn run(threads: usize, tasks: usize, f: &(dyn Fn(usize) + Sync)) {
        if rayon::current_thread_index().is_none() {
            if crate::pool::run(threads, tasks, f) {
                return;
            }
            // Another call holds the helpers: this one starts its own threads.
            std::thread::scope(|sc| {
                let mut unstarted = Vec::new();
                for w in 1..threads {
                    let b = std::thread::Builder::new().name(format!("tensor-scatter-{w}"));
                    if b.spawn_scoped(sc, move || (w..tasks).step_by(threads).for_each(f))
                        .is_err()
                    {
                        unstarted.push(w); // no thread: its tasks run here, once
                    }
                }
                (0..tasks).step_by(threads).for_each(f);
                for w in unstarted {
                    (w..tasks).step_by(threads).for_each(f);
                }
            });
            return;
        }
        let body = || (0..tasks).into_par_iter().with_max_len(1).for_each(f);
        if rayon::current_num_threads() == threads {
            body(); // the current pool (the global one outside any pool) has the right size
        } else if let Some(p) = pool(threads) {
            p.install(body);
        } else {
            // No threads could be started: the same tasks, in order, on this thread.
            (0..tasks).for_each(f);
        }
    }
}

#[cfg(not(feature = "parallel"))]
mod imp {
    pub(super) fn run(_threads: usize, tasks: usize, f: &(dyn Fn(usize) + Sync)) {
        (0..tasks).for_each(f);
    }
}
