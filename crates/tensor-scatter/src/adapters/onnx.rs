//! ONNX: `ScatterElements` and `ScatterND` (opset 18), the deprecated `Scatter` (opset 11),
//! `Gather`, `GatherElements` and `GatherND` (opset 13), and `TensorScatter` (opset 24, the
//! KV-cache update), with their attribute vocabulary.
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
        let names: Vec<&str> = index_types.iter().map(|t| t.name()).collect();
        return Err(Error::unsupported_dtype(
            op,
            "indices",
            indices.dtype(),
            format!("{} (the ONNX type constraint)", names.join(" or ")),
        ));
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

/// ONNX `Scatter` (opset 9–11, deprecated): `ScatterElements` without a reduction.
///
/// # Errors
/// As [`scatter_elements`] with reduction `none`.
///
/// ```
/// use tensor_scatter::{onnx, DynTensor};
/// let out = onnx::scatter(
///     &DynTensor::from_vec(vec![0i32; 3], &[3]).unwrap(),
///     &DynTensor::from_vec(vec![-1i64], &[1]).unwrap(),
///     &DynTensor::from_vec(vec![7i32], &[1]).unwrap(),
///     0,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<i32>(), Some(&[0, 0, 7][..]));
/// ```
pub fn scatter(
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    axis: i64,
) -> Result<DynTensor> {
    scatter_elements(data, indices, updates, axis, "none").map_err(|e| e.with_op("Scatter"))
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

/// ONNX `TensorScatter` (opset 24): the KV-cache update.
///
/// `past_cache` has shape `(batch, D1, …, max_seq, …, Dn)` with the sequence dimension at
/// `axis` (default −2 in ONNX; never 0, the batch dimension); `update` has the same shape
/// except `seq ≤ max_seq` along `axis`. For every prefix `p = (b, …)` of the dimensions before
/// `axis` and every `s < seq`:
///
/// ```text
/// present[p, pos, …] = update[p, s, …]   pos = w[b] + s              (mode "linear")
///                                        pos = (w[b] + s) mod max_seq (mode "circular")
/// ```
///
/// with `w = write_indices` (int64, shape `(batch,)`, all zeros when absent). Every other
/// element is `past_cache`'s. Positions within one batch row are distinct (`seq ≤ max_seq`),
/// so the result never depends on write order.
///
/// # Errors
/// An unknown `mode` (`arg` `"mode"`); `axis` outside `[-rank, rank)` or equal to 0 (after
/// normalisation); `update` of another dtype, rank, or shape (any dimension but `axis` differs,
/// or `seq > max_seq`); `write_indices` not int64 or not of shape `(batch,)`; a negative write
/// index (both modes); in `linear` mode `w[b] + seq > max_seq` (`IndexOutOfRange` on
/// `write_indices`, naming the batch position). The ONNX spec leaves the last two undefined;
/// we refuse them before anything is written.
///
/// ```
/// use tensor_scatter::{onnx, DynTensor};
/// // Two sequences of a [batch 2, max_seq 3, 1] cache; sample 1 wraps around.
/// let cache = DynTensor::from_vec(vec![0i32; 6], &[2, 3, 1]).unwrap();
/// let update = DynTensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2, 1]).unwrap();
/// let w = DynTensor::from_vec(vec![0i64, 2], &[2]).unwrap();
/// let out = onnx::tensor_scatter(&cache, &update, Some(&w), -2, "circular").unwrap();
/// assert_eq!(out.as_slice::<i32>(), Some(&[1, 2, 0, 4, 0, 3][..]));
/// // The same write in linear mode runs past the end of sample 1: an error.
/// let err = onnx::tensor_scatter(&cache, &update, Some(&w), -2, "linear").unwrap_err();
/// assert_eq!(err.arg(), "write_indices");
/// ```
pub fn tensor_scatter(
    past_cache: &DynTensor,
    update: &DynTensor,
    write_indices: Option<&DynTensor>,
    axis: i64,
    mode: &str,
) -> Result<DynTensor> {
    const OP: &str = "TensorScatter";
    let circular = match mode {
        "linear" => false,
        "circular" => true,
        other => {
            return Err(Error::invalid(
                OP,
                "mode",
                format!("'{other}' is not a mode; opset 24 defines linear and circular"),
            ));
        }
    };
    let shape = past_cache.shape();
    let rank = shape.len();
    let axis_err = || {
        Error::new(ErrorKind::AxisOutOfRange {
            op: OP,
            arg: "axis",
            axis: i128::from(axis),
            rank,
        })
    };
    let r = i64::try_from(rank).map_err(|_| axis_err())?;
    let ax = if axis < 0 { axis.wrapping_add(r) } else { axis };
    if !(0..r).contains(&ax) {
        return Err(axis_err());
    }
    if ax == 0 {
        return Err(Error::invalid(
            OP,
            "axis",
            "the sequence axis cannot be 0, the batch dimension",
        ));
    }
    let ax = ax as usize; // in [1, rank): checked above
    if update.dtype() != past_cache.dtype() {
        return Err(Error::new(ErrorKind::DTypeMismatch {
            op: OP,
            arg: "update",
            expected: past_cache.dtype(),
            got: update.dtype(),
        }));
    }
    let ushape = update.shape();
    let (max_seq, seq) = (shape[ax], ushape.get(ax).copied().unwrap_or(0));
    let shape_ok = ushape.len() == rank
        && ushape
            .iter()
            .zip(shape)
            .enumerate()
            .all(|(d, (u, c))| if d == ax { u <= c } else { u == c });
    if !shape_ok {
        return Err(Error::shape(
            OP,
            "update",
            format!("past_cache's shape {shape:?} with at most {max_seq} along axis {ax}"),
            ushape,
        ));
    }
    let batch = shape[0];
    let w: Vec<i64> = match write_indices {
        None => vec![0; batch],
        Some(t) => {
            if t.dtype() != DType::I64 {
                return Err(Error::unsupported_dtype(
                    OP,
                    "write_indices",
                    t.dtype(),
                    "int64 (the ONNX type constraint)",
                ));
            }
            if t.shape() != [batch] {
                return Err(Error::shape(
                    OP,
                    "write_indices",
                    format!("[{batch}] (the batch size)"),
                    t.shape(),
                ));
            }
            t.as_slice::<i64>().map(<[i64]>::to_vec).unwrap_or_default()
        }
    };
    for (b, &v) in w.iter().enumerate() {
        if v < 0 {
            return Err(Error::new(ErrorKind::NegativeIndex {
                op: OP,
                arg: "write_indices",
                position: vec![b],
                value: i128::from(v),
                dim: ax,
            }));
        }
        // linear: the whole run [w, w + seq) must lie inside the cache.
        if !circular && i128::from(v) + seq as i128 > max_seq as i128 {
            return Err(Error::new(ErrorKind::IndexOutOfRange {
                op: OP,
                arg: "write_indices",
                position: vec![b],
                value: i128::from(v),
                dim: ax,
                size: max_seq.saturating_sub(seq).saturating_add(1),
            }));
        }
    }
    if past_cache.buffer().is_empty() {
        return Ok(past_cache.clone());
    }
    // As a ScatterND over [prefix, max_seq, inner] with tuples (prefix, pos): slices of
    // `inner` elements, distinct positions within each prefix, so no duplicates.
    let prefix: usize = shape[..ax].iter().product();
    let inner: usize = shape[ax + 1..].iter().product();
    let per_batch = shape[1..ax].iter().product::<usize>();
    let mut tuples = Vec::with_capacity(prefix.saturating_mul(seq).saturating_mul(2));
    for p in 0..prefix {
        let start = w[p / per_batch.max(1)] as u64; // non-negative: checked above
        for s in 0..seq as u64 {
            let pos = if circular {
                (start % max_seq as u64 + s) % max_seq as u64
            } else {
                start + s
            };
            tuples.extend([p as i64, pos as i64]);
        }
    }
    let data3 = past_cache.reshaped(&[prefix, max_seq, inner])?;
    let upd3 = update.reshaped(&[prefix, seq, inner])?;
    let idx = DynTensor::from_vec(tuples, &[prefix, seq, 2])?;
    let out = scatter_dyn(ScatterOp::Nd, &data3, &idx, &upd3, &ScatterOptions::new())
        .map_err(|e| e.with_op(OP))?;
    out.reshaped(shape)
}
