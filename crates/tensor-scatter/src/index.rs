//! Index data: the index dtypes, the [`IndexPolicy`], and the one function that turns a stored
//! index value into a position. Every integer conversion of index data happens here.
//!
//! Values are compared in `i128`, which holds every value of every index dtype exactly, so a
//! `u64` above `i64::MAX` is simply out of range and never reinterpreted as negative.

use std::fmt;

use crate::dtype::DType;
use crate::error::{Error, ErrorKind};
use crate::view::{Tensor, TensorView};

mod private {
    use crate::view::TensorView;

    /// An index tensor as the engine reads it.
    pub trait Sealed: Sized {
        /// `int32` and `int64` views as they are; which conversion every other dtype takes.
        fn native<'v, 'a>(v: &'v TensorView<'a, Self>) -> super::Native<'v, 'a>;
    }
}

/// How the engine reads an index tensor ([`with_native_indices`]). The kernels are compiled
/// for `int32` and `int64` indices only; the six other index dtypes are converted once, into
/// a contiguous tensor of the same shape, which costs one pass over the indices and keeps
/// six copies of every kernel out of the build.
#[derive(Debug)]
pub enum Native<'v, 'a> {
    /// An `int32` view, read as it is.
    I32(&'v TensorView<'a, i32>),
    /// An `int64` view, read as it is.
    I64(&'v TensorView<'a, i64>),
    /// Converted to `int32` (i8, i16, u8, u16: every value is exact).
    ToI32,
    /// Converted to `int64` (u32 exact; u64 saturated at `i64::MAX`, which every policy
    /// treats as a `u64` above it: out of range, clamped to the last position, or skipped).
    ToI64,
}

/// An index element type: i8, i16, i32, i64, u8, u16, u32 or u64.
///
/// ```
/// use tensor_scatter::IndexInt;
/// assert_eq!(u64::MAX.to_i128(), 18446744073709551615);
/// ```
pub trait IndexInt:
    private::Sealed + Copy + Default + Send + Sync + fmt::Debug + PartialEq + 'static
{
    /// The runtime tag.
    const DTYPE: DType;
    /// The exact value.
    fn to_i128(self) -> i128;
    /// The value saturated to `i64` (only `u64` above `i64::MAX` changes, to `i64::MAX`,
    /// which is out of range for every dimension a view can have).
    fn to_i64_sat(self) -> i64;
}

macro_rules! index_int {
    ($($t:ty => $v:ident, $native:ident),*) => {$(
        impl private::Sealed for $t {
            fn native<'v, 'a>(v: &'v TensorView<'a, $t>) -> Native<'v, 'a> {
                native!($native, v)
            }
        }
        impl IndexInt for $t {
            const DTYPE: DType = DType::$v;
            #[inline(always)]
            fn to_i128(self) -> i128 {
                i128::from(self)
            }
            #[inline(always)]
            fn to_i64_sat(self) -> i64 {
                i64::try_from(self).unwrap_or(i64::MAX)
            }
        }
    )*};
}
macro_rules! native {
    (I32, $v:ident) => {
        Native::I32($v)
    };
    (I64, $v:ident) => {
        Native::I64($v)
    };
    ($convert:ident, $v:ident) => {{
        let _ = $v;
        Native::$convert
    }};
}
index_int!(
    i8 => I8, ToI32,
    i16 => I16, ToI32,
    i32 => I32, I32,
    i64 => I64, I64,
    u8 => U8, ToI32,
    u16 => U16, ToI32,
    u32 => U32, ToI64,
    u64 => U64, ToI64
);

/// `v`'s values as they are stored, when it is a contiguous `int32` view: what a kernel over
/// `int32` indices reads without a conversion.
pub(crate) fn int32_run<'a, I: IndexInt>(v: &TensorView<'a, I>) -> Option<&'a [i32]> {
    match I::native(v) {
        Native::I32(v) => v.contiguous(),
        _ => None,
    }
}

/// The index dtypes, in words, for errors.
pub(crate) const INDEX_DTYPES_TEXT: &str =
    "an integer index dtype (int8, int16, int32, int64, uint8, uint16, uint32 or uint64)";

/// [`Native::ToI32`]'s conversion (generic over the index dtype only, so compiled once each).
pub(crate) fn to_i32<I: IndexInt>(
    op: &'static str,
    v: &TensorView<'_, I>,
) -> crate::error::Result<Tensor<i32>> {
    convert(op, v, |x| x as i32) // i8, i16, u8 and u16 values: exact
}

/// [`Native::ToI64`]'s conversion.
pub(crate) fn to_i64<I: IndexInt>(
    op: &'static str,
    v: &TensorView<'_, I>,
) -> crate::error::Result<Tensor<i64>> {
    convert(op, v, |x| x)
}

/// `v` in row-major order as a contiguous tensor of `J`, each value through `to`; the
/// allocation is fallible (a broadcast view can address far more elements than it stores).
fn convert<I: IndexInt, J: Copy>(
    op: &'static str,
    v: &TensorView<'_, I>,
    to: impl Fn(i64) -> J,
) -> crate::error::Result<Tensor<J>> {
    let l = &v.layout;
    let mut out = Vec::new();
    out.try_reserve_exact(l.numel).map_err(|_| {
        Error::out_of_memory(
            op,
            "indices",
            l.numel.saturating_mul(std::mem::size_of::<J>()),
        )
    })?;
    v.for_each(|x| out.push(to(x.to_i64_sat())));
    Ok(Tensor {
        data: out,
        shape: l.shape.clone(),
    })
}

/// Runs `$body` with `$v` bound to `$indices` (a `&TensorView<'_, I>`) as an `int32` or `int64`
/// view ([`Native`]), converting the other index dtypes first; an index error from the body
/// reports the value as stored in `$indices` (a saturated `u64` would not).
macro_rules! with_native_indices {
    ($op:expr, $indices:expr, $v:ident => $body:expr) => {{
        let indices = $indices;
        let result = (|| -> crate::error::Result<_> {
            match crate::index::native(indices) {
                crate::index::Native::I32($v) => $body,
                crate::index::Native::I64($v) => $body,
                crate::index::Native::ToI32 => {
                    let t = crate::index::to_i32($op, indices)?;
                    let $v = &t.view();
                    $body
                }
                crate::index::Native::ToI64 => {
                    let t = crate::index::to_i64($op, indices)?;
                    let $v = &t.view();
                    $body
                }
            }
        })();
        result.map_err(|e| crate::index::stored_value(e, indices))
    }};
}
pub(crate) use with_native_indices;

/// `v` as the engine reads it ([`Native`]).
pub(crate) fn native<'v, 'a, I: IndexInt>(v: &'v TensorView<'a, I>) -> Native<'v, 'a> {
    <I as private::Sealed>::native(v)
}

/// Whether `v`'s dtype is converted to `int32` or `int64` before an operation runs on it (a
/// copy that allocates for every position the view addresses, so its caller runs the shape
/// checks first: a bad call reports its shapes, not the size of a broadcast index).
pub(crate) fn converts<I: IndexInt>(v: &TensorView<'_, I>) -> bool {
    matches!(native(v), Native::ToI32 | Native::ToI64)
}

/// `e` with the index value it reports read back from `indices` at its position.
pub(crate) fn stored_value<I: IndexInt>(mut e: Error, indices: &TensorView<'_, I>) -> Error {
    if let ErrorKind::IndexOutOfRange {
        arg: "indices",
        position,
        value,
        ..
    }
    | ErrorKind::NegativeIndex {
        arg: "indices",
        position,
        value,
        ..
    } = e.kind_mut()
        && let Some(stored) = indices.get(position)
    {
        *value = stored.to_i128();
    }
    e
}

/// What a negative index means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum NegativeIndices {
    /// Count from the end, once: `i < 0` means `i + s`, so `[-s, s)` is valid (ONNX, DirectML
    /// FL ≥ 3.0, OpenVINO v12/v15, NumPy).
    #[default]
    Wrap,
    /// Any negative value is an error (OpenVINO ScatterUpdate-3, PyTorch scatter).
    Error,
}

/// What an index outside its dimension (after the negative rule) means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OutOfRange {
    /// An error before anything is written (every spec's rule).
    #[default]
    Error,
    /// Clamp to `[0, s - 1]` (JAX `mode='clip'`); an error when `s == 0`.
    Clamp,
    /// Drop the whole update (JAX's default `drop`). For ScatterND a tuple is dropped when any
    /// of its components is out of range.
    Skip,
}

/// The index policy: how negative and out-of-range index values are treated.
///
/// ```
/// use tensor_scatter::{IndexPolicy, NegativeIndices, OutOfRange};
/// let p = IndexPolicy::default();
/// assert_eq!((p.negative, p.out_of_range), (NegativeIndices::Wrap, OutOfRange::Error));
/// let strict = IndexPolicy::new(NegativeIndices::Error, OutOfRange::Skip);
/// assert_eq!(strict.out_of_range, OutOfRange::Skip);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct IndexPolicy {
    /// Meaning of negative values.
    pub negative: NegativeIndices,
    /// Meaning of values outside the dimension.
    pub out_of_range: OutOfRange,
}

impl IndexPolicy {
    /// A policy from its two parts.
    pub const fn new(negative: NegativeIndices, out_of_range: OutOfRange) -> IndexPolicy {
        IndexPolicy {
            negative,
            out_of_range,
        }
    }
}

/// The outcome of resolving one index value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A position in `[0, s)`.
    At(usize),
    /// Dropped under [`OutOfRange::Skip`].
    Skip,
}

/// Why an index value was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    Negative,
    OutOfRange,
}

/// Resolves `value` against a dimension of `size` under `policy`.
#[inline]
pub(crate) fn resolve(value: i128, size: usize, policy: IndexPolicy) -> Result<Resolved, Fault> {
    let s = size as i128; // usize always fits in i128.
    let mut v = value;
    if v < 0 {
        match policy.negative {
            NegativeIndices::Error => return Err(Fault::Negative),
            NegativeIndices::Wrap => v += s,
        }
    }
    if (0..s).contains(&v) {
        return Ok(Resolved::At(v as usize)); // 0 <= v < s <= usize::MAX
    }
    match policy.out_of_range {
        OutOfRange::Error => Err(Fault::OutOfRange),
        OutOfRange::Skip => Ok(Resolved::Skip),
        OutOfRange::Clamp if size == 0 => Err(Fault::OutOfRange),
        OutOfRange::Clamp => Ok(Resolved::At(if v < 0 { 0 } else { size - 1 })),
    }
}

/// The inclusive range `[lo, hi]` of [`IndexInt::to_i64_sat`] values that [`resolve`] accepts
/// (returns `Ok` for) against a dimension of `size`: the fast kernels' validation is a plain
/// range test, and the precise [`resolve`] runs only to describe a failure.
pub(crate) fn accepted_range(size: usize, policy: IndexPolicy) -> (i64, i64) {
    let s = size as i64; // every dim is at most isize::MAX (`shape::numel` refuses more)
    let lo = match policy.negative {
        NegativeIndices::Wrap if policy.out_of_range == OutOfRange::Error => -s,
        NegativeIndices::Wrap => i64::MIN,
        NegativeIndices::Error => 0,
    };
    match policy.out_of_range {
        OutOfRange::Error => (lo, s - 1),
        OutOfRange::Clamp if size == 0 => (0, -1), // nothing is accepted
        OutOfRange::Clamp | OutOfRange::Skip => (lo, i64::MAX),
    }
}

/// Under the `Error` out-of-range rule: what a negative index of a dimension of `size` is
/// moved by (`size` under `Wrap`, else 0), for [`shifted_cell`].
#[inline(always)]
pub(crate) fn negative_shift(size: usize, negative: NegativeIndices) -> i64 {
    if negative == NegativeIndices::Wrap {
        size as i64
    } else {
        0
    }
}

/// The cell of index `v` as an unsigned number, a negative `v` moved by `shift`
/// ([`negative_shift`]): under the `Error` out-of-range rule it is below `size` exactly when
/// the policy accepts `v`, since adding `size` to a negative value (under `Wrap` only) maps
/// exactly the accepted values into `[0, size)`. One unsigned bound check then both accepts
/// an index and finds its cell.
#[inline(always)]
pub(crate) fn shifted_cell(v: i64, shift: i64) -> u64 {
    v.wrapping_add(shift & (v >> 63)) as u64
}

/// [`resolve`] for a value already accepted by [`accepted_range`]: the position, or `None` for
/// a skipped update. Cheap enough for the innermost loop.
#[inline(always)]
pub(crate) fn resolve_accepted(v: i64, size: usize, policy: IndexPolicy) -> Option<usize> {
    let s = size as i64;
    // Accepted negative values exist only under `Wrap`; v + s cannot overflow for v < 0 <= s.
    let w = if v < 0 { v.wrapping_add(s) } else { v };
    match policy.out_of_range {
        OutOfRange::Error => Some(w as usize),
        OutOfRange::Clamp => Some(w.clamp(0, s - 1) as usize),
        OutOfRange::Skip => (0..s).contains(&w).then_some(w as usize),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_range_and_resolver_agree_with_resolve() {
        let values = [
            i128::from(i64::MIN),
            i128::from(i64::MIN) + 1,
            -9,
            -5,
            -4,
            -1,
            0,
            1,
            3,
            4,
            5,
            i128::from(i64::MAX),
            i128::from(u64::MAX),
        ];
        for negative in [NegativeIndices::Wrap, NegativeIndices::Error] {
            for out_of_range in [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Skip] {
                let p = IndexPolicy::new(negative, out_of_range);
                for size in [0usize, 1, 4, 5] {
                    let (lo, hi) = accepted_range(size, p);
                    for &v in &values {
                        let sat = i64::try_from(v).unwrap_or(i64::MAX);
                        let slow = resolve(v, size, p);
                        assert_eq!((lo..=hi).contains(&sat), slow.is_ok(), "{p:?} {size} {v}");
                        if let Ok(r) = slow {
                            let fast = resolve_accepted(sat, size, p);
                            let want = match r {
                                Resolved::At(x) => Some(x),
                                Resolved::Skip => None,
                            };
                            assert_eq!(fast, want, "{p:?} {size} {v}");
                        }
                    }
                }
            }
        }
    }

    const WRAP_ERR: IndexPolicy = IndexPolicy::new(NegativeIndices::Wrap, OutOfRange::Error);

    #[test]
    fn wrap_accepts_minus_s_and_rejects_minus_s_minus_one() {
        assert_eq!(resolve(-3, 3, WRAP_ERR), Ok(Resolved::At(0)));
        assert_eq!(resolve(-1, 3, WRAP_ERR), Ok(Resolved::At(2)));
        assert_eq!(resolve(-4, 3, WRAP_ERR), Err(Fault::OutOfRange));
        assert_eq!(resolve(3, 3, WRAP_ERR), Err(Fault::OutOfRange));
    }

    #[test]
    fn u64_max_is_out_of_range_not_minus_one() {
        assert_eq!(
            resolve(u64::MAX.to_i128(), 5, WRAP_ERR),
            Err(Fault::OutOfRange)
        );
        assert_eq!(
            resolve(i64::MIN.to_i128(), 5, WRAP_ERR),
            Err(Fault::OutOfRange)
        );
    }

    #[test]
    fn clamp_and_skip() {
        let clamp = IndexPolicy::new(NegativeIndices::Wrap, OutOfRange::Clamp);
        assert_eq!(resolve(99, 4, clamp), Ok(Resolved::At(3)));
        assert_eq!(resolve(-99, 4, clamp), Ok(Resolved::At(0)));
        assert_eq!(resolve(0, 0, clamp), Err(Fault::OutOfRange));
        let skip = IndexPolicy::new(NegativeIndices::Wrap, OutOfRange::Skip);
        assert_eq!(resolve(4, 4, skip), Ok(Resolved::Skip));
    }

    #[test]
    fn negative_error_policy_rejects_every_negative() {
        let p = IndexPolicy::new(NegativeIndices::Error, OutOfRange::Skip);
        assert_eq!(resolve(-1, 4, p), Err(Fault::Negative));
        assert_eq!(resolve(7, 4, p), Ok(Resolved::Skip));
    }
}
