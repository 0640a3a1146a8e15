//! The shape-only plans of the three gathers.

use crate::error::{Error, Result};
use crate::kernels::gather::{Comp, ElementsGeom, Geom, SliceGeom};
use crate::shape::{contiguous_strides, normalize_axis, numel, sat_product};

/// The shape-only plan of one gather (for contiguous `data` and `indices`).
#[derive(Clone, Debug)]
pub(crate) struct GatherPlan {
    pub(super) op: &'static str,
    pub(crate) out_shape: Vec<usize>,
    pub(crate) out_numel: usize,
    pub(super) geom: Geom,
    /// The data dimension and size component `j` of an index tuple addresses.
    pub(super) comps: Vec<(usize, usize)>,
    /// Whole-slice gathers: data dims `[0, lead_end)` are the lead (batch and outer) dims and
    /// `[slice_start, rank)` the slice (for reading a strided `data` where it lies).
    pub(super) lead_end: usize,
    pub(super) slice_start: usize,
}

pub(crate) type GatherPlanner = fn(&[usize], &[usize], i64, i64) -> Result<GatherPlan>;

fn out_numel(op: &'static str, shape: &[usize]) -> Result<usize> {
    let n = numel(op, "indices", shape)?;
    if n > isize::MAX as usize / 8 {
        return Err(Error::overflow(op, "indices"));
    }
    Ok(n)
}

fn batch_shape_error(op: &'static str, b: usize, data: &[usize], idx: &[usize]) -> Error {
    Error::shape(
        op,
        "indices",
        format!(
            "leading {b} batch dimension(s) equal to data's {:?}",
            &data[..b]
        ),
        idx,
    )
}

pub(super) const GATHER: &str = "gather";
pub(super) const GATHER_ELEMENTS: &str = "gather_elements";
pub(super) const GATHER_ND: &str = "gather_nd";

/// `gather`: `out[B…, O…, I…, S…] = data[B…, O…, indices[B…, I…], S…]`.
pub(crate) fn plan_gather(
    d: &[usize],
    q: &[usize],
    axis: i64,
    batch_dims: i64,
) -> Result<GatherPlan> {
    let op = GATHER;
    let a = normalize_axis(op, "axis", axis, d.len())?;
    let b = i128::from(batch_dims) + if batch_dims < 0 { q.len() as i128 } else { 0 };
    if b < 0 || b > q.len() as i128 {
        return Err(Error::invalid(
            op,
            "batch_dims",
            format!(
                "batch_dims {batch_dims} is outside [-{0}, {0}] for indices of rank {0}",
                q.len()
            ),
        ));
    }
    let b = b as usize;
    if b > a {
        return Err(Error::invalid(
            op,
            "batch_dims",
            format!("batch_dims {b} exceeds the axis {a}"),
        ));
    }
    if d[..b] != q[..b] {
        return Err(batch_shape_error(op, b, d, q));
    }
    let out_shape = [&d[..a], &q[b..], &d[a + 1..]].concat();
    let inner = sat_product(&d[a + 1..]);
    Ok(GatherPlan {
        op,
        out_numel: out_numel(op, &out_shape)?,
        out_shape,
        geom: Geom::Slices(SliceGeom {
            lead_n: sat_product(&d[..a]),
            tuple_n: sat_product(&q[b..]),
            batch_div: sat_product(&d[b..a]),
            lead_data: d[a].saturating_mul(inner),
            comps: vec![Comp {
                size: d[a],
                stride: inner,
            }],
            slice: inner,
        }),
        comps: vec![(a, d[a])],
        lead_end: a,
        slice_start: a + 1,
    })
}

/// `gather_elements`: `out[c] = data[c with c[axis] := indices[c]]`.
pub(crate) fn plan_gather_elements(
    d: &[usize],
    q: &[usize],
    axis: i64,
    _: i64,
) -> Result<GatherPlan> {
    let op = GATHER_ELEMENTS;
    let r = d.len();
    let a = normalize_axis(op, "axis", axis, r)?;
    if q.len() != r {
        return Err(Error::rank(
            op,
            "indices",
            format!("rank of data ({r})"),
            q.len(),
        ));
    }
    if let Some(dim) = (0..r).find(|&x| x != a && q[x] > d[x]) {
        return Err(Error::shape(
            op,
            "indices",
            format!(
                "extent at most data's {d:?} on every dimension except the axis {a} (dimension {dim} is {})",
                q[dim]
            ),
            q,
        ));
    }
    Ok(GatherPlan {
        op,
        out_numel: out_numel(op, q)?,
        out_shape: q.to_vec(),
        geom: Geom::Elements(ElementsGeom {
            shape: q.to_vec(),
            data_strides: contiguous_strides(d).iter().map(|&s| s as usize).collect(),
            axis: a,
            axis_size: d[a],
        }),
        comps: vec![(a, d[a])],
        lead_end: 0,
        slice_start: r,
    })
}

/// `gather_nd`: `out[B…, T…, S…] = data[B…, indices[B…, T…, 0], …, indices[B…, T…, k-1], S…]`.
pub(crate) fn plan_gather_nd(
    d: &[usize],
    q: &[usize],
    _: i64,
    batch_dims: i64,
) -> Result<GatherPlan> {
    let op = GATHER_ND;
    let Some((&k, tuple)) = q.split_last() else {
        return Err(Error::rank(op, "indices", "rank of at least 1".into(), 0));
    };
    if batch_dims < 0 || batch_dims as u64 >= q.len() as u64 {
        return Err(Error::invalid(
            op,
            "batch_dims",
            format!(
                "batch_dims {batch_dims} is outside [0, {}) for indices of rank {}",
                q.len(),
                q.len()
            ),
        ));
    }
    let b = batch_dims as usize;
    if b.saturating_add(k) > d.len() {
        return Err(Error::shape(
            op,
            "indices",
            format!(
                "a last dimension (the tuple length) of at most {}: the rank of data ({}) minus batch_dims ({b})",
                d.len().saturating_sub(b),
                d.len()
            ),
            q,
        ));
    }
    if d[..b] != q[..b] {
        return Err(batch_shape_error(op, b, d, q));
    }
    let out_shape = [tuple, &d[b + k..]].concat();
    let comps: Vec<(usize, usize)> = (b..b + k).map(|x| (x, d[x])).collect();
    Ok(GatherPlan {
        op,
        out_numel: out_numel(op, &out_shape)?,
        out_shape,
        geom: Geom::Slices(SliceGeom {
            lead_n: sat_product(&d[..b]),
            tuple_n: sat_product(&tuple[b..]),
            batch_div: 1,
            lead_data: sat_product(&d[b..]),
            comps: comps
                .iter()
                .map(|&(x, size)| Comp {
                    size,
                    stride: sat_product(&d[x + 1..]),
                })
                .collect(),
            slice: sat_product(&d[b + k..]),
        }),
        comps,
        lead_end: b,
        slice_start: b + k,
    })
}
