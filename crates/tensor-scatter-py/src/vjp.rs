//! The backward passes of the six operators on NumPy arrays and CPU torch tensors; `None`
//! sends the Python half's general path to prepare the arguments, as for the forwards.

use pyo3::prelude::*;
use tensor_scatter::{DynGatherOptions, GatherOptions, Par, gather_vjp_dyn, scatter_vjp_dyn};

use crate::errors::raise;
use crate::operand::Operand;
use crate::segment::new_array;
use crate::{
    gather_mode, gather_op, int_arg, negative, scatter_op, scatter_options, threads_arg, ties_arg,
};

/// `(grad wrt data, grad wrt updates)` of one scatter, or `None`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (op, grad, data, indices, updates, axis, reduction, include_self, negative_indices, out_of_range, ties, threads, updates_window))]
pub fn scatter_vjp<'py>(
    py: Python<'py>,
    op: &str,
    grad: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    indices: &Bound<'py, PyAny>,
    updates: &Bound<'py, PyAny>,
    axis: &Bound<'py, PyAny>,
    reduction: &Bound<'py, PyAny>,
    include_self: &Bound<'py, PyAny>,
    negative_indices: &str,
    out_of_range: &str,
    ties: &str,
    threads: &Bound<'py, PyAny>,
    updates_window: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    let (op, forward) = scatter_op(op)?;
    let name = match forward {
        "scatter_elements" => "scatter_elements_vjp",
        "scatter_nd" => "scatter_nd_vjp",
        _ => "scatter_update_vjp",
    };
    let (Some(g), Some(d), Some(u)) = (
        Operand::read(grad),
        Operand::read(data),
        Operand::read(updates),
    ) else {
        return Ok(None);
    };
    let Some(i) = Operand::read(indices).filter(|i| i.dtype.is_integer()) else {
        return Ok(None);
    };
    let ties = ties_arg(py, name, ties)?;
    let opts = scatter_options(
        py,
        name,
        axis,
        reduction,
        include_self,
        negative_indices,
        out_of_range,
        "per_update",
        threads,
        updates_window,
    )?
    .ties(ties);
    // SAFETY: the inputs are held for the call and nothing writes them.
    let (gv, dv, iv, uv) = unsafe { (g.view()?, d.view()?, i.view()?, u.view()?) };
    let (gd, gu) = py
        .detach(move || scatter_vjp_dyn(op, &gv, &dv, &iv, &uv, &opts))
        .map_err(|e| raise(py, &e))?;
    Ok(Some((new_array(py, &g, gd)?, new_array(py, &g, gu)?)))
}

/// The gradient with respect to `data` (of shape `data_shape`) of one gather, or `None`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (op, grad, indices, data_shape, axis, batch_dims, negative_indices, out_of_range, threads))]
pub fn gather_vjp<'py>(
    py: Python<'py>,
    op: &str,
    grad: &Bound<'py, PyAny>,
    indices: &Bound<'py, PyAny>,
    data_shape: Vec<usize>,
    axis: &Bound<'py, PyAny>,
    batch_dims: &Bound<'py, PyAny>,
    negative_indices: &str,
    out_of_range: &str,
    threads: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let (op, forward) = gather_op(op)?;
    let name = match forward {
        "gather" => "gather_vjp",
        "gather_elements" => "gather_elements_vjp",
        _ => "gather_nd_vjp",
    };
    let Some(g) = Operand::read(grad) else {
        return Ok(None);
    };
    let Some(i) = Operand::read(indices).filter(|i| i.dtype.is_integer()) else {
        return Ok(None);
    };
    let mode = gather_mode(py, name, out_of_range)?;
    let opts: DynGatherOptions = GatherOptions::new()
        .axis(int_arg(name, "axis", axis)?)
        .batch_dims(int_arg(name, "batch_dims", batch_dims)?)
        .negative(negative(py, name, negative_indices)?)
        .out_of_range(mode)
        .par(Par::threads_exact(threads_arg(name, threads)?));
    // SAFETY: the inputs are held for the call and nothing writes them.
    let (gv, iv) = unsafe { (g.view()?, i.view()?) };
    let r = py
        .detach(move || gather_vjp_dyn(op, &gv, &iv, &data_shape, &opts))
        .map_err(|e| raise(py, &e))?;
    new_array(py, &g, r).map(Some)
}
