//! The native half of the Python package `tensor_scatter`: the six operators on NumPy arrays
//! and CPU torch tensors, read where they lie and run with the GIL released. A call returns
//! the result, or `None` when an argument cannot be read as it is (another array kind,
//! foreign byte order, a misaligned array, an output overlapping an input ...): the Python half
//! then converts, checks and stages (`tensor_scatter/__init__.py`) and calls again. Library
//! errors are raised as the package's exceptions, before anything was written.

mod dlpack;
mod errors;
mod operand;
mod options;
mod segment;
mod small;
mod vjp;
mod xla;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyInt};
use tensor_scatter::{
    DType, DynGatherOptions, Error, GatherOp, GatherOptions, GatherOutOfRange, NegativeIndices,
    Par, Reduction, ScatterOp, ScatterOptions, gather_dyn_out, scatter_dyn_into, scatter_dyn_out,
};

use errors::{Raised, argument, raise};
use operand::{Kind, Operand};
use options::SCATTER_REDUCTIONS;

pub(crate) fn scatter_op(s: &str) -> PyResult<(ScatterOp, &'static str)> {
    options::scatter_op(s).map_err(pyo3::exceptions::PyValueError::new_err)
}

pub(crate) fn gather_op(s: &str) -> PyResult<(GatherOp, &'static str)> {
    options::gather_op(s).map_err(pyo3::exceptions::PyValueError::new_err)
}

/// `repr(x)`, for messages.
pub(crate) fn repr(x: &Bound<'_, PyAny>) -> String {
    x.repr().map(|r| r.to_string()).unwrap_or_default()
}

/// An integer argument: anything `operator.index` takes (an `int`, a NumPy integer, a 0-d
/// integer tensor), but not a bool; otherwise an `ArgumentTypeError` naming the operator and
/// the argument.
pub(crate) fn int_arg(name: &str, arg: &str, x: &Bound<'_, PyAny>) -> Result<i64, Raised> {
    if !x.is_instance_of::<PyBool>()
        && let Ok(v) = x.extract::<i64>()
    {
        return Ok(v);
    }
    Err(errors::exception(
        x.py(),
        "ArgumentTypeError",
        format!("{name}: {arg}: {} is not an integer", repr(x)),
    ))
}

/// A bool argument: `True`, `False` or a NumPy bool, nothing merely truthy.
pub(crate) fn bool_arg(name: &str, arg: &str, x: &Bound<'_, PyAny>) -> Result<bool, Raised> {
    if let Ok(b) = x.cast::<PyBool>() {
        return Ok(b.is_true());
    }
    let ty = x.get_type();
    let numpy_bool = ty.module().is_ok_and(|m| m == "numpy")
        && ty.name().is_ok_and(|n| n == "bool" || n == "bool_");
    if numpy_bool {
        return x.is_truthy();
    }
    Err(errors::exception(
        x.py(),
        "ArgumentTypeError",
        format!("{name}: {arg}: {} is not a bool", repr(x)),
    ))
}

/// `threads=`: `None` (the process default, 0) or a count >= 0.
pub(crate) fn threads_arg(name: &str, t: &Bound<'_, PyAny>) -> Result<usize, Raised> {
    if t.is_none() {
        return Ok(0);
    }
    let n = int_arg(name, "threads", t)?;
    usize::try_from(n).map_err(|_| {
        argument(
            t.py(),
            format!(
                "{name}: threads: {} is not None or a count >= 0 (0: every core)",
                repr(t)
            ),
        )
    })
}

/// A reduction by its Python name, one of `accepted` (the names the caller's function
/// takes); otherwise an `ArgumentError` naming the keyword and listing them.
pub(crate) fn reduction_arg(
    py: Python<'_>,
    name: &str,
    keyword: &str,
    value: &Bound<'_, PyAny>,
    accepted: &[&str],
) -> Result<Reduction, Raised> {
    let s = value.extract::<String>().map_err(|_| {
        errors::exception(
            py,
            "ArgumentTypeError",
            format!(
                "{name}: {keyword}: {} is not a string; expected one of {}",
                repr(value),
                options::listed(accepted)
            ),
        )
    })?;
    options::reduction(name, keyword, &s, accepted).map_err(|m| argument(py, m))
}

pub(crate) fn negative(py: Python<'_>, name: &str, s: &str) -> Result<NegativeIndices, Raised> {
    options::negative(name, s).map_err(|m| argument(py, m))
}

/// `out_of_range=` of a gather.
pub(crate) fn gather_mode(py: Python<'_>, name: &str, s: &str) -> Result<GatherOutOfRange, Raised> {
    options::gather_range(name, s).map_err(|m| argument(py, m))
}

/// `ties=` of a backward pass.
pub(crate) fn ties_arg(
    py: Python<'_>,
    name: &str,
    s: &str,
) -> Result<tensor_scatter::segment::Ties, Raised> {
    options::ties(name, s).map_err(|m| argument(py, m))
}

/// The scatter options from the Python keywords.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter_options(
    py: Python<'_>,
    name: &str,
    axis: &Bound<'_, PyAny>,
    reduction: &Bound<'_, PyAny>,
    include_self: &Bound<'_, PyAny>,
    negative_indices: &str,
    out_of_range: &str,
    accumulation: &str,
    threads: &Bound<'_, PyAny>,
    updates_window: &Bound<'_, PyAny>,
) -> Result<ScatterOptions, Raised> {
    let reduction = reduction_arg(py, name, "reduction", reduction, SCATTER_REDUCTIONS)?;
    let out_of_range = options::scatter_range(name, out_of_range).map_err(|m| argument(py, m))?;
    let accumulation = options::accumulation(name, accumulation).map_err(|m| argument(py, m))?;
    Ok(ScatterOptions::new()
        .axis(int_arg(name, "axis", axis)?)
        .reduction(reduction)
        .include_self(bool_arg(name, "include_self", include_self)?)
        .negative(negative(py, name, negative_indices)?)
        .out_of_range(out_of_range)
        .accumulation(accumulation)
        .updates_window(bool_arg(name, "updates_window", updates_window)?)
        .par(Par::threads_exact(threads_arg(name, threads)?)))
}

/// `torch.from_numpy`, and `tensor_scatter._arrays.torch_result` (which also views bfloat16
/// bits as a bfloat16 tensor).
static TORCH_FROM_NUMPY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static TORCH_RESULT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn cached<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    module: &str,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let f = cell.get_or_try_init(py, || py.import(module)?.getattr(name).map(Bound::unbind))?;
    Ok(f.bind(py).clone())
}

/// How autograd is told that a tensor was written in place: `torch._C._increment_version` with
/// a tuple of tensors where it takes one (0.26 µs a call), else the public
/// `torch.autograd.graph.increment_version(t)` (0.47); chosen once, on a new tensor.
static TORCH_BUMP: PyOnceLock<(Py<PyAny>, bool)> = PyOnceLock::new();

/// Tells autograd that the output `o`, when a torch tensor, was written through its memory, as
/// torch's own in-place operations do (its version counter): a backward that saved it then
/// fails instead of silently using the new values (what
/// `torch.autograd.graph.increment_version` is for).
pub(crate) fn modified(o: &Operand<'_>) -> PyResult<()> {
    if o.kind != Kind::Torch {
        return Ok(());
    }
    let (t, py) = (&o.obj, o.obj.py());
    let (f, takes_tuple) = TORCH_BUMP.get_or_try_init(py, || -> PyResult<_> {
        let torch = py.import("torch")?;
        let c = torch.getattr("_C")?.getattr("_increment_version")?;
        let probe = torch.call_method1("zeros", (1,))?;
        if c.call1(((probe.clone(),),)).is_ok() && probe.getattr("_version")?.extract::<i64>()? == 1
        {
            return Ok((c.unbind(), true));
        }
        let public = py
            .import("torch.autograd.graph")?
            .getattr("increment_version")?;
        Ok((public.unbind(), false))
    })?;
    let f = f.bind(py);
    if *takes_tuple {
        f.call1(((t,),))?;
    } else {
        f.call1((t,))?;
    }
    Ok(())
}

/// The new result `o` in the kind of the `data` it was made for (a NumPy array wrapped for
/// torch; a tensor already made by torch is itself).
fn result<'py>(o: Operand<'py>) -> PyResult<Bound<'py, PyAny>> {
    let py = o.obj.py();
    if o.array.is_none() {
        return Ok(o.obj);
    }
    match (o.kind, o.dtype) {
        (Kind::NumPy, _) => Ok(o.obj),
        (Kind::Torch, DType::BF16) => {
            cached(py, &TORCH_RESULT, "tensor_scatter._arrays", "torch_result")?
                .call1((o.obj, true))
        }
        (Kind::Torch, _) => cached(py, &TORCH_FROM_NUMPY, "torch", "from_numpy")?.call1((o.obj,)),
    }
}

/// A call this small (every operand's elements together, at most) runs with the GIL held:
/// releasing and taking it back costs about 0.1 µs, more than such a kernel, and no other
/// thread waits long for it (a few µs: far below the library's parallel threshold, it runs as
/// one task on the calling thread, never waiting for the pool). Calls whose result's size is
/// a value of the data release it always.
const HOLD_GIL_UP_TO: usize = 1 << 12;

/// The elements of `operands` together: a call's work, for [`released`].
pub(crate) fn work(operands: &[&Operand<'_>]) -> usize {
    operands.iter().fold(0, |n, o| n.saturating_add(o.len()))
}

/// Runs the kernel `f` with the GIL released, unless the call's `work` (its elements) is small.
pub(crate) fn released<T: Send>(py: Python<'_>, work: usize, f: impl FnOnce() -> T + Send) -> T {
    if work <= HOLD_GIL_UP_TO {
        f()
    } else {
        py.detach(f)
    }
}

/// One scatter. Without `out`: a new array of data's kind. With `out` (data's dtype and
/// shape): the result written there, in place when `out` is `data`. `None`: the Python half
/// must prepare an argument first.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (op, data, indices, updates, out, axis, reduction, include_self, negative_indices, out_of_range, accumulation, threads, updates_window))]
fn scatter<'py>(
    py: Python<'py>,
    op: &str,
    data: &Bound<'py, PyAny>,
    indices: &Bound<'py, PyAny>,
    updates: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    axis: &Bound<'py, PyAny>,
    reduction: &Bound<'py, PyAny>,
    include_self: &Bound<'py, PyAny>,
    negative_indices: &str,
    out_of_range: &str,
    accumulation: &str,
    threads: &Bound<'py, PyAny>,
    updates_window: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let (op, name) = scatter_op(op)?;
    let opts = scatter_options(
        py,
        name,
        axis,
        reduction,
        include_self,
        negative_indices,
        out_of_range,
        accumulation,
        threads,
        updates_window,
    )?;
    let Some(d) = Operand::read(data) else {
        return Ok(None);
    };
    let Some(i) = Operand::read(indices).filter(|i| i.dtype.is_integer()) else {
        return Ok(None);
    };
    // Updates of another dtype or shape go to the Python half (NumPy's casting, a scalar or
    // a broadcast); prepared ones are taken as they are.
    let Some(u) = Operand::read(updates).filter(|u| {
        u.dtype == d.dtype
            && (u.prepared || opts.updates_window || updates_fit(op, &d, &i, u, opts.axis))
    }) else {
        return Ok(None);
    };
    let small = small::scatter_fits(op, &d, &i, &u, &opts);
    let Some(out) = out else {
        let o = d.empty(&d.shape)?;
        if small && copy_fold(&d, &i, &u, &o, opts.reduction) {
            return result(o).map(Some);
        }
        // SAFETY: `o` is new, so it overlaps no input; every operand is held for the call.
        let (dv, iv, uv, ov) = unsafe { (d.view()?, i.view()?, u.view()?, o.view_mut()?) };
        released(py, work(&[&d, &i, &u]), move || {
            scatter_dyn_out(op, dv, iv, uv, ov, &opts)
        })
        .map_err(|e| raise(py, &e))?;
        return result(o).map(Some);
    };
    // `out=data` (in place, the common case) is read once: a torch tensor's read costs
    // about a third of a small call.
    let fresh;
    let o = if out.is(data) {
        &d
    } else {
        fresh = Operand::output(out);
        match &fresh {
            Some(o) => o,
            None => return Ok(None),
        }
    };
    if !o.writeable || o.dtype != d.dtype {
        return Ok(None);
    }
    if o.same_view(&d) {
        if o.overlaps(&i) || o.overlaps(&u) {
            return Ok(None);
        }
        if small && small::scatter_into(&i, &u, o.origin, o.len(), opts.reduction) {
            modified(o)?;
            return Ok(Some(out.clone()));
        }
        // SAFETY: `out` is `data` and overlaps no other input; all are held for the call.
        let (iv, uv, ov) = unsafe { (i.view()?, u.view()?, o.view_mut()?) };
        released(py, work(&[o, &i, &u]), move || {
            scatter_dyn_into(op, ov, iv, uv, &opts)
        })
        .map_err(|e| raise(py, &e))?;
        modified(o)?;
    } else {
        if o.overlaps(&d) || o.overlaps(&i) || o.overlaps(&u) {
            return Ok(None);
        }
        if small
            && segment::line(o)
            && o.shape == d.shape
            && copy_fold(&d, &i, &u, o, opts.reduction)
        {
            modified(o)?;
            return Ok(Some(out.clone()));
        }
        // SAFETY: `out` overlaps no input; all are held for the call.
        let (dv, iv, uv, ov) = unsafe { (d.view()?, i.view()?, u.view()?, o.view_mut()?) };
        released(py, work(&[&d, &i, &u]), move || {
            scatter_dyn_out(op, dv, iv, uv, ov, &opts)
        })
        .map_err(|e| raise(py, &e))?;
        modified(o)?;
    }
    Ok(Some(out.clone()))
}

/// A small scatter ([`small::scatter_fits`]) into `o`, a contiguous array of data's dtype and
/// length overlapping no input: data's values copied there, then the updates folded in.
/// `false`: the planned path's to do (it writes every element of `o` again).
fn copy_fold(
    d: &Operand<'_>,
    i: &Operand<'_>,
    u: &Operand<'_>,
    o: &Operand<'_>,
    red: Reduction,
) -> bool {
    let (n, bytes) = (d.len(), d.len() * d.dtype.size_of());
    // SAFETY: `d` is `n` contiguous elements (`scatter_fits`), `o` as many of the same dtype
    // (new, or checked by the caller), and the two do not overlap.
    unsafe { std::ptr::copy_nonoverlapping(d.origin as *const u8, o.origin, bytes) };
    small::scatter_into(i, u, o.origin, n, red)
}

/// Whether `updates` has the shape the scatter needs (`false` as well when the options or
/// shapes are invalid: the Python half then hands the library prepared arguments, and it says
/// why). Compared in place: no allocation on the fast path.
fn updates_fit(
    op: ScatterOp,
    d: &Operand<'_>,
    i: &Operand<'_>,
    u: &Operand<'_>,
    axis: i64,
) -> bool {
    let (ds, is, us) = (&d.shape, &i.shape, &u.shape);
    match op {
        ScatterOp::Elements => is == us,
        ScatterOp::Nd => match (is.split_last(), is.last().and_then(|&k| ds.get(k..))) {
            (Some((_, tuples)), Some(slice)) => tuples.iter().chain(slice).eq(us.iter()),
            _ => false,
        },
        ScatterOp::Update => {
            let r = ds.len() as i64;
            let a = if axis < 0 { axis + r } else { axis };
            (0..r).contains(&a) && {
                let a = a as usize;
                ds[..a].iter().chain(is).chain(&ds[a + 1..]).eq(us.iter())
            }
        }
    }
}

/// The fill value: zero when unused (`None`) or the integer 0, else a one-element array of
/// data's dtype (`None`: the Python half must make one). A fill value without
/// `out_of_range="fill"` is an error.
fn fill_arg(
    name: &str,
    d: &Operand<'_>,
    mode: GatherOutOfRange,
    fill: &Bound<'_, PyAny>,
) -> Result<Option<Option<tensor_scatter::DynTensor>>, Raised> {
    if fill.is_none() {
        return Ok(Some(None));
    }
    if mode != GatherOutOfRange::Fill {
        return Err(argument(
            fill.py(),
            format!(
                "{name}: fill_value: {} is given, but out_of_range is not 'fill' (it would be unused)",
                repr(fill)
            ),
        ));
    }
    if fill.is_exact_instance_of::<PyInt>() && fill.extract::<i64>().ok() == Some(0) {
        return Ok(Some(None));
    }
    Ok(fill_value(d, fill))
}

/// A one-element array of data's dtype given as the fill value, taken as it is.
fn fill_value(
    d: &Operand<'_>,
    fill: &Bound<'_, PyAny>,
) -> Option<Option<tensor_scatter::DynTensor>> {
    let f = Operand::read(fill)?;
    if f.dtype != d.dtype || f.shape.iter().product::<usize>() != 1 {
        return None;
    }
    // SAFETY: `f` is held for the call and written by nobody.
    let v = unsafe { f.view() }.ok()?;
    Some(Some(v.to_tensor()))
}

/// One gather. Without `out`: a new array of data's kind. With `out`: the result written
/// there. `None`: the Python half must prepare an argument first.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (op, data, indices, out, axis, batch_dims, negative_indices, out_of_range, fill_value, threads))]
fn gather<'py>(
    py: Python<'py>,
    op: &str,
    data: &Bound<'py, PyAny>,
    indices: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    axis: &Bound<'py, PyAny>,
    batch_dims: &Bound<'py, PyAny>,
    negative_indices: &str,
    out_of_range: &str,
    fill_value: &Bound<'py, PyAny>,
    threads: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let (op, name) = gather_op(op)?;
    let (axis, batch_dims) = (
        int_arg(name, "axis", axis)?,
        int_arg(name, "batch_dims", batch_dims)?,
    );
    let threads = threads_arg(name, threads)?;
    let mode = gather_mode(py, name, out_of_range)?;
    let negative = negative(py, name, negative_indices)?;
    let Some(d) = Operand::read(data) else {
        return Ok(None);
    };
    let Some(i) = Operand::read(indices).filter(|i| i.dtype.is_integer()) else {
        return Ok(None);
    };
    let Some(fill) = fill_arg(name, &d, mode, fill_value)? else {
        return Ok(None);
    };
    let opts: DynGatherOptions = GatherOptions::new()
        .axis(axis)
        .batch_dims(batch_dims)
        .negative(negative)
        .out_of_range(mode)
        .fill_value(fill)
        .par(Par::threads_exact(threads));
    let fits = small::gather_fits(&d, &i, axis, batch_dims);
    let (o, given) = match out {
        // A small gather's result has the index's shape (one dim, axis 0): no plan.
        None if fits => (d.empty(&i.shape)?, None),
        None => {
            let shape = op
                .plan(d.dtype, &d.shape, &i.shape, &opts)
                .map_err(|e| raise(py, &e))?
                .shape;
            (d.empty(&shape)?, None)
        }
        Some(out) => match Operand::output(out)
            .filter(|o| o.writeable && !o.overlaps(&d) && !o.overlaps(&i))
        {
            Some(o) => (o, Some(out)),
            None => return Ok(None),
        },
    };
    let small = fits
        && segment::line(&o)
        && o.shape == i.shape
        && o.dtype == d.dtype
        && small::gather_into(&d, &i, o.origin);
    if small {
        return match given {
            Some(out) => {
                modified(&o)?;
                Ok(Some(out.clone()))
            }
            None => result(o).map(Some),
        };
    }
    // SAFETY: `o` overlaps no input (new, or checked); all are held for the call.
    let (dv, iv, ov) = unsafe { (d.view()?, i.view()?, o.view_mut()?) };
    released(py, work(&[&d, &i, &o]), move || {
        gather_dyn_out(op, dv, iv, ov, &opts)
    })
    .map_err(|e| raise(py, &e))?;
    match given {
        Some(out) => {
            modified(&o)?;
            Ok(Some(out.clone()))
        }
        None => result(o).map(Some),
    }
}

/// The shape a gather of these shapes gives (for the Python half's general path, which
/// allocates results itself); raises what the gather would.
#[pyfunction]
fn gather_shape(
    py: Python<'_>,
    op: &str,
    dtype: &str,
    data: Vec<usize>,
    indices: Vec<usize>,
    axis: &Bound<'_, PyAny>,
    batch_dims: &Bound<'_, PyAny>,
) -> PyResult<Vec<usize>> {
    let (op, name) = gather_op(op)?;
    let t: DType = dtype.parse().map_err(|e: Error| raise(py, &e))?;
    let opts = GatherOptions::<()>::new()
        .axis(int_arg(name, "axis", axis)?)
        .batch_dims(int_arg(name, "batch_dims", batch_dims)?);
    Ok(op
        .plan(t, &data, &indices, &opts)
        .map_err(|e| raise(py, &e))?
        .shape)
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
    m.add_class::<operand::Prepared>()?;
    m.add_function(wrap_pyfunction!(scatter, m)?)?;
    m.add_function(wrap_pyfunction!(gather, m)?)?;
    m.add_function(wrap_pyfunction!(gather_shape, m)?)?;
    m.add_function(wrap_pyfunction!(segment::segment, m)?)?;
    m.add_function(wrap_pyfunction!(segment::segment_vjp, m)?)?;
    m.add_function(wrap_pyfunction!(segment::counts, m)?)?;
    m.add_function(wrap_pyfunction!(vjp::scatter_vjp, m)?)?;
    m.add_function(wrap_pyfunction!(vjp::gather_vjp, m)?)?;
    m.add_function(wrap_pyfunction!(default_threads, m)?)?;
    m.add_function(wrap_pyfunction!(set_default_threads, m)?)?;
    Ok(())
}
