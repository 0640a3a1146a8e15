//! Decoding the fuzz input: a byte reader biased towards the values that break kernels
//! (edges of dims and types), and the buffers and views built from it.

use tensor_scatter::{Element, IndexInt, TensorView, TensorViewMut};

/// Reads the fuzz input; past the end every read is 0.
pub(crate) struct Bytes<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) at: usize,
}

impl Bytes<'_> {
    pub(crate) fn u8(&mut self) -> u8 {
        let v = self.b.get(self.at).copied().unwrap_or(0);
        self.at = self.at.saturating_add(1);
        v
    }
    pub(crate) fn u64(&mut self) -> u64 {
        (0..8).fold(0u64, |acc, i| acc | (u64::from(self.u8()) << (8 * i)))
    }
    pub(crate) fn flag(&mut self, one_in: u8) -> bool {
        self.u8().is_multiple_of(one_in)
    }
    /// A dimension: mostly 0..=6, rarely huge (only valid where another dim is 0).
    pub(crate) fn dim(&mut self) -> usize {
        match self.u8() {
            0..=243 => usize::from(self.u8() % 7),
            244..=247 => 1 << 31,
            248..=251 => 1 << 40,
            252..=253 => usize::MAX,
            _ => 0,
        }
    }
    pub(crate) fn small_dim(&mut self) -> usize {
        usize::from(self.u8() % 5)
    }
    /// Perhaps (1 in 8) breaks a derived shape: one more dim, one fewer, or a first dim
    /// drawn anew.
    pub(crate) fn break_shape(&mut self, s: &mut Vec<usize>) {
        if !self.flag(8) {
            return;
        }
        match self.u8() % 3 {
            0 => s.push(self.small_dim()),
            1 => {
                s.pop();
            }
            _ => {
                if let Some(d) = s.first_mut() {
                    *d = self.dim();
                }
            }
        }
    }
    pub(crate) fn shape(&mut self, rank: usize) -> Vec<usize> {
        (0..rank).map(|_| self.dim()).collect()
    }
    /// An axis or batch_dims: mostly in [-rank-1, rank], rarely an extreme.
    pub(crate) fn signed_attr(&mut self, rank: usize) -> i64 {
        let r = rank as i64;
        match self.u8() {
            0..=239 => i64::from(self.u8()) % (2 * r + 3) - r - 1,
            240..=243 => i64::MIN,
            244..=247 => i64::MAX,
            248..=251 => r,
            _ => -r - 1,
        }
    }
    /// An index value for a dimension of `size`, biased towards the edges.
    pub(crate) fn index(&mut self, size: usize) -> i128 {
        let s = size as i128;
        match self.u8() {
            0..=179 => {
                if s == 0 {
                    0
                } else {
                    i128::from(self.u8()) % (2 * s) - s
                }
            }
            180..=189 => s,
            190..=199 => -s - 1,
            200..=204 => s + 1,
            205..=209 => -1,
            210..=214 => 0,
            215..=219 => 1 << 31,
            220..=224 => 1 << 32,
            225..=229 => i128::from(i64::MIN),
            230..=234 => i128::from(i64::MAX),
            235..=239 => i128::from(u64::MAX),
            240..=244 => -(1 << 31),
            _ => i128::from(self.u64() as i64),
        }
    }
    /// A value's bits: small patterns mostly, then the edges of the type's width.
    pub(crate) fn bits(&mut self, width: usize) -> u64 {
        let top = 1u64 << (8 * width - 1);
        match self.u8() {
            0..=199 => u64::from(self.u8() % 9),
            200..=214 => self.u64(),
            215..=224 => u64::MAX, // NaN with payload / -1 / MAX
            225..=234 => top,      // -0.0 / MIN
            235..=244 => top - 1,  // largest finite-ish / MAX
            _ => match width {
                2 => 0x7c00,                // f16 inf (bf16: a large finite)
                4 => 0x7f80_0000,           // f32 inf
                _ => 0x7ff0_0000_0000_0000, // f64 inf
            },
        }
    }
}

/// Index dtypes built from any i128 by wrapping (as a buffer of raw index data would hold).
pub(crate) trait FromI128: IndexInt {
    fn wrap(v: i128) -> Self;
}
macro_rules! from_i128 {
    ($($t:ty),*) => {$(impl FromI128 for $t { fn wrap(v: i128) -> Self { v as $t } })*};
}
from_i128!(i8, i16, i32, i64, u8, u16, u32, u64);

pub(crate) fn count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// A contiguous buffer of `shape` filled from the input, or `None` when the element count
/// is absurd (a huge dim without a zero dim: no caller could hold such a buffer either).
pub(crate) fn values<T: Element>(b: &mut Bytes<'_>, shape: &[usize]) -> Option<Vec<T>> {
    let n = count(shape).filter(|&n| n <= 1 << 16)?;
    let w = std::mem::size_of::<T>();
    Some((0..n).map(|_| T::from_bits_u64(b.bits(w))).collect())
}

/// A poisoned padded copy: element `i` of `v` at `2·i + 1`, poison elsewhere.
pub(crate) fn padded<T: Copy>(v: &[T], poison: T) -> Vec<T> {
    let mut out = vec![poison; 2 * v.len() + 1];
    for (i, &x) in v.iter().enumerate() {
        out[2 * i + 1] = x;
    }
    out
}

/// Every other element of `buf` from position 1 (a [`padded`] buffer) as a view with gaps,
/// made from raw parts as a binding would: the poisoned positions between the elements belong
/// to nobody the view may touch.
pub(crate) fn gapped<'a, T: Copy>(
    buf: &'a [T],
    shape: &[usize],
    strides: &[isize],
) -> tensor_scatter::Result<TensorView<'a, T>> {
    let v = TensorView::with_strides(buf, 1, shape, strides)?;
    if v.is_empty() {
        return Ok(v);
    }
    // SAFETY: `with_strides` showed every element lies in `buf`, borrowed for 'a.
    unsafe { TensorView::from_raw_parts(buf.as_ptr().add(1), shape, strides) }
}

/// [`gapped`], writable.
pub(crate) fn gapped_mut<'a, T: Element>(
    buf: &'a mut [T],
    shape: &[usize],
    strides: &[isize],
) -> tensor_scatter::Result<TensorViewMut<'a, T>> {
    if shape.contains(&0) {
        return TensorViewMut::with_strides(buf, 1, shape, strides);
    }
    TensorViewMut::with_strides(&mut *buf, 1, shape, strides)?;
    // SAFETY: as in `gapped` (the check just above), with `buf` borrowed exclusively for 'a.
    unsafe { TensorViewMut::from_raw_parts(buf.as_mut_ptr().add(1), shape, strides) }
}

pub(crate) fn contiguous_strides(shape: &[usize], scale: isize) -> Option<Vec<isize>> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc: isize = scale;
    for d in (0..shape.len()).rev() {
        strides[d] = acc;
        acc = acc.checked_mul(isize::try_from(shape[d].max(1)).ok()?)?;
    }
    Some(strides)
}
