//! `scatter_update`: OpenVINO ScatterUpdate-3, BNNSScatter's 1-D-index mode, torch
//! `index_copy_` / `index_add_` / `index_reduce_`.

use super::{Component, Plan, ScatterOptions, run_in_place, run_out, run_out_of_place, shape_text};
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::index::IndexInt;
use crate::shape::normalize_axis;
use crate::view::{Layout, Tensor, TensorView, TensorViewMut};

const OP: &str = "scatter_update";

/// Shape rule: `updates.shape == data.shape[..axis] ++ indices.shape ++ data.shape[axis+1..]`,
/// indices of any rank (0-D included).
pub(crate) fn plan(
    dest: &Layout,
    idx: &Layout,
    upd: &Layout,
    opts: &ScatterOptions,
) -> Result<Plan> {
    let r = dest.shape.len();
    let axis = normalize_axis(OP, "axis", opts.axis, r)?;
    let qi = idx.shape.len();
    let expected: Vec<usize> = dest.shape[..axis]
        .iter()
        .chain(&idx.shape)
        .chain(&dest.shape[axis + 1..])
        .copied()
        .collect();
    if upd.shape.len() != expected.len() {
        return Err(Error::rank(
            OP,
            "updates",
            format!("rank(indices) + rank(data) - 1 = {}", expected.len()),
            upd.shape.len(),
        ));
    }
    if upd.shape != expected {
        return Err(Error::shape(
            OP,
            "updates",
            format!(
                "data.shape[..{axis}] ++ indices.shape ++ data.shape[{}..] = {}",
                axis + 1,
                shape_text(&expected)
            ),
            &upd.shape,
        ));
    }
    Ok(Plan {
        op: OP,
        outer_shape: dest.shape[..axis].to_vec(),
        dest_outer: dest.strides[..axis].to_vec(),
        upd_outer: upd.strides[..axis].to_vec(),
        tuple_shape: idx.shape.clone(),
        idx_tuple: idx.strides.clone(),
        upd_tuple: upd.strides[axis..axis + qi].to_vec(),
        dest_tuple: vec![0; qi],
        comps: vec![Component {
            dim: axis,
            size: dest.shape[axis],
            dest_stride: dest.strides[axis],
        }],
        comp_stride: 0,
        nd_position: false,
        slice_shape: dest.shape[axis + 1..].to_vec(),
        dest_slice: dest.strides[axis + 1..].to_vec(),
        upd_slice: upd.strides[axis + qi..].to_vec(),
        elem_axis: None,
    })
}

/// Whole-slice scatter along an axis, out of place.
///
/// `out = data`, then for every outer coordinate `o` (over `data.shape[..axis]`), every
/// position `p` of `indices` in row-major order and every inner coordinate `i`,
/// `out[o, indices[p], i] = f(out[o, indices[p], i], updates[o, p, i])`.
///
/// # Errors
/// Unsupported reduction for the dtype; axis outside `[-r, r)` (so rank-0 data is an error);
/// `updates` not of shape `data.shape[..axis] ++ indices.shape ++ data.shape[axis+1..]`; any
/// index rejected by the policy.
///
/// # Examples
///
/// ```
/// use tensor_scatter::{scatter_update, ScatterOptions, TensorView};
/// // OpenVINO ScatterUpdate-3, example 2: columns 0 and 2 of a 3 × 5 matrix.
/// let data = [-1.0f32, 1.0, -1.0, 3.0, 4.0, -1.0, 6.0, -1.0, 8.0, 9.0, -1.0, 11.0, 1.0, 13.0, 14.0];
/// let out = scatter_update(
///     &TensorView::new(&data, &[3, 5]).unwrap(),
///     &TensorView::new(&[0i32, 2], &[2]).unwrap(),
///     &TensorView::new(&[1.0f32, 1.0, 1.0, 1.0, 1.0, 2.0], &[3, 2]).unwrap(),
///     &ScatterOptions::new().axis(1),
/// )
/// .unwrap();
/// assert_eq!(
///     out.as_slice(),
///     &[1.0, 1.0, 1.0, 3.0, 4.0, 1.0, 6.0, 1.0, 8.0, 9.0, 1.0, 11.0, 2.0, 13.0, 14.0]
/// );
/// ```
pub fn scatter_update<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<Tensor<T>> {
    run_out_of_place(OP, plan, data, indices, updates, opts)
}

/// [`scatter_update`] in place, into an existing (possibly strided) destination.
///
/// # Errors
/// As [`scatter_update`]; on error `dest` is bit-for-bit unchanged.
///
/// # Examples
///
/// ```
/// use tensor_scatter::{scatter_update_into, Reduction, ScatterOptions, TensorView, TensorViewMut};
/// // torch index_add_: rows 0 and 0 again, summed.
/// let mut m = [1u32; 4]; // 2 × 2
/// scatter_update_into(
///     &mut TensorViewMut::new(&mut m, &[2, 2]).unwrap(),
///     &TensorView::new(&[0i64, 0], &[2]).unwrap(),
///     &TensorView::new(&[1u32, 2, 3, 4], &[2, 2]).unwrap(),
///     &ScatterOptions::new().reduction(Reduction::Add),
/// )
/// .unwrap();
/// assert_eq!(m, [5, 7, 1, 1]);
/// ```
pub fn scatter_update_into<T: Element, I: IndexInt>(
    dest: &mut TensorViewMut<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    run_in_place(OP, plan, dest, indices, updates, opts)
}

/// [`scatter_update`] into a caller-provided output: `out = data`, then the scatter, without
/// allocating. `out` must have data's shape and may be strided; when both are contiguous the
/// copy of `data` is fused into the kernel (one pass over the output instead of two).
///
/// # Errors
/// As [`scatter_update`], plus a shape mismatch of `out`; on error `out` is bit-for-bit unchanged.
///
/// # Examples
///
/// ```
/// use tensor_scatter::{scatter_update_out, ScatterOptions, TensorView, TensorViewMut};
/// // Rows 2 and 0 of a 3 × 2 matrix replaced, written into a reused buffer.
/// let data = [0u8; 6];
/// let mut out = [9u8; 6];
/// scatter_update_out(
///     &TensorView::new(&data, &[3, 2]).unwrap(),
///     &TensorView::new(&[2i32, 0], &[2]).unwrap(),
///     &TensorView::new(&[1u8, 2, 3, 4], &[2, 2]).unwrap(),
///     &mut TensorViewMut::new(&mut out, &[3, 2]).unwrap(),
///     &ScatterOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out, [3, 4, 0, 0, 1, 2]);
/// ```
pub fn scatter_update_out<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    out: &mut TensorViewMut<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    run_out(OP, plan, data, indices, updates, out, opts)
}
