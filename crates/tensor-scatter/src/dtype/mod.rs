//! Data types: the runtime [`DType`] tag and the sealed [`Element`] trait that fixes the scalar
//! semantics of every reduction for every data type.
//!
//! | dtype | add | sub | mul | min / max | mean |
//! |---|---|---|---|---|---|
//! | f64, f32 | IEEE | IEEE | IEEE | NaN-propagating, `+0 > -0` | `sum / count` in the type |
//! | f16, bf16 | in f32, rounded once | same | same | same (exact) | in f32, rounded once |
//! | integers | wrapping | wrapping | wrapping | ordinary | floor (toward −∞) |
//! | bool | OR | XOR | AND | AND / OR | error |
//!
//! [`Reduction`] and [`Buffer`] are defined here too, as plain data: [`Element`] names both,
//! and this module depends on no other module of the crate.

use std::fmt;

use half::{bf16, f16};

/// The runtime tag of a data type (also used for index tensors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE binary64.
    F64,
    /// IEEE binary32.
    F32,
    /// IEEE binary16 ([`half::f16`]).
    F16,
    /// bfloat16 ([`half::bf16`]).
    BF16,
    /// Signed 64-bit integer.
    I64,
    /// Signed 32-bit integer.
    I32,
    /// Signed 16-bit integer.
    I16,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 64-bit integer.
    U64,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 8-bit integer.
    U8,
    /// Boolean (one byte, 0 or 1).
    Bool,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 13] = [
        DType::F64,
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
        DType::I16,
        DType::I8,
        DType::U64,
        DType::U32,
        DType::U16,
        DType::U8,
        DType::Bool,
    ];

    /// Lower-case name as NumPy spells it (`"float32"`, `"bfloat16"`, `"bool"`, ...).
    ///
    /// ```
    /// assert_eq!(tensor_scatter::DType::BF16.name(), "bfloat16");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            DType::F64 => "float64",
            DType::F32 => "float32",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::I64 => "int64",
            DType::I32 => "int32",
            DType::I16 => "int16",
            DType::I8 => "int8",
            DType::U64 => "uint64",
            DType::U32 => "uint32",
            DType::U16 => "uint16",
            DType::U8 => "uint8",
            DType::Bool => "bool",
        }
    }

    /// Size of one element in bytes.
    ///
    /// ```
    /// assert_eq!(tensor_scatter::DType::F16.size_of(), 2);
    /// ```
    pub fn size_of(self) -> usize {
        match self {
            DType::F64 | DType::I64 | DType::U64 => 8,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::I8 | DType::U8 | DType::Bool => 1,
        }
    }

    /// True for the eight integer dtypes, the ones accepted for index tensors.
    ///
    /// ```
    /// use tensor_scatter::DType;
    /// assert!(DType::U8.is_integer());
    /// assert!(!DType::Bool.is_integer());
    /// ```
    pub fn is_integer(self) -> bool {
        !matches!(
            self,
            DType::F64 | DType::F32 | DType::F16 | DType::BF16 | DType::Bool
        )
    }

    /// True for the four floating-point dtypes.
    ///
    /// ```
    /// assert!(tensor_scatter::DType::BF16.is_float());
    /// ```
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F64 | DType::F32 | DType::F16 | DType::BF16)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod reduction;
pub use reduction::Reduction;

mod private {
    pub trait Sealed {
        /// The unsigned integer of the same size and alignment: `none` moves values as it.
        type Bits: super::Element;
    }
}

/// The unsigned integer `T` is moved as when only its bits matter (the `none` reduction).
pub(crate) type BitsOf<T> = <T as private::Sealed>::Bits;

/// Whether `T` is an unsigned integer, its own [`BitsOf`].
pub(crate) const fn is_bits<T: Element>() -> bool {
    matches!(T::DTYPE, DType::U8 | DType::U16 | DType::U32 | DType::U64)
}

/// A data element type: one of f64, f32, f16, bf16, i64, i32, i16, i8, u64, u32, u16, u8, bool.
///
/// The methods are the scalar semantics of the reductions (see the module table). They are
/// public so that callers can reproduce a result by hand, but the trait is sealed.
///
/// # Examples
///
/// ```
/// use tensor_scatter::Element;
/// assert_eq!(Element::reduce_add(127i8, 1), -128); // integers wrap
/// assert!(Element::reduce_max(1.0f32, f32::NAN).is_nan()); // NaN propagates
/// assert!(Element::reduce_max(-0.0f32, 0.0).is_sign_positive()); // +0 > -0
/// assert_eq!(<i32 as Element>::reduce_mean(-7, 2), -4); // floor
/// assert_eq!(Element::reduce_add(true, true), true); // bool add = OR
/// // Arithmetic NaN results are the positive quiet NaN, whatever the operands' NaN bits.
/// assert_eq!(Element::reduce_add(f32::INFINITY, f32::NEG_INFINITY).to_bits(), f32::NAN.to_bits());
/// ```
pub trait Element: private::Sealed + Copy + Default + Send + Sync + fmt::Debug + 'static {
    /// The runtime tag.
    const DTYPE: DType;
    /// Whether `mean` is defined (false for bool only).
    const HAS_MEAN: bool;
    /// The type used by [`Accumulation::Wide`](crate::Accumulation::Wide): f32 for f16/bf16,
    /// the type itself otherwise.
    type Wide: Element;

    /// Converts to the wide type (exact).
    fn widen(self) -> Self::Wide;
    /// Rounds a wide value back to this type (round to nearest even).
    fn narrow(wide: Self::Wide) -> Self;
    /// `self + u` (wrapping for integers, OR for bool).
    fn reduce_add(self, u: Self) -> Self;
    /// `self - u` (wrapping for integers, XOR for bool).
    fn reduce_sub(self, u: Self) -> Self;
    /// `self * u` (wrapping for integers, AND for bool).
    fn reduce_mul(self, u: Self) -> Self;
    /// IEEE 754-2019 `minimum`: NaN if either is NaN, `-0 < +0` (AND for bool).
    fn reduce_min(self, u: Self) -> Self;
    /// IEEE 754-2019 `maximum`: NaN if either is NaN, `+0 > -0` (OR for bool).
    fn reduce_max(self, u: Self) -> Self;
    /// [`reduce_min`](Element::reduce_min) as the kernels fold it: the same bits, for f32 and
    /// f64 without data-dependent branches (random values mispredict `reduce_min`'s).
    #[doc(hidden)]
    #[inline(always)]
    fn fold_min(self, u: Self) -> Self {
        self.reduce_min(u)
    }
    /// [`reduce_max`](Element::reduce_max) as the kernels fold it (see
    /// [`fold_min`](Element::fold_min)).
    #[doc(hidden)]
    #[inline(always)]
    fn fold_max(self, u: Self) -> Self {
        self.reduce_max(u)
    }
    /// Whether the value is a NaN (false for every type without NaN).
    #[doc(hidden)]
    #[inline(always)]
    fn is_nan_value(self) -> bool {
        false
    }
    /// `self + u` for f32 and f64, `self` otherwise: a sum of values from 0 that is NaN
    /// whenever one of them is (one add a value; opposite infinities or an overflow can make
    /// it NaN too, a false alarm that only costs the exact rule a second pass).
    #[doc(hidden)]
    #[inline(always)]
    fn add_nan_probe(self, u: Self) -> Self {
        let _ = u;
        self
    }
    /// [`fold_min`](Element::fold_min) for operands that are not NaN: the same bits with no
    /// select on a compare result (for f32 and f64 the OR of the two `minps` orders, which
    /// differ only on equal values, where the OR is what `fold_min` gives).
    #[doc(hidden)]
    #[inline(always)]
    fn fold_min_ordered(self, u: Self) -> Self {
        self.fold_min(u)
    }
    /// [`fold_max`](Element::fold_max) for operands that are not NaN (the AND of the two
    /// `maxps` orders; see [`fold_min_ordered`](Element::fold_min_ordered)).
    #[doc(hidden)]
    #[inline(always)]
    fn fold_max_ordered(self, u: Self) -> Self {
        self.fold_max(u)
    }
    /// `self + u` as a long fold runs it: for f32 and f64 without making a NaN canonical
    /// (NaN absorbs every later step, so [`canonical`](Element::canonical) at the end of the
    /// fold gives [`reduce_add`](Element::reduce_add)'s bits).
    #[doc(hidden)]
    #[inline(always)]
    fn fold_add(self, u: Self) -> Self {
        self.reduce_add(u)
    }
    /// `self * u` as a long fold runs it (see [`fold_add`](Element::fold_add)).
    #[doc(hidden)]
    #[inline(always)]
    fn fold_mul(self, u: Self) -> Self {
        self.reduce_mul(u)
    }
    /// The positive quiet NaN for any NaN of f32/f64 (decided on the bits, which the compiler
    /// cannot fold away); every other value, and every other type, unchanged.
    #[doc(hidden)]
    #[inline(always)]
    fn canonical(self) -> Self {
        self
    }
    /// `sum / count`: floor division for integers, division in the type (f32 for f16/bf16)
    /// for floats. `count` is at least 1. Unused for bool.
    fn reduce_mean(sum: Self, count: u64) -> Self;
    /// The starting value of a cell when `include_self` is false: the identity of the
    /// reduction (`-0.0` / 0 for add, sub and mean, 1 for mul, `+inf` / MAX for min,
    /// `-inf` / MIN for max; false, false, true, true, false for bool).
    fn identity(reduction: Reduction) -> Self;
    /// The raw bits, zero-extended (for bit-exact comparisons).
    fn to_bits_u64(self) -> u64;
    /// The value whose [`to_bits_u64`](Element::to_bits_u64) is `bits` (the high bits beyond
    /// the type's width are ignored).
    fn from_bits_u64(bits: u64) -> Self;
    /// Borrows the typed vector inside a [`Buffer`] of this dtype.
    fn buffer_slice(buffer: &Buffer) -> Option<&[Self]>;
    /// Mutably borrows the typed vector inside a [`Buffer`] of this dtype.
    fn buffer_slice_mut(buffer: &mut Buffer) -> Option<&mut [Self]>;
    /// Wraps a vector into a [`Buffer`].
    fn into_buffer(values: Vec<Self>) -> Buffer;
    /// The typed vector inside a [`Buffer`] of this dtype, or the buffer back.
    fn from_buffer(buffer: Buffer) -> std::result::Result<Vec<Self>, Buffer>;
}

/// Identity of `reduction` from its three scalar constants (shared by every numeric type).
fn identity_of<T: Copy>(reduction: Reduction, zero: T, one: T, lowest: T, highest: T) -> T {
    match reduction {
        Reduction::Mul => one,
        Reduction::Min => highest,
        Reduction::Max => lowest,
        Reduction::None | Reduction::Add | Reduction::Sub | Reduction::Mean => zero,
    }
}

macro_rules! buffer_access {
    ($variant:ident) => {
        fn buffer_slice(buffer: &Buffer) -> Option<&[Self]> {
            match buffer {
                Buffer::$variant(v) => Some(v),
                _ => None,
            }
        }
        fn buffer_slice_mut(buffer: &mut Buffer) -> Option<&mut [Self]> {
            match buffer {
                Buffer::$variant(v) => Some(v),
                _ => None,
            }
        }
        fn into_buffer(values: Vec<Self>) -> Buffer {
            Buffer::$variant(values)
        }
        fn from_buffer(buffer: Buffer) -> std::result::Result<Vec<Self>, Buffer> {
            match buffer {
                Buffer::$variant(v) => Ok(v),
                other => Err(other),
            }
        }
    };
}

macro_rules! int_element {
    ($t:ty, $variant:ident, $bits:ty) => {
        impl private::Sealed for $t {
            type Bits = $bits;
        }
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            const HAS_MEAN: bool = true;
            type Wide = $t;
            fn widen(self) -> $t {
                self
            }
            fn narrow(wide: $t) -> $t {
                wide
            }
            fn reduce_add(self, u: $t) -> $t {
                self.wrapping_add(u)
            }
            fn reduce_sub(self, u: $t) -> $t {
                self.wrapping_sub(u)
            }
            fn reduce_mul(self, u: $t) -> $t {
                self.wrapping_mul(u)
            }
            fn reduce_min(self, u: $t) -> $t {
                Ord::min(self, u)
            }
            fn reduce_max(self, u: $t) -> $t {
                Ord::max(self, u)
            }
            fn reduce_mean(sum: $t, count: u64) -> $t {
                // Floor division in i128, where neither operand can overflow; the quotient's
                // magnitude is at most |sum|, so it fits the type again.
                let q = i128::from(sum).div_euclid(i128::from(Ord::max(count, 1)));
                <$t>::try_from(q).unwrap_or(sum)
            }
            fn identity(reduction: Reduction) -> $t {
                identity_of(reduction, 0, 1, <$t>::MIN, <$t>::MAX)
            }
            fn to_bits_u64(self) -> u64 {
                u64::from(self as $bits)
            }
            fn from_bits_u64(bits: u64) -> $t {
                bits as $bits as $t
            }
            buffer_access!($variant);
        }
    };
}

int_element!(i64, I64, u64);
int_element!(i32, I32, u32);
int_element!(i16, I16, u16);
int_element!(i8, I8, u8);
int_element!(u64, U64, u64);
int_element!(u32, U32, u32);
int_element!(u16, U16, u16);
int_element!(u8, U8, u8);

/// IEEE `maximum` on values compared through `key` (the value itself, or its f32 image).
fn ieee_max<T: Copy, K: PartialOrd + Copy>(
    a: T,
    b: T,
    key: impl Fn(T) -> K,
    nan: impl Fn(T) -> bool,
    neg: impl Fn(T) -> bool,
) -> T {
    if nan(a) {
        a
    } else if nan(b) {
        b
    } else if key(a) > key(b) {
        a
    } else if key(b) > key(a) {
        b
    } else if neg(a) {
        // Equal: only ±0 can differ in sign; +0 wins.
        b
    } else {
        a
    }
}

/// IEEE `minimum`, the mirror of [`ieee_max`]: `-0 < +0`.
fn ieee_min<T: Copy, K: PartialOrd + Copy>(
    a: T,
    b: T,
    key: impl Fn(T) -> K,
    nan: impl Fn(T) -> bool,
    neg: impl Fn(T) -> bool,
) -> T {
    if nan(a) {
        a
    } else if nan(b) {
        b
    } else if key(a) < key(b) {
        a
    } else if key(b) < key(a) || neg(b) {
        // Smaller, or equal with b = -0 (only ±0 compare equal with differing bits).
        b
    } else {
        a
    }
}

/// Arithmetic NaN results are replaced by the positive quiet NaN: IEEE 754 leaves a NaN
/// result's sign and payload open, and the compiler may commute `+` and `*`, so only a
/// canonical NaN keeps results bit-identical across code paths.
macro_rules! canon {
    ($t:ty, $e:expr) => {{
        let r: $t = $e;
        if r.is_nan() { <$t>::NAN } else { r }
    }};
}

macro_rules! float_element {
    ($t:ty, $variant:ident, $bits:ty) => {
        impl private::Sealed for $t {
            type Bits = $bits;
        }
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            const HAS_MEAN: bool = true;
            type Wide = $t;
            fn widen(self) -> $t {
                self
            }
            fn narrow(wide: $t) -> $t {
                wide
            }
            fn reduce_add(self, u: $t) -> $t {
                canon!($t, self + u)
            }
            fn reduce_sub(self, u: $t) -> $t {
                canon!($t, self - u)
            }
            fn reduce_mul(self, u: $t) -> $t {
                canon!($t, self * u)
            }
            fn reduce_min(self, u: $t) -> $t {
                ieee_min(
                    self,
                    u,
                    |x| x,
                    |x: $t| x.is_nan(),
                    |x: $t| x.is_sign_negative(),
                )
            }
            fn reduce_max(self, u: $t) -> $t {
                ieee_max(
                    self,
                    u,
                    |x| x,
                    |x: $t| x.is_nan(),
                    |x: $t| x.is_sign_negative(),
                )
            }
            #[inline(always)]
            fn fold_min(self, u: $t) -> $t {
                // Float compares and selects only (`minss` and blends, no branch, a short
                // chain after the cell's load): the smaller, or u when unordered (a NaN of
                // u); equal values give the OR of their bits (-0 for ±0); a NaN of self wins.
                let m = if self < u { self } else { u };
                let m = if self == u {
                    <$t>::from_bits(self.to_bits() | u.to_bits())
                } else {
                    m
                };
                if self.is_nan() { self } else { m }
            }
            #[inline(always)]
            fn is_nan_value(self) -> bool {
                self.is_nan()
            }
            #[inline(always)]
            fn add_nan_probe(self, u: $t) -> $t {
                self + u
            }
            #[inline(always)]
            fn fold_min_ordered(self, u: $t) -> $t {
                let (a, b) = (
                    if self < u { self } else { u },
                    if u < self { u } else { self },
                );
                <$t>::from_bits(a.to_bits() | b.to_bits())
            }
            #[inline(always)]
            fn fold_max_ordered(self, u: $t) -> $t {
                let (a, b) = (
                    if self > u { self } else { u },
                    if u > self { u } else { self },
                );
                <$t>::from_bits(a.to_bits() & b.to_bits())
            }
            #[inline(always)]
            fn fold_max(self, u: $t) -> $t {
                // As `fold_min`, mirrored: equal values give the AND of their bits (+0).
                let m = if self > u { self } else { u };
                let m = if self == u {
                    <$t>::from_bits(self.to_bits() & u.to_bits())
                } else {
                    m
                };
                if self.is_nan() { self } else { m }
            }
            #[inline(always)]
            fn fold_add(self, u: $t) -> $t {
                self + u
            }
            #[inline(always)]
            fn fold_mul(self, u: $t) -> $t {
                self * u
            }
            #[inline(always)]
            fn canonical(self) -> $t {
                let b = self.to_bits();
                if b & (<$bits>::MAX >> 1) > <$t>::INFINITY.to_bits() {
                    <$t>::from_bits(<$t>::NAN.to_bits())
                } else {
                    self
                }
            }
            fn reduce_mean(sum: $t, count: u64) -> $t {
                canon!($t, sum / (count as $t))
            }
            fn identity(reduction: Reduction) -> $t {
                identity_of(reduction, -0.0, 1.0, <$t>::NEG_INFINITY, <$t>::INFINITY)
            }
            fn to_bits_u64(self) -> u64 {
                u64::from(self.to_bits())
            }
            fn from_bits_u64(bits: u64) -> $t {
                <$t>::from_bits(bits as _)
            }
            buffer_access!($variant);
        }
    };
}

float_element!(f64, F64, u64);
float_element!(f32, F32, u32);

macro_rules! half_element {
    ($t:ty, $variant:ident) => {
        impl private::Sealed for $t {
            type Bits = u16;
        }
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            const HAS_MEAN: bool = true;
            type Wide = f32;
            fn widen(self) -> f32 {
                self.to_f32()
            }
            fn narrow(wide: f32) -> $t {
                <$t>::from_f32(wide)
            }
            fn reduce_add(self, u: $t) -> $t {
                <$t>::from_f32(canon!(f32, self.to_f32() + u.to_f32()))
            }
            fn reduce_sub(self, u: $t) -> $t {
                <$t>::from_f32(canon!(f32, self.to_f32() - u.to_f32()))
            }
            fn reduce_mul(self, u: $t) -> $t {
                <$t>::from_f32(canon!(f32, self.to_f32() * u.to_f32()))
            }
            fn reduce_min(self, u: $t) -> $t {
                ieee_min(
                    self,
                    u,
                    |x: $t| x.to_f32(),
                    |x: $t| x.is_nan(),
                    |x: $t| x.is_sign_negative(),
                )
            }
            fn reduce_max(self, u: $t) -> $t {
                ieee_max(
                    self,
                    u,
                    |x: $t| x.to_f32(),
                    |x: $t| x.is_nan(),
                    |x: $t| x.is_sign_negative(),
                )
            }
            fn reduce_mean(sum: $t, count: u64) -> $t {
                <$t>::from_f32(canon!(f32, sum.to_f32() / count as f32))
            }
            fn identity(reduction: Reduction) -> $t {
                identity_of(
                    reduction,
                    <$t>::NEG_ZERO,
                    <$t>::ONE,
                    <$t>::NEG_INFINITY,
                    <$t>::INFINITY,
                )
            }
            #[inline(always)]
            fn is_nan_value(self) -> bool {
                self.is_nan()
            }
            fn to_bits_u64(self) -> u64 {
                u64::from(self.to_bits())
            }
            fn from_bits_u64(bits: u64) -> $t {
                <$t>::from_bits(bits as _)
            }
            buffer_access!($variant);
        }
    };
}

half_element!(f16, F16);
half_element!(bf16, BF16);

impl private::Sealed for bool {
    type Bits = u8;
}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    const HAS_MEAN: bool = false;
    type Wide = bool;
    fn widen(self) -> bool {
        self
    }
    fn narrow(wide: bool) -> bool {
        wide
    }
    fn reduce_add(self, u: bool) -> bool {
        self | u
    }
    fn reduce_sub(self, u: bool) -> bool {
        self ^ u
    }
    fn reduce_mul(self, u: bool) -> bool {
        self & u
    }
    fn reduce_min(self, u: bool) -> bool {
        self & u
    }
    fn reduce_max(self, u: bool) -> bool {
        self | u
    }
    fn reduce_mean(sum: bool, _count: u64) -> bool {
        sum
    }
    fn identity(reduction: Reduction) -> bool {
        matches!(reduction, Reduction::Mul | Reduction::Min)
    }
    fn to_bits_u64(self) -> u64 {
        u64::from(self)
    }
    fn from_bits_u64(bits: u64) -> bool {
        bits & 1 == 1
    }
    buffer_access!(Bool);
}

/// A typed element vector of any supported dtype.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Buffer {
    F64(Vec<f64>),
    F32(Vec<f32>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    I16(Vec<i16>),
    I8(Vec<i8>),
    U64(Vec<u64>),
    U32(Vec<u32>),
    U16(Vec<u16>),
    U8(Vec<u8>),
    Bool(Vec<bool>),
}
