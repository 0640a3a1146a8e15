//! Differential property tests for the gathers: the engine against the reference oracle, bit
//! for bit, over random shapes (ranks 0–5, zero dims), axes, batch dims, every dtype and
//! index dtype, every index policy (fill values included), 1, 2 and 4 threads at every instruction-set level the CPU has (`isa`), and contiguous,
//! padded and reversed views (inputs and caller-provided outputs) with poisoned padding.
//! Plus the round-trip laws between each gather and its scatter.

use super::{constant_after, index_in, rows_layout, view_in, view_mut_in};
use proptest::prelude::*;

use super::prop::{
    INDEX_DTYPES, NAN, NEG_INF, Rng, Small, SmallIndex, bits, cases, dims, embed, error_key,
    first_difference, index_value, run_test_pair, test_pair,
};
use crate::dynamic::with_dtype;
use crate::isa::{Isa, with_isa};
use crate::{
    DType, GatherOptions, GatherOutOfRange, NegativeIndices, Par, ScatterOptions, Tensor,
    TensorView, TensorViewMut, reference,
};

/// The three gathers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Gather,
    Elements,
    Nd,
}

#[derive(Clone, Debug)]
pub(super) struct Case {
    pub(super) op: Op,
    pub(super) data_shape: Vec<usize>,
    pub(super) indices_shape: Vec<usize>,
    pub(super) data: Vec<i64>,
    pub(super) indices: Vec<i128>,
    pub(super) opts: GatherOptions<i64>,
    pub(super) dtype: DType,
    pub(super) index_dtype: DType,
    /// Layouts of data, indices and output (0 contiguous, 1 padded, 2 padded + reversed; 3:
    /// data broadcast along dim 0, indices along the dims after the axis, `index_in`).
    pub(super) layouts: [u8; 3],
}

pub(super) fn generate(seed: u64, op: Op) -> Case {
    let mut rng = Rng::new(seed);
    let rank = rng.below(6) as usize;
    let d = dims(&mut rng, rank, 6);
    let axis_raw = rng.below(2 * rank as u64 + 2) as i64 - rank as i64 - 1;
    let axis = if rng.chance(90) && rank > 0 {
        axis_raw.clamp(-(rank as i64), rank as i64 - 1)
    } else {
        axis_raw
    };
    let norm = if axis < 0 { axis + rank as i64 } else { axis };
    let axis_ok = rank > 0 && (0..rank as i64).contains(&norm);
    let a = norm.max(0) as usize;
    let rows = op == Op::Elements && axis_ok && rng.chance(25);
    let (mut q, batch_dims, comp_sizes) = match op {
        Op::Gather => {
            let b = if axis_ok && rng.chance(40) {
                rng.below(a as u64 + 1) as usize
            } else {
                0
            };
            let extra = rng.below(3) as usize;
            let q = [d[..b].to_vec(), dims(&mut rng, extra, 4)].concat();
            let bd = match rng.below(20) {
                0 => b as i64 - q.len() as i64 - 1, // below -q or a wrong batch count
                1 => b as i64 + 1,
                2 if b > 0 => b as i64 - q.len() as i64, // the same count, as a negative
                _ => b as i64,
            };
            (q, bd, vec![d.get(a).copied().unwrap_or(0)])
        }
        Op::Elements => {
            let full = rows || rng.chance(50);
            let q = (0..rank)
                .map(|x| {
                    if axis_ok && x == a {
                        rng.below(8) as usize
                    } else if full {
                        d[x]
                    } else {
                        rng.below(d[x] as u64 + 1) as usize
                    }
                })
                .collect();
            (q, 0, vec![d.get(a).copied().unwrap_or(0)])
        }
        Op::Nd => {
            let b = if rank > 0 && rng.chance(35) {
                rng.below(rank.min(2) as u64 + 1) as usize
            } else {
                0
            };
            let b = b.min(rank);
            let k = rng.below((rank - b) as u64 + 1) as usize;
            let tuple_rank = rng.below(3) as usize;
            let q = [d[..b].to_vec(), dims(&mut rng, tuple_rank, 4), vec![k]].concat();
            let bd = if rng.chance(5) { -1 } else { b as i64 };
            (q, bd, d[b..b + k].to_vec())
        }
    };
    if rng.chance(4) {
        if q.is_empty() || rng.chance(30) {
            q.push(1);
        } else {
            let i = rng.below(q.len() as u64) as usize;
            q[i] += 1;
        }
    }
    let n_idx: usize = q.iter().product();
    let hot = rng.below(8) as usize;
    let clean = rng.chance(50);
    let mut indices: Vec<i128> = (0..n_idx)
        .map(|i| {
            let size = comp_sizes
                .get(i % comp_sizes.len().max(1))
                .copied()
                .unwrap_or(0);
            index_value(&mut rng, size, hot, clean)
        })
        .collect();
    constant_after(rows, &mut indices, &q, a);
    let dtype = rng.pick(&DType::ALL);
    let specials = dtype.is_float() && rng.chance(30);
    let data = (0..d.iter().product::<usize>())
        .map(|_| {
            if specials && rng.chance(15) {
                rng.pick(&[NAN, NEG_INF, 1003])
            } else {
                rng.below(41) as i64 - 20
            }
        })
        .collect();
    let opts = GatherOptions::new()
        .axis(axis)
        .batch_dims(batch_dims)
        .negative(rng.pick(&[
            NegativeIndices::Wrap,
            NegativeIndices::Wrap,
            NegativeIndices::Error,
        ]))
        .out_of_range(rng.pick(&[
            GatherOutOfRange::Error,
            GatherOutOfRange::Error,
            GatherOutOfRange::Clamp,
            GatherOutOfRange::Fill,
        ]))
        .fill_value(rng.pick(&[0, -7, 13, NAN]));
    Case {
        op,
        data_shape: d,
        indices_shape: q,
        data,
        indices,
        opts,
        dtype,
        index_dtype: rng.pick(&INDEX_DTYPES),
        layouts: rows_layout(
            if rng.chance(40) {
                [0; 3]
            } else {
                [rng.below(4) as u8, rng.below(3) as u8, rng.below(3) as u8]
            },
            rows,
            &mut rng,
        ),
    }
}

type Alloc<T, I> =
    fn(&TensorView<'_, T>, &TensorView<'_, I>, &GatherOptions<T>) -> crate::Result<Tensor<T>>;
type Into<T, I> = fn(
    &TensorView<'_, T>,
    &TensorView<'_, I>,
    &mut TensorViewMut<'_, T>,
    &GatherOptions<T>,
) -> crate::Result<()>;

fn fns<T: Small, I: SmallIndex>(op: Op) -> (Alloc<T, I>, Alloc<T, I>, Into<T, I>) {
    match op {
        Op::Gather => (
            crate::gather::<T, I>,
            reference::gather::<T, I>,
            crate::gather_out::<T, I>,
        ),
        Op::Elements => (
            crate::gather_elements::<T, I>,
            reference::gather_elements::<T, I>,
            crate::gather_elements_out::<T, I>,
        ),
        Op::Nd => (
            crate::gather_nd::<T, I>,
            reference::gather_nd::<T, I>,
            crate::gather_nd_out::<T, I>,
        ),
    }
}

fn run_typed<T: Small, I: SmallIndex>(case: &Case) -> Result<(), String> {
    let mut data: Vec<T> = case.data.iter().map(|&v| T::small(v)).collect();
    let idx: Vec<I> = case.indices.iter().map(|&v| I::wrap(v)).collect();
    let poison = T::small(NAN);
    let broadcast = case.layouts[0] == 3 && !case.data_shape.is_empty() && !data.is_empty();
    let (db, doff, ds) = if broadcast {
        // Every row along dim 0 is the first: one row in the buffer, stride 0.
        let row = data.len() / case.data_shape[0];
        let first = data[..row].to_vec();
        data = first.iter().copied().cycle().take(data.len()).collect();
        let (b, o, mut s) = embed(
            &first,
            &[1].into_iter()
                .chain(case.data_shape[1..].iter().copied())
                .collect::<Vec<_>>(),
            1,
            poison,
        );
        s[0] = 0;
        (b, o, s)
    } else {
        embed(&data, &case.data_shape, case.layouts[0] % 3, poison)
    };
    let at = (case.opts.axis, &case.data_shape[..]);
    let (ib, ioff, is) = index_in(&idx, &case.indices_shape, case.layouts[1], at, I::wrap(0));
    let dv =
        view_in(&db, doff, &case.data_shape, &ds, case.layouts[0]).map_err(|e| e.to_string())?;
    let iv = view_in(&ib, ioff, &case.indices_shape, &is, case.layouts[1] % 3)
        .map_err(|e| e.to_string())?;
    let dv_contig = TensorView::new(&data, &case.data_shape).map_err(|e| e.to_string())?;
    let (engine, oracle, into) = fns::<T, I>(case.op);
    let base = case.opts.with_fill(T::small(case.opts.fill_value));
    let expected = oracle(&dv_contig, &iv, &base);
    // Every thread count at every instruction-set level this CPU has (a level that the CPU
    // lacks cannot be forced; a CI machine without AVX-512 checks the others).
    let levels = Isa::supported();
    for (threads, isa) in [1, 2, 4]
        .into_iter()
        .flat_map(|t| levels.iter().map(move |&i| (t, i)))
    {
        let opts = base.par(Par::threads_exact(threads));
        let run = || {
            check_threads(
                &dv, &iv, &expected, &opts, threads, case, poison, engine, into,
            )
        };
        with_isa(isa, run)
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("{e} ({isa:?})"))?;
    }
    // A failing call leaves a caller-provided output untouched.
    if let Err(err) = &expected
        && err.is_index_out_of_range() | err.is_negative_index()
        && let Ok(shape) = gathered_shape(case)
    {
        let mut ob = vec![T::small(7); shape.iter().product()];
        let before = bits(&ob);
        let mut out = TensorViewMut::new(&mut ob, &shape).map_err(|e| e.to_string())?;
        let r = into(&dv, &iv, &mut out, &base);
        if r.as_ref().err().map(error_key) != Some(error_key(err)) {
            return Err(format!("into: expected {err}, got {r:?}"));
        }
        if before != bits(&ob) {
            return Err("into: output changed although the call failed".into());
        }
    }
    Ok(())
}

/// The output shape of a case whose shape rules hold.
pub(super) fn gathered_shape(case: &Case) -> Result<Vec<usize>, ()> {
    let (d, q) = (&case.data_shape, &case.indices_shape);
    let r = d.len() as i64;
    let a = if case.opts.axis < 0 {
        case.opts.axis + r
    } else {
        case.opts.axis
    };
    Ok(match case.op {
        Op::Elements => q.clone(),
        Op::Gather => {
            let b = case.opts.batch_dims
                + if case.opts.batch_dims < 0 {
                    q.len() as i64
                } else {
                    0
                };
            if !(0..r).contains(&a) || !(0..=q.len() as i64).contains(&b) {
                return Err(());
            }
            let (a, b) = (a as usize, b as usize);
            [&d[..a], &q[b..], &d[a + 1..]].concat()
        }
        Op::Nd => {
            let (&k, t) = q.split_last().ok_or(())?;
            let b = case.opts.batch_dims.max(0) as usize;
            if b + k > d.len() {
                return Err(());
            }
            [t, &d[b + k..]].concat()
        }
    })
}

fn check_case(case: &Case) -> Result<(), String> {
    let (dtype, index_dtype) = test_pair(case.dtype, case.index_dtype);
    let mut case = case.clone();
    case.dtype = dtype;
    case.index_dtype = index_dtype;
    run_test_pair!(dtype, index_dtype, run_typed, &case)
}

fn check_seed(op: Op, seed: u64) -> Result<(), TestCaseError> {
    let case = generate(seed, op);
    check_case(&case).map_err(|m| TestCaseError::fail(format!("seed {seed}: {m}\ncase: {case:?}")))
}

// ---------------------------------------------------------------------------------------
// Round-trip laws, for each gather and its scatter (batch_dims 0, the policy's defaults):
//   unique indices:  gather(scatter(zeros, idx, u), idx) == u
//   any indices:     scatter(x, idx, gather(x, idx)) == x

/// A law case: shapes with valid indices (unique targets when `unique`), values for `x`/`u`.
struct LawCase {
    data_shape: Vec<usize>,
    indices_shape: Vec<usize>,
    indices: Vec<i64>,
    axis: i64,
    values: Vec<i64>,
}

fn law_case(seed: u64, op: Op, unique: bool) -> LawCase {
    let mut rng = Rng::new(seed);
    let rank = 1 + rng.below(4) as usize;
    let d: Vec<usize> = (0..rank).map(|_| 1 + rng.below(5) as usize).collect();
    let a = rng.below(rank as u64) as usize;
    // A permutation of 0..n for unique choices.
    let perm = |rng: &mut Rng, n: usize| {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            p.swap(i, rng.below(i as u64 + 1) as usize);
        }
        p
    };
    // Half the valid indices are written negatively (they wrap to the same target).
    let signed = |rng: &mut Rng, p: usize, n: usize| {
        if rng.chance(50) {
            p as i64 - n as i64
        } else {
            p as i64
        }
    };
    let (q, indices) = match op {
        Op::Gather => {
            let n = d[a];
            let count = if unique {
                rng.below(n as u64 + 1) as usize
            } else {
                rng.below(7) as usize
            };
            let p = perm(&mut rng, n);
            let q = if count == 1 && rng.chance(30) {
                vec![]
            } else {
                vec![count]
            };
            let idx = (0..count.max(usize::from(q.is_empty())))
                .map(|i| {
                    let v = if unique {
                        p[i]
                    } else {
                        rng.below(n as u64) as usize
                    };
                    signed(&mut rng, v, n)
                })
                .collect();
            (q, idx)
        }
        Op::Elements => {
            let n = d[a];
            let mut q = d.clone();
            q[a] = if unique {
                rng.below(n as u64 + 1) as usize
            } else {
                rng.below(7) as usize
            };
            let p = perm(&mut rng, n);
            let mut idx = vec![];
            let mut c = vec![0usize; rank];
            for _ in 0..q.iter().product::<usize>() {
                let shift: usize = (0..rank).filter(|&x| x != a).map(|x| c[x]).sum();
                let v = if unique {
                    (p[c[a]] + shift) % n
                } else {
                    rng.below(n as u64) as usize
                };
                idx.push(signed(&mut rng, v, n));
                for x in (0..rank).rev() {
                    c[x] += 1;
                    if c[x] < q[x] {
                        break;
                    }
                    c[x] = 0;
                }
            }
            (q, idx)
        }
        Op::Nd => {
            let k = rng.below(rank as u64 + 1) as usize;
            let space: usize = d[..k].iter().product();
            let count = if unique {
                rng.below(space as u64 + 1) as usize
            } else {
                rng.below(7) as usize
            };
            let p = perm(&mut rng, space);
            let mut idx = vec![];
            for &pick in p.iter().cycle().take(count) {
                let mut flat = if unique {
                    pick
                } else {
                    rng.below(space as u64) as usize
                };
                let mut tuple = vec![0; k];
                for j in (0..k).rev() {
                    tuple[j] = flat % d[j];
                    flat /= d[j];
                }
                for (j, &t) in tuple.iter().enumerate() {
                    idx.push(signed(&mut rng, t, d[j]));
                }
            }
            (vec![count, k], idx)
        }
    };
    let n_values = match op {
        Op::Gather => [&d[..a], &q[..], &d[a + 1..]].concat().iter().product(),
        Op::Elements => q.iter().product(),
        Op::Nd => q[0] * d[q[1]..].iter().product::<usize>(),
    };
    let n_values = if unique { n_values } else { d.iter().product() };
    LawCase {
        values: (0..n_values).map(|_| rng.below(200) as i64 - 100).collect(),
        data_shape: d,
        indices_shape: q,
        indices,
        axis: a as i64 - if rng.chance(30) { rank as i64 } else { 0 },
    }
}

fn scatter_of<T: Small>(
    op: Op,
    data: &TensorView<'_, T>,
    idx: &TensorView<'_, i64>,
    upd: &TensorView<'_, T>,
    axis: i64,
) -> crate::Result<Tensor<T>> {
    let o = ScatterOptions::new().axis(axis);
    match op {
        Op::Gather => crate::scatter_update(data, idx, upd, &o),
        Op::Elements => crate::scatter_elements(data, idx, upd, &o),
        Op::Nd => crate::scatter_nd(data, idx, upd, &o),
    }
}

fn laws_typed<T: Small>(seed: u64, op: Op) -> Result<(), String> {
    let (gather, _, _) = fns::<T, i64>(op);
    // gather(scatter(zeros, idx, u), idx) == u
    let c = law_case(seed, op, true);
    let opts = GatherOptions::new().axis(c.axis);
    let zeros = vec![T::small(0); c.data_shape.iter().product()];
    let iv = TensorView::new(&c.indices, &c.indices_shape).map_err(|e| e.to_string())?;
    let u: Vec<T> = c.values.iter().map(|&v| T::small(v)).collect();
    let g0 = gather(&TensorView::new(&zeros, &c.data_shape).unwrap(), &iv, &opts)
        .map_err(|e| format!("gather of zeros: {e}"))?;
    let uv = TensorView::new(&u, g0.shape()).map_err(|e| e.to_string())?;
    let s = scatter_of(
        op,
        &TensorView::new(&zeros, &c.data_shape).unwrap(),
        &iv,
        &uv,
        c.axis,
    )
    .map_err(|e| format!("scatter: {e}"))?;
    let back = gather(&s.view(), &iv, &opts).map_err(|e| format!("gather: {e}"))?;
    if bits(back.as_slice()) != bits(&u) {
        return Err(format!(
            "gather(scatter(0, i, u), i) != u: {}",
            first_difference(&u, back.as_slice())
        ));
    }
    // scatter(x, idx, gather(x, idx)) == x, duplicates allowed.
    let c = law_case(seed ^ 0x5555, op, false);
    let x: Vec<T> = c.values.iter().map(|&v| T::small(v)).collect();
    let xv = TensorView::new(&x, &c.data_shape).map_err(|e| e.to_string())?;
    let iv = TensorView::new(&c.indices, &c.indices_shape).map_err(|e| e.to_string())?;
    let g =
        gather(&xv, &iv, &GatherOptions::new().axis(c.axis)).map_err(|e| format!("gather: {e}"))?;
    let s = scatter_of(op, &xv, &iv, &g.view(), c.axis).map_err(|e| format!("scatter: {e}"))?;
    if bits(s.as_slice()) != bits(&x) {
        return Err(format!(
            "scatter(x, i, gather(x, i)) != x: {}",
            first_difference(&x, s.as_slice())
        ));
    }
    Ok(())
}

fn check_laws(seed: u64, op: Op) -> Result<(), TestCaseError> {
    let dtype = DType::ALL[(seed % DType::ALL.len() as u64) as usize];
    with_dtype!(dtype, T => laws_typed::<T>(seed, op))
        .map_err(|m| TestCaseError::fail(format!("seed {seed}, {op:?}, {dtype}: {m}")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn gather_matches_reference(seed in any::<u64>()) {
        check_seed(Op::Gather, seed)?;
    }

    #[test]
    fn gather_elements_matches_reference(seed in any::<u64>()) {
        check_seed(Op::Elements, seed)?;
    }

    #[test]
    fn gather_nd_matches_reference(seed in any::<u64>()) {
        check_seed(Op::Nd, seed)?;
    }

    #[test]
    fn gather_and_scatter_update_round_trip(seed in any::<u64>()) {
        check_laws(seed, Op::Gather)?;
    }

    #[test]
    fn gather_elements_and_scatter_elements_round_trip(seed in any::<u64>()) {
        check_laws(seed, Op::Elements)?;
    }

    #[test]
    fn gather_nd_and_scatter_nd_round_trip(seed in any::<u64>()) {
        check_laws(seed, Op::Nd)?;
    }
}

/// The generator reaches successes (with non-empty outputs, fills and batch dims) and errors
/// of every op; otherwise the properties above could pass vacuously.
#[test]
fn gather_generator_covers_successes_errors_fills_and_batches() {
    for op in [Op::Gather, Op::Elements, Op::Nd] {
        let (mut ok, mut err, mut fills, mut batched) = (0, 0, 0, 0);
        for seed in 0..800 {
            let case = generate(seed, op);
            let idx: Vec<i64> = case.indices.iter().map(|&v| v as i64).collect();
            let data = TensorView::new(&case.data, &case.data_shape).unwrap();
            let iv = TensorView::new(&idx, &case.indices_shape).unwrap();
            let (_, oracle, _) = fns::<i64, i64>(op);
            match oracle(&data, &iv, &case.opts) {
                Ok(t) if !t.as_slice().is_empty() => {
                    ok += 1;
                    fills += usize::from(case.opts.out_of_range == GatherOutOfRange::Fill);
                    batched += usize::from(case.opts.batch_dims > 0);
                }
                Ok(_) => {}
                Err(_) => err += 1,
            }
        }
        assert!(ok > 150, "{op:?}: only {ok} non-empty successes");
        assert!(err > 50, "{op:?}: only {err} errors");
        assert!(fills > 20, "{op:?}: only {fills} fill successes");
        if op != Op::Elements {
            assert!(batched > 20, "{op:?}: only {batched} batched successes");
        }
    }
}

#[test]
#[ignore = "replays one seed: TS_SEED=<seed> TS_OP=gather|elements|nd"]
fn replay_gather_seed() {
    let seed: u64 = std::env::var("TS_SEED")
        .expect("TS_SEED")
        .parse()
        .expect("a u64");
    let op = match std::env::var("TS_OP").as_deref() {
        Ok("nd") => Op::Nd,
        Ok("elements") => Op::Elements,
        _ => Op::Gather,
    };
    let case = generate(seed, op);
    eprintln!("{case:?}");
    check_case(&case).unwrap();
}

/// One thread count and instruction-set level of [`run_typed`]: the allocating form and the
/// `_into` form (poisoned borders) against the oracle's `expected`.
#[allow(clippy::too_many_arguments)]
fn check_threads<T: Small, I: SmallIndex>(
    dv: &TensorView<'_, T>,
    iv: &TensorView<'_, I>,
    expected: &crate::Result<crate::Tensor<T>>,
    opts: &GatherOptions<T>,
    threads: usize,
    case: &Case,
    poison: T,
    engine: Alloc<T, I>,
    into: Into<T, I>,
) -> Result<(), String> {
    let got = engine(dv, iv, opts);
    match (&expected, &got) {
        (Ok(e), Ok(g)) if e.shape() == g.shape() && bits(e.as_slice()) == bits(g.as_slice()) => {}
        (Err(e), Err(g)) if error_key(e) == error_key(g) => {}
        (Ok(e), Ok(g)) => {
            return Err(format!(
                "{threads} thread(s), allocating: {}",
                first_difference(e.as_slice(), g.as_slice())
            ));
        }
        _ => {
            return Err(format!(
                "{threads} thread(s), allocating: reference {expected:?}, engine {got:?}"
            ));
        }
    }
    // Into a caller-provided, poisoned output laid out as `layouts[2]`.
    let Ok(e) = expected else { return Ok(()) };
    let junk = vec![T::small(NEG_INF); e.as_slice().len()];
    let (mut ob, oo, os) = embed(&junk, e.shape(), case.layouts[2], poison);
    let mut out =
        view_mut_in(&mut ob, oo, e.shape(), &os, case.layouts[2]).map_err(|e| e.to_string())?;
    into(dv, iv, &mut out, opts).map_err(|err| format!("into: {err}"))?;
    let logical = out.to_vec();
    if bits(e.as_slice()) != bits(&logical) {
        return Err(format!(
            "{threads} thread(s), into: {}",
            first_difference(e.as_slice(), &logical)
        ));
    }
    let (rb, _, _) = embed(e.as_slice(), e.shape(), case.layouts[2], poison);
    if bits(&rb) != bits(&ob) {
        return Err("into: a write landed outside the output view".into());
    }
    Ok(())
}

/// The element kernel's long-row path (rows of 4 KiB to 64 KiB along the last axis prefetch the
/// next data row, in blocks of 64 elements) is out of reach of the random small shapes: rows
/// of several byte widths and lengths that are not multiples of the block, split across tasks
/// mid-row, at every thread count and level, with every index policy, against the oracle.
#[test]
fn element_gather_long_rows_match_reference() {
    fn check<T: Small>(rows: usize, n: usize, m: usize, seed: u64) {
        let mut rng = Rng::new(seed);
        let data: Vec<T> = (0..rows * n)
            .map(|i| T::small((i % 97) as i64 - 48))
            .collect();
        // In [-n, n) (every policy accepts them), or 3 beyond either end (some rejected).
        let mut idx = |slack: u64| -> Vec<i64> {
            (0..rows * m)
                .map(|_| (rng.next() % (2 * (n as u64 + slack))) as i64 - (n as u64 + slack) as i64)
                .collect()
        };
        let (inside, wide) = (idx(0), idx(3));
        let dv = TensorView::new(&data, &[rows, n]).unwrap();
        for (oor, idx) in [
            (GatherOutOfRange::Error, &inside),
            (GatherOutOfRange::Clamp, &wide),
            (GatherOutOfRange::Fill, &wide),
            (GatherOutOfRange::Error, &wide),
        ] {
            let iv = TensorView::new(idx, &[rows, m]).unwrap();
            let base = GatherOptions::new()
                .axis(1)
                .out_of_range(oor)
                .fill_value(T::small(5));
            let expected = reference::gather_elements(&dv, &iv, &base);
            for isa in Isa::supported() {
                for threads in [1, 2, 4] {
                    let opts = base.par(Par::threads_exact(threads));
                    let got = with_isa(isa, || crate::gather_elements(&dv, &iv, &opts)).unwrap();
                    match (&expected, &got) {
                        (Ok(e), Ok(g)) => assert!(
                            bits(e.as_slice()) == bits(g.as_slice()),
                            "{isa:?} {threads}T {oor:?}: {}",
                            first_difference(e.as_slice(), g.as_slice())
                        ),
                        (Err(e), Err(g)) => assert_eq!(error_key(e), error_key(g)),
                        _ => panic!("{isa:?} {threads}T {oor:?}: {expected:?} vs {got:?}"),
                    }
                }
            }
        }
    }
    check::<f32>(5, 1100, 203, 1);
    check::<u8>(3, 4500, 130, 2);
    check::<f64>(4, 700, 64, 3);
    check::<half::f16>(3, 2100, 1000, 4);
}
