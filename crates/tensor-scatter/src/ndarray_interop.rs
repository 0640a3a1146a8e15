//! `ndarray` arrays in and out, without a copy (feature `ndarray`).
//!
//! An `ArrayView` becomes a [`TensorView`] over the same memory, with its strides (negative
//! and, for a read-only view, zero strides included), and a view of ours becomes an
//! `ArrayView`. An owned [`Tensor`] and an `ArrayD` give each other their buffer.
//!
//! What cannot be converted without a copy, and is refused instead (an
//! [`InvalidView`](ErrorKind::InvalidView) error, never a hidden copy): a view with gaps between
//! its elements, such as `a.slice(s![.., ..;2])`. Our views borrow a slice covering every
//! element between the lowest and highest address, and a slice over the gaps would alias
//! memory another view may hold mutably; `view.as_standard_layout()` makes the copy
//! explicitly.
//!
//! ```
//! use ndarray::{array, s};
//! use tensor_scatter::{scatter_elements_into, Reduction, ScatterOptions, TensorView, TensorViewMut};
//!
//! let mut acc = ndarray::Array2::<f32>::zeros((3, 2));
//! let idx = array![[2i64, 0], [2, 2]];
//! let src = array![[1.0f32, 2.0], [3.0, 4.0]];
//! // Scatter-add into the transposed accumulator, in place: dims reordered, no copy.
//! let mut t = acc.view_mut();
//! t.swap_axes(0, 1);
//! let mut dest = TensorViewMut::try_from(t.slice_mut(s![.., ..;-1])).unwrap();
//! scatter_elements_into(
//!     &mut dest,
//!     &TensorView::try_from(idx.view()).unwrap(),
//!     &TensorView::try_from(src.view()).unwrap(),
//!     &ScatterOptions::new().axis(1).reduction(Reduction::Add),
//! )
//! .unwrap();
//! assert_eq!(acc, array![[1.0, 7.0], [0.0, 0.0], [2.0, 0.0]]);
//! ```

use ndarray::{
    ArrayD, ArrayView, ArrayViewD, ArrayViewMut, ArrayViewMutD, Dimension, IxDyn, ShapeBuilder,
};

use crate::error::{Error, ErrorKind, Result};
use crate::view::{Tensor, TensorView, TensorViewMut};

impl<'a, T: Copy, D: Dimension> TryFrom<ArrayView<'a, T, D>> for TensorView<'a, T> {
    type Error = Error;

    /// The same elements, shape and strides, without a copy.
    ///
    /// # Errors
    /// [`InvalidView`](ErrorKind::InvalidView) for a view with gaps between its elements.
    fn try_from(a: ArrayView<'a, T, D>) -> Result<Self> {
        // SAFETY: `a` borrows every element it addresses for 'a, read-only, and they are
        // aligned, initialised `T`s at `as_ptr()` plus the strides.
        unsafe { TensorView::from_raw_parts(a.as_ptr(), a.shape(), a.strides()) }
            .map_err(|e| hint(e, "as_standard_layout"))
    }
}

impl<'a, T: Copy, D: Dimension> TryFrom<ArrayViewMut<'a, T, D>> for TensorViewMut<'a, T> {
    type Error = Error;

    /// The same elements, shape and strides, writable, without a copy.
    ///
    /// # Errors
    /// [`InvalidView`](ErrorKind::InvalidView) for a view with gaps between its elements.
    fn try_from(mut a: ArrayViewMut<'a, T, D>) -> Result<Self> {
        let (shape, strides) = (a.shape().to_vec(), a.strides().to_vec());
        // SAFETY: `a`, consumed here, borrows every element it addresses uniquely for 'a
        // (aligned, initialised `T`s), so nothing else reaches them for 'a.
        unsafe { TensorViewMut::from_raw_parts(a.as_mut_ptr(), &shape, &strides) }
            .map_err(|e| hint(e, "as_standard_layout"))
    }
}

/// `e`, its reason naming `ndarray`'s way to copy when it is a layout error.
fn hint(e: Error, copy: &str) -> Error {
    match e.kind() {
        ErrorKind::InvalidView { reason, .. } => Error::new(ErrorKind::InvalidView {
            op: "ndarray",
            arg: "view",
            reason: format!("{reason} ({copy})"),
        }),
        _ => e,
    }
}

/// `ndarray`'s form of a layout: strides as it stores them (two's complement in `usize`) and
/// the slice from the lowest position the view reaches.
fn nd_layout(
    shape: &[usize],
    strides: &[isize],
    lo: usize,
) -> (ndarray::StrideShape<IxDyn>, usize) {
    let strides: Vec<usize> = strides.iter().map(|&s| s as usize).collect();
    (IxDyn(shape).strides(IxDyn(&strides)), lo)
}

fn nd_error(e: ndarray::ShapeError) -> Error {
    Error::new(ErrorKind::InvalidView {
        op: "ndarray",
        arg: "view",
        reason: e.to_string(),
    })
}

impl<'a, T: Copy> TensorView<'a, T> {
    /// The same elements as an `ndarray` view (dynamic rank), without a copy.
    ///
    /// # Errors
    /// [`InvalidView`](ErrorKind::InvalidView) if `ndarray` refuses the layout (it accepts
    /// every layout a view of ours can have, so this is not expected).
    ///
    /// ```
    /// let buf = [1, 2, 3, 4, 5, 6];
    /// let v = tensor_scatter::TensorView::with_strides(&buf, 5, &[2, 3], &[-3, -1]).unwrap();
    /// assert_eq!(v.to_ndarray().unwrap(), ndarray::array![[6, 5, 4], [3, 2, 1]].into_dyn());
    /// ```
    pub fn to_ndarray(&self) -> Result<ArrayViewD<'a, T>> {
        let l = &self.layout;
        let Some((lo, _)) = l.span() else {
            return ArrayView::from_shape(IxDyn(&l.shape), &[]).map_err(nd_error);
        };
        let (shape, lo) = nd_layout(&l.shape, &l.strides, lo);
        ArrayView::from_shape(shape, &self.data[lo..]).map_err(nd_error)
    }
}

impl<'a, T: Copy> TensorViewMut<'a, T> {
    /// The same elements as a writable `ndarray` view (dynamic rank), without a copy.
    ///
    /// # Errors
    /// As [`TensorView::to_ndarray`].
    pub fn into_ndarray(self) -> Result<ArrayViewMutD<'a, T>> {
        let l = self.layout;
        let Some((lo, _)) = l.span() else {
            return ArrayViewMut::from_shape(IxDyn(&l.shape), &mut []).map_err(nd_error);
        };
        let (shape, lo) = nd_layout(&l.shape, &l.strides, lo);
        ArrayViewMut::from_shape(shape, &mut self.data[lo..]).map_err(nd_error)
    }
}

impl<T> From<Tensor<T>> for ArrayD<T> {
    /// The tensor's buffer as a row-major array, without a copy.
    fn from(t: Tensor<T>) -> ArrayD<T> {
        let Tensor { data, shape } = t;
        // Every constructor of `Tensor` checks that its shape holds exactly its elements, so
        // `ndarray` cannot refuse it.
        ArrayD::from_shape_vec(IxDyn(&shape), data)
            .unwrap_or_else(|e| panic!("a Tensor's shape holds its elements: {e}"))
    }
}

impl<T: Copy, D: Dimension> From<ndarray::Array<T, D>> for Tensor<T> {
    /// The array's elements in row-major order: its buffer without a copy when it is in
    /// standard (row-major, contiguous) layout, else a row-major copy.
    fn from(a: ndarray::Array<T, D>) -> Tensor<T> {
        let shape = a.shape().to_vec();
        let n = a.len();
        let data = if a.is_standard_layout() {
            // The elements are `data[start..start + n]` (an array sliced in place keeps the
            // rest of its buffer): moved down, no allocation.
            let (mut data, offset) = a.into_raw_vec_and_offset();
            data.drain(..offset.unwrap_or(0));
            data.truncate(n);
            data
        } else {
            a.iter().copied().collect()
        };
        Tensor { data, shape }
    }
}
