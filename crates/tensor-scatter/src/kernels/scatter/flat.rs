//! The flat offsets of ScatterND tuples that each address one element of a contiguous
//! destination (`x[r, c] += v`): one parallel pass that checks and resolves every tuple, so
//! that the element kernels run over the offsets as a 1-D index.

use crate::exec::Ctx;
use crate::index::{IndexInt, negative_shift, shifted_cell};
use crate::index::{IndexPolicy, OutOfRange};
use crate::kernels::{DestPtr, build_vec};

crate::kernels::simd::multiversion! {
    /// Writes the offsets of the tuples of `idx` (`dims.len()` components each) to cells
    /// `at..` of `d` (those of refused tuples are garbage); whether every component was
    /// accepted. Branch-free, so it vectorises (with AVX2, the loop over the components ran
    /// as fast as one written for pairs alone).
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

/// Tuples per block between the looks at whether another task failed.
const BLOCK: usize = 1 << 14;

/// The flat offset of each of the `idx.len() / dims.len()` row-major tuples of `idx`, its
/// component `j` addressing a dim of `dims[j].0` cells at element stride `dims[j].1` (the
/// caller's destination, of at most `i32::MAX` cells, so every accepted offset fits).
/// `None` when `policy` refuses an index (the caller's exact pass then finds and reports the
/// first), when its out-of-range rule is not `Error` (clamped and skipped tuples take that
/// pass too), or when the memory cannot be had (that pass reports it).
pub(crate) fn flat_offsets<I: IndexInt>(
    idx: &[I],
    dims: &[(usize, usize)],
    policy: IndexPolicy,
    cx: Ctx,
) -> Option<Vec<i32>> {
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
    // SAFETY: without a failure the tasks covered `0..n` (`part` cuts it into `tasks`
    // disjoint ranges, each written whole), so every cell was written; a failure keeps
    // nothing.
    unsafe { build_vec(n, |_| (), resolve) }.ok()
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
            assert_eq!(flat_offsets(&idx, &dims, wrap, cx).unwrap(), [0, 14, 10, 8]);
            let narrow: Vec<i16> = idx.iter().map(|&v| v as i16).collect();
            assert_eq!(
                flat_offsets(&narrow, &dims, wrap, cx).unwrap(),
                [0, 14, 10, 8]
            );
            let triples: Vec<i32> = vec![1, 2, 3, -1, -1, -1];
            let cube = [(2, 20), (4, 5), (5, 1)];
            assert_eq!(flat_offsets(&triples, &cube, wrap, cx).unwrap(), [33, 39]);
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
