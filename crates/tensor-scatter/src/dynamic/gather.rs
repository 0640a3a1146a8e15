//! The gathers on erased tensors: `GatherOp`, its shape-only plan, and `gather_dyn*`.

use crate::dtype::{DType, Element};
use crate::error::{Error, ErrorKind, Result};
use crate::gather::GatherOptions;
use crate::index::IndexInt;

use super::view::{DynView, DynViewMut, ViewElement, typed, typed_mut};
use super::{DynTensor, OutputPlan, sized, with_dtype, with_native_index, with_native_index_dtype};

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
    /// Shape-only planning, as [`ScatterOp::plan`](crate::ScatterOp::plan): the shape rules, the axis and batch_dims,
    /// and the output's element count and byte size (overflow-checked), from shapes alone.
    /// Small inputs can ask for enormous outputs (one long row gathered by many indices), so
    /// this is the place to apply a size limit before calling the operator.
    ///
    /// # Errors
    /// `SizeOverflow` when an input's or the output's size overflows; every shape, rank, axis
    /// and batch_dims error of the operator.
    ///
    /// It takes the operator's options, as [`ScatterOp::plan`](crate::ScatterOp::plan) does
    /// (only the axis and `batch_dims` matter to shapes).
    ///
    /// ```
    /// use tensor_scatter::{DType, GatherOp, GatherOptions};
    /// let opts = GatherOptions::<f32>::new();
    /// let plan = GatherOp::Gather.plan(DType::F16, &[1, 1 << 20], &[1 << 20], &opts).unwrap();
    /// assert_eq!(plan.shape, vec![1 << 20, 1 << 20]);
    /// assert_eq!(plan.bytes, 1 << 41); // 2 TiB from 4 MiB of inputs: check before calling
    /// ```
    pub fn plan<F>(
        self,
        dtype: DType,
        data: &[usize],
        indices: &[usize],
        opts: &GatherOptions<F>,
    ) -> Result<OutputPlan> {
        let op = self.name();
        sized(op, "data", data, dtype)?;
        crate::shape::numel(op, "indices", indices)?;
        let planner = match self {
            GatherOp::Gather => crate::gather::plan_gather,
            GatherOp::Elements => crate::gather::plan_gather_elements,
            GatherOp::Nd => crate::gather::plan_gather_nd,
        };
        let p = planner(data, indices, opts.axis, opts.batch_dims)?;
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

fn typed_gather<T: ViewElement, I: IndexInt + ViewElement>(
    op: GatherOp,
    data: &DynView<'_>,
    indices: &DynView<'_>,
    out: Option<&mut DynViewMut<'_>>,
    opts: &DynGatherOptions,
) -> Result<Option<DynTensor>> {
    let d = typed::<T>(data, op.name(), "data")?;
    let i = typed::<I>(indices, op.name(), "indices")?;
    let o = typed_fill::<T>(op, opts)?;
    match out {
        None => Ok(Some(
            match op {
                GatherOp::Gather => crate::gather(d, i, &o),
                GatherOp::Elements => crate::gather_elements(d, i, &o),
                GatherOp::Nd => crate::gather_nd(d, i, &o),
            }?
            .into(),
        )),
        Some(out) => {
            let ov = typed_mut::<T>(out, op.name(), "out")?;
            match op {
                GatherOp::Gather => crate::gather_out(d, i, ov, &o),
                GatherOp::Elements => crate::gather_elements_out(d, i, ov, &o),
                GatherOp::Nd => crate::gather_nd_out(d, i, ov, &o),
            }?;
            Ok(None)
        }
    }
}

fn dispatch_gather(
    op: GatherOp,
    data: &DynView<'_>,
    indices: &DynView<'_>,
    out: Option<&mut DynViewMut<'_>>,
    opts: &DynGatherOptions,
) -> Result<Option<DynTensor>> {
    with_native_index(
        op.name(),
        "indices",
        indices,
        |indices| with_dtype!(data.dtype(), T => with_native_index_dtype!(indices.dtype(), I => typed_gather::<T, I>(op, data, indices, out, opts), _ => Err(Error::unsupported_dtype(op.name(), "indices", indices.dtype(), crate::index::INDEX_DTYPES_TEXT)))),
    )
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
pub fn gather_dyn<'d, 'i>(
    op: GatherOp,
    data: impl Into<DynView<'d>>,
    indices: impl Into<DynView<'i>>,
    opts: &DynGatherOptions,
) -> Result<DynTensor> {
    dispatch_gather(op, &data.into(), &indices.into(), None, opts)?
        .ok_or_else(|| Error::invalid(op.name(), "out", "no output was produced"))
}

/// Runs one gather on erased tensors into a caller-provided output of data's dtype and the
/// gathered shape.
///
/// # Errors
/// As [`gather_dyn`], plus an output of another dtype or shape; on error `out` is unchanged.
///
/// ```
/// use tensor_scatter::{gather_dyn_out, DynGatherOptions, DynTensor, GatherOp};
/// let mut out = DynTensor::from_vec(vec![0.0f64; 2], &[2]).unwrap();
/// gather_dyn_out(
///     GatherOp::Elements,
///     &DynTensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap(),
///     &DynTensor::from_vec(vec![-1i64, 0], &[2]).unwrap(),
///     &mut out,
///     &DynGatherOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice::<f64>(), Some(&[3.0, 1.0][..]));
/// ```
pub fn gather_dyn_out<'d, 'i, 'o>(
    op: GatherOp,
    data: impl Into<DynView<'d>>,
    indices: impl Into<DynView<'i>>,
    out: impl Into<DynViewMut<'o>>,
    opts: &DynGatherOptions,
) -> Result<()> {
    let mut out = out.into();
    dispatch_gather(op, &data.into(), &indices.into(), Some(&mut out), opts).map(|_| ())
}

/// The former name of [`gather_dyn_out`].
#[deprecated(
    note = "renamed `gather_dyn_out`: `_out` is a caller-provided output for every operator"
)]
pub fn gather_dyn_into(
    op: GatherOp,
    data: &DynTensor,
    indices: &DynTensor,
    out: &mut DynTensor,
    opts: &DynGatherOptions,
) -> Result<()> {
    gather_dyn_out(op, data, indices, out, opts)
}
