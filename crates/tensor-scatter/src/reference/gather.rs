//! The gathers, literally: every index resolved in row-major order of `indices` (the first
//! bad one is the error), then every output cell read by its own coordinate arithmetic.

use super::{axis_of, coords, flat, rank_error, resolve_one, shape_error};
use crate::{
    Element, Error, ErrorKind, GatherOptions, GatherOutOfRange, IndexInt, IndexPolicy, OutOfRange,
    Result, Tensor, TensorView,
};

/// The gather policy as a scatter policy: `Fill` drops the index like `Skip`.
fn policy<T>(opts: &GatherOptions<T>) -> IndexPolicy {
    IndexPolicy::new(
        opts.negative,
        match opts.out_of_range {
            GatherOutOfRange::Error => OutOfRange::Error,
            GatherOutOfRange::Clamp => OutOfRange::Clamp,
            GatherOutOfRange::Fill => OutOfRange::Skip,
        },
    )
}

fn batch_error(op: &'static str) -> Error {
    Error::new(ErrorKind::InvalidArgument {
        op,
        arg: "batch_dims",
        reason: String::new(),
    })
}

fn tensor<T: Element>(values: Vec<T>, shape: &[usize]) -> Tensor<T> {
    Tensor::from_vec(values, shape).expect("one value per output coordinate")
}

/// Gather, literally (ONNX Gather-13 + OpenVINO Gather-8's `batch_dims` + our policies):
/// `out[b…, o…, i…, s…] = data[b…, o…, indices[b…, i…], s…]`.
///
/// # Errors
/// The same [`ErrorKind`]s as [`crate::gather`].
pub fn gather<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    let (sources, out_shape) = gather_sources(data.shape(), indices, opts)?;
    Ok(read(data, sources, &out_shape, opts))
}

/// The data coordinate every output element of [`gather`] reads (`None` where filled), in
/// row-major order, and the output shape.
pub(crate) fn gather_sources<T, I: IndexInt>(
    ds: &[usize],
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Sources> {
    const OP: &str = "gather";
    let qs = indices.shape();
    let axis = axis_of(OP, opts.axis, ds.len())?;
    let q = qs.len() as i128;
    let b = i128::from(opts.batch_dims) + if opts.batch_dims < 0 { q } else { 0 };
    if b < 0 || b > q || b > axis as i128 {
        return Err(batch_error(OP));
    }
    let b = b as usize;
    if ds[..b] != qs[..b] {
        return Err(shape_error(OP, "indices", qs));
    }
    let mut resolved = vec![];
    for p in coords(qs) {
        let value = indices.get(&p).expect("p in shape").to_i128();
        resolved.push(resolve_one(OP, value, ds[axis], axis, p, policy(opts))?);
    }
    let out_shape = [&ds[..axis], &qs[b..], &ds[axis + 1..]].concat();
    let sources = coords(&out_shape)
        .into_iter()
        .map(|c| {
            let (o, rest) = c.split_at(axis);
            let (i, s) = rest.split_at(qs.len() - b);
            let at = resolved[flat(qs, &[&o[..b], i].concat())];
            at.map(|p| [o, &[p], s].concat())
        })
        .collect();
    Ok((sources, out_shape))
}

/// Data coordinates read by a gather, in output order, and the output shape.
pub(crate) type Sources = (Vec<Option<Vec<usize>>>, Vec<usize>);

/// The gather's output from its [`Sources`].
fn read<T: Element>(
    data: &TensorView<'_, T>,
    sources: Vec<Option<Vec<usize>>>,
    out_shape: &[usize],
    opts: &GatherOptions<T>,
) -> Tensor<T> {
    let values = sources
        .into_iter()
        .map(|at| at.map_or(opts.fill_value, |c| data.get(&c).expect("in shape")))
        .collect();
    tensor(values, out_shape)
}

/// GatherElements, literally (ONNX GatherElements-13 + our policies):
/// `out[c] = data[c with c[axis] := indices[c]]`.
///
/// # Errors
/// The same [`ErrorKind`]s as [`crate::gather_elements`].
pub fn gather_elements<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    let (sources, out_shape) = gather_elements_sources(data.shape(), indices, opts)?;
    Ok(read(data, sources, &out_shape, opts))
}

/// As [`gather_sources`], for [`gather_elements`].
pub(crate) fn gather_elements_sources<T, I: IndexInt>(
    ds: &[usize],
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Sources> {
    const OP: &str = "gather_elements";
    let qs = indices.shape();
    let axis = axis_of(OP, opts.axis, ds.len())?;
    if qs.len() != ds.len() {
        return Err(rank_error(OP, "indices", qs.len()));
    }
    if (0..ds.len()).any(|d| d != axis && qs[d] > ds[d]) {
        return Err(shape_error(OP, "indices", qs));
    }
    let mut resolved = vec![];
    for p in coords(qs) {
        let value = indices.get(&p).expect("p in shape").to_i128();
        resolved.push(resolve_one(OP, value, ds[axis], axis, p, policy(opts))?);
    }
    let sources = coords(qs)
        .into_iter()
        .zip(resolved)
        .map(|(mut c, at)| {
            at.map(|p| {
                c[axis] = p;
                c
            })
        })
        .collect();
    Ok((sources, qs.to_vec()))
}

/// GatherND, literally (ONNX GatherND-13 with `batch_dims` + our policies):
/// `out[b…, t…, s…] = data[b…, indices[b…, t…, 0], …, indices[b…, t…, k-1], s…]`, every
/// component checked against its own dimension.
///
/// # Errors
/// The same [`ErrorKind`]s as [`crate::gather_nd`].
pub fn gather_nd<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    let (sources, out_shape) = gather_nd_sources(data.shape(), indices, opts)?;
    Ok(read(data, sources, &out_shape, opts))
}

/// As [`gather_sources`], for [`gather_nd`].
pub(crate) fn gather_nd_sources<T, I: IndexInt>(
    ds: &[usize],
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Sources> {
    const OP: &str = "gather_nd";
    let qs = indices.shape();
    let Some((&k, tuple_shape)) = qs.split_last() else {
        return Err(rank_error(OP, "indices", 0));
    };
    if opts.batch_dims < 0 || opts.batch_dims >= qs.len() as i64 {
        return Err(batch_error(OP));
    }
    let b = opts.batch_dims as usize;
    if b + k > ds.len() {
        return Err(shape_error(OP, "indices", qs));
    }
    if ds[..b] != qs[..b] {
        return Err(shape_error(OP, "indices", qs));
    }
    let mut targets = vec![];
    for t in coords(tuple_shape) {
        let mut target = Some(vec![]);
        for j in 0..k {
            let pos = [t.clone(), vec![j]].concat();
            let value = indices.get(&pos).expect("pos in shape").to_i128();
            match resolve_one(OP, value, ds[b + j], b + j, pos, policy(opts))? {
                Some(p) => target.iter_mut().for_each(|v| v.push(p)),
                None => target = None,
            }
        }
        targets.push(target);
    }
    let out_shape = [tuple_shape, &ds[b + k..]].concat();
    let sources = coords(&out_shape)
        .into_iter()
        .map(|c| {
            let (t, s) = c.split_at(tuple_shape.len());
            targets[flat(tuple_shape, t)]
                .as_ref()
                .map(|p| [&t[..b], p, s].concat())
        })
        .collect();
    Ok((sources, out_shape))
}
