//! `scatter_elements`: ONNX ScatterElements, DirectML SCATTER(_ELEMENTS), BNNSScatter's
//! same-shape mode, torch `scatter_reduce`, OpenVINO ScatterElementsUpdate.

use super::{Component, Plan, ScatterOptions, run_in_place, run_out, run_out_of_place, shape_text};
use std::borrow::Cow;

use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::index::IndexInt;
use crate::shape::normalize_axis;
use crate::view::{Layout, Tensor, TensorView, TensorViewMut};

const OP: &str = "scatter_elements";

/// Shape rule: `indices` has data's rank, `updates.shape == indices.shape` (or, with
/// [`ScatterOptions::updates_window`], at least as large on every dim), and
/// `indices.shape[d] <= data.shape[d]` for every `d != axis` (any extent along the axis).
pub(crate) fn plan(
    dest: &Layout,
    idx: &Layout,
    upd: &Layout,
    opts: &ScatterOptions,
) -> Result<Plan> {
    let r = dest.shape.len();
    let axis = normalize_axis(OP, "axis", opts.axis, r)?;
    if idx.shape.len() != r {
        return Err(Error::rank(
            OP,
            "indices",
            format!("rank of data ({r})"),
            idx.shape.len(),
        ));
    }
    if upd.shape != idx.shape && !(opts.updates_window && covers(&upd.shape, &idx.shape)) {
        let expected = if opts.updates_window {
            format!(
                "at least indices' extent {} on every dim",
                shape_text(&idx.shape)
            )
        } else {
            format!("shape of indices {}", shape_text(&idx.shape))
        };
        return Err(Error::shape(OP, "updates", expected, &upd.shape));
    }
    for d in (0..r).filter(|&d| d != axis) {
        if idx.shape[d] > dest.shape[d] {
            return Err(Error::shape(
                OP,
                "indices",
                format!(
                    "extent at most data's {} on every dimension except the axis {axis} (dimension {d} is {})",
                    shape_text(&dest.shape),
                    idx.shape[d]
                ),
                &idx.shape,
            ));
        }
    }
    let mut dest_tuple = dest.strides.clone();
    dest_tuple[axis] = 0;
    Ok(Plan {
        op: OP,
        outer_shape: vec![],
        dest_outer: vec![],
        upd_outer: vec![],
        tuple_shape: idx.shape.clone(),
        idx_tuple: idx.strides.clone(),
        upd_tuple: upd.strides.clone(),
        dest_tuple,
        comps: vec![Component {
            dim: axis,
            size: dest.shape[axis],
            dest_stride: dest.strides[axis],
        }],
        comp_stride: 0,
        nd_position: false,
        slice_shape: vec![],
        dest_slice: vec![],
        upd_slice: vec![],
        elem_axis: Some(axis),
    })
}

/// Whether `outer` has `inner`'s rank and at least its extent on every dim.
fn covers(outer: &[usize], inner: &[usize]) -> bool {
    outer.len() == inner.len() && outer.iter().zip(inner).all(|(o, i)| o >= i)
}

/// `updates` narrowed to the window of indices' extent at its origin, when
/// [`ScatterOptions::updates_window`] lets it be larger (PyTorch's `src` rule); as given
/// otherwise, for the plan to check.
pub(crate) fn window<'v, 'a, T: Copy>(
    updates: &'v TensorView<'a, T>,
    indices: &[usize],
    opts: &ScatterOptions,
) -> Cow<'v, TensorView<'a, T>> {
    let narrowed = (opts.updates_window && updates.layout.shape != indices)
        .then(|| updates.window(indices))
        .flatten();
    narrowed.map_or(Cow::Borrowed(updates), Cow::Owned)
}

/// Element-wise scatter along an axis, out of place.
///
/// `out = data`, then for every position `p` of `indices` in row-major order
/// `out[p with p[axis] := indices[p]] = f(out[...], updates[p])`, where `f` is the reduction
/// (see [`Reduction`](crate::Reduction)); duplicates fold in that order, so for `none` the
/// last write wins.
///
/// # Errors
/// Unsupported reduction for the dtype (mean on bool); axis outside `[-r, r)`; `indices` rank
/// differs from data's; `updates.shape != indices.shape` (unless
/// [`ScatterOptions::updates_window`] allows a larger `updates`); an `indices` extent larger than
/// data's on a non-axis dimension; any index rejected by the [`IndexPolicy`](crate::IndexPolicy).
///
/// # Examples
///
/// ```
/// use tensor_scatter::{scatter_elements, ScatterOptions, TensorView};
/// // DirectML example 1: duplicates at index 3, the last write wins.
/// let data = [0.0f32, 1.0, 2.0, 3.0, 4.0];
/// let out = scatter_elements(
///     &TensorView::new(&data, &[5]).unwrap(),
///     &TensorView::new(&[3u32, 1, 3, 0], &[4]).unwrap(),
///     &TensorView::new(&[5.0f32, 6.0, 7.0, 8.0], &[4]).unwrap(),
///     &ScatterOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice(), &[8.0, 6.0, 2.0, 7.0, 4.0]);
/// ```
pub fn scatter_elements<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<Tensor<T>> {
    let updates = &window(updates, &indices.layout.shape, opts);
    run_out_of_place(OP, plan, data, indices, updates, opts)
}

/// [`scatter_elements`] in place, into an existing (possibly strided) destination (BNNS style).
///
/// # Errors
/// As [`scatter_elements`]; on error `dest` is bit-for-bit unchanged.
///
/// # Examples
///
/// ```
/// use tensor_scatter::{scatter_elements_into, Reduction, ScatterOptions, TensorView, TensorViewMut};
/// let mut out = [10.0f32, 20.0, 30.0];
/// scatter_elements_into(
///     &mut TensorViewMut::new(&mut out, &[3]).unwrap(),
///     &TensorView::new(&[2i64, -1], &[2]).unwrap(),
///     &TensorView::new(&[1.0f32, 2.0], &[2]).unwrap(),
///     &ScatterOptions::new().reduction(Reduction::Add),
/// )
/// .unwrap();
/// assert_eq!(out, [10.0, 20.0, 33.0]);
/// ```
///
/// The destination cannot alias an input: the borrow checker refuses it, so in safe Rust
/// there is no aliased in-place call to define.
///
/// ```compile_fail
/// use tensor_scatter::{scatter_elements_into, ScatterOptions, TensorView, TensorViewMut};
/// let mut buf = [1.0f32, 2.0];
/// let mut dest = TensorViewMut::new(&mut buf, &[2]).unwrap();
/// let updates = TensorView::new(&buf, &[2]).unwrap(); // error: `buf` is mutably borrowed
/// scatter_elements_into(&mut dest, &TensorView::new(&[0i64, 1], &[2]).unwrap(), &updates,
///     &ScatterOptions::new()).unwrap();
/// ```
pub fn scatter_elements_into<T: Element, I: IndexInt>(
    dest: &mut TensorViewMut<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    let updates = &window(updates, &indices.layout.shape, opts);
    run_in_place(OP, plan, dest, indices, updates, opts)
}

/// [`scatter_elements`] into a caller-provided output: `out = data`, then the scatter, without
/// allocating. `out` must have data's shape and may be strided; when both are contiguous the
/// copy of `data` is fused into the kernel (one pass over the output instead of two).
///
/// # Errors
/// As [`scatter_elements`], plus a shape mismatch of `out`; on error `out` is bit-for-bit unchanged.
///
/// # Examples
///
/// ```
/// use tensor_scatter::{scatter_elements_out, ScatterOptions, TensorView, TensorViewMut};
/// // ONNX ScatterElements example 2 (axis 1), written into a reused buffer.
/// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
/// let mut out = [0.0f32; 5];
/// scatter_elements_out(
///     &TensorView::new(&data, &[1, 5]).unwrap(),
///     &TensorView::new(&[1i64, 3], &[1, 2]).unwrap(),
///     &TensorView::new(&[1.1f32, 2.1], &[1, 2]).unwrap(),
///     &mut TensorViewMut::new(&mut out, &[1, 5]).unwrap(),
///     &ScatterOptions::new().axis(1),
/// )
/// .unwrap();
/// assert_eq!(out, [1.0, 1.1, 3.0, 2.1, 5.0]);
/// ```
pub fn scatter_elements_out<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    out: &mut TensorViewMut<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    let updates = &window(updates, &indices.layout.shape, opts);
    run_out(OP, plan, data, indices, updates, out, opts)
}
