//! DirectML: `DML_SCATTER_OPERATOR_DESC` (= `DML_SCATTER_ELEMENTS_OPERATOR_DESC`),
//! `DML_SCATTER_ND_OPERATOR_DESC` and the gathers `DML_GATHER_OPERATOR_DESC`,
//! `DML_GATHER_ELEMENTS_OPERATOR_DESC` and `DML_GATHER_ND1_OPERATOR_DESC`, with DirectML's
//! tensor constraints. DirectML clamps invalid gather indices to memory-safe garbage; here
//! they are an error.
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

use crate::{
    DType, DynGatherOptions, DynTensor, Error, ErrorKind, GatherOp, Result, ScatterOp,
    ScatterOptions, gather_dyn, scatter_dyn,
};

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
/// `dtypes` in words, for errors.
fn dtype_list(dtypes: &[DType]) -> String {
    let names: Vec<&str> = dtypes.iter().map(|t| t.name()).collect();
    format!("one of {} (the DirectML type constraint)", names.join(", "))
}

fn check_tensors(
    op: &'static str,
    input: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
) -> Result<()> {
    check_inputs(op, input, indices, Some(updates))
}

/// DimensionCount (1 to 8) of every input, the data type of `input`, `updates` sharing it
/// (scatters), and the index type.
fn check_inputs(
    op: &'static str,
    input: &DynTensor,
    indices: &DynTensor,
    updates: Option<&DynTensor>,
) -> Result<()> {
    let tensors = [
        ("data", Some(input)),
        ("indices", Some(indices)),
        ("updates", updates),
    ];
    for (arg, t) in tensors.iter().filter_map(|(a, t)| t.map(|t| (*a, t))) {
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
        return Err(Error::unsupported_dtype(
            op,
            "data",
            input.dtype(),
            dtype_list(&DATA_TYPES),
        ));
    }
    if let Some(u) = updates
        && u.dtype() != input.dtype()
    {
        return Err(Error::new(ErrorKind::DTypeMismatch {
            op,
            arg: "updates",
            expected: input.dtype(),
            got: u.dtype(),
        }));
    }
    if !INDEX_TYPES.contains(&indices.dtype()) {
        return Err(Error::unsupported_dtype(
            op,
            "indices",
            indices.dtype(),
            dtype_list(&INDEX_TYPES),
        ));
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
    strip_for(ND, arg, shape, rank, count)
}

/// [`strip`] for any operator.
fn strip_for(
    op: &'static str,
    arg: &'static str,
    shape: &[usize],
    rank: usize,
    count: usize,
) -> Result<Vec<usize>> {
    let padded = pad(shape, rank);
    let (lead, real) = padded.split_at(rank - count);
    if lead.iter().any(|&d| d != 1) {
        return Err(Error::shape(
            op,
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
            format!("a last dimension (the tuple length) of at most InputDimensionCount ({idc})"),
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

const GATHER: &str = "DML_GATHER";
const GATHER_ELEMENTS: &str = "DML_GATHER_ELEMENTS";
const GATHER_ND: &str = "DML_GATHER_ND1";

/// DimensionCount (1 to 8, equal for input and indices) and DataType of a gather's inputs.
fn check_gather_tensors(op: &'static str, input: &DynTensor, indices: &DynTensor) -> Result<()> {
    let ranks_ok = [input, indices]
        .iter()
        .all(|t| (1..=MAX_DIMENSIONS).contains(&t.shape().len()));
    if ranks_ok && indices.shape().len() != input.shape().len() {
        return Err(Error::rank(
            op,
            "indices",
            format!("DimensionCount of InputTensor ({})", input.shape().len()),
            indices.shape().len(),
        ));
    }
    check_inputs(op, input, indices, None)
}

/// Right-aligns a gathered shape to `rank` dimensions: leading ones are cropped while it is
/// longer, then it is padded with leading ones.
fn fit(op: &'static str, shape: &[usize], rank: usize) -> Result<Vec<usize>> {
    let mut s = shape;
    while s.len() > rank && s[0] == 1 {
        s = &s[1..];
    }
    if s.len() > rank {
        return Err(Error::invalid(
            op,
            "output",
            format!(
                "the gathered shape {shape:?} has more than DimensionCount ({rank}) relevant dimensions"
            ),
        ));
    }
    Ok(pad(s, rank))
}

/// `DML_GATHER_OPERATOR_DESC`: `output[…] = input[…, indices[…], …]` along `axis`, with the
/// last `index_dimensions` dims of IndicesTensor as the real indices (the leading ones must
/// be 1). OutputTensor.Sizes = `{input[..axis], real indices, input[axis+1..]}`, right-aligned
/// to the common DimensionCount (leading ones cropped). Signed indices may be negative.
///
/// # Errors
/// DimensionCount outside 1..=8 or differing; a data or index type DirectML does not list;
/// `axis >= DimensionCount`; `index_dimensions > DimensionCount`; a leading index dim that is
/// not 1; a result with more relevant dims than DimensionCount (original rank of input +
/// IndexDimensions - 1 too large); an index out of range.
///
/// ```
/// use tensor_scatter::{directml, DynTensor};
/// // The doc's example 2: rows 0, 1, 1, 2 of a 3 × 2 input, indices {1, 4}.
/// let out = directml::gather(
///     &DynTensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]).unwrap(),
///     &DynTensor::from_vec(vec![0u32, 1, 1, 2], &[1, 4]).unwrap(),
///     0,
///     1,
/// )
/// .unwrap();
/// assert_eq!(out.shape(), &[4, 2]);
/// assert_eq!(out.as_slice::<f32>(), Some(&[1.0f32, 2.0, 3.0, 4.0, 3.0, 4.0, 5.0, 6.0][..]));
/// ```
pub fn gather(
    input: &DynTensor,
    indices: &DynTensor,
    axis: u32,
    index_dimensions: u32,
) -> Result<DynTensor> {
    check_gather_tensors(GATHER, input, indices)?;
    let rank = input.shape().len();
    let a = axis as usize;
    if a >= rank {
        return Err(Error::new(ErrorKind::AxisOutOfRange {
            op: GATHER,
            arg: "axis",
            axis: i128::from(axis),
            rank,
        }));
    }
    let ixd = index_dimensions as usize;
    if ixd > rank {
        return Err(Error::invalid(
            GATHER,
            "index_dimensions",
            format!("IndexDimensions {ixd} is outside [0, {rank}]"),
        ));
    }
    let real = strip_for(GATHER, "indices", indices.shape(), rank, ixd)?;
    let out = gather_dyn(
        GatherOp::Gather,
        input,
        &indices.reshaped(&real)?,
        &DynGatherOptions::new().axis(i64::from(axis)),
    )
    .map_err(|e| e.with_op(GATHER))?;
    let shape = fit(GATHER, out.shape(), rank)?;
    out.reshaped(&shape)
}

/// `DML_GATHER_ELEMENTS_OPERATOR_DESC`: `output[c] = input[c with c[axis] := indices[c]]`;
/// IndicesTensor.Sizes equal InputTensor.Sizes except along `axis`; OutputTensor.Sizes =
/// IndicesTensor.Sizes.
///
/// # Errors
/// As [`gather`] for DimensionCount and types; `axis >= DimensionCount`; IndicesTensor.Sizes
/// differing from InputTensor.Sizes off the axis; an index out of range.
///
/// ```
/// use tensor_scatter::{directml, DynTensor};
/// // The doc's example: output[y, x] = input[indices[y, x], x].
/// let out = directml::gather_elements(
///     &DynTensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], &[3, 3]).unwrap(),
///     &DynTensor::from_vec(vec![1u32, 2, 0, 2, 0, 0], &[2, 3]).unwrap(),
///     0,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<f32>(), Some(&[4.0f32, 8.0, 3.0, 7.0, 2.0, 3.0][..]));
/// ```
pub fn gather_elements(input: &DynTensor, indices: &DynTensor, axis: u32) -> Result<DynTensor> {
    check_gather_tensors(GATHER_ELEMENTS, input, indices)?;
    let rank = input.shape().len();
    let a = axis as usize;
    if a >= rank {
        return Err(Error::new(ErrorKind::AxisOutOfRange {
            op: GATHER_ELEMENTS,
            arg: "axis",
            axis: i128::from(axis),
            rank,
        }));
    }
    if (0..rank).any(|d| d != a && indices.shape()[d] != input.shape()[d]) {
        return Err(Error::shape(
            GATHER_ELEMENTS,
            "indices",
            format!(
                "Sizes equal to InputTensor.Sizes {:?} on every dimension except Axis {a}",
                input.shape()
            ),
            indices.shape(),
        ));
    }
    gather_dyn(
        GatherOp::Elements,
        input,
        indices,
        &DynGatherOptions::new().axis(i64::from(axis)),
    )
    .map_err(|e| e.with_op(GATHER_ELEMENTS))
}

/// `DML_GATHER_ND1_OPERATOR_DESC` (and `DML_GATHER_ND_OPERATOR_DESC` with
/// `batch_dimension_count = 0`): `output[b…, t…] = input[b…, indices[b…, t…], …]`, where the
/// last `input_dimension_count` / `indices_dimension_count` dims are the real ones (the
/// leading ones must be 1) and the last real indices dim is the tuple length. The output is
/// right-aligned to the common DimensionCount.
///
/// # Errors
/// As [`gather`] for DimensionCount and types; a count outside `[1, DimensionCount]`; a
/// leading dim that is not 1; `batch_dimension_count` not below the real indices rank; a
/// tuple longer than the input's real dims minus the batch dims; batch dims that differ; an
/// index component out of range.
///
/// ```
/// use tensor_scatter::{directml, DynTensor};
/// // The doc's example 2 (2D remapping with batch count 1).
/// let out = directml::gather_nd(
///     &DynTensor::from_vec((0..12).map(|v| v as f32).collect(), &[1, 3, 2, 2]).unwrap(),
///     &DynTensor::from_vec(vec![0u32, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0], &[1, 3, 2, 2]).unwrap(),
///     3,
///     3,
///     1,
/// )
/// .unwrap();
/// assert_eq!(out.shape(), &[1, 1, 3, 2]);
/// assert_eq!(out.as_slice::<f32>(), Some(&[0.0f32, 3.0, 7.0, 4.0, 9.0, 10.0][..]));
/// ```
pub fn gather_nd(
    input: &DynTensor,
    indices: &DynTensor,
    input_dimension_count: u32,
    indices_dimension_count: u32,
    batch_dimension_count: u32,
) -> Result<DynTensor> {
    check_gather_tensors(GATHER_ND, input, indices)?;
    let rank = input.shape().len();
    let (idc, ixc) = (
        input_dimension_count as usize,
        indices_dimension_count as usize,
    );
    for (arg, count, name) in [
        ("input_dimension_count", idc, "InputDimensionCount"),
        ("indices_dimension_count", ixc, "IndicesDimensionCount"),
    ] {
        if !(1..=rank).contains(&count) {
            return Err(Error::invalid(
                GATHER_ND,
                arg,
                format!("{name} {count} is outside [1, {rank}]"),
            ));
        }
    }
    let real_input = strip_for(GATHER_ND, "data", input.shape(), rank, idc)?;
    let real_indices = strip_for(GATHER_ND, "indices", indices.shape(), rank, ixc)?;
    let out = gather_dyn(
        GatherOp::Nd,
        &input.reshaped(&real_input)?,
        &indices.reshaped(&real_indices)?,
        &DynGatherOptions::new().batch_dims(i64::from(batch_dimension_count)),
    )
    .map_err(|e| e.with_op(GATHER_ND))?;
    let shape = fit(GATHER_ND, out.shape(), rank)?;
    out.reshaped(&shape)
}
