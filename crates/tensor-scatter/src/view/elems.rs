//! The memory behind a view: a pointer to buffer position 0 and the number of positions up to
//! the last one the view reaches ([`Elems`], [`ElemsMut`]).
//!
//! A view made from a slice may read any position of it. A view made from another owner's
//! pointer and strides ([`TensorView::from_raw_parts`](crate::TensorView::from_raw_parts))
//! may have gaps between its elements (NumPy's `a[:, ::2]`, ndarray's `a.slice(s![.., 1..3])`):
//! those positions belong to someone else, who may be writing them from another thread, so
//! they are never read, written, or covered by a reference. Reads therefore name positions
//! the view's layout reaches ([`Elems::get`], [`Elems::run`]), and a slice of the whole
//! buffer exists only when every position may be borrowed ([`Elems::whole`]).

use std::marker::PhantomData;

use crate::view::{TensorView, TensorViewMut};

/// The buffer of a read-only view (see the module docs).
pub(crate) struct Elems<'a, T> {
    ptr: *const T,
    len: usize,
    /// Whether every position in `0..len` may be borrowed, gaps included.
    whole: bool,
    _borrow: PhantomData<&'a [T]>,
}

impl<T> Clone for Elems<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Elems<'_, T> {}

impl<T> std::fmt::Debug for Elems<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elems")
            .field("len", &self.len)
            .field("whole", &self.whole)
            .finish()
    }
}

// SAFETY: an `Elems` is a shared borrow of `T`s for 'a, as `&'a [T]` is: sending or sharing
// it across threads is sound when `&T` may be (`T: Sync`).
unsafe impl<T: Sync> Send for Elems<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Elems<'_, T> {}

impl<'a, T> Elems<'a, T> {
    /// Every position of `s`.
    pub(crate) fn new(s: &'a [T]) -> Self {
        Elems {
            ptr: s.as_ptr(),
            len: s.len(),
            whole: true,
            _borrow: PhantomData,
        }
    }

    /// `len` positions from `ptr`, of which only the elements of the view this becomes part
    /// of may be read.
    ///
    /// # Safety
    /// Every position that view's layout reaches is a valid, initialised, aligned `T` that
    /// nobody writes for 'a; the positions lie in one allocation.
    pub(crate) unsafe fn gapped(ptr: *const T, len: usize) -> Self {
        Elems {
            ptr,
            len,
            whole: false,
            _borrow: PhantomData,
        }
    }

    /// The number of positions, gaps included.
    pub(crate) fn len(self) -> usize {
        self.len
    }

    /// The whole buffer as a slice, when it may be borrowed whole (no gaps).
    pub(crate) fn whole(self) -> Option<&'a [T]> {
        // SAFETY: `whole` is set only by `new`, from a slice borrowed for 'a.
        self.whole
            .then(|| unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }

    /// The address of position `i` (wrapping arithmetic: reading through it is the caller's
    /// own contract).
    #[cfg(feature = "ndarray")]
    pub(crate) fn ptr_at(self, i: usize) -> *const T {
        self.ptr.wrapping_add(i)
    }

    /// Reads position `i`; bounds-checked with the `checked-kernels` feature.
    ///
    /// # Safety
    /// `i` is a position the view's layout reaches (one of its elements), which implies
    /// `i < len`.
    #[inline(always)]
    pub(crate) unsafe fn get(self, i: usize) -> T
    where
        T: Copy,
    {
        if cfg!(feature = "checked-kernels") {
            if i >= self.len {
                outside(i, 1, self.len);
            }
        } else {
            debug_assert!(i < self.len);
        }
        // SAFETY: an element of the view (contract), valid and unwritten for 'a.
        unsafe { self.ptr.add(i).read() }
    }

    /// Positions `[i, i + n)` as a slice; bounds-checked always (it replaces slice indexing,
    /// once per run).
    ///
    /// # Safety
    /// Every position in the range is one of the view's elements.
    #[inline(always)]
    pub(crate) unsafe fn run(self, i: usize, n: usize) -> &'a [T] {
        if !(i <= self.len && n <= self.len - i) {
            outside(i, n, self.len);
        }
        // SAFETY: in bounds (checked), and every position is an element of the view, valid
        // and unwritten for 'a (contract).
        unsafe { std::slice::from_raw_parts(self.ptr.add(i), n) }
    }

    /// The same positions read as `U` (the byte-width kernels move every dtype as the unsigned
    /// integer of its size).
    ///
    /// # Safety
    /// `U` has `T`'s size and alignment, and every bit pattern of a `T` is a valid `U`.
    pub(crate) unsafe fn cast<U>(self) -> Elems<'a, U> {
        assert!(std::mem::size_of::<U>() == std::mem::size_of::<T>());
        assert!(std::mem::align_of::<U>() == std::mem::align_of::<T>());
        Elems {
            ptr: self.ptr.cast(),
            len: self.len,
            whole: self.whole,
            _borrow: PhantomData,
        }
    }
}

/// The panic of an access outside the buffer (a kernel bug), out of the hot loops' way.
#[cold]
#[inline(never)]
fn outside(i: usize, n: usize, len: usize) -> ! {
    panic!("access [{i}, {i}+{n}) outside {len} positions")
}

/// The buffer of a writable view (see the module docs): an [`Elems`] whose positions this
/// borrow holds exclusively (its pointer came from a `*mut`, so writing through it is sound).
pub(crate) struct ElemsMut<'a, T> {
    elems: Elems<'a, T>,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> std::fmt::Debug for ElemsMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.elems.fmt(f)
    }
}

// SAFETY: an `ElemsMut` is an exclusive borrow of `T`s for 'a, as `&'a mut [T]` is.
unsafe impl<T: Send> Send for ElemsMut<'_, T> {}
// SAFETY: as above (`&ElemsMut` gives only shared reads).
unsafe impl<T: Sync> Sync for ElemsMut<'_, T> {}

impl<'a, T> ElemsMut<'a, T> {
    fn with(ptr: *mut T, len: usize, whole: bool) -> Self {
        ElemsMut {
            elems: Elems {
                ptr,
                len,
                whole,
                _borrow: PhantomData,
            },
            _borrow: PhantomData,
        }
    }

    /// Every position of `s`.
    pub(crate) fn new(s: &'a mut [T]) -> Self {
        Self::with(s.as_mut_ptr(), s.len(), true)
    }

    /// `len` positions from `ptr`, of which only the elements of the view this becomes part
    /// of may be read or written.
    ///
    /// # Safety
    /// Every position that view's layout reaches is a valid, initialised, aligned `T` that
    /// nobody else reads or writes for 'a; the positions lie in one allocation.
    pub(crate) unsafe fn gapped(ptr: *mut T, len: usize) -> Self {
        Self::with(ptr, len, false)
    }

    /// The address of position 0.
    pub(crate) fn ptr(&self) -> *mut T {
        self.elems.ptr.cast_mut()
    }

    /// The address of position `i` (wrapping arithmetic: writing through it is the caller's
    /// own contract).
    #[cfg(feature = "ndarray")]
    pub(crate) fn ptr_at_mut(&mut self, i: usize) -> *mut T {
        self.ptr().wrapping_add(i)
    }

    /// Positions `[i, i + n)` as a writable slice; bounds-checked always.
    ///
    /// # Safety
    /// Every position in the range is one of the view's elements.
    pub(crate) unsafe fn run_mut(&mut self, i: usize, n: usize) -> &mut [T] {
        let len = self.elems.len;
        if !(i <= len && n <= len - i) {
            outside(i, n, len);
        }
        // SAFETY: in bounds (checked); every position is an element of the view, which this
        // borrow holds exclusively (its pointer came from a `*mut`), for as long as
        // `&mut self` lives.
        unsafe { std::slice::from_raw_parts_mut(self.ptr().add(i), n) }
    }

    /// The same buffer, borrowed for a shorter time.
    pub(crate) fn reborrow(&mut self) -> ElemsMut<'_, T> {
        Self::with(self.ptr(), self.elems.len, self.elems.whole)
    }

    /// A read-only borrow of the same buffer.
    pub(crate) fn shared(&self) -> Elems<'_, T> {
        self.elems
    }

    /// Whether the whole buffer may be borrowed ([`whole_mut`](Self::whole_mut)).
    pub(crate) fn is_whole(&self) -> bool {
        self.elems.whole
    }

    /// The whole buffer as a slice, when it may be borrowed whole (no gaps).
    pub(crate) fn whole_mut(&mut self) -> Option<&mut [T]> {
        let (ptr, len) = (self.ptr(), self.elems.len);
        // SAFETY: `whole` is set only by `new`, from a slice borrowed exclusively for 'a;
        // `&mut self` keeps it exclusive while the result lives.
        self.elems
            .whole
            .then(|| unsafe { std::slice::from_raw_parts_mut(ptr, len) })
    }

    /// The number of buffer positions, up to the last one the view reaches.
    pub(crate) fn len(&self) -> usize {
        self.elems.len
    }

    /// The same positions written as `U`.
    ///
    /// # Safety
    /// As [`Elems::cast`], and what is written through the result is the bits of a `T`.
    pub(crate) unsafe fn cast<U>(&mut self) -> ElemsMut<'_, U> {
        ElemsMut {
            // SAFETY: the caller's contract, as `Elems::cast`'s.
            elems: unsafe { self.elems.cast() },
            _borrow: PhantomData,
        }
    }
}

/// Row-major walks over a view's own layout: every position they reach is one of its
/// elements, so these are safe however the view was made.
impl<'a, T: Copy> TensorView<'a, T> {
    /// The element at `coord`, or `None` outside the shape.
    pub(crate) fn at(&self, coord: &[usize]) -> Option<T> {
        let shape = &self.layout.shape;
        let inside = coord.len() == shape.len() && coord.iter().zip(shape).all(|(c, d)| c < d);
        // SAFETY: an in-shape coordinate's position is one of the view's elements.
        inside.then(|| unsafe { self.data.get(self.layout.position(coord)) })
    }

    /// Calls `f` with each element in row-major order.
    pub(crate) fn for_each(&self, mut f: impl FnMut(T)) {
        let l = &self.layout;
        if let Some(s) = self.contiguous() {
            s.iter().for_each(|&v| f(v));
            return;
        }
        let mut odo =
            crate::shape::Odometer::new(&l.shape, [&l.strides], [l.offset as isize], l.numel);
        while let Some([p]) = odo.next_offsets() {
            // SAFETY: the odometer walks the view's own shape and strides from its origin.
            f(unsafe { self.data.get(p as usize) });
        }
    }

    /// Whether a walk from the view's origin over `dims` (extent, stride) reaches only the
    /// view's elements: each dim that moves is one of the view's own (same stride, no longer
    /// extent), each used once (a broadcast, a window, dims dropped or reordered). A walk with
    /// an empty dim reaches nothing. Ranks up to 64 (every view in practice) allocate nothing.
    pub(crate) fn walks_within(&self, dims: impl IntoIterator<Item = (usize, isize)>) -> bool {
        let l = &self.layout;
        let (mut used, mut inside, mut empty) = (0u64, l.shape.len() <= 64, false);
        for (n, s) in dims {
            empty |= n == 0;
            if n <= 1 || s == 0 || !inside {
                continue;
            }
            let free = (0..l.shape.len())
                .find(|&e| used & (1 << e) == 0 && l.strides[e] == s && l.shape[e] >= n);
            match free {
                Some(e) => used |= 1 << e,
                None => inside = false,
            }
        }
        empty || inside
    }

    /// The view read through `shape` and `strides` from the same origin, when that walk
    /// reaches only its elements ([`walks_within`](Self::walks_within)); `None` otherwise.
    pub(crate) fn rewalk(&self, shape: &[usize], strides: &[isize]) -> Option<TensorView<'a, T>> {
        if shape.len() != strides.len()
            || !self.walks_within(shape.iter().copied().zip(strides.iter().copied()))
        {
            return None;
        }
        let numel = shape.iter().product::<usize>();
        Some(TensorView {
            data: self.data,
            layout: crate::view::Layout {
                shape: shape.to_vec(),
                strides: strides.to_vec(),
                offset: if numel == 0 { 0 } else { self.layout.offset },
                numel,
            },
        })
    }

    /// The elements as one slice in row-major order, when the view is contiguous.
    pub(crate) fn contiguous(&self) -> Option<&'a [T]> {
        let l = &self.layout;
        if !crate::view::is_contiguous(l) {
            return None;
        }
        // SAFETY: a contiguous layout's elements are exactly positions
        // `[offset, offset + numel)`.
        Some(unsafe { self.data.run(l.offset, l.numel) })
    }
}

impl<T: Copy> TensorViewMut<'_, T> {
    /// The elements as one writable slice in row-major order, when the view is contiguous.
    pub(crate) fn contiguous_mut(&mut self) -> Option<&mut [T]> {
        let l = &self.layout;
        if !crate::view::is_contiguous(l) {
            return None;
        }
        let (offset, numel) = (l.offset, l.numel);
        // SAFETY: a contiguous layout's elements are exactly positions
        // `[offset, offset + numel)`, which this view holds exclusively.
        Some(unsafe { self.data.run_mut(offset, numel) })
    }

    /// Writes row-major `values` into the view's elements (as many as both have).
    pub(crate) fn write_row_major(&mut self, values: &[T]) {
        let l = &self.layout;
        let dest = self.data.dest();
        let mut odo =
            crate::shape::Odometer::new(&l.shape, [&l.strides], [l.offset as isize], l.numel);
        let mut it = values.iter();
        while let (Some([p]), Some(&v)) = (odo.next_offsets(), it.next()) {
            // SAFETY: the odometer walks the view's own shape and strides, which reach only
            // its elements, each once (a writable view does not overlap itself); this call
            // holds the view exclusively.
            unsafe { dest.set(p as usize, v) };
        }
    }

    /// `self = src`, element by element (the shapes are equal).
    pub(crate) fn copy_from(&mut self, src: &TensorView<'_, T>) {
        let l = &self.layout;
        assert_eq!(l.shape, src.layout.shape);
        let dest = self.data.dest();
        let mut odo = crate::shape::Odometer::new(
            &l.shape,
            [&src.layout.strides, &l.strides],
            [src.layout.offset as isize, l.offset as isize],
            l.numel,
        );
        while let Some([s, d]) = odo.next_offsets() {
            // SAFETY: both positions come from walking each view's own layout over one shape:
            // elements of each; `self` is held exclusively, and `src` is a shared borrow, so
            // the two do not overlap.
            unsafe { dest.set(d as usize, src.data.get(s as usize)) };
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::TensorView;

    #[test]
    fn walks_within_accepts_broadcasts_windows_and_reorders_only() {
        let buf = [0u8; 12];
        let v = TensorView::new(&buf, &[3, 4]).unwrap();
        let yes: [&[(usize, isize)]; 5] = [
            &[(3, 4), (4, 1)],         // itself
            &[(4, 1), (3, 4)],         // dims reordered
            &[(2, 4), (7, 0), (3, 1)], // a window, broadcast along a new dim
            &[(4, 1)],                 // a dim dropped
            &[(5, 4), (0, 99)],        // reaches nothing
        ];
        for w in yes {
            assert!(v.walks_within(w.iter().copied()), "{w:?}");
        }
        let no: [&[(usize, isize)]; 4] = [
            &[(4, 4)],         // longer than the dim with that stride
            &[(4, 1), (2, 1)], // one dim used twice
            &[(3, 2)],         // a stride of its own
            &[(3, -4)],        // backwards
        ];
        for w in no {
            assert!(!v.walks_within(w.iter().copied()), "{w:?}");
        }
        assert!(v.rewalk(&[4, 3], &[1, 4]).is_some());
        assert!(v.rewalk(&[4], &[2]).is_none());
    }
}
