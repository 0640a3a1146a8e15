//! Borrowed erased views: [`DynView`] and [`DynViewMut`] are typed views (any strides) whose
//! dtype is known only at run time, such as a binding's arrays. The `dyn` operators take them
//! (and `&DynTensor`, which converts without a copy), so a caller with memory of its own runs
//! every operator on it without copying it into a [`DynTensor`].

use half::{bf16, f16};

use crate::dtype::{DType, Element};
use crate::error::{Error, ErrorKind, Result};
use crate::view::{TensorView, TensorViewMut};

use super::DynTensor;

/// The element types a [`DynView`] can hold: recovers the typed view of one dtype.
pub(crate) trait ViewElement: Element {
    fn of<'v, 'a>(v: &'v DynView<'a>) -> Option<&'v TensorView<'a, Self>>;
    fn of_mut<'v, 'a>(v: &'v mut DynViewMut<'a>) -> Option<&'v mut TensorViewMut<'a, Self>>;
}

macro_rules! dyn_views {
    ($($V:ident => $t:ty),* $(,)?) => {
        /// A read-only view of any dtype: a [`TensorView`] whose element type is known at run
        /// time. Built from a typed view with `From`, or from a [`DynTensor`] by reference.
        ///
        /// ```
        /// use tensor_scatter::{DType, DynView, TensorView};
        /// let buf = [1.0f32, 2.0, 3.0, 4.0];
        /// // Every other element, as an erased view.
        /// let v = DynView::from(TensorView::with_strides(&buf, 0, &[2], &[2]).unwrap());
        /// assert_eq!((v.dtype(), v.shape()), (DType::F32, &[2][..]));
        /// ```
        #[derive(Clone, Debug)]
        pub enum DynView<'a> {
            $(
                #[doc = concat!("A view of `", stringify!($t), "` elements.")]
                $V(TensorView<'a, $t>),
            )*
        }

        /// A writable view of any dtype: a [`TensorViewMut`] whose element type is known at
        /// run time.
        #[derive(Debug)]
        pub enum DynViewMut<'a> {
            $(
                #[doc = concat!("A writable view of `", stringify!($t), "` elements.")]
                $V(TensorViewMut<'a, $t>),
            )*
        }

        impl<'a> DynView<'a> {
            /// The dtype of the elements.
            pub fn dtype(&self) -> DType {
                match self {
                    $(DynView::$V(_) => <$t as Element>::DTYPE,)*
                }
            }

            /// The shape.
            pub fn shape(&self) -> &[usize] {
                match self {
                    $(DynView::$V(v) => v.shape(),)*
                }
            }
        }

        impl<'a> DynView<'a> {
            /// A view of `dtype` elements another owner describes (a NumPy or DLPack array,
            /// say), as [`TensorView::from_raw_parts`]: element `c` at
            /// `origin + Σ c[d]·strides[d]` elements of `dtype`. No copy.
            ///
            /// # Errors
            /// As [`TensorView::from_raw_parts`].
            ///
            /// # Safety
            /// As [`TensorView::from_raw_parts`] for the element type of `dtype`: aligned,
            /// every addressed element a valid value of it (a bool byte is 0 or 1), unwritten
            /// for `'a`.
            pub unsafe fn from_raw_parts(
                dtype: DType,
                origin: *const u8,
                shape: &[usize],
                strides: &[isize],
            ) -> Result<DynView<'a>> {
                match dtype {
                    $(DType::$V => {
                        // SAFETY: the caller's contract, for `dtype`'s element type.
                        let v = unsafe { TensorView::<$t>::from_raw_parts(origin.cast(), shape, strides) };
                        v.map(DynView::$V)
                    })*
                }
            }

            /// The elements, copied into a row-major [`DynTensor`].
            pub fn to_tensor(&self) -> DynTensor {
                match self {
                    $(DynView::$V(v) => DynTensor::from(v.to_tensor()),)*
                }
            }
        }

        impl<'a> DynViewMut<'a> {
            /// A writable view of `dtype` elements another owner describes, as
            /// [`TensorViewMut::from_raw_parts`]. No copy.
            ///
            /// # Errors
            /// As [`TensorViewMut::from_raw_parts`].
            ///
            /// # Safety
            /// As [`DynView::from_raw_parts`], and nothing else reads or writes the elements
            /// for `'a`.
            pub unsafe fn from_raw_parts(
                dtype: DType,
                origin: *mut u8,
                shape: &[usize],
                strides: &[isize],
            ) -> Result<DynViewMut<'a>> {
                match dtype {
                    $(DType::$V => {
                        // SAFETY: the caller's contract, for `dtype`'s element type.
                        let v = unsafe { TensorViewMut::<$t>::from_raw_parts(origin.cast(), shape, strides) };
                        v.map(DynViewMut::$V)
                    })*
                }
            }
        }

        impl<'a> DynViewMut<'a> {
            /// The dtype of the elements.
            pub fn dtype(&self) -> DType {
                match self {
                    $(DynViewMut::$V(_) => <$t as Element>::DTYPE,)*
                }
            }

            /// The shape.
            pub fn shape(&self) -> &[usize] {
                match self {
                    $(DynViewMut::$V(v) => v.shape(),)*
                }
            }
        }

        $(
            impl<'a> From<TensorView<'a, $t>> for DynView<'a> {
                fn from(v: TensorView<'a, $t>) -> Self {
                    DynView::$V(v)
                }
            }

            impl<'a> From<TensorViewMut<'a, $t>> for DynViewMut<'a> {
                fn from(v: TensorViewMut<'a, $t>) -> Self {
                    DynViewMut::$V(v)
                }
            }

            impl ViewElement for $t {
                fn of<'v, 'a>(v: &'v DynView<'a>) -> Option<&'v TensorView<'a, Self>> {
                    match v {
                        DynView::$V(t) => Some(t),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn of_mut<'v, 'a>(
                    v: &'v mut DynViewMut<'a>,
                ) -> Option<&'v mut TensorViewMut<'a, Self>> {
                    match v {
                        DynViewMut::$V(t) => Some(t),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            }
        )*

        impl<'a> From<&'a DynTensor> for DynView<'a> {
            /// The tensor's elements, without a copy.
            fn from(t: &'a DynTensor) -> Self {
                match t.dtype() {
                    $(DType::$V => {
                        let s = <$t as Element>::buffer_slice(t.buffer()).unwrap_or(&[]);
                        DynView::$V(TensorView::contiguous_unchecked(s, t.shape()))
                    })*
                }
            }
        }

        impl<'a> From<&'a mut DynTensor> for DynViewMut<'a> {
            /// The tensor's elements, writable, without a copy.
            fn from(t: &'a mut DynTensor) -> Self {
                let (buffer, shape) = t.parts_mut();
                match buffer.dtype() {
                    $(DType::$V => {
                        let s = <$t as Element>::buffer_slice_mut(buffer).unwrap_or(&mut []);
                        DynViewMut::$V(TensorViewMut::contiguous_unchecked(s, shape))
                    })*
                }
            }
        }
    };
}

dyn_views!(
    F64 => f64,
    F32 => f32,
    F16 => f16,
    BF16 => bf16,
    I64 => i64,
    I32 => i32,
    I16 => i16,
    I8 => i8,
    U64 => u64,
    U32 => u32,
    U16 => u16,
    U8 => u8,
    Bool => bool,
);

impl<'a> From<&DynView<'a>> for DynView<'a> {
    fn from(v: &DynView<'a>) -> Self {
        v.clone()
    }
}

impl<'a, 'b> From<&'b mut DynViewMut<'a>> for DynViewMut<'b> {
    /// A reborrow: the same elements, for a shorter time.
    fn from(v: &'b mut DynViewMut<'a>) -> Self {
        macro_rules! reborrow {
            ($($V:ident),*) => {
                match v {
                    $(DynViewMut::$V(t) => DynViewMut::$V(t.reborrow()),)*
                }
            };
        }
        reborrow!(
            F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, Bool
        )
    }
}

/// The typed view of `v`, or a dtype mismatch naming `op` and `arg`.
pub(crate) fn typed<'v, 'a, T: ViewElement>(
    v: &'v DynView<'a>,
    op: &'static str,
    arg: &'static str,
) -> Result<&'v TensorView<'a, T>> {
    T::of(v).ok_or_else(|| mismatch::<T>(op, arg, v.dtype()))
}

/// The typed writable view of `v`, or a dtype mismatch naming `op` and `arg`.
pub(crate) fn typed_mut<'v, 'a, T: ViewElement>(
    v: &'v mut DynViewMut<'a>,
    op: &'static str,
    arg: &'static str,
) -> Result<&'v mut TensorViewMut<'a, T>> {
    let got = v.dtype();
    T::of_mut(v).ok_or_else(|| mismatch::<T>(op, arg, got))
}

fn mismatch<T: Element>(op: &'static str, arg: &'static str, got: DType) -> Error {
    Error::new(ErrorKind::DTypeMismatch {
        op,
        arg,
        expected: T::DTYPE,
        got,
    })
}
