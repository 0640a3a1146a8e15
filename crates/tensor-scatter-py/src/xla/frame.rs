//! The C API's structures (`xla/ffi/api/c_api.h`, API 0.x) as far as a handler reads them, and
//! the checked reading of a call frame: its buffers as views, its attributes by name, and every
//! failure (a caught panic too) returned through the API's `XLA_FFI_Error_Create`.

use std::ffi::{CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::{NonNull, null_mut};

use tensor_scatter::{DType, DynTensor, DynView, DynViewMut, Element, Error, ErrorKind, Par};

use crate::segment::tensor_bytes;

#[repr(C)]
struct ExtensionBase {
    struct_size: usize,
    kind: c_int,
    next: *mut ExtensionBase,
}

#[repr(C)]
struct ApiVersion {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    major: c_int,
    minor: c_int,
}

#[repr(C)]
struct Metadata {
    struct_size: usize,
    api_version: ApiVersion,
    traits: u32,
}

#[repr(C)]
struct MetadataExtension {
    base: ExtensionBase,
    metadata: *mut Metadata,
}

#[repr(C)]
struct ByteSpan {
    ptr: *const c_char,
    len: usize,
}

#[repr(C)]
struct Scalar {
    dtype: c_int,
    value: *const c_void,
}

#[repr(C)]
struct Buffer {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    dtype: c_int,
    data: *mut c_void,
    rank: i64,
    dims: *const i64,
}

/// `XLA_FFI_Args` and `XLA_FFI_Rets` (the same layout).
#[repr(C)]
struct List {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const c_int,
    items: *const *mut c_void,
}

#[repr(C)]
struct Attrs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const c_int,
    names: *const *const ByteSpan,
    attrs: *const *const c_void,
}

/// `XLA_FFI_CallFrame`.
#[repr(C)]
pub struct CallFrame {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api: *const Api,
    ctx: *mut c_void,
    stage: c_int,
    args: List,
    rets: List,
    attrs: Attrs,
    future: *mut c_void,
}

#[repr(C)]
struct ErrorCreateArgs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    message: *const c_char,
    errc: c_int,
}

/// The head of `XLA_FFI_Api`: what a handler calls (`XLA_FFI_Error_Create`).
#[repr(C)]
struct Api {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api_version: ApiVersion,
    internal_api: *const c_void,
    error_create: Option<unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut c_void>,
}

/// `XLA_FFI_Error*`, opaque; null is success.
pub type FfiError = *mut c_void;

const API_MAJOR: c_int = 0;
const API_MINOR: c_int = 3;
const EXTENSION_METADATA: c_int = 1;
const STAGE_EXECUTE: c_int = 3;
const BUFFER: c_int = 1;
const ATTR_SCALAR: c_int = 3;
const ATTR_STRING: c_int = 4;
// Error codes (absl's).
const INVALID_ARGUMENT: c_int = 3;
const RESOURCE_EXHAUSTED: c_int = 8;
const OUT_OF_RANGE: c_int = 11;
const INTERNAL: c_int = 13;
/// `XLA_FFI_<struct>_STRUCT_SIZE`: up to the end of the field the C header names.
const CALL_FRAME_SIZE: usize = std::mem::offset_of!(CallFrame, future);
const BUFFER_SIZE: usize = std::mem::size_of::<Buffer>();
const METADATA_SIZE: usize = std::mem::offset_of!(Metadata, traits) + 4;
const METADATA_EXTENSION_SIZE: usize = std::mem::size_of::<MetadataExtension>();
const API_SIZE: usize = std::mem::offset_of!(Api, error_create) + 8;
/// More dims than any array has: a bound on what a malformed frame can make us read.
const MAX_RANK: i64 = 64;

/// Why a call failed: the message and the API's error code.
pub struct Failure(String, c_int);

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match e.kind() {
            ErrorKind::IndexOutOfRange { .. } | ErrorKind::NegativeIndex { .. } => OUT_OF_RANGE,
            ErrorKind::OutOfMemory { .. } => RESOURCE_EXHAUSTED,
            _ => INVALID_ARGUMENT,
        };
        Failure(e.to_string(), code)
    }
}

impl From<String> for Failure {
    fn from(m: String) -> Self {
        Failure(m, INVALID_ARGUMENT)
    }
}

pub type Res<T> = Result<T, Failure>;

/// An `XLA_FFI_Error` made by the API from `f` (null when the API cannot make one: a frame
/// without it is not XLA's, and nothing else can be reported).
///
/// # Safety
/// `api` is null or XLA's API table.
unsafe fn error(api: *const Api, f: Failure) -> FfiError {
    // SAFETY: the caller's contract; the size is checked before the field is read.
    let Some(create) = (unsafe { api.as_ref() })
        .filter(|a| a.struct_size >= API_SIZE)
        .and_then(|a| a.error_create)
    else {
        return null_mut();
    };
    let message = CString::new(f.0.replace('\0', " ")).unwrap_or_default();
    let mut args = ErrorCreateArgs {
        struct_size: std::mem::size_of::<ErrorCreateArgs>(),
        extension_start: null_mut(),
        message: message.as_ptr(),
        errc: f.1,
    };
    // SAFETY: XLA's function, given a complete argument struct; it copies the message.
    unsafe { create(&mut args) }
}

/// The metadata query XLA makes once per handler: the API version the handler speaks.
///
/// # Safety
/// `ext` is the frame's extension chain start, of the metadata kind.
unsafe fn metadata(api: *const Api, ext: *mut ExtensionBase) -> FfiError {
    // SAFETY: the caller's contract; each size is checked before a field past it is used.
    unsafe {
        let ext = ext.cast::<MetadataExtension>();
        if (*ext).base.struct_size < METADATA_EXTENSION_SIZE
            || (*ext).metadata.is_null()
            || (*(*ext).metadata).struct_size < METADATA_SIZE
        {
            return error(
                api,
                "tensor_scatter: the metadata query's structures are too small"
                    .to_string()
                    .into(),
            );
        }
        let m = &mut *(*ext).metadata;
        m.api_version = ApiVersion {
            struct_size: std::mem::size_of::<ApiVersion>(),
            extension_start: null_mut(),
            major: API_MAJOR,
            minor: API_MINOR,
        };
        m.traits = 0;
    }
    null_mut()
}

/// One buffer of the call, checked: a dtype the library has, dims >= 0 whose product fits,
/// data aligned for its dtype (and non-null unless empty). Read with no allocation (a call
/// of a few elements costs little more than XLA's own: `mod.rs`'s small scatter).
#[derive(Clone, Copy)]
pub struct Buf<'a> {
    pub dtype: DType,
    data: *mut u8,
    /// XLA's dims, each checked to be >= 0.
    pub dims: &'a [i64],
    /// The bytes the elements take.
    bytes: usize,
}

impl Default for Buf<'_> {
    fn default() -> Self {
        Buf {
            dtype: DType::U8,
            data: NonNull::<u64>::dangling().as_ptr().cast(),
            dims: &[],
            bytes: 0,
        }
    }
}

/// Up to `N` items of a call, held inline (a handler allocates nothing to read its call).
pub struct Inline<T, const N: usize> {
    items: [T; N],
    len: usize,
}

impl<T, const N: usize> std::ops::Deref for Inline<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items[..self.len]
    }
}

/// The most buffers of each list and attributes a call may have (the operators' calls have
/// at most 4 and 2 buffers and 10 attributes).
const MAX_BUFFERS: usize = 8;
const MAX_ATTRS: usize = 16;

fn dtype_of(code: c_int) -> Option<DType> {
    Some(match code {
        1 => DType::Bool,
        2 => DType::I8,
        3 => DType::I16,
        4 => DType::I32,
        5 => DType::I64,
        6 => DType::U8,
        7 => DType::U16,
        8 => DType::U32,
        9 => DType::U64,
        10 => DType::F16,
        11 => DType::F32,
        12 => DType::F64,
        16 => DType::BF16,
        _ => return None,
    })
}

impl<'a> Buf<'a> {
    /// # Safety
    /// `p` is null or points to an `XLA_FFI_Buffer` of XLA's (its data and dims live for
    /// `'a`, the call).
    unsafe fn read(p: *mut c_void, what: &str, i: usize) -> Res<Buf<'a>> {
        let bad = |m: String| Failure::from(format!("tensor_scatter: {what} {i}: {m}"));
        let b = p.cast::<Buffer>();
        // SAFETY: the caller's contract; the size is checked before the fields are read.
        let b = match unsafe { b.as_ref() } {
            Some(b) if b.struct_size >= BUFFER_SIZE => b,
            _ => return Err(bad("not a buffer".into())),
        };
        let dtype = dtype_of(b.dtype).ok_or_else(|| {
            bad(format!(
                "XLA dtype {} is not one tensor_scatter takes",
                b.dtype
            ))
        })?;
        if !(0..=MAX_RANK).contains(&b.rank) || (b.rank > 0 && b.dims.is_null()) {
            return Err(bad(format!("rank {} is invalid", b.rank)));
        }
        // A scalar's dims pointer may be null (no slice is made of it).
        let dims: &'a [i64] = if b.rank == 0 {
            &[]
        } else {
            // SAFETY: XLA's dims array holds `rank` values for the call (non-null: checked).
            unsafe { std::slice::from_raw_parts(b.dims, b.rank as usize) }
        };
        let mut n = 1usize;
        for &d in dims {
            let d =
                usize::try_from(d).map_err(|_| bad(format!("dims {dims:?} hold a negative")))?;
            n = n
                .checked_mul(d)
                .ok_or_else(|| bad(format!("dims {dims:?} overflow")))?;
        }
        let bytes = n
            .checked_mul(dtype.size_of())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| bad(format!("dims {dims:?} overflow")))?;
        let mut data = b.data.cast::<u8>();
        if bytes == 0 {
            data = NonNull::<u64>::dangling().as_ptr().cast(); // aligned, never read
        } else if data.is_null() || !(data as usize).is_multiple_of(dtype.size_of()) {
            return Err(bad("data is null or misaligned".into()));
        }
        if dtype == DType::Bool {
            // SAFETY: the buffer holds `bytes` bytes for the call.
            let v = unsafe { std::slice::from_raw_parts(data, bytes) };
            if v.iter().any(|&x| x > 1) {
                return Err(bad("a bool buffer holds bytes other than 0 and 1".into()));
            }
        }
        Ok(Buf {
            dtype,
            data,
            dims,
            bytes,
        })
    }

    /// The dims as the library takes them (each checked >= 0 by `read`).
    pub fn shape(&self) -> Vec<usize> {
        self.dims.iter().map(|&d| d as usize).collect()
    }

    fn strides(shape: &[usize]) -> Vec<isize> {
        let mut s = vec![1isize; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            s[d] = s[d + 1] * shape[d + 1].max(1) as isize;
        }
        s
    }

    pub fn view(&self) -> Res<DynView<'_>> {
        let shape = self.shape();
        // SAFETY: checked by `read`: a live, aligned buffer of this dtype and shape (bool bytes
        // 0 or 1), row-major; inputs are never written during the call.
        Ok(unsafe {
            DynView::from_raw_parts(self.dtype, self.data, &shape, &Self::strides(&shape))
        }?)
    }

    pub fn view_mut(&self) -> Res<DynViewMut<'_>> {
        // SAFETY: as `view`; a result buffer overlaps no input (`Call::new` checks) and only
        // this view writes it.
        let shape = self.shape();
        Ok(unsafe {
            DynViewMut::from_raw_parts(self.dtype, self.data, &shape, &Self::strides(&shape))
        }?)
    }

    /// The elements, when the buffer holds `T`s.
    pub fn slice<T: Element>(&self) -> Option<&[T]> {
        let len = self.bytes / std::mem::size_of::<T>();
        // SAFETY: checked by `read`: a live buffer of `self.dtype` (here `T`'s), aligned for
        // it, of `bytes` bytes (bool bytes 0 or 1); inputs are never written during the call.
        (T::DTYPE == self.dtype)
            .then(|| unsafe { std::slice::from_raw_parts(self.data.cast::<T>(), len) })
    }

    /// The elements of a result buffer, to write, when it holds `T`s.
    #[allow(clippy::mut_from_ref)] // XLA's memory, written by this view alone (as `view_mut`)
    pub fn slice_mut<T: Element>(&self) -> Option<&mut [T]> {
        let len = self.bytes / std::mem::size_of::<T>();
        // SAFETY: as `slice`; a result buffer overlaps no other buffer (`Call::new` checks)
        // and the handler makes one view of it at a time.
        (T::DTYPE == self.dtype)
            .then(|| unsafe { std::slice::from_raw_parts_mut(self.data.cast::<T>(), len) })
    }

    fn span(&self) -> (usize, usize) {
        (self.data as usize, self.data as usize + self.bytes)
    }

    /// Copies the library's result `t` here, after checking its dtype and shape.
    pub fn receive(&self, t: &DynTensor, name: &str, what: &str) -> Res<()> {
        let shape = self.shape();
        if t.dtype() != self.dtype || t.shape() != shape.as_slice() {
            return Err(format!(
                "{name}: the result {what} is {} {:?}, but XLA's buffer is {} {:?} (the shapes \
                 given to ffi_call do not match the call)",
                t.dtype(),
                t.shape(),
                self.dtype,
                shape
            )
            .into());
        }
        let src = tensor_bytes(t);
        // SAFETY: the buffer holds exactly `src.len()` bytes (same dtype and shape) and is
        // XLA's, apart from the library's vector.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.data, src.len()) };
        Ok(())
    }
}

/// An attribute's value.
#[derive(Clone, Copy)]
enum Attr<'a> {
    Int(i64),
    /// Its bytes (UTF-8 checked when the handler asks for it).
    Str(&'a [u8]),
}

/// A checked call frame: its buffers and attributes.
pub struct Call<'a> {
    pub args: Inline<Buf<'a>, MAX_BUFFERS>,
    pub rets: Inline<Buf<'a>, MAX_BUFFERS>,
    /// Names as bytes: looked up by comparing bytes, no UTF-8 check per call.
    attrs: Inline<(&'a [u8], Attr<'a>), MAX_ATTRS>,
}

/// # Safety
/// `l` is XLA's list of `size` entries.
unsafe fn buffers<'a>(l: &List, what: &str) -> Res<Inline<Buf<'a>, MAX_BUFFERS>> {
    let valid = (0..=MAX_BUFFERS as i64).contains(&l.size)
        && (l.size == 0 || !(l.types.is_null() || l.items.is_null()));
    if !valid {
        return Err(format!("tensor_scatter: the call frame's {what} list is invalid").into());
    }
    let mut bufs = Inline {
        items: [Buf::default(); MAX_BUFFERS],
        len: l.size as usize,
    };
    for (i, b) in bufs.items[..l.size as usize].iter_mut().enumerate() {
        // SAFETY: the lists hold `size` entries.
        let (ty, p) = unsafe { (*l.types.add(i), *l.items.add(i)) };
        if ty != BUFFER {
            return Err(format!("tensor_scatter: {what} {i} is not a buffer").into());
        }
        // SAFETY: an entry of type BUFFER is an XLA_FFI_Buffer, alive for the call.
        *b = unsafe { Buf::read(p, what, i) }?;
    }
    Ok(bufs)
}

impl<'a> Call<'a> {
    /// # Safety
    /// `f` is XLA's call frame, alive for `'a`.
    unsafe fn new(f: &'a CallFrame) -> Res<Call<'a>> {
        // SAFETY: the caller's contract.
        let (args, rets) = unsafe { (buffers(&f.args, "argument")?, buffers(&f.rets, "result")?) };
        for (r, o) in rets.iter().enumerate() {
            let (lo, hi) = o.span();
            let clash = args.iter().chain(rets.iter().skip(r + 1)).any(|b| {
                let (a, z) = b.span();
                lo < z && a < hi
            });
            if clash {
                return Err(format!("tensor_scatter: result {r} overlaps another buffer").into());
            }
        }
        let a = &f.attrs;
        if a.size < 0
            || a.size > MAX_ATTRS as i64
            || (a.size > 0 && (a.types.is_null() || a.names.is_null() || a.attrs.is_null()))
        {
            return Err("tensor_scatter: the call frame's attributes are invalid"
                .to_string()
                .into());
        }
        let mut attrs = Inline {
            items: [(&[][..], Attr::Int(0)); MAX_ATTRS],
            len: 0,
        };
        for i in 0..a.size as usize {
            // SAFETY: the attribute lists hold `size` entries; names are byte spans.
            let (ty, name, value) =
                unsafe { (*a.types.add(i), &**a.names.add(i), *a.attrs.add(i)) };
            // SAFETY: as above.
            let raw = unsafe { bytes(name) }?;
            // Shown in a message only (checking each name's UTF-8 per call costs time).
            let name = || String::from_utf8_lossy(raw);
            if value.is_null() {
                return Err(format!("tensor_scatter: attribute {} is null", name()).into());
            }
            let v = match ty {
                // SAFETY: a STRING attribute is a byte span.
                ATTR_STRING => Attr::Str(unsafe { bytes(&*value.cast::<ByteSpan>()) }?),
                ATTR_SCALAR => {
                    // SAFETY: a SCALAR attribute is an XLA_FFI_Scalar.
                    let s = unsafe { &*value.cast::<Scalar>() };
                    if s.value.is_null() {
                        return Err(format!("tensor_scatter: attribute {} is null", name()).into());
                    }
                    // SAFETY: the scalar's value has its dtype.
                    Attr::Int(unsafe {
                        match s.dtype {
                            1 | 6 => i64::from(*s.value.cast::<u8>()),
                            2 => i64::from(*s.value.cast::<i8>()),
                            4 => i64::from(*s.value.cast::<i32>()),
                            5 => *s.value.cast::<i64>(),
                            t => {
                                return Err(format!(
                                    "tensor_scatter: attribute {}: XLA dtype {t} is not an \
                                     integer or bool",
                                    name()
                                )
                                .into());
                            }
                        }
                    })
                }
                t => {
                    return Err(format!("tensor_scatter: attribute {} has type {t}", name()).into());
                }
            };
            attrs.items[attrs.len] = (raw, v);
            attrs.len += 1;
        }
        Ok(Call { args, rets, attrs })
    }

    fn find(&self, key: &str) -> Res<&Attr<'a>> {
        self.attrs
            .iter()
            .find(|(n, _)| *n == key.as_bytes())
            .map(|(_, v)| v)
            .ok_or_else(|| format!("tensor_scatter: attribute {key} is missing").into())
    }

    pub fn int(&self, key: &str) -> Res<i64> {
        match self.find(key)? {
            Attr::Int(v) => Ok(*v),
            Attr::Str(_) => {
                Err(format!("tensor_scatter: attribute {key} is not an integer").into())
            }
        }
    }

    pub fn flag(&self, key: &str) -> Res<bool> {
        match self.int(key)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(format!("tensor_scatter: attribute {key}: {v} is not a bool").into()),
        }
    }

    pub fn text(&self, key: &str) -> Res<&'a str> {
        match self.find(key)? {
            Attr::Str(s) => std::str::from_utf8(s)
                .map_err(|_| format!("tensor_scatter: attribute {key} is not UTF-8").into()),
            Attr::Int(_) => Err(format!("tensor_scatter: attribute {key} is not a string").into()),
        }
    }

    pub fn threads(&self) -> Res<Par> {
        let n = usize::try_from(self.int("threads")?)
            .map_err(|_| "tensor_scatter: attribute threads is negative".to_string())?;
        Ok(Par::threads_exact(n))
    }

    /// Checks the counts of buffers (`args` a range: optional trailing ones).
    pub fn arity(&self, name: &str, args: std::ops::RangeInclusive<usize>, rets: usize) -> Res<()> {
        if !args.contains(&self.args.len()) || self.rets.len() != rets {
            return Err(format!(
                "{name}: the call has {} arguments and {} results; expected {:?} and {rets}",
                self.args.len(),
                self.rets.len(),
                args
            )
            .into());
        }
        Ok(())
    }
}

/// # Safety
/// `s` is a byte span alive for `'a`.
unsafe fn bytes<'a>(s: &ByteSpan) -> Res<&'a [u8]> {
    if s.ptr.is_null() && s.len > 0 {
        return Err("tensor_scatter: a name is null".to_string().into());
    }
    Ok(if s.len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len) }
    })
}

/// A handler's body: the frame checked, `run` called, every failure (a caught panic too)
/// returned through the API.
///
/// # Safety
/// `frame` is null or XLA's call frame for this call.
pub unsafe fn handle(frame: *mut CallFrame, run: fn(&Call<'_>) -> Res<()>) -> FfiError {
    // SAFETY: the caller's contract.
    let Some(f) = (unsafe { frame.as_ref() }) else {
        return null_mut();
    };
    if f.struct_size < CALL_FRAME_SIZE {
        // SAFETY: the API pointer precedes every field a smaller frame could lack.
        return unsafe {
            error(
                f.api,
                "tensor_scatter: the call frame is too small"
                    .to_string()
                    .into(),
            )
        };
    }
    // SAFETY: a non-null extension start is an extension header.
    if let Some(ext) = unsafe { f.extension_start.as_ref() }
        && ext.kind == EXTENSION_METADATA
    {
        // SAFETY: the extension is of the metadata kind.
        return unsafe { metadata(f.api, f.extension_start) };
    }
    if f.stage != STAGE_EXECUTE {
        let m = format!(
            "tensor_scatter: called at stage {}; only execute is handled",
            f.stage
        );
        // SAFETY: XLA's API.
        return unsafe { error(f.api, m.into()) };
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: XLA's frame, alive for the call.
        let call = unsafe { Call::new(f) }?;
        run(&call)
    }));
    let failure = match result {
        Ok(Ok(())) => return null_mut(),
        Ok(Err(e)) => e,
        Err(_) => Failure(
            "tensor_scatter: a panic was caught at the FFI boundary (a bug: please report it)"
                .into(),
            INTERNAL,
        ),
    };
    // SAFETY: XLA's API.
    unsafe { error(f.api, failure) }
}
