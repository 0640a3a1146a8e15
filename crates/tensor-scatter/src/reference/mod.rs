//! The naive reference oracle: one literal function per operator, written from the spec text
//! with no unsafe, no threads, no fast paths and no code shared with the engine's planning or
//! kernels. The fast implementation is property-tested against it bit for bit.
//!
//! Each function (1) checks the reduction, axis and shapes in the same order as the engine,
//! (2) resolves every index in row-major order of `indices` with its own copy of the policy
//! rule, and only then (3) computes every destination cell as the fold of its contributions
//! in index order:
//!
//! ```text
//! none:          cell = last contribution
//! mean:          cell = (start + u₀ + … + uₙ₋₁) / (n + include_self)
//! other f:       cell = f(…f(f(start, u₀), u₁)…, uₙ₋₁)
//! start        = include_self ? cell : identity(f)
//! ```
//!
//! With [`Accumulation::Wide`] the add/sub/mul/mean folds run in [`Element::Wide`] and round
//! once at the end.
//!
//! ```
//! use tensor_scatter::{reference, ScatterOptions, TensorView};
//! let out = reference::scatter_elements(
//!     &TensorView::new(&[0i32; 3], &[3]).unwrap(),
//!     &TensorView::new(&[2u8, 2], &[2]).unwrap(),
//!     &TensorView::new(&[5i32, 6], &[2]).unwrap(),
//!     &ScatterOptions::new(),
//! )
//! .unwrap();
//! assert_eq!(out.as_slice(), &[0, 0, 6]);
//! ```

use std::collections::BTreeMap;

use crate::{
    Accumulation, Element, Error, ErrorKind, IndexInt, IndexPolicy, NegativeIndices, OutOfRange,
    Reduction, Result, ScatterOptions, Tensor, TensorView,
};

/// All coordinates of `shape` in row-major order.
fn coords(shape: &[usize]) -> Vec<Vec<usize>> {
    // An empty shape has no coordinates, whatever its other dims: without this, [2⁴⁰, 0]
    // would build 2⁴⁰ partial coordinates first (found by the fuzzer; an allocation abort).
    if shape.contains(&0) {
        return vec![];
    }
    let mut all = vec![vec![]];
    for &d in shape {
        all = all
            .into_iter()
            .flat_map(|c| (0..d).map(move |i| [c.clone(), vec![i]].concat()))
            .collect();
    }
    all
}

fn flat(shape: &[usize], coord: &[usize]) -> usize {
    coord.iter().zip(shape).fold(0, |acc, (&c, &d)| acc * d + c)
}

/// The index policy, restated: `Some(position)`, `None` for a skipped index, or the error.
fn resolve_one(
    op: &'static str,
    value: i128,
    size: usize,
    dim: usize,
    position: Vec<usize>,
    policy: IndexPolicy,
) -> Result<Option<usize>> {
    let mut v = value;
    if v < 0 {
        if policy.negative == NegativeIndices::Error {
            return Err(Error::new(ErrorKind::NegativeIndex {
                op,
                arg: "indices",
                position,
                value,
                dim,
            }));
        }
        v += size as i128;
    }
    if v >= 0 && v < size as i128 {
        return Ok(Some(v as usize));
    }
    match policy.out_of_range {
        OutOfRange::Skip => Ok(None),
        OutOfRange::Clamp if size > 0 => Ok(Some(if v < 0 { 0 } else { size - 1 })),
        _ => Err(Error::new(ErrorKind::IndexOutOfRange {
            op,
            arg: "indices",
            position,
            value,
            dim,
            size,
        })),
    }
}

fn axis_of(op: &'static str, axis: i64, rank: usize) -> Result<usize> {
    let a = if axis < 0 {
        i128::from(axis) + rank as i128
    } else {
        i128::from(axis)
    };
    if a < 0 || a >= rank as i128 {
        return Err(Error::new(ErrorKind::AxisOutOfRange {
            op,
            arg: "axis",
            axis: i128::from(axis),
            rank,
        }));
    }
    Ok(a as usize)
}

fn start_of<W: Element>(cell: W, r: Reduction, include_self: bool) -> W {
    if include_self { cell } else { W::identity(r) }
}

fn fold_in<W: Element>(start: W, us: &[W], r: Reduction, include_self: bool) -> W {
    let f = |a: W, u: W| match r {
        Reduction::Add | Reduction::Mean => a.reduce_add(u),
        Reduction::Sub => a.reduce_sub(u),
        Reduction::Mul => a.reduce_mul(u),
        Reduction::Min => a.reduce_min(u),
        Reduction::Max => a.reduce_max(u),
        Reduction::None => u,
    };
    let acc = us
        .iter()
        .fold(start_of(start, r, include_self), |a, &u| f(a, u));
    if r == Reduction::Mean {
        W::reduce_mean(acc, us.len() as u64 + u64::from(include_self))
    } else {
        acc
    }
}

/// Applies the contributions `(flat destination cell, update)` (in order) to a copy of `data`.
fn apply<T: Element>(
    data: &TensorView<'_, T>,
    contributions: Vec<(usize, T)>,
    opts: &ScatterOptions,
) -> Tensor<T> {
    let mut out = data.to_vec();
    let mut per_cell: BTreeMap<usize, Vec<T>> = BTreeMap::new();
    for (cell, u) in contributions {
        per_cell.entry(cell).or_default().push(u);
    }
    let r = opts.reduction;
    let wide = opts.accumulation == Accumulation::Wide
        && matches!(
            r,
            Reduction::Add | Reduction::Sub | Reduction::Mul | Reduction::Mean
        );
    for (cell, us) in per_cell {
        out[cell] = match r {
            Reduction::None => *us.last().expect("a cell in the map has a contribution"),
            _ if wide => {
                let wus: Vec<T::Wide> = us.iter().map(|u| u.widen()).collect();
                T::narrow(fold_in(out[cell].widen(), &wus, r, opts.include_self))
            }
            _ => fold_in(out[cell], &us, r, opts.include_self),
        };
    }
    Tensor::from_vec(out, data.shape()).expect("same shape as data")
}

fn check_reduction<T: Element>(op: &'static str, r: Reduction) -> Result<()> {
    if r == Reduction::Mean && T::DTYPE == crate::DType::Bool {
        return Err(Error::new(ErrorKind::UnsupportedReduction {
            op,
            reduction: "mean".into(),
            reason: String::new(),
        }));
    }
    Ok(())
}

fn shape_error(op: &'static str, arg: &'static str, got: &[usize]) -> Error {
    Error::new(ErrorKind::ShapeMismatch {
        op,
        arg,
        expected: String::new(),
        got: got.to_vec(),
    })
}

fn rank_error(op: &'static str, arg: &'static str, got: usize) -> Error {
    Error::new(ErrorKind::RankMismatch {
        op,
        arg,
        expected: String::new(),
        got,
    })
}

/// ScatterElements, literally (ONNX ScatterElements-18 + our reductions and policies):
/// `output[i₀, …, indices[i₀…], …] = f(output[…], updates[i₀…])` along `axis`.
///
/// # Errors
/// The same [`ErrorKind`]s as [`crate::scatter_elements`] (free-text fields left empty).
pub fn scatter_elements<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<Tensor<T>> {
    check_reduction::<T>("scatter_elements", opts.reduction)?;
    let c = elements_contributions(data.shape(), indices, updates.shape(), opts)?;
    Ok(apply(data, values(c, updates), opts))
}

/// Every contribution of [`scatter_elements`] in index order: (flat destination cell, update
/// coordinate), after the axis, shape and index checks.
pub(crate) fn elements_contributions<I: IndexInt>(
    ds: &[usize],
    indices: &TensorView<'_, I>,
    us: &[usize],
    opts: &ScatterOptions,
) -> Result<Vec<(usize, Vec<usize>)>> {
    const OP: &str = "scatter_elements";
    let axis = axis_of(OP, opts.axis, ds.len())?;
    if indices.shape().len() != ds.len() {
        return Err(rank_error(OP, "indices", indices.shape().len()));
    }
    if us != indices.shape() {
        return Err(shape_error(OP, "updates", us));
    }
    if (0..ds.len()).any(|d| d != axis && indices.shape()[d] > ds[d]) {
        return Err(shape_error(OP, "indices", indices.shape()));
    }
    let mut contributions = vec![];
    for p in coords(indices.shape()) {
        let value = indices.get(&p).expect("p in shape").to_i128();
        if let Some(at) = resolve_one(OP, value, ds[axis], axis, p.clone(), opts.index_policy)? {
            let mut target = p.clone();
            target[axis] = at;
            contributions.push((flat(ds, &target), p));
        }
    }
    Ok(contributions)
}

/// The update values of `(cell, update coordinate)` contributions.
fn values<T: Element>(c: Vec<(usize, Vec<usize>)>, updates: &TensorView<'_, T>) -> Vec<(usize, T)> {
    c.into_iter()
        .map(|(cell, u)| (cell, updates.get(&u).expect("u in shape")))
        .collect()
}

/// ScatterND, literally (ONNX ScatterND-18 + our reductions and policies):
/// `output[indices[t]…, s…] = f(output[…], updates[t…, s…])`, every component checked alone.
///
/// # Errors
/// The same [`ErrorKind`]s as [`crate::scatter_nd`].
pub fn scatter_nd<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<Tensor<T>> {
    check_reduction::<T>("scatter_nd", opts.reduction)?;
    let c = nd_contributions(data.shape(), indices, updates.shape(), opts)?;
    Ok(apply(data, values(c, updates), opts))
}

/// Every contribution of [`scatter_nd`] (as [`elements_contributions`]).
pub(crate) fn nd_contributions<I: IndexInt>(
    ds: &[usize],
    indices: &TensorView<'_, I>,
    us: &[usize],
    opts: &ScatterOptions,
) -> Result<Vec<(usize, Vec<usize>)>> {
    const OP: &str = "scatter_nd";
    let is = indices.shape();
    let Some((&k, tuple_shape)) = is.split_last() else {
        return Err(rank_error(OP, "indices", 0));
    };
    if k > ds.len() {
        return Err(shape_error(OP, "indices", is));
    }
    let expected: Vec<usize> = [tuple_shape, &ds[k..]].concat();
    if us != expected.as_slice() {
        return Err(shape_error(OP, "updates", us));
    }
    let mut tuples = vec![];
    for t in coords(tuple_shape) {
        let mut target = Some(vec![]);
        for (j, &size) in ds.iter().enumerate().take(k) {
            let pos = [t.clone(), vec![j]].concat();
            let value = indices.get(&pos).expect("pos in shape").to_i128();
            match resolve_one(OP, value, size, j, pos, opts.index_policy)? {
                Some(at) => target.iter_mut().for_each(|c| c.push(at)),
                None => target = None,
            }
        }
        tuples.push((t, target));
    }
    let mut contributions = vec![];
    for (t, target) in tuples {
        let Some(target) = target else { continue };
        for s in coords(&ds[k..]) {
            let cell = flat(ds, &[target.clone(), s.clone()].concat());
            contributions.push((cell, [t.clone(), s].concat()));
        }
    }
    Ok(contributions)
}

/// ScatterUpdate, literally (OpenVINO ScatterUpdate-3 + our reductions and policies):
/// `output[o…, indices[p…], i…] = f(output[…], updates[o…, p…, i…])`.
///
/// # Errors
/// The same [`ErrorKind`]s as [`crate::scatter_update`].
pub fn scatter_update<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<Tensor<T>> {
    check_reduction::<T>("scatter_update", opts.reduction)?;
    let c = update_contributions(data.shape(), indices, updates.shape(), opts)?;
    Ok(apply(data, values(c, updates), opts))
}

/// Every contribution of [`scatter_update`] (as [`elements_contributions`]).
pub(crate) fn update_contributions<I: IndexInt>(
    ds: &[usize],
    indices: &TensorView<'_, I>,
    us: &[usize],
    opts: &ScatterOptions,
) -> Result<Vec<(usize, Vec<usize>)>> {
    const OP: &str = "scatter_update";
    let axis = axis_of(OP, opts.axis, ds.len())?;
    let expected: Vec<usize> = [&ds[..axis], indices.shape(), &ds[axis + 1..]].concat();
    if us.len() != expected.len() {
        return Err(rank_error(OP, "updates", us.len()));
    }
    if us != expected.as_slice() {
        return Err(shape_error(OP, "updates", us));
    }
    let mut resolved = vec![];
    for p in coords(indices.shape()) {
        let value = indices.get(&p).expect("p in shape").to_i128();
        resolved.push(resolve_one(
            OP,
            value,
            ds[axis],
            axis,
            p,
            opts.index_policy,
        )?);
    }
    let qi = indices.shape().len();
    let mut contributions = vec![];
    for u in coords(us) {
        let p = &u[axis..axis + qi];
        if let Some(at) = resolved[flat(indices.shape(), p)] {
            let target = [&u[..axis], &[at], &u[axis + qi..]].concat();
            contributions.push((flat(ds, &target), u));
        }
    }
    Ok(contributions)
}

mod gather;
pub use gather::{gather, gather_elements, gather_nd};
mod vjp;
pub use vjp::{
    gather_elements_vjp, gather_nd_vjp, gather_vjp, scatter_elements_vjp, scatter_nd_vjp,
    scatter_update_vjp,
};
pub mod segment;
