//! Shape arithmetic: overflow-checked element counts, axis normalisation, contiguous strides
//! and the row-major odometer every loop in the crate walks with.

use crate::error::{Error, ErrorKind, Result};

/// The product of `dims`, saturating at `usize::MAX`: explicit, the same in debug and release.
/// A zero anywhere gives 0 (`MAX · 0 = 0`), so an empty tensor with huge other dims (valid:
/// it holds no elements) is counted exactly; a saturated non-zero product only arises from
/// sub-shapes of such empty tensors, where no element is ever addressed.
pub(crate) fn sat_product(dims: &[usize]) -> usize {
    dims.iter().fold(1usize, |acc, &d| acc.saturating_mul(d))
}

/// Product of `shape`, or a [`SizeOverflow`](ErrorKind::SizeOverflow) error naming `arg`.
///
/// Every dimension must also be at most `isize::MAX` (ONNX dims are int64): only a tensor
/// with zero elements could have a larger one, and index arithmetic (in `i64`) relies on it.
/// The fuzzer found a `[usize::MAX, 0]` tensor whose valid index 122 was refused.
pub(crate) fn numel(op: &'static str, arg: &'static str, shape: &[usize]) -> Result<usize> {
    if shape.iter().any(|&d| d > isize::MAX as usize) {
        return Err(Error::overflow(op, arg));
    }
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::overflow(op, arg))
}

/// Maps `axis` in `[-rank, rank)` to `[0, rank)`.
pub(crate) fn normalize_axis(
    op: &'static str,
    arg: &'static str,
    axis: i64,
    rank: usize,
) -> Result<usize> {
    let r = rank as i128;
    let a = i128::from(axis);
    let n = if a < 0 { a + r } else { a };
    if (0..r).contains(&n) {
        Ok(n as usize)
    } else {
        Err(Error::new(ErrorKind::AxisOutOfRange {
            op,
            arg,
            axis: a,
            rank,
        }))
    }
}

/// Row-major strides of a contiguous tensor; the caller has checked that the element count
/// fits in `isize`.
pub(crate) fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(d as isize);
    }
    strides
}

/// A row-major walk over the coordinates of a shape, tracking one linear offset per set of
/// strides. `N` is the number of operands walked in lock-step.
pub(crate) struct Odometer<'a, const N: usize> {
    shape: &'a [usize],
    strides: [&'a [isize]; N],
    coord: Vec<usize>,
    offsets: [isize; N],
    remaining: usize,
}

impl<'a, const N: usize> Odometer<'a, N> {
    /// Walks `shape` starting from `bases`; `total` is the product of `shape`.
    pub(crate) fn new(
        shape: &'a [usize],
        strides: [&'a [isize]; N],
        bases: [isize; N],
        total: usize,
    ) -> Self {
        Odometer {
            shape,
            strides,
            coord: vec![0; shape.len()],
            offsets: bases,
            remaining: total,
        }
    }

    /// Returns the offsets of the current coordinate and advances; `None` when done.
    #[inline]
    pub(crate) fn next_offsets(&mut self) -> Option<[isize; N]> {
        if self.remaining == 0 {
            return None;
        }
        let out = self.offsets;
        self.remaining -= 1;
        if self.remaining > 0 {
            self.advance();
        }
        Some(out)
    }

    /// Like `next_offsets`, but hands out the coordinate too (before advancing).
    pub(crate) fn next_with_coord(&mut self, f: impl FnOnce(&[usize], [isize; N])) -> bool {
        if self.remaining == 0 {
            return false;
        }
        f(&self.coord, self.offsets);
        self.remaining -= 1;
        if self.remaining > 0 {
            self.advance();
        }
        true
    }

    #[inline]
    fn advance(&mut self) {
        for d in (0..self.shape.len()).rev() {
            self.coord[d] += 1;
            for (off, st) in self.offsets.iter_mut().zip(&self.strides) {
                *off = off.wrapping_add(st[d]);
            }
            if self.coord[d] < self.shape[d] {
                return;
            }
            let back = self.shape[d] as isize;
            for (off, st) in self.offsets.iter_mut().zip(&self.strides) {
                *off = off.wrapping_sub(st[d].wrapping_mul(back));
            }
            self.coord[d] = 0;
        }
    }
}

/// `[start, end)` of part `t` of `total` items cut into `parts`, boundaries rounded down to a
/// multiple of `align` (the last part ends at `total`).
pub(crate) fn part(total: usize, parts: usize, t: usize, align: usize) -> (usize, usize) {
    let at = |t: usize| {
        if t >= parts {
            return total;
        }
        let (q, r) = (total / parts, total % parts);
        let raw = q * t + t.min(r);
        raw - raw % align.max(1)
    };
    (at(t), at(t + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odometer_visits_row_major_offsets() {
        let shape = [2, 3];
        let a = [3isize, 1];
        let b = [1isize, 2];
        let mut o = Odometer::new(&shape, [&a, &b], [0, 10], 6);
        let mut got = vec![];
        while let Some(x) = o.next_offsets() {
            got.push(x);
        }
        assert_eq!(
            got,
            vec![[0, 10], [1, 12], [2, 14], [3, 11], [4, 13], [5, 15]]
        );
    }

    #[test]
    fn axis_normalisation_and_range() {
        assert_eq!(normalize_axis("t", "axis", -1, 3).unwrap(), 2);
        assert!(normalize_axis("t", "axis", 3, 3).is_err());
        assert!(normalize_axis("t", "axis", i64::MIN, 3).is_err());
        assert!(normalize_axis("t", "axis", 0, 0).is_err());
    }

    #[test]
    fn numel_overflow_is_an_error() {
        assert!(numel("t", "data", &[usize::MAX, 2]).is_err());
        // Empty, but a dim above isize::MAX: refused (index arithmetic is in i64).
        assert!(numel("t", "data", &[usize::MAX, 0]).is_err());
        assert_eq!(numel("t", "data", &[isize::MAX as usize, 0]).unwrap(), 0);
        assert_eq!(numel("t", "data", &[0, isize::MAX as usize]).unwrap(), 0);
    }
}

#[cfg(test)]
mod part_tests {
    use super::part;

    #[test]
    fn part_covers_everything_once_with_aligned_cuts() {
        for total in [0usize, 1, 15, 16, 17, 1000, 4097] {
            for parts in 1..9 {
                let mut next = 0;
                for t in 0..parts {
                    let (a, b) = part(total, parts, t, 16);
                    assert_eq!(a, next);
                    assert!(a <= b);
                    assert!(b == total || b % 16 == 0);
                    next = b;
                }
                assert_eq!(next, total);
            }
        }
    }
}
