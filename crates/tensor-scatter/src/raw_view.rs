//! Views over memory that another owner describes by a pointer, a shape and strides (NumPy,
//! DLPack, `ndarray`): [`TensorView::from_raw_parts`] and [`TensorViewMut::from_raw_parts`].
//!
//! Any layout is accepted, gaps between the elements included (a stepped slice such as
//! NumPy's `a[:, ::2]`, a block such as `a[:, 1:3]`): no copy is made. The positions between
//! the elements belong to their owner, who may lend them to someone else, so the view never
//! reads, writes or borrows them.

use crate::error::{Error, ErrorKind, Result};
use crate::view::elems::{Elems, ElemsMut};
use crate::view::{Layout, TensorView, TensorViewMut};

/// The element positions `[lo, hi]` a non-empty layout reaches relative to its origin, when
/// each of them is one of the layout's elements; `None` when the layout leaves gaps (or the
/// ranks differ, or a position overflows). Such a layout's bytes are exactly its elements'
/// (a binding may read them as one slice); [`element_span`] gives the span of any layout.
///
/// ```
/// // A reversed, transposed [3, 2] block: positions -5..=0 of its origin, no gaps.
/// assert_eq!(tensor_scatter::gap_free_span(&[2, 3], &[-1, -2]), Some((-5, 0)));
/// assert_eq!(tensor_scatter::gap_free_span(&[3], &[2]), None); // every other element
/// ```
pub fn gap_free_span(shape: &[usize], strides: &[isize]) -> Option<(isize, isize)> {
    if shape.len() != strides.len() || !gap_free(shape, strides) {
        return None;
    }
    element_span(shape, strides)
}

/// Whether every position between a layout's lowest and highest element is one of its
/// elements (the ranks are equal).
fn gap_free(shape: &[usize], strides: &[isize]) -> bool {
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
            return false;
        }
        match covered.checked_mul(n) {
            Some(c) => covered = c,
            None => return false,
        }
    }
    true
}

/// The element positions `[lo, hi]` a non-empty layout reaches relative to its origin, gaps
/// between its elements included; `None` when the ranks differ or a position (or the span's
/// length) overflows `isize`. What a binding needs to tell whether two arrays may overlap.
///
/// ```
/// // Every other element of 4, backwards from the origin.
/// assert_eq!(tensor_scatter::element_span(&[4], &[-2]), Some((-6, 0)));
/// ```
pub fn element_span(shape: &[usize], strides: &[isize]) -> Option<(isize, isize)> {
    if shape.len() != strides.len() {
        return None;
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
    hi.checked_sub(lo)?.checked_add(1)?;
    Some((lo, hi))
}

/// The positions `[lo, hi]` a non-empty layout reaches relative to its origin, or the error
/// for a rank mismatch or a position past the address space.
fn reach(shape: &[usize], strides: &[isize]) -> Result<(isize, isize)> {
    if shape.len() != strides.len() {
        return Err(invalid(format!(
            "{} strides for a shape of rank {}",
            strides.len(),
            shape.len()
        )));
    }
    element_span(shape, strides).ok_or_else(|| Error::overflow("view", "strides"))
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
    /// Gaps between the elements are allowed; they are never read (see the module docs).
    ///
    /// # Errors
    /// [`InvalidView`](ErrorKind::InvalidView) when the ranks differ; `SizeOverflow` for a
    /// shape or a span past the address space.
    ///
    /// # Safety
    /// When the shape has elements: `origin` is aligned for `T`, every element the layout
    /// addresses is a valid, initialised `T` that nobody writes for `'a`, and they all lie in
    /// one allocation.
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
        let (lo, hi) = reach(shape, strides)?;
        let len = (hi - lo) as usize + 1;
        if gap_free(shape, strides) {
            // SAFETY: the caller vouches for every element the layout addresses, shared for
            // 'a; with no gaps they are exactly the positions `lo..=hi` from `origin`, so the
            // slice covers only them (and its length, at most the number of distinct
            // elements, fits in isize since they all lie in one allocation).
            let data = unsafe { std::slice::from_raw_parts(origin.offset(lo), len) };
            return TensorView::with_strides(data, lo.unsigned_abs(), shape, strides);
        }
        let layout = Layout::new(len, lo.unsigned_abs(), shape, strides)?;
        // SAFETY: the caller vouches for every element the layout addresses, shared for 'a,
        // and they lie in one allocation between `origin + lo` and `origin + hi`; the view
        // reads only them.
        let data = unsafe { Elems::gapped(origin.offset(lo), len) };
        Ok(TensorView { data, layout })
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
    /// When the shape has elements: `origin` is aligned for `T`, every element the layout
    /// addresses is a valid, initialised `T` that nobody else reads or writes for `'a`, and
    /// they all lie in one allocation. The positions between them may be anyone's.
    ///
    /// ```
    /// use tensor_scatter::{Reduction, ScatterOptions, TensorView, TensorViewMut};
    /// let mut buf = [0.0f32; 8];
    /// // Columns 1 and 2 of the [2, 4] buffer: a block with gaps, written in place.
    /// // SAFETY: every element reached lies in `buf`, borrowed exclusively for the view's life.
    /// let mut dest = unsafe {
    ///     TensorViewMut::from_raw_parts(buf.as_mut_ptr().add(1), &[2, 2], &[4, 1])
    /// }
    /// .unwrap();
    /// let idx = TensorView::new(&[1i64, 0], &[1, 2]).unwrap();
    /// let upd = TensorView::new(&[5.0f32, 7.0], &[1, 2]).unwrap();
    /// let opts = ScatterOptions::new().axis(0).reduction(Reduction::Add);
    /// tensor_scatter::scatter_elements_into(&mut dest, &idx, &upd, &opts).unwrap();
    /// assert_eq!(buf, [0.0, 0.0, 7.0, 0.0, 0.0, 5.0, 0.0, 0.0]);
    /// ```
    pub unsafe fn from_raw_parts(
        origin: *mut T,
        shape: &[usize],
        strides: &[isize],
    ) -> Result<TensorViewMut<'a, T>> {
        if shape.contains(&0) {
            return TensorViewMut::with_strides(&mut [], 0, shape, strides);
        }
        let (lo, hi) = reach(shape, strides)?;
        let len = (hi - lo) as usize + 1;
        if gap_free(shape, strides) {
            // SAFETY: as in `TensorView::from_raw_parts`, with the elements the caller's alone
            // for 'a; a broadcast dim would make two coordinates one element, which
            // `with_strides` refuses before anything is written.
            let data = unsafe { std::slice::from_raw_parts_mut(origin.offset(lo), len) };
            return TensorViewMut::with_strides(data, lo.unsigned_abs(), shape, strides);
        }
        let layout = Layout::new(len, lo.unsigned_abs(), shape, strides)?;
        layout.check_no_overlap()?;
        // SAFETY: as in `TensorView::from_raw_parts`, with the elements the caller's alone for
        // 'a; the view reads and writes only them, each through one coordinate (no overlap,
        // checked above).
        let data = unsafe { ElemsMut::gapped(origin.offset(lo), len) };
        Ok(TensorViewMut { data, layout })
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
