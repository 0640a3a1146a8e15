//! Tensor views over caller memory (any rank, element strides, zero-size dims) and the owned
//! contiguous [`Tensor`] the out-of-place operators return.

use crate::error::{Error, ErrorKind, Result};
pub(crate) mod elems;

use crate::shape::{contiguous_strides, numel};
use elems::{Elems, ElemsMut};

/// The validated geometry of a view: where its elements lie in the buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) shape: Vec<usize>,
    pub(crate) strides: Vec<isize>,
    /// Buffer position of coordinate `[0, ..., 0]`.
    pub(crate) offset: usize,
    pub(crate) numel: usize,
}

/// Row-major contiguity (dims of extent 1 may have any stride).
pub(crate) fn is_contiguous(l: &Layout) -> bool {
    let mut expect = 1isize;
    for (&n, &s) in l.shape.iter().zip(&l.strides).rev() {
        if n != 1 && s != expect {
            return false;
        }
        expect = expect.wrapping_mul(n as isize);
    }
    true
}

impl Layout {
    /// Checks that every element of `shape`/`strides` at `offset` lies inside `len` elements.
    pub(crate) fn new(
        len: usize,
        offset: usize,
        shape: &[usize],
        strides: &[isize],
    ) -> Result<Layout> {
        let bad = |reason: String| {
            Error::new(ErrorKind::InvalidView {
                op: "view",
                arg: "strides",
                reason,
            })
        };
        if shape.len() != strides.len() {
            return Err(bad(format!(
                "{} strides for a shape of rank {}",
                strides.len(),
                shape.len()
            )));
        }
        let n = numel("view", "shape", shape)?;
        if n > isize::MAX as usize {
            return Err(Error::overflow("view", "shape"));
        }
        if n > 0 {
            // Lowest and highest reachable buffer positions, in i128 (no overflow possible).
            let (mut lo, mut hi) = (offset as i128, offset as i128);
            for (&d, &s) in shape.iter().zip(strides) {
                let span = (d as i128 - 1) * s as i128;
                if span < 0 { lo += span } else { hi += span }
            }
            if lo < 0 || hi >= len as i128 {
                return Err(bad(format!(
                    "shape {shape:?} with strides {strides:?} at offset {offset} reaches positions [{lo}, {hi}] outside a buffer of {len} elements"
                )));
            }
        }
        Ok(Layout {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            // An empty view addresses no element, so any offset is as good as 0 (which keeps
            // every slice taken from it in bounds).
            offset: if n == 0 { 0 } else { offset },
            numel: n,
        })
    }

    /// The contiguous layout of an already validated shape holding `numel` elements.
    pub(crate) fn contiguous_unchecked(shape: &[usize], numel: usize) -> Layout {
        Layout {
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
            offset: 0,
            numel,
        }
    }

    fn contiguous(len: usize, shape: &[usize]) -> Result<Layout> {
        let n = numel("view", "shape", shape)?;
        if n != len {
            return Err(Error::new(ErrorKind::InvalidView {
                op: "view",
                arg: "shape",
                reason: format!("shape {shape:?} holds {n} elements but the buffer has {len}"),
            }));
        }
        if n > isize::MAX as usize {
            return Err(Error::overflow("view", "shape"));
        }
        Ok(Layout {
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
            offset: 0,
            numel: n,
        })
    }

    /// Rejects layouts in which two coordinates share one buffer position: sorted by stride
    /// magnitude, each stride must step over everything the smaller ones reach.
    pub(crate) fn check_no_overlap(&self) -> Result<()> {
        if self.numel <= 1 {
            return Ok(());
        }
        let mut dims: Vec<(usize, usize)> = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(d, _)| **d > 1)
            .map(|(&d, &s)| (s.unsigned_abs(), d))
            .collect();
        dims.sort_unstable();
        let mut reach = 0usize; // highest relative position reachable by the dims so far
        for (s, d) in dims {
            if s <= reach || s == 0 {
                return Err(Error::new(ErrorKind::InvalidView {
                    op: "view",
                    arg: "strides",
                    reason: format!(
                        "a writable view must not overlap itself, but shape {:?} with strides {:?} maps several coordinates to one element",
                        self.shape, self.strides
                    ),
                }));
            }
            reach += s * (d - 1); // bounded by the buffer length, checked in `new`
        }
        Ok(())
    }

    /// Buffer position of a coordinate (caller guarantees it is in the shape).
    pub(crate) fn position(&self, coord: &[usize]) -> usize {
        let rel: isize = coord
            .iter()
            .zip(&self.strides)
            .map(|(&c, &s)| c as isize * s)
            .sum();
        (self.offset as isize + rel) as usize
    }

    /// Lowest and highest buffer positions reached (`None` for an empty view).
    pub(crate) fn span(&self) -> Option<(usize, usize)> {
        if self.numel == 0 {
            return None;
        }
        let (mut lo, mut hi) = (self.offset as isize, self.offset as isize);
        for (&d, &s) in self.shape.iter().zip(&self.strides) {
            let span = (d as isize - 1) * s;
            if span < 0 { lo += span } else { hi += span }
        }
        Some((lo as usize, hi as usize))
    }
}

/// A read-only view of a tensor: a buffer, a shape, element strides and an offset.
///
/// # Examples
///
/// ```
/// use tensor_scatter::TensorView;
/// let buf = [0, 1, 2, 3, 4, 5];
/// let v = TensorView::new(&buf, &[2, 3]).unwrap();
/// assert_eq!(v.get(&[1, 2]), Some(5));
/// // The transpose, as a strided view of the same buffer.
/// let t = TensorView::with_strides(&buf, 0, &[3, 2], &[1, 3]).unwrap();
/// assert_eq!(t.to_vec(), vec![0, 3, 1, 4, 2, 5]);
/// ```
#[derive(Clone, Debug)]
pub struct TensorView<'a, T> {
    pub(crate) data: Elems<'a, T>,
    pub(crate) layout: Layout,
}

impl<'a, T: Copy> TensorView<'a, T> {
    /// A contiguous row-major view of `data` with `shape`.
    ///
    /// # Errors
    /// [`InvalidView`](ErrorKind::InvalidView) when `data.len()` differs from the element count,
    /// [`SizeOverflow`](ErrorKind::SizeOverflow) when the count overflows.
    pub fn new(data: &'a [T], shape: &[usize]) -> Result<Self> {
        Ok(TensorView {
            data: Elems::new(data),
            layout: Layout::contiguous(data.len(), shape)?,
        })
    }

    /// A strided view: element `c` lives at `data[offset + Σ c[d]·strides[d]]`. Strides may be
    /// zero (broadcast) or negative.
    ///
    /// # Errors
    /// [`InvalidView`](ErrorKind::InvalidView) when some element lies outside `data` or the
    /// ranks of `shape` and `strides` differ.
    pub fn with_strides(
        data: &'a [T],
        offset: usize,
        shape: &[usize],
        strides: &[isize],
    ) -> Result<Self> {
        Ok(TensorView {
            data: Elems::new(data),
            layout: Layout::new(data.len(), offset, shape, strides)?,
        })
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    /// The element strides.
    pub fn strides(&self) -> &[isize] {
        &self.layout.strides
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.layout.numel
    }

    /// True when the view has no element.
    pub fn is_empty(&self) -> bool {
        self.layout.numel == 0
    }

    /// The element at `coord`, or `None` outside the shape.
    pub fn get(&self, coord: &[usize]) -> Option<T> {
        self.at(coord)
    }

    /// The elements in row-major order.
    pub fn to_vec(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.layout.numel);
        self.for_each(|v| out.push(v));
        out
    }

    /// A contiguous copy.
    pub fn to_tensor(&self) -> Tensor<T> {
        Tensor {
            data: self.to_vec(),
            shape: self.layout.shape.clone(),
        }
    }

    /// A contiguous view of `data` as `shape`, which the caller knows holds exactly
    /// `data.len()` elements (a [`DynTensor`](crate::DynTensor)'s invariant).
    pub(crate) fn contiguous_unchecked(data: &'a [T], shape: &[usize]) -> TensorView<'a, T> {
        TensorView {
            layout: Layout::contiguous_unchecked(shape, data.len()),
            data: Elems::new(data),
        }
    }

    /// The window of `shape` at this view's origin (same strides), when `shape` has the
    /// view's rank and fits inside it on every dim.
    pub(crate) fn window(&self, shape: &[usize]) -> Option<TensorView<'a, T>> {
        let l = &self.layout;
        let fits = shape.len() == l.shape.len() && shape.iter().zip(&l.shape).all(|(s, d)| s <= d);
        fits.then(|| {
            let n = shape.iter().product();
            TensorView {
                data: self.data,
                layout: Layout {
                    shape: shape.to_vec(),
                    strides: l.strides.clone(),
                    offset: if n == 0 { 0 } else { l.offset },
                    numel: n,
                },
            }
        })
    }

    /// The view of the dims `dims` (increasing) alone, every other dim at coordinate 0: a view
    /// of some of this view's elements (`None` when it has none).
    pub(crate) fn select_dims(&self, dims: &[usize]) -> Option<TensorView<'a, T>> {
        let l = &self.layout;
        if l.numel == 0 || dims.iter().any(|&d| d >= l.shape.len()) {
            return None;
        }
        let shape: Vec<usize> = dims.iter().map(|&d| l.shape[d]).collect();
        Some(TensorView {
            data: self.data,
            layout: Layout {
                numel: shape.iter().product(),
                shape,
                strides: dims.iter().map(|&d| l.strides[d]).collect(),
                offset: l.offset,
            },
        })
    }

    /// [`to_vec`](Self::to_vec), or [`OutOfMemory`](ErrorKind::OutOfMemory) naming `op` and
    /// `arg` when the copy cannot be allocated (a broadcast view can be far larger than its
    /// buffer).
    pub(crate) fn try_to_vec(&self, op: &'static str, arg: &'static str) -> Result<Vec<T>> {
        let n = self.layout.numel;
        let mut out = Vec::new();
        out.try_reserve_exact(n).map_err(|_| {
            Error::out_of_memory(op, arg, n.saturating_mul(std::mem::size_of::<T>()))
        })?;
        self.for_each(|v| out.push(v));
        Ok(out)
    }
}

/// A writable view of a tensor; unlike [`TensorView`] it must not overlap itself.
///
/// ```
/// use tensor_scatter::TensorViewMut;
/// let mut buf = [0u8; 6];
/// assert!(TensorViewMut::with_strides(&mut buf, 0, &[2, 3], &[0, 1]).is_err()); // broadcast
/// let v = TensorViewMut::with_strides(&mut buf, 1, &[2], &[3]).unwrap();
/// assert_eq!(v.shape(), &[2]);
/// ```
#[derive(Debug)]
pub struct TensorViewMut<'a, T> {
    pub(crate) data: ElemsMut<'a, T>,
    pub(crate) layout: Layout,
}

impl<'a, T: Copy> TensorViewMut<'a, T> {
    /// A contiguous row-major writable view.
    ///
    /// # Errors
    /// As [`TensorView::new`].
    pub fn new(data: &'a mut [T], shape: &[usize]) -> Result<Self> {
        let layout = Layout::contiguous(data.len(), shape)?;
        Ok(TensorViewMut {
            data: ElemsMut::new(data),
            layout,
        })
    }

    /// A contiguous writable view of `data` as `shape`, which the caller knows holds exactly
    /// `data.len()` elements.
    pub(crate) fn contiguous_unchecked(data: &'a mut [T], shape: &[usize]) -> TensorViewMut<'a, T> {
        TensorViewMut {
            layout: Layout::contiguous_unchecked(shape, data.len()),
            data: ElemsMut::new(data),
        }
    }

    /// The same view, borrowed for a shorter time (to pass it to an operation and keep it).
    pub fn reborrow(&mut self) -> TensorViewMut<'_, T> {
        TensorViewMut {
            data: self.data.reborrow(),
            layout: self.layout.clone(),
        }
    }

    /// A strided writable view.
    ///
    /// # Errors
    /// As [`TensorView::with_strides`], plus [`InvalidView`](ErrorKind::InvalidView) when two
    /// coordinates share one element (a zero stride on a dimension longer than 1, say).
    pub fn with_strides(
        data: &'a mut [T],
        offset: usize,
        shape: &[usize],
        strides: &[isize],
    ) -> Result<Self> {
        let layout = Layout::new(data.len(), offset, shape, strides)?;
        layout.check_no_overlap()?;
        Ok(TensorViewMut {
            data: ElemsMut::new(data),
            layout,
        })
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    /// The elements in row-major order.
    pub fn to_vec(&self) -> Vec<T> {
        self.as_view().to_vec()
    }

    /// A read-only view of the same elements.
    pub fn as_view(&self) -> TensorView<'_, T> {
        TensorView {
            data: self.data.shared(),
            layout: self.layout.clone(),
        }
    }
}

/// An owned, contiguous, row-major tensor.
///
/// ```
/// use tensor_scatter::Tensor;
/// let t = Tensor::from_vec(vec![1, 2, 3, 4], &[2, 2]).unwrap();
/// assert_eq!(t.view().get(&[1, 0]), Some(3));
/// assert_eq!(t.into_vec(), vec![1, 2, 3, 4]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor<T> {
    pub(crate) data: Vec<T>,
    pub(crate) shape: Vec<usize>,
}

impl<T: Copy> Tensor<T> {
    /// Wraps `data` as a tensor of `shape`.
    ///
    /// # Errors
    /// [`InvalidView`](ErrorKind::InvalidView) when the length differs from the element count.
    pub fn from_vec(data: Vec<T>, shape: &[usize]) -> Result<Self> {
        Layout::contiguous(data.len(), shape)?;
        Ok(Tensor {
            data,
            shape: shape.to_vec(),
        })
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements in row-major order.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The elements in row-major order, writable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The element buffer.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// A view of the whole tensor.
    pub fn view(&self) -> TensorView<'_, T> {
        TensorView {
            data: Elems::new(&self.data),
            layout: Layout {
                shape: self.shape.clone(),
                strides: contiguous_strides(&self.shape),
                offset: 0,
                numel: self.data.len(),
            },
        }
    }

    /// A writable view of the whole tensor.
    pub fn view_mut(&mut self) -> TensorViewMut<'_, T> {
        let layout = Layout {
            shape: self.shape.clone(),
            strides: contiguous_strides(&self.shape),
            offset: 0,
            numel: self.data.len(),
        };
        TensorViewMut {
            data: ElemsMut::new(&mut self.data),
            layout,
        }
    }
}

impl<T: crate::Element> Tensor<T> {
    /// A tensor of `shape` filled with zeros (`false` for bool).
    ///
    /// # Errors
    /// [`SizeOverflow`](ErrorKind::SizeOverflow) for a shape past the address space,
    /// [`OutOfMemory`](ErrorKind::OutOfMemory) when the memory cannot be allocated.
    ///
    /// ```
    /// let t = tensor_scatter::Tensor::<f32>::zeros(&[2, 3]).unwrap();
    /// assert_eq!(t.as_slice(), &[0.0; 6]);
    /// ```
    pub fn zeros(shape: &[usize]) -> Result<Self> {
        let n = numel("tensor", "shape", shape)?;
        let mut data = Vec::new();
        data.try_reserve_exact(n).map_err(|_| {
            Error::out_of_memory(
                "tensor",
                "shape",
                n.saturating_mul(std::mem::size_of::<T>()),
            )
        })?;
        data.resize(n, T::from_bits_u64(0));
        Ok(Tensor {
            data,
            shape: shape.to_vec(),
        })
    }
}

/// A 1-D tensor of the vector's elements.
///
/// ```
/// let t: tensor_scatter::Tensor<i64> = vec![3, 1, 2].into();
/// assert_eq!(t.shape(), &[3]);
/// ```
impl<T> From<Vec<T>> for Tensor<T> {
    fn from(data: Vec<T>) -> Self {
        let shape = vec![data.len()];
        Tensor { data, shape }
    }
}

impl Layout {
    /// The same elements with dims reordered: dim `d` of the result is dim `axes[d]` here.
    fn permuted(&self, axes: &[usize]) -> Result<Layout> {
        let rank = self.shape.len();
        let mut seen = vec![false; rank];
        let valid = axes.len() == rank
            && axes
                .iter()
                .all(|&a| a < rank && !std::mem::replace(&mut seen[a], true));
        if !valid {
            return Err(Error::invalid(
                "view",
                "axes",
                format!("{axes:?} is not a permutation of the {rank} dims"),
            ));
        }
        Ok(Layout {
            shape: axes.iter().map(|&a| self.shape[a]).collect(),
            strides: axes.iter().map(|&a| self.strides[a]).collect(),
            offset: self.offset,
            numel: self.numel,
        })
    }

    /// [`permuted`](Self::permuted) with dims `a` and `b` swapped.
    fn transposed(&self, a: usize, b: usize) -> Result<Layout> {
        let mut axes: Vec<usize> = (0..self.shape.len()).collect();
        if a >= axes.len() || b >= axes.len() {
            return Err(Error::invalid(
                "view",
                "axes",
                format!("dims {a} and {b}: the view has rank {}", axes.len()),
            ));
        }
        axes.swap(a, b);
        self.permuted(&axes)
    }
}

impl<'a, T> TensorView<'a, T> {
    /// The same elements with dims reordered, without a copy: dim `d` of the result is dim
    /// `axes[d]` of this view (NumPy's `transpose(axes)`, PyTorch's `permute`).
    ///
    /// # Errors
    /// [`InvalidArgument`](ErrorKind::InvalidArgument) when `axes` is not a permutation of
    /// the dims.
    ///
    /// ```
    /// use tensor_scatter::TensorView;
    /// let v = TensorView::new(&[1, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    /// let t = v.permute(&[1, 0]).unwrap();
    /// assert_eq!((t.shape(), t.to_vec()), (&[3, 2][..], vec![1, 4, 2, 5, 3, 6]));
    /// ```
    pub fn permute(&self, axes: &[usize]) -> Result<TensorView<'a, T>> {
        Ok(TensorView {
            data: self.data,
            layout: self.layout.permuted(axes)?,
        })
    }

    /// Dims `a` and `b` swapped, without a copy.
    ///
    /// # Errors
    /// [`InvalidArgument`](ErrorKind::InvalidArgument) when a dim is out of range.
    pub fn transpose(&self, a: usize, b: usize) -> Result<TensorView<'a, T>> {
        Ok(TensorView {
            data: self.data,
            layout: self.layout.transposed(a, b)?,
        })
    }
}

impl<'a, T> TensorViewMut<'a, T> {
    /// [`TensorView::permute`] for a writable view (it stays non-overlapping).
    ///
    /// # Errors
    /// As [`TensorView::permute`].
    pub fn permute(self, axes: &[usize]) -> Result<TensorViewMut<'a, T>> {
        let layout = self.layout.permuted(axes)?;
        Ok(TensorViewMut {
            data: self.data,
            layout,
        })
    }

    /// [`TensorView::transpose`] for a writable view.
    ///
    /// # Errors
    /// As [`TensorView::transpose`].
    pub fn transpose(self, a: usize, b: usize) -> Result<TensorViewMut<'a, T>> {
        let layout = self.layout.transposed(a, b)?;
        Ok(TensorViewMut {
            data: self.data,
            layout,
        })
    }
}
