//! Where the work runs: the [`Par`] setting and its global default, the context an operation
//! resolves it into once ([`Ctx`]: thread count and instruction-set level), the tasks a
//! kernel is cut into and who runs them (`pool`), and every tuning constant ([`tuning`]).
//!
//! Every parallel kernel partitions by *destination*: each task owns a disjoint set of output
//! cells and applies the updates that target them in index order. No atomics, no floating
//! point `reduce`/`fold` across threads, so the result is bit-identical for every thread count
//! (and equal to the sequential reference oracle).

pub mod isa;
#[cfg(feature = "parallel")]
mod pool;
pub(crate) mod tuning;

use std::num::NonZeroUsize;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use isa::Level;
use tuning::{MIN_PARALLEL_BYTES, MIN_TASK_BYTES};

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
    /// This many threads at most: small inputs still run on the calling thread, and no more
    /// threads run than the process has cores (the work is cut as for this many).
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
        0 => cores(),
        n => n,
    }
}

/// The cores available to the process, read once: `available_parallelism` reads the affinity
/// mask and cgroup limits, which costs more than a small operation.
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
}

/// What an operation resolves once, before it plans: how many threads it may use and the
/// instruction-set level its kernels run at. Every kernel and index pass of the call takes
/// it, so a call never re-reads the global default or the thread-local level.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ctx {
    /// At least 1.
    pub(crate) threads: usize,
    pub(crate) level: Level,
}

impl Ctx {
    /// The context for `par` on this thread, now.
    pub(crate) fn new(par: Par) -> Ctx {
        Ctx {
            threads: par.threads(),
            level: isa::active_level(),
        }
    }

    /// How many tasks to cut `bytes` of work into (see [`task_count`]).
    pub(crate) fn tasks(self, bytes: usize, per_thread: usize) -> usize {
        task_count(self.threads, bytes, per_thread)
    }

    /// Runs `f(t)` for every `t < tasks` on up to `self.threads` threads (see [`run_tasks`]).
    pub(crate) fn run(self, tasks: usize, f: impl Fn(usize) + Sync) {
        run_tasks(self.threads, tasks, f)
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
///
/// However many threads are asked for, no more run than there are tasks or cores: the tasks
/// (and so the result) are the same, and threads beyond the cores only cost their start.
pub(crate) fn run_tasks(threads: usize, tasks: usize, f: impl Fn(usize) + Sync) {
    let workers = threads.min(tasks).min(cores());
    if workers <= 1 {
        (0..tasks).for_each(f);
        return;
    }
    imp::run(workers, tasks, &f);
}

#[cfg(feature = "parallel")]
mod imp {
    use std::sync::{Arc, Mutex};

    use rayon::prelude::*;

    use super::pool;

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
            if pool::run(threads, tasks, f) {
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
