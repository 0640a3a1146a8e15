//! The composites: softmax, log-softmax, logsumexp and standard deviation by segment.
//!
//! Each is one segment pass that computes per-cell statistics (the maximum `m` and
//! `s = Σ exp(x − m)` in index order, or the mean and the sum of squared deviations), then,
//! for softmax and log-softmax, one pass over `src` that reads each element's cell. f16/bf16
//! compute in f32 and round once; f32 and f64 compute in their own type. `exp` in f32 is
//! [`exp_f32`] (within 1 ulp, the same bits everywhere, vectorisable).
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

use super::plan::Mode;
use super::{Kind, Prepared, SegmentOptions, filled_par, prepare, tensor};
use crate::dtype::{DType, Element, Reduction};
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::index::IndexInt;
use crate::kernels::build_rows;
use crate::kernels::segment::fold::{self, Batch, Problem, Source};
use crate::kernels::segment::groups::Positions;
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
    ($t:ty, $exp:expr) => {
        impl Real for $t {
            const ZERO: $t = 0.0;
            const INF: $t = <$t>::INFINITY;
            const NEG_INF: $t = <$t>::NEG_INFINITY;
            #[inline(always)]
            fn exp(self) -> $t {
                $exp(self)
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
real!(f32, exp_f32);
real!(f64, f64::exp);

/// `e^x` in f32, the library's own: within 1 ulp of the exact value for every f32 (checked
/// over all 2^32 inputs against f64's `exp`, 99.6% of them correctly rounded), with the same
/// bits on every platform and instruction set (plain multiplies and adds: Rust never fuses
/// them), and branch-free, so the composites' loops vectorise it (libm's `expf` is a call
/// per element, which was a third of softmax's time). NaN gives NaN, overflow `+inf`,
/// underflow 0 through correctly rounded subnormals.
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split so that `n * LN2_HI` is exact for every |n| <= 150 (9 significant bits).
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding 1.5 * 2^23 rounds to an integer (nearest even) and leaves it in the low bits.
    const ROUND: f32 = 12_582_912.0;
    let c = x.clamp(-104.0, 89.0);
    let t = c * LOG2E + ROUND;
    let n = t - ROUND;
    // e^x = 2^n * e^r with |r| <= ln2 / 2, where the Taylor polynomial of degree 7 is within
    // 0.05 ulp of e^r.
    let r = (c - n * LN2_HI) - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r / 5040.0))))));
    // 2^n in two normal factors (n in [-150, 128]): the first product is exact, the second
    // rounds once (to a subnormal or infinity where the result is one).
    let ni = t.to_bits() as i32 - 0x4B40_0000;
    let half = ni >> 1;
    let scale = |k: i32| f32::from_bits(((k + 127) << 23) as u32);
    let y = p * scale(ni - half) * scale(half);
    if x.is_nan() { x } else { y }
}

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
    // Selects, no branch: it vectorises.
    let v = if b.is_nan() | (b > a) { b } else { a };
    if a.is_nan() { a } else { v }
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
    let source = Source::Index {
        lanes: &prep.lanes,
        sorted: prep.sorted,
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
            |b| segment_stats(ctx.level, &problem, b),
        )
    })
}

crate::kernels::simd::multiversion! {
    if (const { !matches!(T::DTYPE, DType::F64) })
    /// `[m, s]` of each segment's cells (`w` of them): its maximum, then `Σ exp(x − m)` in
    /// index order. Compiled per instruction set where the compute type is f32, whose `exp`
    /// vectorises, and entered once per batch of segments.
    fn segment_stats<T: Float>(problem: &Problem<'_, T>, b: Batch<'_, '_, [T::Acc; 2], T::Acc>) -> () {
        let mut b = b;
        let (base, w) = (b.base, b.w);
        for (i, s) in b.segs.clone().enumerate() {
            let pos = b.groups.positions(s);
            let out = b.rows(i).0;
            let mut c = 0;
            while c + 16 <= w {
                stats_block::<T, 16>(problem, base, pos.clone(), w, c, out);
                c += 16;
            }
            if c + 8 <= w {
                stats_block::<T, 8>(problem, base, pos.clone(), w, c, out);
                c += 8;
            }
            while c < w {
                stats_block::<T, 1>(problem, base, pos.clone(), w, c, out);
                c += 1;
            }
        }
    }
}

/// [`segment_stats`] of columns `c..c + B`, held in registers across the segment's rows.
#[inline(always)]
fn stats_block<T: Float, const B: usize>(
    problem: &Problem<'_, T>,
    base: usize,
    pos: Positions<'_>,
    w: usize,
    c: usize,
    out: &mut [[T::Acc; 2]],
) {
    let mut m = [T::Acc::NEG_INF; B];
    for (_, row) in fold::rows(problem, base, pos.clone(), w) {
        for (m, &x) in m.iter_mut().zip(&row[c..c + B]) {
            *m = max_nan(*m, x.to_acc());
        }
    }
    let mut s = [T::Acc::ZERO; B];
    for (_, row) in fold::rows(problem, base, pos, w) {
        for ((s, &m), &x) in s.iter_mut().zip(&m).zip(&row[c..c + B]) {
            *s = *s + (x.to_acc() - m).exp();
        }
    }
    for ((o, m), s) in out[c..c + B].iter_mut().zip(m).zip(s) {
        *o = [m, s];
    }
}

crate::kernels::simd::multiversion! {
    if (const { !matches!(T::DTYPE, DType::F64) })
    /// Softmax (`log`: log-softmax) of the rows of `chunk` (rows from `lo` of a row-mode
    /// `src`) from their cells' `[m, s]`: `exp(x − m) / s` (`(x − m) − ln s`). Per
    /// instruction set as [`segment_stats`], entered once per task.
    fn softmax_rows<T: Float>(prep: &Prepared<'_, T>, stats: &[[T::Acc; 2]], lo: usize, chunk: &mut [T], log: bool) -> () {
        let d = prep.dims;
        for (r, y) in chunk.chunks_mut(d.k).enumerate() {
            let (b, e) = ((lo + r) / d.e, (lo + r) % d.e);
            let x = &prep.src[(b * d.e + e) * d.k..][..d.k];
            let lane = prep.lanes.lane(b);
            // The cells are random: ask for those of the row `STATS_AHEAD` rows on.
            if let Some(&c) = lane.get(e + STATS_AHEAD) {
                let st = stats[(b * d.n + c as usize) * d.k..].as_ptr();
                crate::kernels::prefetch(st, d.k * std::mem::size_of::<[T::Acc; 2]>());
            }
            let st = &stats[(b * d.n + lane[e] as usize) * d.k..][..d.k];
            // One loop per form (`log` is the same for the whole row).
            if log {
                for ((y, &x), &st) in y.iter_mut().zip(x).zip(st) {
                    *y = softmax_cell(x, st, true);
                }
            } else {
                for ((y, &x), &st) in y.iter_mut().zip(x).zip(st) {
                    *y = softmax_cell(x, st, false);
                }
            }
        }
    }
}

/// Softmax (`log`: log-softmax) of one element from its cell's `[m, s]`.
#[inline(always)]
fn softmax_cell<T: Float>(x: T, [m, s]: [T::Acc; 2], log: bool) -> T {
    if log {
        T::from_acc((x.to_acc() - m) - s.ln())
    } else {
        T::from_acc((x.to_acc() - m).exp() / s)
    }
}

fn problem<'p, T: Float>(prep: &'p Prepared<'_, T>) -> Problem<'p, T> {
    Problem {
        src: &prep.src,
        dims: prep.dims,
        mode: prep.mode,
        reduce: Reduction::Add,
        include_self: false,
        start: fold::Start::Segment,
    }
}

fn checked<'s, T: Float, I: IndexInt>(
    op: &'static str,
    src: &TensorView<'s, T>,
    index: &TensorView<'s, I>,
    opts: &SegmentOptions,
) -> Result<Prepared<'s, T>> {
    prepare(op, Kind::Scatter, src, index, None, opts, false)
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

/// Rows ahead whose cells' statistics [`elementwise`] asks for.
const STATS_AHEAD: usize = 16;

/// Softmax (`log`: log-softmax) of every element of `src` from its cell's statistics
/// (`out[b, e, k]` from `src[b, e, k]` and its cell's `[m, s]`), parallel over rows of `src`.
fn elementwise<T: Float>(
    op: &'static str,
    ctx: Ctx,
    prep: &Prepared<'_, T>,
    stats: &[[T::Acc; 2]],
    log: bool,
) -> Result<Vec<T>> {
    let d = prep.dims;
    let mut out = filled_par(ctx, op, "out", prep.src.len(), T::default())?;
    // k first: with k = 0, `b · e` may be past usize (an empty src).
    if d.k == 0 || d.b * d.e == 0 {
        return Ok(out);
    }
    let rows = d.b * d.e;
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
        if prep.mode != Mode::PerElement {
            softmax_rows(ctx.level, prep, stats, *lo, chunk, log);
            return;
        }
        for (r, row) in chunk.chunks_mut(d.k).enumerate() {
            let (b, e) = ((*lo + r) / d.e, (*lo + r) % d.e);
            let x = &prep.src[(b * d.e + e) * d.k..][..d.k];
            for (kk, y) in row.iter_mut().enumerate() {
                let lane = b * d.k + kk;
                let cell = prep.lanes.lane(lane)[e] as usize;
                // Cells one at a time (a row's cells lie in different segments).
                *y = softmax_cell(x[kk], stats[lane * d.n + cell], log);
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
    elementwise(op, ctx, prep, &st, log)
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
        sorted: prep.sorted,
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
            (w.saturating_mul(2), T::Acc::ZERO),
            |b| {
                b.each(|base, pos, out, _, acc| {
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
                })
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

#[cfg(test)]
mod tests {
    use super::exp_f32;

    /// Distance in ulps between two f32 (on the ordered line of bit patterns).
    fn ulps(a: f32, b: f32) -> u64 {
        let key = |v: f32| {
            let i = i64::from(v.to_bits() as i32);
            if i < 0 { i64::from(i32::MIN) - i } else { i }
        };
        key(a).abs_diff(key(b))
    }

    /// Every `step`-th bit pattern: within 1 ulp of f64's `exp` rounded to f32, NaN for NaN.
    fn sweep(step: usize) {
        for bits in (0..=u32::MAX).step_by(step) {
            let x = f32::from_bits(bits);
            let (got, want) = (exp_f32(x), (f64::from(x)).exp() as f32);
            if x.is_nan() {
                assert!(got.is_nan(), "exp({bits:#x}) = {got}");
            } else {
                assert!(ulps(got, want) <= 1, "exp({x:e}) = {got:e}, want {want:e}");
            }
        }
    }

    #[test]
    fn exp_f32_is_within_one_ulp() {
        // A prime step reaches every exponent and many mantissas (about 4 million inputs).
        sweep(1021);
        for (x, want) in [
            (0.0f32, 1.0f32),
            (-0.0, 1.0),
            (f32::INFINITY, f32::INFINITY),
            (f32::NEG_INFINITY, 0.0),
            (88.72284, f32::INFINITY),
            (-104.0, 0.0),
        ] {
            assert_eq!(exp_f32(x).to_bits(), want.to_bits(), "exp({x:e})");
        }
        // Subnormal results, down to the smallest.
        assert_eq!(exp_f32(-103.97), f32::from_bits(1));
        assert!(exp_f32(-87.5) > 0.0 && exp_f32(-87.5) < f32::MIN_POSITIVE);
    }

    /// All 2^32 inputs (about a minute in release: `cargo test --release -- --ignored`).
    #[test]
    #[ignore]
    fn exp_f32_is_within_one_ulp_everywhere() {
        sweep(1);
    }
}
