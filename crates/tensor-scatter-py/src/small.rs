//! The ONNX-style operators' small calls: a scatter or gather of one contiguous dim, at most
//! `SMALL_UPDATES` indices into at most `SMALL_CELLS` cells, runs here with no views or plans
//! (about 1 µs of a 2 µs call: record/2026-11-30-small-python-calls.md), for the bits the
//! planned path gives. Whatever it does not take (another layout, a negative or out-of-range
//! index, which each policy treats its own way, an option it does not read) goes the planned
//! way, with nothing written.

use tensor_scatter::segment as seg;
use tensor_scatter::{DType, IndexInt, Reduction, ScatterOp, ScatterOptions};

use crate::operand::Operand;
use crate::segment::{line, small_fold, small_operands};

/// Whether `scatter_elements` or `scatter_update` of `updates` `u` at `i` into data `d` is small:
/// data of one contiguous dim (so the two operators are the same work), `u` and `i`
/// [`small_operands`] into its cells (`u` of data's dtype: the caller's check), along axis 0,
/// and `include_self` (the default; without it a cell no update reaches keeps data, which the
/// torch_scatter fold does not). A sum or product folds in the cells themselves while the
/// updates are at most twice the cells; otherwise it and a mean (a pass over accumulators and
/// counts after the updates) only while the updates are at most [`SUM_UPDATES`] or the cells
/// at most 64: past both the planned kernels were faster
/// (record/2026-11-30-floors-and-small-doors.md).
pub(crate) fn scatter_fits(
    op: ScatterOp,
    d: &Operand<'_>,
    i: &Operand<'_>,
    u: &Operand<'_>,
    opts: &ScatterOptions,
) -> bool {
    matches!(op, ScatterOp::Elements | ScatterOp::Update)
        && matches!(opts.axis, 0 | -1)
        && opts.include_self
        && line(d)
        && small_operands(u, i, d.len())
        && match opts.reduction {
            Reduction::None | Reduction::Min | Reduction::Max => true,
            // Folded in the cells themselves (`scatter_small`'s in-place fold).
            Reduction::Add | Reduction::Mul if i.len() <= 2 * d.len() => true,
            _ => i.len() <= SUM_UPDATES || d.len() <= 64,
        }
}

/// The most updates a small sum, product or mean takes into more than 64 cells.
const SUM_UPDATES: usize = 512;

/// Folds the updates of a [`scatter_fits`] call into `out` (`d.len()` elements of data's dtype
/// holding data's values, overlapping neither `i` nor `u`): `true` when done, `false` (nothing
/// written) for the planned path: a negative or out-of-range index, or a reduction the fold
/// does not take (`sub`).
pub(crate) fn scatter_into(
    i: &Operand<'_>,
    u: &Operand<'_>,
    out: *mut u8,
    n: usize,
    red: Reduction,
) -> bool {
    if red == Reduction::None {
        return match u.dtype.size_of() {
            4 => assign::<u32>(i, u, out, n),
            _ => assign::<u64>(i, u, out, n),
        };
    }
    // The fold with `include_self`: data's value starts each cell, as the planned path's does.
    matches!(small_fold(u, i, (out, n), red, true), Some(Ok(())))
}

/// Assignment (the last update in index order wins), by width: every index is checked first.
fn assign<W: Copy>(i: &Operand<'_>, u: &Operand<'_>, out: *mut u8, n: usize) -> bool {
    fn run<W: Copy, I: IndexInt>(i: &Operand<'_>, u: &Operand<'_>, out: *mut u8, n: usize) -> bool {
        // SAFETY: `i` and `u` are one non-empty dim of contiguous elements (`scatter_fits`)
        // of `I` and of `W`'s width, aligned (`Operand` refuses others) and held for the call;
        // `out` is `n` aligned elements of that width overlapping neither (the caller's).
        let (index, src, out) = unsafe {
            (
                std::slice::from_raw_parts(i.origin as *const I, i.shape[0]),
                std::slice::from_raw_parts(u.origin as *const W, u.shape[0]),
                std::slice::from_raw_parts_mut(out.cast::<W>(), n),
            )
        };
        if !index
            .iter()
            .all(|&x| x.to_i64_sat() >= 0 && x.to_i64_sat() < n as i64)
        {
            return false;
        }
        for (&x, &v) in index.iter().zip(src) {
            out[x.to_i64_sat() as usize] = v;
        }
        true
    }
    match i.dtype {
        DType::I32 => run::<W, i32>(i, u, out, n),
        _ => run::<W, i64>(i, u, out, n),
    }
}

/// Whether `gather` (axis 0, no batch dims) or `gather_elements` of `d` at `i` is small: both
/// one contiguous dim (so the two are the same work), at most `SMALL_UPDATES` indices from at
/// most `SMALL_CELLS` cells, int32 or int64 indices, any dtype (copied by width).
pub(crate) fn gather_fits(d: &Operand<'_>, i: &Operand<'_>, axis: i64, batch_dims: i64) -> bool {
    matches!(axis, 0 | -1)
        && batch_dims == 0
        && line(d)
        && line(i)
        && (1..=seg::SMALL_UPDATES).contains(&i.len())
        && (1..=seg::SMALL_CELLS).contains(&d.len())
        && matches!(i.dtype, DType::I32 | DType::I64)
        && matches!(d.dtype.size_of(), 1 | 2 | 4 | 8)
}

/// The gather of a [`gather_fits`] call into `out` (`i.len()` elements of data's dtype,
/// overlapping neither input): `false` (nothing written) when an index is negative or out of
/// range, which each policy treats its own way, for the planned path.
pub(crate) fn gather_into(d: &Operand<'_>, i: &Operand<'_>, out: *mut u8) -> bool {
    fn run<W: Copy, I: IndexInt>(d: &Operand<'_>, i: &Operand<'_>, out: *mut u8) -> bool {
        let (n, m) = (d.shape[0], i.shape[0]);
        // SAFETY: `d` and `i` are one non-empty dim of contiguous elements (`gather_fits`) of
        // `W`'s width and of `I`, aligned and held for the call; `out` is `m` aligned elements
        // of that width overlapping neither (the caller's contract).
        let (data, index, out) = unsafe {
            (
                std::slice::from_raw_parts(d.origin as *const W, n),
                std::slice::from_raw_parts(i.origin as *const I, m),
                std::slice::from_raw_parts_mut(out.cast::<W>(), m),
            )
        };
        if !index
            .iter()
            .all(|&x| x.to_i64_sat() >= 0 && x.to_i64_sat() < n as i64)
        {
            return false;
        }
        for (o, &x) in out.iter_mut().zip(index) {
            *o = data[x.to_i64_sat() as usize];
        }
        true
    }
    fn width<W: Copy>(d: &Operand<'_>, i: &Operand<'_>, out: *mut u8) -> bool {
        match i.dtype {
            DType::I32 => run::<W, i32>(d, i, out),
            _ => run::<W, i64>(d, i, out),
        }
    }
    match d.dtype.size_of() {
        1 => width::<u8>(d, i, out),
        2 => width::<u16>(d, i, out),
        4 => width::<u32>(d, i, out),
        _ => width::<u64>(d, i, out),
    }
}
