//! The inverses of the segment reductions: every output position reads its segment's row.
//! Both check their index first, then run the crate's gathers.

use super::plan::{self, Mode, Origin};
use super::{SegmentOptions, filled};
use crate::dtype::{BitsOf, Element};
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::gather::{GatherOptions, GatherOutOfRange};
use crate::index::{IndexInt, NegativeIndices};
use crate::shape::numel;
use crate::view::{Tensor, TensorView};

/// `gather_coo`: `out[.., e, ..] = src[.., index[.., e], ..]` along `dim = index.ndim - 1`
/// (the inverse of [`segment_coo`](super::segment_coo): every position reads its segment's row). `index` need not
/// be sorted; its leading dims expand to src's, and the output has src's shape with
/// `index.shape[dim]` along dim.
///
/// ```
/// use tensor_scatter::segment::{gather_coo, SegmentOptions};
/// use tensor_scatter::TensorView;
/// let out = gather_coo(
///     &TensorView::new(&[1.0f32, 2.0, 3.0], &[3]).unwrap(),
///     &TensorView::new(&[0i64, 0, 2], &[3]).unwrap(),
///     &SegmentOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice(), &[1.0, 1.0, 3.0]);
/// ```
///
/// # Errors
/// A rank of index of 0 or above src's; an index that does not broadcast; a value outside
/// `[0, src.shape[dim])`.
pub fn gather_coo<T: Element, I: IndexInt>(
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    by_width(src, |s| coo(s, index, opts))
}

/// A gather only moves bits: [`gather_coo`] and [`gather_csr`] run on `src` as the unsigned
/// integers of its width ([`BitsOf`]), one copy per width instead of per dtype, as the
/// gathers do.
fn by_width<T: Element>(
    src: &TensorView<'_, T>,
    run: impl FnOnce(&TensorView<'_, BitsOf<T>>) -> Result<Tensor<BitsOf<T>>>,
) -> Result<Tensor<T>> {
    let out = run(&crate::kernels::bits_view(src))?;
    Ok(Tensor {
        // SAFETY: every element is the bits of one of `src`'s elements or zero bits (a
        // position no segment covers), and both are valid `T`s.
        data: unsafe { crate::kernels::vec_from_bits::<T>(out.data) },
        shape: out.shape,
    })
}

fn coo<T: Element, I: IndexInt>(
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    const OP: &str = "gather_coo";
    let (dim, target) = gather_target(OP, "index", src, &index.layout.shape)?;
    let strides = plan::broadcast_strides(OP, "index", index, &target, dim)?;
    // Every value of index as given, whether or not an output cell reads it.
    let origin = Origin::own(OP, "index", &index.layout.shape, dim);
    let own = plan::own_lanes(OP, "index", index, dim)?;
    plan::check_index(
        Ctx::new(opts.par),
        &own,
        src.layout.shape[dim],
        false,
        &origin,
    )?;
    if index.layout.numel == 0 {
        // A zero-size index dim is one of the output's (the broadcast rule): nothing to read.
        numel(OP, "index", &target)?;
        return Tensor::from_vec(vec![], &target);
    }
    let gopts = GatherOptions::new()
        .axis(dim as i64)
        .negative(NegativeIndices::Error)
        .par(opts.par);
    // The expanded index reaches only the index's own elements (`broadcast_strides`).
    let expanded = |shape: &[usize], strides: &[isize]| {
        index.rewalk(shape, strides).ok_or_else(|| {
            Error::invalid(
                OP,
                "index",
                "an expansion that is not a broadcast".to_string(),
            )
        })
    };
    let r = if plan::mode_of(&target, &strides, dim) == Mode::Shared {
        let row = expanded(&[target[dim]], &[strides[dim]])?;
        crate::gather::gather(src, &row, &gopts)
    } else {
        let full = expanded(&target, &strides)?;
        crate::gather::gather_elements(src, &full, &gopts)
    };
    // Index values were checked above: what is left to fail is the output's allocation.
    r.map_err(|e| e.with_op(OP))
}

/// `gather_csr`: every position of segment `i` reads row `i` of `src` along
/// `dim = indptr.ndim - 1` (the inverse of [`segment_csr`](super::segment_csr)). `src.shape[dim]` must be
/// `indptr.shape[dim] - 1`; the output's extent along dim is indptr's last value
/// (torch_scatter's rule), and positions before `indptr[0]` are 0 (*ours*; torch_scatter
/// leaves them unwritten).
///
/// ```
/// use tensor_scatter::segment::{gather_csr, SegmentOptions};
/// use tensor_scatter::TensorView;
/// let out = gather_csr(
///     &TensorView::new(&[1.0f32, 2.0, 3.0], &[3]).unwrap(),
///     &TensorView::new(&[0i64, 2, 2, 3], &[4]).unwrap(),
///     &SegmentOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice(), &[1.0, 1.0, 3.0]);
/// ```
///
/// # Errors
/// A rank of indptr of 0 or above src's; an indptr that does not broadcast or whose extent
/// is not `src.shape[dim] + 1` (or 0 when src has no segments); a decreasing or negative
/// offset.
pub fn gather_csr<T: Element, I: IndexInt>(
    src: &TensorView<'_, T>,
    indptr: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    by_width(src, |s| csr(s, indptr, opts))
}

fn csr<T: Element, I: IndexInt>(
    src: &TensorView<'_, T>,
    indptr: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    const OP: &str = "gather_csr";
    let (dim, mut target) = gather_target(OP, "indptr", src, &indptr.layout.shape)?;
    let segments = src.layout.shape[dim];
    // No offsets are zero segments too, as segment_csr reads them (torch_scatter's zero-size
    // tests pass both).
    let offsets = indptr.layout.shape[dim];
    if offsets != segments + 1 && !(segments == 0 && offsets == 0) {
        return Err(Error::shape(
            OP,
            "indptr",
            format!(
                "{} offsets along dim {dim} (src's extent there plus one)",
                segments + 1
            ),
            &indptr.layout.shape,
        ));
    }
    let strides = plan::broadcast_strides(OP, "indptr", indptr, &target, dim)?;
    let mode = plan::mode_of(&target, &strides, dim);
    let own = plan::own_lanes(OP, "indptr", indptr, dim)?;
    let extent = match own.values.last() {
        Some(&v) if v > 0 => usize::try_from(v).map_err(|_| Error::overflow(OP, "indptr"))?,
        _ => 0,
    };
    let origin = Origin::own(OP, "indptr", &indptr.layout.shape, dim);
    plan::check_indptr(&own, extent, &origin)?;
    let mut shape = target.clone();
    shape[dim] = extent;
    if shape.contains(&0) {
        // Nothing to gather, and the lanes and expanded index below could still be 2⁴⁰ or
        // `extent` (up to 2⁶³) long.
        return Tensor::from_vec(vec![], &shape);
    }
    let lanes = plan::read_lanes(OP, "indptr", indptr, &target, &strides, dim, mode)?;
    // Expand to a COO index (segments + 1 marks positions outside every segment: filled).
    let rows = lanes.values.len() / lanes.len.max(1);
    let mut index = filled(
        OP,
        "indptr",
        numel(OP, "indptr", &[rows, extent])?,
        segments as i64,
    )?;
    for (r, chunk) in index.chunks_mut(extent.max(1)).enumerate().take(rows) {
        let offs = lanes.lane(r);
        for s in 0..segments {
            chunk[offs[s] as usize..offs[s + 1] as usize].fill(s as i64);
        }
    }
    target[dim] = extent;
    let gopts = GatherOptions::new()
        .axis(dim as i64)
        .negative(NegativeIndices::Error)
        .out_of_range(GatherOutOfRange::Fill)
        .par(opts.par);
    let r = if mode == Mode::Shared {
        crate::gather::gather(src, &TensorView::new(&index, &[extent])?, &gopts)
    } else {
        // [leading..., extent], broadcast over the trailing dims.
        let mut st = vec![0isize; target.len()];
        let mut acc = 1isize;
        for d in (0..=dim).rev() {
            st[d] = acc;
            acc *= target[d] as isize;
        }
        let full = TensorView::with_strides(&index, 0, &target, &st)?;
        crate::gather::gather_elements(src, &full, &gopts)
    };
    r.map_err(|e| e.with_op(OP))
}

/// `dim = index.ndim - 1` and the gathered output's shape (src's, with the index's extent
/// along dim).
fn gather_target<T>(
    op: &'static str,
    arg: &'static str,
    src: &TensorView<'_, T>,
    ishape: &[usize],
) -> Result<(usize, Vec<usize>)> {
    let sshape = &src.layout.shape;
    let dim = plan::index_dim(op, arg, sshape.len(), ishape)?;
    let mut target = sshape.clone();
    target[dim] = ishape[dim];
    Ok((dim, target))
}
