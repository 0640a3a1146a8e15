//! The split fold: a single row of cells (`outer == 1`, `inner == 1`: a 1-D scatter, or a
//! last-axis scatter of one row) cut into one contiguous part per task, each task scanning
//! *every* update and applying, in index order, those that land in its part.
//!
//! One task folding a whole row runs one loop on one core; cutting the row gives each core
//! about half the updates to apply, at the price of every task reading every index. The
//! selection is vectorised for `int32` and `int64` indices: eight indices are resolved,
//! range-checked and left-packed (`vpermd` from a table of the 256 masks) in a handful of
//! instructions; the baseline level packs branch-free, one at a time. The plan takes it where
//! it measured faster (DESIGN.md, "Kernels: which runs when").
//!
//! Every index is checked by every task's scan, with the same test, so each task knows on its
//! own whether the whole call is valid: a task that reached the end publishes its part (the
//! copy from its scratch buffer), and on a rejected index every task stops and none writes.

use super::{ElemJob, Stage};
use crate::dtype::{DType, Element};
use crate::exec::Ctx;
use crate::exec::tuning::{SPLIT_BATCH as BATCH, line_cells};
use crate::index::IndexInt;
use crate::kernels::DestPtr;
use crate::reduce::Combiner;
use crate::shape::part;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The vector scan stores 8 lanes past its count.
const SLACK: usize = 8;

/// A batch's selections: the cell (relative to the part) and the update (relative to the
/// batch) of each update that lands in the part, in index order.
struct Picked {
    cell: [u32; BATCH + SLACK],
    upd: [u32; BATCH + SLACK],
}

/// The largest row the split fold takes (cell numbers are resolved in 32-bit lanes).
pub(crate) const SPLIT_MAX_CELLS: usize = i32::MAX as usize;

/// The element scatter of one row (`outer == 1`, `inner == 1`) whose indices were *not*
/// checked, folded by one task per thread of `cx`, each owning a contiguous part of the row: the part is
/// copied into scratch (from the copy source, else from the destination), every update is
/// scanned and those of the part applied in index order, and the part is copied out once the
/// scan has accepted every index. Bit-identical to the sequential fold: each cell sees its
/// updates in index order.
///
/// Returns the flat position of the first rejected index; the destination
/// is then untouched.
///
/// # Safety
/// `job.g.outer == 1`, `job.g.inner == 1`, `job.g.n <= SPLIT_MAX_CELLS`, the policy's
/// out-of-range rule is `Error` and there is no identity fill; `dest` covers cells
/// `[dest_off, dest_off + n)`, initialised when `job.src` is `None`, and nothing else touches
/// them during the call.
pub(crate) unsafe fn elem_split<T: Element, I: IndexInt, C: Combiner<T>>(
    job: &ElemJob<'_, T, I>,
    dest: DestPtr<'_, T>,
    cx: Ctx,
) -> Result<(), usize> {
    let g = job.g;
    let n = g.n;
    let (idx, upd, shift) = job.single_row(SPLIT_MAX_CELLS);
    let level = cx.level;
    let line = line_cells::<T>();
    let parts = cx.threads;
    let first_bad = AtomicUsize::new(usize::MAX);
    cx.run(parts, |t| {
        let (c0, c1) = part(n, parts, t, line);
        let mut stage = Stage::<T>::take((c1 - c0).max(1));
        match job.src {
            Some(src) => stage.0.extend_from_slice(&src[c0..c1]),
            // SAFETY: the part is in the destination, initialised (contract) and this
            // task's; the slice is dropped before the part is written.
            None => stage
                .0
                .extend_from_slice(unsafe { dest.slice_mut(g.dest_off + c0, c1 - c0) }),
        }
        match fold_part::<T, I, C>(&mut stage.0, c0, n, shift, idx, upd, level) {
            // Every index was accepted (the scan saw them all), so no task will reject one:
            // publish the part.
            // SAFETY: the part is in the destination and this task's (contract, `split`
            // cuts disjoint parts); the scratch is a separate buffer.
            Ok(()) => unsafe { dest.copy_in(g.dest_off + c0, &stage.0) },
            Err(bad) => {
                first_bad.fetch_min(bad, Ordering::Relaxed);
            }
        }
    });
    match first_bad.into_inner() {
        usize::MAX => Ok(()),
        bad => Err(bad),
    }
}

/// Folds into `cells` (the part `[c0, c0 + cells.len())` of a row of `n`) the updates whose
/// index lands there, scanning all of them batch by batch; `shift` is `n` when negative
/// indices count from the end, else 0. Returns the position of the first rejected index.
fn fold_part<T: Element, I: IndexInt, C: Combiner<T>>(
    cells: &mut [T],
    c0: usize,
    n: usize,
    shift: i64,
    idx: &[I],
    upd: &[T],
    level: crate::isa::Level,
) -> Result<(), usize> {
    let mut picked = Picked {
        cell: [0; BATCH + SLACK],
        upd: [0; BATCH + SLACK],
    };
    let part = Part {
        n,
        shift,
        c0,
        len: cells.len(),
    };
    for (b, (ib, ub)) in idx.chunks(BATCH).zip(upd.chunks(BATCH)).enumerate() {
        let Some(count) = scan(level, ib, part, &mut picked) else {
            let at = ib.iter().position(|x| !part.accepts(x.to_i64_sat()));
            return Err(b * BATCH + at.unwrap_or(0));
        };
        // SAFETY: the scan selects only cells below `cells.len()` and updates of this batch
        // (`scan_scalar`, `pack8`).
        unsafe {
            apply::<T, C>(
                level,
                cells,
                &picked.cell[..count],
                &picked.upd[..count],
                ub,
            )
        };
    }
    Ok(())
}

crate::kernels::simd::multiversion! {
    if (const { crate::kernels::simd::isa_folds::<T, C>() })
    /// `cells[c] = C(cells[c], ub[u])` for the picked pairs of one batch, in order. One
    /// version per instruction set: the canonical-NaN select of the float combines is one
    /// blend with AVX instead of four SSE2 mask operations.
    ///
    /// Contract: every `cell[j] < cells.len()` and every `upd[j] < ub.len()`.
    unsafe fn apply<T: Element, C: Combiner<T>>(
        cells: &mut [T],
        cell: &[u32],
        upd: &[u32],
        ub: &[T],
    ) -> () {
        for (&c, &u) in cell.iter().zip(upd) {
            // SAFETY: both positions are in bounds (contract).
            let (cell, u) = unsafe {
                (
                    crate::kernels::at_mut(cells, c as usize),
                    crate::kernels::read(ub, u as usize),
                )
            };
            *cell = C::combine(*cell, u);
        }
    }
}

/// What a task's scan tests: the row's length and negative rule, and the task's part.
#[derive(Clone, Copy)]
struct Part {
    n: usize,
    shift: i64,
    c0: usize,
    len: usize,
}

impl Part {
    /// The cell of `v` (negative values moved by `shift`) as an unsigned number: below `n`
    /// exactly when the policy accepts `v`.
    #[inline(always)]
    fn cell(self, v: i64) -> u64 {
        crate::index::shifted_cell(v, self.shift)
    }

    /// Whether the policy accepts `v`.
    #[inline(always)]
    fn accepts(self, v: i64) -> bool {
        self.cell(v) < self.n as u64
    }
}

/// Selects the updates of batch `ib` that land in the part, in order, into `picked`; their
/// count, or `None` when the batch holds a rejected index.
fn scan<I: IndexInt>(
    level: crate::isa::Level,
    ib: &[I],
    part: Part,
    picked: &mut Picked,
) -> Option<usize> {
    debug_assert!(ib.len() <= BATCH && part.n <= SPLIT_MAX_CELLS);
    #[cfg(target_arch = "x86_64")]
    if level.isa() != crate::isa::Isa::Baseline {
        match I::DTYPE {
            DType::I32 => {
                // SAFETY: the index types are sealed and only `i32` has the tag `I32`, so
                // `I` is `i32`.
                let s = unsafe { std::slice::from_raw_parts(ib.as_ptr().cast::<i32>(), ib.len()) };
                // SAFETY: a `Level` above the baseline is only made on a CPU with AVX2.
                return unsafe { scan_i32(s, part, picked) };
            }
            DType::I64 => {
                // SAFETY: as above, for `i64`.
                let s = unsafe { std::slice::from_raw_parts(ib.as_ptr().cast::<i64>(), ib.len()) };
                // SAFETY: as above.
                return unsafe { scan_i64(s, part, picked) };
            }
            _ => {}
        }
    }
    let _ = level;
    scan_scalar(ib, 0, part, picked, 0)
}

/// The scan one index at a time, from batch position `from`, `count` already picked:
/// branch-free, every index written and the count advanced when it lands in the part.
#[inline(always)]
fn scan_scalar<I: IndexInt>(
    ib: &[I],
    from: usize,
    part: Part,
    picked: &mut Picked,
    mut count: usize,
) -> Option<usize> {
    let mut ok = true;
    for (e, x) in ib.iter().enumerate().skip(from) {
        let v = x.to_i64_sat();
        ok &= part.accepts(v);
        let r = part.cell(v).wrapping_sub(part.c0 as u64);
        // `count <= e < BATCH`: the slot exists.
        picked.cell[count] = r as u32;
        picked.upd[count] = e as u32;
        count += usize::from(r < part.len as u64);
    }
    ok.then_some(count)
}

/// For each mask of eight lanes, the lanes set in it, lowest first, then zeros: the
/// `vpermd` control that left-packs them.
#[cfg(target_arch = "x86_64")]
static PACK: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let (mut lane, mut at) = (0, 0);
        while lane < 8 {
            if m >> lane & 1 == 1 {
                t[m][at] = lane as u8;
                at += 1;
            }
            lane += 1;
        }
        m += 1;
    }
    t
};

/// Left-packs the lanes of `rel` (cells relative to the part) selected by `mask` to
/// `picked.cell[count..]` and their batch positions (`at` + lane) to `picked.upd[count..]`;
/// the new count.
///
/// # Safety
/// AVX2 is available and `count + 8 <= BATCH + SLACK`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
#[inline]
unsafe fn pack8(
    rel: std::arch::x86_64::__m256i,
    mask: u32,
    at: usize,
    picked: &mut Picked,
    count: usize,
) -> usize {
    use std::arch::x86_64::*;
    debug_assert!(count + 8 <= BATCH + SLACK && mask < 256);
    // SAFETY: the table has 256 rows of 8 bytes and `mask < 256`; the stores write lanes
    // `count..count + 8` of the two arrays, inside them (contract); AVX2 (contract).
    unsafe {
        let ctl = _mm256_cvtepu8_epi32(_mm_loadl_epi64(PACK[mask as usize].as_ptr().cast()));
        let cells = _mm256_permutevar8x32_epi32(rel, ctl);
        let upds = _mm256_add_epi32(ctl, _mm256_set1_epi32(at as i32));
        _mm256_storeu_si256(picked.cell.as_mut_ptr().add(count).cast(), cells);
        _mm256_storeu_si256(picked.upd.as_mut_ptr().add(count).cast(), upds);
    }
    count + mask.count_ones() as usize
}

/// [`scan`] for `i32` indices, eight at a time.
///
/// # Safety
/// AVX2 is available; `ib.len() <= BATCH`, `part.n <= SPLIT_MAX_CELLS`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn scan_i32(ib: &[i32], part: Part, picked: &mut Picked) -> Option<usize> {
    use std::arch::x86_64::*;
    let full = ib.len() / 8 * 8;
    let mut count = 0;
    // Unsigned compares as signed ones with the sign bit flipped; `n`, `c0` and `len` fit
    // 31 bits, so the 32-bit sums below are exact for every accepted index, and a rejected
    // one never lands in [0, n).
    let flip = _mm256_set1_epi32(i32::MIN);
    let shift = _mm256_set1_epi32(part.shift as i32);
    let n = _mm256_set1_epi32(part.n as i32 ^ i32::MIN);
    let c0 = _mm256_set1_epi32(part.c0 as i32);
    let len = _mm256_set1_epi32(part.len as i32 ^ i32::MIN);
    let mut ok = _mm256_set1_epi32(-1);
    for at in (0..full).step_by(8) {
        // SAFETY: lanes `at..at + 8` of `ib` exist (`at + 8 <= full`).
        let v = unsafe { _mm256_loadu_si256(ib.as_ptr().add(at).cast()) };
        // Under `Wrap` a negative value moves by n (`shift` is 0 otherwise).
        let cell = _mm256_add_epi32(v, _mm256_and_si256(_mm256_srai_epi32(v, 31), shift));
        ok = _mm256_and_si256(ok, _mm256_cmpgt_epi32(n, _mm256_xor_si256(cell, flip)));
        let rel = _mm256_sub_epi32(cell, c0);
        let mine = _mm256_cmpgt_epi32(len, _mm256_xor_si256(rel, flip));
        let mask = _mm256_movemask_ps(_mm256_castsi256_ps(mine)) as u32;
        // SAFETY: AVX2; `count <= at <= BATCH - 8`.
        count = unsafe { pack8(rel, mask, at, picked, count) };
    }
    let all_ok = _mm256_movemask_ps(_mm256_castsi256_ps(ok)) == 0xff;
    let count = scan_scalar(ib, full, part, picked, count)?;
    all_ok.then_some(count)
}

/// [`scan`] for `i64` indices, eight at a time (two vectors of four).
///
/// # Safety
/// AVX2 is available; `ib.len() <= BATCH`, `part.n <= SPLIT_MAX_CELLS`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn scan_i64(ib: &[i64], part: Part, picked: &mut Picked) -> Option<usize> {
    use std::arch::x86_64::*;
    let full = ib.len() / 8 * 8;
    let mut count = 0;
    let flip = _mm256_set1_epi64x(i64::MIN);
    let zero = _mm256_setzero_si256();
    let shift = _mm256_set1_epi64x(part.shift);
    let n = _mm256_set1_epi64x(part.n as i64 ^ i64::MIN);
    let c0 = _mm256_set1_epi64x(part.c0 as i64);
    let len = _mm256_set1_epi64x(part.len as i64 ^ i64::MIN);
    // The low halves of four 64-bit lanes, twice.
    let evens = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    let mut ok = _mm256_set1_epi64x(-1);
    let half = |v: __m256i, ok: &mut __m256i| {
        // Under `Wrap` a negative value moves by n (`shift` is 0 otherwise).
        let cell = _mm256_add_epi64(v, _mm256_and_si256(_mm256_cmpgt_epi64(zero, v), shift));
        *ok = _mm256_and_si256(*ok, _mm256_cmpgt_epi64(n, _mm256_xor_si256(cell, flip)));
        let rel = _mm256_sub_epi64(cell, c0);
        let mine = _mm256_cmpgt_epi64(len, _mm256_xor_si256(rel, flip));
        let mask = _mm256_movemask_pd(_mm256_castsi256_pd(mine)) as u32;
        (_mm256_permutevar8x32_epi32(rel, evens), mask)
    };
    for at in (0..full).step_by(8) {
        // SAFETY: lanes `at..at + 8` of `ib` exist (`at + 8 <= full`).
        let (a, b) = unsafe {
            (
                _mm256_loadu_si256(ib.as_ptr().add(at).cast()),
                _mm256_loadu_si256(ib.as_ptr().add(at + 4).cast()),
            )
        };
        let (ra, ma) = half(a, &mut ok);
        let (rb, mb) = half(b, &mut ok);
        // Cells in range of the part fit 32 bits, so their low halves are the cells.
        let rel = _mm256_permute2x128_si256::<0x20>(ra, rb);
        // SAFETY: AVX2; `count <= at <= BATCH - 8`.
        count = unsafe { pack8(rel, ma | mb << 4, at, picked, count) };
    }
    let all_ok = _mm256_movemask_pd(_mm256_castsi256_pd(ok)) == 0xf;
    let count = scan_scalar(ib, full, part, picked, count)?;
    all_ok.then_some(count)
}
