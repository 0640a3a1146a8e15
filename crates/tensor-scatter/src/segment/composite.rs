//! The composites: softmax, log-softmax, logsumexp and standard deviation by segment.
//!
//! Each is one segment pass that computes per-cell statistics (the maximum `m` and
//! `s = Σ exp(x − m)` in index order, or the mean and the sum of squared deviations), then,
//! for softmax and log-softmax, one pass over `src` that reads each element's cell. f16/bf16
//! compute in f32 and round once; f32 and f64 compute in their own type.
//!
//! Edge cases (the formulas, applied literally, except where noted):
//! * softmax `exp(x − m) / s`, log-softmax `(x − m) − ln s`: a segment holding NaN gives NaN;
//!   a segment whose maximum is ±inf gives NaN throughout (`inf − inf`), as `torch.softmax`.
//! * logsumexp `m + ln s`: an empty or all −inf segment gives −inf, a +inf gives +inf (`m`
//!   itself when `m` is ±inf, as `torch.logsumexp`), NaN propagates; no `eps` (torch_scatter
//!   adds 1e-12 to `s` and maps −inf to 0).
//! * std: `sqrt(Σ (x − mean)² / max(n − 1, 1))` (`max(n, 1)` when biased): one element gives
//!   0 when unbiased, an empty segment gives 0 (torch_scatter's clamps).

use std::ops::{Add, Div, Mul, Sub};
use std::sync::Mutex;

use super::fold::{self, Problem, Source};
use super::plan::Mode;
use super::{Kind, Prepared, SegmentOptions, filled_par, prepare, tensor};
use crate::dtype::{Element, Reduction};
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::index::IndexInt;
use crate::kernels::build_rows;
use crate::shape::part;
use crate::view::{Tensor, TensorView};

mod sealed {
    pub trait Sealed {}
}

/// The arithmetic the composites compute in (f32 and f64).
#[doc(hidden)]
pub trait Real:
    Element
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
{
    /// 0.
    const ZERO: Self;
    /// +inf.
    const INF: Self;
    /// −inf.
    const NEG_INF: Self;
    /// `e^self`.
    fn exp(self) -> Self;
    /// `ln self`.
    fn ln(self) -> Self;
    /// `√self`.
    fn sqrt(self) -> Self;
    /// Whether NaN.
    fn is_nan(self) -> bool;
    /// `n` (rounded).
    fn count(n: u64) -> Self;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: $t = 0.0;
            const INF: $t = <$t>::INFINITY;
            const NEG_INF: $t = <$t>::NEG_INFINITY;
            fn exp(self) -> $t {
                <$t>::exp(self)
            }
            fn ln(self) -> $t {
                <$t>::ln(self)
            }
            fn sqrt(self) -> $t {
                <$t>::sqrt(self)
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn count(n: u64) -> $t {
                n as $t
            }
        }
    };
}
real!(f32);
real!(f64);

/// A floating-point element type (f64, f32, f16, bf16): what the composites accept.
pub trait Float: Element + sealed::Sealed {
    /// The type the composites compute in: f32 for f16/bf16, the type itself otherwise.
    type Acc: Real;
    /// Exact widening.
    fn to_acc(self) -> Self::Acc;
    /// Rounding to nearest even (NaN made canonical, on the bits: see
    /// [`Element::canonical`]).
    fn from_acc(a: Self::Acc) -> Self;
}

macro_rules! float {
    ($t:ty, $acc:ty, $to:expr, $from:expr) => {
        impl sealed::Sealed for $t {}
        impl Float for $t {
            type Acc = $acc;
            fn to_acc(self) -> $acc {
                $to(self)
            }
            fn from_acc(a: $acc) -> $t {
                $from(a.canonical())
            }
        }
    };
}
float!(f64, f64, |x| x, |a| a);
float!(f32, f32, |x| x, |a| a);
float!(half::f16, f32, half::f16::to_f32, half::f16::from_f32);
float!(half::bf16, f32, half::bf16::to_f32, half::bf16::from_f32);

/// IEEE maximum in the compute type: NaN propagates (the first NaN stays).
#[inline]
pub(crate) fn max_nan<R: Real>(a: R, b: R) -> R {
    if a.is_nan() {
        a
    } else if b.is_nan() || b > a {
        b
    } else {
        a
    }
}

/// `m + ln s`, or `m` when `m` is ±inf (empty and all −inf segments give −inf).
#[inline]
pub(crate) fn logsumexp_of<R: Real>(m: R, s: R) -> R {
    if m == R::INF || m == R::NEG_INF {
        m
    } else {
        m + s.ln()
    }
}

/// Standard deviation from the sum of squared deviations and the count.
#[inline]
pub(crate) fn std_of<R: Real>(squares: R, n: u64, unbiased: bool) -> R {
    let d = if unbiased { n.saturating_sub(1) } else { n }.max(1);
    (squares / R::count(d)).sqrt()
}

/// Per-cell `[m, s]` of every segment, lane-major (`[b, n, k]` or `[b, k, n]`).
fn stats<T: Float>(op: &'static str, ctx: Ctx, prep: &Prepared<'_, T>) -> Result<Vec<[T::Acc; 2]>> {
    let problem = problem(prep);
    let w = fold::width(&problem);
    let source = Source::Index {
        lanes: &prep.lanes,
        sorted: false,
    };
    let oom = |bytes| Error::out_of_memory(op, "out", bytes);
    build_rows(prep.total, [T::Acc::ZERO; 2], oom, |rows| {
        fold::run_cells(
            op,
            ctx,
            &problem,
            &source,
            rows,
            None,
            (0, T::Acc::ZERO),
            |base, pos, out, _, _| {
                for c in out.iter_mut() {
                    *c = [T::Acc::NEG_INF, T::Acc::ZERO];
                }
                for (_, row) in fold::rows(&problem, base, pos.clone(), w) {
                    for (c, &x) in out.iter_mut().zip(row) {
                        c[0] = max_nan(c[0], x.to_acc());
                    }
                }
                for (_, row) in fold::rows(&problem, base, pos, w) {
                    for (c, &x) in out.iter_mut().zip(row) {
                        c[1] = c[1] + (x.to_acc() - c[0]).exp();
                    }
                }
            },
        )
    })
}

fn problem<'p, T: Float>(prep: &'p Prepared<'_, T>) -> Problem<'p, T> {
    Problem {
        src: &prep.src,
        dims: prep.dims,
        mode: prep.mode,
        reduce: Reduction::Add,
        include_self: false,
    }
}

fn checked<'s, T: Float, I: IndexInt>(
    op: &'static str,
    src: &TensorView<'s, T>,
    index: &TensorView<'s, I>,
    opts: &SegmentOptions,
) -> Result<Prepared<'s, T>> {
    prepare(op, Kind::Scatter, src, index, None, opts)
}

/// The output cells laid out as `[b, n, k]` from the lane-major buffer.
fn cells_out<V: Copy + Default>(
    op: &'static str,
    prep: &Prepared<'_, impl Clone>,
    v: Vec<V>,
) -> Result<Vec<V>> {
    if prep.mode == Mode::PerElement {
        super::from_bkn(op, &v, prep.dims)
    } else {
        Ok(v)
    }
}

/// Every element of `src` mapped through its cell's statistics: `out[b, e, k] =
/// f(src[b, e, k], stats of its cell)`, parallel over rows of `src`.
fn elementwise<T: Float>(
    op: &'static str,
    ctx: Ctx,
    prep: &Prepared<'_, T>,
    stats: &[[T::Acc; 2]],
    f: impl Fn(T::Acc, [T::Acc; 2]) -> T + Sync,
) -> Result<Vec<T>> {
    let d = prep.dims;
    let mut out = filled_par(ctx, op, "out", prep.src.len(), T::default())?;
    let rows = d.b * d.e;
    if rows == 0 || d.k == 0 {
        return Ok(out);
    }
    let bytes = prep.src.len() * 2 * std::mem::size_of::<T>();
    let tasks = ctx.tasks(bytes, 4).max(1);
    let mut slots = Vec::with_capacity(tasks);
    let mut rest = &mut out[..];
    for t in 0..tasks {
        let (lo, hi) = part(rows, tasks, t, 1);
        let (chunk, r) = rest.split_at_mut((hi - lo) * d.k);
        rest = r;
        slots.push(Mutex::new((lo, chunk)));
    }
    ctx.run(tasks, |t| {
        let mut slot = slots[t].lock().unwrap_or_else(|e| e.into_inner());
        let (lo, chunk) = &mut *slot;
        for (r, row) in chunk.chunks_mut(d.k).enumerate() {
            let (b, e) = ((*lo + r) / d.e, (*lo + r) % d.e);
            let x = &prep.src[(b * d.e + e) * d.k..][..d.k];
            if prep.mode == Mode::PerElement {
                for (kk, y) in row.iter_mut().enumerate() {
                    let lane = b * d.k + kk;
                    let cell = prep.lanes.lane(lane)[e] as usize;
                    *y = f(x[kk].to_acc(), stats[lane * d.n + cell]);
                }
            } else {
                let cell = prep.lanes.lane(b)[e] as usize;
                let st = &stats[(b * d.n + cell) * d.k..][..d.k];
                for ((y, &xv), &s) in row.iter_mut().zip(x).zip(st) {
                    *y = f(xv.to_acc(), s);
                }
            }
        }
    });
    Ok(out)
}

/// Softmax (`log`: log-softmax) of a prepared `src`, row-major as `src` (its index already
/// checked: the backward calls it on the index it has read).
pub(super) fn softmax_prepared<T: Float>(
    op: &'static str,
    ctx: Ctx,
    prep: &Prepared<'_, T>,
    log: bool,
) -> Result<Vec<T>> {
    let st = stats(op, ctx, prep)?;
    if log {
        elementwise(op, ctx, prep, &st, |x, [m, s]| {
            T::from_acc((x - m) - s.ln())
        })
    } else {
        elementwise(op, ctx, prep, &st, |x, [m, s]| {
            T::from_acc((x - m).exp() / s)
        })
    }
}

/// `scatter_softmax`: `exp(x − m) / Σ exp(x_j − m)` over each element's segment (`m` its
/// maximum), the output shaped as `src`. `opts.reduce` is ignored; `opts.dim_size` only bounds
/// the index.
///
/// ```
/// use tensor_scatter::segment::{scatter_softmax, SegmentOptions};
/// use tensor_scatter::TensorView;
/// let out = scatter_softmax(
///     &TensorView::new(&[0.0f64, 0.0, 5.0], &[3]).unwrap(),
///     &TensorView::new(&[0i64, 0, 1], &[3]).unwrap(),
///     &SegmentOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice(), &[0.5, 0.5, 1.0]);
/// ```
///
/// # Errors
/// As [`scatter`](super::scatter).
pub fn scatter_softmax<T: Float, I: IndexInt>(
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    const OP: &str = "scatter_softmax";
    let prep = checked(OP, src, index, opts)?;
    let v = softmax_prepared(OP, Ctx::new(opts.par), &prep, false)?;
    Ok(tensor(v, &src.layout.shape))
}

/// `scatter_log_softmax`: `(x − m) − ln Σ exp(x_j − m)` over each element's segment.
///
/// # Errors
/// As [`scatter`](super::scatter).
pub fn scatter_log_softmax<T: Float, I: IndexInt>(
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    const OP: &str = "scatter_log_softmax";
    let prep = checked(OP, src, index, opts)?;
    let v = softmax_prepared(OP, Ctx::new(opts.par), &prep, true)?;
    Ok(tensor(v, &src.layout.shape))
}

/// `scatter_logsumexp`: `m + ln Σ exp(x − m)` per cell (−inf for an empty cell), shaped as
/// [`scatter`](super::scatter)'s output.
///
/// ```
/// use tensor_scatter::segment::{scatter_logsumexp, SegmentOptions};
/// use tensor_scatter::TensorView;
/// let inf = f32::INFINITY;
/// let out = scatter_logsumexp(
///     &TensorView::new(&[0.0f32, 0.0, -inf, -inf, inf], &[5]).unwrap(),
///     &TensorView::new(&[0i64, 0, 1, 1, 3], &[5]).unwrap(),
///     &SegmentOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice(), &[2f32.ln(), -inf, -inf, inf]);
/// ```
///
/// # Errors
/// As [`scatter`](super::scatter).
pub fn scatter_logsumexp<T: Float, I: IndexInt>(
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    const OP: &str = "scatter_logsumexp";
    let ctx = Ctx::new(opts.par);
    let prep = checked(OP, src, index, opts)?;
    let st = stats(OP, ctx, &prep)?;
    let v: Vec<T> = st
        .iter()
        .map(|&[m, s]| T::from_acc(logsumexp_of(m, s)))
        .collect();
    Ok(tensor(cells_out(OP, &prep, v)?, &prep.out_shape))
}

/// `scatter_std`: the standard deviation of each cell's elements (see the module for the
/// counts), shaped as [`scatter`](super::scatter)'s output.
///
/// ```
/// use tensor_scatter::segment::{scatter_std, SegmentOptions};
/// use tensor_scatter::TensorView;
/// let out = scatter_std(
///     &TensorView::new(&[1.0f64, 3.0, 7.0], &[3]).unwrap(),
///     &TensorView::new(&[0i64, 0, 1], &[3]).unwrap(),
///     true,
///     &SegmentOptions::new().dim_size(3),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice(), &[2f64.sqrt(), 0.0, 0.0]);
/// ```
///
/// # Errors
/// As [`scatter`](super::scatter).
pub fn scatter_std<T: Float, I: IndexInt>(
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    unbiased: bool,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    const OP: &str = "scatter_std";
    let prep = checked(OP, src, index, opts)?;
    let problem = problem(&prep);
    let w = fold::width(&problem);
    let source = Source::Index {
        lanes: &prep.lanes,
        sorted: false,
    };
    let oom = |bytes| Error::out_of_memory(OP, "out", bytes);
    let buf = build_rows(prep.total, T::default(), oom, |rows| {
        fold::run_cells(
            OP,
            Ctx::new(opts.par),
            &problem,
            &source,
            rows,
            None,
            (2 * w, T::Acc::ZERO),
            |base, pos, out, _, acc| {
                let (sum, sq) = acc.split_at_mut(w);
                sum.fill(T::Acc::ZERO);
                sq.fill(T::Acc::ZERO);
                let mut n = 0u64;
                for (_, row) in fold::rows(&problem, base, pos.clone(), w) {
                    for (a, &x) in sum.iter_mut().zip(row) {
                        *a = *a + x.to_acc();
                    }
                    n += 1;
                }
                let c = T::Acc::count(n.max(1));
                for a in sum.iter_mut() {
                    *a = *a / c;
                }
                for (_, row) in fold::rows(&problem, base, pos, w) {
                    for ((q, &m), &x) in sq.iter_mut().zip(sum.iter()).zip(row) {
                        let dx = x.to_acc() - m;
                        *q = *q + dx * dx;
                    }
                }
                for (o, &q) in out.iter_mut().zip(sq.iter()) {
                    *o = T::from_acc(std_of(q, n, unbiased));
                }
            },
        )
    })?;
    Ok(tensor(cells_out(OP, &prep, buf)?, &prep.out_shape))
}

/// Refuses a non-float dtype of `arg` (a composite's `src`, a backward's `grad`), naming it
/// (for the dynamic entry points).
pub(crate) fn not_float(op: &'static str, arg: &'static str, dtype: crate::DType) -> Error {
    Error::unsupported_dtype(
        op,
        arg,
        dtype,
        "a floating-point dtype (float64, float32, float16, bfloat16)",
    )
}
