//! The segment kernel: every output row is the fold of its segment's `src` rows in index
//! order, computed by one task, so the result is the same for any thread count.
//!
//! Tasks own disjoint ranges of output rows (`split_at_mut` pieces of the lane-major output),
//! so the fold needs no `unsafe`: sorted and CSR input read `src` in order, unsorted input
//! goes through a stable counting sort by destination first (`kernels::segment`). Sums, products and means of
//! f16/bf16 accumulate in f32 and round once; min and max fold in the type itself (exact) and
//! can report, per cell, the position of the element that produced the result (their loops
//! are in `segment::extreme`).

use std::sync::Mutex;

use super::extreme::extreme;
use super::groups::{Groups, Order, Positions};
use super::plan::{Dims, Lanes, Mode};
use crate::dtype::DType;
use crate::dtype::{Element, Reduction};
use crate::error::Result;
use crate::exec::Ctx;
use crate::exec::isa::Level;
use crate::exec::tuning::{RUN_PREFETCH_BYTES, SEGMENT_PREFETCH_ROWS};
use crate::kernels::segment::Pos;
use crate::kernels::{Rows, prefetch};
use crate::reduce::{Combiner, FoldAddC, FoldMulC, MaxC, MinC};
use crate::shape::part;

/// What the kernel computes.
pub(crate) struct Problem<'a, T> {
    /// `src`, contiguous `[b, e, k]`.
    pub(crate) src: &'a [T],
    pub(crate) dims: Dims,
    pub(crate) mode: Mode,
    /// Add, Mul, Mean, Min or Max.
    pub(crate) reduce: Reduction,
    /// Whether the output's values start each fold (torch_scatter's `out=`).
    pub(crate) include_self: bool,
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
    run_cells(
        op,
        ctx,
        p,
        source,
        out,
        arg,
        (acc_len, zero),
        |base, pos, out, arg, acc| fold_cell(p, ctx.level, base, pos, out, arg, acc),
    )
}

/// Elements per output row: `k` in row modes, 1 in element mode.
pub(crate) fn width<T>(p: &Problem<'_, T>) -> usize {
    lanes_and_width(p).1
}

/// Lanes and elements per output row: `(b, k)` in row modes, `(b · k, 1)` in element mode.
fn lanes_and_width<T>(p: &Problem<'_, T>) -> (usize, usize) {
    let d = p.dims;
    if p.mode == Mode::PerElement {
        (d.b * d.k, 1)
    } else {
        (d.b, d.k)
    }
}

/// The task machinery of every segment kernel: groups each lane's positions, cuts the
/// output rows (`O` elements, lane-major as in [`run`]) into tasks, and calls
/// `cell(base, positions, row, arg_row, scratch)` for every output row, with `base` the
/// position in `src` of the lane's first element and a scratch of `scratch.0` copies of
/// `scratch.1` per task.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_cells<T: Element, O: Copy + Send, A: Copy + Send>(
    op: &'static str,
    ctx: Ctx,
    p: &Problem<'_, T>,
    source: &Source<'_>,
    out: Rows<'_, O>,
    arg: Option<Rows<'_, i64>>,
    scratch: (usize, A),
    cell: impl Fn(usize, Positions<'_>, &mut [O], Option<&mut [i64]>, &mut [A]) + Sync,
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
            for c in lo..hi {
                let (lane, s) = (c / d.n, c % d.n);
                let at = (c - lo) * w;
                cell(
                    lane_base(p, lane),
                    one.positions(s),
                    task.out.row(at, w),
                    task.arg.as_mut().map(|a| a.row(at, w)),
                    &mut task.acc,
                );
            }
            return;
        }
        for lane in lo..hi {
            source.fill(sequential, &mut task.groups, lane, d.n);
            let at = (lane - lo) * d.n * w;
            for s in 0..d.n {
                let at = at + s * w;
                cell(
                    lane_base(p, lane),
                    task.groups.positions(s),
                    task.out.row(at, w),
                    task.arg.as_mut().map(|a| a.row(at, w)),
                    &mut task.acc,
                );
            }
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

/// Asks for the lines of the row of `w` elements at `row` (its first KiB). `row` may lie
/// past the end of `src` (the sequential fold looks ahead into the next segments): a
/// prefetch never faults.
#[inline(always)]
fn prefetch_row<T>(row: *const T, w: usize) {
    let bytes = (w * std::mem::size_of::<T>()).min(1024);
    for off in (0..bytes).step_by(256) {
        prefetch(row.cast::<u8>().wrapping_add(off), bytes - off);
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

/// The rows of one segment as the row loops take them: `len` rows at `src[base + at(i) * k..]`.
pub(crate) trait RowList: Copy {
    fn len(self) -> usize;
    /// The position of row `i < len`.
    fn at(self, i: usize) -> usize;
    /// The position of row `i` to prefetch, rows past `len` belonging to the next segments;
    /// `None` past the last row of random ones (a run's may lie past `src`'s end).
    fn ahead(self, i: usize) -> Option<usize>;
    /// How many rows ahead the first pass over the rows prefetches, for rows of `bytes`
    /// (0: none).
    fn distance(self, bytes: usize) -> usize;
}

/// Consecutive positions (sorted and CSR input).
#[derive(Clone, Copy)]
pub(crate) struct Run {
    lo: usize,
    len: usize,
}

impl RowList for Run {
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

impl<P: Pos> RowList for Listed<'_, P> {
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
}

/// How many rows ahead the pass over the rows for the columns from `c` prefetches (rows of
/// `row_bytes`): only the first pass asks, the later ones find the rows in cache.
#[inline(always)]
pub(super) fn pass_distance<R: RowList>(rows: R, c: usize, row_bytes: usize) -> usize {
    if c == 0 { rows.distance(row_bytes) } else { 0 }
}

/// Row `i` of `rows` (`w` elements); the lines of the row `ahead` places further are asked
/// for (0: none).
#[inline(always)]
pub(super) fn row_at<T, R: RowList>(
    src: &[T],
    (base, k): (usize, usize),
    w: usize,
    rows: R,
    i: usize,
    ahead: usize,
) -> &[T] {
    if ahead > 0
        && let Some(a) = rows.ahead(i + ahead)
    {
        prefetch_row(src.as_ptr().wrapping_add(base + a * k), w);
    }
    let at = base + rows.at(i) * k;
    &src[at..at + w]
}

/// Folds the rows of a segment into `cells` (`cells[j] = f(cells[j], row[j])` in row
/// order), `B` columns at a time from column `c`, each block held in registers across the
/// rows and stored once (a store per row of a value that may be the old one becomes a
/// masked store, which is slow). Returns the first column left over (fewer than `B`).
#[inline(always)]
fn fold_blocks<T: Copy, U: Copy, R: RowList, const B: usize>(
    cells: &mut [U],
    src: &[T],
    at: (usize, usize),
    rows: R,
    mut c: usize,
    f: impl Fn(U, T) -> U,
) -> usize {
    let w = cells.len();
    while c + B <= w {
        let ahead = pass_distance(rows, c, w * std::mem::size_of::<T>());
        let mut a: [U; B] = cells[c..c + B].try_into().expect("B cells");
        for i in 0..rows.len() {
            let row = &row_at(src, at, w, rows, i, ahead)[c..c + B];
            for j in 0..B {
                a[j] = f(a[j], row[j]);
            }
        }
        cells[c..c + B].copy_from_slice(&a);
        c += B;
    }
    c
}

/// [`fold_blocks`] over every column: blocks of 32, then 8, then single cells.
#[inline(always)]
fn fold_all<T: Copy, U: Copy, R: RowList>(
    cells: &mut [U],
    src: &[T],
    at: (usize, usize),
    rows: R,
    f: impl Fn(U, T) -> U + Copy,
) {
    let c = if std::mem::size_of::<U>() <= 4 {
        fold_blocks::<T, U, R, 64>(cells, src, at, rows, 0, f)
    } else {
        0
    };
    let c = fold_blocks::<T, U, R, 32>(cells, src, at, rows, c, f);
    let c = fold_blocks::<T, U, R, 8>(cells, src, at, rows, c, f);
    fold_blocks::<T, U, R, 1>(cells, src, at, rows, c, f);
}

/// Folds one segment's rows into `out` (`out.len()` elements each): one call of a loop
/// compiled per instruction set per segment.
#[inline]
fn fold_cell<T: Element>(
    p: &Problem<'_, T>,
    lv: Level,
    base: usize,
    pos: Positions<'_>,
    out: &mut [T],
    arg: Option<&mut [i64]>,
    acc: &mut [T::Wide],
) {
    match pos {
        Positions::Range(r) => fold_rows(
            p,
            lv,
            base,
            Run {
                lo: r.start,
                len: r.len(),
            },
            out,
            arg,
            acc,
        ),
        Positions::Order { all, at, end } => match all {
            Order::Narrow(all) => {
                let rows = Listed {
                    all: &all[at..],
                    len: end - at,
                };
                fold_rows(p, lv, base, rows, out, arg, acc)
            }
            Order::Wide(all) => {
                let rows = Listed {
                    all: &all[at..],
                    len: end - at,
                };
                fold_rows(p, lv, base, rows, out, arg, acc)
            }
        },
    }
}

/// One segment's fold, by reduction.
#[inline]
fn fold_rows<T: Element, R: RowList>(
    p: &Problem<'_, T>,
    lv: Level,
    base: usize,
    rows: R,
    out: &mut [T],
    arg: Option<&mut [i64]>,
    acc: &mut [T::Wide],
) {
    let (src, at, e) = (p.src, (base, p.dims.k), p.dims.e);
    match p.reduce {
        Reduction::Mul => {
            sum_like::<T, FoldMulC, R>(lv, src, at, rows, out, acc, p.include_self, Reduction::Mul)
        }
        Reduction::Mean => {
            sum_like::<T, FoldAddC, R>(lv, src, at, rows, out, acc, p.include_self, Reduction::Mean)
        }
        Reduction::Min => extreme::<T, MinC, R>(
            lv,
            src,
            at,
            rows,
            out,
            arg,
            p.include_self,
            e,
            Reduction::Min,
        ),
        Reduction::Max => extreme::<T, MaxC, R>(
            lv,
            src,
            at,
            rows,
            out,
            arg,
            p.include_self,
            e,
            Reduction::Max,
        ),
        _ => {
            sum_like::<T, FoldAddC, R>(lv, src, at, rows, out, acc, p.include_self, Reduction::Add)
        }
    }
}

crate::kernels::simd::multiversion! {
    if (const { matches!(T::DTYPE, DType::F32 | DType::F64 | DType::F16 | DType::BF16) })
    /// Sum, product or mean of the rows, accumulated in `T::Wide` and rounded once. An empty
    /// segment (without `include_self`) gives 0 (1 for the product). The steps leave NaN as
    /// the hardware makes it (NaN absorbs every later step); the result is made canonical
    /// once. Compiled per instruction set for the float types, the start and the rounding
    /// with the fold (as baseline code around it they cost segment_coo about a tenth at 20
    /// rows per segment).
    fn sum_like<T: Element, C: Combiner<T::Wide>, R: RowList>(src: &[T], at: (usize, usize), rows: R, out: &mut [T], acc: &mut [T::Wide], include_self: bool, red: Reduction) -> () {
        let acc = &mut acc[..out.len()];
        if include_self {
            for (a, &o) in acc.iter_mut().zip(out.iter()) {
                *a = o.widen();
            }
        } else {
            acc.fill(<T::Wide as Element>::identity(red));
        }
        fold_all(acc, src, at, rows, |a, x: T| C::combine(a, x.widen()));
        let count = u64::from(include_self) + rows.len() as u64;
        if count == 0 {
            out.fill(empty_value::<T>(red));
        } else if red == Reduction::Mean {
            for (o, &a) in out.iter_mut().zip(acc.iter()) {
                *o = T::narrow(<T::Wide as Element>::reduce_mean(a, count).canonical());
            }
        } else {
            for (o, &a) in out.iter_mut().zip(acc.iter()) {
                *o = T::narrow(a.canonical());
            }
        }
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
