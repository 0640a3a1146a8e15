//! The graph-learning family, with `torch_scatter`'s semantics: [`scatter`] with a `dim_size`,
//! [`scatter_arg`] (min or max with the position of the winner), the sorted-segment
//! reductions [`segment_coo`] and [`segment_csr`], and their inverses [`gather_coo`] and
//! [`gather_csr`].
//!
//! | torch_scatter | here |
//! |---|---|
//! | `scatter(src, index, dim, out, dim_size, reduce)` | [`scatter`], [`scatter_out`] |
//! | `scatter_min` / `scatter_max` → `(out, arg)` | [`scatter_arg`], [`scatter_arg_out`] |
//! | `segment_coo(src, index, out, dim_size, reduce)` | [`segment_coo`], [`segment_coo_out`], [`segment_coo_arg`] |
//! | `segment_csr(src, indptr, out, reduce)` | [`segment_csr`], [`segment_csr_out`], [`segment_csr_arg`] |
//! | `gather_coo(src, index)`, `gather_csr(src, indptr)` | [`gather_coo`], [`gather_csr`] |
//!
//! Rules (torch_scatter's, except where marked *ours*):
//! * `index` is broadcast against `src`: a 1-D index lies along `dim`, a lower-rank index gets
//!   trailing dims, then every dim of extent 1 expands. `segment_coo` and `segment_csr` take
//!   `dim = index.ndim - 1` (`indptr.ndim - 1`).
//! * The output has `src`'s shape with `dim` of size `dim_size`, else `out`'s, else
//!   `index.max() + 1` (0 for an empty index); for `segment_csr` `indptr.shape[dim] - 1`.
//! * Without `out`, a cell that receives nothing is 0 (1 for `mul`); with `out` its value
//!   starts the fold (and a cell nothing reaches keeps it bit for bit), except in
//!   `segment_csr`, which overwrites `out` (as torch_scatter's does: the result is the one
//!   without `out`). *Ours:* with `out`, `mean` counts that value
//!   as one more element (as every include-self mean in this crate; torch_scatter divides the
//!   sum with it by the count without it).
//! * Folds run in index order, one cell per task: bit-identical for any thread count.
//!   f16/bf16 sums, products and means accumulate in f32 and round once. Integer means round
//!   toward −∞ (*ours*: torch_scatter floors in `scatter_mean` and truncates in `segment_*`).
//! * min/max propagate NaN, `+0 > −0` ([`crate::Element::reduce_max`]);
//!   a cell whose minimum is `+inf` reports it (*ours*: torch_scatter reports 0, mistaking it
//!   for an empty cell). `arg` is the position along `dim` of the element the cell took its
//!   value from (the first among equals, the first NaN), and `src.shape[dim]` for a cell that
//!   received nothing or kept `out`'s own value.
//! * An index outside `[0, n)`, an unsorted `segment_coo` index and a decreasing or
//!   out-of-range `indptr` are errors found before anything is written.
//! * Views of any strides are accepted (gaps between the elements included). A strided
//!   `src` is copied once into a contiguous buffer (the folds read whole rows), and a strided
//!   `out` receives a contiguous result element by element; the index becomes int64 lanes
//!   (borrowed when it is a contiguous int64 index, else converted once).
//!
//! ```
//! use tensor_scatter::segment::{scatter, scatter_arg, SegmentOptions};
//! use tensor_scatter::{Reduction, TensorView};
//!
//! // Messages of 4 edges, 2 features each, summed into 3 nodes by destination.
//! let msg = [1.0f32, 10.0, 2.0, 20.0, 3.0, 30.0, 4.0, 40.0];
//! let src = TensorView::new(&msg, &[4, 2]).unwrap();
//! let dst = TensorView::new(&[2i64, 0, 2, 0], &[4]).unwrap();
//! let opts = SegmentOptions::new().dim(0).dim_size(3);
//! assert_eq!(scatter(&src, &dst, &opts).unwrap().as_slice(), &[6.0, 60.0, 0.0, 0.0, 4.0, 40.0]);
//!
//! let (max, arg) = scatter_arg(&src, &dst, &opts.reduce(Reduction::Max)).unwrap();
//! assert_eq!(max.as_slice(), &[4.0, 40.0, 0.0, 0.0, 3.0, 30.0]);
//! assert_eq!(arg.as_slice(), &[3, 3, 4, 4, 2, 2]); // node 1 received nothing: 4 = src.shape[0]
//! ```

mod composite;
mod composite_vjp;
mod gather;
mod options;
mod plan;
mod single;
mod small;
mod vjp;

#[doc(hidden)]
pub use composite::Real;
pub(crate) use composite::not_float;
pub use composite::{Float, scatter_log_softmax, scatter_logsumexp, scatter_softmax, scatter_std};
pub use composite_vjp::{
    scatter_log_softmax_vjp, scatter_logsumexp_vjp, scatter_softmax_vjp, scatter_std_vjp,
};
pub use gather::{gather_coo, gather_csr};
pub use options::SegmentOptions;
pub use single::counts;
pub use small::{SMALL_CELLS, SMALL_UPDATES, scatter_small};
pub use vjp::{
    Grads, Ties, gather_coo_vjp, gather_csr_vjp, scatter_vjp, segment_coo_vjp, segment_csr_vjp,
};
pub(crate) use vjp::{same, share, vjp_out};

use crate::kernels::segment::fold::{self, Problem, Source};
use plan::{Dims, Lanes, Mode};
use single::{
    by_elements, by_scatter_elements, elements_reduce, identity_start, untouched_to_empty,
};

use crate::dtype::{Element, Reduction};
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::index::IndexInt;
use crate::kernels::{Rows, build_rows};
use crate::view::{Layout, Tensor, TensorView, TensorViewMut};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Scatter,
    Coo,
    Csr,
}

/// A checked problem: geometry, the index read per lane, and `src` as one contiguous slice.
pub(crate) struct Prepared<'s, T: Clone> {
    pub(crate) dims: Dims,
    pub(crate) mode: Mode,
    pub(crate) lanes: Lanes<'s>,
    pub(crate) out_shape: Vec<usize>,
    pub(crate) total: usize,
    pub(crate) src: std::borrow::Cow<'s, [T]>,
    pub(crate) dim: usize,
    /// The index values are left to the scatter-elements kernel ([`plan::IndexPlan`]).
    pub(crate) deferred: bool,
    /// Every lane of the index is non-decreasing (checked: [`plan::IndexPlan`]).
    pub(crate) sorted: bool,
}

/// Shapes, then the read-only pass over every index value (range, order), then `src` as a
/// contiguous slice (copied only when strided). With `defer`, a scatter of single elements
/// leaves the index pass to its kernel ([`plan::plan_index`]).
fn prepare<'s, T: Element, I: IndexInt>(
    op: &'static str,
    kind: Kind,
    src: &TensorView<'s, T>,
    index: &TensorView<'s, I>,
    out: Option<&TensorView<'_, T>>,
    opts: &SegmentOptions,
    defer: bool,
) -> Result<Prepared<'s, T>> {
    let out_layout = out.map(|o| &o.layout);
    let p = plan::plan_index(op, kind, &src.layout, index, out_layout, opts, defer)?;
    let src_data = match src.contiguous() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(src.try_to_vec(op, "src")?),
    };
    Ok(Prepared {
        dims: p.dims,
        mode: p.mode,
        lanes: p.lanes,
        out_shape: p.out_shape,
        total: p.total,
        src: src_data,
        dim: p.dim,
        deferred: p.deferred,
        sorted: p.sorted,
    })
}

/// The error of a call whose index pass was deferred ([`prepare`]) and whose kernel failed
/// with `err`: the index pass's own error, which names the segment operator's argument and
/// position as every other form does (`err` when the pass finds nothing). Generic over the
/// index type alone, and cold.
#[cold]
#[inline(never)]
fn deferred_error<I: IndexInt>(
    op: &'static str,
    kind: Kind,
    src: &Layout,
    index: &TensorView<'_, I>,
    out: Option<&Layout>,
    opts: &SegmentOptions,
    err: Error,
) -> Error {
    plan::plan_index(op, kind, src, index, out, opts, false)
        .err()
        .unwrap_or(err)
}

/// The reduced values, and the positions when asked for.
type Reduced<T> = (Vec<T>, Option<Vec<i64>>, Vec<usize>);

/// The reductions `op` takes: with positions (`want_arg`) min and max only.
fn check_reduction<T: Element>(op: &'static str, red: Reduction, want_arg: bool) -> Result<()> {
    let allowed = if want_arg {
        matches!(red, Reduction::Min | Reduction::Max)
    } else {
        matches!(
            red,
            Reduction::Add | Reduction::Mean | Reduction::Mul | Reduction::Min | Reduction::Max
        )
    };
    if !allowed {
        let expected = if want_arg {
            "expected min or max (the reductions with a position)"
        } else {
            "expected sum, mean, mul, min or max"
        };
        return Err(Error::reduction(op, red.to_string(), expected));
    }
    red.check_for::<T>(op)
}

/// The whole data path: shapes, the index pass, then the kernel into fresh buffers.
/// `out` (when given) supplies the output's extent and starting values; nothing is written to
/// it here.
fn reduce<T: Element, I: IndexInt>(
    op: &'static str,
    kind: Kind,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: Option<&TensorView<'_, T>>,
    want_arg: bool,
    opts: &SegmentOptions,
) -> Result<Reduced<T>> {
    check_reduction::<T>(op, opts.reduce, want_arg)?;
    let defer = !want_arg && elements_reduce::<T>(opts.reduce);
    let p = prepare(op, kind, src, index, out, opts, defer)?;
    reduce_prepared(op, kind, &p, out, want_arg, opts).map_err(|err| match p.deferred {
        true => {
            let out = out.map(|o| &o.layout);
            deferred_error(op, kind, &src.layout, index, out, opts, err)
        }
        false => err,
    })
}

/// [`reduce`] into `out` (the `_out` forms): returns the positions when asked for. When
/// `out`'s elements are one contiguous run in row-major order the fold writes them in
/// place, which is safe because nothing after the index pass and the allocations can fail;
/// otherwise it folds a copy and writes that back. With `opts.overwrite` the fold starts as
/// without `out` (its values are not read).
fn reduce_out<T: Element, I: IndexInt>(
    op: &'static str,
    kind: Kind,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    want_arg: bool,
    opts: &SegmentOptions,
) -> Result<(Option<Vec<i64>>, Vec<usize>)> {
    check_reduction::<T>(op, opts.reduce, want_arg)?;
    let defer = !want_arg && elements_reduce::<T>(opts.reduce);
    let p = prepare(op, kind, src, index, Some(&out.as_view()), opts, defer)?;
    let deferred = p.deferred;
    let run = |out: &mut TensorViewMut<'_, T>| {
        if in_place(kind, &p, want_arg)
            && let Some(cells) = out.contiguous_mut()
        {
            let dest = Dest::InPlace(cells, opts.overwrite);
            let (_, a, shape) = reduce_dest(op, kind, &p, dest, want_arg, opts)?;
            return Ok((a, shape));
        }
        let dest = match opts.overwrite {
            true => Dest::Fresh,
            false => Dest::Copy(&out.as_view()),
        };
        let (v, a, shape) = reduce_dest(op, kind, &p, dest, want_arg, opts)?;
        out.write_row_major(&v);
        Ok((a, shape))
    };
    run(out).map_err(|err| match deferred {
        true => deferred_error(op, kind, &src.layout, index, Some(&out.layout), opts, err),
        false => err,
    })
}

/// Where a reduction's values start and go.
enum Dest<'a, 'o, T> {
    /// A new buffer, returned.
    Fresh,
    /// A copy of `out`'s values, returned (the caller writes it back).
    Copy(&'a TensorView<'o, T>),
    /// `out`'s own elements, contiguous and row-major, reduced in place (nothing returned);
    /// `true`: their values take no part (zeroed first, as a new buffer starts).
    InPlace(&'a mut [T], bool),
}

/// Whether [`reduce_dest`] may fold into `out` itself: not when its cells are ordered
/// `[b, k, n]` (an index that varies along the trailing dims), nor for the per-lane
/// scatter-elements path of several lanes (a later lane's call could fail after an earlier
/// one wrote).
fn in_place<T: Clone>(kind: Kind, p: &Prepared<'_, T>, want_arg: bool) -> bool {
    let per_lane = !want_arg && kind == Kind::Scatter && by_elements(p.dims, p.mode);
    p.mode != Mode::PerElement && !(per_lane && p.dims.b > 1)
}

/// [`reduce`] after its checks and [`prepare`] (the backward of min and max reuses them).
fn reduce_prepared<T: Element>(
    op: &'static str,
    kind: Kind,
    p: &Prepared<'_, T>,
    out: Option<&TensorView<'_, T>>,
    want_arg: bool,
    opts: &SegmentOptions,
) -> Result<Reduced<T>> {
    let dest = match out {
        Some(o) => Dest::Copy(o),
        None => Dest::Fresh,
    };
    reduce_dest(op, kind, p, dest, want_arg, opts)
}

/// [`reduce_prepared`] into `dest`.
fn reduce_dest<T: Element>(
    op: &'static str,
    kind: Kind,
    p: &Prepared<'_, T>,
    mut dest: Dest<'_, '_, T>,
    want_arg: bool,
    opts: &SegmentOptions,
) -> Result<Reduced<T>> {
    // segment_csr overwrites `out` (torch_scatter's rule); the other forms fold it in.
    let include_self = kind != Kind::Csr && !matches!(dest, Dest::Fresh | Dest::InPlace(_, true));
    let red = opts.reduce;
    let (dims, mode, lanes, total, src_data, dim) =
        (p.dims, p.mode, &p.lanes, p.total, &p.src[..], p.dim);
    let out_shape = p.out_shape.clone();
    let ctx = Ctx::new(opts.par);
    // Lane-major: [b, n, k] in row modes, [b, k, n] in element mode.
    let element = mode == Mode::PerElement;
    // A mean of single elements is the fast sum divided by counts of the index (the scatter
    // kernels' own mean runs on their sequential engine, an order of magnitude slower:
    // record/2026-11-29-dask.md), for f32 and f64 (`elements_reduce`). (The index pass was
    // deferred to this path's kernel exactly when it is taken: `prepare`.)
    let mean = red == Reduction::Mean;
    if !want_arg && kind == Kind::Scatter && elements_reduce::<T>(red) && by_elements(dims, mode) {
        // An overwritten `out` starts as a fresh buffer does (from the identity, then the
        // cells nothing reached made empty): the kernels' fast forms, not the identity fill.
        let start = match dest {
            Dest::Fresh | Dest::InPlace(_, true) => {
                identity_start::<T>(if mean { Reduction::Add } else { red })
            }
            _ => None,
        };
        let mut own = match &mut dest {
            Dest::InPlace(cells, overwrite) => {
                if *overwrite {
                    cells.fill(start.unwrap_or_default());
                }
                Vec::new()
            }
            Dest::Copy(o) => o.try_to_vec(op, "out")?,
            Dest::Fresh => filled_par(ctx, op, "out", total, start.unwrap_or_default())?,
        };
        let buf = match dest {
            Dest::InPlace(cells, _) => cells,
            _ => &mut own[..],
        };
        let from_buf = include_self || start.is_some();
        // A constant condition: no other type compiles the division.
        if (const { single::fast_mean::<T>() }) && mean {
            by_scatter_elements(
                op,
                src_data,
                lanes,
                dims,
                Reduction::Add,
                from_buf,
                opts,
                buf,
            )?;
            if u32::try_from(dims.e).is_ok() {
                single::divide_by_counts::<T, u32>(ctx, op, buf, lanes, dims, include_self)?;
            } else {
                single::divide_by_counts::<T, u64>(ctx, op, buf, lanes, dims, include_self)?;
            }
            return Ok((own, None, out_shape));
        }
        by_scatter_elements(op, src_data, lanes, dims, red, from_buf, opts, buf)?;
        if let Some(id) = start {
            untouched_to_empty(
                ctx,
                op,
                buf,
                src_data,
                lanes,
                dims,
                id,
                fold::empty_value::<T>(red),
            )?;
        }
        return Ok((own, None, out_shape));
    }
    if let Dest::InPlace(cells, true) = &mut dest {
        cells.fill(T::default());
    }
    let problem = Problem {
        src: src_data,
        dims,
        mode,
        reduce: red,
        include_self,
        start: fold::Start::Segment,
    };
    let source = match kind {
        Kind::Csr => Source::Indptr(lanes),
        // A scatter's index found sorted takes segment_coo's fold (no counting sort).
        _ => Source::Index {
            lanes,
            sorted: p.sorted,
        },
    };
    // Fresh outputs are initialised row by row by the fold's tasks (no filling pass).
    let oom = |bytes| Error::out_of_memory(op, "out", bytes);
    let fold = |rows: Rows<'_, T>| -> Result<Option<Vec<i64>>> {
        if want_arg {
            let arg = build_rows(total, 0i64, oom, |a| {
                fold::run(op, ctx, &problem, &source, rows, Some(a))
            })?;
            Ok(Some(arg))
        } else {
            fold::run(op, ctx, &problem, &source, rows, None)?;
            Ok(None)
        }
    };
    let (mut buf, mut arg) = match dest {
        Dest::InPlace(cells, _) => {
            debug_assert!(!element, "in_place rules the [b, k, n] order out");
            return Ok((Vec::new(), fold(Rows::init(cells))?, out_shape));
        }
        Dest::Copy(o) => {
            let mut buf = if element {
                o.permute(&moved_last(out_shape.len(), dim))?
                    .try_to_vec(op, "out")?
            } else {
                o.try_to_vec(op, "out")?
            };
            let arg = fold(Rows::init(&mut buf))?;
            (buf, arg)
        }
        Dest::Fresh => {
            let mut arg = None;
            let buf = build_rows(total, T::default(), oom, |rows| {
                arg = fold(rows)?;
                Ok(())
            })?;
            (buf, arg)
        }
    };
    if element {
        buf = from_bkn(op, &buf, dims)?;
        if let Some(a) = arg {
            arg = Some(from_bkn(op, &a, dims)?);
        }
    }
    Ok((buf, arg, out_shape))
}

/// `len` copies of `v`, allocated fallibly.
/// Large buffers are advised to use transparent huge pages (fewer page faults on first touch).
pub(crate) fn filled<T: Clone>(
    op: &'static str,
    arg: &'static str,
    len: usize,
    v: T,
) -> Result<Vec<T>> {
    let mut b = crate::kernels::try_vec_with_huge_pages(len).ok_or_else(|| {
        Error::out_of_memory(op, arg, len.saturating_mul(std::mem::size_of::<T>()))
    })?;
    b.resize(len, v);
    Ok(b)
}

/// [`filled`] by `ctx`'s threads (a large fresh buffer's first touch is cut across them).
pub(crate) fn filled_par<T: Copy + Send + Sync>(
    ctx: Ctx,
    op: &'static str,
    arg: &'static str,
    len: usize,
    v: T,
) -> Result<Vec<T>> {
    crate::kernels::par_filled(ctx, len, v, |bytes| Error::out_of_memory(op, arg, bytes))
}

/// The axes that move `dim` to the end.
fn moved_last(rank: usize, dim: usize) -> Vec<usize> {
    (0..rank).filter(|&d| d != dim).chain([dim]).collect()
}

/// `[b, k, n]` reordered to `[b, n, k]`.
fn from_bkn<T: Copy + Default>(op: &'static str, v: &[T], d: Dims) -> Result<Vec<T>> {
    let mut r = filled(op, "out", v.len(), T::default())?;
    if v.is_empty() {
        // No cells (n = 0): `b · k` may still be 2³⁵ empty loops.
        return Ok(r);
    }
    for b in 0..d.b {
        let base = b * d.n * d.k;
        for k in 0..d.k {
            for n in 0..d.n {
                r[base + n * d.k + k] = v[base + k * d.n + n];
            }
        }
    }
    Ok(r)
}

fn tensor<T: Copy>(values: Vec<T>, shape: &[usize]) -> Tensor<T> {
    Tensor::from_vec(values, shape).expect("the output's element count was checked")
}

/// Reduces `src` into `index`'s cells along `opts.dim` (torch_scatter `scatter`).
///
/// `index` is broadcast against `src` (see the [module](self) rules); every value must lie in
/// `[0, n)`.
///
/// # Errors
/// A reduction other than sum, mean, mul, min, max (mean of bool); `dim` outside the rank; an
/// index that does not broadcast; a negative or too-large index (naming `index`, its position
/// and value); an output that cannot be allocated.
pub fn scatter<T: Element, I: IndexInt>(
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    let (v, _, shape) = reduce("scatter", Kind::Scatter, src, index, None, false, opts)?;
    Ok(tensor(v, &shape))
}

/// [`scatter`] into `out`, whose values start each fold (torch_scatter's `out=`); its extent
/// along `dim` is the output's. On error `out` is unchanged.
///
/// ```
/// use tensor_scatter::segment::{scatter_out, SegmentOptions};
/// use tensor_scatter::{TensorView, TensorViewMut};
/// let mut out = [100i32, 200];
/// scatter_out(
///     &TensorView::new(&[1, 2, 3], &[3]).unwrap(),
///     &TensorView::new(&[1u8, 1, 0], &[3]).unwrap(),
///     &mut TensorViewMut::new(&mut out, &[2]).unwrap(),
///     &SegmentOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out, [103, 203]);
/// ```
///
/// # Errors
/// As [`scatter`], plus an `out` whose shape is not `src`'s off `dim`.
pub fn scatter_out<T: Element, I: IndexInt>(
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &SegmentOptions,
) -> Result<()> {
    reduce_out("scatter", Kind::Scatter, src, index, out, false, opts)?;
    Ok(())
}

/// `scatter_min` / `scatter_max`: the reduced values and, per cell, the position along `dim`
/// of the element they came from (`src.shape[dim]` for an empty cell). `opts.reduce` must be
/// `Min` or `Max`.
///
/// # Errors
/// As [`scatter`], and any reduction other than min and max.
pub fn scatter_arg<T: Element, I: IndexInt>(
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<(Tensor<T>, Tensor<i64>)> {
    let (v, a, shape) = reduce("scatter", Kind::Scatter, src, index, None, true, opts)?;
    Ok((tensor(v, &shape), tensor(a.unwrap_or_default(), &shape)))
}

/// [`scatter_arg`] into `out` (whose values take part: a cell that keeps its own value gets
/// position `src.shape[dim]`); returns the positions.
///
/// # Errors
/// As [`scatter_arg`] and [`scatter_out`].
pub fn scatter_arg_out<T: Element, I: IndexInt>(
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &SegmentOptions,
) -> Result<Tensor<i64>> {
    let (a, shape) = reduce_out("scatter", Kind::Scatter, src, index, out, true, opts)?;
    Ok(tensor(a.unwrap_or_default(), &shape))
}

macro_rules! segment_forms {
    ($kind:expr, $name:literal, $arg:ident, $plain:ident, $out:ident, $with_arg:ident, $arg_out:ident, $what:literal, $into:literal) => {
        #[doc = concat!("`", $name, "`: ", $what)]
        ///
        /// # Errors
        /// As [`scatter`], plus the order and range rules of the [module](self).
        pub fn $plain<T: Element, I: IndexInt>(
            src: &TensorView<'_, T>,
            $arg: &TensorView<'_, I>,
            opts: &SegmentOptions,
        ) -> Result<Tensor<T>> {
            let (v, _, shape) = reduce($name, $kind, src, $arg, None, false, opts)?;
            Ok(tensor(v, &shape))
        }

        #[doc = concat!("[`", stringify!($plain), "`] into `out`, ", $into, ". On error `out` is unchanged.")]
        ///
        /// # Errors
        #[doc = concat!("As [`", stringify!($plain), "`] and [`scatter_out`].")]
        pub fn $out<T: Element, I: IndexInt>(
            src: &TensorView<'_, T>,
            $arg: &TensorView<'_, I>,
            out: &mut TensorViewMut<'_, T>,
            opts: &SegmentOptions,
        ) -> Result<()> {
            reduce_out($name, $kind, src, $arg, out, false, opts)?;
            Ok(())
        }

        #[doc = concat!("[`", stringify!($plain), "`] with min or max and the positions (torch_scatter's `segment_min_*` / `segment_max_*`).")]
        ///
        /// # Errors
        #[doc = concat!("As [`", stringify!($plain), "`] and [`scatter_arg`].")]
        pub fn $with_arg<T: Element, I: IndexInt>(
            src: &TensorView<'_, T>,
            $arg: &TensorView<'_, I>,
            opts: &SegmentOptions,
        ) -> Result<(Tensor<T>, Tensor<i64>)> {
            let (v, a, shape) = reduce($name, $kind, src, $arg, None, true, opts)?;
            Ok((tensor(v, &shape), tensor(a.unwrap_or_default(), &shape)))
        }

        #[doc = concat!("[`", stringify!($with_arg), "`] into `out` (", $into, "); returns the positions.")]
        ///
        /// # Errors
        #[doc = concat!("As [`", stringify!($with_arg), "`] and [`scatter_out`].")]
        pub fn $arg_out<T: Element, I: IndexInt>(
            src: &TensorView<'_, T>,
            $arg: &TensorView<'_, I>,
            out: &mut TensorViewMut<'_, T>,
            opts: &SegmentOptions,
        ) -> Result<Tensor<i64>> {
            let (a, shape) = reduce_out($name, $kind, src, $arg, out, true, opts)?;
            Ok(tensor(a.unwrap_or_default(), &shape))
        }
    };
}

segment_forms!(
    Kind::Coo,
    "segment_coo",
    index,
    segment_coo,
    segment_coo_out,
    segment_coo_arg,
    segment_coo_arg_out,
    "reduces `src` by a **sorted** `index` along `dim = index.ndim - 1` (its leading dims expand to src's). The same result as [`scatter`] with that dim, plus the check that every lane of `index` is non-decreasing.",
    "whose values start each fold"
);
segment_forms!(
    Kind::Csr,
    "segment_csr",
    indptr,
    segment_csr,
    segment_csr_out,
    segment_csr_arg,
    segment_csr_arg_out,
    "reduces `src` over the segments `[indptr[i], indptr[i + 1])` along `dim = indptr.ndim - 1` (leading dims expand to src's); the output has `indptr.shape[dim] - 1` cells along dim. Positions outside `[indptr[0], indptr[-1])` are not read.",
    "which it overwrites (torch_scatter's rule: the result is [`segment_csr`]'s, and `out`'s values take no part)"
);
