//! The segment family's backward passes against their oracle (`reference::segment::vjp`), bit
//! for bit: the cases of `segment_prop` (every form, with and without `out`, broadcast and
//! per-element indices, broken indices, strided views with poisoned padding), the four float
//! dtypes, both tie rules, 1, 2 and 4 threads. Then the oracle's rules against central finite
//! differences in f64, and the tie, NaN and zero rules on cases written out by hand.

use proptest::prelude::*;

use super::prop::{NAN, Rng, Small, SmallIndex, bits, embed, first_difference};
use super::segment_prop::{Case, Laid, generate};
use crate::reference::segment::{self as oracle, Composite, Form};
use crate::segment::{self, Float, Grads, SegmentOptions, Ties};
use crate::{Par, Reduction, Tensor, TensorView};

type Pair<T> = (Tensor<T>, Option<Tensor<T>>);

fn engine<T: Float, I: SmallIndex + crate::IndexInt>(
    form: Form,
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: Option<&TensorView<'_, T>>,
    opts: &SegmentOptions,
) -> crate::Result<Pair<T>> {
    let g: Grads<T> = match form {
        Form::Scatter => segment::scatter_vjp(grad, src, index, out, opts),
        Form::Coo => segment::segment_coo_vjp(grad, src, index, out, opts),
        Form::Csr => segment::segment_csr_vjp(grad, src, index, out, opts),
    }?;
    Ok((g.src, g.out))
}

fn same_bits<T: Float>(a: &Pair<T>, b: &Pair<T>) -> Result<(), String> {
    if a.0.shape() != b.0.shape() || bits(a.0.as_slice()) != bits(b.0.as_slice()) {
        return Err(format!(
            "src grad: {}",
            first_difference(a.0.as_slice(), b.0.as_slice())
        ));
    }
    match (&a.1, &b.1) {
        (None, None) => Ok(()),
        (Some(x), Some(y)) if bits(x.as_slice()) == bits(y.as_slice()) => Ok(()),
        (Some(x), Some(y)) => Err(format!(
            "out grad: {}",
            first_difference(x.as_slice(), y.as_slice())
        )),
        _ => Err("out grad present on one side only".into()),
    }
}

fn run<T: Small + Float, I: SmallIndex + crate::IndexInt>(
    case: &Case,
    seed: u64,
) -> Result<(), String> {
    let laid = Laid::<T, I>::new(case);
    if laid.huge_output() {
        return Ok(());
    }
    let (sv, iv, ov) = (laid.src_view()?, laid.index_view()?, laid.out_view()?);
    let poison = T::small(NAN);
    let mut rng = Rng::new(seed ^ 0x9e37_79b9);
    let ties = if rng.chance(50) {
        Ties::First
    } else {
        Ties::Split
    };
    let opts = case.opts.ties(ties);
    // The gradient is shaped as the forward's output (any shape when the forward fails).
    let gshape = match oracle::reduce(case.form, &sv, &iv, ov.as_ref(), &opts) {
        Ok((v, _)) => v.shape().to_vec(),
        Err(_) => vec![1],
    };
    let gvals: Vec<T> = (0..gshape.iter().product::<usize>())
        .map(|_| T::small(rng.below(11) as i64 - 5))
        .collect();
    let (gb, go, gs) = embed(&gvals, &gshape, case.layouts[2], poison);
    let gv = TensorView::with_strides(&gb, go, &gshape, &gs).map_err(|e| e.to_string())?;
    let want = oracle::vjp(case.form, &gv, &sv, &iv, ov.as_ref(), &opts);
    for threads in [1, 2, 4] {
        let o = opts.par(Par::threads_exact(threads));
        let got = engine(case.form, &gv, &sv, &iv, ov.as_ref(), &o);
        match (&want, &got) {
            (Err(_), Err(_)) => {}
            (Ok(w), Ok(g)) => same_bits(w, g).map_err(|m| format!("{threads} threads: {m}"))?,
            _ => {
                return Err(format!(
                    "{threads} threads: oracle {:?}, engine {:?}",
                    want.as_ref().map(|_| ()),
                    got.as_ref().map(|_| ())
                ));
            }
        }
    }
    if ov.is_none() {
        into_dst(case, &gv, &sv, &iv, &opts, &want, poison)?;
    }
    Ok(())
}

/// The `_out` form (the gradient with respect to src written into a caller's view, strided
/// as the case lays out src, padding poisoned): the oracle's bits, or on error the view
/// untouched.
fn into_dst<T: Small + Float, I: SmallIndex + crate::IndexInt>(
    case: &Case,
    gv: &TensorView<'_, T>,
    sv: &TensorView<'_, T>,
    iv: &TensorView<'_, I>,
    opts: &SegmentOptions,
    want: &crate::Result<Pair<T>>,
    poison: T,
) -> Result<(), String> {
    let kind = match case.form {
        Form::Scatter => segment::Kind::Scatter,
        Form::Coo => segment::Kind::Coo,
        Form::Csr => segment::Kind::Csr,
    };
    let shape = sv.shape().to_vec();
    let fill = vec![poison; shape.iter().product()];
    let (mut buf, off, strides) = embed(&fill, &shape, case.layouts[0], poison);
    let before = bits(&buf);
    for threads in [1, 2] {
        let o = opts.par(Par::threads_exact(threads));
        let mut dv = crate::TensorViewMut::with_strides(&mut buf, off, &shape, &strides)
            .map_err(|e| e.to_string())?;
        let got = segment::vjp_out(kind, gv, sv, iv, &o, &mut dv);
        match (want, got) {
            (Err(_), Err(_)) if bits(&buf) == before => {}
            (Ok(w), Ok(())) => {
                let v = TensorView::with_strides(&buf, off, &shape, &strides)
                    .map_err(|e| e.to_string())?
                    .to_tensor();
                if bits(v.as_slice()) != bits(w.0.as_slice()) {
                    return Err(format!(
                        "_out, {threads} threads: {}",
                        first_difference(w.0.as_slice(), v.as_slice())
                    ));
                }
            }
            (w, g) => {
                return Err(format!(
                    "_out, {threads} threads: oracle {:?}, engine {:?} (dst untouched: {})",
                    w.as_ref().map(|_| ()),
                    g,
                    bits(&buf) == before
                ));
            }
        }
    }
    Ok(())
}

fn check(form: Form, seed: u64) -> Result<(), TestCaseError> {
    let case = generate(seed, form);
    let r = match Rng::new(seed).below(4) {
        0 => run::<f64, i64>(&case, seed),
        1 => run::<f32, i32>(&case, seed),
        2 => run::<crate::half::f16, u8>(&case, seed),
        _ => run::<crate::half::bf16, i16>(&case, seed),
    };
    r.map_err(|m| TestCaseError::fail(format!("seed {seed}: {m}\ncase: {case:?}")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: super::prop::cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn segment_vjp_matches_oracle(seed in any::<u64>()) {
        check(Form::Scatter, seed)?;
        check(Form::Coo, seed)?;
        check(Form::Csr, seed)?;
    }
}

const COMPOSITES: [Composite; 5] = [
    Composite::Softmax,
    Composite::LogSoftmax,
    Composite::LogSumExp,
    Composite::Std { unbiased: true },
    Composite::Std { unbiased: false },
];

fn composite_engine<T: Float, I: crate::IndexInt>(
    what: Composite,
    grad: &TensorView<'_, T>,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    opts: &SegmentOptions,
) -> crate::Result<Tensor<T>> {
    match what {
        Composite::Softmax => segment::scatter_softmax_vjp(grad, src, index, opts),
        Composite::LogSoftmax => segment::scatter_log_softmax_vjp(grad, src, index, opts),
        Composite::LogSumExp => segment::scatter_logsumexp_vjp(grad, src, index, opts),
        Composite::Std { unbiased } => segment::scatter_std_vjp(grad, src, index, unbiased, opts),
    }
}

/// The composites' backward against the oracle on the scatter cases (their only form).
fn run_composites<T: Small + Float, I: SmallIndex + crate::IndexInt>(
    case: &Case,
    seed: u64,
) -> Result<(), String> {
    let laid = Laid::<T, I>::new(case);
    if laid.huge_output() {
        return Ok(());
    }
    let (sv, iv) = (laid.src_view()?, laid.index_view()?);
    let mut rng = Rng::new(seed ^ 0x5bd1_e995);
    for what in COMPOSITES {
        let gshape = match what {
            Composite::Softmax | Composite::LogSoftmax => sv.shape().to_vec(),
            _ => match oracle::composite(what, &sv, &iv, &case.opts) {
                Ok(v) => v.shape().to_vec(),
                Err(_) => vec![1],
            },
        };
        let gvals: Vec<T> = (0..gshape.iter().product::<usize>())
            .map(|_| T::small(rng.below(11) as i64 - 5))
            .collect();
        let (gb, go, gs) = embed(&gvals, &gshape, case.layouts[2], T::small(NAN));
        let gv = TensorView::with_strides(&gb, go, &gshape, &gs).map_err(|e| e.to_string())?;
        let want = oracle::composite_vjp(what, &gv, &sv, &iv, &case.opts);
        for threads in [1, 2, 4] {
            let o = case.opts.par(Par::threads_exact(threads));
            let got = composite_engine(what, &gv, &sv, &iv, &o);
            match (&want, &got) {
                (Err(_), Err(_)) => {}
                (Ok(w), Ok(g)) if bits(w.as_slice()) == bits(g.as_slice()) => {}
                (Ok(w), Ok(g)) => {
                    let d = first_difference(w.as_slice(), g.as_slice());
                    return Err(format!("{what:?}, {threads} threads: {d}"));
                }
                _ => return Err(format!("{what:?}, {threads} threads: one side failed")),
            }
        }
    }
    Ok(())
}

fn check_composites(seed: u64) -> Result<(), TestCaseError> {
    let case = generate(seed, Form::Scatter);
    let r = match Rng::new(seed).below(4) {
        0 => run_composites::<f64, i64>(&case, seed),
        1 => run_composites::<f32, i32>(&case, seed),
        2 => run_composites::<crate::half::f16, u8>(&case, seed),
        _ => run_composites::<crate::half::bf16, i16>(&case, seed),
    };
    r.map_err(|m| TestCaseError::fail(format!("seed {seed}: {m}\ncase: {case:?}")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: super::prop::cases() / 5, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn composite_vjp_matches_oracle(seed in any::<u64>()) {
        check_composites(seed)?;
    }
}

/// The composites' backward against central differences of `Σ w · composite(src)`.
#[test]
fn composite_vjp_matches_finite_differences() {
    let mut rng = Rng::new(11);
    for what in COMPOSITES {
        for _ in 0..6 {
            let (e, f, n) = (2 + rng.below(6) as usize, 1 + rng.below(3) as usize, 3usize);
            let vals: Vec<f64> = (0..e * f)
                .map(|_| rng.below(2000) as f64 / 500.0 - 2.0)
                .collect();
            let idx: Vec<i64> = (0..e).map(|_| rng.below(n as u64) as i64).collect();
            let opts = SegmentOptions::new().dim(0).dim_size(n);
            let iv = TensorView::new(&idx, &[e]).unwrap();
            let run = |src: &[f64]| {
                let sv = TensorView::new(src, &[e, f]).unwrap();
                oracle::composite(what, &sv, &iv, &opts).unwrap()
            };
            let gshape = run(&vals).shape().to_vec();
            let w: Vec<f64> = (0..gshape.iter().product::<usize>())
                .map(|_| rng.below(9) as f64 - 4.0 + 0.5)
                .collect();
            let loss = |src: &[f64]| -> f64 {
                // Empty logsumexp cells are −inf, constants: left out of the sum.
                let v = run(src);
                v.as_slice()
                    .iter()
                    .zip(&w)
                    .filter(|(a, _)| a.is_finite())
                    .map(|(a, b)| a * b)
                    .sum()
            };
            let sv = TensorView::new(&vals, &[e, f]).unwrap();
            let gv = TensorView::new(&w, &gshape).unwrap();
            let g = composite_engine(what, &gv, &sv, &iv, &opts).unwrap();
            let h = 1e-6;
            for (i, &x) in g.as_slice().iter().enumerate() {
                let (mut a, mut b) = (vals.clone(), vals.clone());
                a[i] += h;
                b[i] -= h;
                let d = (loss(&a) - loss(&b)) / (2.0 * h);
                // A one-element std cell has no derivative (its σ is 0): the backward gives 0.
                assert!(
                    (x - d).abs() <= 1e-5 * (1.0 + d.abs()),
                    "{what:?}: src[{i}] {x} vs {d}"
                );
            }
        }
    }
}

/// `loss = Σ w · forward(src, out)`: its derivatives by central differences against the
/// backward, for every reduction and form, on values far enough apart that min and max are
/// differentiable.
#[test]
fn segment_vjp_matches_finite_differences() {
    let mut rng = Rng::new(7);
    for case in 0..60 {
        let form = [Form::Scatter, Form::Coo, Form::Csr][case % 3];
        let red = [
            Reduction::Add,
            Reduction::Mean,
            Reduction::Mul,
            Reduction::Min,
            Reduction::Max,
        ][(case / 3) % 5];
        let with_out = case >= 30;
        let (e, f, n) = (2 + rng.below(6) as usize, 1 + rng.below(3) as usize, 3usize);
        // Distinct values (a permutation of 1..=e*f, scaled, signs mixed).
        let mut vals: Vec<f64> = (1..=e * f).map(|v| v as f64 * 0.37).collect();
        for i in (1..vals.len()).rev() {
            vals.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for v in vals.iter_mut() {
            if rng.chance(40) {
                *v = -*v;
            }
        }
        let mut idx: Vec<i64> = (0..e).map(|_| rng.below(n as u64) as i64).collect();
        let (index, ishape, opts) = match form {
            Form::Csr => {
                idx.sort_unstable();
                let mut ptr = vec![0i64; n + 1];
                idx.iter().for_each(|&v| ptr[v as usize + 1] += 1);
                (1..=n).for_each(|i| ptr[i] += ptr[i - 1]);
                (ptr, vec![n + 1], SegmentOptions::new().reduce(red))
            }
            Form::Coo => {
                idx.sort_unstable();
                (idx, vec![e], SegmentOptions::new().dim_size(n).reduce(red))
            }
            Form::Scatter => (
                idx,
                vec![e],
                SegmentOptions::new().dim(0).dim_size(n).reduce(red),
            ),
        };
        let out: Vec<f64> = (0..n * f).map(|i| 100.0 + i as f64 * 0.71).collect();
        let w: Vec<f64> = (0..n * f)
            .map(|_| rng.below(9) as f64 - 4.0 + 0.5)
            .collect();
        let iv = TensorView::new(&index, &ishape).unwrap();
        let loss = |src: &[f64], out: &[f64]| -> f64 {
            let sv = TensorView::new(src, &[e, f]).unwrap();
            let ov = TensorView::new(out, &[n, f]).unwrap();
            let (v, _) = oracle::reduce(form, &sv, &iv, with_out.then_some(&ov), &opts).unwrap();
            v.as_slice().iter().zip(&w).map(|(a, b)| a * b).sum()
        };
        let sv = TensorView::new(&vals, &[e, f]).unwrap();
        let ov = TensorView::new(&out, &[n, f]).unwrap();
        let gv = TensorView::new(&w, &[n, f]).unwrap();
        let (gs, go) = engine(form, &gv, &sv, &iv, with_out.then_some(&ov), &opts).unwrap();
        let h = 1e-5;
        let numeric = |buf: &[f64], i: usize, is_src: bool| {
            let (mut a, mut b) = (buf.to_vec(), buf.to_vec());
            a[i] += h;
            b[i] -= h;
            let (l1, l2) = if is_src {
                (loss(&a, &out), loss(&b, &out))
            } else {
                (loss(&vals, &a), loss(&vals, &b))
            };
            (l1 - l2) / (2.0 * h)
        };
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-6 * (1.0 + x.abs().max(y.abs()));
        for (i, &g) in gs.as_slice().iter().enumerate() {
            let d = numeric(&vals, i, true);
            assert!(
                close(g, d),
                "case {case} {form:?} {red:?}: src[{i}] {g} vs {d}"
            );
        }
        if with_out {
            for (i, &g) in go.unwrap().as_slice().iter().enumerate() {
                let d = numeric(&out, i, false);
                assert!(
                    close(g, d),
                    "case {case} {form:?} {red:?}: out[{i}] {g} vs {d}"
                );
            }
        }
    }
}

#[test]
fn segment_vjp_rules_on_ties_nan_and_zeros() {
    let index = [0i64, 0, 0, 1, 1, 1];
    let iv = TensorView::new(&index, &[6]).unwrap();
    let grad = [6.0f64, 12.0];
    let gv = TensorView::new(&grad, &[2]).unwrap();
    let max = SegmentOptions::new().reduce(Reduction::Max);
    let vjp = |src: &[f64], out: Option<&[f64]>, o: &SegmentOptions| {
        let sv = TensorView::new(src, &[6]).unwrap();
        let ov = out.map(|v| TensorView::new(v, &[2]).unwrap());
        let g = segment::scatter_vjp(&gv, &sv, &iv, ov.as_ref(), o).unwrap();
        (
            g.src.as_slice().to_vec(),
            g.out.map(|t| t.as_slice().to_vec()),
        )
    };
    // Two values reach each maximum; with out, out's 3 ties cell 0 too.
    let src = [3.0, 1.0, 3.0, f64::NAN, 2.0, f64::NAN];
    assert_eq!(vjp(&src, None, &max).0, [3.0, 0.0, 3.0, 6.0, 0.0, 6.0]);
    let (s, o) = vjp(&src, Some(&[3.0, 9.0]), &max);
    assert_eq!(
        (s, o.unwrap()),
        (vec![2.0, 0.0, 2.0, 6.0, 0.0, 6.0], vec![2.0, 0.0])
    );
    let first = max.ties(Ties::First);
    assert_eq!(vjp(&src, None, &first).0, [6.0, 0.0, 0.0, 12.0, 0.0, 0.0]);
    // With First, cell 0 kept out's value (the first among equals); NaN beat out's 9.
    let (s, o) = vjp(&src, Some(&[3.0, 9.0]), &first);
    assert_eq!(
        (s, o.unwrap()),
        (vec![0.0, 0.0, 0.0, 12.0, 0.0, 0.0], vec![6.0, 0.0])
    );
    // -0 and +0 are equal values: they tie.
    assert_eq!(
        vjp(&[-0.0, 0.0, -1.0, 1.0, 1.0, 1.0], None, &max).0,
        [3.0, 3.0, 0.0, 4.0, 4.0, 4.0]
    );
    // Mul with zeros, exact: one zero gets the product of the others; two zeros give 0 to all.
    let mul = SegmentOptions::new().reduce(Reduction::Mul);
    let (s, o) = vjp(&[2.0, 0.0, 5.0, 0.0, 3.0, 0.0], Some(&[7.0, 1.0]), &mul);
    assert_eq!(s, [0.0, 420.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(o.unwrap(), [0.0, 0.0]);
    // Mean counts out's value as one more element.
    let mean = SegmentOptions::new().reduce(Reduction::Mean);
    let (s, o) = vjp(&[1.0; 6], Some(&[0.0, 0.0]), &mean);
    assert_eq!(
        (s, o.unwrap()),
        (
            vec![1.5; 3].into_iter().chain([3.0; 3]).collect(),
            vec![1.5, 3.0]
        )
    );
}

#[test]
fn gather_vjps_are_segment_sums() {
    let src_grad = segment::gather_coo_vjp(
        &TensorView::new(&[1.0f32, 2.0, 4.0, 8.0], &[4]).unwrap(),
        &TensorView::new(&[2i64, 0, 2, 2], &[4]).unwrap(),
        3,
        &SegmentOptions::new(),
    )
    .unwrap();
    assert_eq!(src_grad.as_slice(), &[2.0, 0.0, 13.0]);
    // gather_csr's output has indptr's last value along dim (5 here); position 0 precedes
    // every segment and reads nothing.
    let src_grad = segment::gather_csr_vjp(
        &TensorView::new(&[100.0f32, 1.0, 2.0, 4.0, 8.0], &[5]).unwrap(),
        &TensorView::new(&[1i64, 3, 3, 5], &[4]).unwrap(),
        &SegmentOptions::new(),
    )
    .unwrap();
    assert_eq!(src_grad.as_slice(), &[3.0, 0.0, 12.0]);
    let bad = segment::gather_coo_vjp(
        &TensorView::new(&[1.0f32], &[1]).unwrap(),
        &TensorView::new(&[3i64], &[1]).unwrap(),
        3,
        &SegmentOptions::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        bad.contains("gather_coo_vjp") && bad.contains("index"),
        "{bad}"
    );
}

#[test]
#[ignore = "replays one seed: TS_SEED=<seed>"]
fn segment_vjp_replay_seed() {
    let seed: u64 = std::env::var("TS_SEED")
        .expect("TS_SEED")
        .parse()
        .expect("a u64");
    for form in [Form::Scatter, Form::Coo, Form::Csr] {
        eprintln!("{form:?}: {:?}", generate(seed, form));
        check(form, seed).unwrap();
    }
}
