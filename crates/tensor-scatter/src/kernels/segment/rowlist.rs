//! How the segment folds reach the rows of `src`: a segment's rows as a [`RowList`] (a run of
//! consecutive positions for sorted and CSR input, a stretch of the counting sort's order for
//! unsorted input), a lane's segments as [`Segments`], and the prefetches that overlap the
//! loads of rows read in random order.

use super::{Lane, Pos};
use crate::exec::tuning::{RUN_PREFETCH_BYTES, SEGMENT_PREFETCH_ROWS};
use crate::kernels::{prefetch, prefetch4};

/// Asks for the lines of the row of `w` elements at `row` (its first KiB): rows of 256 bytes
/// or more by whole groups of four lines with no branch between them, then the rest; shorter
/// rows line by line. (With one call per batch, the per-line loop took the unsorted sum of
/// 256-byte rows 30 ms where groups took 24-25; prefetching 32-byte rows any other way made
/// their sum 13-14% slower: record/2026-11-27-batches-and-prefetch.md.)
/// `row` may lie past the end of `src` (the sequential fold looks ahead into the next
/// segments): a prefetch never faults.
#[inline(always)]
pub(super) fn prefetch_row<T>(row: *const T, w: usize) {
    let bytes = (w * std::mem::size_of::<T>()).min(1024);
    let row = row.cast::<u8>();
    if bytes >= 256 {
        let mut off = 0;
        while off + 256 <= bytes {
            prefetch4(row.wrapping_add(off));
            off += 256;
        }
        if off < bytes {
            prefetch(row.wrapping_add(off), bytes - off);
        }
    } else {
        prefetch(row, bytes);
    }
}

/// The rows of one segment as the row loops take them: the rows of positions `at(i)`,
/// `i < len`, of a [`Lane`].
///
/// # Safety
/// For every `i < len()`, `at(i)` is below the lane's `e` (the row loops read those rows
/// unchecked).
pub(crate) unsafe trait RowList: Copy {
    fn len(self) -> usize;
    /// The position of row `i < len`.
    fn at(self, i: usize) -> usize;
    /// The position of row `i` to prefetch, rows past `len` belonging to the next segments;
    /// `None` past the last row of random ones (a run's may lie past `src`'s end).
    fn ahead(self, i: usize) -> Option<usize>;
    /// How many rows ahead the first pass over the rows prefetches, for rows of `bytes`
    /// (0: none).
    fn distance(self, bytes: usize) -> usize;
    /// Whether the rows lie one after another in memory (sorted input), read at the
    /// memory's full rate rather than waiting on each row.
    const CONSECUTIVE: bool = false;
    /// What the min/max fold with positions records for row `i` of the piece of rows from
    /// `lo` (below `u32::MAX`, which marks no row): the row number `i - lo`, which
    /// [`RowList::marked`] turns back into the position.
    #[inline(always)]
    fn mark(self, lo: usize, i: usize) -> u32 {
        (i - lo) as u32
    }
    /// The position of the row marked `m` in the piece from `lo`.
    #[inline(always)]
    fn marked(self, lo: usize, m: u32) -> usize {
        self.at(lo + m as usize)
    }
}

/// Consecutive positions (sorted and CSR input).
#[derive(Clone, Copy)]
pub(crate) struct Run {
    lo: usize,
    len: usize,
}

// SAFETY: `Runs::rows` makes a run only of positions below its lane's `e`.
unsafe impl RowList for Run {
    const CONSECUTIVE: bool = true;
    #[inline(always)]
    fn len(self) -> usize {
        self.len
    }
    #[inline(always)]
    fn at(self, i: usize) -> usize {
        self.lo + i
    }
    #[inline(always)]
    fn ahead(self, i: usize) -> Option<usize> {
        Some(self.lo + i)
    }
    /// Consecutive rows of a cache line or more are asked for [`RUN_PREFETCH_BYTES`] ahead
    /// (with the hardware's stream prefetcher alone the CSR sum of 256-byte rows took
    /// 1.25-1.45x a plain read of them). Narrower rows fold fast enough that a prefetch per row
    /// costs more than it saves (record/2026-11-27-prefetch-out-and-order.md).
    #[inline(always)]
    fn distance(self, bytes: usize) -> usize {
        if bytes < 64 {
            0
        } else {
            RUN_PREFETCH_BYTES.div_ceil(bytes)
        }
    }
}

/// Positions in destination order (unsorted input): the segment's are `all[..len]`.
#[derive(Clone, Copy)]
pub(crate) struct Listed<'a, P> {
    all: &'a [P],
    len: usize,
}

// SAFETY: `Lists::rows` makes a list from a lane's counting sort, whose order holds a
// permutation of the positions `0..e`.
unsafe impl<P: Pos> RowList for Listed<'_, P> {
    #[inline(always)]
    fn len(self) -> usize {
        self.len
    }
    #[inline(always)]
    fn at(self, i: usize) -> usize {
        self.all[i].get()
    }
    #[inline(always)]
    fn ahead(self, i: usize) -> Option<usize> {
        self.all.get(i).map(|p| p.get())
    }
    #[inline(always)]
    fn distance(self, _: usize) -> usize {
        SEGMENT_PREFETCH_ROWS
    }
    /// A `u32` order's rows are marked by their position itself (below `u32::MAX`:
    /// `NARROW_ORDER_MAX`): turning row numbers back into positions took a random lookup
    /// of the order per cell and segment.
    #[inline(always)]
    fn mark(self, lo: usize, i: usize) -> u32 {
        (if P::U32 { self.at(i) } else { i - lo }) as u32
    }
    #[inline(always)]
    fn marked(self, lo: usize, m: u32) -> usize {
        let m = m as usize;
        if P::U32 { m } else { self.at(lo + m) }
    }
}

/// How many rows ahead the pass over the rows for the columns from `c` prefetches (rows of
/// `row_bytes`): only the first pass asks, the later ones find the rows in cache.
#[inline(always)]
pub(super) fn pass_distance<R: RowList>(rows: R, c: usize, row_bytes: usize) -> usize {
    if c == 0 { rows.distance(row_bytes) } else { 0 }
}

/// Row `i` of `rows` in `lane`; the lines of the row `ahead` places further are asked for
/// (0: none).
#[inline(always)]
pub(super) fn row_at<'a, T, R: RowList>(
    lane: Lane<'a, T>,
    rows: R,
    i: usize,
    ahead: usize,
) -> &'a [T] {
    if ahead > 0
        && let Some(a) = rows.ahead(i + ahead)
    {
        prefetch_row(lane.addr(a), lane.w);
    }
    assert!(i < rows.len());
    // SAFETY: `i < len`, so `at(i)` is a position of the lane below its `e` (`RowList`).
    unsafe { lane.row(rows.at(i)) }
}

/// The row lists of a lane's segments, by segment.
pub(crate) trait Segments: Copy {
    /// Unsorted input with a `u32` order (the graph-learning shape).
    const NARROW_LISTS: bool = false;
    /// Unsorted input of more than `NARROW_ORDER_MAX` positions (a `usize` order): at least
    /// 4 GiB of `src` rows per lane, so the folds over it are compiled once, plainly (no
    /// instruction-set versions, no wide blocks: a third of the folds' code).
    const WIDE_LISTS: bool = false;
    type Rows: RowList;
    fn rows(self, s: usize) -> Self::Rows;
}

/// Segments of consecutive positions (sorted and CSR input).
#[derive(Clone, Copy)]
pub(crate) struct Runs<'a> {
    pub(super) starts: &'a [usize],
    /// The lane's positions.
    pub(super) e: usize,
}

impl Segments for Runs<'_> {
    type Rows = Run;
    #[inline(always)]
    fn rows(self, s: usize) -> Run {
        let (lo, hi) = (self.starts[s], self.starts[s + 1]);
        // Checked offsets (or a sorted index's boundaries) are within `0..=e` and do not
        // decrease; this keeps the unchecked row reads sound whatever `starts` holds.
        assert!(lo <= hi && hi <= self.e);
        Run { lo, len: hi - lo }
    }
}

/// Segments of positions in destination order (unsorted input).
#[derive(Clone, Copy)]
pub(crate) struct Lists<'a, P> {
    pub(super) starts: &'a [usize],
    pub(super) order: &'a [P],
}

impl<'a, P: Pos> Segments for Lists<'a, P> {
    const NARROW_LISTS: bool = P::U32;
    const WIDE_LISTS: bool = !P::U32;
    type Rows = Listed<'a, P>;
    #[inline(always)]
    fn rows(self, s: usize) -> Listed<'a, P> {
        let (lo, hi) = (self.starts[s], self.starts[s + 1]);
        assert!(lo <= hi && hi <= self.order.len());
        Listed {
            all: &self.order[lo..],
            len: hi - lo,
        }
    }
}
