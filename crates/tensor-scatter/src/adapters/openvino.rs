//! OpenVINO: `ScatterUpdate-3` (whole slices along an axis given as a tensor),
//! `ScatterElementsUpdate-12` (element-wise, with `reduction` and `use_init_val`),
//! `ScatterNDUpdate-15` (index tuples, with `reduction`), and the gathers `Gather-8`,
//! `GatherElements-6` and `GatherND-8`.
//!
//! ```
//! use tensor_scatter::{openvino, DynTensor};
//! let out = openvino::scatter_update(
//!     &DynTensor::from_vec(vec![0i32; 6], &[3, 2]).unwrap(),
//!     &DynTensor::from_vec(vec![2i64], &[]).unwrap(), // 0-D indices
//!     &DynTensor::from_vec(vec![7i32, 8], &[2]).unwrap(),
//!     &DynTensor::from_vec(vec![0i32], &[1]).unwrap(), // axis as a 1-element tensor
//! )
//! .unwrap();
//! assert_eq!(out.as_slice::<i32>(), Some(&[0, 0, 0, 0, 7, 8][..]));
//! ```

use crate::dynamic::integer_scalar;
use crate::{
    DynGatherOptions, DynTensor, Error, ErrorKind, GatherOp, GatherOutOfRange, IndexPolicy,
    NegativeIndices, OutOfRange, Reduction, Result, ScatterOp, ScatterOptions, gather_dyn,
    scatter_dyn,
};

/// Reads the `axis` input: an integer scalar or 1-element 1-D tensor.
fn axis_value(op: &'static str, axis: &DynTensor) -> Result<i64> {
    if !axis.dtype().is_integer() {
        return Err(Error::unsupported_dtype(
            op,
            "axis",
            axis.dtype(),
            "an integer dtype",
        ));
    }
    if !(axis.shape().is_empty() || axis.shape() == [1]) {
        return Err(Error::shape(
            op,
            "axis",
            "a scalar or a 1-element 1-D tensor".into(),
            axis.shape(),
        ));
    }
    let value = integer_scalar(axis)
        .ok_or_else(|| Error::invalid(op, "axis", "the axis tensor holds no value"))?;
    i64::try_from(value).map_err(|_| {
        Error::new(ErrorKind::AxisOutOfRange {
            op,
            arg: "axis",
            axis: value,
            rank: 0,
        })
    })
}

/// `ScatterUpdate-3`: a copy of `data` with
/// `data[…, indices[m…p], …] = updates[…, m…p, …]` along `axis` (in `[-r, r-1]`).
/// Negative and out-of-range indices are errors (the spec raises an exception); duplicates:
/// the last update in row-major index order wins.
///
/// # Errors
/// A non-integer or multi-element `axis`; axis out of range; `updates` not of shape
/// `data.shape[..axis] ++ indices.shape ++ data.shape[axis+1..]`; a negative or too large index.
///
/// ```
/// use tensor_scatter::{openvino, DynTensor};
/// let err = openvino::scatter_update(
///     &DynTensor::from_vec(vec![0i32; 3], &[3]).unwrap(),
///     &DynTensor::from_vec(vec![-1i64], &[1]).unwrap(),
///     &DynTensor::from_vec(vec![7i32], &[1]).unwrap(),
///     &DynTensor::from_vec(vec![0i32], &[]).unwrap(),
/// )
/// .unwrap_err();
/// assert!(err.is_negative_index());
/// ```
pub fn scatter_update(
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    axis: &DynTensor,
) -> Result<DynTensor> {
    const OP: &str = "ScatterUpdate-3";
    let opts = ScatterOptions::new()
        .axis(axis_value(OP, axis)?)
        .index_policy(IndexPolicy::new(NegativeIndices::Error, OutOfRange::Error));
    scatter_dyn(ScatterOp::Update, data, indices, updates, &opts).map_err(|e| e.with_op(OP))
}

/// `ScatterElementsUpdate-12`: element-wise scatter along `axis` with `reduction` ∈ {`none`,
/// `sum`, `prod`, `min`, `max`, `mean`} and `use_init_val` (our `include_self`). Negative
/// indices count from the end; integer mean rounds toward −∞.
///
/// # Errors
/// An unknown reduction; mean on bool data; every error of
/// [`scatter_elements`](crate::scatter_elements).
///
/// ```
/// use tensor_scatter::{openvino, DynTensor};
/// // The spec's example: sum with use_init_val = true.
/// let out = openvino::scatter_elements_update(
///     &DynTensor::from_vec(vec![2.0f32, 3.0, 4.0, 6.0], &[4]).unwrap(),
///     &DynTensor::from_vec(vec![1i32, 0, 0, -2, -1, 2], &[6]).unwrap(),
///     &DynTensor::from_vec(vec![10.0f32, 20.0, 30.0, 40.0, 70.0, 60.0], &[6]).unwrap(),
///     &DynTensor::from_vec(vec![0i32], &[]).unwrap(),
///     "sum",
///     true,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<f32>(), Some(&[52.0f32, 13.0, 104.0, 76.0][..]));
/// ```
pub fn scatter_elements_update(
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    axis: &DynTensor,
    reduction: &str,
    use_init_val: bool,
) -> Result<DynTensor> {
    const OP: &str = "ScatterElementsUpdate-12";
    let reduction = match reduction {
        "none" => Reduction::None,
        "sum" => Reduction::Add,
        "prod" => Reduction::Mul,
        "min" => Reduction::Min,
        "max" => Reduction::Max,
        "mean" => Reduction::Mean,
        other => {
            return Err(Error::reduction(
                OP,
                other,
                "expected one of none, sum, prod, min, max, mean",
            ));
        }
    };
    let opts = ScatterOptions::new()
        .axis(axis_value(OP, axis)?)
        .reduction(reduction)
        .include_self(use_init_val);
    scatter_dyn(ScatterOp::Elements, data, indices, updates, &opts).map_err(|e| e.with_op(OP))
}

/// `ScatterNDUpdate-15`: ONNX-style ScatterND with OpenVINO's reductions (`none`, `sum`,
/// `sub`, `prod`, `min`, `max`). Indices are i32 or i64; negative indices count from the end
/// (v15 normalises them); duplicates with `none`: the last update in row-major index order
/// wins (v15's rule); on bool data sum = OR, sub = XOR, prod = AND, max = OR, min = AND.
///
/// # Errors
/// Indices not i32/i64; an unknown reduction; every error of [`scatter_nd`](crate::scatter_nd)
/// (an out-of-range component is an error, as in the v15 reference's negative test).
///
/// ```
/// use tensor_scatter::{openvino, DynTensor};
/// // The TF example with SUB (from OpenVINO's reference tests).
/// let out = openvino::scatter_nd_update(
///     &DynTensor::from_vec(vec![1i32, 6, 1, 1, 11, 1], &[3, 2]).unwrap(),
///     &DynTensor::from_vec(vec![0i64, 1, 2, 0], &[2, 2]).unwrap(),
///     &DynTensor::from_vec(vec![5i32, 10], &[2]).unwrap(),
///     "sub",
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<i32>(), Some(&[1, 1, 1, 1, 1, 1][..]));
/// ```
pub fn scatter_nd_update(
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    reduction: &str,
) -> Result<DynTensor> {
    const OP: &str = "ScatterNDUpdate-15";
    let reduction = match reduction {
        "none" => Reduction::None,
        "sum" => Reduction::Add,
        "sub" => Reduction::Sub,
        "prod" => Reduction::Mul,
        "min" => Reduction::Min,
        "max" => Reduction::Max,
        other => {
            return Err(Error::reduction(
                OP,
                other,
                "expected one of none, sum, sub, prod, min, max",
            ));
        }
    };
    if !matches!(indices.dtype(), crate::DType::I32 | crate::DType::I64) {
        return Err(Error::unsupported_dtype(
            OP,
            "indices",
            indices.dtype(),
            "int32 or int64 (the OpenVINO type constraint)",
        ));
    }
    let opts = ScatterOptions::new().reduction(reduction);
    scatter_dyn(ScatterOp::Nd, data, indices, updates, &opts).map_err(|e| e.with_op(OP))
}

/// `Gather-8`: whole slices along `axis` (a scalar or 1-element tensor) with `batch_dims`
/// (negative counts from indices' rank). Negative indices count from the end; **out-of-range
/// indices gather zeros** (the spec's rule), never an error.
///
/// # Errors
/// A non-integer or multi-element `axis`; every shape error of [`gather`](crate::gather).
///
/// ```
/// use tensor_scatter::{openvino, DynTensor};
/// // The spec's example: indices [3, 10, -20] gather [4, 0, 0].
/// let out = openvino::gather(
///     &DynTensor::from_vec(vec![1i32, 2, 3, 4, 5], &[5]).unwrap(),
///     &DynTensor::from_vec(vec![3i64, 10, -20], &[3]).unwrap(),
///     &DynTensor::from_vec(vec![0i64], &[]).unwrap(),
///     0,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<i32>(), Some(&[4, 0, 0][..]));
/// ```
pub fn gather(
    data: &DynTensor,
    indices: &DynTensor,
    axis: &DynTensor,
    batch_dims: i64,
) -> Result<DynTensor> {
    const OP: &str = "Gather-8";
    let opts = DynGatherOptions::new()
        .axis(axis_value(OP, axis)?)
        .batch_dims(batch_dims)
        .out_of_range(GatherOutOfRange::Fill);
    gather_dyn(GatherOp::Gather, data, indices, &opts).map_err(|e| e.with_op(OP))
}

/// `GatherElements-6`: element-wise along the `axis` attribute; indices must lie in
/// `[0, data.shape[axis] - 1]` (negative values are an error, as the spec's range says).
///
/// # Errors
/// Every error of [`gather_elements`](crate::gather_elements), a negative index included.
///
/// ```
/// use tensor_scatter::{openvino, DynTensor};
/// let out = openvino::gather_elements(
///     &DynTensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2]).unwrap(),
///     &DynTensor::from_vec(vec![1i32, 0], &[1, 2]).unwrap(),
///     0,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<i32>(), Some(&[3, 2][..]));
/// ```
pub fn gather_elements(data: &DynTensor, indices: &DynTensor, axis: i64) -> Result<DynTensor> {
    const OP: &str = "GatherElements-6";
    let opts = DynGatherOptions::new()
        .axis(axis)
        .negative(NegativeIndices::Error);
    gather_dyn(GatherOp::Elements, data, indices, &opts).map_err(|e| e.with_op(OP))
}

/// `GatherND-8`: index tuples with `batch_dims` (batch dims kept in the output, unlike
/// GatherND-5). Negative indices count from the end (OpenVINO ≥ 2025.3); out-of-range
/// indices are an error.
///
/// # Errors
/// Every error of [`gather_nd`](crate::gather_nd). Batch dims must be equal (the spec also
/// accepts broadcastable ones; we do not broadcast).
///
/// ```
/// use tensor_scatter::{openvino, DynTensor};
/// // The spec's example 2: slices [[3, 4], [1, 2]].
/// let out = openvino::gather_nd(
///     &DynTensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap(),
///     &DynTensor::from_vec(vec![1i64, 0], &[2, 1]).unwrap(),
///     0,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<f32>(), Some(&[3.0f32, 4.0, 1.0, 2.0][..]));
/// ```
pub fn gather_nd(data: &DynTensor, indices: &DynTensor, batch_dims: i64) -> Result<DynTensor> {
    const OP: &str = "GatherND-8";
    let opts = DynGatherOptions::new().batch_dims(batch_dims);
    gather_dyn(GatherOp::Nd, data, indices, &opts).map_err(|e| e.with_op(OP))
}
