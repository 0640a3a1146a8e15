//! DirectML: `DML_SCATTER_OPERATOR_DESC` (= `DML_SCATTER_ELEMENTS_OPERATOR_DESC`) and
//! `DML_SCATTER_ND_OPERATOR_DESC`, with DirectML's tensor constraints.
//!
//! * 1 to 8 dimensions per tensor; data types FLOAT64, FLOAT32, FLOAT16, INT64…INT8,
//!   UINT64…UINT8 (no bfloat16, no bool); index types INT64, INT32, UINT64, UINT32.
//! * Negative indices count from the end for signed index types (feature level ≥ 3.0);
//!   out-of-range indices are an error (DirectML leaves them undefined).
//! * Duplicates: the last update in row-major index order wins (DirectML: "no guarantee").
//!
//! ```
//! use tensor_scatter::{directml, DynTensor};
//! let out = directml::scatter_elements(
//!     &DynTensor::from_vec(vec![0.0f32, 1.0, 2.0, 3.0, 4.0], &[5]).unwrap(),
//!     &DynTensor::from_vec(vec![3u32, 1, 3, 0], &[4]).unwrap(),
//!     &DynTensor::from_vec(vec![5.0f32, 6.0, 7.0, 8.0], &[4]).unwrap(),
//!     0,
//! )
//! .unwrap();
//! assert_eq!(out.as_slice::<f32>(), Some(&[8.0f32, 6.0, 2.0, 7.0, 4.0][..]));
//! ```

use crate::{DType, DynTensor, Error, ErrorKind, Result, ScatterOp, ScatterOptions, scatter_dyn};

/// Most dimensions a DirectML tensor may have.
pub const MAX_DIMENSIONS: usize = 8;

/// Data types of InputTensor / UpdatesTensor / OutputTensor (feature level 4.1).
pub const DATA_TYPES: [DType; 11] = [
    DType::F64,
    DType::F32,
    DType::F16,
    DType::I64,
    DType::I32,
    DType::I16,
    DType::I8,
    DType::U64,
    DType::U32,
    DType::U16,
    DType::U8,
];

/// Data types of IndicesTensor (feature level ≥ 3.0).
pub const INDEX_TYPES: [DType; 4] = [DType::I64, DType::I32, DType::U64, DType::U32];

const ELEMENTS: &str = "DML_SCATTER_ELEMENTS";
const ND: &str = "DML_SCATTER_ND";

/// Checks DimensionCount and DataType of the three input tensors.
fn check_tensors(
    op: &'static str,
    input: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
) -> Result<()> {
    for (arg, t) in [("data", input), ("indices", indices), ("updates", updates)] {
        if !(1..=MAX_DIMENSIONS).contains(&t.shape().len()) {
            return Err(Error::rank(
                op,
                arg,
                format!("DimensionCount in [1, {MAX_DIMENSIONS}]"),
                t.shape().len(),
            ));
        }
    }
    if !DATA_TYPES.contains(&input.dtype()) {
        return Err(Error::new(ErrorKind::UnsupportedDType {
            op,
            arg: "data",
            dtype: input.dtype(),
        }));
    }
    if updates.dtype() != input.dtype() {
        return Err(Error::new(ErrorKind::DTypeMismatch {
            op,
            arg: "updates",
            expected: input.dtype(),
            got: updates.dtype(),
        }));
    }
    if !INDEX_TYPES.contains(&indices.dtype()) {
        return Err(Error::new(ErrorKind::UnsupportedDType {
            op,
            arg: "indices",
            dtype: indices.dtype(),
        }));
    }
    Ok(())
}

/// `DML_SCATTER_OPERATOR_DESC` / `DML_SCATTER_ELEMENTS_OPERATOR_DESC`: output = input, then
/// `output[…, indices[i…], …] = updates[i…]` along `axis`.
///
/// # Errors
/// A DimensionCount outside 1..=8 or differing between the tensors; a data or index type
/// DirectML does not list; `axis >= DimensionCount`; IndicesTensor.Sizes differing from
/// InputTensor.Sizes on a dimension other than the axis; UpdatesTensor.Sizes differing from
/// IndicesTensor.Sizes; an index out of range.
///
/// ```
/// use tensor_scatter::{directml, DynTensor};
/// // DirectML forbids an index tensor smaller than the input off the axis.
/// let err = directml::scatter_elements(
///     &DynTensor::from_vec(vec![0.0f32; 6], &[2, 3]).unwrap(),
///     &DynTensor::from_vec(vec![0u32; 2], &[1, 2]).unwrap(),
///     &DynTensor::from_vec(vec![1.0f32; 2], &[1, 2]).unwrap(),
///     0,
/// )
/// .unwrap_err();
/// assert_eq!(err.arg(), "indices");
/// ```
pub fn scatter_elements(
    input: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    axis: u32,
) -> Result<DynTensor> {
    check_tensors(ELEMENTS, input, indices, updates)?;
    let r = input.shape().len();
    for (arg, t) in [("indices", indices), ("updates", updates)] {
        if t.shape().len() != r {
            return Err(Error::rank(
                ELEMENTS,
                arg,
                format!("DimensionCount of InputTensor ({r})"),
                t.shape().len(),
            ));
        }
    }
    let a = axis as usize;
    if a >= r {
        return Err(Error::new(ErrorKind::AxisOutOfRange {
            op: ELEMENTS,
            arg: "axis",
            axis: i128::from(axis),
            rank: r,
        }));
    }
    if (0..r).any(|d| d != a && indices.shape()[d] != input.shape()[d]) {
        return Err(Error::shape(
            ELEMENTS,
            "indices",
            format!(
                "Sizes equal to InputTensor.Sizes {:?} on every dimension except Axis {a}",
                input.shape()
            ),
            indices.shape(),
        ));
    }
    let opts = ScatterOptions::new().axis(i64::from(axis));
    scatter_dyn(ScatterOp::Elements, input, indices, updates, &opts)
        .map_err(|e| e.with_op(ELEMENTS))
}

/// `shape` right-aligned to `rank` dimensions by leading ones.
fn pad(shape: &[usize], rank: usize) -> Vec<usize> {
    let mut out = vec![1; rank - shape.len()];
    out.extend_from_slice(shape);
    out
}

/// The last `count` dims of `shape` (right-aligned to `rank`), checking the others are 1.
fn strip(arg: &'static str, shape: &[usize], rank: usize, count: usize) -> Result<Vec<usize>> {
    let padded = pad(shape, rank);
    let (lead, real) = padded.split_at(rank - count);
    if lead.iter().any(|&d| d != 1) {
        return Err(Error::shape(
            ND,
            arg,
            format!("leading {} dimension(s) equal to 1", rank - count),
            shape,
        ));
    }
    Ok(real.to_vec())
}

/// `DML_SCATTER_ND_OPERATOR_DESC`: output = input, then `output[indices[…]] = updates[…]`,
/// where the last IndicesTensor dimension is the length of each coordinate tuple.
///
/// `input_dimension_count` and `indices_dimension_count` say how many trailing dimensions of
/// InputTensor and IndicesTensor are meaningful; the leading ones must be 1. Tensors of
/// different DimensionCount are right-aligned with leading ones (as DirectML's own example
/// does: Input {8}, Indices {4,1}, Updates {4}). The output has InputTensor's sizes.
///
/// # Errors
/// As [`scatter_elements`] for DimensionCount and types; a count outside
/// `[1, DimensionCount]`; a leading dimension that is not 1; a tuple longer than the input's
/// meaningful dimensions; UpdatesTensor.Sizes not equal to
/// `[1…, indices real dims[..-1], input real dims[k..]]`; any index component out of range.
///
/// ```
/// use tensor_scatter::{directml, DynTensor};
/// let out = directml::scatter_nd(
///     &DynTensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[8]).unwrap(),
///     &DynTensor::from_vec(vec![4u32, 3, 1, 7], &[4, 1]).unwrap(),
///     &DynTensor::from_vec(vec![9.0f32, 10.0, 11.0, 12.0], &[4]).unwrap(),
///     1,
///     2,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<f32>(), Some(&[1.0f32, 11.0, 3.0, 10.0, 9.0, 6.0, 7.0, 12.0][..]));
/// ```
pub fn scatter_nd(
    input: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    input_dimension_count: u32,
    indices_dimension_count: u32,
) -> Result<DynTensor> {
    check_tensors(ND, input, indices, updates)?;
    let rank = [input, indices, updates]
        .iter()
        .map(|t| t.shape().len())
        .max()
        .unwrap_or(1);
    let (idc, ixc) = (
        input_dimension_count as usize,
        indices_dimension_count as usize,
    );
    if !(1..=input.shape().len()).contains(&idc) {
        return Err(Error::invalid(
            ND,
            "input_dimension_count",
            format!(
                "InputDimensionCount {idc} is outside [1, {}]",
                input.shape().len()
            ),
        ));
    }
    if !(1..=indices.shape().len()).contains(&ixc) {
        return Err(Error::invalid(
            ND,
            "indices_dimension_count",
            format!(
                "IndicesDimensionCount {ixc} is outside [1, {}]",
                indices.shape().len()
            ),
        ));
    }
    let real_input = strip("data", input.shape(), rank, idc)?;
    let real_indices = strip("indices", indices.shape(), rank, ixc)?;
    let k = real_indices[ixc - 1];
    if k > idc {
        return Err(Error::shape(
            ND,
            "indices",
            format!("a last dimension (tuple length {k}) at most InputDimensionCount ({idc})"),
            indices.shape(),
        ));
    }
    let real_updates = strip("updates", updates.shape(), rank, ixc - 1 + idc - k)?;
    let out = scatter_dyn(
        ScatterOp::Nd,
        &input.reshaped(&real_input)?,
        &indices.reshaped(&real_indices)?,
        &updates.reshaped(&real_updates)?,
        &ScatterOptions::new(),
    )
    .map_err(|e| e.with_op(ND))?;
    out.reshaped(input.shape())
}
