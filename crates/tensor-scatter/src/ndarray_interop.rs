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

/// The element positions `[lo, hi]` a non-empty layout reaches, relative to its origin, when
/// they are all its own (every position in between is an element of the view); `None` when
/// the view has gaps or is empty.
fn gap_free_span(shape: &[usize], strides: &[isize]) -> Option<(isize, isize)> {
    if shape.contains(&0) {
        return None;
    }
    // Dims that move: sorted by stride magnitude, each must step exactly over what the
    // smaller ones cover (1, then n0 * |s0|, ...). Stride-0 (broadcast) and length-1 dims
    // address no new position.
    let mut dims: Vec<(usize, usize)> = shape
        .iter()
        .zip(strides)
        .filter(|&(&n, &s)| n > 1 && s != 0)
        .map(|(&n, &s)| (s.unsigned_abs(), n))
        .collect();
    dims.sort_unstable();
    let mut covered = 1usize;
    for (s, n) in dims {
        if s != covered {
            return None;
        }
        covered = covered.checked_mul(n)?;
    }
    let (mut lo, mut hi) = (0isize, 0isize);
    for (&n, &s) in shape.iter().zip(strides) {
        let reach = (n as isize - 1) * s;
        if reach < 0 { lo += reach } else { hi += reach }
    }
    Some((lo, hi))
}

fn gaps(shape: &[usize], strides: &[isize]) -> Error {
    Error::new(ErrorKind::InvalidView {
        op: "ndarray",
        arg: "view",
        reason: format!(
            "shape {shape:?} with strides {strides:?} leaves gaps between its elements, which a \
             view of ours cannot borrow without borrowing the gaps too; copy it first \
             (as_standard_layout)"
        ),
    })
}

impl<'a, T: Copy, D: Dimension> TryFrom<ArrayView<'a, T, D>> for TensorView<'a, T> {
    type Error = Error;

    /// The same elements, shape and strides, without a copy.
    ///
    /// # Errors
    /// [`InvalidView`](ErrorKind::InvalidView) for a view with gaps between its elements.
    fn try_from(a: ArrayView<'a, T, D>) -> Result<Self> {
        let (shape, strides) = (a.shape().to_vec(), a.strides().to_vec());
        if a.is_empty() {
            return TensorView::with_strides(&[], 0, &shape, &strides);
        }
        let (lo, hi) = gap_free_span(&shape, &strides).ok_or_else(|| gaps(&shape, &strides))?;
        // SAFETY: `a` borrows every element it addresses for 'a, read-only; they all lie at
        // `as_ptr() + p` for `p` in `[lo, hi]`, and `gap_free_span` showed that every
        // position in that range is one of them, so the slice covers only memory `a` borrows.
        let data =
            unsafe { std::slice::from_raw_parts(a.as_ptr().offset(lo), (hi - lo) as usize + 1) };
        TensorView::with_strides(data, lo.unsigned_abs(), &shape, &strides)
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
        if a.is_empty() {
            return TensorViewMut::with_strides(&mut [], 0, &shape, &strides);
        }
        let (lo, hi) = gap_free_span(&shape, &strides).ok_or_else(|| gaps(&shape, &strides))?;
        // SAFETY: `a`, consumed here, borrows every element it addresses uniquely for 'a; an
        // `ArrayViewMut` never addresses one element twice, and `gap_free_span` showed every
        // position in `[lo, hi]` is one of its elements, so the slice covers exactly the memory
        // `a` borrowed and nothing else can reach it for 'a.
        let data = unsafe {
            std::slice::from_raw_parts_mut(a.as_mut_ptr().offset(lo), (hi - lo) as usize + 1)
        };
        TensorViewMut::with_strides(data, lo.unsigned_abs(), &shape, &strides)
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
