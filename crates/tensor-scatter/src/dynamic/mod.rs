//! The dtype-erased API: [`DynTensor`] carries its [`DType`] at run time, and the `dyn`
//! operators dispatch once to the typed generic ones (`scatter.rs`, `gather.rs`).

pub(crate) use crate::dtype::Buffer;
use crate::dtype::{DType, Element};
use crate::error::{Error, ErrorKind, Result};
use crate::index::IndexInt;
use crate::view::{Tensor, TensorView, TensorViewMut};

mod gather;
mod index;
mod scatter;
mod segment;
mod view;
mod vjp;

#[allow(deprecated)]
pub use gather::gather_dyn_into;
pub use gather::{DynGatherOptions, GatherOp, gather_dyn, gather_dyn_out};
pub use scatter::{ScatterOp, scatter_dyn, scatter_dyn_into, scatter_dyn_out};
pub use segment::{
    SegmentOp, Segmented, segment_dyn, segment_dyn_out, segment_vjp_dyn, segment_vjp_dyn_out,
};
pub use view::{DynView, DynViewMut};
pub use vjp::{gather_vjp_dyn, scatter_vjp_dyn};

/// Runs `$body` with `$T` bound to the Rust type of `$dtype`.
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            DType::F64 => {
                type $T = f64;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F16 => {
                type $T = half::f16;
                $body
            }
            DType::BF16 => {
                type $T = half::bf16;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::I16 => {
                type $T = i16;
                $body
            }
            DType::I8 => {
                type $T = i8;
                $body
            }
            DType::U64 => {
                type $T = u64;
                $body
            }
            DType::U32 => {
                type $T = u32;
                $body
            }
            DType::U16 => {
                type $T = u16;
                $body
            }
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::Bool => {
                type $T = bool;
                $body
            }
        }
    };
}

/// Runs `$body` with `$T` bound to the Rust type of the float dtype `$dtype` (the dtypes that
/// have gradients), or evaluates `$else` with `$other` bound to any other dtype.
macro_rules! with_float_dtype {
    ($dtype:expr, $T:ident => $body:expr, $other:ident => $else:expr) => {
        match $dtype {
            DType::F64 => {
                type $T = f64;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F16 => {
                type $T = half::f16;
                $body
            }
            DType::BF16 => {
                type $T = half::bf16;
                $body
            }
            $other => $else,
        }
    };
}

/// As [`with_index_dtype!`] for the two index dtypes the engine reads
/// ([`with_native_index`](index::with_native_index) converts the others first).
macro_rules! with_native_index_dtype {
    ($dtype:expr, $I:ident => $body:expr, _ => $other:expr) => {
        match $dtype {
            DType::I64 => {
                type $I = i64;
                $body
            }
            DType::I32 => {
                type $I = i32;
                $body
            }
            _ => $other,
        }
    };
}

/// Runs `$body` with `$I` bound to the Rust type of the integer dtype `$dtype`, or evaluates
/// `$other` for a non-integer dtype.
macro_rules! with_index_dtype {
    ($dtype:expr, $I:ident => $body:expr, _ => $other:expr) => {
        match $dtype {
            DType::I16 => {
                type $I = i16;
                $body
            }
            DType::I8 => {
                type $I = i8;
                $body
            }
            DType::U64 => {
                type $I = u64;
                $body
            }
            DType::U32 => {
                type $I = u32;
                $body
            }
            DType::U16 => {
                type $I = u16;
                $body
            }
            DType::U8 => {
                type $I = u8;
                $body
            }
            other => with_native_index_dtype!(other, $I => $body, _ => $other),
        }
    };
}

pub(crate) use index::with_native_index;
#[allow(unused_imports)] // used by the test suite
pub(crate) use with_dtype;
pub(crate) use with_float_dtype;
pub(crate) use with_native_index_dtype;

impl Buffer {
    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        match self {
            Buffer::F64(_) => DType::F64,
            Buffer::F32(_) => DType::F32,
            Buffer::F16(_) => DType::F16,
            Buffer::BF16(_) => DType::BF16,
            Buffer::I64(_) => DType::I64,
            Buffer::I32(_) => DType::I32,
            Buffer::I16(_) => DType::I16,
            Buffer::I8(_) => DType::I8,
            Buffer::U64(_) => DType::U64,
            Buffer::U32(_) => DType::U32,
            Buffer::U16(_) => DType::U16,
            Buffer::U8(_) => DType::U8,
            Buffer::Bool(_) => DType::Bool,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        with_dtype!(self.dtype(), T => T::buffer_slice(self).map_or(0, <[T]>::len))
    }

    /// True when there is no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An owned, contiguous tensor whose dtype is known only at run time.
///
/// ```
/// use tensor_scatter::{DType, DynTensor};
/// let t = DynTensor::from_vec(vec![1.5f32, 2.5], &[2]).unwrap();
/// assert_eq!(t.dtype(), DType::F32);
/// assert_eq!(t.as_slice::<f32>(), Some(&[1.5f32, 2.5][..]));
/// assert_eq!(t.as_slice::<f64>(), None);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DynTensor {
    buffer: Buffer,
    shape: Vec<usize>,
}

impl DynTensor {
    /// Wraps a buffer as a tensor of `shape`.
    ///
    /// # Errors
    /// [`InvalidView`](ErrorKind::InvalidView) when the length differs from the element count.
    pub fn new(buffer: Buffer, shape: &[usize]) -> Result<DynTensor> {
        let n = crate::shape::numel("tensor", "shape", shape)?;
        if n != buffer.len() {
            return Err(Error::new(ErrorKind::InvalidView {
                op: "tensor",
                arg: "shape",
                reason: format!(
                    "shape {shape:?} holds {n} elements but the buffer has {}",
                    buffer.len()
                ),
            }));
        }
        Ok(DynTensor {
            buffer,
            shape: shape.to_vec(),
        })
    }

    /// A tensor from a typed vector.
    ///
    /// # Errors
    /// As [`DynTensor::new`].
    pub fn from_vec<T: Element>(values: Vec<T>, shape: &[usize]) -> Result<DynTensor> {
        DynTensor::new(T::into_buffer(values), shape)
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.buffer.dtype()
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The element buffer.
    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }

    /// The buffer and the shape, the buffer writable.
    pub(crate) fn parts_mut(&mut self) -> (&mut Buffer, &[usize]) {
        (&mut self.buffer, &self.shape)
    }

    /// Consumes the tensor, returning its buffer.
    pub fn into_buffer(self) -> Buffer {
        self.buffer
    }

    /// The elements as `&[T]`, when `T` is the tensor's dtype.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        T::buffer_slice(&self.buffer)
    }

    /// A typed view, when `T` is the tensor's dtype.
    pub fn view<T: Element>(&self) -> Option<TensorView<'_, T>> {
        TensorView::new(T::buffer_slice(&self.buffer)?, &self.shape).ok()
    }

    /// A typed writable view, when `T` is the tensor's dtype.
    pub fn view_mut<T: Element>(&mut self) -> Option<TensorViewMut<'_, T>> {
        let shape = self.shape.clone();
        TensorViewMut::new(T::buffer_slice_mut(&mut self.buffer)?, &shape).ok()
    }

    /// Whether both tensors have the same dtype, shape and element bits (NaN payloads and
    /// the sign of zero included).
    ///
    /// ```
    /// use tensor_scatter::DynTensor;
    /// let a = DynTensor::from_vec(vec![f32::NAN, 0.0], &[2]).unwrap();
    /// assert!(a.bit_eq(&a.clone()));
    /// assert!(!a.bit_eq(&DynTensor::from_vec(vec![f32::NAN, -0.0], &[2]).unwrap()));
    /// ```
    pub fn bit_eq(&self, other: &DynTensor) -> bool {
        self.dtype() == other.dtype()
            && self.shape == other.shape
            && with_dtype!(self.dtype(), T => match (self.as_slice::<T>(), other.as_slice::<T>()) {
                (Some(a), Some(b)) => a.iter().zip(b).all(|(x, y)| x.to_bits_u64() == y.to_bits_u64()),
                _ => false,
            })
    }

    /// The typed tensor inside, when `T` is the tensor's dtype (no copy); otherwise the tensor
    /// back.
    ///
    /// ```
    /// use tensor_scatter::DynTensor;
    /// let t = DynTensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    /// let t = t.into_tensor::<f32>().unwrap_err(); // not float32
    /// assert_eq!(t.into_tensor::<i32>().unwrap().as_slice(), &[1, 2]);
    /// ```
    pub fn into_tensor<T: Element>(self) -> std::result::Result<Tensor<T>, DynTensor> {
        let DynTensor { buffer, shape } = self;
        match T::from_buffer(buffer) {
            Ok(data) => Ok(Tensor { data, shape }),
            Err(buffer) => Err(DynTensor { buffer, shape }),
        }
    }

    /// A tensor of `dtype` and `shape` from its elements' bytes in the machine's byte order
    /// (what [`to_bytes`](Self::to_bytes) returns; a NumPy array's `tobytes()` on this
    /// machine).
    ///
    /// # Errors
    /// [`InvalidView`](ErrorKind::InvalidView) when `bytes` is not `dtype.size_of()` times the
    /// element count; [`InvalidArgument`](ErrorKind::InvalidArgument) for a bool byte other
    /// than 0 or 1.
    ///
    /// ```
    /// use tensor_scatter::{DType, DynTensor};
    /// let bytes: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|x| x.to_ne_bytes()).collect();
    /// let t = DynTensor::from_bytes(DType::F32, &[2], &bytes).unwrap();
    /// assert_eq!(t.as_slice::<f32>(), Some(&[1.5f32, -2.0][..]));
    /// assert_eq!(t.to_bytes(), bytes);
    /// ```
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<DynTensor> {
        let n = crate::shape::numel("tensor", "shape", shape)?;
        let width = dtype.size_of();
        if n.checked_mul(width) != Some(bytes.len()) {
            return Err(Error::new(ErrorKind::InvalidView {
                op: "tensor",
                arg: "bytes",
                reason: format!(
                    "shape {shape:?} of {dtype} needs {n} × {width} bytes, not {}",
                    bytes.len()
                ),
            }));
        }
        if dtype == DType::Bool
            && let Some(p) = bytes.iter().position(|&b| b > 1)
        {
            return Err(Error::invalid(
                "tensor",
                "bytes",
                format!("bool byte {p} is {}, not 0 or 1", bytes[p]),
            ));
        }
        let word = |c: &[u8]| -> u64 {
            match c.len() {
                1 => u64::from(c[0]),
                2 => u64::from(u16::from_ne_bytes([c[0], c[1]])),
                4 => u64::from(u32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                _ => u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
            }
        };
        let buffer = with_dtype!(dtype, T => T::into_buffer(
            bytes.chunks_exact(width).map(|c| T::from_bits_u64(word(c))).collect()
        ));
        DynTensor::new(buffer, shape)
    }

    /// The elements' bytes in the machine's byte order, row-major.
    pub fn to_bytes(&self) -> Vec<u8> {
        let width = self.dtype().size_of();
        let mut out = Vec::with_capacity(self.buffer.len() * width);
        with_dtype!(self.dtype(), T => {
            for x in self.as_slice::<T>().unwrap_or(&[]) {
                let bits = x.to_bits_u64();
                match width {
                    1 => out.push(bits as u8),
                    2 => out.extend_from_slice(&(bits as u16).to_ne_bytes()),
                    4 => out.extend_from_slice(&(bits as u32).to_ne_bytes()),
                    _ => out.extend_from_slice(&bits.to_ne_bytes()),
                }
            }
        });
        out
    }

    /// A copy with the same shape reinterpreted as `shape` (same element count).
    ///
    /// # Errors
    /// As [`DynTensor::new`].
    pub fn reshaped(&self, shape: &[usize]) -> Result<DynTensor> {
        DynTensor::new(self.buffer.clone(), shape)
    }
}

impl<T: Element> From<Tensor<T>> for DynTensor {
    fn from(t: Tensor<T>) -> DynTensor {
        DynTensor {
            buffer: T::into_buffer(t.data),
            shape: t.shape,
        }
    }
}

/// A typed view of `t`, or a dtype error naming `arg` (the erased entry points check dtypes
/// first, so this is their single point of truth rather than a second check).
/// The integer value of a one-element index-typed tensor (an axis given as a tensor, say).
pub(crate) fn integer_scalar(t: &DynTensor) -> Option<i128> {
    with_index_dtype!(t.dtype(), I => t.as_slice::<I>().and_then(|v| v.first()).map(|x| x.to_i128()), _ => None)
}

/// The result of shape-only planning ([`ScatterOp::plan`], [`GatherOp::plan`]): what an
/// operation on tensors of these shapes would produce, known before any buffer exists.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OutputPlan {
    /// The output's shape.
    pub shape: Vec<usize>,
    /// Its element count.
    pub elements: usize,
    /// Its size in bytes (at most `isize::MAX`).
    pub bytes: usize,
}

/// Element count and byte size of `shape` for `dtype`, or `SizeOverflow` naming `arg`.
pub(crate) fn sized(
    op: &'static str,
    arg: &'static str,
    shape: &[usize],
    dtype: DType,
) -> Result<(usize, usize)> {
    let n = crate::shape::numel(op, arg, shape)?;
    let bytes = n
        .checked_mul(dtype.size_of())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| Error::overflow(op, arg))?;
    Ok((n, bytes))
}

/// Parses a dtype name: NumPy's (`"float32"`, `"bfloat16"`, `"uint8"`, `"bool"`), the short
/// forms (`"f32"`, `"bf16"`, `"u8"`) and PyTorch's aliases (`"float"`, `"double"`, `"half"`,
/// `"long"`, `"int"`, `"short"`).
///
/// ```
/// use tensor_scatter::DType;
/// assert_eq!("float32".parse::<DType>().unwrap(), DType::F32);
/// assert_eq!("bf16".parse::<DType>().unwrap(), DType::BF16);
/// assert_eq!("long".parse::<DType>().unwrap(), DType::I64);
/// assert!("complex64".parse::<DType>().is_err());
/// ```
impl std::str::FromStr for DType {
    type Err = Error;

    fn from_str(s: &str) -> Result<DType> {
        Ok(match s {
            "float64" | "f64" | "double" => DType::F64,
            "float32" | "f32" | "float" => DType::F32,
            "float16" | "f16" | "half" => DType::F16,
            "bfloat16" | "bf16" => DType::BF16,
            "int64" | "i64" | "long" => DType::I64,
            "int32" | "i32" | "int" => DType::I32,
            "int16" | "i16" | "short" => DType::I16,
            "int8" | "i8" => DType::I8,
            "uint64" | "u64" => DType::U64,
            "uint32" | "u32" => DType::U32,
            "uint16" | "u16" => DType::U16,
            "uint8" | "u8" => DType::U8,
            "bool" => DType::Bool,
            other => {
                return Err(Error::invalid(
                    "parse",
                    "dtype",
                    format!(
                        "'{other}' is not a dtype: expected one of {}",
                        DType::ALL.map(DType::name).join(", ")
                    ),
                ));
            }
        })
    }
}
