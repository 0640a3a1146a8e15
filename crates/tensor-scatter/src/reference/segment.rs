//! The segment family's oracle: torch_scatter's definitions read literally, one output cell
//! at a time, with the crate's scalar rules (the public `reduce_*` methods, not the kernels'
//! folds). No grouping, no lanes, no threads.
//!
//! Every function returns the values and the positions (`arg`); the positions are meaningful
//! for min and max and are `src.shape[dim]` everywhere for the other reductions.

use super::{coords, flat};
use crate::segment::{Float, Real, SegmentOptions};
use crate::{Element, Error, ErrorKind, IndexInt, Reduction, Result, Tensor, TensorView};

/// Which of the three reductions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `scatter(src, index, dim, ...)`.
    Scatter,
    /// `segment_coo(src, index, ...)`: `dim = index.ndim - 1`, sorted index.
    Coo,
    /// `segment_csr(src, indptr, ...)`: `dim = indptr.ndim - 1`.
    Csr,
}

fn invalid(arg: &'static str, why: &str) -> Error {
    Error::new(ErrorKind::InvalidArgument {
        op: "reference",
        arg,
        reason: why.into(),
    })
}

fn index_fault(value: i64, size: usize) -> Error {
    if value < 0 {
        Error::new(ErrorKind::NegativeIndex {
            op: "reference",
            arg: "index",
            position: vec![],
            value: value.into(),
            dim: 0,
        })
    } else {
        Error::new(ErrorKind::IndexOutOfRange {
            op: "reference",
            arg: "index",
            position: vec![],
            value: value.into(),
            dim: 0,
            size,
        })
    }
}

/// The index element that src coordinate `c` reads, by torch_scatter's broadcast: a 1-D
/// index is read at `c[dim]` (at 0 when its extent is 1); otherwise at `c` cut to the
/// index's rank, with 0 on its dims of extent 1.
fn index_at<I: IndexInt>(index: &TensorView<'_, I>, c: &[usize], dim: usize) -> i64 {
    let shape = index.shape();
    if shape.len() == 1 {
        let at = if shape[0] == 1 { 0 } else { c[dim] };
        return index.get(&[at]).map_or(i64::MAX, |v| v.to_i64_sat());
    }
    let ic: Vec<usize> = (0..shape.len())
        .map(|i| if shape[i] == 1 { 0 } else { c[i] })
        .collect();
    index.get(&ic).map_or(i64::MAX, |v| v.to_i64_sat())
}

/// Checks torch_scatter's broadcast of `ishape` against `target` around `dim`.
fn broadcasts(ishape: &[usize], target: &[usize], dim: usize) -> bool {
    if ishape.len() == 1 {
        return ishape[0] == target[dim] || ishape[0] == 1;
    }
    ishape.len() <= target.len() && ishape.iter().zip(target).all(|(&i, &t)| i == t || i == 1)
}

/// The segment holding position `c[dim]` by the offsets line of `indptr` through `c`
/// (`segments + 1` offsets), if any.
fn segment_of<I: IndexInt>(
    indptr: &TensorView<'_, I>,
    c: &[usize],
    dim: usize,
    segments: usize,
) -> Option<usize> {
    let mut ic = c.to_vec();
    let offs: Vec<i64> = (0..=segments)
        .map(|s| {
            ic[dim] = s;
            index_at(indptr, &ic, dim)
        })
        .collect();
    let p = c[dim] as i64;
    (0..segments).find(|&s| offs[s] <= p && p < offs[s + 1])
}

/// Checks every line of `indptr` along `dim`: non-decreasing offsets in `[0, bound]`.
fn check_lines<I: IndexInt>(indptr: &TensorView<'_, I>, dim: usize, bound: usize) -> Result<()> {
    let ishape = indptr.shape();
    for c in coords(ishape).into_iter().filter(|c| c[dim] == 0) {
        let mut ic = c.clone();
        let mut prev = 0i64;
        for s in 0..ishape[dim] {
            ic[dim] = s;
            let v = indptr.get(&ic).map_or(i64::MAX, |v| v.to_i64_sat());
            if v < 0 || v as u64 > bound as u64 || (s > 0 && v < prev) {
                return Err(invalid("indptr", "offsets"));
            }
            prev = v;
        }
    }
    Ok(())
}

/// The fold of one cell: its starting value (`out`'s when given), the contributions in
/// index order with their positions, and the arg rule.
fn fold_cell<T: Element>(
    start: Option<T>,
    items: &[(usize, T)],
    r: Reduction,
    e: usize,
) -> (T, i64) {
    match r {
        Reduction::Min | Reduction::Max => {
            let mut acc = start;
            let mut arg = e as i64;
            for &(pos, x) in items {
                let next = match acc {
                    None => x,
                    Some(a) if r == Reduction::Min => a.reduce_min(x),
                    Some(a) => a.reduce_max(x),
                };
                if acc.is_none_or(|a| a.to_bits_u64() != next.to_bits_u64()) {
                    arg = pos as i64;
                }
                acc = Some(next);
            }
            (acc.unwrap_or_default(), arg)
        }
        _ => {
            if let (Some(s), true) = (start, items.is_empty()) {
                // Nothing reached the cell: it keeps `out`'s value, bit for bit.
                return (s, e as i64);
            }
            if start.is_none() && items.is_empty() {
                let empty = if r == Reduction::Mul {
                    T::identity(Reduction::Mul)
                } else {
                    T::default()
                };
                return (empty, e as i64);
            }
            let mut acc: T::Wide = start.map_or(<T::Wide as Element>::identity(r), |s| s.widen());
            for &(_, x) in items {
                acc = if r == Reduction::Mul {
                    acc.reduce_mul(x.widen())
                } else {
                    acc.reduce_add(x.widen())
                };
            }
            if r == Reduction::Mean {
                let n = items.len() as u64 + u64::from(start.is_some());
                acc = <T::Wide as Element>::reduce_mean(acc, n);
            }
            (T::narrow(acc), e as i64)
        }
    }
}

/// Every output cell's contributions `(position along dim, value)` in index order, and the
/// cell of every src element (row-major; `None` outside every segment).
struct Contributions<T> {
    oshape: Vec<usize>,
    cells: Vec<Vec<usize>>,
    items: Vec<Vec<(usize, T)>>,
    owner: Vec<Option<usize>>,
    e: usize,
}

fn contributions<T: Element, I: IndexInt>(
    form: Form,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: Option<&TensorView<'_, T>>,
    opts: &SegmentOptions,
) -> Result<Contributions<T>> {
    let r = opts.reduce;
    if !matches!(
        r,
        Reduction::Add | Reduction::Mean | Reduction::Mul | Reduction::Min | Reduction::Max
    ) || (r == Reduction::Mean && !T::HAS_MEAN)
    {
        return Err(Error::new(ErrorKind::UnsupportedReduction {
            op: "reference",
            reduction: r.to_string(),
            reason: String::new(),
        }));
    }
    let sshape = src.shape().to_vec();
    let ishape = index.shape().to_vec();
    let rank = sshape.len();
    if rank == 0 {
        return Err(invalid("src", "rank 0"));
    }
    let dim = match form {
        Form::Scatter => {
            let d = if opts.dim < 0 {
                opts.dim + rank as i64
            } else {
                opts.dim
            };
            if d < 0 || d >= rank as i64 {
                return Err(invalid("dim", "out of range"));
            }
            d as usize
        }
        _ if ishape.is_empty() || ishape.len() > rank => return Err(invalid("index", "rank")),
        _ => ishape.len() - 1,
    };
    let e = sshape[dim];
    let mut target = sshape.clone();
    if form == Form::Csr {
        target[dim] = ishape[dim];
    }
    if !broadcasts(&ishape, &target, dim) {
        return Err(invalid("index", "shape"));
    }
    let all_index: Vec<i64> = coords(&ishape)
        .iter()
        .map(|c| index.get(c).map_or(i64::MAX, |v| v.to_i64_sat()))
        .collect();
    let n = match (form, out) {
        (Form::Csr, _) => ishape[dim].saturating_sub(1),
        (_, Some(o)) => o.shape()[dim],
        (_, None) => match opts.dim_size {
            Some(n) => n,
            None => {
                if let Some(&v) = all_index.iter().find(|&&v| v < 0) {
                    return Err(index_fault(v, 0));
                }
                let max = all_index.iter().copied().max().unwrap_or(-1);
                if max == i64::MAX {
                    return Err(invalid("index", "extent past i64"));
                }
                (max + 1) as usize
            }
        },
    };
    let mut oshape = sshape.clone();
    oshape[dim] = n;
    if out.is_some_and(|o| o.shape() != oshape) {
        return Err(invalid("out", "shape"));
    }
    // A dim past isize::MAX is refused as every shape is (its strides would not exist),
    // even where another dim is 0.
    if oshape.iter().any(|&d| d > isize::MAX as usize)
        || oshape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .is_none_or(|t| t > 1 << 40)
    {
        return Err(invalid("dim_size", "an output past any allocation"));
    }

    // Every cell's contributions, in index order.
    let cells = coords(&oshape);
    let mut items: Vec<Vec<(usize, T)>> = vec![vec![]; cells.len()];
    let mut owner = Vec::new();
    if form == Form::Csr {
        check_lines(index, dim, e)?;
        for c in coords(&sshape) {
            let at = segment_of(index, &c, dim, n).map(|s| {
                let mut oc = c.clone();
                oc[dim] = s;
                flat(&oshape, &oc)
            });
            if let Some(f) = at {
                items[f].push((c[dim], src.get(&c).unwrap_or_default()));
            }
            owner.push(at);
        }
    } else {
        for c in coords(&sshape) {
            let v = index_at(index, &c, dim);
            if v < 0 || v as u64 >= n as u64 {
                return Err(index_fault(v, n));
            }
            if form == Form::Coo && c[dim] > 0 {
                let mut prev = c.clone();
                prev[dim] -= 1;
                if index_at(index, &prev, dim) > v {
                    return Err(invalid("index", "not sorted"));
                }
            }
            let mut oc = c.clone();
            oc[dim] = v as usize;
            let f = flat(&oshape, &oc);
            items[f].push((c[dim], src.get(&c).unwrap_or_default()));
            owner.push(Some(f));
        }
    }
    Ok(Contributions {
        oshape,
        cells,
        items,
        owner,
        e,
    })
}

/// torch_scatter's `scatter` / `segment_coo` / `segment_csr` (values and positions), with
/// `out` supplying starting values (`segment_csr` overwrites it: its values take no part).
/// Errors carry the right kind only (no positions).
pub fn reduce<T: Element, I: IndexInt>(
    form: Form,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: Option<&TensorView<'_, T>>,
    opts: &SegmentOptions,
) -> Result<(Tensor<T>, Tensor<i64>)> {
    let Contributions {
        oshape,
        cells,
        items,
        e,
        ..
    } = contributions(form, src, index, out, opts)?;
    let r = opts.reduce;
    let mut values = Vec::with_capacity(cells.len());
    let mut args = Vec::with_capacity(cells.len());
    let out = out.filter(|_| form != Form::Csr);
    for (cell, its) in cells.iter().zip(&items) {
        let start = out.map(|o| o.get(cell).unwrap_or_default());
        let (v, a) = fold_cell(start, its, r, e);
        values.push(v);
        args.push(a);
    }
    Ok((
        Tensor::from_vec(values, &oshape)?,
        Tensor::from_vec(args, &oshape)?,
    ))
}

/// torch_scatter's `gather_coo` (`Coo`) and `gather_csr` (`Csr`): every output position along
/// `dim = index.ndim - 1` reads its segment's row of `src`; positions of no segment are 0.
pub fn gather<T: Element, I: IndexInt>(
    form: Form,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
) -> Result<Tensor<T>> {
    let sshape = src.shape().to_vec();
    let ishape = index.shape().to_vec();
    if ishape.is_empty() || ishape.len() > sshape.len() {
        return Err(invalid("index", "rank"));
    }
    let dim = ishape.len() - 1;
    let mut target = sshape.clone();
    target[dim] = ishape[dim];
    if !broadcasts(&ishape, &target, dim) {
        return Err(invalid("index", "shape"));
    }
    let mut oshape = target.clone();
    if form == Form::Csr {
        // No offsets are zero segments too.
        if ishape[dim] != sshape[dim] + 1 && (sshape[dim], ishape[dim]) != (0, 0) {
            return Err(invalid("indptr", "shape"));
        }
        let all: Vec<i64> = coords(&ishape)
            .iter()
            .map(|c| index.get(c).map_or(i64::MAX, |v| v.to_i64_sat()))
            .collect();
        oshape[dim] = all.last().map_or(0, |&v| v.max(0) as usize);
    }
    if form == Form::Coo {
        for c in coords(&ishape) {
            let v = index.get(&c).map_or(i64::MAX, |v| v.to_i64_sat());
            if v < 0 || v as u64 >= sshape[dim] as u64 {
                return Err(index_fault(v, sshape[dim]));
            }
        }
    } else {
        check_lines(index, dim, oshape[dim])?;
    }
    let mut values = Vec::new();
    for c in coords(&oshape) {
        let s = match form {
            Form::Csr => segment_of(index, &c, dim, sshape[dim]),
            _ => Some(index_at(index, &c, dim) as usize),
        };
        values.push(match s {
            Some(s) => {
                let mut sc = c.clone();
                sc[dim] = s;
                src.get(&sc).unwrap_or_default()
            }
            None => T::default(),
        });
    }
    Tensor::from_vec(values, &oshape)
}

/// The composites.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Composite {
    /// `scatter_softmax`.
    Softmax,
    /// `scatter_log_softmax`.
    LogSoftmax,
    /// `scatter_logsumexp`.
    LogSumExp,
    /// `scatter_std`.
    Std {
        /// Divide by `n - 1`.
        unbiased: bool,
    },
}

/// The composites, literally: per cell, `m` = the NaN-propagating maximum and
/// `s = Σ exp(x - m)` in index order, or the mean and the sum of squared deviations, in the
/// compute type; then the formulas of [`segment`](crate::segment)'s composites.
pub fn composite<T: Float, I: IndexInt>(
    what: Composite,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    let c = contributions(
        Form::Scatter,
        src,
        index,
        None,
        &opts.reduce(Reduction::Add),
    )?;
    let stats: Vec<(T::Acc, T::Acc, u64)> = c
        .items
        .iter()
        .map(|its| {
            let xs: Vec<T::Acc> = its.iter().map(|&(_, x)| x.to_acc()).collect();
            let n = xs.len() as u64;
            if let Composite::Std { .. } = what {
                let mut sum = T::Acc::ZERO;
                for &x in &xs {
                    sum = sum + x;
                }
                let mean = sum / T::Acc::count(n.max(1));
                let mut sq = T::Acc::ZERO;
                for &x in &xs {
                    sq = sq + (x - mean) * (x - mean);
                }
                return (sq, T::Acc::ZERO, n);
            }
            let mut m = T::Acc::NEG_INF;
            for &x in &xs {
                if !m.is_nan() && (x.is_nan() || x > m) {
                    m = x;
                }
            }
            let mut s = T::Acc::ZERO;
            for &x in &xs {
                s = s + (x - m).exp();
            }
            (m, s, n)
        })
        .collect();
    let values: Vec<T> = match what {
        Composite::LogSumExp => stats
            .iter()
            .map(|&(m, s, _)| {
                T::from_acc(if m == T::Acc::INF || m == T::Acc::NEG_INF {
                    m
                } else {
                    m + s.ln()
                })
            })
            .collect(),
        Composite::Std { unbiased } => stats
            .iter()
            .map(|&(sq, _, n)| {
                let d = if unbiased { n.saturating_sub(1) } else { n }.max(1);
                T::from_acc((sq / T::Acc::count(d)).sqrt())
            })
            .collect(),
        Composite::Softmax | Composite::LogSoftmax => {
            let xs: Vec<T> = coords(src.shape())
                .iter()
                .map(|p| src.get(p).unwrap_or_default())
                .collect();
            let v = xs
                .iter()
                .zip(&c.owner)
                .map(|(&x, o)| {
                    let (m, s, _) = stats[o.unwrap_or(0)];
                    let x = x.to_acc();
                    T::from_acc(if what == Composite::Softmax {
                        (x - m).exp() / s
                    } else {
                        (x - m) - s.ln()
                    })
                })
                .collect();
            return Tensor::from_vec(v, src.shape());
        }
    };
    Tensor::from_vec(values, &c.oshape)
}

/// The backward of [`reduce`]: the gradients with respect to `src` and (with `out`) to
/// `out`'s starting values, cell by cell from its members in index order. Sum: `g`; mean:
/// `g / count`; min / max: `g / ties` to each value equal to the result (NaN equal
/// to NaN), or `g` to the one `arg` names with `Ties::First`; mul: `(before · after) · g`
/// with `before` the fold of the earlier values (`out`'s first) and `after` the fold of the
/// later ones from the last, all in the compute type.
#[allow(clippy::type_complexity)]
pub fn vjp<T: Float, I: IndexInt>(
    form: Form,
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: Option<&TensorView<'_, T>>,
    opts: &SegmentOptions,
) -> Result<(Tensor<T>, Option<Tensor<T>>)> {
    let c = contributions(form, src, index, out, opts)?;
    if grad.shape() != c.oshape {
        return Err(invalid("grad", "shape"));
    }
    let xs: Vec<T> = coords(src.shape())
        .iter()
        .map(|p| src.get(p).unwrap_or_default())
        .collect();
    let mut members: Vec<Vec<usize>> = vec![vec![]; c.cells.len()];
    for (pos, o) in c.owner.iter().enumerate() {
        if let Some(cell) = o {
            members[*cell].push(pos);
        }
    }
    let one = T::Acc::count(1);
    let share = |g: T, d: u64| T::from_acc(g.to_acc() / T::Acc::count(d));
    let same = |x: T, r: T| {
        let (x, r) = (x.to_acc(), r.to_acc());
        x == r || (x.is_nan() && r.is_nan())
    };
    let mut gs = vec![T::default(); xs.len()];
    let mut go = vec![T::default(); c.cells.len()];
    // segment_csr overwrites `out`: its values take no part, and their gradient is 0.
    let start_of = out.filter(|_| form != Form::Csr);
    for (cell, coord) in c.cells.iter().enumerate() {
        let g = grad.get(coord).unwrap_or_default();
        let start = start_of.map(|o| o.get(coord).unwrap_or_default());
        let ms = &members[cell];
        match opts.reduce {
            Reduction::Add => {
                ms.iter().for_each(|&m| gs[m] = g);
                go[cell] = g;
            }
            Reduction::Mean => {
                let count = ms.len() as u64 + u64::from(start.is_some());
                if count > 0 {
                    ms.iter().for_each(|&m| gs[m] = share(g, count));
                    go[cell] = share(g, count);
                }
            }
            Reduction::Min | Reduction::Max => {
                let (r, arg) = fold_cell(start, &c.items[cell], opts.reduce, c.e);
                if opts.ties == crate::segment::Ties::First {
                    for (&m, &(p, _)) in ms.iter().zip(&c.items[cell]) {
                        if p as i64 == arg {
                            gs[m] = g;
                        }
                    }
                    go[cell] = if arg == c.e as i64 { g } else { T::default() };
                } else {
                    let tied_out = start.is_some_and(|s| same(s, r));
                    let ties =
                        ms.iter().filter(|&&m| same(xs[m], r)).count() as u64 + u64::from(tied_out);
                    for &m in ms {
                        if same(xs[m], r) {
                            gs[m] = share(g, ties);
                        }
                    }
                    if tied_out {
                        go[cell] = share(g, ties);
                    }
                }
            }
            _ => {
                for (j, &m) in ms.iter().enumerate() {
                    let mut before = start.map_or(one, |s| s.to_acc());
                    for &i in &ms[..j] {
                        before = before * xs[i].to_acc();
                    }
                    let mut after = one;
                    for &i in ms[j + 1..].iter().rev() {
                        after = after * xs[i].to_acc();
                    }
                    gs[m] = T::from_acc(before * after * g.to_acc());
                }
                let mut all = one;
                for &i in ms.iter().rev() {
                    all = all * xs[i].to_acc();
                }
                go[cell] = T::from_acc(all * g.to_acc());
            }
        }
    }
    if form == Form::Csr {
        go.fill(T::default());
    }
    Ok((
        Tensor::from_vec(gs, src.shape())?,
        out.map(|_| Tensor::from_vec(go, &c.oshape)).transpose()?,
    ))
}

/// The backward of [`composite`] with respect to `src`, from the forward's output `y` and
/// sums over each element's cell in index order: softmax `y · (g − Σ g·y)`, log-softmax
/// `g − e^y · Σ g`, logsumexp `g_cell · softmax`, std `g_cell · (x − mean) / (d · σ)` with
/// `d` the forward's divisor (0 where σ is 0).
pub fn composite_vjp<T: Float, I: IndexInt>(
    what: Composite,
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    let o = opts.reduce(Reduction::Add);
    let c = contributions(Form::Scatter, src, index, None, &o)?;
    let per_element = matches!(what, Composite::Softmax | Composite::LogSoftmax);
    let want = if per_element {
        src.shape()
    } else {
        &c.oshape[..]
    };
    if grad.shape() != want {
        return Err(invalid("grad", "shape"));
    }
    let values = |v: &TensorView<'_, T>| -> Vec<T> {
        coords(v.shape())
            .iter()
            .map(|p| v.get(p).unwrap_or_default())
            .collect()
    };
    let (xs, gv) = (values(src), values(grad));
    let y = match what {
        Composite::Softmax | Composite::LogSumExp => {
            composite(Composite::Softmax, src, index, opts)?
                .as_slice()
                .to_vec()
        }
        Composite::LogSoftmax => composite(what, src, index, opts)?.as_slice().to_vec(),
        Composite::Std { .. } => vec![],
    };
    let mut members: Vec<Vec<usize>> = vec![vec![]; c.cells.len()];
    for (pos, o) in c.owner.iter().enumerate() {
        if let Some(cell) = o {
            members[*cell].push(pos);
        }
    }
    let zero = T::Acc::ZERO;
    let mut gs = vec![T::default(); xs.len()];
    for (cell, ms) in members.iter().enumerate() {
        let gc = grad.get(&c.cells[cell]).unwrap_or_default().to_acc();
        match what {
            Composite::Softmax => {
                let s = ms
                    .iter()
                    .fold(zero, |a, &m| a + gv[m].to_acc() * y[m].to_acc());
                for &m in ms {
                    gs[m] = T::from_acc(y[m].to_acc() * (gv[m].to_acc() - s));
                }
            }
            Composite::LogSoftmax => {
                let s = ms.iter().fold(zero, |a, &m| a + gv[m].to_acc());
                for &m in ms {
                    gs[m] = T::from_acc(gv[m].to_acc() - y[m].to_acc().exp() * s);
                }
            }
            Composite::LogSumExp => {
                for &m in ms {
                    gs[m] = T::from_acc(gc * y[m].to_acc());
                }
            }
            Composite::Std { unbiased } => {
                let n = ms.len() as u64;
                let sum = ms.iter().fold(zero, |a, &m| a + xs[m].to_acc());
                let mean = sum / T::Acc::count(n.max(1));
                let sq = ms.iter().fold(zero, |a, &m| {
                    let dx = xs[m].to_acc() - mean;
                    a + dx * dx
                });
                let d = T::Acc::count(if unbiased { n.saturating_sub(1) } else { n }.max(1));
                let sigma = (sq / d).sqrt();
                for &m in ms {
                    if sigma != zero {
                        gs[m] = T::from_acc(gc * (xs[m].to_acc() - mean) / (d * sigma));
                    }
                }
            }
        }
    }
    Tensor::from_vec(gs, src.shape())
}
