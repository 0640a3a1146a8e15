//! The helper threads that run a parallel kernel's tasks beside the calling thread.
//!
//! A call's tasks are cut into one contiguous range per participant (the caller is
//! participant 0, helper `i` participant `i`). Each participant drains its own range first and
//! then helps with the others, claiming one task at a time from that range's counter, so every
//! task runs exactly once whoever runs it, and a helper that wakes late costs nothing: the
//! caller simply claims its tasks. The caller returns once every task is done.
//!
//! Why not a rayon scope or scoped threads: a scope returns only after each spawned job has
//! run, so a call waits for a sleeping worker to wake or for a fresh thread to start. Idle
//! helpers here spin for [`HELPER_SPIN`] before they sleep, so calls in quick succession find
//! them awake, and a call never waits for one that is not.
//!
//! The result never depends on who runs which task: every task owns disjoint output cells.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::tuning::{CALLER_SPIN, HELPER_SPIN, MAX_HELPERS};

/// The caller's task function, its lifetime erased.
type TaskFn = dyn Fn(usize) + Sync;

/// One call: its task function and one claim counter per participant's range.
struct Job {
    /// The caller's `f`, valid while the caller is inside [`run`], which it leaves only when
    /// `done == tasks`. It is called only for a task just claimed (so not yet done).
    f: *const TaskFn,
    /// `(next, end)`: range `p` is `[start, end)` and `next` the next task to claim in it.
    ranges: Vec<(AtomicUsize, usize)>,
    tasks: usize,
    done: AtomicUsize,
    /// Signalled by whoever finishes the last task, for a caller that stopped spinning.
    finished: Mutex<()>,
    finished_cv: Condvar,
    /// The first panic of a task, re-raised on the calling thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

// SAFETY: the only non-thread-safe field is the pointer to `f`, which is `Sync` and is
// dereferenced only while the caller keeps it alive (see `Job::work`).
unsafe impl Send for Job {}
// SAFETY: as above; every other field is `Sync`.
unsafe impl Sync for Job {}

impl Job {
    /// Claims and runs tasks until none is left, range `p` first, then the following ones.
    fn work(&self, p: usize) {
        let n = self.ranges.len();
        for q in (0..n).map(|i| (p + i) % n) {
            let (next, end) = &self.ranges[q];
            loop {
                // At most one claim per participant passes `end`, so this cannot wrap.
                let t = next.fetch_add(1, Ordering::Relaxed);
                if t >= *end {
                    break;
                }
                // SAFETY: task `t` is claimed and not yet counted done, so `done < tasks` and
                // the caller is still inside `run`, which borrows `f` for its whole body.
                let f = unsafe { &*self.f };
                if let Err(e) = panic::catch_unwind(AssertUnwindSafe(|| f(t))) {
                    lock(&self.panic).get_or_insert(e);
                }
                // Release: the task's writes happen before the caller sees it done.
                if self.done.fetch_add(1, Ordering::Release) + 1 == self.tasks {
                    // Under the lock, so a caller that has just found `done < tasks` is
                    // already waiting.
                    let _g = lock(&self.finished);
                    self.finished_cv.notify_one();
                }
            }
        }
    }
}

/// The current job, and how many helpers sleep waiting for the next one.
struct Slot {
    job: Option<Arc<Job>>,
    sleepers: usize,
}

struct Pool {
    slot: Mutex<Slot>,
    wake: Condvar,
    /// How many jobs were published; changed only under the `slot` lock, read without it by
    /// spinning helpers.
    epoch: AtomicUsize,
    /// Whether a caller is using the pool (one call at a time; others take another route).
    busy: AtomicBool,
    helpers: Mutex<usize>,
}

static POOL: Pool = Pool {
    slot: Mutex::new(Slot {
        job: None,
        sleepers: 0,
    }),
    wake: Condvar::new(),
    epoch: AtomicUsize::new(0),
    busy: AtomicBool::new(false),
    helpers: Mutex::new(0),
};

/// A lock that ignores poisoning: no code holding these locks can panic mid-update.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Helper `i`: waits for each new job (spinning, then asleep) and works on it from range `i`
/// when the job has that many participants.
fn helper(i: usize) {
    let mut seen = POOL.epoch.load(Ordering::Acquire);
    loop {
        let start = Instant::now();
        let mut spins = 0u32;
        while POOL.epoch.load(Ordering::Acquire) == seen {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(256) {
                if start.elapsed() >= HELPER_SPIN {
                    break;
                }
                // Gives way where there are more runnable threads than cores.
                std::thread::yield_now();
            }
        }
        let job = {
            let mut s = lock(&POOL.slot);
            while POOL.epoch.load(Ordering::Acquire) == seen {
                s.sleepers += 1;
                s = POOL.wake.wait(s).unwrap_or_else(PoisonError::into_inner);
                s.sleepers -= 1;
            }
            seen = POOL.epoch.load(Ordering::Acquire);
            s.job.clone()
        };
        if let Some(job) = job
            && i < job.ranges.len()
        {
            job.work(i);
        }
    }
}

/// Starts helpers until there are `n` (or as many as could be started); returns how many run.
fn ensure_helpers(n: usize) -> usize {
    let mut h = lock(&POOL.helpers);
    while *h < n.min(MAX_HELPERS) {
        let i = *h + 1;
        let b = std::thread::Builder::new().name(format!("tensor-scatter-{i}"));
        if b.spawn(move || helper(i)).is_err() {
            break;
        }
        *h = i;
    }
    *h
}

/// Runs `f(t)` for every `t < tasks` on the calling thread and up to `threads - 1` helpers;
/// returns `false` without running anything when another call holds the pool.
///
/// A panic of any task is re-raised here after every task has finished.
pub(crate) fn run(threads: usize, tasks: usize, f: &(dyn Fn(usize) + Sync)) -> bool {
    if POOL.busy.swap(true, Ordering::Acquire) {
        return false;
    }
    let parts = (ensure_helpers(threads - 1) + 1)
        .min(threads)
        .min(tasks)
        .max(1);
    let ranges = (0..parts)
        .map(|p| {
            let (a, b) = crate::shape::part(tasks, parts, p, 1);
            (AtomicUsize::new(a), b)
        })
        .collect();
    // SAFETY: only the lifetime bound changes (same layout). The pointer is dereferenced
    // only for claimed tasks, all of which finish before this function returns.
    let f: *const TaskFn =
        unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const TaskFn>(f) };
    let job = Arc::new(Job {
        f,
        ranges,
        tasks,
        done: AtomicUsize::new(0),
        finished: Mutex::new(()),
        finished_cv: Condvar::new(),
        panic: Mutex::new(None),
    });
    {
        let mut s = lock(&POOL.slot);
        s.job = Some(Arc::clone(&job));
        POOL.epoch.fetch_add(1, Ordering::Release);
        if s.sleepers > 0 {
            POOL.wake.notify_all();
        }
    }
    job.work(0);
    // Wait for the helpers' last tasks: spin briefly (a short call's helper is about to
    // finish), then sleep, so a long wait does not take a core (or a hyperthread sibling's
    // share of one) from the helpers still working.
    let start = Instant::now();
    let mut spins = 0u32;
    while job.done.load(Ordering::Acquire) < tasks {
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(64) && start.elapsed() >= CALLER_SPIN {
            let mut g = lock(&job.finished);
            while job.done.load(Ordering::Acquire) < tasks {
                g = job
                    .finished_cv
                    .wait(g)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            break;
        }
    }
    // A helper waking late may still take the job from the slot: it finds nothing to claim.
    lock(&POOL.slot).job = None;
    POOL.busy.store(false, Ordering::Release);
    if let Some(e) = lock(&job.panic).take() {
        panic::resume_unwind(e);
    }
    true
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// `super::run`, retried while other tests hold the pool.
    fn run(threads: usize, tasks: usize, f: &(dyn Fn(usize) + Sync)) {
        while !super::run(threads, tasks, f) {
            std::thread::yield_now();
        }
    }

    #[test]
    fn every_task_runs_once_for_any_thread_and_task_count() {
        for round in 0..50 {
            for threads in 1..=5 {
                for tasks in [1, 2, 3, 7, 64] {
                    let hits: Vec<AtomicUsize> = (0..tasks).map(|_| AtomicUsize::new(0)).collect();
                    run(threads, tasks, &|t| {
                        hits[t].fetch_add(1, Ordering::Relaxed);
                        if round % 2 == 1 && t == 0 {
                            // A slow first task: the other participants drain its range.
                            std::thread::sleep(std::time::Duration::from_micros(300));
                        }
                    });
                    assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
                }
            }
        }
    }

    #[test]
    fn a_task_panic_reaches_the_caller_after_the_other_tasks_and_the_pool_still_works() {
        let hits: Vec<AtomicUsize> = (0..16).map(|_| AtomicUsize::new(0)).collect();
        let r = std::panic::catch_unwind(|| {
            run(3, 16, &|t| {
                hits[t].fetch_add(1, Ordering::Relaxed);
                assert_ne!(t, 5, "task 5 fails");
            })
        });
        assert!(r.is_err());
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        let n = AtomicUsize::new(0);
        run(2, 4, &|_| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(n.load(Ordering::Relaxed), 4);
    }
}
