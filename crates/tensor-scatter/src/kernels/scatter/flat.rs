//! The flat offsets of ScatterND tuples that each address one element of a contiguous
//! destination (`x[r, c] += v`): one parallel pass that checks and resolves every tuple, so
//! that the element kernels run over the offsets as a 1-D index; and the same resolution a
//! chunk at a time ([`tuple_cells`]) for the fed fold, which takes pairs and triples itself.

use super::Stage;
use crate::exec::Ctx;
use crate::index::{IndexInt, negative_shift, shifted_cell};
use crate::index::{IndexPolicy, OutOfRange};
use crate::kernels::DestPtr;

crate::kernels::simd::multiversion! {
    /// Writes the offsets of the tuples of `idx` (`dims.len()` components each) to cells
    /// `at..` of `d` (those of refused tuples are garbage); whether every component was
    /// accepted.
    /// Branch-free; pairs and triples (`x[r, c] += v`, the common cases) have loops of their
    /// own with the components unrolled, in 32-bit arithmetic (exact for every accepted
    /// tuple: its offset lies below the destination's `i32::MAX` cells), which vectorise.
    ///
    /// # Safety
    /// `d` holds cells `at..at + idx.len() / dims.len()`, and no other thread writes them.
    unsafe fn resolve_block<I: IndexInt>(
        idx: &[I],
        dims: &[(usize, usize)],
        shifts: &[i64],
        d: DestPtr<'_, i32>,
        at: usize,
    ) -> bool {
        match (dims, shifts) {
            (&[a, b], &[sa, sb]) => {
                // SAFETY: the caller's contract, forwarded.
                unsafe { resolve_fixed(idx, [a, b], [sa, sb], d, at) }
            }
            (&[a, b, c], &[sa, sb, sc]) => {
                // SAFETY: the caller's contract, forwarded.
                unsafe { resolve_fixed(idx, [a, b, c], [sa, sb, sc], d, at) }
            }
            _ => {
                let mut ok = true;
                for (i, tuple) in idx.chunks_exact(dims.len()).enumerate() {
                    let mut off = 0u64;
                    for ((x, &(size, stride)), &shift) in tuple.iter().zip(dims).zip(shifts) {
                        let c = shifted_cell(x.to_i64_sat(), shift);
                        ok &= c < size as u64;
                        off = off.wrapping_add(c.wrapping_mul(stride as u64));
                    }
                    // SAFETY: the caller's contract: cell `at + i` is this call's.
                    unsafe { d.set(at + i, off as i32) };
                }
                ok
            }
        }
    }
}

/// [`resolve_block`] for tuples of `K` components.
///
/// # Safety
/// As [`resolve_block`].
#[inline(always)]
unsafe fn resolve_fixed<I: IndexInt, const K: usize>(
    idx: &[I],
    dims: [(usize, usize); K],
    shifts: [i64; K],
    d: DestPtr<'_, i32>,
    at: usize,
) -> bool {
    let mut ok = true;
    for (i, tuple) in idx.chunks_exact(K).enumerate() {
        let (off, good) = tuple_cell(tuple, &dims, &shifts);
        ok &= good;
        // SAFETY: the caller's contract: cell `at + i` is this call's.
        unsafe { d.set(at + i, off as i32) };
    }
    ok
}

/// The offset of one tuple of `K` components (`tuple[j]` a position along a dim of
/// `dims[j].0` cells at stride `dims[j].1`, negative ones shifted by `shifts[j]`), and
/// whether every component was accepted. In 32-bit arithmetic: exact for an accepted tuple
/// of a destination of at most `u32::MAX` cells; a refused tuple's offset is garbage.
#[inline(always)]
fn tuple_cell<I: IndexInt, const K: usize>(
    tuple: &[I],
    dims: &[(usize, usize); K],
    shifts: &[i64; K],
) -> (u32, bool) {
    let mut ok = true;
    let mut off = 0u32;
    for j in 0..K {
        let c = shifted_cell(tuple[j].to_i64_sat(), shifts[j]);
        ok &= c < dims[j].0 as u64;
        off = off.wrapping_add((c as u32).wrapping_mul(dims[j].1 as u32));
    }
    (off, ok)
}

crate::kernels::simd::multiversion! {
    /// The cells of the pairs or triples of `idx` (as [`tuple_cell`] takes them; other tuple
    /// lengths are refused) in a destination of `n` cells, into `out` (one per tuple);
    /// whether every tuple was accepted and lies below `n`. The fed fold's feeder and its
    /// folder's own checks ([`fed_fold`](super::fed_fold)).
    pub(crate) fn tuple_cells<I: IndexInt>(
        idx: &[I],
        dims: &[(usize, usize)],
        shifts: &[i64],
        n: usize,
        out: &mut [u32],
    ) -> bool {
        #[inline(always)]
        fn fixed<I: IndexInt, const K: usize>(
            idx: &[I],
            dims: &[(usize, usize); K],
            shifts: &[i64; K],
            n: usize,
            out: &mut [u32],
        ) -> bool {
            let mut ok = true;
            for (tuple, o) in idx.chunks_exact(K).zip(out) {
                let (off, good) = tuple_cell(tuple, dims, shifts);
                ok &= good & ((off as usize) < n);
                *o = off;
            }
            ok
        }
        match (dims, shifts) {
            (&[a, b], &[sa, sb]) => fixed(idx, &[a, b], &[sa, sb], n, out),
            (&[a, b, c], &[sa, sb, sc]) => fixed(idx, &[a, b, c], &[sa, sb, sc], n, out),
            _ => false,
        }
    }
}

/// Tuples per block between the looks at whether another task failed.
const BLOCK: usize = 1 << 14;

/// The flat offset of each of the `idx.len() / dims.len()` row-major tuples of `idx`, its
/// component `j` addressing a dim of `dims[j].0` cells at element stride `dims[j].1` (the
/// caller's destination, of at most `i32::MAX` cells, so every accepted offset fits).
/// `None` when `policy` refuses an index (the caller's exact pass then finds and reports the
/// first), when its out-of-range rule is not `Error` (clamped and skipped tuples take that
/// pass too), or when the memory cannot be had (that pass reports it).
///
/// The offsets are written into a kept staging buffer ([`Stage`]): fresh, their first touch
/// took as long as the pass itself, and from 4 to 33 ms for 1e7 pairs by the phase of the
/// machine's huge-page allocation (record/2026-11-29-pairs-and-in-place.md).
pub(crate) fn flat_offsets<I: IndexInt>(
    idx: &[I],
    dims: &[(usize, usize)],
    policy: IndexPolicy,
    cx: Ctx,
) -> Option<Stage<i32>> {
    let k = dims.len();
    if k == 0 || policy.out_of_range != OutOfRange::Error {
        return None;
    }
    let n = idx.len() / k;
    let shifts: Vec<i64> = dims
        .iter()
        .map(|&(size, _)| negative_shift(size, policy.negative))
        .collect();
    let failed = std::sync::atomic::AtomicBool::new(false);
    let tasks = cx.tasks(std::mem::size_of_val(idx), 1);
    let resolve = |d: DestPtr<'_, i32>| {
        cx.run(tasks, |t| {
            let (a, b) = crate::shape::part(n, tasks, t, 1);
            for start in (a..b).step_by(BLOCK) {
                if failed.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                let end = (start + BLOCK).min(b);
                // SAFETY: `start..end` lies in `a..b`, which task `t` alone owns, within `n`.
                let ok = unsafe {
                    resolve_block(cx.level, &idx[start * k..end * k], dims, &shifts, d, start)
                };
                if !ok {
                    failed.store(true, std::sync::atomic::Ordering::Relaxed);
                    return;
                }
            }
        });
        match failed.load(std::sync::atomic::Ordering::Relaxed) {
            true => Err(()),
            false => Ok(()),
        }
    };
    let mut stage = Stage::<i32>::try_take(n)?;
    resolve(DestPtr::spare(&mut stage.0, n)).ok()?;
    // SAFETY: the capacity is at least `n`, and without a failure the tasks covered `0..n`
    // (`part` cuts it into `tasks` disjoint ranges, each written whole), so every cell was
    // written.
    unsafe { stage.0.set_len(n) };
    Some(stage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::Par;
    use crate::index::NegativeIndices;

    #[test]
    fn offsets_and_refusals() {
        // Pairs into a 3 x 5 table (strides 5, 1): wrapped negatives, at 1 and 2 threads.
        let idx: Vec<i64> = vec![0, 0, 2, 4, -1, -5, 1, 3];
        let dims = [(3, 5), (5, 1)];
        let wrap = IndexPolicy::default();
        for threads in [1, 2] {
            let cx = Ctx::new(Par::threads_exact(threads));
            assert_eq!(
                flat_offsets(&idx, &dims, wrap, cx).unwrap().0,
                [0, 14, 10, 8]
            );
            let narrow: Vec<i16> = idx.iter().map(|&v| v as i16).collect();
            assert_eq!(
                flat_offsets(&narrow, &dims, wrap, cx).unwrap().0,
                [0, 14, 10, 8]
            );
            let triples: Vec<i32> = vec![1, 2, 3, -1, -1, -1];
            let cube = [(2, 20), (4, 5), (5, 1)];
            assert_eq!(flat_offsets(&triples, &cube, wrap, cx).unwrap().0, [33, 39]);
            // Four components take the general loop; a bad last component is refused there.
            let quads: Vec<i64> = vec![1, 0, 2, 1, -1, -1, -1, -1];
            let hyper = [(2, 24), (2, 12), (3, 4), (4, 1)];
            assert_eq!(flat_offsets(&quads, &hyper, wrap, cx).unwrap().0, [33, 47]);
            assert!(flat_offsets(&[0i64, 0, 0, 4], &hyper, wrap, cx).is_none());
            // Pairs and triples refuse a bad component in any place, as 32-bit sums might hide.
            assert!(flat_offsets(&[0i64, 1 << 32], &dims, wrap, cx).is_none());
            assert!(flat_offsets(&[1i32, 4, 0], &cube, wrap, cx).is_none());
            let strict = IndexPolicy::new(NegativeIndices::Error, OutOfRange::Error);
            assert!(flat_offsets(&idx, &dims, strict, cx).is_none());
            let clamp = IndexPolicy::new(NegativeIndices::Wrap, OutOfRange::Clamp);
            assert!(flat_offsets(&idx[..2], &dims, clamp, cx).is_none());
            for bad in [3, -4, 5, i64::MIN, i64::MAX] {
                let mut b = idx.clone();
                b[if bad == 5 { 7 } else { 6 }] = bad;
                assert!(flat_offsets(&b, &dims, wrap, cx).is_none(), "{bad}");
            }
        }
    }
}
