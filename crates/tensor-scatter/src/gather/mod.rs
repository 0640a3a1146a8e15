//! The gather inverses: `gather`, `gather_elements` and `gather_nd`.
//!
//! Each is the read-side mirror of a scatter with the same index semantics:
//!
//! | gather | mirrors | output shape |
//! |---|---|---|
//! | [`gather`] | [`scatter_update`](crate::scatter_update) | `data[..axis] ++ indices[b..] ++ data[axis+1..]` |
//! | [`gather_elements`] | [`scatter_elements`](crate::scatter_elements) | `indices.shape` |
//! | [`gather_nd`] | [`scatter_nd`](crate::scatter_nd) | `indices[..q-1] ++ data[b+k..]` |
//!
//! The data path is the scatters': a shape-only plan, then a read-only pass over every index
//! (an error names the first bad one in row-major order, before anything is written), then
//! an infallible kernel that moves every dtype as the unsigned integer of its width, in
//! parallel over disjoint output ranges.
//!
//! A strided `data` view (padded, reversed, permuted, broadcast) is read where it lies: the
//! gather touches only the cells it gathers, however large the view. Strided `indices` are
//! copied once into a contiguous buffer, since every index is read anyway, and a strided
//! `out` (the `_into` forms) receives a contiguous result element by element.

pub(crate) mod drive;
pub(crate) mod plan;

pub(crate) use plan::{plan_gather, plan_gather_elements, plan_gather_nd};

use drive::{drive_alloc, drive_into};

use crate::dtype::Element;
use crate::error::Result;
use crate::exec::Par;
use crate::index::{IndexInt, IndexPolicy, NegativeIndices, OutOfRange};
use crate::view::{Tensor, TensorView, TensorViewMut};

/// What a gather does with an index outside its dimension (after the negative-index rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum GatherOutOfRange {
    /// An error before anything is written (ONNX, DirectML, BNNS, PyTorch, NumPy).
    #[default]
    Error,
    /// Clamp to `[0, s - 1]` (JAX `mode='clip'`, NumPy `mode='clip'`); an error when `s == 0`.
    Clamp,
    /// The whole gathered slice (or element) is [`GatherOptions::fill_value`] (OpenVINO
    /// Gather-8 with zero, JAX `mode='fill'`). For `gather_nd` a tuple with any component out
    /// of range fills its slice.
    Fill,
}

/// Options of the three gathers; `T` is the element type (the type of `fill_value`).
///
/// Defaults follow ONNX: axis 0, no batch dims, negative indices wrap once, out-of-range
/// indices are an error; the fill value (used only with [`GatherOutOfRange::Fill`]) is zero.
///
/// ```
/// use tensor_scatter::{GatherOptions, GatherOutOfRange, NegativeIndices};
/// let o = GatherOptions::new().axis(-1).batch_dims(1).out_of_range(GatherOutOfRange::Fill).fill_value(-1i32);
/// assert_eq!((o.axis, o.batch_dims, o.fill_value), (-1, 1, -1));
/// assert_eq!(o.negative, NegativeIndices::Wrap);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[non_exhaustive]
pub struct GatherOptions<T> {
    /// The axis of `gather` and `gather_elements`, in `[-rank, rank)`; ignored by `gather_nd`.
    pub axis: i64,
    /// Leading dims shared by `data` and `indices` (`gather`: in `[-q, q]`, normalised by the
    /// rank `q` of indices, at most the axis; `gather_nd`: in `[0, q)`); ignored by
    /// `gather_elements`.
    pub batch_dims: i64,
    /// What a negative index means.
    pub negative: NegativeIndices,
    /// What an index outside its dimension means.
    pub out_of_range: GatherOutOfRange,
    /// The value of every element gathered by an out-of-range index under
    /// [`GatherOutOfRange::Fill`].
    pub fill_value: T,
    /// How many threads to use. Never changes the result.
    pub par: Par,
}

impl<T: Default> GatherOptions<T> {
    /// The defaults (ONNX semantics, fill value zero).
    pub fn new() -> Self {
        Self::default()
    }
}

impl<T> GatherOptions<T> {
    /// Sets the axis.
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = axis;
        self
    }
    /// Sets the number of batch dims.
    pub fn batch_dims(mut self, batch_dims: i64) -> Self {
        self.batch_dims = batch_dims;
        self
    }
    /// Sets the negative-index rule.
    pub fn negative(mut self, negative: NegativeIndices) -> Self {
        self.negative = negative;
        self
    }
    /// Sets the out-of-range rule.
    pub fn out_of_range(mut self, out_of_range: GatherOutOfRange) -> Self {
        self.out_of_range = out_of_range;
        self
    }
    /// Sets the fill value (used with [`GatherOutOfRange::Fill`]).
    pub fn fill_value(mut self, fill_value: T) -> Self {
        self.fill_value = fill_value;
        self
    }
    /// Sets the thread setting.
    pub fn par(mut self, par: Par) -> Self {
        self.par = par;
        self
    }
    /// The same options with another fill value (and so another element type).
    pub fn with_fill<U>(self, fill_value: U) -> GatherOptions<U> {
        GatherOptions {
            axis: self.axis,
            batch_dims: self.batch_dims,
            negative: self.negative,
            out_of_range: self.out_of_range,
            fill_value,
            par: self.par,
        }
    }
    /// The scatter-side [`IndexPolicy`] these options resolve indices with (`Fill` resolves
    /// like `Skip`: the index selects nothing).
    pub(crate) fn policy(&self) -> IndexPolicy {
        IndexPolicy::new(
            self.negative,
            match self.out_of_range {
                GatherOutOfRange::Error => OutOfRange::Error,
                GatherOutOfRange::Clamp => OutOfRange::Clamp,
                GatherOutOfRange::Fill => OutOfRange::Skip,
            },
        )
    }
}

/// Gathers whole slices along an axis (ONNX Gather, OpenVINO Gather-8, torch `index_select`,
/// NumPy `take`, BNNSGather with 1-D indices), with optional batch dims:
///
/// `out[b…, o…, i…, s…] = data[b…, o…, indices[b…, i…], s…]`, where `b` spans the first
/// `batch_dims` dims (shared by data and indices), `o` the data dims before the axis, `i` the
/// remaining indices dims and `s` the data dims after the axis. Output shape:
/// `data[..axis] ++ indices[batch_dims..] ++ data[axis+1..]`.
///
/// # Errors
/// Axis outside `[-r, r)` (so rank-0 data); `batch_dims` outside `[-q, q]` or above the axis;
/// batch dims of data and indices that differ; any index rejected by the negative-index rule
/// or out of range under [`GatherOutOfRange::Error`] (or `Clamp` on an empty axis). Every
/// index is checked, even when the output is empty.
///
/// # Examples
///
/// ```
/// use tensor_scatter::{gather, GatherOptions, GatherOutOfRange, TensorView};
/// // OpenVINO Gather-8's example: out-of-range indices give zeros.
/// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
/// let out = gather(
///     &TensorView::new(&data, &[5]).unwrap(),
///     &TensorView::new(&[3i64, 10, -20], &[3]).unwrap(),
///     &GatherOptions::new().out_of_range(GatherOutOfRange::Fill),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice(), &[4.0, 0.0, 0.0]);
/// ```
pub fn gather<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    drive_alloc("gather", plan_gather, data, indices, opts)
}

/// [`gather`] into a caller-provided output of the gathered shape (may be strided).
///
/// # Errors
/// As [`gather`], plus an `out` whose shape is not the gathered shape; on error `out` is
/// unchanged.
///
/// ```
/// use tensor_scatter::{gather_out, GatherOptions, TensorView, TensorViewMut};
/// // Rows 2 and 0 of a 3 × 2 matrix, into a reused buffer.
/// let mut out = [0u8; 4];
/// gather_out(
///     &TensorView::new(&[1u8, 2, 3, 4, 5, 6], &[3, 2]).unwrap(),
///     &TensorView::new(&[2u32, 0], &[2]).unwrap(),
///     &mut TensorViewMut::new(&mut out, &[2, 2]).unwrap(),
///     &GatherOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out, [5, 6, 1, 2]);
/// ```
pub fn gather_out<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    drive_into("gather", plan_gather, data, indices, out, opts)
}

/// Gathers elements along an axis (ONNX GatherElements, torch `gather`, NumPy
/// `take_along_axis`, BNNSGather with same-rank indices):
///
/// `out[c] = data[c₀, …, indices[c], …, c_{r-1}]` (the index replaces coordinate `axis`).
/// Output shape: `indices.shape`; `indices` has data's rank and on every dimension except the
/// axis an extent at most data's.
///
/// # Errors
/// Axis outside `[-r, r)`; a rank of indices other than data's; an extent of indices larger
/// than data's off the axis; any index rejected by the policy (as [`gather`]).
///
/// ```
/// use tensor_scatter::{gather_elements, GatherOptions, TensorView};
/// // DirectML GATHER_ELEMENTS' example: output[y, x] = input[indices[y, x], x].
/// let out = gather_elements(
///     &TensorView::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], &[3, 3]).unwrap(),
///     &TensorView::new(&[1u32, 2, 0, 2, 0, 0], &[2, 3]).unwrap(),
///     &GatherOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice(), &[4.0, 8.0, 3.0, 7.0, 2.0, 3.0]);
/// ```
pub fn gather_elements<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    drive_alloc("gather_elements", plan_gather_elements, data, indices, opts)
}

/// [`gather_elements`] into a caller-provided output of indices' shape (may be strided).
///
/// # Errors
/// As [`gather_elements`], plus an `out` of another shape; on error `out` is unchanged.
///
/// ```
/// use tensor_scatter::{gather_elements_out, GatherOptions, TensorView, TensorViewMut};
/// let mut out = [0i64; 2];
/// gather_elements_out(
///     &TensorView::new(&[10i64, 20, 30], &[3]).unwrap(),
///     &TensorView::new(&[-1i8, 0], &[2]).unwrap(),
///     &mut TensorViewMut::new(&mut out, &[2]).unwrap(),
///     &GatherOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out, [30, 10]);
/// ```
pub fn gather_elements_out<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    drive_into(
        "gather_elements",
        plan_gather_elements,
        data,
        indices,
        out,
        opts,
    )
}

/// Gathers slices addressed by index tuples (ONNX GatherND, TF `gather_nd`, OpenVINO
/// GatherND-8, DirectML GATHER_ND1, BNNSGatherND), with optional batch dims:
///
/// `out[b…, t…, s…] = data[b…, indices[b…, t…, 0], …, indices[b…, t…, k-1], s…]`, where
/// `k = indices.shape[-1]` and each component is checked against its own dimension. Output
/// shape: `indices[..q-1] ++ data[batch_dims + k..]`. `k = 0` gathers the whole (batch) slice
/// per tuple (TF's rule; ONNX requires `k ≥ 1`, which [`onnx::gather_nd`](crate::onnx::gather_nd)
/// enforces).
///
/// # Errors
/// Rank-0 indices; `batch_dims` outside `[0, q)`; `batch_dims + k` above data's rank; batch
/// dims that differ; any index component rejected by the policy (as [`gather`]).
///
/// ```
/// use tensor_scatter::{gather_nd, GatherOptions, TensorView};
/// // ONNX GatherND example 3: tuples (0, 1) and (1, 0) select rows of a 2 × 2 × 2 tensor.
/// let data = [0i32, 1, 2, 3, 4, 5, 6, 7];
/// let out = gather_nd(
///     &TensorView::new(&data, &[2, 2, 2]).unwrap(),
///     &TensorView::new(&[0i64, 1, 1, 0], &[2, 2]).unwrap(),
///     &GatherOptions::new(),
/// )
/// .unwrap();
/// assert_eq!((out.shape(), out.as_slice()), (&[2usize, 2][..], &[2, 3, 4, 5][..]));
/// ```
pub fn gather_nd<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    drive_alloc("gather_nd", plan_gather_nd, data, indices, opts)
}

/// [`gather_nd`] into a caller-provided output of the gathered shape (may be strided).
///
/// # Errors
/// As [`gather_nd`], plus an `out` of another shape; on error `out` is unchanged.
///
/// ```
/// use tensor_scatter::{gather_nd_out, GatherOptions, TensorView, TensorViewMut};
/// // batch_dims = 1: each batch picks its own element.
/// let mut out = [0u16; 2];
/// gather_nd_out(
///     &TensorView::new(&[1u16, 2, 3, 4], &[2, 2]).unwrap(),
///     &TensorView::new(&[1u8, 0], &[2, 1]).unwrap(),
///     &mut TensorViewMut::new(&mut out, &[2]).unwrap(),
///     &GatherOptions::new().batch_dims(1),
/// )
/// .unwrap();
/// assert_eq!(out, [2, 3]);
/// ```
pub fn gather_nd_out<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    drive_into("gather_nd", plan_gather_nd, data, indices, out, opts)
}

/// The former name of [`gather_out`].
#[deprecated(note = "renamed `gather_out`: `_out` is a caller-provided output for every operator")]
pub fn gather_into<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    gather_out(data, indices, out, opts)
}

/// The former name of [`gather_elements_out`].
#[deprecated(
    note = "renamed `gather_elements_out`: `_out` is a caller-provided output for every operator"
)]
pub fn gather_elements_into<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    gather_elements_out(data, indices, out, opts)
}

/// The former name of [`gather_nd_out`].
#[deprecated(
    note = "renamed `gather_nd_out`: `_out` is a caller-provided output for every operator"
)]
pub fn gather_nd_into<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    gather_nd_out(data, indices, out, opts)
}
