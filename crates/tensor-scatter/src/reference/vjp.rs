//! The backward passes of the scatters and gathers, literally: the forward's contributions
//! (destination cell, update coordinate) grouped by cell, then each cell's rule applied to
//! its members in index order. A gather's backward adds every output element's gradient
//! into the data cell it read, in row-major order of the output.

use std::collections::BTreeMap;

use super::gather::{Sources, gather_elements_sources, gather_nd_sources, gather_sources};
use super::{
    coords, elements_contributions, flat, nd_contributions, shape_error, update_contributions,
};
use crate::segment::{Float, Real, Ties};
use crate::{
    Element, GatherOptions, IndexInt, Reduction, Result, ScatterGrads, ScatterOptions, Tensor,
    TensorView,
};

type Contributions = Vec<(usize, Vec<usize>)>;

/// The backward of [`scatter_elements`](super::scatter_elements): each cell's members get
/// none: `g` to the last; add `g`; sub `-g`; mean `g / count`; mul `g` times the product of
/// the others (the fold before it, data's value first with include_self, times the fold of
/// the later ones from the last); min / max `g / ties` to each member equal to the result
/// (NaN equal to NaN), or `g` to the first with `Ties::First`. Data's value, with
/// include_self, is the fold's first member; a cell no update reached passes `g` through.
///
/// # Errors
/// The forward's, naming `scatter_elements_vjp`, and a `grad` not of data's shape.
pub fn scatter_elements_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<ScatterGrads<T>> {
    const OP: &str = "scatter_elements_vjp";
    let c = elements_contributions(data.shape(), indices, updates.shape(), opts)
        .map_err(|e| e.with_op(OP))?;
    rule(OP, grad, data, updates, c, opts)
}

/// The backward of [`scatter_nd`](super::scatter_nd) (see [`scatter_elements_vjp`]).
///
/// # Errors
/// As [`scatter_elements_vjp`] (naming `scatter_nd_vjp`).
pub fn scatter_nd_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<ScatterGrads<T>> {
    const OP: &str = "scatter_nd_vjp";
    let c = nd_contributions(data.shape(), indices, updates.shape(), opts)
        .map_err(|e| e.with_op(OP))?;
    rule(OP, grad, data, updates, c, opts)
}

/// The backward of [`scatter_update`](super::scatter_update) (see [`scatter_elements_vjp`]).
///
/// # Errors
/// As [`scatter_elements_vjp`] (naming `scatter_update_vjp`).
pub fn scatter_update_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<ScatterGrads<T>> {
    const OP: &str = "scatter_update_vjp";
    let c = update_contributions(data.shape(), indices, updates.shape(), opts)
        .map_err(|e| e.with_op(OP))?;
    rule(OP, grad, data, updates, c, opts)
}

fn values<T: Element>(v: &TensorView<'_, T>) -> Vec<T> {
    coords(v.shape())
        .iter()
        .map(|p| v.get(p).expect("p in shape"))
        .collect()
}

fn rule<T: Float>(
    op: &'static str,
    grad: &TensorView<'_, T>,
    data: &TensorView<'_, T>,
    updates: &TensorView<'_, T>,
    contributions: Contributions,
    opts: &ScatterOptions,
) -> Result<ScatterGrads<T>> {
    let ds = data.shape();
    if grad.shape() != ds {
        return Err(shape_error(op, "grad", grad.shape()));
    }
    let (g, d, u) = (values(grad), values(data), values(updates));
    let us = updates.shape();
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (cell, at) in contributions {
        members.entry(cell).or_default().push(flat(us, &at));
    }
    let r = opts.reduction;
    let s = opts.include_self && r != Reduction::None;
    let one = T::Acc::count(1);
    let share = |g: T, n: usize| T::from_acc(g.to_acc() / T::Acc::count(n as u64));
    let same = |x: T, r: T| {
        let (x, r) = (x.to_acc(), r.to_acc());
        x == r || (x.is_nan() && r.is_nan())
    };
    let mut gd = g.clone();
    let mut gu = vec![T::default(); u.len()];
    for (cell, ms) in members {
        let g = g[cell];
        let start = s.then_some(d[cell]);
        gd[cell] = T::default();
        match r {
            Reduction::None => gu[*ms.last().expect("a member")] = g,
            Reduction::Add | Reduction::Sub => {
                let neg = T::from_acc(T::Acc::ZERO - g.to_acc());
                ms.iter()
                    .for_each(|&m| gu[m] = if r == Reduction::Add { g } else { neg });
                if s {
                    gd[cell] = g;
                }
            }
            Reduction::Mean => {
                let n = ms.len() + usize::from(s);
                ms.iter().for_each(|&m| gu[m] = share(g, n));
                if s {
                    gd[cell] = share(g, n);
                }
            }
            Reduction::Mul => {
                for (j, &m) in ms.iter().enumerate() {
                    let mut before = start.map_or(one, |x| x.to_acc());
                    for &i in &ms[..j] {
                        before = before * u[i].to_acc();
                    }
                    let mut after = one;
                    for &i in ms[j + 1..].iter().rev() {
                        after = after * u[i].to_acc();
                    }
                    gu[m] = T::from_acc(before * after * g.to_acc());
                }
                if s {
                    let all = ms.iter().rev().fold(one, |a, &i| a * u[i].to_acc());
                    gd[cell] = T::from_acc(all * g.to_acc());
                }
            }
            Reduction::Min | Reduction::Max => {
                let f = |a: T, x: T| {
                    if r == Reduction::Min {
                        a.reduce_min(x)
                    } else {
                        a.reduce_max(x)
                    }
                };
                let best = ms
                    .iter()
                    .fold(start.unwrap_or(T::identity(r)), |a, &i| f(a, u[i]));
                let self_ties = start.is_some_and(|x| same(x, best));
                let winners: Vec<usize> =
                    ms.iter().copied().filter(|&i| same(u[i], best)).collect();
                if opts.ties == Ties::First {
                    if self_ties {
                        gd[cell] = g;
                    } else {
                        gu[winners[0]] = g;
                    }
                } else {
                    let n = winners.len() + usize::from(self_ties);
                    winners.iter().for_each(|&i| gu[i] = share(g, n));
                    if self_ties {
                        gd[cell] = share(g, n);
                    }
                }
            }
        }
    }
    Ok(ScatterGrads {
        data: Tensor::from_vec(gd, ds)?,
        updates: Tensor::from_vec(gu, us)?,
    })
}

/// The backward of [`gather`](super::gather): every output element's gradient added (in the
/// element type, in row-major order of the output) into the data cell it read.
///
/// # Errors
/// The forward's, naming `gather_vjp`, and a `grad` not of the output's shape.
pub fn gather_vjp<T: Element, I: IndexInt>(
    grad: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    data_shape: &[usize],
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    const OP: &str = "gather_vjp";
    let s = gather_sources(data_shape, indices, opts).map_err(|e| e.with_op(OP))?;
    add_back(OP, grad, data_shape, s)
}

/// The backward of [`gather_elements`](super::gather_elements) (see [`gather_vjp`]).
///
/// # Errors
/// As [`gather_vjp`] (naming `gather_elements_vjp`).
pub fn gather_elements_vjp<T: Element, I: IndexInt>(
    grad: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    data_shape: &[usize],
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    const OP: &str = "gather_elements_vjp";
    let s = gather_elements_sources(data_shape, indices, opts).map_err(|e| e.with_op(OP))?;
    add_back(OP, grad, data_shape, s)
}

/// The backward of [`gather_nd`](super::gather_nd) (see [`gather_vjp`]).
///
/// # Errors
/// As [`gather_vjp`] (naming `gather_nd_vjp`).
pub fn gather_nd_vjp<T: Element, I: IndexInt>(
    grad: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    data_shape: &[usize],
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    const OP: &str = "gather_nd_vjp";
    let s = gather_nd_sources(data_shape, indices, opts).map_err(|e| e.with_op(OP))?;
    add_back(OP, grad, data_shape, s)
}

fn add_back<T: Element>(
    op: &'static str,
    grad: &TensorView<'_, T>,
    ds: &[usize],
    (sources, out_shape): Sources,
) -> Result<Tensor<T>> {
    if grad.shape() != out_shape.as_slice() {
        return Err(shape_error(op, "grad", grad.shape()));
    }
    let mut out = vec![T::default(); ds.iter().product()];
    for (c, at) in coords(&out_shape).iter().zip(sources) {
        if let Some(p) = at {
            let i = flat(ds, &p);
            out[i] = out[i].reduce_add(grad.get(c).expect("c in shape"));
        }
    }
    Tensor::from_vec(out, ds)
}
