//! Vector-Jacobian products (backward passes) of the segment reductions and their inverses:
//! given the forward's inputs and the gradient of a loss with respect to its output, the
//! gradients with respect to `src` and to `out`'s starting values.
//!
//! Every position of `src` belongs to at most one output cell (its segment), so each rule is
//! per cell: sum gives each member the cell's gradient `g`; mean `g / count` (`out`'s value
//! counted, as in the forward); mul `g` times the product of the cell's other values (no
//! division, so zeros are exact); min and max give `g` to the members equal to the result
//! (NaN counting as equal to NaN), split evenly ([`Ties::Split`]) or all to the one the
//! forward's `arg` names ([`Ties::First`]). The gathers' backward is the segment sum.
//! Each result is computed in one fixed order: bit-identical for any thread count.

use super::plan::{Dims, Lanes, Mode};
use super::{
    Float, Kind, Prepared, Real, SegmentOptions, check_reduction, filled, prepare, reduce,
    reduce_prepared, tensor,
};
use crate::dtype::{Element, Reduction};
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::gather::{GatherOptions, GatherOutOfRange};
use crate::index::{IndexInt, NegativeIndices};
use crate::kernels::{Rows, build_rows};
use crate::view::{Layout, Tensor, TensorView, TensorViewMut};
use std::sync::Mutex;

pub use crate::reduce::Ties;

/// The gradients of a segment reduction.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Grads<T> {
    /// With respect to `src` (its shape).
    pub src: Tensor<T>,
    /// With respect to `out`'s starting values, when the forward had `out` (its shape).
    pub out: Option<Tensor<T>>,
}

/// The backward of [`scatter`](super::scatter) / [`scatter_out`](super::scatter_out) (and
/// of [`scatter_arg`](super::scatter_arg) for min and max): `grad` is the gradient with
/// respect to the forward's output, `out` the forward's starting values (`None` when it had
/// none), `opts` the forward's options (plus [`SegmentOptions::ties`]).
///
/// ```
/// use tensor_scatter::segment::{scatter_vjp, SegmentOptions};
/// use tensor_scatter::{Reduction, TensorView};
/// let src = TensorView::new(&[1.0f32, 5.0, 2.0, 5.0], &[4]).unwrap();
/// let index = TensorView::new(&[0i64, 0, 1, 0], &[4]).unwrap();
/// let grad = TensorView::new(&[6.0f32, 1.0], &[2]).unwrap();
/// let opts = SegmentOptions::new().reduce(Reduction::Max);
/// // Cell 0's maximum 5 is reached twice: the gradient is split between them.
/// let g = scatter_vjp(&grad, &src, &index, None, &opts).unwrap();
/// assert_eq!(g.src.as_slice(), &[0.0, 3.0, 1.0, 3.0]);
/// let g = scatter_vjp(&grad, &src, &index, None, &opts.reduce(Reduction::Mean)).unwrap();
/// assert_eq!(g.src.as_slice(), &[2.0, 2.0, 1.0, 2.0]);
/// ```
///
/// # Errors
/// Those of the forward, plus a `grad` not shaped as the forward's output (naming `grad`).
pub fn scatter_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: Option<&TensorView<'_, T>>,
    opts: &SegmentOptions,
) -> Result<Grads<T>> {
    vjp_new("scatter_vjp", Kind::Scatter, grad, src, index, out, opts)
}

/// The backward of [`segment_coo`](super::segment_coo) and its `_out` / `_arg` forms (see
/// [`scatter_vjp`]).
///
/// # Errors
/// As [`scatter_vjp`].
pub fn segment_coo_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: Option<&TensorView<'_, T>>,
    opts: &SegmentOptions,
) -> Result<Grads<T>> {
    vjp_new("segment_coo_vjp", Kind::Coo, grad, src, index, out, opts)
}

/// The backward of [`segment_csr`](super::segment_csr) and its `_out` / `_arg` forms (see
/// [`scatter_vjp`]). Positions outside every segment get 0. The `_out` forms overwrite `out`,
/// so the gradient with respect to its old values is 0 (given when `out` is).
///
/// # Errors
/// As [`scatter_vjp`], plus an `out` not shaped as `grad`.
pub fn segment_csr_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    indptr: &TensorView<'_, I>,
    out: Option<&TensorView<'_, T>>,
    opts: &SegmentOptions,
) -> Result<Grads<T>> {
    let op = "segment_csr_vjp";
    let mut g = vjp_new(op, Kind::Csr, grad, src, indptr, None, opts)?;
    if let Some(o) = out {
        if o.layout.shape != grad.layout.shape {
            return Err(Error::shape(
                op,
                "out",
                format!("{:?} (the forward's output shape)", grad.layout.shape),
                &o.layout.shape,
            ));
        }
        let zeros = filled(op, "out", grad.layout.numel, T::default())?;
        g.out = Some(tensor(zeros, &grad.layout.shape));
    }
    Ok(g)
}

/// The backward of [`gather_coo`](super::gather_coo) from a `src` whose extent along
/// `dim = index.ndim - 1` was `dim_size`: the sum of `grad` by `index` (a segment
/// [`scatter`](super::scatter), so deterministic). Any other dtype works too.
///
/// # Errors
/// Those of [`scatter`](super::scatter) (an index outside `[0, dim_size)`, one that does not
/// broadcast against `grad`).
pub fn gather_coo_vjp<T: Element, I: IndexInt>(
    grad: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    dim_size: usize,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    const OP: &str = "gather_coo_vjp";
    let rank = index.layout.shape.len();
    if rank == 0 || rank > grad.layout.shape.len() {
        return Err(Error::rank(
            OP,
            "index",
            format!("1 to {} (grad's rank)", grad.layout.shape.len()),
            rank,
        ));
    }
    let o = opts
        .dim(rank as i64 - 1)
        .dim_size(dim_size)
        .reduce(Reduction::Add);
    let (v, _, shape) = reduce(OP, Kind::Scatter, grad, index, None, false, &o)?;
    Ok(tensor(v, &shape))
}

/// The backward of [`gather_csr`](super::gather_csr): the sum of `grad` over each segment
/// (a [`segment_csr`](super::segment_csr) sum; positions outside every segment read
/// nothing, so they carry no gradient).
///
/// # Errors
/// Those of [`segment_csr`](super::segment_csr).
pub fn gather_csr_vjp<T: Element, I: IndexInt>(
    grad: &TensorView<'_, T>,
    indptr: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    let o = opts.reduce(Reduction::Add);
    let (v, _, shape) = reduce("gather_csr_vjp", Kind::Csr, grad, indptr, None, false, &o)?;
    Ok(tensor(v, &shape))
}

/// The segment of every src position, lane-major as [`Lanes`] (`n` for none).
fn segment_ids(kind: Kind, lanes: Lanes<'_>, e: usize, n: usize) -> Result<Lanes<'_>> {
    if kind != Kind::Csr {
        return Ok(lanes);
    }
    // With cells (the caller returned before otherwise) every lane holds `n + 1` offsets.
    let count = lanes.values.len() / lanes.len.max(1);
    let mut values = filled("segment_csr_vjp", "src", count * e, n as i64)?;
    for (l, ids) in values.chunks_mut(e.max(1)).enumerate().take(count) {
        let offs = lanes.lane(l);
        for s in 0..n {
            ids[offs[s] as usize..offs[s + 1] as usize].fill(s as i64);
        }
    }
    Ok(Lanes {
        mode: lanes.mode,
        values: values.into(),
        len: e,
        narrow: None,
    })
}

/// `g / count` in the compute type, rounded once.
pub(crate) fn share<T: Float>(g: T, count: u64) -> T {
    T::from_acc(g.to_acc() / T::Acc::count(count))
}

/// NaN counts as equal to NaN: a NaN result came from a NaN.
pub(crate) fn same<T: Float>(x: T, r: T) -> bool {
    let (x, r) = (x.to_acc(), r.to_acc());
    x == r || (x.is_nan() && r.is_nan())
}

/// The gradients with respect to src (`None` once written into a given `dst`) and to `out`.
type Parts<T> = (Option<Tensor<T>>, Option<Tensor<T>>);

/// Every rule; the gradient with respect to src into `dst` when given (then `None`).
#[allow(clippy::too_many_arguments)]
fn vjp<T: Float, I: IndexInt>(
    op: &'static str,
    kind: Kind,
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: Option<&TensorView<'_, T>>,
    opts: &SegmentOptions,
    dst: Option<&mut TensorViewMut<'_, T>>,
) -> Result<Parts<T>> {
    check_reduction::<T>(op, opts.reduce, false)?;
    let p = prepare(op, kind, src, index, out, opts, false)?;
    vjp_prepared(op, kind, grad, &src.layout, p, out, opts, dst)
}

/// [`vjp`] after the index pass: generic over the element type only (the index is read
/// through `p`'s lanes), so it is compiled once per float type, not once per index type too.
#[allow(clippy::too_many_arguments)]
fn vjp_prepared<T: Float>(
    op: &'static str,
    kind: Kind,
    grad: &TensorView<'_, T>,
    src_layout: &Layout,
    p: Prepared<'_, T>,
    out: Option<&TensorView<'_, T>>,
    opts: &SegmentOptions,
    mut dst: Option<&mut TensorViewMut<'_, T>>,
) -> Result<Parts<T>> {
    let red = opts.reduce;
    if grad.layout.shape != p.out_shape {
        return Err(Error::shape(
            op,
            "grad",
            format!("{:?} (the forward's output shape)", p.out_shape),
            &grad.layout.shape,
        ));
    }
    let g: std::borrow::Cow<'_, [T]> = match grad.contiguous() {
        Some(s) => s.into(),
        None => grad.try_to_vec(op, "grad")?.into(),
    };
    if let Some(d) = &dst
        && d.layout.shape != src_layout.shape
    {
        return Err(Error::shape(
            op,
            "dst",
            format!("{:?} (src's shape)", src_layout.shape),
            &d.layout.shape,
        ));
    }
    if g.is_empty() {
        // No cells, so no position's gradient is other than 0 (and the loops over `b · n · k`
        // below could still run 2³⁵ empty rounds).
        let zeros = filled(op, "src", src_layout.numel, T::default())?;
        let zeros = place(tensor(zeros, &src_layout.shape), dst);
        return Ok((zeros, out.map(|_| tensor(vec![], &p.out_shape))));
    }
    let d = p.dims;
    let (b, e, k, n) = (d.b, d.e, d.k, d.n);
    let mode = p.mode;
    // Min and max start from the forward's values (or positions), on the same checked index.
    let first = opts.ties == Ties::First;
    let forward = matches!(red, Reduction::Min | Reduction::Max)
        .then(|| reduce_prepared(op, kind, &p, out, first, opts))
        .transpose()?;
    let ids = segment_ids(kind, p.lanes, e, n)?;
    // The lane of the cells and positions (bi, *, ki).
    let lane = |bi: usize, ki: usize| match mode {
        Mode::Shared => 0,
        Mode::PerOuter => bi,
        Mode::PerElement => bi * k + ki,
    };
    let gopts = GatherOptions::new()
        .axis(p.dim as i64)
        .negative(NegativeIndices::Error)
        .out_of_range(GatherOutOfRange::Fill)
        .par(opts.par);
    let oshape = &p.out_shape;
    let sshape = &src_layout.shape;
    // `table[cell]` at every position whose segment `ids` names (0 elsewhere), gathered into
    // `dst` when given (no copy: the caller's buffer is the result).
    let expand = |table: &[T],
                  ids: &Lanes<'_>,
                  dst: Option<&mut TensorViewMut<'_, T>>|
     -> Result<Option<Tensor<T>>> {
        if b * e * k == 0 {
            return Ok(place(tensor(vec![], sshape), dst));
        }
        let tv = TensorView::new(table, oshape)?;
        let r = if ids.mode == Mode::Shared {
            let iv = TensorView::new(ids.lane(0), &[e])?;
            match dst {
                Some(d) => crate::gather::gather_out(&tv, &iv, d, &gopts).map(|()| None),
                None => crate::gather::gather(&tv, &iv, &gopts).map(Some),
            }
        } else {
            let st = lane_strides(sshape, p.dim, ids.mode);
            let iv = TensorView::with_strides(&ids.values, 0, sshape, &st)?;
            match dst {
                Some(d) => crate::gather::gather_elements_out(&tv, &iv, d, &gopts).map(|()| None),
                None => crate::gather::gather_elements(&tv, &iv, &gopts).map(Some),
            }
        };
        r.map_err(|err| err.with_op(op))
    };
    // Every position (bi, ei, ki) with its flat src offset, lane and segment, in index order.
    let positions = || {
        let ids = &ids;
        (0..b).flat_map(move |bi| {
            (0..e).flat_map(move |ei| {
                (0..k).map(move |ki| {
                    let l = lane(bi, ki);
                    let s = ids.lane(l)[ei] as usize;
                    ((bi * e + ei) * k + ki, bi, ei, ki, s)
                })
            })
        })
    };
    let cell = |bi: usize, s: usize, ki: usize| (bi * n + s) * k + ki;
    let out_vals: Option<Vec<T>> = out.map(|o| o.try_to_vec(op, "out")).transpose()?;

    let (src_grad, out_grad) = match red {
        Reduction::Add => (expand(&g, &ids, dst.take())?, out.map(|_| g.to_vec())),
        Reduction::Mean => {
            // One row of counts per lane; no lane's index was read when src is empty.
            let lanes = if b * k == 0 {
                0
            } else {
                lane(b - 1, k - 1) + 1
            };
            let mut counts = filled(op, "grad", lanes * n, u64::from(out.is_some()))?;
            for l in 0..lanes {
                for &s in ids.lane(l) {
                    if (s as usize) < n {
                        counts[l * n + s as usize] += 1;
                    }
                }
            }
            let mut gs = filled(op, "grad", g.len(), T::default())?;
            for bi in 0..b {
                for s in 0..n {
                    for ki in 0..k {
                        let c = counts[lane(bi, ki) * n + s];
                        if c > 0 {
                            let at = cell(bi, s, ki);
                            gs[at] = share(g[at], c);
                        }
                    }
                }
            }
            let og = out.map(|_| gs.clone());
            (expand(&gs, &ids, dst.take())?, og)
        }
        Reduction::Min | Reduction::Max => {
            let (r, arg, _) = forward.expect("computed for min and max");
            // Whether the member at `at` (position `ei` along dim, cell `c`) holds its cell's
            // result: the one `arg` names (ties "first"), or each one equal to it ("split").
            let wins = |at: usize, ei: usize, c: usize| match &arg {
                Some(arg) => arg[c] == ei as i64,
                None => same(p.src[at], r[c]),
            };
            // A shared index (and no cell past u32) is counted by columns in `shared_ties`.
            let shared = ids.mode == Mode::Shared && u32::try_from(e).is_ok();
            let mut ties = match (first, shared) {
                (true, _) => Vec::new(),
                (false, true) => shared_ties(op, Ctx::new(opts.par), &p.src, &r, ids.lane(0), d)?,
                (false, false) => filled(op, "grad", g.len(), 0u64)?,
            };
            let mut out_won = filled(op, "grad", out.map_or(0, |_| g.len()), false)?;
            if let Some(arg) = &arg {
                for (c, w) in out_won.iter_mut().enumerate() {
                    *w = arg[c] == e as i64;
                }
            } else {
                if !shared {
                    for_members(b, e, k, n, &ids, lane, |at, ei, c| {
                        ties[c] += u64::from(wins(at, ei, c));
                    });
                }
                if let Some(ov) = &out_vals {
                    for (c, w) in out_won.iter_mut().enumerate() {
                        *w = same(ov[c], r[c]);
                        ties[c] += u64::from(*w);
                    }
                }
            }
            let share: Vec<T> = if first {
                g.to_vec()
            } else {
                let mut v = filled(op, "grad", g.len(), T::default())?;
                for (c, x) in v.iter_mut().enumerate() {
                    if ties[c] > 0 {
                        *x = share(g[c], ties[c]);
                    }
                }
                v
            };
            let og = out.map(|_| {
                share
                    .iter()
                    .zip(&out_won)
                    .map(|(&x, &w)| if w { x } else { T::default() })
                    .collect()
            });
            // Member row `rr` (`(bi, ei)`: its `k` positions) of the gradient: the cell's
            // share where the member wins, else 0. Rows are independent: cut across threads.
            let grad_row = |rr: usize, dst: &mut [T]| {
                let (bi, ei) = (rr / e, rr % e);
                let row = rr * k;
                if ids.mode == Mode::Shared {
                    let s = ids.lane(0)[ei] as usize;
                    if s >= n {
                        dst.fill(T::default());
                        return;
                    }
                    // Slice by slice, the rule chosen once per row (the loops vectorise).
                    let c = (bi * n + s) * k;
                    let cells = dst.iter_mut().zip(&share[c..c + k]);
                    match &arg {
                        Some(arg) => {
                            for ((d, &sh), &a) in cells.zip(&arg[c..c + k]) {
                                *d = if a == ei as i64 { sh } else { T::default() };
                            }
                        }
                        None => {
                            let values = p.src[row..row + k].iter().zip(&r[c..c + k]);
                            for ((d, &sh), (&x, &rv)) in cells.zip(values) {
                                *d = if same(x, rv) { sh } else { T::default() };
                            }
                        }
                    }
                    return;
                }
                for (ki, d) in dst.iter_mut().enumerate() {
                    let s = ids.lane(lane(bi, ki))[ei] as usize;
                    let c = (bi * n + s) * k + ki;
                    *d = match s < n && wins(row + ki, ei, c) {
                        true => share[c],
                        false => T::default(),
                    };
                }
            };
            let write = |cells: Rows<'_, T>| -> Result<()> {
                cells.by_rows(Ctx::new(opts.par), b * e, k, &grad_row);
                Ok(())
            };
            let mut dst = dst.take();
            let src_grad = match dst.as_mut().and_then(|d| d.contiguous_mut()) {
                Some(cells) => {
                    write(Rows::init(cells))?;
                    None
                }
                None => {
                    let oom = |bytes| Error::out_of_memory(op, "src", bytes);
                    let sg = build_rows(b * e * k, T::default(), oom, write)?;
                    place(tensor(sg, sshape), dst)
                }
            };
            (src_grad, og)
        }
        _ => {
            // Mul: each member's gradient is g times the product of the cell's other values
            // (out's first), split around it: (before · after) · g, never a division.
            let one = T::Acc::count(1);
            let mut run: Vec<T::Acc> = match &out_vals {
                Some(ov) => ov.iter().map(|x| x.to_acc()).collect(),
                None => filled(op, "grad", g.len(), one)?,
            };
            let mut before = filled(op, "src", b * e * k, one)?;
            for (at, bi, _, ki, s) in positions() {
                if s < n {
                    let c = cell(bi, s, ki);
                    before[at] = run[c];
                    run[c] = run[c] * p.src[at].to_acc();
                }
            }
            run.fill(one);
            let mut sg = filled(op, "src", b * e * k, T::default())?;
            for bi in (0..b).rev() {
                for ei in (0..e).rev() {
                    for ki in (0..k).rev() {
                        let s = ids.lane(lane(bi, ki))[ei] as usize;
                        if s < n {
                            let (at, c) = ((bi * e + ei) * k + ki, cell(bi, s, ki));
                            sg[at] = T::from_acc(before[at] * run[c] * g[c].to_acc());
                            run[c] = run[c] * p.src[at].to_acc();
                        }
                    }
                }
            }
            let og = out.map(|_| {
                run.iter()
                    .zip(g.iter())
                    .map(|(&pr, &x)| T::from_acc(pr * x.to_acc()))
                    .collect()
            });
            (place(tensor(sg, sshape), dst.take()), og)
        }
    };
    let out = out_grad.map(|v| tensor(v, oshape));
    Ok((src_grad, out))
}

/// `t`, or `None` once copied into `dst` (of its shape).
fn place<T: Element>(t: Tensor<T>, dst: Option<&mut TensorViewMut<'_, T>>) -> Option<Tensor<T>> {
    match dst {
        Some(d) => {
            d.copy_from(&t.view());
            None
        }
        None => Some(t),
    }
}

/// [`vjp`] into a new tensor.
fn vjp_new<T: Float, I: IndexInt>(
    op: &'static str,
    kind: Kind,
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: Option<&TensorView<'_, T>>,
    opts: &SegmentOptions,
) -> Result<Grads<T>> {
    let (s, out) = vjp(op, kind, grad, src, index, out, opts, None)?;
    let src = s.expect("a new tensor when no destination is given");
    Ok(Grads { src, out })
}

/// The gradient with respect to `src` of [`scatter`](super::scatter) (`Scatter`),
/// [`segment_coo`](super::segment_coo) (`Coo`) or [`segment_csr`](super::segment_csr)
/// (`Csr`) without `out`, written into `dst` (src's shape): the sum's and the mean's are
/// gathered there directly (no result of src's size is allocated), the others copied.
///
/// # Errors
/// As [`scatter_vjp`], plus a `dst` not of src's shape; `dst` is unchanged on error.
pub(crate) fn vjp_out<T: Float, I: IndexInt>(
    kind: Kind,
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
    dst: &mut TensorViewMut<'_, T>,
) -> Result<()> {
    let op = match kind {
        Kind::Scatter => "scatter_vjp",
        Kind::Coo => "segment_coo_vjp",
        Kind::Csr => "segment_csr_vjp",
    };
    vjp(op, kind, grad, src, index, None, opts, Some(dst)).map(|_| ())
}

/// Per cell, how many members equal its result `r`, for an index every lane shares
/// (`ids`): each member row compared with its cell row slice by slice, each task over its own
/// columns in u32 counts (no cell takes more than `e`: half the traffic of u64), merged after
/// (integers: any split gives the same counts).
fn shared_ties<T: Float>(
    op: &'static str,
    ctx: Ctx,
    src: &[T],
    r: &[T],
    ids: &[i64],
    d: Dims,
) -> Result<Vec<u64>> {
    let (b, e, k, n) = (d.b, d.e, d.k, d.n);
    let tasks = ctx
        .tasks((b * e * k).saturating_mul(size_of::<T>()), 1)
        .clamp(1, k.max(1));
    let cols_of = |t| crate::shape::part(k, tasks, t, 1);
    let mut cols = Vec::with_capacity(tasks);
    for t in 0..tasks {
        let (k0, k1) = cols_of(t);
        cols.push(Mutex::new(filled(op, "grad", b * n * (k1 - k0), 0u32)?));
    }
    ctx.run(tasks, |t| {
        let (k0, k1) = cols_of(t);
        let w = k1 - k0;
        let mut mine = cols[t].lock().unwrap_or_else(|e| e.into_inner());
        for bi in 0..b {
            for (ei, &s) in ids.iter().enumerate() {
                let (s, row) = (s as usize, (bi * e + ei) * k);
                if s >= n {
                    continue;
                }
                let (c, at) = ((bi * n + s) * k + k0, (bi * n + s) * w);
                let counts = mine[at..at + w].iter_mut().zip(&r[c..c + w]);
                for ((count, &rv), &x) in counts.zip(&src[row + k0..row + k1]) {
                    *count += u32::from(same(x, rv));
                }
            }
        }
    });
    let cols: Vec<Vec<u32>> = cols
        .into_iter()
        .map(|c| c.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    let mut ties = Vec::new();
    ties.try_reserve_exact(b * n * k)
        .map_err(|_| Error::out_of_memory(op, "grad", (b * n * k).saturating_mul(8)))?;
    for cr in 0..b * n {
        for (t, col) in cols.iter().enumerate() {
            let (k0, k1) = cols_of(t);
            let w = k1 - k0;
            ties.extend(col[cr * w..(cr + 1) * w].iter().map(|&c| u64::from(c)));
        }
    }
    Ok(ties)
}

/// Calls `f(at, ei, cell)` for every src position `(bi, ei, ki)` (flat offset `at`, position
/// `ei` along dim) whose segment is a cell, in index order; rows of one lane in shared mode
/// read the segment once.
fn for_members(
    b: usize,
    e: usize,
    k: usize,
    n: usize,
    ids: &Lanes<'_>,
    lane: impl Fn(usize, usize) -> usize,
    mut f: impl FnMut(usize, usize, usize),
) {
    for bi in 0..b {
        for ei in 0..e {
            let row = (bi * e + ei) * k;
            if ids.mode == Mode::Shared {
                let s = ids.lane(0)[ei] as usize;
                if s < n {
                    let c = (bi * n + s) * k;
                    for ki in 0..k {
                        f(row + ki, ei, c + ki);
                    }
                }
                continue;
            }
            for ki in 0..k {
                let s = ids.lane(lane(bi, ki))[ei] as usize;
                if s < n {
                    f(row + ki, ei, (bi * n + s) * k + ki);
                }
            }
        }
    }
}

/// Strides that read a lane-major index (`[b, e]` or `[b, k, e]`) at src's coordinates.
fn lane_strides(shape: &[usize], dim: usize, mode: Mode) -> Vec<isize> {
    let mut st = vec![0isize; shape.len()];
    st[dim] = 1;
    let mut acc = shape[dim] as isize;
    if mode == Mode::PerElement {
        for d in (dim + 1..shape.len()).rev() {
            st[d] = acc;
            acc *= shape[d] as isize;
        }
    }
    for d in (0..dim).rev() {
        st[d] = acc;
        acc *= shape[d] as isize;
    }
    st
}
