//! The native half of the Python package `tensor_scatter`: the six operators on arrays that the
//! Python half describes (address, dtype name, shape, element strides) and has already checked
//! (alive for the call, aligned, bool bytes 0 or 1, the output not overlapping an input). Every
//! call writes into an output the Python half allocated or was given, with the GIL released;
//! a library error comes back as `(kind, message)` for the Python half to raise, before
//! anything was written.

use pyo3::prelude::*;
use tensor_scatter::{
    Accumulation, DType, DynGatherOptions, DynView, DynViewMut, Error, ErrorKind, GatherOp,
    GatherOptions, GatherOutOfRange, NegativeIndices, OutOfRange, Par, Reduction, ScatterOp,
    ScatterOptions, gather_dyn_out, scatter_dyn_into, scatter_dyn_out,
};

/// An array as the Python half describes it: address of element `[0, ..., 0]`, dtype name,
/// shape, strides in elements.
#[derive(FromPyObject)]
struct Desc(usize, String, Vec<usize>, Vec<isize>);

/// A failure for the Python half to raise: the exception kind (`"index"`, `"type"`,
/// `"value"`, `"memory"`) and the library's message.
type Failure = (&'static str, String);

fn failure(e: &Error) -> Failure {
    let kind = match e.kind() {
        ErrorKind::IndexOutOfRange { .. } | ErrorKind::NegativeIndex { .. } => "index",
        ErrorKind::DTypeMismatch { .. }
        | ErrorKind::UnsupportedDType { .. }
        | ErrorKind::UnsupportedReduction { .. } => "type",
        ErrorKind::OutOfMemory { .. } => "memory",
        _ => "value",
    };
    (kind, e.to_string())
}

fn value(message: String) -> Failure {
    ("value", message)
}

fn dtype(name: &str) -> Result<DType, Failure> {
    name.parse().map_err(|e: Error| ("type", e.to_string()))
}

/// A read-only view of the described array.
///
/// # Safety
/// The array is alive, aligned and unwritten for `'a`, and every element it addresses is a
/// valid value of its dtype (the Python half checks bool bytes).
unsafe fn view<'a>(d: &Desc) -> Result<DynView<'a>, Failure> {
    // SAFETY: the caller's contract.
    unsafe { DynView::from_raw_parts(dtype(&d.1)?, d.0 as *const u8, &d.2, &d.3) }
        .map_err(|e| failure(&e))
}

/// A writable view of the described array.
///
/// # Safety
/// As [`view`], and nothing else reads or writes the array for `'a`.
unsafe fn view_mut<'a>(d: &Desc) -> Result<DynViewMut<'a>, Failure> {
    // SAFETY: the caller's contract.
    unsafe { DynViewMut::from_raw_parts(dtype(&d.1)?, d.0 as *mut u8, &d.2, &d.3) }
        .map_err(|e| failure(&e))
}

fn negative(s: &str) -> Result<NegativeIndices, Failure> {
    match s {
        "wrap" => Ok(NegativeIndices::Wrap),
        "error" => Ok(NegativeIndices::Error),
        _ => Err(value(format!(
            "negative_indices: '{s}' is not one of 'wrap', 'error'"
        ))),
    }
}

fn scatter_op(s: &str) -> Result<ScatterOp, Failure> {
    match s {
        "elements" => Ok(ScatterOp::Elements),
        "nd" => Ok(ScatterOp::Nd),
        "update" => Ok(ScatterOp::Update),
        _ => Err(value(format!("unknown scatter '{s}'"))),
    }
}

fn gather_op(s: &str) -> Result<GatherOp, Failure> {
    match s {
        "gather" => Ok(GatherOp::Gather),
        "elements" => Ok(GatherOp::Elements),
        "nd" => Ok(GatherOp::Nd),
        _ => Err(value(format!("unknown gather '{s}'"))),
    }
}

/// The scatter options from the Python keywords (the Python half passes them through; an
/// unknown value is an error here).
#[allow(clippy::too_many_arguments)]
fn scatter_options(
    axis: i64,
    reduction: &str,
    include_self: bool,
    negative_indices: &str,
    out_of_range: &str,
    accumulation: &str,
    threads: usize,
    updates_window: bool,
) -> Result<ScatterOptions, Failure> {
    let reduction: Reduction = reduction.parse().map_err(|e: Error| value(e.to_string()))?;
    let out_of_range = match out_of_range {
        "error" => OutOfRange::Error,
        "clamp" => OutOfRange::Clamp,
        "skip" => OutOfRange::Skip,
        s => {
            return Err(value(format!(
                "out_of_range: '{s}' is not one of 'error', 'clamp', 'skip'"
            )));
        }
    };
    let accumulation = match accumulation {
        "per_update" => Accumulation::PerUpdate,
        "wide" => Accumulation::Wide,
        s => {
            return Err(value(format!(
                "accumulation: '{s}' is not one of 'per_update', 'wide'"
            )));
        }
    };
    Ok(ScatterOptions::new()
        .axis(axis)
        .reduction(reduction)
        .include_self(include_self)
        .negative(negative(negative_indices)?)
        .out_of_range(out_of_range)
        .accumulation(accumulation)
        .updates_window(updates_window)
        .par(Par::threads_exact(threads)))
}

/// One scatter: `out = data` then the scatter (`in_place` false), or the scatter into `out`,
/// which is `data` (`in_place` true; `data` is then not read separately).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (op, data, indices, updates, out, in_place, axis, reduction, include_self, negative_indices, out_of_range, accumulation, threads, updates_window))]
fn scatter(
    py: Python<'_>,
    op: &str,
    data: Desc,
    indices: Desc,
    updates: Desc,
    out: Desc,
    in_place: bool,
    axis: i64,
    reduction: &str,
    include_self: bool,
    negative_indices: &str,
    out_of_range: &str,
    accumulation: &str,
    threads: usize,
    updates_window: bool,
) -> Option<Failure> {
    let run = || -> Result<(), Failure> {
        let op = scatter_op(op)?;
        let opts = scatter_options(
            axis,
            reduction,
            include_self,
            negative_indices,
            out_of_range,
            accumulation,
            threads,
            updates_window,
        )?;
        // SAFETY: the Python half holds every array for the call, checked their alignment and
        // bool bytes, and gives an `out` that overlaps no input (in place, `out` is `data`,
        // which is then not viewed separately).
        let (i, u, mut o) = unsafe { (view(&indices)?, view(&updates)?, view_mut(&out)?) };
        let r = if in_place {
            scatter_dyn_into(op, &mut o, &i, &u, &opts)
        } else {
            // SAFETY: as above.
            let d = unsafe { view(&data)? };
            scatter_dyn_out(op, &d, &i, &u, &mut o, &opts)
        };
        r.map_err(|e| failure(&e))
    };
    py.detach(run).err()
}

/// One gather into `out`; `fill` is a one-element array of data's dtype.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (op, data, indices, out, axis, batch_dims, negative_indices, out_of_range, fill, threads))]
fn gather(
    py: Python<'_>,
    op: &str,
    data: Desc,
    indices: Desc,
    out: Desc,
    axis: i64,
    batch_dims: i64,
    negative_indices: &str,
    out_of_range: &str,
    fill: Desc,
    threads: usize,
) -> Option<Failure> {
    let run = || -> Result<(), Failure> {
        let op = gather_op(op)?;
        let out_of_range = match out_of_range {
            "error" => GatherOutOfRange::Error,
            "clamp" => GatherOutOfRange::Clamp,
            "fill" => GatherOutOfRange::Fill,
            s => {
                return Err(value(format!(
                    "out_of_range: '{s}' is not one of 'error', 'clamp', 'fill'"
                )));
            }
        };
        // SAFETY: as in `scatter`.
        let (d, i, f, mut o) =
            unsafe { (view(&data)?, view(&indices)?, view(&fill)?, view_mut(&out)?) };
        let fill = f.to_tensor();
        let opts: DynGatherOptions = GatherOptions::new()
            .axis(axis)
            .batch_dims(batch_dims)
            .negative(negative(negative_indices)?)
            .out_of_range(out_of_range)
            .fill_value(Some(fill))
            .par(Par::threads_exact(threads));
        gather_dyn_out(op, &d, &i, &mut o, &opts).map_err(|e| failure(&e))
    };
    py.detach(run).err()
}

/// The shape a gather of these shapes produces, or why it cannot (`(shape, None)` or
/// `(None, failure)`).
#[pyfunction]
fn gather_shape(
    op: &str,
    dtype_name: &str,
    data: Vec<usize>,
    indices: Vec<usize>,
    axis: i64,
    batch_dims: i64,
) -> (Option<Vec<usize>>, Option<Failure>) {
    let plan = || -> Result<Vec<usize>, Failure> {
        let op = gather_op(op)?;
        let t = dtype(dtype_name)?;
        let opts = GatherOptions::<()>::new().axis(axis).batch_dims(batch_dims);
        op.plan(t, &data, &indices, &opts)
            .map(|p| p.shape)
            .map_err(|e| failure(&e))
    };
    match plan() {
        Ok(shape) => (Some(shape), None),
        Err(f) => (None, Some(f)),
    }
}

/// The number of threads `threads=None` means (the process default).
#[pyfunction]
fn default_threads() -> usize {
    tensor_scatter::default_threads()
}

/// Sets the process default (0: every core).
#[pyfunction]
fn set_default_threads(n: usize) {
    tensor_scatter::set_default_threads(n);
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scatter, m)?)?;
    m.add_function(wrap_pyfunction!(gather, m)?)?;
    m.add_function(wrap_pyfunction!(gather_shape, m)?)?;
    m.add_function(wrap_pyfunction!(default_threads, m)?)?;
    m.add_function(wrap_pyfunction!(set_default_threads, m)?)?;
    Ok(())
}
