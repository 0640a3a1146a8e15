//! The C API's structures (`xla/ffi/api/c_api.h`, API 0.x) as far as a handler reads them, and
//! the checked reading of a call frame: its buffers as views, its attributes by name, and every
//! failure (a caught panic too) returned through the API's `XLA_FFI_Error_Create`.

use std::ffi::{CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::{NonNull, null_mut};

use tensor_scatter::{DType, DynTensor, DynView, DynViewMut, Error, ErrorKind, Par};

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
/// data aligned for its dtype (and non-null unless empty).
pub struct Buf {
    pub dtype: DType,
    data: *mut u8,
    pub shape: Vec<usize>,
    /// The bytes the elements take.
    bytes: usize,
}

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

impl Buf {
    /// # Safety
    /// `p` is null or points to an `XLA_FFI_Buffer` of XLA's (its data and dims live for the
    /// call).
    unsafe fn read(p: *mut c_void, what: &str, i: usize) -> Res<Buf> {
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
        // SAFETY: XLA's dims array holds `rank` values for the call.
        let dims = unsafe { std::slice::from_raw_parts(b.dims, b.rank as usize) };
        let mut shape = Vec::with_capacity(dims.len());
        let mut n = 1usize;
        for &d in dims {
            let d =
                usize::try_from(d).map_err(|_| bad(format!("dims {dims:?} hold a negative")))?;
            n = n
                .checked_mul(d)
                .ok_or_else(|| bad(format!("dims {dims:?} overflow")))?;
            shape.push(d);
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
            shape,
            bytes,
        })
    }

    fn strides(&self) -> Vec<isize> {
        let mut s = vec![1isize; self.shape.len()];
        for d in (0..self.shape.len().saturating_sub(1)).rev() {
            s[d] = s[d + 1] * self.shape[d + 1].max(1) as isize;
        }
        s
    }

    pub fn view(&self) -> Res<DynView<'_>> {
        // SAFETY: checked by `read`: a live, aligned buffer of this dtype and shape (bool bytes
        // 0 or 1), row-major; inputs are never written during the call.
        Ok(
            unsafe {
                DynView::from_raw_parts(self.dtype, self.data, &self.shape, &self.strides())
            }?,
        )
    }

    pub fn view_mut(&self) -> Res<DynViewMut<'_>> {
        // SAFETY: as `view`; a result buffer overlaps no input (`Call::new` checks) and only
        // this view writes it.
        Ok(unsafe {
            DynViewMut::from_raw_parts(self.dtype, self.data, &self.shape, &self.strides())
        }?)
    }

    fn span(&self) -> (usize, usize) {
        (self.data as usize, self.data as usize + self.bytes)
    }

    /// Copies the library's result `t` here, after checking its dtype and shape.
    pub fn receive(&self, t: &DynTensor, name: &str, what: &str) -> Res<()> {
        if t.dtype() != self.dtype || t.shape() != self.shape.as_slice() {
            return Err(format!(
                "{name}: the result {what} is {} {:?}, but XLA's buffer is {} {:?} (the shapes \
                 given to ffi_call do not match the call)",
                t.dtype(),
                t.shape(),
                self.dtype,
                self.shape
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
enum Attr<'a> {
    Int(i64),
    Str(&'a str),
}

/// A checked call frame: its buffers and attributes.
pub struct Call<'a> {
    pub args: Vec<Buf>,
    pub rets: Vec<Buf>,
    attrs: Vec<(&'a str, Attr<'a>)>,
}

/// # Safety
/// `l` is XLA's list of `size` entries.
unsafe fn buffers(l: &List, what: &str) -> Res<Vec<Buf>> {
    if l.size < 0 || l.size > 16 || (l.size > 0 && (l.types.is_null() || l.items.is_null())) {
        return Err(format!("tensor_scatter: the call frame's {what} list is invalid").into());
    }
    (0..l.size as usize)
        .map(|i| {
            // SAFETY: the lists hold `size` entries.
            let (ty, p) = unsafe { (*l.types.add(i), *l.items.add(i)) };
            if ty != BUFFER {
                return Err(format!("tensor_scatter: {what} {i} is not a buffer").into());
            }
            // SAFETY: an entry of type BUFFER is an XLA_FFI_Buffer.
            unsafe { Buf::read(p, what, i) }
        })
        .collect()
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
            || a.size > 64
            || (a.size > 0 && (a.types.is_null() || a.names.is_null() || a.attrs.is_null()))
        {
            return Err("tensor_scatter: the call frame's attributes are invalid"
                .to_string()
                .into());
        }
        let mut attrs = Vec::with_capacity(a.size as usize);
        for i in 0..a.size as usize {
            // SAFETY: the attribute lists hold `size` entries; names are byte spans.
            let (ty, name, value) =
                unsafe { (*a.types.add(i), &**a.names.add(i), *a.attrs.add(i)) };
            // SAFETY: as above.
            let name = unsafe { text(name) }?;
            if value.is_null() {
                return Err(format!("tensor_scatter: attribute {name} is null").into());
            }
            let v = match ty {
                // SAFETY: a STRING attribute is a byte span.
                ATTR_STRING => Attr::Str(unsafe { text(&*value.cast::<ByteSpan>()) }?),
                ATTR_SCALAR => {
                    // SAFETY: a SCALAR attribute is an XLA_FFI_Scalar.
                    let s = unsafe { &*value.cast::<Scalar>() };
                    if s.value.is_null() {
                        return Err(format!("tensor_scatter: attribute {name} is null").into());
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
                                    "tensor_scatter: attribute {name}: XLA dtype {t} is not an \
                                     integer or bool"
                                )
                                .into());
                            }
                        }
                    })
                }
                t => return Err(format!("tensor_scatter: attribute {name} has type {t}").into()),
            };
            attrs.push((name, v));
        }
        Ok(Call { args, rets, attrs })
    }

    fn find(&self, key: &str) -> Res<&Attr<'a>> {
        self.attrs
            .iter()
            .find(|(n, _)| *n == key)
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
            Attr::Str(s) => Ok(s),
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
unsafe fn text<'a>(s: &ByteSpan) -> Res<&'a str> {
    if s.ptr.is_null() && s.len > 0 {
        return Err("tensor_scatter: a name is null".to_string().into());
    }
    let bytes: &[u8] = if s.len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len) }
    };
    std::str::from_utf8(bytes).map_err(|_| "tensor_scatter: a name is not UTF-8".to_string().into())
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
