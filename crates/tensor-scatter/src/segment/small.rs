//! A scatter whose fixed cost is all there is: a few elements of a 1-D `src` into a few cells,
//! folded in one pass with no views or plan (and, up to 64 cells, no allocation: the
//! accumulators live on the stack). It is what a jitted call of ten elements pays beside XLA's
//! own call, and a Python call beside torch's (the FFI handlers and the Python package take it
//! first).
//!
//! The segment fold's result bit for bit. Each cell folds its values in index order from the
//! reduction's identity: sums, products and means in `T::Wide`, rounded once; min and max in
//! `T`. A cell nothing reaches is 0 (1 for `mul`).

use super::plan::Origin;
use crate::dtype::{Element, Reduction};
use crate::error::Result;
use crate::index::IndexInt;
use crate::kernels::segment::fold::{empty_value, sum_cell};
use crate::reduce::{Combiner, FoldAddC, FoldMulC, MaxC, MinC};

/// The most cells a small scatter folds. Up to here its one pass over the cells costs less
/// than the planned path's views and plans (about 1 µs); from a few thousand updates the
/// planned kernels, unrolled and on two threads, are faster per update.
pub const SMALL_CELLS: usize = 1024;

/// The most updates a small scatter takes.
pub const SMALL_UPDATES: usize = 1024;

/// Up to this many cells the accumulators live on the stack; more take one allocation.
const STACK_CELLS: usize = 64;

/// torch_scatter's `scatter(src, index, 0, dim_size=out.len(), reduce)` of a 1-D `src` and an
/// `index` of the same length into `out`, when the call is small: at most [`SMALL_CELLS`]
/// cells and [`SMALL_UPDATES`] updates, `reduce` one of sum, mul, mean, min and max.
/// `include_self`: `out`'s values take part, as `scatter(..., out=out)` folds them (a mean
/// counts each as one value; a cell nothing reaches keeps its bits); otherwise `out` is
/// overwritten. Every index is checked before a cell is written; on error `out` is unchanged.
/// `None` when the call is not small, for the planned path ([`super::scatter`],
/// [`super::scatter_out`]) to take. The same bits as that path.
///
/// # Errors
/// An index outside `[0, out.len())`, named as the planned path names it.
pub fn scatter_small<T: Element, I: IndexInt>(
    src: &[T],
    index: &[I],
    out: &mut [T],
    reduce: Reduction,
    include_self: bool,
) -> Option<Result<()>> {
    let (e, n) = (src.len(), out.len());
    let takes = matches!(
        reduce,
        Reduction::Add | Reduction::Mul | Reduction::Mean | Reduction::Min | Reduction::Max
    );
    if index.len() != e || n > SMALL_CELLS || e > SMALL_UPDATES || !takes {
        return None;
    }
    if let Some(j) = index
        .iter()
        .position(|v| !(0..n as i64).contains(&v.to_i64_sat()))
    {
        // The planned path's error for it (dim 0 of `n`, at position `j`).
        let origin = Origin::own("scatter", "index", &[], 0);
        return Some(Err(origin.fault(vec![j], index[j].to_i64_sat(), n)));
    }
    let with = (reduce, include_self);
    // A sum or product from `out`'s own values in a type that is its own accumulator folds in
    // `out` itself (no accumulators, no counts, no pass over the cells) while the updates are
    // at most twice the cells: its loop costs about 1.1 ns an update against the
    // accumulators' 0.75 plus 0.7 a cell (record/2026-11-30-floors-and-small-doors.md).
    // Without `include_self` the cells start from the value a cell nothing reaches holds (0,
    // or 1 for a product): the same fold as from the identity, unless a sum meets an update
    // with the identity's bits (-0.0: from +0.0 it would end +0.0).
    let in_place = <T::Wide as Element>::DTYPE == T::DTYPE && e <= 2 * n;
    let fresh = |red: Reduction| {
        let empty = empty_value::<T>(red);
        let id = T::identity(red).to_bits_u64();
        // The scan only where the two differ (a float sum); branch-free, so it vectorises.
        let exact = empty.to_bits_u64() == id
            || !src.iter().fold(false, |m, x| m | (x.to_bits_u64() == id));
        exact.then_some(empty)
    };
    match reduce {
        Reduction::Min => extreme::<T, I, MinC>(src, index, out, with),
        Reduction::Max => extreme::<T, I, MaxC>(src, index, out, with),
        Reduction::Add | Reduction::Mul if in_place && include_self => {
            in_out_reduce::<T, I>(src, index, out, reduce)
        }
        Reduction::Add | Reduction::Mul if in_place && let Some(v) = fresh(reduce) => {
            out.fill(v);
            in_out_reduce::<T, I>(src, index, out, reduce)
        }
        Reduction::Mul => sums::<T, I, FoldMulC>(src, index, out, with),
        _ => sums::<T, I, FoldAddC>(src, index, out, with),
    }
    Some(Ok(()))
}

/// [`in_out`] for a sum or a product.
fn in_out_reduce<T: Element, I: IndexInt>(src: &[T], index: &[I], out: &mut [T], red: Reduction) {
    if red == Reduction::Mul {
        in_out::<T, I, FoldMulC>(src, index, out)
    } else {
        in_out::<T, I, FoldAddC>(src, index, out)
    }
}

/// `f` over `n` cells holding `v`: on the stack up to [`STACK_CELLS`], else on the heap.
#[inline(always)]
fn cells<W: Copy, R>(n: usize, v: W, f: impl FnOnce(&mut [W]) -> R) -> R {
    if n <= STACK_CELLS {
        let mut a = [v; STACK_CELLS];
        f(&mut a[..n])
    } else {
        f(&mut vec![v; n])
    }
}

/// The cell of a checked index value (in `[0, n)`).
#[inline(always)]
fn cell<I: IndexInt>(v: I) -> usize {
    v.to_i64_sat() as usize
}

/// Sum, product or mean: as the segment fold's `sum_batch` (with `include_self`, a cell starts
/// from its own value, counted once, and one nothing reaches keeps its bits).
fn sums<T: Element, I: IndexInt, C: Combiner<T::Wide>>(
    src: &[T],
    index: &[I],
    out: &mut [T],
    (red, include_self): (Reduction, bool),
) {
    let n = out.len();
    cells(n, <T::Wide as Element>::identity(red), |acc| {
        cells(n, 0u32, |count| {
            if include_self {
                for (a, &o) in acc.iter_mut().zip(out.iter()) {
                    *a = o.widen();
                }
            }
            for (&x, &v) in src.iter().zip(index) {
                let c = cell(v);
                acc[c] = C::combine(acc[c], x.widen());
                count[c] += 1;
            }
            // As `sum_batch`: `out`'s own value counts once; alone, it keeps its bits.
            for ((o, &a), &k) in out.iter_mut().zip(acc.iter()).zip(count.iter()) {
                if !(include_self && k == 0) {
                    *o = sum_cell(a, u64::from(k) + u64::from(include_self), red);
                }
            }
        })
    })
}

/// Sum or product where `T::Wide` is `T`, from `out`'s values: each update folds into its cell
/// of `out` in index order (the fold `sums` runs, from the same start), and a cell that took
/// updates then gets [`Element::canonical`] as `sum_cell` gives it (a NaN made canonical), one
/// that took none keeps its bits. Every index was checked.
fn in_out<T: Element, I: IndexInt, C: Combiner<T::Wide>>(src: &[T], index: &[I], out: &mut [T]) {
    for (&x, &v) in src.iter().zip(index) {
        let c = cell(v);
        out[c] = T::narrow(C::combine(out[c].widen(), x.widen()));
    }
    // Only a NaN changes (and integers have none: the pass compiles away); a load per
    // update, a store only where one was made.
    for &v in index {
        let c = cell(v);
        if out[c].is_nan_value() {
            out[c] = T::narrow(out[c].widen().canonical());
        }
    }
}

/// Min or max: as the segment fold's `extreme`, without positions. Every index was checked,
/// so the fold runs in `out` itself: with `include_self` from its own values, else from the
/// identity, a cell nothing reaches then made 0.
fn extreme<T: Element, I: IndexInt, C: Combiner<T>>(
    src: &[T],
    index: &[I],
    out: &mut [T],
    (red, include_self): (Reduction, bool),
) {
    if include_self {
        for (&x, &v) in src.iter().zip(index) {
            let c = cell(v);
            out[c] = C::combine(out[c], x);
        }
        return;
    }
    out.fill(T::identity(red));
    cells(out.len(), false, |reached| {
        for (&x, &v) in src.iter().zip(index) {
            let c = cell(v);
            out[c] = C::combine(out[c], x);
            reached[c] = true;
        }
        for (o, &r) in out.iter_mut().zip(reached.iter()) {
            if !r {
                *o = T::default();
            }
        }
    })
}
