//! The segment fold of min and max (`segment::fold` picks it): in the type itself, exact,
//! optionally with the position each cell took its value from.

use super::fold::{Batch, RowList, Segments, pass_distance, row_at};
use crate::dtype::{DType, Element, Reduction};
use crate::exec::isa::Level;
use crate::exec::tuning::ARG_CHUNK_ROWS;
use crate::kernels::segment::Lane;
use crate::reduce::{Combiner, MaxC, MinC, moved};

/// Minimum or maximum (`red`) of a batch of segments: unsorted rows of 256 bytes of f32 or
/// f64 through [`extreme_256`], any other through [`extreme`].
#[allow(clippy::too_many_arguments)]
pub(super) fn fold_extreme<T: Element, S: Segments>(
    lv: Level,
    src: &[T],
    at: (usize, usize),
    e: usize,
    segs: S,
    b: Batch<'_, '_, T, T::Wide>,
    include_self: bool,
    red: Reduction,
) {
    let wide = (const { S::NARROW_LISTS && matches!(T::DTYPE, DType::F32 | DType::F64) })
        && b.w * std::mem::size_of::<T>() == 256;
    let k = include_self;
    match (red, wide) {
        (Reduction::Min, true) => extreme_256::<T, MinC, S>(lv, src, at, e, segs, b, k, red),
        (Reduction::Min, false) => extreme::<T, MinC, S>(lv, src, at, e, segs, b, k, red),
        (_, true) => extreme_256::<T, MaxC, S>(lv, src, at, e, segs, b, k, red),
        (_, false) => extreme::<T, MaxC, S>(lv, src, at, e, segs, b, k, red),
    }
}

crate::kernels::simd::multiversion! {
    if (const { matches!(T::DTYPE, DType::F32 | DType::F64) })
    /// Minimum or maximum of each segment's rows (in the type itself), with the position of
    /// the element each cell took its value from (the first among equals, the first NaN):
    /// the position moves only when the fold's bits change, by a select (which cells change
    /// is data-dependent). An empty segment gives 0 and position `e`. Compiled per
    /// instruction set for f32 and f64, the start with the fold, and entered once per batch.
    pub(super) fn extreme<T: Element, C: Combiner<T>, S: Segments>(src: &[T], at: (usize, usize), e: usize, segs: S, b: Batch<'_, '_, T, T::Wide>, include_self: bool, red: Reduction) -> () {
        let w = b.w;
        extreme_batch::<T, C, S>(src, at, e, segs, b, include_self, red, w)
    }
}

crate::kernels::simd::multiversion! {
    if (const { matches!(T::DTYPE, DType::F32 | DType::F64) })
    /// [`extreme`] for rows of 256 bytes (64 `f32`, 32 `f64`), the width known at compile time.
    pub(super) fn extreme_256<T: Element, C: Combiner<T>, S: Segments>(src: &[T], at: (usize, usize), e: usize, segs: S, b: Batch<'_, '_, T, T::Wide>, include_self: bool, red: Reduction) -> () {
        extreme_batch::<T, C, S>(src, at, e, segs, b, include_self, red, 256 / std::mem::size_of::<T>())
    }
}

/// The loop of [`extreme`] and [`extreme_256`] over a batch's segments: rows of `w` elements
/// (`b.w`, asserted).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn extreme_batch<T: Element, C: Combiner<T>, S: Segments>(
    src: &[T],
    at: (usize, usize),
    e: usize,
    segs: S,
    b: Batch<'_, '_, T, T::Wide>,
    include_self: bool,
    red: Reduction,
    w: usize,
) {
    assert_eq!(w, b.w);
    let mut b = b;
    // Made here, not passed in: with a `Lane` argument the blocks' accumulators stayed in
    // memory and the max of 256-byte rows took 1.3x as long
    // (record/2026-11-27-unchecked-rows.md).
    let lane = Lane::new(src, at.0, at.1, w, e);
    for (i, s) in b.segs.clone().enumerate() {
        let (out, arg) = b.rows(i);
        extreme_cell::<T, C, S::Rows>(lane, segs.rows(s), out, arg, include_self, e, red);
    }
}

/// [`extreme`] of one segment.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn extreme_cell<T: Element, C: Combiner<T>, R: RowList>(
    lane: Lane<'_, T>,
    rows: R,
    out: &mut [T],
    arg: Option<&mut [i64]>,
    include_self: bool,
    e: usize,
    red: Reduction,
) {
    // Where each cell's value comes from before the fold: `out`'s own (position `e`), the
    // empty segment's 0 (also `e`), or the identity with the first row's position (the
    // identity folded with the first row is that row, bit for bit, and a first row equal
    // to the identity changes no bits but is the one the cell holds).
    let first = if include_self {
        e
    } else if rows.len() == 0 {
        out.fill(T::default());
        e
    } else {
        out.fill(T::identity(red));
        rows.at(0)
    };
    let first = first as i64;
    match arg {
        None => {
            let c = if std::mem::size_of::<T>() <= 4 {
                extreme_blocks::<T, C, R, 64>(out, lane, rows, 0)
            } else {
                0
            };
            let c = extreme_blocks::<T, C, R, 32>(out, lane, rows, c);
            let c = extreme_blocks::<T, C, R, 8>(out, lane, rows, c);
            extreme_blocks::<T, C, R, 1>(out, lane, rows, c);
        }
        Some(a) => {
            let c = if std::mem::size_of::<T>() <= 4 {
                arg_blocks::<T, C, R, ARG_BLOCK>(out, a, lane, rows, 0, first)
            } else {
                0
            };
            let c = arg_blocks::<T, C, R, { ARG_BLOCK / 2 }>(out, a, lane, rows, c, first);
            let c = arg_blocks::<T, C, R, 8>(out, a, lane, rows, c, first);
            arg_blocks::<T, C, R, 1>(out, a, lane, rows, c, first);
        }
    }
}

/// [`fold_blocks`] for min and max without positions: the rows are folded with the combine's
/// ordered form (no NaN rule: a shorter loop, which on random rows waits less on memory),
/// and a block whose start or rows hold a NaN is folded again, from its start, with the full
/// rule (its rows are in cache by then). Same bits as `fold_blocks` with `C::combine`.
#[inline(always)]
fn extreme_blocks<T: Element, C: Combiner<T>, R: RowList, const B: usize>(
    cells: &mut [T],
    lane: Lane<'_, T>,
    rows: R,
    mut c: usize,
) -> usize {
    let w = lane.w;
    assert_eq!(cells.len(), w);
    while c + B <= w {
        let ahead = pass_distance(rows, c, std::mem::size_of_val(cells));
        let start: [T; B] = cells[c..c + B].try_into().expect("B cells");
        let (mut a, mut probe) = (start, [T::default(); B]);
        for i in 0..rows.len() {
            let row = &row_at(lane, rows, i, ahead)[c..c + B];
            for j in 0..B {
                a[j] = C::combine_ordered(a[j], row[j]);
                probe[j] = probe[j].add_nan_probe(row[j]);
            }
        }
        // A NaN among the values: again from the start with the full rule.
        if probe.iter().chain(&start).any(|x| x.is_nan_value()) {
            a = start;
            for i in 0..rows.len() {
                let row = &row_at(lane, rows, i, 0)[c..c + B];
                for j in 0..B {
                    a[j] = C::combine(a[j], row[j]);
                }
            }
        }
        cells[c..c + B].copy_from_slice(&a);
        c += B;
    }
    c
}

/// Columns per block of [`extreme`] with positions for 4-byte types (half for wider ones), then 8
/// and single cells.
const ARG_BLOCK: usize = 64;

/// [`fold_blocks`] for min and max with positions: `B` values and their positions at a time.
/// A block tracks for each cell the [mark](RowList::mark) of the row that set it, a `u32`
/// (half the registers of a position, so twice the columns per pass), and turns marks into
/// positions once at the end; a segment longer than [`ARG_CHUNK_ROWS`] is taken in pieces.
/// The rows are folded with the one-compare [`Combiner::arg_step`], and the block again
/// from its start with the full rule when a NaN is among its values or a zero may have
/// kept the other zero out (the compare and select took the max with positions of 64 f32
/// from 1.35-1.38x the max to 1.28-1.33x: record/2026-11-27-argmax.md).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn arg_blocks<T: Element, C: Combiner<T>, R: RowList, const B: usize>(
    out: &mut [T],
    arg: &mut [i64],
    lane: Lane<'_, T>,
    rows: R,
    mut c: usize,
    first: i64,
) -> usize {
    let w = lane.w;
    assert_eq!(out.len(), w);
    while c + B <= w {
        let ahead = pass_distance(rows, c, std::mem::size_of_val(out));
        let start: [T; B] = out[c..c + B].try_into().expect("B cells");
        let a = &mut arg[c..c + B];
        let (mut v, probe) =
            arg_pass::<T, R, B>(start, a, lane, rows, (c, ahead, first), C::arg_step);
        // A NaN among the values, or a zero the steps may have kept in place of the other
        // zero when that zero is among the rows: again from the start with the full rule
        // (rows in cache).
        if probe.iter().chain(&start).any(|x| x.is_nan_value())
            || (v.iter().any(|&x| C::arg_suspect(x)) && any_rival::<T, C, R>(lane, rows, (c, B)))
        {
            let full = |acc: T, x: T| moved(acc, C::combine(acc, x));
            v = arg_pass::<T, R, B>(start, a, lane, rows, (c, 0, first), full).0;
        }
        out[c..c + B].copy_from_slice(&v);
        c += B;
    }
    c
}

/// Whether any of the rows' `b` columns from `c` holds a [rival](Combiner::arg_rival).
/// Out of line, once per type, combiner and row list rather than per block width and
/// instruction set: a rare path (inlined it took 0.5% of the CLI's binary).
#[inline(never)]
fn any_rival<T: Element, C: Combiner<T>, R: RowList>(
    lane: Lane<'_, T>,
    rows: R,
    (c, b): (usize, usize),
) -> bool {
    let mut hit = false;
    for i in 0..rows.len() {
        hit |= row_at(lane, rows, i, 0)[c..c + b]
            .iter()
            .fold(false, |h, &x| h | C::arg_rival(x));
    }
    hit
}

/// One pass of [`arg_blocks`] over the rows (`w` wide) with `f`: the block's values from `v`
/// (columns from `c`), its positions written to `arg` (`first` where no row changed a
/// cell); also returns the rows' [`Element::add_nan_probe`] sums.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn arg_pass<T: Element, R: RowList, const B: usize>(
    mut v: [T; B],
    arg: &mut [i64],
    lane: Lane<'_, T>,
    rows: R,
    (c, ahead, first): (usize, usize, i64),
    f: impl Fn(T, T) -> (T, bool),
) -> ([T; B], [T; B]) {
    const KEEP: u32 = u32::MAX;
    let mut probe = [T::default(); B];
    arg.fill(first);
    let mut lo = 0;
    while lo < rows.len() {
        // Marks stay below `KEEP`, which marks a cell that kept its value.
        let hi = lo + (rows.len() - lo).min(ARG_CHUNK_ROWS);
        let mut g = [KEEP; B];
        for i in lo..hi {
            let row = &row_at(lane, rows, i, ahead)[c..c + B];
            let r = rows.mark(lo, i);
            for j in 0..B {
                let (n, m) = f(v[j], row[j]);
                // Narrow blocks test the bits (with the step's own flag LLVM split their
                // positions into scalar selects: F = 8 was 1.02-1.06x slower).
                let m = if B >= 16 { m } else { moved(v[j], n).1 };
                g[j] = if m { r } else { g[j] };
                v[j] = n;
                probe[j] = probe[j].add_nan_probe(row[j]);
            }
        }
        // Branch-free: whether a cell changed is data-dependent.
        for (a, &r) in arg.iter_mut().zip(&g) {
            let p = rows.marked(lo, if r == KEEP { 0 } else { r }) as i64;
            *a = if r == KEEP { *a } else { p };
        }
        lo = hi;
    }
    (v, probe)
}
