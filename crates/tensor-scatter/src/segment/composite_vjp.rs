//! Backward passes of the composites, with respect to `src`. With `y` the forward's output
//! and sums over each element's cell in index order, in the compute type:
//! softmax `y · (g − Σ g·y)`; log-softmax `g − e^y · Σ g`; logsumexp `g_cell · softmax`;
//! std `g_cell · (x − mean) / (d · σ)`, `d` the forward's divisor, 0 where σ is 0 (a
//! one-element or constant cell, where the derivative does not exist; PyTorch gives NaN).
//! One serial pass per rule: bit-identical for any thread count.

use super::composite::softmax_prepared;
use super::plan::Mode;
use super::{Float, Kind, Real, SegmentOptions, filled, prepare, tensor};
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::index::IndexInt;
use crate::view::{Tensor, TensorView};

#[derive(Clone, Copy, PartialEq)]
enum Rule {
    Softmax,
    LogSoftmax,
    LogSumExp,
    Std { unbiased: bool },
}

/// The backward of [`scatter_softmax`](super::scatter_softmax): `grad` is shaped as `src`.
///
/// ```
/// use tensor_scatter::segment::{scatter_softmax_vjp, SegmentOptions};
/// use tensor_scatter::TensorView;
/// // Two equal values share a segment: softmax 1/2 each, and a gradient that moves
/// // probability from the second to the first.
/// let g = scatter_softmax_vjp(
///     &TensorView::new(&[1.0f64, -1.0], &[2]).unwrap(),
///     &TensorView::new(&[0.0f64, 0.0], &[2]).unwrap(),
///     &TensorView::new(&[0i64, 0], &[2]).unwrap(),
///     &SegmentOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(g.as_slice(), &[0.5, -0.5]);
/// ```
///
/// # Errors
/// Those of the forward, plus a `grad` of another shape.
pub fn scatter_softmax_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    run("scatter_softmax_vjp", Rule::Softmax, grad, src, index, opts)
}

/// The backward of [`scatter_log_softmax`](super::scatter_log_softmax) (`grad` shaped as
/// `src`).
///
/// # Errors
/// As [`scatter_softmax_vjp`].
pub fn scatter_log_softmax_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    run(
        "scatter_log_softmax_vjp",
        Rule::LogSoftmax,
        grad,
        src,
        index,
        opts,
    )
}

/// The backward of [`scatter_logsumexp`](super::scatter_logsumexp) (`grad` shaped as its
/// output): each element gets its cell's gradient times its softmax.
///
/// # Errors
/// As [`scatter_softmax_vjp`].
pub fn scatter_logsumexp_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    run(
        "scatter_logsumexp_vjp",
        Rule::LogSumExp,
        grad,
        src,
        index,
        opts,
    )
}

/// The backward of [`scatter_std`](super::scatter_std) (`grad` shaped as its output).
///
/// ```
/// use tensor_scatter::segment::{scatter_std_vjp, SegmentOptions};
/// use tensor_scatter::TensorView;
/// // std of [1, 3] is √2; d std / dx = (x − 2) / (1 · √2).
/// let g = scatter_std_vjp(
///     &TensorView::new(&[1.0f64], &[1]).unwrap(),
///     &TensorView::new(&[1.0f64, 3.0], &[2]).unwrap(),
///     &TensorView::new(&[0i64, 0], &[2]).unwrap(),
///     true,
///     &SegmentOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(g.as_slice(), &[-1.0 / 2f64.sqrt(), 1.0 / 2f64.sqrt()]);
/// ```
///
/// # Errors
/// As [`scatter_softmax_vjp`].
pub fn scatter_std_vjp<T: Float, I: IndexInt>(
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    unbiased: bool,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    run(
        "scatter_std_vjp",
        Rule::Std { unbiased },
        grad,
        src,
        index,
        opts,
    )
}

fn run<T: Float, I: IndexInt>(
    op: &'static str,
    rule: Rule,
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> Result<Tensor<T>> {
    let p = prepare(op, Kind::Scatter, src, index, None, opts, false)?;
    let per_element = matches!(rule, Rule::Softmax | Rule::LogSoftmax);
    let want = if per_element {
        &src.layout.shape
    } else {
        &p.out_shape
    };
    if grad.layout.shape != *want {
        return Err(Error::shape(
            op,
            "grad",
            format!("{want:?} (the forward's output shape)"),
            &grad.layout.shape,
        ));
    }
    let g = grad.try_to_vec(op, "grad")?;
    // The forward's output where the rule reads it, on the index read above.
    let y = match rule {
        Rule::Softmax | Rule::LogSumExp => softmax_prepared(op, Ctx::new(opts.par), &p, false)?,
        Rule::LogSoftmax => softmax_prepared(op, Ctx::new(opts.par), &p, true)?,
        Rule::Std { .. } => vec![],
    };
    let d = p.dims;
    let (b, e, k, n) = (d.b, d.e, d.k, d.n);
    let lane = |bi: usize, ki: usize| match p.mode {
        Mode::Shared => 0,
        Mode::PerOuter => bi,
        Mode::PerElement => bi * k + ki,
    };
    // Every position (flat src offset, its cell), in index order.
    let (lanes, lane) = (&p.lanes, &lane);
    // None when src is empty (`b · e` may still be 2³⁴ empty rounds).
    let rows = if src.layout.numel == 0 { 0 } else { b };
    let positions = || {
        (0..rows).flat_map(move |bi| {
            (0..e).flat_map(move |ei| {
                (0..k).map(move |ki| {
                    let s = lanes.lane(lane(bi, ki))[ei] as usize;
                    ((bi * e + ei) * k + ki, (bi * n + s) * k + ki)
                })
            })
        })
    };
    let cells = b * n * k;
    let zero = T::Acc::ZERO;
    let x = |at: usize| p.src[at].to_acc();
    let mut out = filled(op, "src", src.layout.numel, T::default())?;
    match rule {
        Rule::Softmax => {
            let mut s = filled(op, "grad", cells, zero)?;
            positions().for_each(|(at, c)| s[c] = s[c] + g[at].to_acc() * y[at].to_acc());
            for (at, c) in positions() {
                out[at] = T::from_acc(y[at].to_acc() * (g[at].to_acc() - s[c]));
            }
        }
        Rule::LogSoftmax => {
            let mut s = filled(op, "grad", cells, zero)?;
            positions().for_each(|(at, c)| s[c] = s[c] + g[at].to_acc());
            for (at, c) in positions() {
                out[at] = T::from_acc(g[at].to_acc() - y[at].to_acc().exp() * s[c]);
            }
        }
        Rule::LogSumExp => {
            for (at, c) in positions() {
                out[at] = T::from_acc(g[c].to_acc() * y[at].to_acc());
            }
        }
        Rule::Std { unbiased } => {
            let mut count = filled(op, "grad", cells, 0u64)?;
            let mut mean = filled(op, "grad", cells, zero)?;
            positions().for_each(|(at, c)| {
                mean[c] = mean[c] + x(at);
                count[c] += 1;
            });
            for (m, &c) in mean.iter_mut().zip(&count) {
                *m = *m / T::Acc::count(c.max(1));
            }
            let mut sq = filled(op, "grad", cells, zero)?;
            positions().for_each(|(at, c)| {
                let dx = x(at) - mean[c];
                sq[c] = sq[c] + dx * dx;
            });
            // Per cell: d · σ, with d the forward's divisor (0 exactly where σ is, as d ≥ 1).
            let mut den = sq;
            for (q, &n) in den.iter_mut().zip(&count) {
                let d = T::Acc::count(if unbiased { n.saturating_sub(1) } else { n }.max(1));
                *q = d * (*q / d).sqrt();
            }
            for (at, c) in positions() {
                if den[c] != zero {
                    out[at] = T::from_acc(g[c].to_acc() * (x(at) - mean[c]) / den[c]);
                }
            }
        }
    }
    Ok(tensor(out, &src.layout.shape))
}
