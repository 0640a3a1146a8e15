//! A scatter whose fixed cost is all there is: a few elements of a 1-D `src` into a few cells,
//! folded on the stack in one pass, with no plan and no allocation. It is what a jitted call
//! of ten elements pays beside XLA's own call (the FFI handlers take it first).
//!
//! The segment fold's result bit for bit. Each cell folds its values in index order from the
//! reduction's identity: sums, products and means in `T::Wide`, rounded once; min and max in
//! `T`. A cell nothing reaches is 0 (1 for `mul`).

use super::plan::Origin;
use crate::dtype::{Element, Reduction};
use crate::error::Result;
use crate::index::IndexInt;
use crate::kernels::segment::fold::sum_cell;
use crate::reduce::{Combiner, FoldAddC, FoldMulC, MaxC, MinC};

/// The most cells a small scatter folds (its accumulators live on the stack).
pub const SMALL_CELLS: usize = 64;

/// The most updates a small scatter takes.
pub const SMALL_UPDATES: usize = 1024;

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
    let own = include_self;
    match reduce {
        Reduction::Min => extreme::<T, I, MinC>(src, index, out, reduce, own),
        Reduction::Max => extreme::<T, I, MaxC>(src, index, out, reduce, own),
        Reduction::Mul => sums::<T, I, FoldMulC>(src, index, out, reduce, own),
        _ => sums::<T, I, FoldAddC>(src, index, out, reduce, own),
    }
    Some(Ok(()))
}

/// The cell of a checked index value (in `[0, n)`, `n <= SMALL_CELLS`).
#[inline(always)]
fn cell<I: IndexInt>(v: I) -> usize {
    (v.to_i64_sat() as usize).min(SMALL_CELLS - 1)
}

/// Sum, product or mean: as the segment fold's `sum_batch` (with `include_self`, a cell starts
/// from its own value, counted once, and one nothing reaches keeps its bits).
fn sums<T: Element, I: IndexInt, C: Combiner<T::Wide>>(
    src: &[T],
    index: &[I],
    out: &mut [T],
    red: Reduction,
    include_self: bool,
) {
    let mut acc = [<T::Wide as Element>::identity(red); SMALL_CELLS];
    let mut count = [0u64; SMALL_CELLS];
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
    for ((o, &a), &k) in out.iter_mut().zip(&acc).zip(&count) {
        if !include_self {
            *o = sum_cell(a, k, red);
        } else if k > 0 {
            *o = sum_cell(a, k + 1, red);
        }
    }
}

/// Min or max: as the segment fold's `extreme`, without positions (with `include_self`, a
/// cell starts from its own value).
fn extreme<T: Element, I: IndexInt, C: Combiner<T>>(
    src: &[T],
    index: &[I],
    out: &mut [T],
    red: Reduction,
    include_self: bool,
) {
    let mut acc = [T::identity(red); SMALL_CELLS];
    let mut reached = [false; SMALL_CELLS];
    if include_self {
        acc[..out.len()].copy_from_slice(out);
    }
    for (&x, &v) in src.iter().zip(index) {
        let c = cell(v);
        acc[c] = C::combine(acc[c], x);
        reached[c] = true;
    }
    for ((o, &a), &r) in out.iter_mut().zip(&acc).zip(&reached) {
        if r {
            *o = a;
        } else if !include_self {
            *o = T::default();
        }
    }
}
