//! The graph-learning family under the fuzz check: `scatter` with `dim_size`, `segment_coo`
//! and `segment_csr` (with and without `out` and positions), `gather_coo` / `gather_csr`, the
//! composites, and the backward passes of all of them, each against its oracle
//! (`reference::segment`): no panic, the same bits and positions, errors on both sides, and
//! an `out` left untouched by a call that fails.
//!
//! The index is derived from src's shape (torch_scatter's broadcasts: 1-D along `dim`, a
//! lower-rank prefix, dims of 1), mostly sorted for the segment forms, with values mostly in
//! range and otherwise at the edges (±cells, 2³¹, i64::MIN, ...); `indptr` holds offsets up to
//! src's extent, or edges. Outputs the rules size above 2¹⁴ cells run the engine alone (the
//! oracle enumerates cells), above 2¹⁸ neither (an input that allocates and fills megabytes
//! is slow, not interesting).

use tensor_scatter::reference::segment::{self as oracle, Composite, Form};
use tensor_scatter::segment::{self, Float, SegmentOptions, Ties};
use tensor_scatter::{Element, IndexInt, Par, Reduction, Result, Tensor, TensorView};

use super::input::{
    Bytes, FromI128, contiguous_strides, count, gapped, gapped_mut, padded, values,
};
use super::{Op, axis_ok, bits_of, check_into};

/// One call decoded from the input.
struct Call<T, I> {
    form: Form,
    /// src's shape and values (row-major).
    ss: Vec<usize>,
    src: Vec<T>,
    is: Vec<usize>,
    index: Vec<I>,
    opts: SegmentOptions,
    /// src and index laid out with poisoned gaps between their elements.
    pad: (bool, bool),
}

/// How an output of the rules' shape is checked.
#[derive(PartialEq)]
enum Size {
    /// Engine against oracle.
    Small,
    /// The engine alone (no panic, no abort): the oracle enumerates every cell.
    EngineOnly,
    /// Neither: a valid request for gigabytes is the caller's to make.
    Skip,
}

fn size_of(shape: Option<&[usize]>) -> Size {
    match shape.map(count) {
        None => Size::Small,
        Some(None) => Size::EngineOnly,
        Some(Some(c)) if c <= 1 << 14 => Size::Small,
        Some(Some(c)) if c <= 1 << 18 => Size::EngineOnly,
        Some(Some(_)) => Size::Skip,
    }
}

/// A call of one of `forms`. With `gather`, src is the per-segment table of a
/// `gather_coo` / `gather_csr` (its extent along dim is the number of segments) and the index
/// addresses the output.
fn decode<T: Element, I: FromI128>(
    b: &mut Bytes<'_>,
    forms: &[Form],
    gather: bool,
) -> Option<Call<T, I>> {
    let form = forms[usize::from(b.u8()) % forms.len()];
    let rank = if b.flag(32) {
        0
    } else {
        1 + usize::from(b.u8() % 4)
    };
    let mut ss = b.shape(rank);
    let d = usize::from(b.u8()) % rank.max(1);
    let e = ss.get(d).copied().unwrap_or(0);
    let n = b.small_dim();
    if gather && d < rank {
        ss[d] = n;
    }
    let dim = match b.u8() % 8 {
        0 => b.signed_attr(rank),
        1..=2 => d as i64 - rank as i64,
        _ => d as i64,
    };
    let mut is: Vec<usize> = if form == Form::Scatter && b.flag(4) {
        vec![e]
    } else {
        let ri = match form {
            Form::Scatter => d + 1 + usize::from(b.u8()) % (rank.max(1) - d),
            _ => d + 1,
        };
        (0..ri)
            .map(|j| match j == d {
                true if form == Form::Csr => n + 1,
                true => e,
                false if b.flag(4) => 1,
                false => ss.get(j).copied().unwrap_or(1),
            })
            .collect()
    };
    b.break_shape(&mut is);
    let src = values::<T>(b, &ss)?;
    let n_idx = count(&is).filter(|&c| c <= 1 << 16)?;
    // What an index element addresses: cells (scatter, segment_coo, gather_coo's segments) or
    // positions along dim (an indptr's offsets).
    let (reach, edge) = match form {
        Form::Csr => (e.saturating_add(1), e),
        _ => (n.max(1), n),
    };
    let mut raw: Vec<i128> = (0..n_idx)
        .map(|_| match b.flag(12) {
            true => b.index(edge),
            false => i128::from(b.u8()) % reach as i128,
        })
        .collect();
    let lane = is.last().copied().unwrap_or(1);
    if form != Form::Scatter && lane > 0 && !b.flag(8) {
        raw.chunks_mut(lane).for_each(|c| c.sort_unstable());
    }
    let reduce = [
        Reduction::Add,
        Reduction::Add,
        Reduction::Mean,
        Reduction::Mul,
        Reduction::Min,
        Reduction::Max,
        Reduction::Max,
        Reduction::Sub,
    ][usize::from(b.u8() % 8)];
    let par = [
        Par::Sequential,
        Par::threads_exact(2),
        Par::threads_exact(3),
    ][usize::from(b.u8() % 3)];
    let mut opts = SegmentOptions::new()
        .dim(dim)
        .reduce(reduce)
        .par(par)
        .ties(if b.flag(2) { Ties::Split } else { Ties::First });
    match b.u8() % 8 {
        0..=3 => {}
        4..=6 => opts = opts.dim_size(n),
        _ => opts = opts.dim_size(b.dim()),
    }
    let call = Call {
        form,
        ss,
        src,
        is,
        index: raw.into_iter().map(I::wrap).collect(),
        opts,
        pad: (b.flag(3), b.flag(3)),
    };
    if std::env::var_os("TS_FUZZ_DEBUG").is_some() {
        let index: Vec<i64> = call.index.iter().map(|v| v.to_i64_sat()).collect();
        let (ss, is, o) = (&call.ss, &call.is, &call.opts);
        eprintln!(
            "{form:?} {:?}: src {ss:?}, index {is:?} {index:?}, {o:?}",
            T::DTYPE
        );
    }
    Some(call)
}

impl<T: Element, I: FromI128> Call<T, I> {
    /// The reduction's output shape by the rules, when they give one: src's with dim's
    /// extent `dim_size`, else the largest index + 1 (the indptr's length - 1 for CSR).
    fn out_shape(&self) -> Option<Vec<usize>> {
        let d = match self.form {
            Form::Scatter => axis_ok(self.opts.dim, self.ss.len())?,
            _ => self.is.len().checked_sub(1)?,
        };
        let extent = match (self.form, self.opts.dim_size) {
            (Form::Csr, _) => self.is.get(d)?.checked_sub(1)?,
            (_, Some(n)) => n,
            _ => self
                .index
                .iter()
                .map(|v| v.to_i64_sat())
                .max()
                .map_or(0, |m| usize::try_from(m).map_or(0, |m| m.saturating_add(1))),
        };
        let mut s = self.ss.clone();
        *s.get_mut(d)? = extent;
        Some(s)
    }

    /// src and index as the input lays them out.
    fn laid(&self) -> (Laid<T>, Laid<I>) {
        (
            Laid::new(&self.src, &self.ss, self.pad.0, poison()),
            Laid::new(&self.index, &self.is, self.pad.1, I::wrap(0)),
        )
    }

    /// A gather's output shape by the rules: src's with dim's extent the index's (gather_coo)
    /// or the largest final offset (gather_csr).
    fn gather_shape(&self) -> Option<Vec<usize>> {
        let d = self.is.len().checked_sub(1)?;
        let extent = match self.form {
            Form::Csr => {
                let lane = *self.is.last()?;
                let last = self.index.chunks(lane.max(1)).filter_map(|c| c.last());
                usize::try_from(last.map(|v| v.to_i64_sat()).max().unwrap_or(0)).ok()?
            }
            _ => self.is[d],
        };
        let mut s = self.ss.clone();
        *s.get_mut(d)? = extent;
        Some(s)
    }
}

/// `v` with poisoned gaps when `pad`, as a buffer and the view over it (`None` when the
/// strides overflow).
struct Laid<T>(Vec<T>, Vec<usize>, bool);

impl<T: Copy> Laid<T> {
    fn new(v: &[T], shape: &[usize], pad: bool, poison: T) -> Self {
        let buf = if pad { padded(v, poison) } else { v.to_vec() };
        Laid(buf, shape.to_vec(), pad)
    }
    fn view(&self) -> Option<TensorView<'_, T>> {
        let Laid(buf, shape, pad) = self;
        if *pad {
            gapped(buf, shape, &contiguous_strides(shape, 2)?).ok()
        } else {
            TensorView::new(buf, shape).ok()
        }
    }
}

fn poison<T: Element>() -> T {
    T::from_bits_u64(0x5a5a_5a5a_5a5a_5a5a)
}

/// Values and positions of a segment reduction.
type Reduced<T> = Result<(Tensor<T>, Option<Tensor<i64>>)>;

fn same<T: Element>(op: &str, want: &Result<Tensor<T>>, got: &Result<Tensor<T>>) {
    match (want, got) {
        (Ok(w), Ok(g)) => {
            assert_eq!(w.shape(), g.shape(), "{op}: output shapes differ");
            assert!(
                bits_of(w.as_slice()) == bits_of(g.as_slice()),
                "{op}: engine and oracle differ"
            );
        }
        (Err(_), Err(e)) => {
            let _ = e.to_string();
        }
        (Ok(_), Err(e)) => panic!("{op}: engine Err {e:?}, oracle Ok"),
        (Err(o), Ok(_)) => panic!("{op}: engine Ok, oracle Err {o:?}"),
    }
}

pub(crate) fn run<T: Element, I: FromI128>(op: Op, b: &mut Bytes<'_>) {
    if op == Op::SegmentGather {
        return gather::<T, I>(b);
    }
    let Some(c) = decode::<T, I>(b, &[Form::Scatter, Form::Coo, Form::Csr], false) else {
        return;
    };
    let want_arg = matches!(c.opts.reduce, Reduction::Min | Reduction::Max) && b.flag(2);
    let oshape = c.out_shape();
    let size = size_of(oshape.as_deref());
    let (src, index) = c.laid();
    let (Some(sv), Some(iv)) = (src.view(), index.view()) else {
        return;
    };
    let with_out = b.flag(3) && size == Size::Small;
    if !with_out {
        if size == Size::Skip {
            return;
        }
        let got = reduce_alloc(c.form, want_arg, &sv, &iv, &c.opts);
        if size == Size::EngineOnly {
            return;
        }
        let want = oracle::reduce(c.form, &sv, &iv, None, &c.opts);
        return same_reduced(want, got, want_arg);
    }
    // `out` of the rules' shape (sometimes one that is not), its values from the input.
    let mut os = oshape.unwrap_or_else(|| vec![b.small_dim()]);
    if b.flag(8) {
        match os.last_mut() {
            Some(x) => *x = x.wrapping_add(1) % 7,
            None => os.push(1),
        }
    }
    let Some(out) = values::<T>(b, &os) else {
        return;
    };
    let want = match TensorView::new(&out, &os) {
        Ok(ov) => oracle::reduce(c.form, &sv, &iv, Some(&ov), &c.opts),
        Err(_) => return,
    };
    let mut dest = padded(&out, poison());
    let before = bits_of(&dest);
    let Some(strides) = contiguous_strides(&os, 2) else {
        return;
    };
    let Ok(mut o) = gapped_mut(&mut dest, &os, &strides) else {
        return;
    };
    let (f, a, opts) = (c.form, want_arg, &c.opts);
    let r: Result<Option<Tensor<i64>>> = match (f, a) {
        (Form::Scatter, false) => segment::scatter_out(&sv, &iv, &mut o, opts).map(|()| None),
        (Form::Scatter, true) => segment::scatter_arg_out(&sv, &iv, &mut o, opts).map(Some),
        (Form::Coo, false) => segment::segment_coo_out(&sv, &iv, &mut o, opts).map(|()| None),
        (Form::Coo, true) => segment::segment_coo_arg_out(&sv, &iv, &mut o, opts).map(Some),
        (Form::Csr, false) => segment::segment_csr_out(&sv, &iv, &mut o, opts).map(|()| None),
        (Form::Csr, true) => segment::segment_csr_arg_out(&sv, &iv, &mut o, opts).map(Some),
    };
    assert_eq!(r.is_ok(), want.is_ok(), "segment out=: engine {r:?}");
    let values = want.as_ref().ok().map(|(v, _)| bits_of(v.as_slice()));
    if let (Ok(Some(ga)), Ok((_, wa))) = (&r, &want) {
        assert_eq!(
            ga.as_slice(),
            wa.as_slice(),
            "segment out=: positions differ"
        );
    }
    check_into(
        Op::Segment,
        r.map(|_| ()),
        &dest,
        &before,
        values.as_deref(),
        poison::<T>(),
    );
}

fn reduce_alloc<T: Element, I: IndexInt>(
    form: Form,
    want_arg: bool,
    sv: &TensorView<'_, T>,
    iv: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Reduced<T> {
    let values = |v: Tensor<T>| (v, None);
    let both = |(v, a)| (v, Some(a));
    match (form, want_arg) {
        (Form::Scatter, false) => segment::scatter(sv, iv, opts).map(values),
        (Form::Scatter, true) => segment::scatter_arg(sv, iv, opts).map(both),
        (Form::Coo, false) => segment::segment_coo(sv, iv, opts).map(values),
        (Form::Coo, true) => segment::segment_coo_arg(sv, iv, opts).map(both),
        (Form::Csr, false) => segment::segment_csr(sv, iv, opts).map(values),
        (Form::Csr, true) => segment::segment_csr_arg(sv, iv, opts).map(both),
    }
}

fn same_reduced<T: Element>(
    want: Result<(Tensor<T>, Tensor<i64>)>,
    got: Reduced<T>,
    want_arg: bool,
) {
    if let (Ok((_, wa)), Ok((_, Some(ga)))) = (&want, &got) {
        assert_eq!(wa.as_slice(), ga.as_slice(), "segment: positions differ");
    }
    if let Ok((_, a)) = &got {
        assert_eq!(a.is_some(), want_arg, "segment: positions asked for");
    }
    same("segment", &want.map(|(v, _)| v), &got.map(|(v, _)| v));
}

fn gather<T: Element, I: FromI128>(b: &mut Bytes<'_>) {
    let Some(c) = decode::<T, I>(b, &[Form::Coo, Form::Csr], true) else {
        return;
    };
    let size = size_of(c.gather_shape().as_deref());
    let (src, index) = c.laid();
    let (Some(sv), Some(iv)) = (src.view(), index.view()) else {
        return;
    };
    if size == Size::Skip {
        return;
    }
    let got = match c.form {
        Form::Csr => segment::gather_csr(&sv, &iv, &c.opts),
        _ => segment::gather_coo(&sv, &iv, &c.opts),
    };
    if size == Size::Small {
        same("segment_gather", &oracle::gather(c.form, &sv, &iv), &got);
    }
}

pub(crate) fn run_float<T: Float, I: FromI128>(op: Op, b: &mut Bytes<'_>) {
    match op {
        Op::Composite => composite::<T, I>(b),
        _ => vjp::<T, I>(b),
    }
}

/// A gradient of `shape` (sometimes of another), with poisoned gaps when the input says.
fn grad<T: Element>(b: &mut Bytes<'_>, shape: Option<Vec<usize>>) -> Option<Laid<T>> {
    let mut gs = shape.unwrap_or_else(|| vec![b.small_dim()]);
    if b.flag(16) {
        match gs.last_mut() {
            Some(x) => *x = x.wrapping_add(1) % 7,
            None => gs.push(2),
        }
    }
    let g = values::<T>(b, &gs)?;
    Some(Laid::new(&g, &gs, b.flag(3), poison()))
}

fn composite<T: Float, I: FromI128>(b: &mut Bytes<'_>) {
    let Some(c) = decode::<T, I>(b, &[Form::Scatter], false) else {
        return;
    };
    let what = [
        Composite::Softmax,
        Composite::LogSoftmax,
        Composite::LogSumExp,
        Composite::Std { unbiased: false },
        Composite::Std { unbiased: true },
    ][usize::from(b.u8() % 5)];
    let per_element = matches!(what, Composite::Softmax | Composite::LogSoftmax);
    let oshape = if per_element {
        Some(c.ss.clone())
    } else {
        c.out_shape()
    };
    // The oracle enumerates the cells even where the output is per element.
    if size_of(oshape.as_deref()) != Size::Small || size_of(c.out_shape().as_deref()) != Size::Small
    {
        return;
    }
    let (src, index) = c.laid();
    let (Some(sv), Some(iv)) = (src.view(), index.view()) else {
        return;
    };
    let o = &c.opts;
    if !b.flag(2) {
        let got = match what {
            Composite::Softmax => segment::scatter_softmax(&sv, &iv, o),
            Composite::LogSoftmax => segment::scatter_log_softmax(&sv, &iv, o),
            Composite::LogSumExp => segment::scatter_logsumexp(&sv, &iv, o),
            Composite::Std { unbiased } => segment::scatter_std(&sv, &iv, unbiased, o),
        };
        return same("composite", &oracle::composite(what, &sv, &iv, o), &got);
    }
    let Some(g) = grad::<T>(b, oshape) else {
        return;
    };
    let Some(gv) = g.view() else {
        return;
    };
    let got = match what {
        Composite::Softmax => segment::scatter_softmax_vjp(&gv, &sv, &iv, o),
        Composite::LogSoftmax => segment::scatter_log_softmax_vjp(&gv, &sv, &iv, o),
        Composite::LogSumExp => segment::scatter_logsumexp_vjp(&gv, &sv, &iv, o),
        Composite::Std { unbiased } => segment::scatter_std_vjp(&gv, &sv, &iv, unbiased, o),
    };
    let want = oracle::composite_vjp(what, &gv, &sv, &iv, o);
    same("composite_vjp", &want, &got);
}

/// The backward of the segment reductions (with and without `out`) and of the gathers.
fn vjp<T: Float, I: FromI128>(b: &mut Bytes<'_>) {
    let gather = b.flag(4);
    let forms: &[Form] = if gather {
        &[Form::Coo, Form::Csr]
    } else {
        &[Form::Scatter, Form::Coo, Form::Csr]
    };
    let Some(c) = decode::<T, I>(b, forms, gather) else {
        return;
    };
    let oshape = if gather {
        c.gather_shape()
    } else {
        c.out_shape()
    };
    if size_of(oshape.as_deref()) != Size::Small {
        return;
    }
    let (src, index) = c.laid();
    let (Some(sv), Some(iv)) = (src.view(), index.view()) else {
        return;
    };
    let out = match (!gather && b.flag(3), &oshape) {
        (true, Some(os)) => Some((values::<T>(b, os), os.clone())),
        _ => None,
    };
    let out = match &out {
        Some((Some(v), os)) => TensorView::new(v, os).ok(),
        _ => None,
    };
    let Some(g) = grad::<T>(b, oshape) else {
        return;
    };
    let Some(gv) = g.view() else {
        return;
    };
    let o = &c.opts;
    if gather {
        // The oracle's sum enumerates its output's cells: grad's shape with src's extent.
        let d = c.is.len().saturating_sub(1);
        let mut cells = g.1.clone();
        if let (Some(x), Some(&n)) = (cells.get_mut(d), c.ss.get(d)) {
            *x = n;
        }
        if size_of(Some(&cells)) != Size::Small {
            return;
        }
        let add = o.reduce(Reduction::Add);
        let (want, got) = match c.form {
            Form::Csr => (
                oracle::reduce(Form::Csr, &gv, &iv, None, &add).map(|(v, _)| v),
                segment::gather_csr_vjp(&gv, &iv, o),
            ),
            _ if c.is.is_empty() || c.is.len() > gv.shape().len() => {
                let got = segment::gather_coo_vjp(&gv, &iv, 0, o);
                assert!(
                    got.is_err(),
                    "gather_coo_vjp: Ok for an index of rank {}",
                    c.is.len()
                );
                return;
            }
            _ => {
                let n = c.ss.get(c.is.len().saturating_sub(1)).copied().unwrap_or(0);
                let dim = c.is.len() as i64 - 1;
                let add = add.dim(dim).dim_size(n);
                (
                    oracle::reduce(Form::Scatter, &gv, &iv, None, &add).map(|(v, _)| v),
                    segment::gather_coo_vjp(&gv, &iv, n, o),
                )
            }
        };
        return same("segment_vjp (gather)", &want, &got);
    }
    let ov = out.as_ref();
    let got = match c.form {
        Form::Scatter => segment::scatter_vjp(&gv, &sv, &iv, ov, o),
        Form::Coo => segment::segment_coo_vjp(&gv, &sv, &iv, ov, o),
        Form::Csr => segment::segment_csr_vjp(&gv, &sv, &iv, ov, o),
    };
    let want = oracle::vjp(c.form, &gv, &sv, &iv, ov, o);
    if let (Ok((_, wo)), Ok(g)) = (&want, &got) {
        assert_eq!(wo.is_some(), g.out.is_some(), "segment_vjp: out's gradient");
        if let (Some(w), Some(g)) = (wo, &g.out) {
            same("segment_vjp (out)", &Ok(w.clone()), &Ok(g.clone()));
        }
    }
    same("segment_vjp", &want.map(|(s, _)| s), &got.map(|g| g.src));
}
