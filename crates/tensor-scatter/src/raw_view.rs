//! Views over memory that another owner describes by a pointer, a shape and strides (NumPy,
//! DLPack, `ndarray`): [`TensorView::from_raw_parts`] and [`TensorViewMut::from_raw_parts`].
//!
//! Our views borrow one slice that covers every element from the lowest to the highest
//! address. That is sound only when every position in between is one of the view's own
//! elements (any dim order, negative strides, broadcast dims): a slice over a gap would borrow
//! memory the owner may have lent to someone else. A view with gaps (a stepped slice such as
//! NumPy's `a[:, ::2]`) is therefore refused with an
//! [`InvalidView`](ErrorKind::InvalidView) error, and its caller copies it explicitly.

use crate::error::{Error, ErrorKind, Result};
use crate::view::{TensorView, TensorViewMut};

/// The element positions `[lo, hi]` a non-empty layout reaches relative to its origin, when
/// each of them is one of the layout's elements; `None` when the layout leaves gaps (or the
/// ranks differ, or a position overflows). What [`TensorView::from_raw_parts`] accepts, for
/// a caller (a binding) that decides beforehand whether to copy, or whether two arrays
/// overlap.
///
/// ```
/// // A reversed, transposed [3, 2] block: positions -5..=0 of its origin, no gaps.
/// assert_eq!(tensor_scatter::gap_free_span(&[2, 3], &[-1, -2]), Some((-5, 0)));
/// assert_eq!(tensor_scatter::gap_free_span(&[3], &[2]), None); // every other element
/// ```
pub fn gap_free_span(shape: &[usize], strides: &[isize]) -> Option<(isize, isize)> {
    if shape.len() != strides.len() {
        return None;
    }
    // The dims that move, by stride magnitude: each must step exactly over what the smaller
    // ones cover (1, then n0 * |s0|, ...). Broadcast (stride 0) and length-1 dims add nothing.
    // Up to 8 of them are sorted on the stack (this runs on every call of a binding).
    let moving = shape
        .iter()
        .zip(strides)
        .filter(|&(&n, &s)| n > 1 && s != 0)
        .map(|(&n, &s)| (s.unsigned_abs(), n));
    let mut small = [(0usize, 0usize); 8];
    let mut large = Vec::new();
    let dims: &mut [(usize, usize)] = if shape.len() <= small.len() {
        let mut k = 0;
        for d in moving {
            small[k] = d;
            k += 1;
        }
        &mut small[..k]
    } else {
        large.extend(moving);
        &mut large
    };
    dims.sort_unstable();
    let mut covered = 1usize;
    for &(s, n) in dims.iter() {
        if s != covered {
            return None;
        }
        covered = covered.checked_mul(n)?;
    }
    let (mut lo, mut hi) = (0isize, 0isize);
    for (&n, &s) in shape.iter().zip(strides) {
        let reach = (n as isize - 1).checked_mul(s)?;
        if reach < 0 {
            lo = lo.checked_add(reach)?;
        } else {
            hi = hi.checked_add(reach)?;
        }
    }
    Some((lo, hi))
}

/// The span of a non-empty layout, or the error that explains why it cannot be borrowed.
fn span(shape: &[usize], strides: &[isize]) -> Result<(isize, isize)> {
    if shape.len() != strides.len() {
        return Err(invalid(format!(
            "{} strides for a shape of rank {}",
            strides.len(),
            shape.len()
        )));
    }
    gap_free_span(shape, strides).ok_or_else(|| {
        invalid(format!(
            "shape {shape:?} with strides {strides:?} leaves gaps between its elements, which \
             a view cannot borrow without borrowing the gaps too; copy it into a contiguous \
             array first"
        ))
    })
}

fn invalid(reason: String) -> Error {
    Error::new(ErrorKind::InvalidView {
        op: "view",
        arg: "strides",
        reason,
    })
}

impl<'a, T: Copy> TensorView<'a, T> {
    /// A view of the elements another owner describes: element `c` at `origin + Σ c[d]·strides[d]`
    /// (element strides, negative and zero allowed). No copy.
    ///
    /// # Errors
    /// [`InvalidView`](ErrorKind::InvalidView) when the layout leaves gaps between its
    /// elements (see the module docs) or the ranks differ; `SizeOverflow` for a shape past the
    /// address space.
    ///
    /// # Safety
    /// When the shape has elements: `origin` is aligned for `T`, and every element the layout
    /// addresses is a valid, initialised `T` that nobody writes for `'a`.
    ///
    /// ```
    /// use tensor_scatter::TensorView;
    /// let buf = [1, 2, 3, 4, 5, 6];
    /// // The [3, 2] buffer transposed and its columns reversed, from its last element.
    /// // SAFETY: every element reached lies in `buf`, borrowed for the view's life.
    /// let v = unsafe { TensorView::from_raw_parts(buf.as_ptr().add(5), &[2, 3], &[-1, -2]) }.unwrap();
    /// assert_eq!(v.to_vec(), vec![6, 4, 2, 5, 3, 1]);
    /// ```
    pub unsafe fn from_raw_parts(
        origin: *const T,
        shape: &[usize],
        strides: &[isize],
    ) -> Result<TensorView<'a, T>> {
        if shape.contains(&0) {
            return TensorView::with_strides(&[], 0, shape, strides);
        }
        let (lo, hi) = span(shape, strides)?;
        // SAFETY: the caller vouches for every element the layout addresses, shared for 'a;
        // `span` showed that they are exactly the positions `lo..=hi` from `origin`, so the
        // slice covers only them (and its length, at most the number of distinct elements,
        // fits in isize since they all lie in one allocation).
        let data = unsafe { std::slice::from_raw_parts(origin.offset(lo), (hi - lo) as usize + 1) };
        TensorView::with_strides(data, lo.unsigned_abs(), shape, strides)
    }
}

impl<'a, T: Copy> TensorViewMut<'a, T> {
    /// A writable view of the elements another owner describes, as
    /// [`TensorView::from_raw_parts`]. No copy.
    ///
    /// # Errors
    /// As [`TensorView::from_raw_parts`], plus [`InvalidView`](ErrorKind::InvalidView) when two
    /// coordinates share one element.
    ///
    /// # Safety
    /// When the shape has elements: `origin` is aligned for `T`, and every element the layout
    /// addresses is a valid, initialised `T` that nobody else reads or writes for `'a`.
    pub unsafe fn from_raw_parts(
        origin: *mut T,
        shape: &[usize],
        strides: &[isize],
    ) -> Result<TensorViewMut<'a, T>> {
        if shape.contains(&0) {
            return TensorViewMut::with_strides(&mut [], 0, shape, strides);
        }
        let (lo, hi) = span(shape, strides)?;
        // SAFETY: as in `TensorView::from_raw_parts`, with the elements the caller's alone for
        // 'a; a broadcast dim would make two coordinates one element, which `with_strides`
        // refuses before anything is written.
        let data =
            unsafe { std::slice::from_raw_parts_mut(origin.offset(lo), (hi - lo) as usize + 1) };
        TensorViewMut::with_strides(data, lo.unsigned_abs(), shape, strides)
    }
}

#[cfg(test)]
mod tests {
    use super::gap_free_span;

    #[test]
    fn ranks_past_the_stack_buffer_give_the_same_answers() {
        // Rank 3 (sorted on the stack) and the same layouts padded to rank 10 with
        // length-1 and broadcast dims (sorted in a vector): padding reaches no new position.
        type Case<'a> = (&'a [usize], &'a [isize], Option<(isize, isize)>);
        let cases: [Case<'_>; 4] = [
            (&[2, 3, 4], &[12, 4, 1], Some((0, 23))),
            (&[2, 3, 4], &[-1, 8, 2], Some((-1, 22))),
            (&[2, 3, 4], &[12, 4, 2], None), // every other element
            (&[2, 3, 4], &[1, 1, 1], None),  // overlapping dims step over nothing new
        ];
        for (shape, strides, want) in cases {
            assert_eq!(gap_free_span(shape, strides), want, "{shape:?} {strides:?}");
            let mut s = shape.to_vec();
            let mut t = strides.to_vec();
            for k in 0..7 {
                s.push(if k % 2 == 0 { 1 } else { 5 });
                t.push(if k % 2 == 0 { 99 } else { 0 });
            }
            assert_eq!(s.len(), 10);
            assert_eq!(gap_free_span(&s, &t), want, "{s:?} {t:?}");
        }
    }
}
