//! Arguments as the native half reads them, where they lie: NumPy arrays through the NumPy C
//! API, CPU tensors of PyTorch through their attributes (data pointer, shape, strides, dtype),
//! and the arrays the Python half prepared ([`Prepared`]), whatever their strides
//! (stepped and sliced layouts included: the library never touches the positions between
//! the elements). Anything else, or anything the library cannot read as it is (foreign byte
//! order, misaligned, strides that are not whole elements, bool bytes other than 0 and 1), is
//! `None`: the Python half then converts it and calls again.

use std::ffi::{c_int, c_void};

use numpy::npyffi::{self, NPY_ARRAY_ALIGNED, NPY_ARRAY_WRITEABLE, PY_ARRAY_API};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use tensor_scatter::{DType, DynView, DynViewMut, element_span, gap_free_span};

use crate::dlpack;
use crate::errors::{Raised, raise};

/// Where an operand came from, which decides the kind of a result built from it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    NumPy,
    Torch,
}

/// One argument, borrowed: the caller holds `obj` for the call.
pub struct Operand<'py> {
    pub obj: Bound<'py, PyAny>,
    /// The NumPy array when the operand is one (its descr makes results of the same dtype).
    pub array: Option<Bound<'py, PyUntypedArray>>,
    pub kind: Kind,
    pub dtype: DType,
    /// Element `[0, ..., 0]`.
    pub origin: *mut u8,
    pub shape: Vec<usize>,
    /// Strides in elements.
    pub strides: Vec<isize>,
    /// The bytes from the lowest to one past the highest element.
    span: (usize, usize),
    pub writeable: bool,
    /// Prepared by the Python half (`Prepared`): taken as it is.
    pub prepared: bool,
}

/// An array the Python half prepared, with the dtype of its bits (a torch bfloat16 tensor's
/// int16 view is bfloat16): what its general path hands back, always accepted.
#[pyclass(frozen, module = "tensor_scatter._native")]
pub struct Prepared {
    array: Py<PyUntypedArray>,
    dtype: DType,
}

#[pymethods]
impl Prepared {
    #[new]
    fn new(array: Bound<'_, PyUntypedArray>, dtype: &str) -> PyResult<Self> {
        let dtype = dtype.parse().map_err(|e: tensor_scatter::Error| {
            pyo3::exceptions::PyValueError::new_err(e.to_string())
        })?;
        Ok(Prepared {
            array: array.unbind(),
            dtype,
        })
    }
}

/// The ml_dtypes bfloat16 scalar type, once a process has imported ml_dtypes.
static BFLOAT16: PyOnceLock<Py<PyType>> = PyOnceLock::new();
/// `torch.Tensor`, once a process has imported torch.
static TORCH_TENSOR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
/// `torch.strided` and torch's dtypes with the library's, read once (torch is imported: one
/// of its tensors was given).
static TORCH_CONSTANTS: PyOnceLock<TorchConstants> = PyOnceLock::new();

/// What a torch tensor is read with: `torch.strided`, torch's dtypes with the library's, and
/// the DLPack exchange table of torch versions that have one.
struct TorchConstants {
    strided: Py<PyAny>,
    dtypes: Vec<(Py<PyAny>, DType)>,
    exchange: Option<&'static dlpack::ExchangeApi>,
}

fn torch_constants(py: Python<'_>) -> Option<&TorchConstants> {
    TORCH_CONSTANTS
        .get_or_try_init(py, || -> PyResult<TorchConstants> {
            let torch = py.import("torch")?;
            let dtypes = [
                ("float64", DType::F64),
                ("float32", DType::F32),
                ("float16", DType::F16),
                ("bfloat16", DType::BF16),
                ("int64", DType::I64),
                ("int32", DType::I32),
                ("int16", DType::I16),
                ("int8", DType::I8),
                ("uint64", DType::U64),
                ("uint32", DType::U32),
                ("uint16", DType::U16),
                ("uint8", DType::U8),
                ("bool", DType::Bool),
            ]
            .into_iter()
            .map(|(name, t)| Ok((torch.getattr(name)?.unbind(), t)))
            .collect::<PyResult<_>>()?;
            let tensor = torch.getattr("Tensor")?;
            Ok(TorchConstants {
                strided: torch.getattr("strided")?.unbind(),
                dtypes,
                exchange: dlpack::ExchangeApi::of(&tensor),
            })
        })
        .ok()
}

/// `module.name`, cached in `cell` once the process has imported `module` (never imports it:
/// an object of that type cannot exist before).
fn imported_type<'a>(
    py: Python<'_>,
    cell: &'a PyOnceLock<Py<PyType>>,
    module: &str,
    name: &str,
) -> Option<&'a Py<PyType>> {
    if let Some(t) = cell.get(py) {
        return Some(t);
    }
    let modules = py.import("sys").ok()?.getattr("modules").ok()?;
    let t = modules.get_item(module).ok()?.getattr(name).ok()?;
    let t = t.cast_into::<PyType>().ok()?.unbind();
    Some(cell.get_or_init(py, || t))
}

fn is_torch_tensor(obj: &Bound<'_, PyAny>) -> bool {
    let py = obj.py();
    imported_type(py, &TORCH_TENSOR, "torch", "Tensor")
        .is_some_and(|t| obj.is_instance(t.bind(py)).unwrap_or(false))
}

fn dtype_of(descr: &Bound<'_, PyArrayDescr>) -> Option<DType> {
    let size = descr.itemsize();
    Some(match (descr.kind(), size) {
        (b'b', 1) => DType::Bool,
        (b'i', 1) => DType::I8,
        (b'i', 2) => DType::I16,
        (b'i', 4) => DType::I32,
        (b'i', 8) => DType::I64,
        (b'u', 1) => DType::U8,
        (b'u', 2) => DType::U16,
        (b'u', 4) => DType::U32,
        (b'u', 8) => DType::U64,
        (b'f', 2) => DType::F16,
        (b'f', 4) => DType::F32,
        (b'f', 8) => DType::F64,
        (_, 2) => {
            let py = descr.py();
            let t = imported_type(py, &BFLOAT16, "ml_dtypes", "bfloat16")?;
            if !descr.typeobj().is(t.bind(py)) {
                return None;
            }
            DType::BF16
        }
        _ => return None,
    })
}

/// The bytes from the lowest to one past the highest element (`(0, 0)` for no elements),
/// gaps between the elements included; `None` when a position overflows.
fn byte_span(
    origin: *mut u8,
    dtype: DType,
    shape: &[usize],
    strides: &[isize],
) -> Option<(usize, usize)> {
    if shape.contains(&0) {
        return Some((0, 0));
    }
    let (lo, hi) = element_span(shape, strides)?;
    let size = dtype.size_of() as isize;
    let o = origin as isize;
    let end = hi.checked_add(1)?.checked_mul(size)?;
    Some(((o + lo.checked_mul(size)?) as usize, (o + end) as usize))
}

impl<'py> Operand<'py> {
    /// An input borrowed where it lies, or `None` when the Python half must convert it first.
    pub fn read(obj: &Bound<'py, PyAny>) -> Option<Self> {
        Self::output(obj).filter(Operand::bool_bytes_valid)
    }

    /// An output, as [`Operand::read`] but without reading its elements (whatever bytes a
    /// new bool array holds are overwritten).
    pub fn output(obj: &Bound<'py, PyAny>) -> Option<Self> {
        let op = if let Ok(a) = obj.cast::<PyUntypedArray>() {
            Self::numpy(obj, a, None)?
        } else if let Ok(p) = obj.cast::<Prepared>() {
            let p = p.get();
            let a = p.array.bind(obj.py());
            let mut o = Self::numpy(a.as_any(), a, Some(p.dtype))?;
            o.prepared = true;
            o
        } else if is_torch_tensor(obj) {
            Self::torch(obj)?
        } else {
            return None;
        };
        Some(op)
    }

    fn numpy(
        obj: &Bound<'py, PyAny>,
        a: &Bound<'py, PyUntypedArray>,
        dtype: Option<DType>,
    ) -> Option<Self> {
        let descr = a.dtype();
        if descr.is_native_byteorder() == Some(false) {
            return None;
        }
        let item = descr.itemsize();
        let dtype = match dtype {
            Some(t) if t.size_of() == item => t,
            Some(_) => return None,
            None => dtype_of(&descr)?,
        };
        // SAFETY: `a` is a live NumPy array; its fields are read under the GIL.
        let (origin, flags) = unsafe {
            let f = &*npyffi::_PyArray_GET_ITEM_DATA(a.as_array_ptr());
            (f.data as *mut u8, f.flags)
        };
        if flags & NPY_ARRAY_ALIGNED == 0 {
            return None;
        }
        let shape = a.shape().to_vec();
        let mut strides = Vec::with_capacity(shape.len());
        for &s in a.strides() {
            if s % item as isize != 0 {
                return None;
            }
            strides.push(s / item as isize);
        }
        let span = byte_span(origin, dtype, &shape, &strides)?;
        Some(Operand {
            obj: obj.clone(),
            array: Some(a.clone()),
            kind: Kind::NumPy,
            dtype,
            origin,
            shape,
            strides,
            span,
            writeable: flags & NPY_ARRAY_WRITEABLE != 0,
            prepared: false,
        })
    }

    /// A CPU tensor read through its attributes (`data_ptr()`, `shape`, `stride()`, `dtype`;
    /// about 1.7 us a tensor with torch 2.15, where `.numpy()` costs 1.5). What `.numpy()` refuses
    /// is `None` here too, tested before anything else (a refusal torch raises costs 15 us):
    /// a tensor that requires grad (the Python half records it), one off the CPU, a sparse
    /// layout, a negative view, a dtype the library lacks (complex, so no conjugate view).
    fn torch(obj: &Bound<'py, PyAny>) -> Option<Self> {
        let py = obj.py();
        let TorchConstants {
            strided,
            dtypes,
            exchange,
        } = torch_constants(py)?;
        if let Some(api) = exchange
            && TORCH_TENSOR
                .get(py)
                .is_some_and(|t| obj.get_type().is(t.bind(py)))
        {
            return Self::torch_dlpack(obj, api);
        }
        if obj
            .getattr(intern!(py, "requires_grad"))
            .ok()?
            .is_truthy()
            .ok()?
            || !obj.getattr(intern!(py, "is_cpu")).ok()?.is_truthy().ok()?
            || !obj
                .getattr(intern!(py, "layout"))
                .ok()?
                .is(strided.bind(py))
            || obj
                .call_method0(intern!(py, "is_neg"))
                .ok()?
                .is_truthy()
                .ok()?
        {
            return None;
        }
        let dt = obj.getattr(intern!(py, "dtype")).ok()?;
        let dtype = dtypes.iter().find(|(d, _)| d.bind(py).is(&dt))?.1;
        let origin = obj
            .call_method0(intern!(py, "data_ptr"))
            .ok()?
            .extract::<usize>()
            .ok()?;
        let shape: Vec<usize> = obj.getattr(intern!(py, "shape")).ok()?.extract().ok()?;
        let strides: Vec<isize> = obj
            .call_method0(intern!(py, "stride"))
            .ok()?
            .extract()
            .ok()?;
        if strides.len() != shape.len() {
            return None;
        }
        Self::tensor(obj, dtype, origin as *mut u8, shape, strides)
    }

    /// A CPU tensor's operand (always writeable, as torch's own `out=` are), or `None` when
    /// its first element is misaligned, its elements' span overflows, or it has elements
    /// but no data (a `ZeroTensor`, autograd's zeros without memory: its data pointer is 0).
    fn tensor(
        obj: &Bound<'py, PyAny>,
        dtype: DType,
        origin: *mut u8,
        shape: Vec<usize>,
        strides: Vec<isize>,
    ) -> Option<Self> {
        if !(origin as usize).is_multiple_of(dtype.size_of())
            || origin.is_null() && !shape.contains(&0)
        {
            return None;
        }
        let span = byte_span(origin, dtype, &shape, &strides)?;
        Some(Operand {
            obj: obj.clone(),
            array: None,
            kind: Kind::Torch,
            dtype,
            origin,
            shape,
            strides,
            span,
            writeable: true,
            prepared: false,
        })
    }

    /// A `torch.Tensor` (the type itself: a subclass may answer attributes its own way) read
    /// through torch's DLPack exchange table: one C call for the data pointer, device, dtype,
    /// shape and strides (about 0.2 us, where the attributes cost 1.7). The table does not see
    /// what `.numpy()` refuses, so a float tensor is asked after it whether it requires grad
    /// or is a negative view (about 0.2 us each). No other dtype can require grad, and only a
    /// float one is a negative view through torch's public API (the imaginary part of a
    /// conjugate view); only the private `torch._neg_view` makes others. A sparse layout, a
    /// tensor without storage (vmap's, functorch's wrappers) or a dtype DLPack lacks makes
    /// the call fail, and is `None` as on the attribute path.
    fn torch_dlpack(obj: &Bound<'py, PyAny>, api: &dlpack::ExchangeApi) -> Option<Self> {
        let py = obj.py();
        let t = api.read(obj)?;
        let dtype = t.dtype()?;
        if dtype.is_float()
            && (obj
                .getattr(intern!(py, "requires_grad"))
                .ok()?
                .is_truthy()
                .ok()?
                || obj
                    .call_method0(intern!(py, "is_neg"))
                    .ok()?
                    .is_truthy()
                    .ok()?)
        {
            return None;
        }
        let (origin, shape, strides) = t.layout()?;
        Self::tensor(obj, dtype, origin, shape, strides)
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .unwrap_or(usize::MAX)
    }

    /// Whether the memory of `self` and `other` may overlap (their spans intersect).
    pub fn overlaps(&self, other: &Operand<'_>) -> bool {
        let (a, b) = (self.span, other.span);
        a.0 < a.1 && b.0 < b.1 && a.0 < b.1 && b.0 < a.1
    }

    /// Whether `self` and `other` are the same elements in the same layout.
    pub fn same_view(&self, other: &Operand<'_>) -> bool {
        self.origin == other.origin
            && self.dtype == other.dtype
            && self.shape == other.shape
            && self.strides == other.strides
    }

    fn bool_bytes_valid(&self) -> bool {
        if self.dtype != DType::Bool {
            return true;
        }
        let (lo, hi) = self.span;
        if gap_free_span(&self.shape, &self.strides).is_some() {
            // SAFETY: the operand has no gaps, so its span is exactly its elements' bytes,
            // alive while `obj` is held.
            let bytes = unsafe { std::slice::from_raw_parts(lo as *const u8, hi - lo) };
            return bytes.iter().all(|&b| b <= 1);
        }
        // With gaps, element by element: the positions between them are not ours to read.
        let mut coord = vec![0usize; self.shape.len()];
        let mut at = 0isize;
        loop {
            // SAFETY: `at` is the offset of the in-shape coordinate `coord` (bool elements
            // are bytes), one of the operand's elements, alive while `obj` is held.
            if unsafe { *self.origin.offset(at) } > 1 {
                return false;
            }
            let mut d = self.shape.len();
            loop {
                if d == 0 {
                    return true;
                }
                d -= 1;
                coord[d] += 1;
                at += self.strides[d];
                if coord[d] < self.shape[d] {
                    break;
                }
                at -= self.strides[d] * self.shape[d] as isize;
                coord[d] = 0;
            }
        }
    }

    /// The library's read-only view.
    ///
    /// # Safety
    /// Nothing writes the operand's elements while the view lives (the caller holds `self`).
    pub unsafe fn view<'a>(&self) -> Result<DynView<'a>, Raised> {
        // SAFETY: aligned (checked), the elements of one array, bool bytes checked, alive while
        // `self` is held; unwritten by the caller's contract.
        unsafe { DynView::from_raw_parts(self.dtype, self.origin, &self.shape, &self.strides) }
            .map_err(|e| raise(self.obj.py(), &e))
    }

    /// The library's writable view.
    ///
    /// # Safety
    /// As [`Operand::view`], and nothing else reads the elements while the view lives.
    pub unsafe fn view_mut<'a>(&self) -> Result<DynViewMut<'a>, Raised> {
        // SAFETY: as `view`, exclusive by the caller's contract.
        unsafe { DynViewMut::from_raw_parts(self.dtype, self.origin, &self.shape, &self.strides) }
            .map_err(|e| raise(self.obj.py(), &e))
    }

    /// A new C-order array for a result of this operand's dtype and `shape`: a NumPy array of
    /// the same descr (int16 bits for a bfloat16 tensor), returned with its operand.
    pub fn empty(&self, shape: &[usize]) -> PyResult<Operand<'py>> {
        let py = self.obj.py();
        if self.kind == Kind::Torch
            && let Some(o) = self.small_tensor(shape)?
        {
            return Ok(o);
        }
        let descr = match &self.array {
            Some(a) => a.dtype(),
            None => numpy_descr(py, self.dtype)?,
        };
        let mut dims: Vec<npyffi::npy_intp> =
            shape.iter().map(|&d| d as npyffi::npy_intp).collect();
        // SAFETY: PyArray_NewFromDescr steals the descr reference it is given; the dims are
        // `shape.len()` values; null strides and data ask for a new C-order buffer.
        let obj = unsafe {
            let p = PY_ARRAY_API.PyArray_NewFromDescr(
                py,
                npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type),
                descr.into_dtype_ptr(),
                dims.len() as c_int,
                dims.as_mut_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut::<c_void>(),
                0,
                std::ptr::null_mut(),
            );
            Bound::from_owned_ptr_or_err(py, p)?
        };
        let a = obj.cast::<PyUntypedArray>()?.clone();
        let mut o = Operand::numpy(&obj, &a, Some(self.dtype))
            .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("new array unreadable"))?;
        o.kind = self.kind;
        Ok(o)
    }
}

/// NumPy advises huge pages for an array from this many bytes on (`madvise`; its first touch
/// then costs a quarter of plain memory's here); below it both are plain `malloc` memory.
const HUGE_PAGES_FROM: usize = 1 << 22;

impl<'py> Operand<'py> {
    /// A new torch tensor of `self`'s dtype (C order), through torch's DLPack import: torch's
    /// own allocation from Python costs a small call's time again, as does `torch.from_numpy`
    /// over a new NumPy array. `None` (NumPy memory then, wrapped by `torch.from_numpy`) from
    /// NumPy's huge page size on (NumPy's memory is cheaper to touch first there; the call's
    /// cost does not matter), or for a torch without the import.
    fn small_tensor(&self, shape: &[usize]) -> PyResult<Option<Operand<'py>>> {
        let py = self.obj.py();
        let bytes = shape
            .iter()
            .try_fold(self.dtype.size_of(), |b, &d| b.checked_mul(d));
        let (Some(bytes), Some(api)) = (bytes.filter(|&b| b < HUGE_PAGES_FROM), torch_import(py))
        else {
            return Ok(None);
        };
        // Whole words: aligned for every dtype. Zeroed (a few words: no measurable cost), so
        // that no path can read what was there before.
        let mut words = vec![0u64; bytes.div_ceil(8)];
        let origin = words.as_mut_ptr().cast::<u8>();
        let strides = c_order(shape);
        let obj = api.tensor(py, origin, self.dtype, shape, &strides, Box::new(words))?;
        let span = byte_span(origin, self.dtype, shape, &strides)
            .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("new tensor unreadable"))?;
        Ok(Some(Operand {
            obj,
            array: None,
            kind: Kind::Torch,
            dtype: self.dtype,
            origin,
            shape: shape.to_vec(),
            strides,
            span,
            writeable: true,
            prepared: false,
        }))
    }
}

/// torch's DLPack exchange table, when torch has been imported and its table can make tensors
/// of memory of ours.
pub(crate) fn torch_import(py: Python<'_>) -> Option<&'static dlpack::ExchangeApi> {
    TORCH_CONSTANTS
        .get(py)
        .and_then(|c| c.exchange)
        .filter(|api| api.makes_tensors())
}

/// Row-major strides, in elements, of `shape`.
pub(crate) fn c_order(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![1isize; shape.len()];
    for k in (1..shape.len()).rev() {
        strides[k - 1] = strides[k] * shape[k].max(1) as isize;
    }
    strides
}

/// The NumPy dtype for a result of library dtype `t` (int16 bits for bfloat16, which NumPy
/// has only through ml_dtypes).
fn numpy_descr(py: Python<'_>, t: DType) -> PyResult<Bound<'_, PyArrayDescr>> {
    let name = if t == DType::BF16 { "int16" } else { t.name() };
    PyArrayDescr::new(py, name)
}
