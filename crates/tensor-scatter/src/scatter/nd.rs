//! `scatter_nd`: ONNX ScatterND, DirectML SCATTER_ND, BNNSScatterND, OpenVINO ScatterNDUpdate,
//! TF `tensor_scatter_nd_*`.

use super::{Component, Plan, ScatterOptions, run_in_place, run_out, run_out_of_place, shape_text};
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::index::IndexInt;
use crate::view::{Layout, Tensor, TensorView, TensorViewMut};

const OP: &str = "scatter_nd";

/// Shape rule: `indices` has rank `q >= 1`, `k = indices.shape[q-1] <= rank(data)`, and
/// `updates.shape == indices.shape[..q-1] ++ data.shape[k..]`.
pub(crate) fn plan(
    dest: &Layout,
    idx: &Layout,
    upd: &Layout,
    _opts: &ScatterOptions,
) -> Result<Plan> {
    let r = dest.shape.len();
    let q = idx.shape.len();
    if q == 0 {
        return Err(Error::rank(OP, "indices", "rank of at least 1".into(), 0));
    }
    let k = idx.shape[q - 1];
    if k > r {
        return Err(Error::shape(
            OP,
            "indices",
            format!("a last dimension (the tuple length) of at most {r}, the rank of data"),
            &idx.shape,
        ));
    }
    let expected: Vec<usize> = idx.shape[..q - 1]
        .iter()
        .chain(&dest.shape[k..])
        .copied()
        .collect();
    if upd.shape != expected {
        return Err(Error::shape(
            OP,
            "updates",
            format!(
                "indices.shape[..{}] ++ data.shape[{k}..] = {}",
                q - 1,
                shape_text(&expected)
            ),
            &upd.shape,
        ));
    }
    Ok(Plan {
        op: OP,
        outer_shape: vec![],
        dest_outer: vec![],
        upd_outer: vec![],
        tuple_shape: idx.shape[..q - 1].to_vec(),
        idx_tuple: idx.strides[..q - 1].to_vec(),
        upd_tuple: upd.strides[..q - 1].to_vec(),
        dest_tuple: vec![0; q - 1],
        comps: (0..k)
            .map(|j| Component {
                dim: j,
                size: dest.shape[j],
                dest_stride: dest.strides[j],
            })
            .collect(),
        comp_stride: idx.strides[q - 1],
        nd_position: true,
        slice_shape: dest.shape[k..].to_vec(),
        dest_slice: dest.strides[k..].to_vec(),
        upd_slice: upd.strides[q - 1..].to_vec(),
        elem_axis: None,
    })
}

/// Index-tuple scatter, out of place.
///
/// `out = data`, then for every tuple position `t` of `indices.shape[..q-1]` in row-major
/// order, `out[indices[t, 0], ..., indices[t, k-1], ...] = f(out[...], updates[t, ...])`.
/// With `k = rank(data)` each tuple addresses one element, with `k < rank` a slice, with
/// `k = 0` the whole tensor. Each component is checked against its own dimension.
///
/// # Errors
/// Unsupported reduction for the dtype; `indices` of rank 0; `k > rank(data)`; `updates` not of
/// shape `indices.shape[..q-1] ++ data.shape[k..]`; any index component rejected by the policy.
///
/// # Examples
///
/// ```
/// use tensor_scatter::{scatter_nd, ScatterOptions, TensorView};
/// // The DirectML SCATTER_ND example.
/// let out = scatter_nd(
///     &TensorView::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[8]).unwrap(),
///     &TensorView::new(&[4i64, 3, 1, 7], &[4, 1]).unwrap(),
///     &TensorView::new(&[9.0f32, 10.0, 11.0, 12.0], &[4]).unwrap(),
///     &ScatterOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice(), &[1.0, 11.0, 3.0, 10.0, 9.0, 6.0, 7.0, 12.0]);
/// ```
pub fn scatter_nd<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<Tensor<T>> {
    run_out_of_place(OP, plan, data, indices, updates, opts)
}

/// [`scatter_nd`] in place, into an existing (possibly strided) destination.
///
/// # Errors
/// As [`scatter_nd`]; on error `dest` is bit-for-bit unchanged.
///
/// # Examples
///
/// ```
/// use tensor_scatter::{scatter_nd_into, Reduction, ScatterOptions, TensorView, TensorViewMut};
/// let mut m = [0i32; 6]; // 2 × 3
/// scatter_nd_into(
///     &mut TensorViewMut::new(&mut m, &[2, 3]).unwrap(),
///     &TensorView::new(&[1u8, 1], &[2, 1]).unwrap(), // row 1, twice
///     &TensorView::new(&[1i32, 2, 3, 10, 20, 30], &[2, 3]).unwrap(),
///     &ScatterOptions::new().reduction(Reduction::Add),
/// )
/// .unwrap();
/// assert_eq!(m, [0, 0, 0, 11, 22, 33]);
/// ```
pub fn scatter_nd_into<T: Element, I: IndexInt>(
    dest: &mut TensorViewMut<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    run_in_place(OP, plan, dest, indices, updates, opts)
}

/// [`scatter_nd`] into a caller-provided output: `out = data`, then the scatter, without
/// allocating. `out` must have data's shape and may be strided; when both are contiguous the
/// copy of `data` is fused into the kernel (one pass over the output instead of two).
///
/// # Errors
/// As [`scatter_nd`], plus a shape mismatch of `out`; on error `out` is bit-for-bit unchanged.
///
/// # Examples
///
/// ```
/// use tensor_scatter::{scatter_nd_out, ScatterOptions, TensorView, TensorViewMut};
/// // ONNX ScatterND example 1, written into a reused buffer.
/// let data = [1i32, 2, 3, 4, 5, 6, 7, 8];
/// let mut out = [0i32; 8];
/// scatter_nd_out(
///     &TensorView::new(&data, &[8]).unwrap(),
///     &TensorView::new(&[4i64, 3, 1, 7], &[4, 1]).unwrap(),
///     &TensorView::new(&[9i32, 10, 11, 12], &[4]).unwrap(),
///     &mut TensorViewMut::new(&mut out, &[8]).unwrap(),
///     &ScatterOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out, [1, 11, 3, 10, 9, 6, 7, 12]);
/// ```
pub fn scatter_nd_out<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    out: &mut TensorViewMut<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    run_out(OP, plan, data, indices, updates, out, opts)
}
