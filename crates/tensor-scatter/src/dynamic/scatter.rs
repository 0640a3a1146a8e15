//! The scatters on erased tensors: `ScatterOp`, its shape-only plan, and `scatter_dyn*`.

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::index::IndexInt;
use crate::scatter::ScatterOptions;
use crate::{scatter_elements, scatter_nd, scatter_update};

use super::view::{DynView, DynViewMut, ViewElement, typed, typed_mut};
use super::{DynTensor, OutputPlan, sized, with_dtype, with_native_index, with_native_index_dtype};

/// The three scatter operators, for dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScatterOp {
    /// [`scatter_elements`].
    Elements,
    /// [`scatter_nd`].
    Nd,
    /// [`scatter_update`].
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

fn typed_alloc<T: ViewElement, I: IndexInt + ViewElement>(
    op: ScatterOp,
    data: &DynView<'_>,
    indices: &DynView<'_>,
    updates: &DynView<'_>,
    opts: &ScatterOptions,
) -> Result<DynTensor> {
    let d = typed::<T>(data, op.name(), "data")?;
    let i = typed::<I>(indices, op.name(), "indices")?;
    let u = typed::<T>(updates, op.name(), "updates")?;
    let out = match op {
        ScatterOp::Elements => scatter_elements(d, i, u, opts),
        ScatterOp::Nd => scatter_nd(d, i, u, opts),
        ScatterOp::Update => scatter_update(d, i, u, opts),
    }?;
    Ok(out.into())
}

fn typed_into<T: ViewElement, I: IndexInt + ViewElement>(
    op: ScatterOp,
    dest: &mut DynViewMut<'_>,
    indices: &DynView<'_>,
    updates: &DynView<'_>,
    opts: &ScatterOptions,
) -> Result<()> {
    let i = typed::<I>(indices, op.name(), "indices")?;
    let u = typed::<T>(updates, op.name(), "updates")?;
    let d = typed_mut::<T>(dest, op.name(), "data")?;
    match op {
        ScatterOp::Elements => crate::scatter_elements_into(d, i, u, opts),
        ScatterOp::Nd => crate::scatter_nd_into(d, i, u, opts),
        ScatterOp::Update => crate::scatter_update_into(d, i, u, opts),
    }
}

fn typed_out<T: ViewElement, I: IndexInt + ViewElement>(
    op: ScatterOp,
    data: &DynView<'_>,
    indices: &DynView<'_>,
    updates: &DynView<'_>,
    out: &mut DynViewMut<'_>,
    opts: &ScatterOptions,
) -> Result<()> {
    let dv = typed::<T>(data, op.name(), "data")?;
    let i = typed::<I>(indices, op.name(), "indices")?;
    let u = typed::<T>(updates, op.name(), "updates")?;
    let o = typed_mut::<T>(out, op.name(), "out")?;
    match op {
        ScatterOp::Elements => crate::scatter_elements_out(dv, i, u, o, opts),
        ScatterOp::Nd => crate::scatter_nd_out(dv, i, u, o, opts),
        ScatterOp::Update => crate::scatter_update_out(dv, i, u, o, opts),
    }
}

fn unsupported_indices(op: ScatterOp, dtype: DType) -> Error {
    Error::unsupported_dtype(op.name(), "indices", dtype, crate::index::INDEX_DTYPES_TEXT)
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
pub fn scatter_dyn<'d, 'i, 'u>(
    op: ScatterOp,
    data: impl Into<DynView<'d>>,
    indices: impl Into<DynView<'i>>,
    updates: impl Into<DynView<'u>>,
    opts: &ScatterOptions,
) -> Result<DynTensor> {
    alloc(op, &data.into(), &indices.into(), &updates.into(), opts)
}

fn alloc(
    op: ScatterOp,
    data: &DynView<'_>,
    indices: &DynView<'_>,
    updates: &DynView<'_>,
    opts: &ScatterOptions,
) -> Result<DynTensor> {
    check_updates_dtype(op, data.dtype(), updates.dtype())?;
    with_native_index(
        op.name(),
        "indices",
        indices,
        |indices| with_dtype!(data.dtype(), T => with_native_index_dtype!(indices.dtype(), I => typed_alloc::<T, I>(op, data, indices, updates, opts), _ => Err(unsupported_indices(op, indices.dtype())))),
    )
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
pub fn scatter_dyn_into<'d, 'i, 'u>(
    op: ScatterOp,
    dest: impl Into<DynViewMut<'d>>,
    indices: impl Into<DynView<'i>>,
    updates: impl Into<DynView<'u>>,
    opts: &ScatterOptions,
) -> Result<()> {
    in_place(op, &mut dest.into(), &indices.into(), &updates.into(), opts)
}

fn in_place(
    op: ScatterOp,
    dest: &mut DynViewMut<'_>,
    indices: &DynView<'_>,
    updates: &DynView<'_>,
    opts: &ScatterOptions,
) -> Result<()> {
    check_updates_dtype(op, dest.dtype(), updates.dtype())?;
    with_native_index(
        op.name(),
        "indices",
        indices,
        |indices| with_dtype!(dest.dtype(), T => with_native_index_dtype!(indices.dtype(), I => typed_into::<T, I>(op, dest, indices, updates, opts), _ => Err(unsupported_indices(op, indices.dtype())))),
    )
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
pub fn scatter_dyn_out<'d, 'i, 'u, 'o>(
    op: ScatterOp,
    data: impl Into<DynView<'d>>,
    indices: impl Into<DynView<'i>>,
    updates: impl Into<DynView<'u>>,
    out: impl Into<DynViewMut<'o>>,
    opts: &ScatterOptions,
) -> Result<()> {
    into_out(
        op,
        &data.into(),
        &indices.into(),
        &updates.into(),
        &mut out.into(),
        opts,
    )
}

fn into_out(
    op: ScatterOp,
    data: &DynView<'_>,
    indices: &DynView<'_>,
    updates: &DynView<'_>,
    out: &mut DynViewMut<'_>,
    opts: &ScatterOptions,
) -> Result<()> {
    check_updates_dtype(op, data.dtype(), updates.dtype())?;
    with_native_index(
        op.name(),
        "indices",
        indices,
        |indices| with_dtype!(data.dtype(), T => with_native_index_dtype!(indices.dtype(), I => typed_out::<T, I>(op, data, indices, updates, out, opts), _ => Err(unsupported_indices(op, indices.dtype())))),
    )
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
            ScatterOp::Elements => crate::scatter::elements::plan,
            ScatterOp::Nd => crate::scatter::nd::plan,
            ScatterOp::Update => crate::scatter::update::plan,
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
