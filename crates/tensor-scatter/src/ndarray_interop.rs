//! `ndarray` arrays in and out, without a copy (feature `ndarray`).
//!
//! An `ArrayView` becomes a [`TensorView`] over the same memory, with its strides (negative,
//! stepped, blocks with gaps between their rows, and for a read-only view zero strides), and a
//! view of ours becomes an `ArrayView`. An owned [`Tensor`] and an `ArrayD` give each other
//! their buffer. The conversions copy nothing, and the operators never touch the positions
//! between a view's elements, which may belong to another view (the other half of a
//! `multi_slice_mut`). The scatters and gathers read and write strided views where they lie;
//! a few paths work on a contiguous copy of the elements of a strided operand: the segment
//! family's `src`, a gather's caller-provided `out`, and, for views with gaps, the
//! destination and updates of `mean` and of the wide `f16`/`bf16` accumulation (the
//! sequential engine).
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
    ArrayD, ArrayView, ArrayViewD, ArrayViewMut, ArrayViewMutD, Axis, Dimension, IxDyn,
    ShapeBuilder,
};

use crate::error::{Error, ErrorKind, Result};
use crate::view::{Tensor, TensorView, TensorViewMut};

impl<'a, T: Copy, D: Dimension> TryFrom<ArrayView<'a, T, D>> for TensorView<'a, T> {
    type Error = Error;

    /// The same elements, shape and strides, without a copy.
    ///
    /// # Errors
    /// None in practice: ndarray's views are valid layouts.
    fn try_from(a: ArrayView<'a, T, D>) -> Result<Self> {
        // SAFETY: `a` borrows every element it addresses for 'a, read-only, and they are
        // aligned, initialised `T`s at `as_ptr()` plus the strides, in one allocation.
        unsafe { TensorView::from_raw_parts(a.as_ptr(), a.shape(), a.strides()) }
    }
}

impl<'a, T: Copy, D: Dimension> TryFrom<ArrayViewMut<'a, T, D>> for TensorViewMut<'a, T> {
    type Error = Error;

    /// The same elements, shape and strides, writable, without a copy.
    ///
    /// # Errors
    /// None in practice (ndarray's writable views do not overlap themselves).
    fn try_from(mut a: ArrayViewMut<'a, T, D>) -> Result<Self> {
        let (shape, strides) = (a.shape().to_vec(), a.strides().to_vec());
        // SAFETY: `a`, consumed here, borrows every element it addresses uniquely for 'a
        // (aligned, initialised `T`s in one allocation), so nothing else reaches them for 'a.
        unsafe { TensorViewMut::from_raw_parts(a.as_mut_ptr(), &shape, &strides) }
    }
}

fn nd_error(e: ndarray::ShapeError) -> Error {
    Error::new(ErrorKind::InvalidView {
        op: "ndarray",
        arg: "view",
        reason: e.to_string(),
    })
}

/// `ndarray`'s form of a layout from its lowest address: the strides' magnitudes (it takes
/// no negative stride from a pointer; the dims that run backwards are inverted after).
fn nd_shape(shape: &[usize], strides: &[isize]) -> ndarray::StrideShape<IxDyn> {
    let abs: Vec<usize> = strides.iter().map(|s| s.unsigned_abs()).collect();
    IxDyn(shape).strides(IxDyn(&abs))
}

impl<'a, T: Copy> TensorView<'a, T> {
    /// The same elements as an `ndarray` view (dynamic rank), without a copy, whatever the
    /// strides.
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
        let ptr = self.data.ptr_at(lo);
        // SAFETY: the view's elements are valid, aligned `T`s nobody writes for 'a (its
        // contract); walking from its lowest position by the strides' magnitudes reaches
        // exactly them (positions `lo..=hi` of one allocation, span below isize::MAX).
        let mut v = unsafe { ArrayView::from_shape_ptr(nd_shape(&l.shape, &l.strides), ptr) };
        for (d, &s) in l.strides.iter().enumerate() {
            if s < 0 {
                v.invert_axis(Axis(d));
            }
        }
        Ok(v)
    }
}

impl<'a, T: Copy> TensorViewMut<'a, T> {
    /// The same elements as a writable `ndarray` view (dynamic rank), without a copy,
    /// whatever the strides.
    ///
    /// # Errors
    /// As [`TensorView::to_ndarray`].
    pub fn into_ndarray(mut self) -> Result<ArrayViewMutD<'a, T>> {
        let Some((lo, _)) = self.layout.span() else {
            return ArrayViewMut::from_shape(IxDyn(&self.layout.shape), &mut []).map_err(nd_error);
        };
        let ptr = self.data.ptr_at_mut(lo);
        let l = &self.layout;
        // SAFETY: as in `to_ndarray`, with the elements this view's alone for 'a (it is
        // consumed here) and never two coordinates on one element (a writable view does not
        // overlap itself).
        let mut v = unsafe { ArrayViewMut::from_shape_ptr(nd_shape(&l.shape, &l.strides), ptr) };
        for (d, &s) in l.strides.iter().enumerate() {
            if s < 0 {
                v.invert_axis(Axis(d));
            }
        }
        Ok(v)
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
