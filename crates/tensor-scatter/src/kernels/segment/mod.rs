//! The row fold: every output row is the fold of the `src` rows an index sends to it, in index
//! order, each row by one task (`fold`), after a grouping of positions by destination (a
//! stable counting sort cut across threads, each chunk of positions counts, then writes its
//! own slots). The segment family runs on it, and so do the scatters whose work is rows
//! (`scatter::strategy`).

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::exec::tuning::SORT_PREFETCH;
use crate::index::{IndexInt, Native};
use crate::kernels::{DestPtr, prefetch};
use crate::shape::{Odometer, numel, part};
use crate::view::TensorView;

pub(crate) mod extreme;
pub(crate) mod fold;
pub(crate) mod groups;
pub(crate) mod rowlist;

/// `[b, e, k]` of `src` around `dim`, and the output's `n`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims {
    pub(crate) b: usize,
    pub(crate) e: usize,
    pub(crate) k: usize,
    pub(crate) n: usize,
}

/// Which positions the index varies over, after broadcasting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// One index row `[e]` for every lane.
    Shared,
    /// An index row per `b`, rows of `k` elements.
    PerOuter,
    /// An index row per `(b, k)`, single elements.
    PerElement,
}

/// The index (or indptr) read as `i64`, lane-major: `[e]`, `[b, e]` or `[b, k, e]` by mode;
/// borrowed from an `int64` index whose buffer already holds it so.
pub(crate) struct Lanes<'a> {
    pub(crate) mode: Mode,
    pub(crate) values: Cow<'a, [i64]>,
    /// Length of one lane's row in `values`.
    pub(crate) len: usize,
    /// The one lane of a scatter of single elements as the caller's `int32` index holds it,
    /// `values` then empty: only the scatter-elements path reads these lanes
    /// (`segment::single`), and its kernel takes `int32` indices as they are (no copy into
    /// `int64`, which took as long as the scatter: record/2026-11-30-overwrite-and-int32.md).
    pub(crate) narrow: Option<&'a [i32]>,
}

impl Lanes<'_> {
    pub(crate) fn lane(&self, lane: usize) -> &[i64] {
        debug_assert!(
            self.narrow.is_none(),
            "narrow lanes are read by their own path"
        );
        let l = if self.mode == Mode::Shared { 0 } else { lane };
        &self.values[l * self.len..(l + 1) * self.len]
    }
}

/// Whether the segment folds of `T` hold blocks of 32 and 64 columns in registers across a
/// segment's rows (the float types), or blocks of 8 and single columns only (the integer
/// types and bool). Each block width is a copy of the fold per dtype, reduction and row list;
/// the wide ones were measured on floats, which every graph-learning workload uses, and cost
/// 2 MB of code for the nine other dtypes.
/// Neither does a fold over lists of wide positions ([`Segments::WIDE_LISTS`]).
pub(crate) const fn wide_blocks<T: crate::dtype::Element, S: rowlist::Segments>() -> bool {
    T::DTYPE.is_float() && !S::WIDE_LISTS
}

/// Positions below this many sort on the calling thread.
const PARALLEL_MIN: usize = if crate::exec::tuning::SMALL_THRESHOLDS {
    2
} else {
    1 << 16
};

/// The index values a walk reads (`shape` with `strides` over `index`'s buffer, from its
/// offset), in row-major order of the walk, as `i64` (saturated): borrowed from an `int64`
/// index whose walk reads its buffer in order, else read into fresh memory. An index without
/// elements gives none, whatever the walk. Allocation failure is an error naming `arg`.
pub(crate) fn read_walk<'a, I: IndexInt>(
    op: &'static str,
    arg: &'static str,
    index: &TensorView<'a, I>,
    shape: &[usize],
    strides: &[isize],
) -> Result<Cow<'a, [i64]>> {
    let total = if index.layout.numel == 0 {
        0
    } else {
        numel(op, arg, shape)?
    };
    // Every read below is a position of this walk: each must be one of the index's elements.
    if !index.walks_within(shape.iter().copied().zip(strides.iter().copied())) {
        return Err(Error::invalid(
            op,
            arg,
            "a walk that is not a broadcast of the index (a bug: please report it)",
        ));
    }
    if let Native::I64(v) = I::native(index)
        && total > 0
        && row_major(shape, strides)
    {
        let at = v.layout.offset;
        // SAFETY: the walk (checked above) reads positions `[at, at + total)` in order, each
        // one of the index's elements.
        return Ok(Cow::Borrowed(unsafe { v.data.run(at, total) }));
    }
    let mut values = crate::kernels::try_vec_with_huge_pages(total)
        .ok_or_else(|| Error::out_of_memory(op, arg, total.saturating_mul(8)))?;
    if total > 0 {
        // Whole runs along the walk's last dim per outer step (a plain copy-convert when
        // contiguous).
        // A walk of no dims (a 0-d index) reads its one position.
        let last = shape.len().saturating_sub(1);
        let (inner, inner_st) = shape.last().map_or((1, 0), |&n| (n, strides[last]));
        let mut odo = Odometer::new(
            &shape[..last],
            [&strides[..last]],
            [index.layout.offset as isize],
            total / inner,
        );
        while let Some([p]) = odo.next_offsets() {
            // Every position of the walk (checked above) is one of the index's elements.
            if inner_st == 1 {
                // SAFETY: positions `p..p + inner` of the walk (see above).
                let run = unsafe { index.data.run(p as usize, inner) };
                values.extend(run.iter().map(|v| v.to_i64_sat()));
            } else {
                values.extend((0..inner as isize).map(|j| {
                    let at = p.wrapping_add(j.wrapping_mul(inner_st)) as usize;
                    // SAFETY: a position of the walk (see above).
                    unsafe { index.data.get(at) }.to_i64_sat()
                }));
            }
        }
    }
    Ok(Cow::Owned(values))
}

/// Whether the walk of `shape` with `strides` reads consecutive elements in order.
pub(crate) fn row_major(shape: &[usize], strides: &[isize]) -> bool {
    let mut want = 1isize;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n > 1 && s != want {
            return false;
        }
        want = want.saturating_mul(n as isize);
    }
    true
}

/// A position in the counting sort's order: `u32` when every lane's positions fit (half the
/// bytes the sort writes at random and the fold reads), else `usize`.
pub(crate) trait Pos: Copy + Default + Send + Sync + 'static {
    /// Whether this is `u32` (positions below `u32::MAX`: `NARROW_ORDER_MAX`).
    const U32: bool;
    /// `p`, which the caller has checked fits.
    fn of(p: usize) -> Self;
    fn get(self) -> usize;
}

impl Pos for u32 {
    const U32: bool = true;
    #[inline(always)]
    fn of(p: usize) -> Self {
        debug_assert!(u32::try_from(p).is_ok());
        p as u32
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

impl Pos for usize {
    const U32: bool = false;
    #[inline(always)]
    fn of(p: usize) -> Self {
        p
    }
    #[inline(always)]
    fn get(self) -> usize {
        self
    }
}

/// Groups the positions `0..idx.len()` by their value in `[0, n)`, stably: afterwards
/// `order[starts[v]..starts[v + 1]]` are the positions holding `v`, in increasing order.
/// `counts` is scratch. Every value must lie in `[0, n)` (checked before), and `idx.len()`
/// must fit in `P`.
pub(crate) fn counting_sort<P: Pos>(
    ctx: Ctx,
    idx: &[i64],
    n: usize,
    starts: &mut Vec<usize>,
    order: &mut Vec<P>,
    counts: &mut Vec<P>,
) {
    let e = idx.len();
    let chunks = if e < PARALLEL_MIN {
        1
    } else {
        ctx.threads.min(e / PARALLEL_MIN).max(1)
    };
    counts.clear();
    counts.resize(chunks * n.max(1), P::default());
    // 1. Each chunk counts its values.
    let cut = |c: usize| part(e, chunks, c, 1);
    {
        let rows: Vec<std::sync::Mutex<&mut [P]>> = counts
            .chunks_mut(n.max(1))
            .map(std::sync::Mutex::new)
            .collect();
        ctx.run(chunks, |c| {
            let mut row = rows[c].lock().unwrap_or_else(|p| p.into_inner());
            let (lo, hi) = cut(c);
            for &v in &idx[lo..hi] {
                let k = &mut row[v as usize];
                *k = P::of(k.get() + 1);
            }
        });
    }
    // 2. Each (value, chunk) gets its first slot: values in order, chunks in order within a
    // value (that keeps the sort stable).
    starts.clear();
    starts.resize(n + 1, 0);
    let mut at = 0usize;
    for v in 0..n {
        starts[v] = at;
        for c in 0..chunks {
            let k = &mut counts[c * n + v];
            let here = k.get();
            *k = P::of(at);
            at += here;
        }
    }
    starts[n] = at;
    // 3. Each chunk writes its positions to its slots, into `order`'s spare capacity (no
    // zero-fill first: the slots are a permutation of `0..e`, so every cell is written).
    order.clear();
    order.reserve_exact(e); // A no-op: the caller reserved `e` fallibly.
    let dest = DestPtr::spare(order, e);
    let rows: Vec<std::sync::Mutex<&mut [P]>> = counts
        .chunks_mut(n.max(1))
        .map(std::sync::Mutex::new)
        .collect();
    ctx.run(chunks, |c| {
        let mut next = rows[c].lock().unwrap_or_else(|p| p.into_inner());
        let (lo, hi) = cut(c);
        let part = &idx[lo..hi];
        for (p, &v) in part.iter().enumerate() {
            // The slot of the position `SORT_PREFETCH` ahead is asked for now: the writes
            // land at random in `order`, and without the hint each waits for its line.
            if let Some(&a) = part.get(p + SORT_PREFETCH) {
                prefetch(dest.addr_at(next[a as usize].get()), 1);
            }
            let slot = &mut next[v as usize];
            // SAFETY: the slots of (v, c) are `[first, first + count)` from step 2, disjoint
            // from every other (value, chunk)'s and inside `0..e` (the counts sum to e); this
            // chunk alone advances `next[v]` through them, once per position holding v.
            unsafe { dest.set(slot.get(), P::of(lo + p)) };
            *slot = P::of(slot.get() + 1);
        }
    });
    // SAFETY: the capacity is at least `e` (reserved above), and step 3 wrote every cell of
    // `0..e`: the (value, chunk) slot ranges partition it and each received as many
    // positions as it counted.
    unsafe { order.set_len(e) };
}

/// One lane's rows in `src`: the row of position `pos < e` is the `w` elements from
/// `base + pos * k`. [`Lane::new`] checks once that the last of them lies inside `src`, so
/// the segment fold reads rows of positions it knows are below `e` with no check per row
/// (checks per row cost the unsorted sum of 256-byte rows 3-8%, the max 7-12% and
/// segment_coo/csr 13-22%: record/2026-11-27-unchecked-rows.md).
pub(crate) struct Lane<'a, T> {
    src: &'a [T],
    base: usize,
    k: usize,
    /// Elements per row.
    pub(crate) w: usize,
}

impl<T> Clone for Lane<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Lane<'_, T> {}

impl<'a, T> Lane<'a, T> {
    /// The rows of positions `0..e`; panics unless every one of them lies inside `src`.
    pub(crate) fn new(src: &'a [T], base: usize, k: usize, w: usize, e: usize) -> Self {
        // The end of the last row, computed without overflow (no rows: nothing to check).
        let fits = e.checked_sub(1).is_none_or(|last| {
            last.checked_mul(k)
                .and_then(|at| at.checked_add(base))
                .and_then(|at| at.checked_add(w))
                .is_some_and(|end| end <= src.len())
        });
        assert!(
            fits,
            "lane of {e} rows of {w} from {base} (stride {k}) outside {}",
            src.len()
        );
        Lane { src, base, k, w }
    }

    /// The address of position `pos`'s row, for prefetch hints only (never dereferenced).
    #[inline(always)]
    pub(crate) fn addr(self, pos: usize) -> *const T {
        self.src
            .as_ptr()
            .wrapping_add(self.base.wrapping_add(pos.wrapping_mul(self.k)))
    }

    /// The row of position `pos`.
    ///
    /// # Safety
    /// `pos < e`, the `e` the lane was made with.
    #[inline(always)]
    pub(crate) unsafe fn row(self, pos: usize) -> &'a [T] {
        let at = self.base + pos * self.k;
        if cfg!(feature = "checked-kernels") {
            &self.src[at..at + self.w]
        } else {
            // SAFETY: `pos <= e - 1`, so `at + w <= base + (e - 1) * k + w`, which `new`
            // checked is at most `src.len()` (and computed without overflow).
            unsafe { self.src.get_unchecked(at..at + self.w) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lane;

    #[test]
    fn a_lane_must_lie_inside_src() {
        let src = [0u8; 10];
        // Rows of 2 at 1, 4, 7: the last ends at 9.
        let lane = Lane::new(&src, 1, 3, 2, 3);
        // SAFETY: position 2 < e = 3.
        assert_eq!(unsafe { lane.row(2) }.len(), 2);
        let _ = Lane::new(&src, 0, 3, 1, 4); // the last row is src[9]
        let _ = Lane::new(&src, 99, usize::MAX, 5, 0); // no rows, nothing to check
        for (base, k, w, e) in [
            (2, 3, 3, 3),
            (0, 3, 1, 5),
            (0, usize::MAX, 1, 3),
            (usize::MAX, 1, 1, 1),
        ] {
            let outside = std::panic::catch_unwind(|| Lane::new(&src, base, k, w, e));
            assert!(outside.is_err(), "{base} {k} {w} {e}");
        }
    }
}
