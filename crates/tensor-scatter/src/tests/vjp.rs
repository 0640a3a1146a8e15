//! The backward passes of the scatters and gathers against their oracle
//! (`reference::*_vjp`), bit for bit: the forward property tests' cases (every reduction,
//! include_self, index policy, broken shapes and indices, padded and reversed views with
//! poisoned padding), the four float dtypes (any dtype for the gathers), both tie rules, 1, 2
//! and 4 threads. Then the scatter rules against central finite differences in f64, and the
//! tie, NaN, zero, skip and window rules on cases written out by hand.

use super::view_in;
use proptest::prelude::*;

use super::gather_prop::{self as gp, gathered_shape};
use super::prop::{NAN, Rng, Small, SmallIndex, bits, cases, embed, error_key, first_difference};
use crate::segment::{Float, Ties};
use crate::{
    DType, Element, GatherOptions, GatherOutOfRange, OutOfRange, Par, Reduction, ScatterGrads,
    ScatterOp, ScatterOptions, Tensor, TensorView, reference,
};

type Vjp<T, I> = fn(
    &TensorView<'_, T>,
    &TensorView<'_, T>,
    &TensorView<'_, I>,
    &TensorView<'_, T>,
    &ScatterOptions,
) -> crate::Result<ScatterGrads<T>>;

fn scatter_fns<T: Float, I: crate::IndexInt>(op: ScatterOp) -> (Vjp<T, I>, Vjp<T, I>) {
    match op {
        ScatterOp::Elements => (crate::scatter_elements_vjp, reference::scatter_elements_vjp),
        ScatterOp::Nd => (crate::scatter_nd_vjp, reference::scatter_nd_vjp),
        ScatterOp::Update => (crate::scatter_update_vjp, reference::scatter_update_vjp),
    }
}

fn same_bits<T: Element>(what: &str, want: &Tensor<T>, got: &Tensor<T>) -> Result<(), String> {
    if want.shape() != got.shape() || bits(want.as_slice()) != bits(got.as_slice()) {
        return Err(format!(
            "{what}: {}",
            first_difference(want.as_slice(), got.as_slice())
        ));
    }
    Ok(())
}

/// Both errors with one key, or both results with the same bits.
fn agree<T: Element, R>(
    want: &crate::Result<R>,
    got: &crate::Result<R>,
    tensors: impl Fn(&R) -> Vec<(&'static str, &Tensor<T>)>,
) -> Result<(), String> {
    match (want, got) {
        (Err(a), Err(b)) if error_key(a) == error_key(b) => Ok(()),
        (Ok(a), Ok(b)) => tensors(a)
            .into_iter()
            .zip(tensors(b))
            .try_for_each(|((what, x), (_, y))| same_bits(what, x, y)),
        (a, b) => Err(format!(
            "reference {:?}, engine {:?}",
            a.as_ref().err(),
            b.as_ref().err()
        )),
    }
}

fn scatter_typed<T: Small + Float, I: SmallIndex>(
    case: &super::prop::Case,
    seed: u64,
) -> Result<(), String> {
    let poison = T::small(NAN);
    let laid = |v: &[i64], shape: &[usize], kind: u8| {
        embed(
            &v.iter().map(|&x| T::small(x)).collect::<Vec<_>>(),
            shape,
            kind,
            poison,
        )
    };
    let idx: Vec<I> = case.indices.iter().map(|&v| I::wrap(v)).collect();
    let (db, doff, ds) = laid(&case.data, &case.data_shape, case.layouts[0]);
    let (ub, uoff, us) = laid(&case.updates, &case.updates_shape, case.layouts[2]);
    let (ib, ioff, is) = embed(&idx, &case.indices_shape, case.layouts[1], I::wrap(0));
    let mut rng = Rng::new(seed);
    let gvals: Vec<i64> = (0..case.data.len())
        .map(|_| rng.below(11) as i64 - 5)
        .collect();
    let (gb, goff, gs) = laid(&gvals, &case.data_shape, case.layouts[1]);
    let k = case.layouts;
    let err = |e: crate::Error| e.to_string();
    let dv = view_in(&db, doff, &case.data_shape, &ds, k[0]).map_err(err)?;
    let uv = view_in(&ub, uoff, &case.updates_shape, &us, k[2]).map_err(err)?;
    let gv = view_in(&gb, goff, &case.data_shape, &gs, k[1]).map_err(err)?;
    let iv = view_in(&ib, ioff, &case.indices_shape, &is, k[1]).map_err(err)?;
    let ties = rng.pick(&[Ties::Split, Ties::First]);
    let (engine, oracle) = scatter_fns::<T, I>(case.op);
    let opts = case.opts.ties(ties);
    let want = oracle(&gv, &dv, &iv, &uv, &opts);
    for threads in [1, 2, 4] {
        let got = engine(&gv, &dv, &iv, &uv, &opts.par(Par::threads_exact(threads)));
        agree(&want, &got, |g| {
            vec![("data", &g.data), ("updates", &g.updates)]
        })
        .map_err(|e| format!("{threads} thread(s), {ties:?}: {e}"))?;
    }
    Ok(())
}

fn check_scatter(op: ScatterOp, seed: u64) -> Result<(), TestCaseError> {
    let case = super::prop::generate(seed, op);
    let run = match (seed % 4, case.index_dtype) {
        (0, DType::I64) => scatter_typed::<f64, i64>,
        (0, _) => scatter_typed::<f64, u8>,
        (1, DType::I32) => scatter_typed::<f32, i32>,
        (1, _) => scatter_typed::<f32, i64>,
        (2, _) => scatter_typed::<crate::half::f16, i16>,
        _ => scatter_typed::<crate::half::bf16, u32>,
    };
    run(&case, seed)
        .map_err(|msg| TestCaseError::fail(format!("seed {seed}: {msg}\ncase: {case:?}")))
}

fn gather_typed<T: Small, I: SmallIndex>(case: &gp::Case, seed: u64) -> Result<(), String> {
    type F<T, I> = fn(
        &TensorView<'_, T>,
        &TensorView<'_, I>,
        &[usize],
        &GatherOptions<T>,
    ) -> crate::Result<Tensor<T>>;
    let (engine, oracle): (F<T, I>, F<T, I>) = match case.op {
        gp::Op::Gather => (crate::gather_vjp, reference::gather_vjp),
        gp::Op::Elements => (crate::gather_elements_vjp, reference::gather_elements_vjp),
        gp::Op::Nd => (crate::gather_nd_vjp, reference::gather_nd_vjp),
    };
    let idx: Vec<I> = case.indices.iter().map(|&v| I::wrap(v)).collect();
    let (ib, ioff, is) = embed(&idx, &case.indices_shape, case.layouts[1], I::wrap(0));
    let iv =
        TensorView::with_strides(&ib, ioff, &case.indices_shape, &is).map_err(|e| e.to_string())?;
    // The gradient has the output's shape (any shape when the forward fails).
    let gshape = gathered_shape(case).unwrap_or(vec![2]);
    let mut rng = Rng::new(seed);
    let n: usize = gshape.iter().product();
    if n > 1 << 16 {
        return Ok(());
    }
    let gvals: Vec<T> = (0..n).map(|_| T::small(rng.below(11) as i64 - 5)).collect();
    let (gb, goff, gs) = embed(&gvals, &gshape, case.layouts[2] % 3, T::small(NAN));
    let gv = TensorView::with_strides(&gb, goff, &gshape, &gs).map_err(|e| e.to_string())?;
    let opts = case.opts.with_fill(T::small(case.opts.fill_value));
    let want = oracle(&gv, &iv, &case.data_shape, &opts);
    for threads in [1, 2, 4] {
        let o = opts.par(Par::threads_exact(threads));
        let got = engine(&gv, &iv, &case.data_shape, &o);
        agree(&want, &got, |g| vec![("data", g)])
            .map_err(|e| format!("{threads} thread(s): {e}"))?;
    }
    Ok(())
}

fn check_gather(op: gp::Op, seed: u64) -> Result<(), TestCaseError> {
    let case = gp::generate(seed, op);
    let run = match seed % 4 {
        0 => gather_typed::<f64, i64>,
        1 => gather_typed::<f32, i32>,
        2 => gather_typed::<crate::half::f16, u16>,
        _ => gather_typed::<i32, i8>,
    };
    run(&case, seed)
        .map_err(|msg| TestCaseError::fail(format!("seed {seed}: {msg}\ncase: {case:?}")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases() / 5, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn scatter_elements_vjp_matches_oracle(seed in any::<u64>()) {
        check_scatter(ScatterOp::Elements, seed)?;
    }
    #[test]
    fn scatter_nd_vjp_matches_oracle(seed in any::<u64>()) {
        check_scatter(ScatterOp::Nd, seed)?;
    }
    #[test]
    fn scatter_update_vjp_matches_oracle(seed in any::<u64>()) {
        check_scatter(ScatterOp::Update, seed)?;
    }
    #[test]
    fn gather_vjp_matches_oracle(seed in any::<u64>()) {
        check_gather(gp::Op::Gather, seed)?;
    }
    #[test]
    fn gather_elements_vjp_matches_oracle(seed in any::<u64>()) {
        check_gather(gp::Op::Elements, seed)?;
    }
    #[test]
    fn gather_nd_vjp_matches_oracle(seed in any::<u64>()) {
        check_gather(gp::Op::Nd, seed)?;
    }
}

/// A small problem of each scatter with duplicates: (data shape, indices, indices shape,
/// updates shape, axis).
fn problem(op: ScatterOp, rng: &mut Rng) -> (Vec<usize>, Vec<i64>, Vec<usize>, Vec<usize>, i64) {
    let mut idx = |n: usize, size: u64| (0..n).map(|_| rng.below(size) as i64).collect();
    match op {
        ScatterOp::Elements => (vec![3, 4], idx(8, 3), vec![2, 4], vec![2, 4], 0),
        ScatterOp::Nd => (vec![4, 3], idx(5, 4), vec![5, 1], vec![5, 3], 0),
        ScatterOp::Update => (vec![2, 3, 2], idx(5, 3), vec![5], vec![2, 5, 2], 1),
    }
}

/// The engine's gradients against central differences of `sum(w · scatter(data, updates))`
/// in f64, for every scatter, reduction and include_self, on random values far from ties.
#[test]
fn scatter_vjp_matches_finite_differences() {
    let mut rng = Rng::new(7);
    for op in [ScatterOp::Elements, ScatterOp::Nd, ScatterOp::Update] {
        for r in Reduction::ALL {
            for include_self in [true, false] {
                let (ds, idx, is, us, axis) = problem(op, &mut rng);
                let mut value = |_| 0.5 + rng.below(1 << 20) as f64 / (1u64 << 20) as f64;
                let data: Vec<f64> = (0..ds.iter().product()).map(&mut value).collect();
                let upd: Vec<f64> = (0..us.iter().product()).map(&mut value).collect();
                let w: Vec<f64> = (0..data.len()).map(&mut value).collect();
                let opts = ScatterOptions::new()
                    .axis(axis)
                    .reduction(r)
                    .include_self(include_self);
                let iv = TensorView::new(&idx, &is).unwrap();
                let forward = |d: &[f64], u: &[f64]| -> f64 {
                    let dv = TensorView::new(d, &ds).unwrap();
                    let uv = TensorView::new(u, &us).unwrap();
                    let out = match op {
                        ScatterOp::Elements => crate::scatter_elements(&dv, &iv, &uv, &opts),
                        ScatterOp::Nd => crate::scatter_nd(&dv, &iv, &uv, &opts),
                        ScatterOp::Update => crate::scatter_update(&dv, &iv, &uv, &opts),
                    };
                    out.unwrap()
                        .as_slice()
                        .iter()
                        .zip(&w)
                        .map(|(o, w)| o * w)
                        .sum()
                };
                let (engine, _) = scatter_fns::<f64, i64>(op);
                let g = engine(
                    &TensorView::new(&w, &ds).unwrap(),
                    &TensorView::new(&data, &ds).unwrap(),
                    &iv,
                    &TensorView::new(&upd, &us).unwrap(),
                    &opts,
                )
                .unwrap();
                let h = 1e-6;
                let numeric = |which: usize, i: usize| {
                    let (mut d, mut u) = (data.clone(), upd.clone());
                    let x = if which == 0 { &mut d[i] } else { &mut u[i] };
                    *x += h;
                    let up = forward(&d, &u);
                    let x = if which == 0 { &mut d[i] } else { &mut u[i] };
                    *x -= 2.0 * h;
                    (up - forward(&d, &u)) / (2.0 * h)
                };
                let analytic = [g.data.as_slice(), g.updates.as_slice()];
                for (which, a) in analytic.iter().enumerate() {
                    for (i, &x) in a.iter().enumerate() {
                        let n = numeric(which, i);
                        assert!(
                            (n - x).abs() < 1e-5,
                            "{op:?} {r:?} include_self {include_self}: d/d{}[{i}] numeric {n}, vjp {x}",
                            ["data", "updates"][which]
                        );
                    }
                }
            }
        }
    }
}

fn elements(
    data: &[f32],
    idx: &[i64],
    upd: &[f32],
    grad: &[f32],
    opts: ScatterOptions,
) -> (Vec<f32>, Vec<f32>) {
    let g = crate::scatter_elements_vjp(
        &TensorView::new(grad, &[grad.len()]).unwrap(),
        &TensorView::new(data, &[data.len()]).unwrap(),
        &TensorView::new(idx, &[idx.len()]).unwrap(),
        &TensorView::new(upd, &[upd.len()]).unwrap(),
        &opts,
    )
    .unwrap();
    (g.data.as_slice().to_vec(), g.updates.as_slice().to_vec())
}

#[test]
fn scatter_vjp_hand_cases() {
    let max = ScatterOptions::new().reduction(Reduction::Max);
    // Data ties with two updates: three ways; with First, data (the fold's first) takes all.
    let (gd, gu) = elements(&[5.0, 1.0], &[0, 0, 1], &[5.0, 5.0, 0.0], &[6.0, 2.0], max);
    assert_eq!((gd, gu), (vec![2.0, 2.0], vec![2.0, 2.0, 0.0]));
    let first = max.ties(Ties::First);
    let (gd, gu) = elements(
        &[5.0, 1.0],
        &[0, 0, 1],
        &[5.0, 5.0, 0.0],
        &[6.0, 2.0],
        first,
    );
    assert_eq!((gd, gu), (vec![6.0, 2.0], vec![0.0, 0.0, 0.0]));
    // Without include_self the first tied update takes it; data gets nothing where targeted.
    let (gd, gu) = elements(
        &[9.0],
        &[0, 0],
        &[4.0, 4.0],
        &[6.0],
        first.include_self(false),
    );
    assert_eq!((gd, gu), (vec![0.0], vec![6.0, 0.0]));
    // A NaN wins the max and takes the gradient.
    let (gd, gu) = elements(&[1.0], &[0, 0], &[f32::NAN, 3.0], &[4.0], max);
    assert_eq!((gd, gu), (vec![0.0], vec![4.0, 0.0]));
    // Mul with zeros: no division (each zero's gradient is the product of the others).
    let mul = ScatterOptions::new().reduction(Reduction::Mul);
    let (gd, gu) = elements(&[2.0], &[0, 0, 0], &[0.0, 3.0, 0.0], &[1.0], mul);
    assert_eq!((gd, gu), (vec![0.0], vec![0.0, 0.0, 0.0]));
    let (gd, gu) = elements(&[2.0], &[0, 0], &[0.0, 3.0], &[1.0], mul);
    assert_eq!((gd, gu), (vec![0.0], vec![6.0, 0.0]));
    // None: the last write wins; the overwritten cell and the earlier update get nothing.
    let none = ScatterOptions::new();
    let (gd, gu) = elements(&[1.0, 1.0], &[1, 1], &[2.0, 3.0], &[5.0, 7.0], none);
    assert_eq!((gd, gu), (vec![5.0, 0.0], vec![0.0, 7.0]));
    // Mean counts data with include_self; sub negates.
    let mean = ScatterOptions::new().reduction(Reduction::Mean);
    let (gd, gu) = elements(&[1.0], &[0, 0, 0], &[1.0; 3], &[8.0], mean);
    assert_eq!((gd, gu), (vec![2.0], vec![2.0; 3]));
    let (gd, gu) = elements(&[1.0], &[0, 0], &[1.0; 2], &[8.0], mean.include_self(false));
    assert_eq!((gd, gu), (vec![0.0], vec![4.0; 2]));
    let sub = ScatterOptions::new().reduction(Reduction::Sub);
    assert_eq!(elements(&[1.0], &[0], &[1.0], &[3.0], sub).1, vec![-3.0]);
    // A skipped index sends nothing; the cell passes its gradient through.
    let skip = ScatterOptions::new()
        .reduction(Reduction::Add)
        .include_self(false)
        .out_of_range(OutOfRange::Skip);
    let (gd, gu) = elements(&[1.0, 1.0], &[1, 9], &[2.0, 3.0], &[5.0, 7.0], skip);
    assert_eq!((gd, gu), (vec![5.0, 0.0], vec![7.0, 0.0]));
    // PyTorch's src window: elements outside it get 0.
    let g = crate::scatter_elements_vjp(
        &TensorView::new(&[1.0f32, 2.0, 3.0], &[3]).unwrap(),
        &TensorView::new(&[0.0f32; 3], &[3]).unwrap(),
        &TensorView::new(&[2i64, 0], &[2]).unwrap(),
        &TensorView::new(&[1.0f32, 2.0, 3.0], &[3]).unwrap(),
        &ScatterOptions::new().updates_window(true),
    )
    .unwrap();
    assert_eq!(g.updates.as_slice(), &[3.0, 1.0, 0.0]);
    assert_eq!(g.data.as_slice(), &[0.0, 2.0, 0.0]);
    // A grad of the wrong shape is an error naming it and the backward.
    let e = crate::scatter_elements_vjp(
        &TensorView::new(&[1.0f32], &[1]).unwrap(),
        &TensorView::new(&[0.0f32; 3], &[3]).unwrap(),
        &TensorView::new(&[2i64, 0], &[2]).unwrap(),
        &TensorView::new(&[1.0f32, 2.0], &[2]).unwrap(),
        &ScatterOptions::new(),
    )
    .unwrap_err();
    assert_eq!((e.op(), e.arg()), ("scatter_elements_vjp", "grad"));
}

#[test]
fn gather_vjp_hand_cases() {
    // A clamped index sends its gradient to the cell it read; a filled one sends none.
    let idx = TensorView::new(&[-1i64, 5, 1], &[3]).unwrap();
    let grad = TensorView::new(&[1.0f64, 2.0, 4.0], &[3]).unwrap();
    let clamp = GatherOptions::new()
        .negative(crate::NegativeIndices::Error)
        .out_of_range(GatherOutOfRange::Clamp);
    let e = crate::gather_vjp(&grad, &idx, &[3], &clamp).unwrap_err();
    assert_eq!(e.op(), "gather_vjp");
    let wrap = clamp.negative(crate::NegativeIndices::Wrap);
    assert_eq!(
        crate::gather_vjp(&grad, &idx, &[3], &wrap)
            .unwrap()
            .as_slice(),
        &[0.0, 4.0, 3.0]
    );
    let fill = wrap.out_of_range(GatherOutOfRange::Fill);
    assert_eq!(
        crate::gather_vjp(&grad, &idx, &[3], &fill)
            .unwrap()
            .as_slice(),
        &[0.0, 4.0, 1.0]
    );
    // Batch dims: row b of the output reads row b of data.
    let idx = TensorView::new(&[1i64, 1, 0, 1], &[2, 2]).unwrap();
    let grad = TensorView::new(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let o = GatherOptions::new().axis(1).batch_dims(1);
    let g = crate::gather_vjp(&grad, &idx, &[2, 2], &o).unwrap();
    assert_eq!(g.as_slice(), &[0.0, 3.0, 3.0, 4.0]);
}
