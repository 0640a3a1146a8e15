//! A [`scatter`](super::scatter) of single elements (rows of one) runs on the crate's
//! scatter-elements kernel, which streams `src` in index order instead of sorting it by
//! destination; a fresh output folds from the reduction's identity, the kernels' fastest form.

use super::SegmentOptions;
use super::plan::{Dims, Lanes, Mode};
use crate::dtype::{Element, Reduction};
use crate::error::{Error, Result};
use crate::kernels::segment::fold;
use crate::view::{TensorView, TensorViewMut};

/// Whether a [`scatter`] of single elements (`k = 1`, rows of one) goes through the crate's
/// scatter-elements kernel: it streams `src` in index order instead of sorting it by
/// destination, which for rows this narrow is several times faster (and folds every cell in
/// the same order, so the bits are the same).
pub(super) fn by_elements(dims: Dims, mode: Mode) -> bool {
    mode != Mode::PerElement && dims.k == 1 && (dims.b == 1 || dims.e >= 1024)
}

/// For a fresh output of single elements: the reduction's identity, when folding every cell
/// from it (the scatter kernels' fastest form, `include_self`) and then giving the cells no
/// update reached the empty value ([`untouched_to_empty`]) is the result without
/// `include_self`: sum, product, min and max.
pub(super) fn identity_start<T: Element>(red: Reduction) -> Option<T> {
    matches!(
        red,
        Reduction::Add | Reduction::Mul | Reduction::Min | Reduction::Max
    )
    .then(|| T::identity(red))
}

/// After a fold from the identity `id` ([`identity_start`]), the cells no update reached get
/// `empty`. Nothing to do when the two are the same bits (integer sums, every product).
/// Otherwise a cell that took updates ends on the identity's bits only when every update it
/// took has them (`-0.0` is a float sum only of `-0.0`s, `+inf` a minimum only of `+inf`s,
/// `i64::MAX` a minimum only of `i64::MAX`s): so among the cells holding them, those reached
/// were reached by such an update, and only those are marked (usually none; one pass over
/// the updates finds them).
pub(super) fn untouched_to_empty<T: Element>(
    op: &'static str,
    buf: &mut [T],
    src: &[T],
    lanes: &Lanes<'_>,
    dims: Dims,
    id: T,
    empty: T,
) -> Result<()> {
    let bits = id.to_bits_u64();
    if bits == empty.to_bits_u64() {
        return Ok(());
    }
    let mut marked: Vec<u64> = Vec::new();
    let (e, n) = (dims.e, dims.n);
    for lane in 0..dims.b {
        let cells = lanes.lane(lane);
        for (j, u) in src[lane * e..(lane + 1) * e].iter().enumerate() {
            if u.to_bits_u64() == bits {
                if marked.is_empty() {
                    let words = buf.len().div_ceil(64);
                    marked
                        .try_reserve_exact(words)
                        .map_err(|_| Error::out_of_memory(op, "out", words.saturating_mul(8)))?;
                    marked.resize(words, 0);
                }
                // Every index was checked in `[0, n)`.
                let c = lane * n + cells[j] as usize;
                marked[c / 64] |= 1 << (c % 64);
            }
        }
    }
    let reached = |c: usize| marked.get(c / 64).is_some_and(|w| w >> (c % 64) & 1 == 1);
    for (c, x) in buf.iter_mut().enumerate() {
        if x.to_bits_u64() == bits && !reached(c) {
            *x = empty;
        }
    }
    Ok(())
}

/// A 1-D [`crate::scatter_elements_into`] per lane of `buf` (`[b, n]`): the fold of each cell
/// in index order from the identity (from `buf`'s value with `include_self`), in `T::Wide`
/// and rounded once, which is [`fold::run`]'s result bit for bit. A cell that receives
/// nothing keeps `buf`'s value (torch_scatter's 0, or 1 for `mul`, without `out`).
#[allow(clippy::too_many_arguments)]
pub(super) fn by_scatter_elements<T: Element>(
    op: &'static str,
    src: &[T],
    lanes: &Lanes<'_>,
    dims: Dims,
    red: Reduction,
    include_self: bool,
    opts: &SegmentOptions,
    buf: &mut [T],
) -> Result<()> {
    if !include_self && red == Reduction::Mul {
        buf.fill(fold::empty_value::<T>(red)); // The others' empty value is `buf`'s 0.
    }
    let so = crate::ScatterOptions::new()
        .reduction(red)
        .include_self(include_self)
        .accumulation(crate::Accumulation::Wide)
        .par(opts.par);
    let (e, n) = (dims.e, dims.n);
    for lane in 0..dims.b {
        let index = TensorView::new(lanes.lane(lane), &[e])?;
        let updates = TensorView::new(&src[lane * e..(lane + 1) * e], &[e])?;
        let mut dest = TensorViewMut::new(&mut buf[lane * n..(lane + 1) * n], &[n])?;
        crate::scatter_elements_into(&mut dest, &index, &updates, &so)
            .map_err(|err| err.with_op(op))?;
    }
    Ok(())
}
