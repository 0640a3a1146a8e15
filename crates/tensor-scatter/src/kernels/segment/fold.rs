//! The segment kernel: every output row is the fold of its segment's `src` rows in index
//! order, computed by one task, so the result is the same for any thread count.
//!
//! Tasks own disjoint ranges of output rows (`split_at_mut` pieces of the lane-major output),
//! so the writes need no `unsafe`; the rows of `src` are read through a `kernels::segment::Lane`,
//! whose extent is checked once, without a check per row. Sorted and CSR input read `src` in
//! order, unsorted input goes through a stable counting sort by destination first
//! (`kernels::segment`). Sums, products and means of
//! f16/bf16 accumulate in f32 and round once; min and max fold in the type itself (exact) and
//! can report, per cell, the position of the element that produced the result (their loops
//! are in `segment::extreme`).

use std::sync::Mutex;

use super::extreme::fold_extreme;
use super::groups::{Groups, Order, Positions};
use super::rowlist::{Lists, RowList, Runs, Segments, pass_distance, prefetch_row, row_at};
use super::{Dims, Lane, Lanes, Mode};
use crate::dtype::{Element, Reduction};
use crate::error::Result;
use crate::exec::Ctx;
use crate::exec::isa::Level;
use crate::exec::tuning::SEGMENT_PREFETCH_ROWS;
use crate::kernels::Rows;
use crate::reduce::{Combiner, FoldAddC, FoldMulC};
use crate::shape::part;

/// What the kernel computes.
pub(crate) struct Problem<'a, T> {
    /// `src`, contiguous `[b, e, k]`.
    pub(crate) src: &'a [T],
    pub(crate) dims: Dims,
    pub(crate) mode: Mode,
    /// Add, Mul, Mean, Min or Max.
    pub(crate) reduce: Reduction,
    /// Whether the output's values start each fold (torch_scatter's `out=`), else the
    /// reduction's identity.
    pub(crate) include_self: bool,
    /// Where those values are, and what a row that no position reaches holds.
    pub(crate) start: Start<'a, T>,
}

/// Where a fold's starting values are, and what an output row that no position reaches holds.
#[derive(Clone, Copy)]
pub(crate) enum Start<'a, T> {
    /// torch_scatter's rule: the output's own values; a row nothing reaches keeps them bit
    /// for bit with `include_self`, and is 0 (1 for `mul`) without.
    Segment,
    /// The scatters' rule in place: the output's own values (initialised cells); a row
    /// nothing reaches keeps its bits.
    Keep,
    /// The scatters' rule into other memory: `data` (lane-major like the output, in a row
    /// mode) holds the starting values, and a row nothing reaches is a copy of its row.
    Data(&'a [T]),
}

impl<'a, T> Start<'a, T> {
    /// Row `at..at + w` of the starting values when they are not the output's own.
    #[inline(always)]
    pub(crate) fn data_row(self, at: usize, w: usize) -> Option<&'a [T]> {
        match self {
            Start::Data(d) => Some(&d[at..at + w]),
            _ => None,
        }
    }

    /// Whether a row nothing reaches keeps its values (the scatters' rules).
    #[inline(always)]
    pub(crate) fn keeps(self) -> bool {
        !matches!(self, Start::Segment)
    }
}

/// How each lane's positions are grouped by destination.
pub(crate) enum Source<'a> {
    /// Destination per position, checked in `[0, n)` (and sorted when `sorted`).
    Index { lanes: &'a Lanes<'a>, sorted: bool },
    /// CSR offsets per lane (`n + 1` of them), checked.
    Indptr(&'a Lanes<'a>),
}

impl Source<'_> {
    fn lanes(&self) -> &Lanes<'_> {
        match self {
            Source::Index { lanes, .. } | Source::Indptr(lanes) => lanes,
        }
    }
    /// Groups one lane; `ctx` cuts the counting sort across threads (a task's own lanes
    /// pass a one-thread context).
    fn fill(&self, ctx: Ctx, g: &mut Groups, lane: usize, n: usize) {
        match self {
            Source::Index { lanes, .. } => g.fill_from_index(ctx, lanes.lane(lane), n),
            Source::Indptr(lanes) => g.fill_from_indptr(lanes.lane(lane)),
        }
    }
    fn sorted(&self) -> bool {
        !matches!(self, Source::Index { sorted: false, .. })
    }
}

/// One task's output rows and scratch.
struct Task<'o, O: Copy, A> {
    out: Rows<'o, O>,
    arg: Option<Rows<'o, i64>>,
    acc: Vec<A>,
    groups: Groups,
}

/// Runs the reduction into `out` (lane-major `[lanes, n, width]`: `[b, n, k]` in row modes,
/// `[b, k, n]` in element mode), and the positions into `arg` for min and max when given.
/// With `include_self`, `out` holds the starting values.
pub(crate) fn run<T: Element>(
    op: &'static str,
    ctx: Ctx,
    p: &Problem<'_, T>,
    source: &Source<'_>,
    out: Rows<'_, T>,
    arg: Option<Rows<'_, i64>>,
) -> Result<()> {
    let w = width(p);
    let acc_len = if is_sum_like(p.reduce) { w } else { 0 };
    let zero = <T::Wide as Element>::identity(Reduction::Add);
    run_cells(op, ctx, p, source, out, arg, (acc_len, zero), |b| {
        fold_batch(p, ctx.level, b)
    })
}

/// Elements per output row: `k` in row modes, 1 in element mode.
pub(crate) fn width<T>(p: &Problem<'_, T>) -> usize {
    lanes_and_width(p).1
}

/// Lanes and elements per output row: `(b, k)` in row modes, `(b · k, 1)` in element mode.
fn lanes_and_width<T>(p: &Problem<'_, T>) -> (usize, usize) {
    let d = p.dims;
    if p.mode == Mode::PerElement {
        // Saturating: an empty src may have `b · k` past usize (no row is then addressed).
        (d.b.saturating_mul(d.k), 1)
    } else {
        (d.b, d.k)
    }
}

/// Consecutive segments of one grouped lane, as a task hands them to a kernel: segment
/// `segs.start + i` writes output row `i` from cell `first` (`w` cells a row) of `out` (and
/// of `arg`, when positions are wanted).
pub(crate) struct Batch<'t, 'o, O: Copy, A> {
    /// Position in `src` of the lane's first element.
    pub(crate) base: usize,
    /// The cell of the whole output where the task's `out` begins (`first` counts from it).
    pub(crate) origin: usize,
    pub(crate) groups: &'t Groups,
    pub(crate) segs: std::ops::Range<usize>,
    pub(crate) out: &'t mut Rows<'o, O>,
    pub(crate) first: usize,
    pub(crate) w: usize,
    pub(crate) arg: Option<&'t mut Rows<'o, i64>>,
    /// The task's scratch.
    pub(crate) acc: &'t mut [A],
}

impl<O: Copy, A> Batch<'_, '_, O, A> {
    /// The start of segment `i` (`empty` when no position reaches it): `None` when `start`
    /// keeps such a row (then done: copied from `data`, or left as it is), else the row of
    /// `data` the fold starts from, when it is not the output's own.
    #[inline(always)]
    pub(crate) fn start_row<'s>(
        &mut self,
        i: usize,
        start: Start<'s, O>,
        empty: bool,
    ) -> Option<Option<&'s [O]>> {
        let (at, w) = (self.first + i * self.w, self.w);
        let data = start.data_row(self.origin + at, w);
        if empty && start.keeps() {
            if let Some(d) = data {
                self.out.row(at, w).copy_from_slice(d);
            }
            return None;
        }
        Some(data)
    }

    /// Output row `i` of the batch, and its positions' row when wanted.
    #[inline(always)]
    pub(crate) fn rows(&mut self, i: usize) -> (&mut [O], Option<&mut [i64]>) {
        let (at, w) = (self.first + i * self.w, self.w);
        (self.out.row(at, w), self.arg.as_mut().map(|a| a.row(at, w)))
    }

    /// Calls `cell(base, positions, row, arg_row, scratch)` for each segment in turn.
    pub(crate) fn each(
        mut self,
        mut cell: impl FnMut(usize, Positions<'_>, &mut [O], Option<&mut [i64]>, &mut [A]),
    ) {
        for (i, s) in self.segs.clone().enumerate() {
            let pos = self.groups.positions(s);
            let (at, w) = (self.first + i * self.w, self.w);
            let arg = self.arg.as_mut().map(|a| a.row(at, w));
            cell(self.base, pos, self.out.row(at, w), arg, self.acc);
        }
    }
}

/// The task machinery of every segment kernel: groups each lane's positions, cuts the
/// output rows (`O` elements, lane-major as in [`run`]) into tasks, and hands each task's
/// segments to `cells` as [`Batch`]es (one per lane it covers), with a scratch of
/// `scratch.0` copies of `scratch.1` per task. A batch is one call: a kernel compiled per
/// instruction set is entered once per batch, not once per segment.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_cells<T: Element, O: Copy + Send, A: Copy + Send>(
    op: &'static str,
    ctx: Ctx,
    p: &Problem<'_, T>,
    source: &Source<'_>,
    out: Rows<'_, O>,
    arg: Option<Rows<'_, i64>>,
    scratch: (usize, A),
    cells: impl Fn(Batch<'_, '_, O, A>) + Sync,
) -> Result<()> {
    let d = p.dims;
    let (lanes, w) = lanes_and_width(p);
    if out.len() == 0 {
        return Ok(());
    }
    let bytes = p.src.len().saturating_mul(std::mem::size_of::<T>())
        + out.len().saturating_mul(std::mem::size_of::<O>());
    let tasks = ctx.tasks(bytes, 4).max(1);
    let (acc_len, acc_init) = scratch;

    let shared = source.lanes().mode == Mode::Shared;
    // Output rows of each task: flat cells (`lane * n + segment`) when the grouping is
    // shared, whole lanes else.
    let mut one = Groups::default();
    let bounds: Vec<usize> = if shared {
        one = Groups::with_capacity(op, d.n, d.e, source.sorted())?;
        source.fill(ctx, &mut one, 0, d.n);
        (0..=tasks)
            .map(|t| cut(&one, d.n, lanes, tasks, t))
            .collect()
    } else {
        (0..=tasks).map(|t| part(lanes, tasks, t, 1).0).collect()
    };
    let unit = if shared { w } else { d.n * w };

    let oom = |n: usize| crate::Error::out_of_memory(op, "src", n);
    let mut slots = Vec::new();
    slots.try_reserve_exact(tasks).map_err(|_| oom(tasks))?;
    let (mut rest_out, mut rest_arg) = (out, arg);
    for t in 0..tasks {
        let len = (bounds[t + 1] - bounds[t]) * unit;
        let (o, r) = rest_out.split_at_mut(len);
        rest_out = r;
        let a = rest_arg.take().map(|a| {
            let (a, r) = a.split_at_mut(len);
            rest_arg = Some(r);
            a
        });
        let mut acc = Vec::new();
        acc.try_reserve_exact(acc_len).map_err(|_| oom(acc_len))?;
        acc.resize(acc_len, acc_init);
        let groups = if shared {
            Groups::default()
        } else {
            Groups::with_capacity(op, d.n, d.e, source.sorted())?
        };
        slots.push(Mutex::new(Task {
            out: o,
            arg: a,
            acc,
            groups,
        }));
    }
    let sequential = Ctx::new(crate::exec::Par::Sequential);
    ctx.run(tasks, |t| {
        let mut task = slots[t].lock().unwrap_or_else(|e| e.into_inner());
        let task = &mut *task;
        let (lo, hi) = (bounds[t], bounds[t + 1]);
        if shared {
            // Flat cells `lo..hi`, a batch per lane they touch.
            let mut c = lo;
            while c < hi {
                let (lane, s) = (c / d.n, c % d.n);
                let end = d.n.min(s + (hi - c));
                cells(Batch {
                    base: lane_base(p, lane),
                    origin: lo * unit,
                    groups: &one,
                    segs: s..end,
                    out: &mut task.out,
                    first: (c - lo) * w,
                    w,
                    arg: task.arg.as_mut(),
                    acc: &mut task.acc,
                });
                c += end - s;
            }
            return;
        }
        for lane in lo..hi {
            source.fill(sequential, &mut task.groups, lane, d.n);
            cells(Batch {
                base: lane_base(p, lane),
                origin: lo * unit,
                groups: &task.groups,
                segs: 0..d.n,
                out: &mut task.out,
                first: (lane - lo) * d.n * w,
                w,
                arg: task.arg.as_mut(),
                acc: &mut task.acc,
            });
        }
    });
    Ok(())
}

/// The first flat cell of task `t` when `lanes` lanes of `n` segments grouped as `g` are cut
/// into `tasks` parts of about equal cost (a segment costs its positions plus one).
fn cut(g: &Groups, n: usize, lanes: usize, tasks: usize, t: usize) -> usize {
    if t >= tasks {
        return lanes * n;
    }
    let per_lane = g.count(0, n) + n;
    let total = per_lane as u128 * lanes as u128;
    let target = (total * t as u128 / tasks as u128) as usize;
    let (lane, rem) = (target / per_lane, target % per_lane);
    let (mut a, mut b) = (0, n);
    while a < b {
        let mid = (a + b) / 2;
        if g.starts[mid] - g.starts[0] + mid < rem {
            a = mid + 1;
        } else {
            b = mid;
        }
    }
    lane * n + a
}

fn is_sum_like(r: Reduction) -> bool {
    matches!(r, Reduction::Add | Reduction::Mul | Reduction::Mean)
}

/// Position in `src` of element `[lane, 0]`; rows follow every `k` elements.
#[inline]
pub(crate) fn lane_base<T>(p: &Problem<'_, T>, lane: usize) -> usize {
    let d = p.dims;
    if p.mode == Mode::PerElement {
        (lane / d.k) * d.e * d.k + lane % d.k
    } else {
        lane * d.e * d.k
    }
}

/// The rows (`w` elements from `base + position * k`) of one segment, with their positions.
/// Unsorted input reads rows in random order: each row's lines are asked for
/// `SEGMENT_PREFETCH_ROWS` rows ahead, so the loads overlap.
#[inline]
pub(crate) fn rows<'s, T: Element>(
    p: &Problem<'s, T>,
    base: usize,
    mut pos: Positions<'s>,
    w: usize,
) -> impl Iterator<Item = (usize, &'s [T])> + 's {
    let (k, src) = (p.dims.k, p.src);
    std::iter::from_fn(move || {
        if let Some(a) = pos.ahead(SEGMENT_PREFETCH_ROWS) {
            prefetch_row(src[base + a * k..].as_ptr(), w);
        }
        let at = pos.next()?;
        Some((at, &src[base + at * k..base + at * k + w]))
    })
}

/// Folds the rows of a segment into `cells` (`cells[j] = f(cells[j], row[j])` in row
/// order), `B` columns at a time from column `c`, each block held in registers across the
/// rows and stored once (a store per row of a value that may be the old one becomes a
/// masked store, which is slow). Returns the first column left over (fewer than `B`).
#[inline(always)]
fn fold_blocks<T: Copy, U: Copy, R: RowList, const B: usize>(
    cells: &mut [U],
    lane: Lane<'_, T>,
    rows: R,
    mut c: usize,
    f: impl Fn(U, T) -> U,
) -> usize {
    let w = lane.w;
    assert_eq!(cells.len(), w);
    while c + B <= w {
        let ahead = pass_distance(rows, c, w * std::mem::size_of::<T>());
        let mut a: [U; B] = cells[c..c + B].try_into().expect("B cells");
        for i in 0..rows.len() {
            let row = &row_at(lane, rows, i, ahead)[c..c + B];
            for j in 0..B {
                a[j] = f(a[j], row[j]);
            }
        }
        cells[c..c + B].copy_from_slice(&a);
        c += B;
    }
    c
}

/// [`fold_blocks`] over every column: with `wide` ([`wide_blocks`](super::wide_blocks)),
/// blocks of 64 (accumulators of 4 bytes or fewer) and 32, then 8, then single cells.
#[inline(always)]
fn fold_all<T: Copy, U: Copy, R: RowList>(
    cells: &mut [U],
    lane: Lane<'_, T>,
    rows: R,
    wide: bool,
    f: impl Fn(U, T) -> U + Copy,
) {
    let c = if wide && std::mem::size_of::<U>() <= 4 {
        fold_blocks::<T, U, R, 64>(cells, lane, rows, 0, f)
    } else {
        0
    };
    let c = if wide {
        fold_blocks::<T, U, R, 32>(cells, lane, rows, c, f)
    } else {
        c
    };
    let c = fold_blocks::<T, U, R, 8>(cells, lane, rows, c, f);
    fold_blocks::<T, U, R, 1>(cells, lane, rows, c, f);
}

/// Folds a batch of segments: the grouping's kind and the reduction are matched once, then
/// one call of a loop compiled per instruction set folds every segment of the batch.
fn fold_batch<T: Element>(p: &Problem<'_, T>, lv: Level, b: Batch<'_, '_, T, T::Wide>) {
    let starts = &b.groups.starts[..];
    match b.groups.order() {
        None => fold_with(
            p,
            lv,
            Runs {
                starts,
                e: p.dims.e,
            },
            b,
        ),
        Some(Order::Narrow(order)) => fold_with(p, lv, Lists { starts, order }, b),
        Some(Order::Wide(order)) => fold_with(p, lv, Lists { starts, order }, b),
    }
}

/// [`fold_batch`] by reduction.
fn fold_with<T: Element, S: Segments>(
    p: &Problem<'_, T>,
    lv: Level,
    segs: S,
    b: Batch<'_, '_, T, T::Wide>,
) {
    debug_assert!(
        !matches!(p.start, Start::Data(_)) || p.mode != Mode::PerElement,
        "data rows are lane-major [b, n, k]"
    );
    let (src, at, e, keep) = (
        p.src,
        (b.base, p.dims.k),
        p.dims.e,
        (p.include_self, p.start),
    );
    let red = p.reduce;
    // Rows of 256 bytes of accumulators take [`sum_256`] for the float types over narrow
    // lists or runs (the others' folds are not compiled per instruction set; a constant
    // condition, so `sum_256` is not compiled for them at all).
    if (const { T::DTYPE.is_float() && !S::WIDE_LISTS })
        && matches!(red, Reduction::Add | Reduction::Mean)
        && b.w * std::mem::size_of::<T::Wide>() == 256
    {
        return sum_256::<T, FoldAddC, S>(lv, src, at, e, segs, b, keep, red);
    }
    match red {
        Reduction::Mul => sum_like::<T, FoldMulC, S>(lv, src, at, e, segs, b, keep, Reduction::Mul),
        Reduction::Mean => {
            sum_like::<T, FoldAddC, S>(lv, src, at, e, segs, b, keep, Reduction::Mean)
        }
        Reduction::Min | Reduction::Max => fold_extreme::<T, S>(lv, src, at, e, segs, b, keep, red),
        _ => sum_like::<T, FoldAddC, S>(lv, src, at, e, segs, b, keep, Reduction::Add),
    }
}

crate::kernels::simd::multiversion! {
    if (const { T::DTYPE.is_float() && !S::WIDE_LISTS && C::VERSIONED })
    /// Sum, product or mean of each segment's rows, accumulated in `T::Wide` and rounded
    /// once. An empty segment gives what `from`'s [`Start`] says (the segment family's: 0, 1
    /// for the product, without `include_self`). The steps
    /// leave NaN as the hardware makes it (NaN absorbs every later step); the result is made
    /// canonical once. Compiled per instruction set for the float types (but for the product,
    /// `Combiner::VERSIONED`, and over wide lists, `Segments::WIDE_LISTS`), the start and the
    /// rounding with the fold (as baseline code around it they cost segment_coo about a
    /// tenth at 20 rows per segment), and entered once per batch (a call per segment cost
    /// the unsorted sum of 20 rows of 64 f32 per segment about a seventh,
    /// record/2026-11-27-batches-and-prefetch.md).
    fn sum_like<T: Element, C: Combiner<T::Wide>, S: Segments>(src: &[T], at: (usize, usize), e: usize, segs: S, b: Batch<'_, '_, T, T::Wide>, from: (bool, Start<'_, T>), red: Reduction) -> () {
        let w = b.w;
        sum_batch::<T, C, S>(src, at, e, segs, b, from, red, w)
    }
}

crate::kernels::simd::multiversion! {
    if (const { T::DTYPE.is_float() && !S::WIDE_LISTS })
    /// [`sum_like`] for rows whose accumulators take 256 bytes (64 `f32`, 32 `f64`: four
    /// AVX-512 registers), with the width known at compile time: the prefetch, the blocks
    /// and the row's start and rounding lose their run-time width, which took the fold of
    /// the unsorted sum of 64 `f32` from 20.8 ms to 17.1-17.4, the bounds probe's ideal fold
    /// writing a fresh output (17.1-17.6), and the whole sum to 0.81-0.88x. A compile-time
    /// width of 32 `f32` measured 1.09-1.11x slower, so only this one is compiled
    /// (record/2026-11-27-unchecked-rows.md).
    fn sum_256<T: Element, C: Combiner<T::Wide>, S: Segments>(src: &[T], at: (usize, usize), e: usize, segs: S, b: Batch<'_, '_, T, T::Wide>, from: (bool, Start<'_, T>), red: Reduction) -> () {
        sum_batch::<T, C, S>(src, at, e, segs, b, from, red, 256 / std::mem::size_of::<T::Wide>())
    }
}

/// The loop of [`sum_like`] and [`sum_256`] over a batch's segments: rows of `w` elements
/// (`b.w`, asserted).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn sum_batch<T: Element, C: Combiner<T::Wide>, S: Segments>(
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
    // Made here, not passed in, as in `extreme`.
    let lane = Lane::new(src, at.0, at.1, w, e);
    for (i, s) in b.segs.clone().enumerate() {
        let rows = segs.rows(s);
        let Some(data) = b.start_row(i, start, rows.len() == 0) else {
            continue;
        };
        if include_self && rows.len() == 0 && data.is_none() {
            // `out`'s own value alone: kept bit for bit (a NaN's payload too), as the
            // scatters keep every cell nothing reaches.
            continue;
        }
        let acc = &mut b.acc[..w];
        if include_self {
            let own;
            let from = match data {
                Some(d) => d,
                None => {
                    own = b.out.row(b.first + i * w, w);
                    &*own
                }
            };
            for (a, &o) in acc.iter_mut().zip(from.iter()) {
                *a = o.widen();
            }
        } else {
            acc.fill(<T::Wide as Element>::identity(red));
        }
        let wide = const { super::wide_blocks::<T, S>() };
        fold_all(acc, lane, rows, wide, |a, x: T| C::combine(a, x.widen()));
        // The output row is asked for after the fold, so a fresh row's fill and its
        // values are written back to back.
        let out = b.out.row(b.first + i * w, w);
        let count = u64::from(include_self) + rows.len() as u64;
        for (o, &a) in out.iter_mut().zip(acc.iter()) {
            *o = sum_cell(a, count, red);
        }
    }
}

/// A sum's, product's or mean's cell from its accumulator and its count of values: the empty
/// value when nothing reached it, else the accumulator (divided by the count for a mean) made
/// canonical and rounded once.
#[inline(always)]
pub(crate) fn sum_cell<T: Element>(acc: T::Wide, count: u64, red: Reduction) -> T {
    match count {
        0 => empty_value::<T>(red),
        _ if red == Reduction::Mean => {
            T::narrow(<T::Wide as Element>::reduce_mean(acc, count).canonical())
        }
        _ => T::narrow(acc.canonical()),
    }
}

/// What an output cell that received nothing holds (torch_scatter: 0, and 1 for mul).
pub(crate) fn empty_value<T: Element>(red: Reduction) -> T {
    if red == Reduction::Mul {
        T::identity(Reduction::Mul)
    } else {
        T::default()
    }
}
