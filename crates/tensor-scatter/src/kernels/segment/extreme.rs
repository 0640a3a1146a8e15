//! The segment fold of min and max (`segment::fold` picks it): in the type itself, exact,
//! optionally with the position each cell took its value from.

use super::Lane;
use super::fold::{Batch, Start};
use super::rowlist::{RowList, Segments, pass_distance, row_at};
use crate::dtype::{DType, Element, Reduction};
use crate::exec::isa::Level;
use crate::exec::tuning::{ARG_CHUNK_ROWS, ARG_RESCAN_BYTES};
use crate::reduce::{Combiner, MaxC, MinC};

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
    from: (bool, Start<'_, T>),
    red: Reduction,
) {
    let wide = (const { S::NARROW_LISTS && matches!(T::DTYPE, DType::F32 | DType::F64) })
        && b.w * std::mem::size_of::<T>() == 256;
    let k = from;
    match (red, wide) {
        (Reduction::Min, true) => extreme_256::<T, MinC, S>(lv, src, at, e, segs, b, k, red),
        (Reduction::Min, false) => extreme::<T, MinC, S>(lv, src, at, e, segs, b, k, red),
        (_, true) => extreme_256::<T, MaxC, S>(lv, src, at, e, segs, b, k, red),
        (_, false) => extreme::<T, MaxC, S>(lv, src, at, e, segs, b, k, red),
    }
}

crate::kernels::simd::multiversion! {
    if (const { matches!(T::DTYPE, DType::F32 | DType::F64) && !S::WIDE_LISTS })
    /// Minimum or maximum of each segment's rows (in the type itself), with the position of
    /// the element each cell took its value from (the first among equals, the first NaN):
    /// the position moves only when the fold's bits change, by a select (which cells change
    /// is data-dependent). An empty segment gives 0 and position `e`. Compiled per
    /// instruction set for f32 and f64, the start with the fold, and entered once per batch.
    pub(super) fn extreme<T: Element, C: Combiner<T>, S: Segments>(src: &[T], at: (usize, usize), e: usize, segs: S, b: Batch<'_, '_, T, T::Wide>, from: (bool, Start<'_, T>), red: Reduction) -> () {
        let w = b.w;
        extreme_batch::<T, C, S>(src, at, e, segs, b, from, red, w)
    }
}

crate::kernels::simd::multiversion! {
    if (const { matches!(T::DTYPE, DType::F32 | DType::F64) && !S::WIDE_LISTS })
    /// [`extreme`] for rows of 256 bytes (64 `f32`, 32 `f64`), the width known at compile time.
    pub(super) fn extreme_256<T: Element, C: Combiner<T>, S: Segments>(src: &[T], at: (usize, usize), e: usize, segs: S, b: Batch<'_, '_, T, T::Wide>, from: (bool, Start<'_, T>), red: Reduction) -> () {
        extreme_batch::<T, C, S>(src, at, e, segs, b, from, red, 256 / std::mem::size_of::<T>())
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
    (include_self, start): (bool, Start<'_, T>),
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
        let rows = segs.rows(s);
        let Some(data) = b.start_row(i, start, rows.len() == 0) else {
            continue;
        };
        let (out, arg) = b.rows(i);
        if let Some(d) = data {
            out.copy_from_slice(d);
        }
        let wide = const { super::wide_blocks::<T, S>() };
        extreme_cell::<T, C, S::Rows>(lane, rows, out, arg, (include_self, wide), e, red);
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
    // Whether `out`'s values take part; whether the blocks of 64 (4-byte types) and 32
    // columns are compiled ([`wide_blocks`](super::wide_blocks), a constant).
    (include_self, wide): (bool, bool),
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
            let c = if wide && std::mem::size_of::<T>() <= 4 {
                extreme_blocks::<T, C, R, 64>(out, lane, rows, 0)
            } else {
                0
            };
            let c = if wide {
                extreme_blocks::<T, C, R, 32>(out, lane, rows, c)
            } else {
                c
            };
            let c = extreme_blocks::<T, C, R, 8>(out, lane, rows, c);
            extreme_blocks::<T, C, R, 1>(out, lane, rows, c);
        }
        Some(a) => {
            let c = if wide && std::mem::size_of::<T>() <= 4 {
                arg_blocks::<T, C, R, ARG_BLOCK>(out, a, lane, rows, 0, first)
            } else {
                0
            };
            let c = if wide {
                arg_blocks::<T, C, R, { ARG_BLOCK / 2 }>(out, a, lane, rows, c, first)
            } else {
                c
            };
            let c = arg_blocks::<T, C, R, 8>(out, a, lane, rows, c, first);
            arg_blocks::<T, C, R, 1>(out, a, lane, rows, c, first);
        }
    }
}

/// [`fold_blocks`] for min and max without positions, each block by [`fold_piece`] over
/// all the rows. Same bits as `fold_blocks` with `C::combine`.
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
        let a = fold_piece::<T, C, R, B>(start, lane, rows, (c, 0, rows.len(), ahead));
        cells[c..c + B].copy_from_slice(&a);
        c += B;
    }
    c
}

/// `B` cells from `start` (columns from `c`) folded with rows `lo..hi`: with the combine's
/// ordered form (no NaN rule: a shorter loop, which on random rows waits less on memory),
/// and again from `start` with the full rule when a NaN is among the values (the rows are
/// in cache by then). Rows `ahead` places further are asked for (0: none).
#[inline(always)]
fn fold_piece<T: Element, C: Combiner<T>, R: RowList, const B: usize>(
    start: [T; B],
    lane: Lane<'_, T>,
    rows: R,
    (c, lo, hi, ahead): (usize, usize, usize, usize),
) -> [T; B] {
    let (mut a, mut probe) = (start, [T::default(); B]);
    for i in lo..hi {
        let row = &row_at(lane, rows, i, ahead)[c..c + B];
        for j in 0..B {
            a[j] = C::combine_ordered(a[j], row[j]);
            probe[j] = probe[j].add_nan_probe(row[j]);
        }
    }
    // Branch-free (a short-circuiting test became a compare and branch per cell).
    let mut nan = false;
    for j in 0..B {
        nan |= probe[j].is_nan_value() | start[j].is_nan_value();
    }
    if nan {
        a = start;
        for i in lo..hi {
            let row = &row_at(lane, rows, i, 0)[c..c + B];
            for j in 0..B {
                a[j] = C::combine(a[j], row[j]);
            }
        }
    }
    a
}

/// Columns per block of [`extreme`] with positions for 4-byte types (half for wider ones), then 8
/// and single cells.
const ARG_BLOCK: usize = 64;

/// [`fold_blocks`] for min and max with positions: `B` values and their positions at a time.
/// [`arg_rescan`] takes the rows in pieces that stay in L1 ([`rescan_rows`]); each piece is
/// folded as the min or max without positions folds it ([`fold_piece`]), and a cell whose
/// bits moved takes the position of the first of the piece's rows holding its new bits
/// ([`first_equal`], a scan of the rows in cache). Min and max move only to a strictly
/// better value (a NaN, once taken, stays), so that row is the one that set the cell, and
/// equal values keep the first. On unsorted input, against tracking marks in the row loop
/// (with special cases then), max with positions took 0.78-0.80x as long at 8 f32 per row,
/// 0.97-1.01x at 64 and 1.04-1.05x at 32 (record/2026-11-27-argmax-rescan.md). Rows
/// consecutive in memory go through [`arg_track`] instead.
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
        let v: [T; B] = out[c..c + B].try_into().expect("B cells");
        let a = &mut arg[c..c + B];
        a.fill(first);
        let v = if R::CONSECUTIVE {
            arg_track::<T, C, R, B>(v, a, lane, rows, (c, ahead, first))
        } else {
            arg_rescan::<T, C, R, B>(v, a, lane, rows, (c, ahead))
        };
        out[c..c + B].copy_from_slice(&v);
        c += B;
    }
    c
}

/// One block of [`arg_blocks`] by pieces and rescans, from `v` with positions `a`.
#[inline(always)]
fn arg_rescan<T: Element, C: Combiner<T>, R: RowList, const B: usize>(
    mut v: [T; B],
    a: &mut [i64],
    lane: Lane<'_, T>,
    rows: R,
    (c, ahead): (usize, usize),
) -> [T; B] {
    let piece = rescan_rows(B * std::mem::size_of::<T>());
    let mut lo = 0;
    while lo < rows.len() {
        let hi = lo + (rows.len() - lo).min(piece);
        let now = fold_piece::<T, C, R, B>(v, lane, rows, (c, lo, hi, ahead));
        // Branch-free: which cells moved is data-dependent.
        let mut any = false;
        for j in 0..B {
            any |= v[j].to_bits_u64() != now[j].to_bits_u64();
        }
        if any {
            first_equal::<T, R, B>(a, v, now, lane, rows, (c, lo, hi));
        }
        v = now;
        lo = hi;
    }
    v
}

/// The mark of no row: marks stay below it, and a moved cell never keeps it (a row holds
/// its bits).
const NONE: u32 = u32::MAX;

/// Rows per piece of [`arg_rescan`]: [`ARG_RESCAN_BYTES`] of their lines, so that
/// [`first_equal`] finds them in cache, and at most [`ARG_CHUNK_ROWS`] (a piece's marks
/// are `u32`).
fn rescan_rows(block_bytes: usize) -> usize {
    // A block of a row touches at least one 64-byte line.
    (ARG_RESCAN_BYTES / block_bytes.max(64)).clamp(1, ARG_CHUNK_ROWS)
}

/// For each cell of the block whose bits moved from `before` to `v` over rows `lo..hi`:
/// its position becomes that of the first of those rows holding `v`'s bits (a backward scan
/// that records each row's [mark](RowList::mark) where it matches, so the first one stays).
#[inline(always)]
fn first_equal<T: Element, R: RowList, const B: usize>(
    arg: &mut [i64],
    before: [T; B],
    v: [T; B],
    lane: Lane<'_, T>,
    rows: R,
    (c, lo, hi): (usize, usize, usize),
) {
    let mut g = [NONE; B];
    for i in (lo..hi).rev() {
        let row = &row_at(lane, rows, i, 0)[c..c + B];
        let r = rows.mark(lo, i);
        for j in 0..B {
            g[j] = if row[j].to_bits_u64() == v[j].to_bits_u64() {
                r
            } else {
                g[j]
            };
        }
    }
    for (j, a) in arg.iter_mut().enumerate() {
        let p = rows.marked(lo, if g[j] == NONE { 0 } else { g[j] }) as i64;
        *a = if before[j].to_bits_u64() != v[j].to_bits_u64() {
            p
        } else {
            *a
        };
    }
}

/// [`arg_blocks`] for rows consecutive in memory: the positions are tracked in the row
/// loop (a cell takes a row's mark where the row changes its bits, which is where it moved
/// to a strictly better value or took a NaN: the first row holding the final bits, as
/// [`first_equal`] finds). Rows read at the memory's full rate leave a second pass over
/// them nothing to hide behind: max with positions of sorted rows took 0.75-0.95x as long
/// as with the rescan (record/2026-11-27-sorted-positions.md). From `start` with
/// positions `arg` (all `first`, the start's); with the full rule again on a NaN.
#[inline(always)]
fn arg_track<T: Element, C: Combiner<T>, R: RowList, const B: usize>(
    start: [T; B],
    arg: &mut [i64],
    lane: Lane<'_, T>,
    rows: R,
    (c, ahead, first): (usize, usize, i64),
) -> [T; B] {
    let (v, probe) = track_pass::<T, R, B>(start, arg, lane, rows, (c, ahead), C::combine_ordered);
    let mut nan = false;
    for j in 0..B {
        nan |= probe[j].is_nan_value() | start[j].is_nan_value();
    }
    if !nan {
        return v;
    }
    arg.fill(first);
    track_pass::<T, R, B>(start, arg, lane, rows, (c, 0), C::combine).0
}

/// One pass of [`arg_track`] with the combine `f`: the block's values and their rows'
/// [`Element::add_nan_probe`] sums; `arg` updated in pieces of at most [`ARG_CHUNK_ROWS`]
/// (the marks are `u32`).
#[inline(always)]
fn track_pass<T: Element, R: RowList, const B: usize>(
    mut v: [T; B],
    arg: &mut [i64],
    lane: Lane<'_, T>,
    rows: R,
    (c, ahead): (usize, usize),
    f: impl Fn(T, T) -> T,
) -> ([T; B], [T; B]) {
    let mut probe = [T::default(); B];
    let mut lo = 0;
    while lo < rows.len() {
        let hi = lo + (rows.len() - lo).min(ARG_CHUNK_ROWS);
        let mut g = [NONE; B];
        for i in lo..hi {
            let row = &row_at(lane, rows, i, ahead)[c..c + B];
            let r = rows.mark(lo, i);
            for j in 0..B {
                let n = f(v[j], row[j]);
                g[j] = if n.to_bits_u64() != v[j].to_bits_u64() {
                    r
                } else {
                    g[j]
                };
                v[j] = n;
                probe[j] = probe[j].add_nan_probe(row[j]);
            }
        }
        for (a, &m) in arg.iter_mut().zip(&g) {
            let p = rows.marked(lo, if m == NONE { 0 } else { m }) as i64;
            *a = if m == NONE { *a } else { p };
        }
        lo = hi;
    }
    (v, probe)
}
