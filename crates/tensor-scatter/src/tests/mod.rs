mod fold;
mod gather_prop;
mod prop;
mod segment_prop;
mod segment_vjp;
mod vjp;

use crate::{Result, TensorView, TensorViewMut};

/// A view of `buf` with this layout, made from a raw pointer for layout kind 2 (padded and
/// reversed: its padding is then a gap the view never touches, as in NumPy's and ndarray's
/// stepped views), from the slice otherwise.
pub(crate) fn view_in<'a, T: Copy>(
    buf: &'a [T],
    offset: usize,
    shape: &[usize],
    strides: &[isize],
    kind: u8,
) -> Result<TensorView<'a, T>> {
    let v = TensorView::with_strides(buf, offset, shape, strides)?;
    if kind != 2 || v.is_empty() {
        return Ok(v);
    }
    // SAFETY: `with_strides` showed that every element lies in `buf` (so `offset` does),
    // which is borrowed for 'a.
    unsafe { TensorView::from_raw_parts(buf.as_ptr().add(offset), shape, strides) }
}

/// [`view_in`] for a writable view.
pub(crate) fn view_mut_in<'a, T: Copy>(
    buf: &'a mut [T],
    offset: usize,
    shape: &[usize],
    strides: &[isize],
    kind: u8,
) -> Result<TensorViewMut<'a, T>> {
    if kind != 2 || shape.contains(&0) {
        return TensorViewMut::with_strides(buf, offset, shape, strides);
    }
    TensorViewMut::with_strides(&mut *buf, offset, shape, strides)?;
    // SAFETY: as in `view_in` (the check just above), with `buf` borrowed exclusively for 'a.
    unsafe { TensorViewMut::from_raw_parts(buf.as_mut_ptr().add(offset), shape, strides) }
}
