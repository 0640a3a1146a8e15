//! Output a kernel's tasks write row by row, either over values the caller already holds or
//! over fresh memory that each row initialises when it is first handed out.
//!
//! A fresh output filled before the kernel runs is written twice, and its pages are first
//! touched (faulted in and cleared by the OS) by the filling pass instead of the task that
//! writes them. [`build_rows`] hands the kernel the uninitialised capacity instead: a row is
//! filled with a value only as it is handed out, in the cache of the task about to overwrite
//! it. Which cells were initialised is counted per piece, so the vector is only made whole
//! when every cell was; the API is safe whatever the caller does.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A task's share of an output: `init` cells that hold values, or fresh cells initialised
/// row by row (split into disjoint pieces with [`split_at_mut`](Rows::split_at_mut)).
pub(crate) struct Rows<'a, T: Copy> {
    cells: Cells<'a, T>,
}

enum Cells<'a, T> {
    Init(&'a mut [T]),
    Fresh {
        cells: &'a mut [MaybeUninit<T>],
        fill: T,
        /// Cells `..next` are initialised.
        next: usize,
        /// Where the piece adds `next` when it is dropped.
        done: &'a AtomicUsize,
    },
}

impl<'a, T: Copy> Rows<'a, T> {
    /// Over cells that hold values (a fold that starts from them reads them).
    pub(crate) fn init(cells: &'a mut [T]) -> Self {
        Rows {
            cells: Cells::Init(cells),
        }
    }

    /// The number of cells.
    pub(crate) fn len(&self) -> usize {
        match &self.cells {
            Cells::Init(c) => c.len(),
            Cells::Fresh { cells, .. } => cells.len(),
        }
    }

    /// Cells `..mid` and `mid..`.
    ///
    /// # Panics
    /// When `mid > self.len()`.
    pub(crate) fn split_at_mut(mut self, mid: usize) -> (Self, Self) {
        match &mut self.cells {
            Cells::Init(c) => {
                let (a, b) = std::mem::take(c).split_at_mut(mid);
                (Rows::init(a), Rows::init(b))
            }
            Cells::Fresh {
                cells,
                fill,
                next,
                done,
            } => {
                // The parent gives its cells and its count to the pieces (it adds 0 when dropped).
                let (a, b) = std::mem::take(cells).split_at_mut(mid);
                let (n, fill, done) = (std::mem::take(next), *fill, *done);
                let piece = |cells, next| Rows {
                    cells: Cells::Fresh {
                        cells,
                        fill,
                        next,
                        done,
                    },
                };
                (piece(a, n.min(mid)), piece(b, n.saturating_sub(mid)))
            }
        }
    }

    /// Cells `at..at + w`, initialised: fresh cells (and any not handed out before them) get
    /// the fill value first.
    ///
    /// # Panics
    /// When `at + w > self.len()`.
    #[inline]
    pub(crate) fn row(&mut self, at: usize, w: usize) -> &mut [T] {
        match &mut self.cells {
            Cells::Init(c) => &mut c[at..at + w],
            Cells::Fresh {
                cells, fill, next, ..
            } => {
                let end = at + w;
                if end > *next {
                    for c in &mut cells[*next..end] {
                        c.write(*fill);
                    }
                    *next = end;
                }
                let row = &mut cells[at..end];
                // SAFETY: cells `..next` are initialised (written above or by an earlier
                // call) and `end <= next`; `MaybeUninit<T>` has `T`'s layout, and the
                // returned borrow keeps `self` (and so the cells) borrowed.
                unsafe { &mut *(row as *mut [MaybeUninit<T>] as *mut [T]) }
            }
        }
    }

    /// `f(row, cells)` for each of `rows` rows of `k` cells, the rows cut into one contiguous
    /// piece per task of `ctx` (each row's cells handed out as [`Rows::row`] does).
    pub(crate) fn by_rows(
        self,
        ctx: crate::exec::Ctx,
        rows: usize,
        k: usize,
        f: &(dyn Fn(usize, &mut [T]) + Sync),
    ) where
        T: Send,
    {
        let bytes = rows
            .saturating_mul(k)
            .saturating_mul(std::mem::size_of::<T>());
        let tasks = ctx.tasks(bytes, 1).clamp(1, rows.max(1));
        let mut pieces = Vec::with_capacity(tasks);
        let mut rest = self;
        for t in 0..tasks {
            let (lo, hi) = crate::shape::part(rows, tasks, t, 1);
            let (piece, after) = rest.split_at_mut((hi - lo) * k);
            pieces.push(std::sync::Mutex::new((lo..hi, piece)));
            rest = after;
        }
        ctx.run(tasks, |t| {
            let mut piece = pieces[t].lock().unwrap_or_else(|e| e.into_inner());
            let (range, cells) = &mut *piece;
            for (i, row) in range.clone().enumerate() {
                f(row, cells.row(i * k, k));
            }
        });
    }
}

impl<T: Copy> Drop for Rows<'_, T> {
    fn drop(&mut self) {
        if let Cells::Fresh { next, done, .. } = &self.cells {
            done.fetch_add(*next, Ordering::Release);
        }
    }
}

/// A vector of `n` cells built by `f` from fresh [`Rows`] whose rows start as `fill`. The
/// memory is allocated fallibly (`oom(bytes)` otherwise) and advised to use huge pages.
///
/// # Panics
/// When `f` returns `Ok` without having handed out every cell (a kernel's bug; the vector is
/// never made of uninitialised cells).
pub(crate) fn build_rows<T: Copy, E>(
    n: usize,
    fill: T,
    oom: impl FnOnce(usize) -> E,
    f: impl FnOnce(Rows<'_, T>) -> Result<(), E>,
) -> Result<Vec<T>, E> {
    let Some(mut v) = super::try_vec_with_huge_pages(n) else {
        return Err(oom(n.saturating_mul(std::mem::size_of::<T>())));
    };
    let done = AtomicUsize::new(0);
    f(Rows {
        cells: Cells::Fresh {
            cells: &mut v.spare_capacity_mut()[..n],
            fill,
            next: 0,
            done: &done,
        },
    })?;
    // Every piece borrowed `v` for no longer than `f`, so each has been dropped (adding its
    // initialised prefix) or leaked (adding nothing); the pieces are disjoint.
    let initialised = done.load(Ordering::Acquire);
    assert_eq!(
        initialised, n,
        "internal error: a kernel left output cells unwritten"
    );
    // SAFETY: the capacity is at least `n`, and the disjoint pieces' initialised prefixes
    // add up to `n` cells, so every one of the first `n` cells is initialised.
    unsafe { v.set_len(n) };
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_fill_every_cell_once_handed_out() {
        let v = build_rows(
            10,
            7u32,
            |_| (),
            |r| {
                let (mut a, mut b) = r.split_at_mut(4);
                a.row(1, 2).copy_from_slice(&[1, 2]); // cell 0 gets the fill value on the way
                a.row(3, 1)[0] = 3;
                b.row(0, 6).fill(9);
                b.row(2, 1)[0] = 5; // handed out again: keeps what was written
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(v, [7, 1, 2, 3, 9, 9, 5, 9, 9, 9]);
        let init = &mut [1u8, 2, 3][..];
        let (mut a, _) = Rows::init(init).split_at_mut(2);
        assert_eq!(a.row(0, 2), [1, 2]);
    }

    #[test]
    #[should_panic(expected = "unwritten")]
    fn rows_left_unwritten_are_never_read() {
        let _ = build_rows(
            10,
            0u8,
            |_| (),
            |r| {
                let (mut a, b) = r.split_at_mut(5);
                a.row(0, 5);
                std::mem::forget(b);
                Ok(())
            },
        );
    }
}
