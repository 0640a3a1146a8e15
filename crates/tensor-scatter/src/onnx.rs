//! ONNX: `ScatterElements` and `ScatterND` (opset 18) and `Gather`, `GatherElements` and
//! `GatherND` (opset 13), with their attribute vocabulary.
//!
//! Data of any supported dtype with rank ≥ 1; `ScatterElements` indices int32 or int64,
//! `ScatterND` indices int64; `reduction` ∈ {`none`, `add`, `mul`, `max`, `min`}; negative
//! indices count from the end; out-of-range indices are an error. Where ONNX leaves duplicates
//! undefined (`none`), the last update in row-major index order wins; reductions fold in that
//! order, always including the existing value (ONNX has no `include_self`).
//!
//! ```
//! use tensor_scatter::{onnx, DynTensor};
//! // The spec's example with reduction = "mul".
//! let out = onnx::scatter_elements(
//!     &DynTensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0], &[1, 5]).unwrap(),
//!     &DynTensor::from_vec(vec![1i64, 1], &[1, 2]).unwrap(),
//!     &DynTensor::from_vec(vec![1.1f32, 2.1], &[1, 2]).unwrap(),
//!     1,
//!     "mul",
//! )
//! .unwrap();
//! assert_eq!(out.as_slice::<f32>().unwrap()[1], 2.0f32 * 1.1 * 2.1);
//! ```

use crate::{
    DType, DynGatherOptions, DynTensor, Error, ErrorKind, GatherOp, Reduction, Result, ScatterOp,
    ScatterOptions, gather_dyn, scatter_dyn,
};

/// Parses an opset-18 `reduction` attribute.
fn reduction(op: &'static str, name: &str) -> Result<Reduction> {
    Ok(match name {
        "none" => Reduction::None,
        "add" => Reduction::Add,
        "mul" => Reduction::Mul,
        "max" => Reduction::Max,
        "min" => Reduction::Min,
        other => {
            return Err(Error::reduction(
                op,
                other,
                "opset 18 defines none, add, mul, max and min",
            ));
        }
    })
}

fn check(
    op: &'static str,
    data: &DynTensor,
    indices: &DynTensor,
    index_types: &[DType],
) -> Result<()> {
    if data.shape().is_empty() {
        return Err(Error::rank(op, "data", "rank of at least 1".into(), 0));
    }
    if !index_types.contains(&indices.dtype()) {
        return Err(Error::new(ErrorKind::UnsupportedDType {
            op,
            arg: "indices",
            dtype: indices.dtype(),
        }));
    }
    Ok(())
}

/// ONNX `ScatterElements` (opset 18).
///
/// # Errors
/// Rank-0 data; indices not int32/int64; an unknown reduction; every error of
/// [`scatter_elements`](crate::scatter_elements).
pub fn scatter_elements(
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    axis: i64,
    reduction_attr: &str,
) -> Result<DynTensor> {
    const OP: &str = "ScatterElements";
    let r = reduction(OP, reduction_attr)?;
    check(OP, data, indices, &[DType::I32, DType::I64])?;
    let opts = ScatterOptions::new().axis(axis).reduction(r);
    scatter_dyn(ScatterOp::Elements, data, indices, updates, &opts).map_err(|e| e.with_op(OP))
}

/// ONNX `ScatterND` (opset 18).
///
/// # Errors
/// Rank-0 data; indices not int64; an unknown reduction; every error of
/// [`scatter_nd`](crate::scatter_nd).
///
/// ```
/// use tensor_scatter::{onnx, DynTensor};
/// let err = onnx::scatter_nd(
///     &DynTensor::from_vec(vec![0.0f32; 4], &[4]).unwrap(),
///     &DynTensor::from_vec(vec![1i32], &[1, 1]).unwrap(), // int32: not allowed by ScatterND
///     &DynTensor::from_vec(vec![1.0f32], &[1]).unwrap(),
///     "none",
/// )
/// .unwrap_err();
/// assert_eq!(err.arg(), "indices");
/// ```
pub fn scatter_nd(
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    reduction_attr: &str,
) -> Result<DynTensor> {
    const OP: &str = "ScatterND";
    let r = reduction(OP, reduction_attr)?;
    check(OP, data, indices, &[DType::I64])?;
    let opts = ScatterOptions::new().reduction(r);
    scatter_dyn(ScatterOp::Nd, data, indices, updates, &opts).map_err(|e| e.with_op(OP))
}

/// ONNX `Gather` (opset 13): `data` of rank ≥ 1, int32/int64 indices of any rank, negative
/// indices count from the end, out-of-range indices are an error.
///
/// # Errors
/// Rank-0 data; indices not int32/int64; every error of [`gather`](crate::gather).
///
/// ```
/// use tensor_scatter::{onnx, DynTensor};
/// // The spec's first example: rows 0, 1 / 1, 2 of a 3 × 2 matrix.
/// let out = onnx::gather(
///     &DynTensor::from_vec(vec![1.0f32, 1.2, 2.3, 3.4, 4.5, 5.7], &[3, 2]).unwrap(),
///     &DynTensor::from_vec(vec![0i64, 1, 1, 2], &[2, 2]).unwrap(),
///     0,
/// )
/// .unwrap();
/// assert_eq!(out.shape(), &[2, 2, 2]);
/// assert_eq!(out.as_slice::<f32>(), Some(&[1.0f32, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7][..]));
/// ```
pub fn gather(data: &DynTensor, indices: &DynTensor, axis: i64) -> Result<DynTensor> {
    const OP: &str = "Gather";
    check(OP, data, indices, &[DType::I32, DType::I64])?;
    gather_dyn(
        GatherOp::Gather,
        data,
        indices,
        &DynGatherOptions::new().axis(axis),
    )
    .map_err(|e| e.with_op(OP))
}

/// ONNX `GatherElements` (opset 13): `indices` (int32/int64) of data's rank.
///
/// # Errors
/// Rank-0 data; indices not int32/int64; every error of
/// [`gather_elements`](crate::gather_elements).
///
/// ```
/// use tensor_scatter::{onnx, DynTensor};
/// // The spec's first example (axis 1).
/// let out = onnx::gather_elements(
///     &DynTensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2]).unwrap(),
///     &DynTensor::from_vec(vec![0i64, 0, 1, 0], &[2, 2]).unwrap(),
///     1,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<i32>(), Some(&[1, 1, 4, 3][..]));
/// ```
pub fn gather_elements(data: &DynTensor, indices: &DynTensor, axis: i64) -> Result<DynTensor> {
    const OP: &str = "GatherElements";
    check(OP, data, indices, &[DType::I32, DType::I64])?;
    gather_dyn(
        GatherOp::Elements,
        data,
        indices,
        &DynGatherOptions::new().axis(axis),
    )
    .map_err(|e| e.with_op(OP))
}

/// ONNX `GatherND` (opset 13): int64 indices of rank ≥ 1 whose last dimension (the tuple
/// length) is in `[1, rank(data) - batch_dims]`.
///
/// # Errors
/// Rank-0 data; indices not int64; a tuple length of 0; every error of
/// [`gather_nd`](crate::gather_nd).
///
/// ```
/// use tensor_scatter::{onnx, DynTensor};
/// // The spec's batch_dims = 1 example.
/// let out = onnx::gather_nd(
///     &DynTensor::from_vec(vec![0i32, 1, 2, 3, 4, 5, 6, 7], &[2, 2, 2]).unwrap(),
///     &DynTensor::from_vec(vec![1i64, 0], &[2, 1]).unwrap(),
///     1,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<i32>(), Some(&[2, 3, 4, 5][..]));
/// ```
pub fn gather_nd(data: &DynTensor, indices: &DynTensor, batch_dims: i64) -> Result<DynTensor> {
    const OP: &str = "GatherND";
    check(OP, data, indices, &[DType::I64])?;
    if indices.shape().last() == Some(&0) {
        return Err(Error::shape(
            OP,
            "indices",
            "a last dimension (tuple length) of at least 1".into(),
            indices.shape(),
        ));
    }
    gather_dyn(
        GatherOp::Nd,
        data,
        indices,
        &DynGatherOptions::new().batch_dims(batch_dims),
    )
    .map_err(|e| e.with_op(OP))
}
