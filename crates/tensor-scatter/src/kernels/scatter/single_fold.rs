//! The single fold: one whole-row block folded in scratch by one task, its indices checked as
//! the fold reads them.

use crate::dtype::Element;
use crate::exec::Ctx;
use crate::index::{IndexInt, IndexPolicy, resolve_accepted};
use crate::kernels::DestPtr;
use crate::reduce::Combiner;

use super::{ElemJob, Stage};

/// The element scatter of a single whole-row block (`outer == 1`) whose indices were *not*
/// checked by an index pass: the block is copied into a scratch buffer (from the copy source,
/// else from the destination), every index is checked as the fold reads it (first by the
/// identity fill's pass when there is one), and the destination is written, in one copy of
/// the block, only once every index was accepted. It replaces the index pass, which would read the
/// indices once more before the fold; the plan takes it when the indices outweigh the block.
///
/// Returns the flat position of the first rejected index; the destination
/// is then untouched.
///
/// # Safety
/// `job.g.outer == 1`; `dest` covers cells `[dest_off, dest_off + n * inner)`, initialised
/// when `job.src` is `None`, and nothing else touches them during the call.
pub(crate) unsafe fn elem_checked<T: Element, I: IndexInt, C: Combiner<T>>(
    job: &ElemJob<'_, T, I>,
    dest: DestPtr<'_, T>,
    cx: Ctx,
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
    let idx = &job.idx[..count];
    let upd = &job.upd[..count];
    let (lo, hi) = crate::index::accepted_range(n, job.policy);
    let policy = job.policy;
    if let Some(id) = job.fill {
        // The identity fill reads every index before the fold: it checks them first.
        // By rows, as the fold below: no division per index.
        for (kk, irow) in idx.chunks_exact(inner).enumerate() {
            for (j, x) in irow.iter().enumerate() {
                let v = x.to_i64_sat();
                if v < lo || v > hi {
                    return Err(kk * inner + j);
                }
                if let Some(p) = resolve_accepted(v, n, policy) {
                    sc[p * inner + j] = id;
                }
            }
        }
    }
    // The fold checks every index (again, after a fill pass: one compare each).
    if inner == 1 {
        fold_run_checked::<T, I, C>(cx.level, sc, idx, upd, policy, (lo, hi))?;
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

crate::kernels::simd::multiversion! {
    if (const { crate::kernels::simd::isa_folds::<T, C>() })
    /// The column tiles' `fold_run` over indices not checked yet: each is checked against the
    /// accepted range `[lo, hi]` before its update is applied; the first rejected one stops
    /// the fold and its position is returned. Kept out of line: inlined into
    /// [`elem_checked`], its loop kept two of its pointers on the stack. One version per
    /// instruction set, as `fold_run`.
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
