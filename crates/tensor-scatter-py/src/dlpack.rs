//! DLPack's C exchange table (`dlpack.h` 1.x, the `__dlpack_c_exchange_api__` capsule a
//! tensor type carries; torch has it since 2.10), as far as the native half reads it: one C
//! call fills a borrowed `DLTensor` (data pointer, device, dtype, shape, strides) for a
//! tensor the caller holds, where reading the same through Python attributes takes eight
//! calls. The other way, [`ExchangeApi::tensor`] hands memory of ours to the producer as a new
//! tensor in one call, which frees it through our deleter when the tensor dies.

use std::ffi::{c_int, c_void};

use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};
use tensor_scatter::DType;

#[repr(C)]
struct Device {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
pub struct Tensor {
    data: *mut c_void,
    device: Device,
    ndim: i32,
    dtype: DataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

/// `DLManagedTensorVersioned`: a `DLTensor` with the deleter that frees it.
#[repr(C)]
struct Managed {
    version: [u32; 2],
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut Managed)>,
    flags: u64,
    dl_tensor: Tensor,
}

/// A [`Managed`] tensor of ours and what its pointers point into; `managed` comes first, so a
/// pointer to it is a pointer to the whole.
#[repr(C)]
struct Owned {
    managed: Managed,
    shape: Vec<i64>,
    strides: Vec<i64>,
    _memory: Box<dyn Send>,
}

/// The deleter of an [`Owned`] tensor, which the producer calls once, from any thread.
unsafe extern "C" fn free_owned(m: *mut Managed) {
    if !m.is_null() {
        // SAFETY: `m` is the first field of an `Owned` that `ExchangeApi::tensor` leaked from
        // its box, and the producer calls the deleter once; dropping it frees vectors only.
        drop(unsafe { Box::from_raw(m.cast::<Owned>()) });
    }
}

/// `DLPackExchangeAPI`: its header (`DLPackVersion`, the older table) and the producer's
/// functions, of which `dltensor_from_py_object_no_sync` and
/// `managed_tensor_to_py_object_no_sync` are called. (Its allocator is not: a result made
/// through it costs as much as `torch.from_numpy` over a NumPy array, as the producer then
/// makes two tensors, one wrapping the other's DLPack form.)
#[repr(C)]
pub struct ExchangeApi {
    major: u32,
    minor: u32,
    prev_api: *const c_void,
    managed_tensor_allocator: *const c_void,
    managed_tensor_from_py_object_no_sync: *const c_void,
    managed_tensor_to_py_object_no_sync:
        Option<unsafe extern "C" fn(tensor: *mut Managed, out: *mut *mut c_void) -> c_int>,
    dltensor_from_py_object_no_sync:
        Option<unsafe extern "C" fn(py_object: *mut c_void, out: *mut Tensor) -> c_int>,
    current_work_stream: *const c_void,
}

// SAFETY: the table is a static of the producer, never written after it is made (dlpack.h:
// "must stay alive throughout the lifetime of the process"); we only read it.
unsafe impl Sync for ExchangeApi {}

const DL_CPU: i32 = 1;

impl ExchangeApi {
    /// The table of `tensor_type` (its `__dlpack_c_exchange_api__` capsule), when it has one of
    /// major version 1 with the function we call.
    pub fn of(tensor_type: &Bound<'_, PyAny>) -> Option<&'static ExchangeApi> {
        let capsule = tensor_type.getattr("__dlpack_c_exchange_api__").ok()?;
        let capsule = capsule.cast::<PyCapsule>().ok()?;
        let ptr = capsule.pointer_checked(Some(c"dlpack_exchange_api")).ok()?;
        // SAFETY: a capsule of this name holds a `DLPackExchangeAPI*` that lives as long as the
        // process (dlpack.h); its header, read first, is stable across versions.
        let api = unsafe { &*(ptr.as_ptr() as *const ExchangeApi) };
        (api.major == 1 && api.dltensor_from_py_object_no_sync.is_some()).then_some(api)
    }

    /// `obj` as a borrowed `DLTensor`, or `None` (the producer's error cleared) when the
    /// producer cannot describe it (no storage, a sparse layout, a dtype DLPack lacks).
    /// `obj` must be of the type the table came from, and held while the result is read.
    pub fn read(&self, obj: &Bound<'_, PyAny>) -> Option<Tensor> {
        let f = self.dltensor_from_py_object_no_sync?;
        let mut t = Tensor {
            data: std::ptr::null_mut(),
            device: Device {
                device_type: 0,
                device_id: 0,
            },
            ndim: 0,
            dtype: DataType {
                code: 0,
                bits: 0,
                lanes: 0,
            },
            shape: std::ptr::null(),
            strides: std::ptr::null(),
            byte_offset: 0,
        };
        // SAFETY: `obj` is a live object of the table's type, the GIL is held, and `t` is a
        // `DLTensor` for the producer to fill; it sets a Python error exactly when it fails.
        if unsafe { f(obj.as_ptr().cast(), &mut t) } != 0 {
            drop(PyErr::take(obj.py()));
            return None;
        }
        Some(t)
    }

    /// Whether [`ExchangeApi::tensor`] can make tensors.
    pub fn makes_tensors(&self) -> bool {
        self.managed_tensor_to_py_object_no_sync.is_some()
    }

    /// A new CPU tensor of the producer's type over `data` (`dtype`, `shape`, `strides` in
    /// elements), which lies in `memory`: both are handed over, and the producer's tensor
    /// frees `memory` when it dies. If the producer fails (a Python error), `memory` is not
    /// freed.
    pub fn tensor<'py>(
        &self,
        py: Python<'py>,
        data: *mut u8,
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        memory: Box<dyn Send>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let f = self.managed_tensor_to_py_object_no_sync.ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("no DLPack import in this torch")
        })?;
        let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let strides: Vec<i64> = strides.iter().map(|&s| s as i64).collect();
        let (code, bits) = dl_type(dtype);
        let mut owned = Box::new(Owned {
            managed: Managed {
                version: [1, 1],
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(free_owned),
                flags: 0,
                dl_tensor: Tensor {
                    data: data.cast(),
                    device: Device {
                        device_type: DL_CPU,
                        device_id: 0,
                    },
                    ndim: shape.len() as i32,
                    dtype: DataType {
                        code,
                        bits,
                        lanes: 1,
                    },
                    shape: std::ptr::null(),
                    strides: std::ptr::null(),
                    byte_offset: 0,
                },
            },
            shape,
            strides,
            _memory: memory,
        });
        // The vectors' buffers stay where they are when the box is leaked.
        owned.managed.dl_tensor.shape = owned.shape.as_ptr();
        owned.managed.dl_tensor.strides = owned.strides.as_ptr();
        let managed = Box::into_raw(owned).cast::<Managed>();
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: `managed` is a complete `DLManagedTensorVersioned` of a CPU tensor whose
        // data, shape and strides live until its deleter runs; the producer takes it over
        // (dlpack.h) and, on success, gives a new reference, under the GIL.
        unsafe {
            if f(managed, &mut out) != 0 || out.is_null() {
                return Err(PyErr::take(py).unwrap_or_else(|| {
                    pyo3::exceptions::PyRuntimeError::new_err("DLPack import failed")
                }));
            }
            Ok(Bound::from_owned_ptr(py, out.cast()))
        }
    }
}

/// DLPack's type code and bits for a library dtype ([`Tensor::dtype`]'s inverse).
fn dl_type(t: DType) -> (u8, u8) {
    let code = match t {
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => 0,
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => 1,
        DType::F16 | DType::F32 | DType::F64 => 2,
        DType::BF16 => 4,
        DType::Bool => 6,
    };
    (code, (t.size_of() * 8) as u8)
}

impl Tensor {
    /// The library's dtype, for one-lane types it has.
    pub fn dtype(&self) -> Option<DType> {
        let t = &self.dtype;
        if t.lanes != 1 {
            return None;
        }
        Some(match (t.code, t.bits) {
            (0, 8) => DType::I8,
            (0, 16) => DType::I16,
            (0, 32) => DType::I32,
            (0, 64) => DType::I64,
            (1, 8) => DType::U8,
            (1, 16) => DType::U16,
            (1, 32) => DType::U32,
            (1, 64) => DType::U64,
            (2, 16) => DType::F16,
            (2, 32) => DType::F32,
            (2, 64) => DType::F64,
            (4, 16) => DType::BF16,
            (6, 8) => DType::Bool,
            _ => return None,
        })
    }

    /// Element `[0, ..., 0]`, the shape and the strides in elements, for a CPU tensor with
    /// its strides given (torch always gives them); `None` for any other device or a shape
    /// that is not one.
    pub fn layout(&self) -> Option<(*mut u8, Vec<usize>, Vec<isize>)> {
        if self.device.device_type != DL_CPU || self.ndim < 0 {
            return None;
        }
        let n = self.ndim as usize;
        if n > 0 && (self.shape.is_null() || self.strides.is_null()) {
            return None;
        }
        let (sizes, steps): (&[i64], &[i64]) = if n == 0 {
            (&[], &[])
        } else {
            // SAFETY: the producer filled `ndim` sizes and strides, which stay valid while
            // the tensor is held, which the caller does.
            unsafe {
                (
                    std::slice::from_raw_parts(self.shape, n),
                    std::slice::from_raw_parts(self.strides, n),
                )
            }
        };
        let shape = sizes
            .iter()
            .map(|&d| usize::try_from(d).ok())
            .collect::<Option<Vec<_>>>()?;
        let strides = steps
            .iter()
            .map(|&s| isize::try_from(s).ok())
            .collect::<Option<Vec<_>>>()?;
        let offset = usize::try_from(self.byte_offset).ok()?;
        Some((self.data.cast::<u8>().wrapping_add(offset), shape, strides))
    }
}
