//! Apple Accelerate BNNS: `BNNSScatter` and `BNNSScatterND`, which scatter **in place into the
//! output** (its existing contents are the starting values) with a `BNNSReduceFunction`, and
//! `BNNSGather` / `BNNSGatherND`, which gather into a caller-allocated output.
//!
//! `BNNSScatter` has two index modes, chosen by the index shape: indices with the input's
//! shape scatter element-wise along `axis` (ScatterElements); 1-D indices move whole slices
//! along `axis` (ScatterUpdate), and then the input's shape equals the output's except along
//! `axis`, where it is the number of indices. Axis 0 is the slowest-varying (row) dimension,
//! as in Apple's examples. Negative indices are rejected (BNNS documents none); out-of-range
//! indices are an error; duplicates fold in row-major index order.
//!
//! ```
//! use tensor_scatter::bnns::{self, ReduceFunction};
//! use tensor_scatter::DynTensor;
//! let mut out = DynTensor::from_vec(vec![10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0], &[8]).unwrap();
//! bnns::scatter(
//!     0,
//!     ReduceFunction::Sum,
//!     &DynTensor::from_vec(vec![2.0f32, 4.0, 6.0, 8.0], &[4]).unwrap(),
//!     &DynTensor::from_vec(vec![1i32, 3, 7, 5], &[4]).unwrap(),
//!     &mut out,
//! )
//! .unwrap();
//! assert_eq!(out.as_slice::<f32>(), Some(&[10.0f32, 22.0, 30.0, 44.0, 50.0, 68.0, 70.0, 86.0][..]));
//! ```

use crate::{
    DType, DynGatherOptions, DynTensor, Error, ErrorKind, GatherOp, IndexPolicy, NegativeIndices,
    OutOfRange, Reduction, Result, ScatterOp, ScatterOptions, gather_dyn_out, scatter_dyn_into,
};

/// Every member of `BNNSReduceFunction`, with its C value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ReduceFunction {
    /// `BNNSReduceFunctionMax`: maximum.
    Max = 0,
    /// `BNNSReduceFunctionMin`: minimum.
    Min = 1,
    /// `BNNSReduceFunctionArgMax`: index of the maximum (no meaning for scatter).
    ArgMax = 2,
    /// `BNNSReduceFunctionArgMin`: index of the minimum (no meaning for scatter).
    ArgMin = 3,
    /// `BNNSReduceFunctionMean`: mean of the existing value and the updates.
    Mean = 4,
    /// `BNNSReduceFunctionMeanNonZero`: weighted mean (no meaning for scatter).
    MeanNonZero = 5,
    /// `BNNSReduceFunctionSum`: sum.
    Sum = 6,
    /// `BNNSReduceFunctionSumSquare`: sum of squares (no meaning for scatter).
    SumSquare = 7,
    /// `BNNSReduceFunctionSumLog`: sum of logarithms (no meaning for scatter).
    SumLog = 8,
    /// `BNNSReduceFunctionL1Norm`: sum of absolute values (no meaning for scatter).
    L1Norm = 9,
    /// `BNNSReduceFunctionLogicalOr` (`Any`): OR, bool data only.
    LogicalOr = 10,
    /// `BNNSReduceFunctionLogicalAnd` (`All`): AND, bool data only.
    LogicalAnd = 11,
    /// `BNNSReduceFunctionL2Norm`: Euclidean norm (no meaning for scatter).
    L2Norm = 12,
    /// `BNNSReduceFunctionLogSumExp` (no meaning for scatter).
    LogSumExp = 13,
    /// `BNNSReduceFunctionProduct`: product.
    Product = 14,
    /// `BNNSReduceFunctionNone`: assignment.
    None = 15,
    /// `BNNSReduceFunctionLogSum` (undocumented; no meaning for scatter).
    LogSum = 16,
}

impl ReduceFunction {
    /// Every member, in C value order.
    pub const ALL: [ReduceFunction; 17] = [
        ReduceFunction::Max,
        ReduceFunction::Min,
        ReduceFunction::ArgMax,
        ReduceFunction::ArgMin,
        ReduceFunction::Mean,
        ReduceFunction::MeanNonZero,
        ReduceFunction::Sum,
        ReduceFunction::SumSquare,
        ReduceFunction::SumLog,
        ReduceFunction::L1Norm,
        ReduceFunction::LogicalOr,
        ReduceFunction::LogicalAnd,
        ReduceFunction::L2Norm,
        ReduceFunction::LogSumExp,
        ReduceFunction::Product,
        ReduceFunction::None,
        ReduceFunction::LogSum,
    ];

    /// The member with C value `raw`.
    ///
    /// ```
    /// use tensor_scatter::bnns::ReduceFunction;
    /// assert_eq!(ReduceFunction::from_raw(6), Some(ReduceFunction::Sum));
    /// assert_eq!(ReduceFunction::from_raw(17), None);
    /// ```
    pub fn from_raw(raw: u32) -> Option<ReduceFunction> {
        ReduceFunction::ALL.get(raw as usize).copied()
    }

    /// The C name, e.g. `"BNNSReduceFunctionSum"`.
    pub fn c_name(self) -> &'static str {
        match self {
            ReduceFunction::Max => "BNNSReduceFunctionMax",
            ReduceFunction::Min => "BNNSReduceFunctionMin",
            ReduceFunction::ArgMax => "BNNSReduceFunctionArgMax",
            ReduceFunction::ArgMin => "BNNSReduceFunctionArgMin",
            ReduceFunction::Mean => "BNNSReduceFunctionMean",
            ReduceFunction::MeanNonZero => "BNNSReduceFunctionMeanNonZero",
            ReduceFunction::Sum => "BNNSReduceFunctionSum",
            ReduceFunction::SumSquare => "BNNSReduceFunctionSumSquare",
            ReduceFunction::SumLog => "BNNSReduceFunctionSumLog",
            ReduceFunction::L1Norm => "BNNSReduceFunctionL1Norm",
            ReduceFunction::LogicalOr => "BNNSReduceFunctionLogicalOr",
            ReduceFunction::LogicalAnd => "BNNSReduceFunctionLogicalAnd",
            ReduceFunction::L2Norm => "BNNSReduceFunctionL2Norm",
            ReduceFunction::LogSumExp => "BNNSReduceFunctionLogSumExp",
            ReduceFunction::Product => "BNNSReduceFunctionProduct",
            ReduceFunction::None => "BNNSReduceFunctionNone",
            ReduceFunction::LogSum => "BNNSReduceFunctionLogSum",
        }
    }

    /// The scatter reduction this function means for data of `dtype`.
    ///
    /// # Errors
    /// [`UnsupportedReduction`](ErrorKind::UnsupportedReduction) for the functions that reduce
    /// a set to a statistic (ArgMax, ArgMin, MeanNonZero, SumSquare, SumLog, L1Norm, L2Norm,
    /// LogSumExp, LogSum) and for LogicalOr / LogicalAnd on non-bool data.
    ///
    /// ```
    /// use tensor_scatter::bnns::ReduceFunction;
    /// use tensor_scatter::{DType, Reduction};
    /// assert_eq!(ReduceFunction::Product.reduction(DType::F32).unwrap(), Reduction::Mul);
    /// assert_eq!(ReduceFunction::LogicalOr.reduction(DType::Bool).unwrap(), Reduction::Max);
    /// assert!(ReduceFunction::ArgMax.reduction(DType::F32).is_err());
    /// ```
    pub fn reduction(self, dtype: DType) -> Result<Reduction> {
        let refuse = |reason: &str| Err(Error::reduction("BNNSScatter", self.c_name(), reason));
        Ok(match self {
            ReduceFunction::None => Reduction::None,
            ReduceFunction::Sum => Reduction::Add,
            ReduceFunction::Product => Reduction::Mul,
            ReduceFunction::Max => Reduction::Max,
            ReduceFunction::Min => Reduction::Min,
            ReduceFunction::Mean => Reduction::Mean,
            ReduceFunction::LogicalOr | ReduceFunction::LogicalAnd if dtype != DType::Bool => {
                return refuse("logical reductions need bool data");
            }
            ReduceFunction::LogicalOr => Reduction::Max,
            ReduceFunction::LogicalAnd => Reduction::Min,
            _ => {
                return refuse(
                    "it reduces a set to a statistic and has no meaning as a combine step between an output value and an update",
                );
            }
        })
    }
}

fn options(
    axis: usize,
    op: ReduceFunction,
    dtype: DType,
    name: &'static str,
) -> Result<ScatterOptions> {
    let reduction = op.reduction(dtype).map_err(|e| e.with_op(name))?;
    let axis = i64::try_from(axis).map_err(|_| {
        Error::new(ErrorKind::AxisOutOfRange {
            op: name,
            arg: "axis",
            axis: axis as i128,
            rank: 0,
        })
    })?;
    Ok(ScatterOptions::new()
        .axis(axis)
        .reduction(reduction)
        .index_policy(IndexPolicy::new(NegativeIndices::Error, OutOfRange::Error)))
}

/// `BNNSScatter(axis, op, input, indices, output, filter_params)`: scatters `input` into
/// `output` in place, combining with `op`.
///
/// # Errors
/// An unsupported reduce function; indices neither of the input's shape nor 1-D; every error
/// of [`scatter_elements_into`](crate::scatter_elements_into) or
/// [`scatter_update_into`](crate::scatter_update_into). On error `output` is unchanged.
pub fn scatter(
    axis: usize,
    op: ReduceFunction,
    input: &DynTensor,
    indices: &DynTensor,
    output: &mut DynTensor,
) -> Result<()> {
    const NAME: &str = "BNNSScatter";
    let opts = options(axis, op, output.dtype(), NAME)?;
    let mode = if indices.shape() == input.shape() {
        ScatterOp::Elements
    } else if indices.shape().len() == 1 {
        ScatterOp::Update
    } else {
        return Err(Error::shape(
            NAME,
            "indices",
            format!("input's shape {:?}, or 1-D", input.shape()),
            indices.shape(),
        ));
    };
    scatter_dyn_into(mode, output, indices, input, &opts).map_err(|e| e.with_op(NAME))
}

/// `BNNSScatterND(op, input, indices, output, filter_params)`: index tuples along the last
/// dimension of `indices` address elements or slices of `output`, in place.
///
/// # Errors
/// An unsupported reduce function; every error of [`scatter_nd_into`](crate::scatter_nd_into).
/// On error `output` is unchanged.
///
/// ```
/// use tensor_scatter::bnns::{self, ReduceFunction};
/// use tensor_scatter::DynTensor;
/// let mut out = DynTensor::from_vec(vec![0i32; 4], &[2, 2]).unwrap();
/// bnns::scatter_nd(
///     ReduceFunction::Max,
///     &DynTensor::from_vec(vec![5i32, -5], &[2]).unwrap(),
///     &DynTensor::from_vec(vec![1i32, 0, 1, 0], &[2, 2]).unwrap(),
///     &mut out,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<i32>(), Some(&[0, 0, 5, 0][..]));
/// ```
pub fn scatter_nd(
    op: ReduceFunction,
    input: &DynTensor,
    indices: &DynTensor,
    output: &mut DynTensor,
) -> Result<()> {
    const NAME: &str = "BNNSScatterND";
    let opts = options(0, op, output.dtype(), NAME)?;
    scatter_dyn_into(ScatterOp::Nd, output, indices, input, &opts).map_err(|e| e.with_op(NAME))
}

/// `BNNSGather(axis, input, indices, output, filter_params)`: gathers into `output`, whose
/// shape must be the gathered shape. As for `BNNSScatter`, the index shape picks the mode:
/// 1-D indices take whole slices along `axis` (output = input with `axis` resized to the
/// number of indices); indices of the input's rank take elements (output = indices' shape).
/// Negative and out-of-range indices are errors ("returns an error if any of the indices are
/// out of range").
///
/// # Errors
/// Indices neither 1-D nor of the input's rank; an output of the wrong dtype or shape; every
/// error of [`gather_out`](crate::gather_out) / [`gather_elements_out`](crate::gather_elements_out).
/// On error `output` is unchanged.
///
/// ```
/// use tensor_scatter::{bnns, DynTensor};
/// // Apple's example: elements 1, 3, 7, 5 of [10, 20, …, 80].
/// let mut out = DynTensor::from_vec(vec![0.0f32; 4], &[4]).unwrap();
/// bnns::gather(
///     0,
///     &DynTensor::from_vec(vec![10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0], &[8]).unwrap(),
///     &DynTensor::from_vec(vec![1i32, 3, 7, 5], &[4]).unwrap(),
///     &mut out,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<f32>(), Some(&[20.0f32, 40.0, 80.0, 60.0][..]));
/// ```
pub fn gather(
    axis: usize,
    input: &DynTensor,
    indices: &DynTensor,
    output: &mut DynTensor,
) -> Result<()> {
    const NAME: &str = "BNNSGather";
    let mode = if indices.shape().len() == 1 {
        GatherOp::Gather
    } else if indices.shape().len() == input.shape().len() {
        GatherOp::Elements
    } else {
        return Err(Error::shape(
            NAME,
            "indices",
            format!("1-D, or of the input's rank {}", input.shape().len()),
            indices.shape(),
        ));
    };
    let axis = i64::try_from(axis).map_err(|_| {
        Error::new(ErrorKind::AxisOutOfRange {
            op: NAME,
            arg: "axis",
            axis: axis as i128,
            rank: input.shape().len(),
        })
    })?;
    let opts = DynGatherOptions::new()
        .axis(axis)
        .negative(NegativeIndices::Error);
    gather_dyn_out(mode, input, indices, output, &opts).map_err(|e| e.with_op(NAME))
}

/// `BNNSGatherND(input, indices, output, filter_params)`: the last dimension of `indices`
/// holds lookup tuples; a tuple shorter than the input's rank gathers a slice. `output` must
/// have the gathered shape `indices[..-1] ++ input[k..]`.
///
/// # Errors
/// An output of the wrong dtype or shape; every error of [`gather_nd_out`](crate::gather_nd_out)
/// (negative indices included). On error `output` is unchanged.
///
/// ```
/// use tensor_scatter::{bnns, DynTensor};
/// // Apple's example: a one-component tuple gathers the 2 × 2 slice 1 of a 3 × 2 × 2 input.
/// let values = vec![10.0f32, 11.0, 12.0, 13.0, 20.0, 21.0, 22.0, 23.0, 30.0, 31.0, 32.0, 33.0];
/// let mut out = DynTensor::from_vec(vec![0.0f32; 4], &[2, 2]).unwrap();
/// bnns::gather_nd(
///     &DynTensor::from_vec(values, &[3, 2, 2]).unwrap(),
///     &DynTensor::from_vec(vec![1i32], &[1]).unwrap(),
///     &mut out,
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<f32>(), Some(&[20.0f32, 21.0, 22.0, 23.0][..]));
/// ```
pub fn gather_nd(input: &DynTensor, indices: &DynTensor, output: &mut DynTensor) -> Result<()> {
    const NAME: &str = "BNNSGatherND";
    let opts = DynGatherOptions::new().negative(NegativeIndices::Error);
    gather_dyn_out(GatherOp::Nd, input, indices, output, &opts).map_err(|e| e.with_op(NAME))
}
