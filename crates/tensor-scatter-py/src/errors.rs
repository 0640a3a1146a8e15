//! Library errors as the package's exceptions (`tensor_scatter._errors`): each also the
//! built-in class a Python user expects.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use tensor_scatter::{Error, ErrorKind};

/// A Python exception ready to raise.
pub type Raised = PyErr;

static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The exception of class `name` (`"OutOfRangeError"`, `"DTypeError"`, `"ArgumentError"`,
/// `"OutOfMemoryError"`) with `message`.
pub fn exception(py: Python<'_>, name: &str, message: String) -> Raised {
    let class = MODULE
        .get_or_try_init(py, || {
            py.import("tensor_scatter._errors").map(Bound::unbind)
        })
        .and_then(|m| m.bind(py).getattr(name))
        .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
    match class {
        Ok(c) => PyErr::from_type(c, message),
        Err(e) => e,
    }
}

/// The library error `e` as the exception of its kind.
pub fn raise(py: Python<'_>, e: &Error) -> Raised {
    let class = match e.kind() {
        ErrorKind::IndexOutOfRange { .. } | ErrorKind::NegativeIndex { .. } => "OutOfRangeError",
        ErrorKind::DTypeMismatch { .. }
        | ErrorKind::UnsupportedDType { .. }
        | ErrorKind::UnsupportedReduction { .. } => "DTypeError",
        ErrorKind::OutOfMemory { .. } => "OutOfMemoryError",
        _ => "ArgumentError",
    };
    exception(py, class, e.to_string())
}

/// An `ArgumentError` (a `ValueError`) with `message`.
pub fn argument(py: Python<'_>, message: String) -> Raised {
    exception(py, "ArgumentError", message)
}
