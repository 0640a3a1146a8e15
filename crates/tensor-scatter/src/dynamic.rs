//! The dtype-erased API: [`DynTensor`] carries its [`DType`] at run time, and the `dyn`
//! operators dispatch once to the typed generic ones.

use half::{bf16, f16};

use crate::dtype::{DType, Element};
use crate::error::{Error, ErrorKind, Result};
use crate::index::IndexInt;
use crate::ops::ScatterOptions;
use crate::ops::gather::GatherOptions;
use crate::view::{Tensor, TensorView, TensorViewMut};
use crate::{scatter_elements, scatter_nd, scatter_update};

/// A typed element vector of any supported dtype.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Buffer {
    F64(Vec<f64>),
    F32(Vec<f32>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    I16(Vec<i16>),
    I8(Vec<i8>),
    U64(Vec<u64>),
    U32(Vec<u32>),
    U16(Vec<u16>),
    U8(Vec<u8>),
    Bool(Vec<bool>),
}

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

/// Runs `$body` with `$I` bound to the Rust type of the integer dtype `$dtype`, or evaluates
/// `$other` for a non-integer dtype.
macro_rules! with_index_dtype {
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
            _ => $other,
        }
    };
}

#[allow(unused_imports)] // used by the test suite
pub(crate) use with_dtype;

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

/// The three scatter operators, for dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScatterOp {
    /// [`scatter_elements`](crate::scatter_elements).
    Elements,
    /// [`scatter_nd`](crate::scatter_nd).
    Nd,
    /// [`scatter_update`](crate::scatter_update).
    Update,
}

impl ScatterOp {
    /// The operator's name in errors.
    pub fn name(self) -> &'static str {
        match self {
            ScatterOp::Elements => "scatter_elements",
            ScatterOp::Nd => "scatter_nd",
            ScatterOp::Update => "scatter_update",
        }
    }
}

/// Updates must share data's dtype (checked before anything else, as the typed API's
/// signature does at compile time).
fn check_updates_dtype(op: ScatterOp, data: DType, updates: DType) -> Result<()> {
    if updates != data {
        return Err(Error::new(ErrorKind::DTypeMismatch {
            op: op.name(),
            arg: "updates",
            expected: data,
            got: updates,
        }));
    }
    Ok(())
}

/// A typed view of `t`, or a dtype error naming `arg` (the erased entry points check dtypes
/// first, so this is their single point of truth rather than a second check).
fn typed_view<'a, T: Element>(
    t: &'a DynTensor,
    op: &'static str,
    arg: &'static str,
) -> Result<TensorView<'a, T>> {
    t.view::<T>().ok_or_else(|| {
        Error::new(ErrorKind::DTypeMismatch {
            op,
            arg,
            expected: T::DTYPE,
            got: t.dtype(),
        })
    })
}

fn typed_view_mut<'a, T: Element>(
    t: &'a mut DynTensor,
    op: &'static str,
    arg: &'static str,
) -> Result<TensorViewMut<'a, T>> {
    let got = t.dtype();
    t.view_mut::<T>().ok_or_else(|| {
        Error::new(ErrorKind::DTypeMismatch {
            op,
            arg,
            expected: T::DTYPE,
            got,
        })
    })
}

fn typed<T: Element, I: IndexInt + Element>(
    op: ScatterOp,
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    opts: &ScatterOptions,
) -> Result<DynTensor> {
    let d = typed_view::<T>(data, op.name(), "data")?;
    let i = typed_view::<I>(indices, op.name(), "indices")?;
    let u = typed_view::<T>(updates, op.name(), "updates")?;
    let out = match op {
        ScatterOp::Elements => scatter_elements(&d, &i, &u, opts),
        ScatterOp::Nd => scatter_nd(&d, &i, &u, opts),
        ScatterOp::Update => scatter_update(&d, &i, &u, opts),
    }?;
    Ok(out.into())
}

fn typed_into<T: Element, I: IndexInt + Element>(
    op: ScatterOp,
    dest: &mut DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    opts: &ScatterOptions,
) -> Result<()> {
    let i = typed_view::<I>(indices, op.name(), "indices")?;
    let u = typed_view::<T>(updates, op.name(), "updates")?;
    let mut d = typed_view_mut::<T>(dest, op.name(), "data")?;
    match op {
        ScatterOp::Elements => crate::scatter_elements_into(&mut d, &i, &u, opts),
        ScatterOp::Nd => crate::scatter_nd_into(&mut d, &i, &u, opts),
        ScatterOp::Update => crate::scatter_update_into(&mut d, &i, &u, opts),
    }
}

fn typed_out<T: Element, I: IndexInt + Element>(
    op: ScatterOp,
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    out: &mut DynTensor,
    opts: &ScatterOptions,
) -> Result<()> {
    let dv = typed_view::<T>(data, op.name(), "data")?;
    let i = typed_view::<I>(indices, op.name(), "indices")?;
    let u = typed_view::<T>(updates, op.name(), "updates")?;
    let mut o = typed_view_mut::<T>(out, op.name(), "out")?;
    match op {
        ScatterOp::Elements => crate::scatter_elements_out(&dv, &i, &u, &mut o, opts),
        ScatterOp::Nd => crate::scatter_nd_out(&dv, &i, &u, &mut o, opts),
        ScatterOp::Update => crate::scatter_update_out(&dv, &i, &u, &mut o, opts),
    }
}

fn unsupported_indices(op: ScatterOp, dtype: DType) -> Error {
    Error::new(ErrorKind::UnsupportedDType {
        op: op.name(),
        arg: "indices",
        dtype,
    })
}

/// Runs one scatter operator on erased tensors, out of place.
///
/// # Errors
/// [`DTypeMismatch`](ErrorKind::DTypeMismatch) when `updates` differs from `data`,
/// [`UnsupportedDType`](ErrorKind::UnsupportedDType) for non-integer indices, then every error
/// of the typed operator.
///
/// ```
/// use tensor_scatter::{scatter_dyn, DynTensor, ScatterOp, ScatterOptions};
/// let out = scatter_dyn(
///     ScatterOp::Elements,
///     &DynTensor::from_vec(vec![0u8; 4], &[4]).unwrap(),
///     &DynTensor::from_vec(vec![-1i16], &[1]).unwrap(),
///     &DynTensor::from_vec(vec![9u8], &[1]).unwrap(),
///     &ScatterOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<u8>(), Some(&[0u8, 0, 0, 9][..]));
/// ```
pub fn scatter_dyn(
    op: ScatterOp,
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    opts: &ScatterOptions,
) -> Result<DynTensor> {
    check_updates_dtype(op, data.dtype(), updates.dtype())?;
    with_dtype!(data.dtype(), T => with_index_dtype!(indices.dtype(), I => typed::<T, I>(op, data, indices, updates, opts), _ => Err(unsupported_indices(op, indices.dtype()))))
}

/// Runs one scatter operator on erased tensors, in place into `dest`.
///
/// # Errors
/// As [`scatter_dyn`]; on error `dest` is unchanged.
///
/// ```
/// use tensor_scatter::{scatter_dyn_into, DynTensor, Reduction, ScatterOp, ScatterOptions};
/// let mut out = DynTensor::from_vec(vec![10.0f64, 20.0], &[2]).unwrap();
/// scatter_dyn_into(
///     ScatterOp::Nd,
///     &mut out,
///     &DynTensor::from_vec(vec![1i64, 1], &[2, 1]).unwrap(),
///     &DynTensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap(),
///     &ScatterOptions::new().reduction(Reduction::Max),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<f64>(), Some(&[10.0, 20.0][..]));
/// ```
pub fn scatter_dyn_into(
    op: ScatterOp,
    dest: &mut DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    opts: &ScatterOptions,
) -> Result<()> {
    check_updates_dtype(op, dest.dtype(), updates.dtype())?;
    with_dtype!(dest.dtype(), T => with_index_dtype!(indices.dtype(), I => typed_into::<T, I>(op, dest, indices, updates, opts), _ => Err(unsupported_indices(op, indices.dtype()))))
}

/// Runs one scatter operator on erased tensors into a caller-provided output of data's shape
/// and dtype: `out = data`, then the scatter, without allocating (the copy is fused into the
/// kernel).
///
/// # Errors
/// As [`scatter_dyn`], plus a dtype or shape mismatch of `out`; on error `out` is unchanged.
///
/// ```
/// use tensor_scatter::{scatter_dyn_out, DynTensor, ScatterOp, ScatterOptions};
/// let data = DynTensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
/// let mut out = DynTensor::from_vec(vec![0i32; 3], &[3]).unwrap();
/// for _ in 0..2 {
///     scatter_dyn_out(
///         ScatterOp::Elements,
///         &data,
///         &DynTensor::from_vec(vec![-1i64], &[1]).unwrap(),
///         &DynTensor::from_vec(vec![9i32], &[1]).unwrap(),
///         &mut out,
///         &ScatterOptions::new(),
///     )
///     .unwrap();
/// }
/// assert_eq!(out.as_slice::<i32>(), Some(&[1, 2, 9][..]));
/// ```
pub fn scatter_dyn_out(
    op: ScatterOp,
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    out: &mut DynTensor,
    opts: &ScatterOptions,
) -> Result<()> {
    check_updates_dtype(op, data.dtype(), updates.dtype())?;
    with_dtype!(data.dtype(), T => with_index_dtype!(indices.dtype(), I => typed_out::<T, I>(op, data, indices, updates, out, opts), _ => Err(unsupported_indices(op, indices.dtype()))))
}

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
fn sized(
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

impl ScatterOp {
    /// Shape-only planning: every rule that depends on shapes, the axis, the reduction and the
    /// dtype (but not on index values) is checked, and element counts and byte sizes are
    /// computed with overflow checks, without any tensor. A caller can reject an input before
    /// allocating a byte for it (an operation's own entry points run the same checks first).
    ///
    /// # Errors
    /// `SizeOverflow` when an argument's element count or byte size overflows (naming the
    /// argument); then every shape, rank, axis and reduction error of the operator.
    ///
    /// ```
    /// use tensor_scatter::{DType, ScatterOp, ScatterOptions};
    /// let plan = ScatterOp::Nd
    ///     .plan(DType::F32, &[4, 3], &[2, 1], &[2, 3], &ScatterOptions::new())
    ///     .unwrap();
    /// assert_eq!((plan.shape, plan.elements, plan.bytes), (vec![4, 3], 12, 48));
    /// // 2³³ × 2³³ elements: refused before anything is allocated.
    /// let err = ScatterOp::Nd
    ///     .plan(DType::F32, &[1 << 33, 1 << 33], &[1, 1], &[1, 1 << 33], &ScatterOptions::new())
    ///     .unwrap_err();
    /// assert_eq!(err.arg(), "data");
    /// ```
    pub fn plan(
        self,
        dtype: DType,
        data: &[usize],
        indices: &[usize],
        updates: &[usize],
        opts: &ScatterOptions,
    ) -> Result<OutputPlan> {
        let op = self.name();
        let (n, bytes) = sized(op, "data", data, dtype)?;
        let ni = crate::shape::numel(op, "indices", indices)?;
        let (nu, _) = sized(op, "updates", updates, dtype)?;
        with_dtype!(dtype, T => opts.reduction.check_for::<T>(op))?;
        let layout =
            |shape: &[usize], numel| crate::view::Layout::contiguous_unchecked(shape, numel);
        let planner = match self {
            ScatterOp::Elements => crate::ops::scatter_elements::plan,
            ScatterOp::Nd => crate::ops::scatter_nd::plan,
            ScatterOp::Update => crate::ops::scatter_update::plan,
        };
        planner(
            &layout(data, n),
            &layout(indices, ni),
            &layout(updates, nu),
            opts,
        )?;
        Ok(OutputPlan {
            shape: data.to_vec(),
            elements: n,
            bytes,
        })
    }
}

/// The three gathers, for dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GatherOp {
    /// [`gather`](crate::gather).
    Gather,
    /// [`gather_elements`](crate::gather_elements).
    Elements,
    /// [`gather_nd`](crate::gather_nd).
    Nd,
}

impl GatherOp {
    /// Shape-only planning, as [`ScatterOp::plan`]: the shape rules, the axis and batch_dims,
    /// and the output's element count and byte size (overflow-checked), from shapes alone.
    /// Small inputs can ask for enormous outputs (one long row gathered by many indices), so
    /// this is the place to apply a size limit before calling the operator.
    ///
    /// # Errors
    /// `SizeOverflow` when an input's or the output's size overflows; every shape, rank, axis
    /// and batch_dims error of the operator.
    ///
    /// ```
    /// use tensor_scatter::{DType, GatherOp};
    /// let plan = GatherOp::Gather.plan(DType::F16, &[1, 1 << 20], &[1 << 20], 0, 0).unwrap();
    /// assert_eq!(plan.shape, vec![1 << 20, 1 << 20]);
    /// assert_eq!(plan.bytes, 1 << 41); // 2 TiB from 4 MiB of inputs: check before calling
    /// ```
    pub fn plan(
        self,
        dtype: DType,
        data: &[usize],
        indices: &[usize],
        axis: i64,
        batch_dims: i64,
    ) -> Result<OutputPlan> {
        let op = self.name();
        sized(op, "data", data, dtype)?;
        crate::shape::numel(op, "indices", indices)?;
        let planner = match self {
            GatherOp::Gather => crate::ops::gather::plan_gather,
            GatherOp::Elements => crate::ops::gather::plan_gather_elements,
            GatherOp::Nd => crate::ops::gather::plan_gather_nd,
        };
        let p = planner(data, indices, axis, batch_dims)?;
        let (elements, bytes) = sized(op, "output", &p.out_shape, dtype)?;
        Ok(OutputPlan {
            shape: p.out_shape,
            elements,
            bytes,
        })
    }

    /// The operator's name in errors.
    pub fn name(self) -> &'static str {
        match self {
            GatherOp::Gather => "gather",
            GatherOp::Elements => "gather_elements",
            GatherOp::Nd => "gather_nd",
        }
    }
}

/// Gather options for the dtype-erased API: the fill value, when given, is a one-element
/// tensor of data's dtype (zero when `None`).
pub type DynGatherOptions = GatherOptions<Option<DynTensor>>;

/// The typed fill value of `opts`, checked against data's dtype.
fn typed_fill<T: Element>(op: GatherOp, opts: &DynGatherOptions) -> Result<GatherOptions<T>> {
    let fill = match &opts.fill_value {
        None => T::default(),
        Some(t) => {
            let values = t.as_slice::<T>().ok_or_else(|| {
                Error::new(ErrorKind::DTypeMismatch {
                    op: op.name(),
                    arg: "fill_value",
                    expected: T::DTYPE,
                    got: t.dtype(),
                })
            })?;
            match values {
                [v] => *v,
                _ => {
                    return Err(Error::shape(
                        op.name(),
                        "fill_value",
                        "one element".into(),
                        t.shape(),
                    ));
                }
            }
        }
    };
    Ok(opts.clone().with_fill(fill))
}

fn typed_gather<T: Element, I: IndexInt + Element>(
    op: GatherOp,
    data: &DynTensor,
    indices: &DynTensor,
    out: Option<&mut DynTensor>,
    opts: &DynGatherOptions,
) -> Result<Option<DynTensor>> {
    let d = typed_view::<T>(data, op.name(), "data")?;
    let i = typed_view::<I>(indices, op.name(), "indices")?;
    let o = typed_fill::<T>(op, opts)?;
    match out {
        None => Ok(Some(
            match op {
                GatherOp::Gather => crate::gather(&d, &i, &o),
                GatherOp::Elements => crate::gather_elements(&d, &i, &o),
                GatherOp::Nd => crate::gather_nd(&d, &i, &o),
            }?
            .into(),
        )),
        Some(out) => {
            let mut ov = typed_view_mut::<T>(out, op.name(), "out")?;
            match op {
                GatherOp::Gather => crate::gather_into(&d, &i, &mut ov, &o),
                GatherOp::Elements => crate::gather_elements_into(&d, &i, &mut ov, &o),
                GatherOp::Nd => crate::gather_nd_into(&d, &i, &mut ov, &o),
            }?;
            Ok(None)
        }
    }
}

fn dispatch_gather(
    op: GatherOp,
    data: &DynTensor,
    indices: &DynTensor,
    out: Option<&mut DynTensor>,
    opts: &DynGatherOptions,
) -> Result<Option<DynTensor>> {
    with_dtype!(data.dtype(), T => with_index_dtype!(indices.dtype(), I => typed_gather::<T, I>(op, data, indices, out, opts), _ => Err(Error::new(ErrorKind::UnsupportedDType {
        op: op.name(),
        arg: "indices",
        dtype: indices.dtype(),
    }))))
}

/// Runs one gather on erased tensors into a new tensor.
///
/// # Errors
/// [`UnsupportedDType`](ErrorKind::UnsupportedDType) for non-integer indices; a fill value of
/// another dtype than data's or with more than one element; then every error of the typed
/// operator.
///
/// ```
/// use tensor_scatter::{gather_dyn, DynGatherOptions, DynTensor, GatherOp, GatherOutOfRange};
/// let out = gather_dyn(
///     GatherOp::Gather,
///     &DynTensor::from_vec(vec![10u8, 20, 30], &[3]).unwrap(),
///     &DynTensor::from_vec(vec![2i32, 7], &[2]).unwrap(),
///     &DynGatherOptions::new()
///         .out_of_range(GatherOutOfRange::Fill)
///         .fill_value(Some(DynTensor::from_vec(vec![255u8], &[]).unwrap())),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<u8>(), Some(&[30u8, 255][..]));
/// ```
pub fn gather_dyn(
    op: GatherOp,
    data: &DynTensor,
    indices: &DynTensor,
    opts: &DynGatherOptions,
) -> Result<DynTensor> {
    dispatch_gather(op, data, indices, None, opts)?
        .ok_or_else(|| Error::invalid(op.name(), "out", "no output was produced"))
}

/// Runs one gather on erased tensors into a caller-provided output of data's dtype and the
/// gathered shape.
///
/// # Errors
/// As [`gather_dyn`], plus an output of another dtype or shape; on error `out` is unchanged.
///
/// ```
/// use tensor_scatter::{gather_dyn_into, DynGatherOptions, DynTensor, GatherOp};
/// let mut out = DynTensor::from_vec(vec![0.0f64; 2], &[2]).unwrap();
/// gather_dyn_into(
///     GatherOp::Elements,
///     &DynTensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap(),
///     &DynTensor::from_vec(vec![-1i64, 0], &[2]).unwrap(),
///     &mut out,
///     &DynGatherOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<f64>(), Some(&[3.0, 1.0][..]));
/// ```
pub fn gather_dyn_into(
    op: GatherOp,
    data: &DynTensor,
    indices: &DynTensor,
    out: &mut DynTensor,
    opts: &DynGatherOptions,
) -> Result<()> {
    dispatch_gather(op, data, indices, Some(out), opts).map(|_| ())
}
