//! ONNX (opset 18): `ScatterElements` and `ScatterND` with their attribute vocabulary.
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
    DType, DynTensor, Error, ErrorKind, Reduction, Result, ScatterOp, ScatterOptions, scatter_dyn,
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
