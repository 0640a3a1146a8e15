//! The one error type of the crate.
//!
//! Every failure is a value: shape rules, dtypes, axis, reduction and every index value are
//! checked before the first write, and the [`Error`] names the operator, the argument, the
//! position and the offending value or shape. After any error the destination is unchanged.

use std::fmt;

use crate::dtype::DType;

/// An error from a tensor-scatter operation.
///
/// Cheap to move (one pointer); inspect it with [`Error::kind`] or the `is_*` predicates.
///
/// # Examples
///
/// ```
/// use tensor_scatter::{scatter_elements, ScatterOptions, TensorView};
///
/// let data = [0.0f32; 3];
/// let err = scatter_elements(
///     &TensorView::new(&data, &[3]).unwrap(),
///     &TensorView::new(&[3i64], &[1]).unwrap(),
///     &TensorView::new(&[1.0f32], &[1]).unwrap(),
///     &ScatterOptions::new(),
/// )
/// .unwrap_err();
/// assert!(err.is_index_out_of_range());
/// assert_eq!(err.arg(), "indices");
/// assert!(err.to_string().contains("index 3 at position [0]"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<ErrorKind>);

/// What went wrong, with the details a caller needs to report it.
///
/// `op` is the operator that failed (`"scatter_elements"`, `"scatter_nd"`, `"scatter_update"`,
/// an adapter's own name such as `"DML_SCATTER_ND"`, or `"view"` for view construction);
/// `arg` is the argument at fault (`"data"`, `"indices"`, `"updates"`, `"axis"`,
/// `"reduction"`, ...).
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A tensor has the wrong number of dimensions.
    RankMismatch {
        /// Operator.
        op: &'static str,
        /// Argument whose rank is wrong.
        arg: &'static str,
        /// What the rule requires, in words (e.g. `"rank of data (3)"`).
        expected: String,
        /// The rank given.
        got: usize,
    },
    /// A tensor has the wrong shape.
    ShapeMismatch {
        /// Operator.
        op: &'static str,
        /// Argument whose shape is wrong.
        arg: &'static str,
        /// The shape (or rule) required.
        expected: String,
        /// The shape given.
        got: Vec<usize>,
    },
    /// The axis is outside `[-rank, rank)` (or the operator's own range).
    AxisOutOfRange {
        /// Operator.
        op: &'static str,
        /// Argument holding the axis.
        arg: &'static str,
        /// The axis given.
        axis: i128,
        /// Rank of the tensor the axis refers to.
        rank: usize,
    },
    /// An index value lies outside its dimension after the negative-index rule was applied.
    IndexOutOfRange {
        /// Operator.
        op: &'static str,
        /// Argument holding the index (normally `"indices"`).
        arg: &'static str,
        /// Coordinate of the offending element inside the index tensor.
        position: Vec<usize>,
        /// The index value as stored.
        value: i128,
        /// The data dimension the index addresses.
        dim: usize,
        /// Size of that dimension.
        size: usize,
    },
    /// A negative index where the index policy (or the operator's spec) forbids negatives.
    NegativeIndex {
        /// Operator.
        op: &'static str,
        /// Argument holding the index.
        arg: &'static str,
        /// Coordinate of the offending element inside the index tensor.
        position: Vec<usize>,
        /// The index value as stored.
        value: i128,
        /// The data dimension the index addresses.
        dim: usize,
    },
    /// The reduction is unknown, or has no meaning for this dtype or operator.
    UnsupportedReduction {
        /// Operator.
        op: &'static str,
        /// The reduction as named by the caller.
        reduction: String,
        /// Why it is refused.
        reason: String,
    },
    /// Two tensors that must share a dtype do not.
    DTypeMismatch {
        /// Operator.
        op: &'static str,
        /// Argument whose dtype differs.
        arg: &'static str,
        /// Required dtype.
        expected: DType,
        /// Given dtype.
        got: DType,
    },
    /// A dtype the operator does not accept for this argument.
    UnsupportedDType {
        /// Operator.
        op: &'static str,
        /// Argument.
        arg: &'static str,
        /// The dtype given.
        dtype: DType,
        /// The dtypes accepted, in words (e.g. `"int64 (the ONNX type constraint)"`).
        expected: String,
    },
    /// An element count, byte size or offset does not fit in `usize`/`isize`.
    SizeOverflow {
        /// Operator.
        op: &'static str,
        /// Argument whose size overflows.
        arg: &'static str,
    },
    /// A view's shape and strides do not fit its buffer, or a writable view overlaps itself.
    InvalidView {
        /// Operator.
        op: &'static str,
        /// Argument.
        arg: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The memory for a result could not be allocated (an output of `bytes` bytes, e.g. a
    /// gather whose small inputs ask for an enormous output). Returned instead of aborting
    /// the process; nothing was written.
    OutOfMemory {
        /// Operator.
        op: &'static str,
        /// What was being allocated: `"output"`, or `"indices"` for the flat copy or the
        /// resolved offsets of an index view (a broadcast view can be larger than memory).
        arg: &'static str,
        /// Bytes requested.
        bytes: usize,
    },
    /// Any other invalid argument value (an adapter's attribute, a file header, ...).
    InvalidArgument {
        /// Operator.
        op: &'static str,
        /// Argument.
        arg: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl Error {
    /// Wraps an [`ErrorKind`].
    pub fn new(kind: ErrorKind) -> Error {
        Error(Box::new(kind))
    }

    /// The details of the error.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// The details, to amend (an index value read back as stored).
    pub(crate) fn kind_mut(&mut self) -> &mut ErrorKind {
        &mut self.0
    }

    /// The operator that failed.
    pub fn op(&self) -> &'static str {
        use ErrorKind::*;
        match &*self.0 {
            RankMismatch { op, .. }
            | ShapeMismatch { op, .. }
            | AxisOutOfRange { op, .. }
            | IndexOutOfRange { op, .. }
            | NegativeIndex { op, .. }
            | UnsupportedReduction { op, .. }
            | DTypeMismatch { op, .. }
            | UnsupportedDType { op, .. }
            | SizeOverflow { op, .. }
            | InvalidView { op, .. }
            | OutOfMemory { op, .. }
            | InvalidArgument { op, .. } => op,
        }
    }

    /// The argument at fault (`"data"`, `"indices"`, `"updates"`, `"axis"`, `"reduction"`, ...).
    pub fn arg(&self) -> &'static str {
        use ErrorKind::*;
        match &*self.0 {
            UnsupportedReduction { .. } => "reduction",
            RankMismatch { arg, .. }
            | ShapeMismatch { arg, .. }
            | AxisOutOfRange { arg, .. }
            | IndexOutOfRange { arg, .. }
            | NegativeIndex { arg, .. }
            | DTypeMismatch { arg, .. }
            | UnsupportedDType { arg, .. }
            | SizeOverflow { arg, .. }
            | InvalidView { arg, .. }
            | OutOfMemory { arg, .. }
            | InvalidArgument { arg, .. } => arg,
        }
    }

    /// True for an index outside its dimension.
    pub fn is_index_out_of_range(&self) -> bool {
        matches!(*self.0, ErrorKind::IndexOutOfRange { .. })
    }

    /// True for a negative index that the policy forbids.
    pub fn is_negative_index(&self) -> bool {
        matches!(*self.0, ErrorKind::NegativeIndex { .. })
    }

    /// True for a rank or shape that breaks the operator's shape rule.
    pub fn is_shape_error(&self) -> bool {
        matches!(
            *self.0,
            ErrorKind::RankMismatch { .. } | ErrorKind::ShapeMismatch { .. }
        )
    }

    /// Replaces the operator name (used by the adapters so errors speak the adapter's name).
    pub(crate) fn with_op(mut self, name: &'static str) -> Error {
        use ErrorKind::*;
        match &mut *self.0 {
            RankMismatch { op, .. }
            | ShapeMismatch { op, .. }
            | AxisOutOfRange { op, .. }
            | IndexOutOfRange { op, .. }
            | NegativeIndex { op, .. }
            | UnsupportedReduction { op, .. }
            | DTypeMismatch { op, .. }
            | UnsupportedDType { op, .. }
            | SizeOverflow { op, .. }
            | InvalidView { op, .. }
            | OutOfMemory { op, .. }
            | InvalidArgument { op, .. } => *op = name,
        }
        self
    }

    pub(crate) fn shape(
        op: &'static str,
        arg: &'static str,
        expected: String,
        got: &[usize],
    ) -> Error {
        Error::new(ErrorKind::ShapeMismatch {
            op,
            arg,
            expected,
            got: got.to_vec(),
        })
    }

    pub(crate) fn rank(op: &'static str, arg: &'static str, expected: String, got: usize) -> Error {
        Error::new(ErrorKind::RankMismatch {
            op,
            arg,
            expected,
            got,
        })
    }

    pub(crate) fn overflow(op: &'static str, arg: &'static str) -> Error {
        Error::new(ErrorKind::SizeOverflow { op, arg })
    }

    pub(crate) fn unsupported_dtype(
        op: &'static str,
        arg: &'static str,
        dtype: DType,
        expected: impl Into<String>,
    ) -> Error {
        Error::new(ErrorKind::UnsupportedDType {
            op,
            arg,
            dtype,
            expected: expected.into(),
        })
    }

    pub(crate) fn out_of_memory(op: &'static str, arg: &'static str, bytes: usize) -> Error {
        Error::new(ErrorKind::OutOfMemory { op, arg, bytes })
    }

    pub(crate) fn invalid(op: &'static str, arg: &'static str, reason: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument {
            op,
            arg,
            reason: reason.into(),
        })
    }

    pub(crate) fn reduction(
        op: &'static str,
        reduction: impl Into<String>,
        reason: impl Into<String>,
    ) -> Error {
        Error::new(ErrorKind::UnsupportedReduction {
            op,
            reduction: reduction.into(),
            reason: reason.into(),
        })
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match &*self.0 {
            RankMismatch {
                op,
                arg,
                expected,
                got,
            } => {
                write!(
                    f,
                    "{op}: {arg}: rank {got} does not match; expected {expected}"
                )
            }
            ShapeMismatch {
                op,
                arg,
                expected,
                got,
            } => {
                write!(
                    f,
                    "{op}: {arg}: shape {got:?} does not match; expected {expected}"
                )
            }
            AxisOutOfRange {
                op,
                arg,
                axis,
                rank,
            } => match rank {
                0 => write!(
                    f,
                    "{op}: {arg}: axis {axis} given, but a tensor of rank 0 has no axis"
                ),
                _ => write!(
                    f,
                    "{op}: {arg}: axis {axis} is out of range for rank {rank} (valid range [-{rank}, {rank}))"
                ),
            },
            IndexOutOfRange {
                op,
                arg,
                position,
                value,
                dim,
                size,
            } => write!(
                f,
                "{op}: {arg}: index {value} at position {position:?} is out of range for dimension {dim} of size {size}"
            ),
            NegativeIndex {
                op,
                arg,
                position,
                value,
                dim,
            } => write!(
                f,
                "{op}: {arg}: negative index {value} at position {position:?} (dimension {dim}) is not allowed by the index policy"
            ),
            UnsupportedReduction {
                op,
                reduction,
                reason,
            } => {
                write!(
                    f,
                    "{op}: reduction: '{reduction}' is not supported: {reason}"
                )
            }
            DTypeMismatch {
                op,
                arg,
                expected,
                got,
            } => {
                write!(
                    f,
                    "{op}: {arg}: dtype {got} does not match; expected {expected}"
                )
            }
            UnsupportedDType {
                op,
                arg,
                dtype,
                expected,
            } => {
                write!(
                    f,
                    "{op}: {arg}: dtype {dtype} is not accepted; expected {expected}"
                )
            }
            SizeOverflow { op, arg } => {
                write!(
                    f,
                    "{op}: {arg}: element count or byte size overflows the address space"
                )
            }
            InvalidView { op, arg, reason } => write!(f, "{op}: {arg}: invalid view: {reason}"),
            OutOfMemory { op, arg, bytes } => {
                write!(f, "{op}: {arg}: cannot allocate {bytes} bytes")
            }
            InvalidArgument { op, arg, reason } => write!(f, "{op}: {arg}: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand for `std::result::Result<T, tensor_scatter::Error>`.
pub type Result<T> = std::result::Result<T, Error>;
