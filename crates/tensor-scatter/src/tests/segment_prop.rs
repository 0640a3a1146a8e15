//! The segment family against its oracle (`reference::segment`), bit for bit: random ranks
//! 1–4, dims 0–6, every form (scatter, segment_coo, segment_csr, with and without `out`, with
//! and without positions), every reduction, every data and index dtype (paired as in
//! `prop.rs`), broadcast, lower-rank and per-element indices, sorted and unsorted, valid and
//! broken indices, strided and reversed views with poisoned padding, 1, 2 and 4 threads.
//! `TS_PROPTEST_CASES` sets the number of cases (default 5000).

use super::{view_in, view_mut_in};
use proptest::prelude::*;

use super::prop::{
    INDEX_DTYPES, NAN, NEG_INF, Rng, Small, SmallIndex, bits, embed, first_difference,
    run_test_pair, test_pair,
};
use crate::dynamic::with_dtype;
use crate::reference::segment::{self as oracle, Composite, Form};
use crate::segment::{self, Float, SegmentOptions};
use crate::{DType, Par, Reduction, Tensor, TensorView, TensorViewMut};

#[derive(Debug, Clone)]
pub(super) struct Case {
    pub(super) form: Form,
    pub(super) src_shape: Vec<usize>,
    pub(super) index_shape: Vec<usize>,
    pub(super) src: Vec<i64>,
    pub(super) index: Vec<i128>,
    /// The output's starting values (`out=`), shaped as the output.
    pub(super) out: Option<(Vec<usize>, Vec<i64>)>,
    pub(super) opts: SegmentOptions,
    pub(super) want_arg: bool,
    pub(super) dtype: DType,
    pub(super) index_dtype: DType,
    pub(super) layouts: [u8; 3],
}

pub(super) fn generate(seed: u64, form: Form) -> Case {
    let mut rng = Rng::new(seed);
    let rank = 1 + rng.below(4) as usize;
    let src_shape: Vec<usize> = (0..rank)
        .map(|_| {
            if rng.chance(5) {
                0
            } else {
                rng.below(6) as usize
            }
        })
        .collect();
    let (dim, dim_opt) = match form {
        Form::Scatter => {
            let d = rng.below(rank as u64) as usize;
            let raw = if rng.chance(50) {
                d as i64 - rank as i64
            } else {
                d as i64
            };
            (d, if rng.chance(3) { rank as i64 } else { raw })
        }
        _ => {
            let d = rng.below(rank as u64) as usize;
            (d, -1)
        }
    };
    let e = src_shape[dim];
    let segments = rng.below(6) as usize;
    // The index's shape: torch_scatter broadcasting (1-D along dim, or a lower-rank prefix
    // whose dims are src's or 1).
    let mut index_shape: Vec<usize> = if form == Form::Scatter && rng.chance(40) {
        vec![e]
    } else {
        let ri = match form {
            Form::Scatter => dim + 1 + rng.below((rank - dim) as u64) as usize,
            _ => dim + 1,
        };
        (0..ri)
            .map(|d| {
                if d == dim {
                    if form == Form::Csr { segments + 1 } else { e }
                } else if rng.chance(30) {
                    1
                } else {
                    src_shape[d]
                }
            })
            .collect()
    };
    if rng.chance(3) {
        let i = rng.below(index_shape.len() as u64) as usize;
        index_shape[i] += 1; // break the broadcast
    }
    let n = 1 + rng.below(5) as usize;
    let clean = rng.chance(70);
    let count: usize = index_shape.iter().product();
    let lane = *index_shape.last().unwrap_or(&1);
    let mut index: Vec<i128> = (0..count)
        .map(|_| match form {
            Form::Csr => rng.below(e as u64 + 1) as i128,
            _ if clean || rng.chance(80) => rng.below(n as u64) as i128,
            _ => rng.pick(&[-1, n as i128, -(n as i128) - 1, i128::from(i64::MAX), 255]),
        })
        .collect();
    // segment_coo wants each lane (along the last dim) sorted; segment_csr non-decreasing.
    if form != Form::Scatter && lane > 0 && (clean || rng.chance(70)) {
        for chunk in index.chunks_mut(lane) {
            chunk.sort_unstable();
        }
    }
    // A scatter index sorted by chance takes segment_coo's fold (no counting sort): sorted
    // whole, it does not descend along any dim. Drawn from a stream of its own, so the
    // seeds' other draws (and the known seeds below) are unchanged.
    if form == Form::Scatter && Rng::new(seed ^ 0x5027_ed00).chance(30) {
        index.sort_unstable();
    }
    if form == Form::Csr && !clean && rng.chance(30) && !index.is_empty() {
        let i = rng.below(index.len() as u64) as usize;
        index[i] = rng.pick(&[-1, e as i128 + 1]);
    }
    let dtype = rng.pick(&DType::ALL);
    let specials = dtype.is_float() && rng.chance(30);
    let value = |rng: &mut Rng| {
        if specials && rng.chance(20) {
            rng.pick(&[NAN, 1001, NEG_INF, 1003, 0])
        } else {
            rng.below(11) as i64 - 5
        }
    };
    let src = (0..src_shape.iter().product::<usize>())
        .map(|_| value(&mut rng))
        .collect();
    let mut opts = SegmentOptions::new().dim(dim_opt).reduce(rng.pick(&[
        Reduction::Add,
        Reduction::Add,
        Reduction::Mean,
        Reduction::Mul,
        Reduction::Min,
        Reduction::Max,
        Reduction::Max,
        Reduction::Sub,
    ]));
    let out_n = if form == Form::Csr { segments } else { n };
    if rng.chance(50) {
        opts = opts.dim_size(n);
    }
    let out = rng.chance(35).then(|| {
        let mut s = src_shape.clone();
        s[dim] = out_n;
        let vals = (0..s.iter().product::<usize>())
            .map(|_| value(&mut rng))
            .collect();
        (s, vals)
    });
    let want_arg = matches!(opts.reduce, Reduction::Min | Reduction::Max) && rng.chance(60);
    Case {
        form,
        src_shape,
        index_shape,
        src,
        index,
        out,
        opts,
        want_arg,
        dtype,
        index_dtype: rng.pick(&INDEX_DTYPES),
        layouts: if rng.chance(40) {
            [0; 3]
        } else {
            [rng.below(3) as u8, rng.below(3) as u8, rng.below(3) as u8]
        },
    }
}

type Outcome<T> = crate::Result<(Tensor<T>, Option<Tensor<i64>>)>;

fn engine<T: Small, I: SmallIndex>(
    case: &Case,
    src: &TensorView<'_, T>,
    index: &TensorView<'_, I>,
    out: Option<&mut TensorViewMut<'_, T>>,
    opts: &SegmentOptions,
) -> Outcome<T> {
    use Form::*;
    match (case.form, out, case.want_arg) {
        (Scatter, None, false) => segment::scatter(src, index, opts).map(|v| (v, None)),
        (Scatter, None, true) => segment::scatter_arg(src, index, opts).map(|(v, a)| (v, Some(a))),
        (Coo, None, false) => segment::segment_coo(src, index, opts).map(|v| (v, None)),
        (Coo, None, true) => segment::segment_coo_arg(src, index, opts).map(|(v, a)| (v, Some(a))),
        (Csr, None, false) => segment::segment_csr(src, index, opts).map(|v| (v, None)),
        (Csr, None, true) => segment::segment_csr_arg(src, index, opts).map(|(v, a)| (v, Some(a))),
        (form, Some(o), want_arg) => {
            let arg = match (form, want_arg) {
                (Scatter, false) => segment::scatter_out(src, index, o, opts).map(|()| None),
                (Scatter, true) => segment::scatter_arg_out(src, index, o, opts).map(Some),
                (Coo, false) => segment::segment_coo_out(src, index, o, opts).map(|()| None),
                (Coo, true) => segment::segment_coo_arg_out(src, index, o, opts).map(Some),
                (Csr, false) => segment::segment_csr_out(src, index, o, opts).map(|()| None),
                (Csr, true) => segment::segment_csr_arg_out(src, index, o, opts).map(Some),
            }?;
            let v = o.to_vec();
            let shape = o.shape().to_vec();
            Ok((Tensor::from_vec(v, &shape)?, arg))
        }
    }
}

/// A case's values as `T` and `I`, laid out as its `layouts` say (strided, reversed, padding
/// poisoned), and whether its output is too large for a test.
pub(super) struct Laid<T, I> {
    /// src's values, row-major.
    pub(super) src: Vec<T>,
    src_laid: (Vec<T>, usize, Vec<isize>, Vec<usize>),
    index_laid: (Vec<I>, usize, Vec<isize>, Vec<usize>),
    kinds: [u8; 3],
    /// The output's starting values (`out=`) and their shape.
    pub(super) out: Option<(Vec<usize>, Vec<T>)>,
    huge: bool,
}

impl<T: Small, I: SmallIndex> Laid<T, I> {
    pub(super) fn new(case: &Case) -> Self {
        let src: Vec<T> = case.src.iter().map(|&v| T::small(v)).collect();
        let idx: Vec<I> = case.index.iter().map(|&v| I::wrap(v)).collect();
        let (sb, so, ss) = embed(&src, &case.src_shape, case.layouts[0], T::small(NAN));
        let (ib, io, is) = embed(&idx, &case.index_shape, case.layouts[1], I::wrap(0));
        // An index as large as a wrapped -1 (u32::MAX, say) with no dim_size asks for an
        // output of billions of cells: legal, but not for a test to allocate. The output keeps
        // src's other dims, so it has cells unless one of them is 0: src may be empty along
        // dim itself (an index of a broken broadcast still holds values).
        let max = idx.iter().map(|v| v.to_i64_sat()).max().unwrap_or(0);
        let zero_dims = case.src_shape.iter().filter(|&&d| d == 0).count();
        let huge = case.form != Form::Csr
            && case.opts.dim_size.is_none()
            && case.out.is_none()
            && max > 1 << 16
            && max < i64::MAX
            && zero_dims <= 1;
        Laid {
            src,
            src_laid: (sb, so, ss, case.src_shape.clone()),
            index_laid: (ib, io, is, case.index_shape.clone()),
            kinds: case.layouts,
            out: case
                .out
                .as_ref()
                .map(|(s, v)| (s.clone(), v.iter().map(|&x| T::small(x)).collect())),
            huge,
        }
    }

    /// Whether the output would be too large to allocate in a test.
    pub(super) fn huge_output(&self) -> bool {
        self.huge
    }

    pub(super) fn src_view(&self) -> Result<TensorView<'_, T>, String> {
        let (b, o, st, sh) = &self.src_laid;
        view_in(b, *o, sh, st, self.kinds[0]).map_err(|e| e.to_string())
    }

    pub(super) fn index_view(&self) -> Result<TensorView<'_, I>, String> {
        let (b, o, st, sh) = &self.index_laid;
        view_in(b, *o, sh, st, self.kinds[1]).map_err(|e| e.to_string())
    }

    pub(super) fn out_view(&self) -> Result<Option<TensorView<'_, T>>, String> {
        let out = self.out.as_ref().map(|(s, v)| TensorView::new(v, s));
        out.transpose().map_err(|e| e.to_string())
    }
}

fn run_typed<T: Small, I: SmallIndex>(case: &Case) -> Result<(), String> {
    let laid = Laid::<T, I>::new(case);
    if laid.huge_output() {
        return Ok(());
    }
    let (src, sv, iv) = (&laid.src, laid.src_view()?, laid.index_view()?);
    let (out_vals, out_view) = (&laid.out, laid.out_view()?);
    let poison = T::small(NAN);
    let src_plain = TensorView::new(src, &case.src_shape).map_err(|e| e.to_string())?;
    let expected = oracle::reduce(case.form, &src_plain, &iv, out_view.as_ref(), &case.opts);
    let levels = crate::isa::Isa::supported();
    let one = |threads: usize| -> Result<(), String> {
        let opts = case.opts.par(Par::threads_exact(threads));
        let got = match &out_vals {
            None => engine::<T, I>(case, &sv, &iv, None, &opts),
            Some((s, v)) => {
                let (mut ob, oo, os) = embed(v, s, case.layouts[2], poison);
                let before = bits(&ob);
                let mut o =
                    view_mut_in(&mut ob, oo, s, &os, case.layouts[2]).map_err(|e| e.to_string())?;
                let r = engine::<T, I>(case, &sv, &iv, Some(&mut o), &opts);
                match &r {
                    Err(_) if bits(&ob) != before => {
                        return Err(format!("{threads} threads: out changed on error"));
                    }
                    Ok((v, _)) => {
                        let (want, _, _) = embed(v.as_slice(), s, case.layouts[2], poison);
                        if bits(&want) != bits(&ob) {
                            return Err(format!("{threads} threads: a write outside out"));
                        }
                    }
                    _ => {}
                }
                r
            }
        };
        match (&expected, &got) {
            (Err(_), Err(_)) => {}
            (Ok((ev, ea)), Ok((gv, ga))) => {
                if ev.shape() != gv.shape() || bits(ev.as_slice()) != bits(gv.as_slice()) {
                    return Err(format!(
                        "{threads} threads: values {:?} vs {:?}: {}",
                        ev.shape(),
                        gv.shape(),
                        first_difference(ev.as_slice(), gv.as_slice())
                    ));
                }
                if let Some(ga) = ga
                    && ea.as_slice() != ga.as_slice()
                {
                    return Err(format!(
                        "{threads} threads: positions {:?} vs {:?}",
                        ea.as_slice(),
                        ga.as_slice()
                    ));
                }
            }
            _ => {
                return Err(format!(
                    "{threads} threads: oracle {:?}, engine {:?}",
                    expected.as_ref().map(|_| ()),
                    got.as_ref().map(|_| ())
                ));
            }
        }
        Ok(())
    };
    for threads in [1, 2, 4] {
        for &isa in &levels {
            crate::isa::with_isa(isa, || one(threads))
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("{isa:?}: {e}"))?;
        }
    }
    Ok(())
}

fn check_case(case: &Case) -> Result<(), String> {
    let (dtype, index_dtype) = test_pair(case.dtype, case.index_dtype);
    let mut case = case.clone();
    case.dtype = dtype;
    case.index_dtype = index_dtype;
    run_test_pair!(dtype, index_dtype, run_typed, &case)
}

fn check_seed(form: Form, seed: u64) -> Result<(), TestCaseError> {
    let case = generate(seed, form);
    check_case(&case).map_err(|m| TestCaseError::fail(format!("seed {seed}: {m}\ncase: {case:?}")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: super::prop::cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn segment_scatter_matches_oracle(seed in any::<u64>()) {
        check_seed(Form::Scatter, seed)?;
    }

    #[test]
    fn segment_coo_matches_oracle(seed in any::<u64>()) {
        check_seed(Form::Coo, seed)?;
    }

    #[test]
    fn segment_csr_matches_oracle(seed in any::<u64>()) {
        check_seed(Form::Csr, seed)?;
    }
}

/// Long lanes of single elements (`k = 1`, `e >= 1024`, several lanes) take the
/// scatter-elements path, which the small generated shapes reach only with one lane; values
/// up to ±1000 make f16/bf16 sums round differently unless they accumulate wide.
#[test]
fn segment_long_lanes_of_single_elements_match_oracle() {
    for seed in 0..120u64 {
        let mut case = generate(seed, Form::Scatter);
        let mut rng = Rng::new(seed ^ 0x5eed);
        let (b, e, n) = (2 + seed as usize % 2, 1100, 1 + rng.below(5) as usize);
        case.src_shape = vec![b, e];
        case.index_shape = if seed % 3 == 0 { vec![e] } else { vec![b, e] };
        case.opts = case.opts.dim(1);
        case.want_arg = false;
        let count: usize = case.index_shape.iter().product();
        case.index = (0..count).map(|_| rng.below(n as u64) as i128).collect();
        if rng.chance(10) {
            case.index[rng.below(count as u64) as usize] = n as i128; // one out of range
        }
        case.src = (0..b * e).map(|_| rng.below(2001) as i64 - 1000).collect();
        if case.opts.dim_size.is_some() || case.out.is_some() {
            case.opts = case.opts.dim_size(n);
        }
        case.out = case
            .out
            .map(|_| (vec![b, n], (0..b * n).map(|v| v as i64 - 3).collect()));
        if let Err(m) = check_case(&case) {
            panic!("seed {seed}: {m}\ncase: {case:?}");
        }
    }
}

/// Rows as wide as the fold's column blocks (and the leftovers after them), segments longer
/// than a block of the positions' fold numbers (`ARG_CHUNK_ROWS` is 3 in this build), few
/// distinct values (ties) and the float specials: every form, with and without `out` and
/// positions, against the oracle.
#[test]
fn segment_wide_rows_match_oracle() {
    for seed in 0..240u64 {
        check_wide_rows(seed, None);
    }
}

/// Rows whose accumulators take 256 bytes, which have loops of their own
/// (`kernels::segment::fold::sum_256`, and `kernels::segment::extreme::extreme_256` for the
/// min and max of f32 and f64): every float dtype at its width, every form, every reduction
/// but the product,
/// with and without `out` and positions, with the float specials.
#[test]
fn segment_rows_of_256_bytes_match_oracle() {
    for seed in 0..144u64 {
        let dtype = [DType::F32, DType::F16, DType::BF16, DType::F64][seed as usize / 3 % 4];
        check_wide_rows(seed, Some(dtype));
    }
}

/// One case of [`segment_wide_rows_match_oracle`] from `seed`; with `dtype`, that dtype's
/// rows of 256 bytes of accumulators.
fn check_wide_rows(seed: u64, dtype: Option<DType>) {
    let form = [Form::Scatter, Form::Coo, Form::Csr][seed as usize % 3];
    let mut case = generate(seed, form);
    let mut rng = Rng::new(seed ^ 0x31de);
    let mut w = rng.pick(&[7, 8, 9, 31, 32, 33, 64, 65, 97, 130]);
    let (e, n) = (1 + rng.below(40) as usize, 1 + rng.below(6) as usize);
    let mut reductions = vec![
        Reduction::Min,
        Reduction::Max,
        Reduction::Max,
        Reduction::Add,
        Reduction::Mean,
    ];
    if let Some(d) = dtype {
        (case.dtype, case.index_dtype) = (d, rng.pick(&[DType::I64, DType::I32]));
        w = if d == DType::F64 { 32 } else { 64 };
        reductions = vec![
            Reduction::Add,
            Reduction::Mean,
            Reduction::Min,
            Reduction::Max,
        ];
    }
    case.src_shape = vec![e, w];
    let opts = SegmentOptions::new().dim(0);
    case.opts = if form == Form::Csr {
        opts
    } else {
        opts.dim_size(n)
    }
    .reduce(rng.pick(&reductions));
    case.want_arg = matches!(case.opts.reduce, Reduction::Min | Reduction::Max) && rng.chance(80);
    let specials = case.dtype.is_float() && rng.chance(40);
    case.src = (0..e * w)
        .map(|_| {
            if specials && rng.chance(10) {
                rng.pick(&[NAN, NEG_INF, 1001, 1003, 0])
            } else {
                rng.below(4) as i64 - 2
            }
        })
        .collect();
    let mut index: Vec<i128> = (0..e).map(|_| rng.below(n as u64) as i128).collect();
    if form != Form::Scatter {
        index.sort_unstable();
    }
    if form == Form::Csr {
        // Offsets into the rows: n segments over a sorted sample of 0..=e.
        index = (0..=n).map(|_| rng.below(e as u64 + 1) as i128).collect();
        index.sort_unstable();
    }
    case.index_shape = vec![index.len()];
    case.index = index;
    // `out`'s values start the folds: specials there too (a NaN start must stick).
    case.out = case.out.map(|_| {
        let cells = (0..n * w).map(|_| {
            if specials && rng.chance(10) {
                rng.pick(&[NAN, NEG_INF, 1001, 1003, 0])
            } else {
                rng.below(5) as i64 - 2
            }
        });
        (vec![n, w], cells.collect())
    });
    if let Err(m) = check_case(&case) {
        panic!("seed {seed}: {m}\ncase: {case:?}");
    }
}

/// The generator must reach successes with data, errors, and every reduction with positions.
#[test]
fn segment_generator_covers_successes_and_errors() {
    for form in [Form::Scatter, Form::Coo, Form::Csr] {
        let (mut ok, mut err, mut arg) = (0, 0, 0);
        for seed in 0..800 {
            let case = generate(seed, form);
            let src: Vec<f64> = case.src.iter().map(|&v| v as f64).collect();
            let idx: Vec<i64> = case.index.iter().map(|&v| v as i64).collect();
            let sv = TensorView::new(&src, &case.src_shape).unwrap();
            let iv = TensorView::new(&idx, &case.index_shape).unwrap();
            match oracle::reduce(form, &sv, &iv, None, &case.opts) {
                Ok((v, _)) if !v.as_slice().is_empty() && !src.is_empty() => {
                    ok += 1;
                    arg += usize::from(case.want_arg);
                }
                Ok(_) => {}
                Err(_) => err += 1,
            }
        }
        assert!(ok > 200, "{form:?}: {ok} non-trivial successes");
        assert!(err > 50, "{form:?}: {err} errors");
        assert!(arg > 40, "{form:?}: {arg} successes with positions");
    }
}

/// Gathers: the engine's gather_coo / gather_csr against the oracle.
#[test]
fn segment_gathers_match_oracle() {
    for seed in 0..3000u64 {
        let form = if seed % 2 == 0 { Form::Coo } else { Form::Csr };
        let mut rng = Rng::new(seed);
        let rank = 1 + rng.below(3) as usize;
        let src_shape: Vec<usize> = (0..rank).map(|_| rng.below(5) as usize).collect();
        let ri = 1 + rng.below(rank as u64) as usize;
        let dim = ri - 1;
        let mut ishape: Vec<usize> = (0..ri)
            .map(|d| if rng.chance(30) { 1 } else { src_shape[d] })
            .collect();
        let extent = rng.below(7) as usize;
        ishape[dim] = if form == Form::Csr {
            src_shape[dim] + 1
        } else {
            extent
        };
        let count: usize = ishape.iter().product();
        let mut index: Vec<i64> = (0..count)
            .map(|_| match form {
                Form::Csr => rng.below(7) as i64,
                _ => rng.below(src_shape[dim] as u64 + 1) as i64,
            })
            .collect();
        if form == Form::Csr {
            for c in index.chunks_mut(ishape[dim].max(1)) {
                c.sort_unstable();
            }
        }
        let src: Vec<f32> = (0..src_shape.iter().product::<usize>())
            .map(|i| i as f32)
            .collect();
        let sv = TensorView::new(&src, &src_shape).unwrap();
        let iv = TensorView::new(&index, &ishape).unwrap();
        let want = oracle::gather(form, &sv, &iv);
        let opts = SegmentOptions::new().par(Par::threads_exact(1 + (seed % 3) as usize));
        let got = match form {
            Form::Coo => segment::gather_coo(&sv, &iv, &opts),
            _ => segment::gather_csr(&sv, &iv, &opts),
        };
        match (&want, &got) {
            (Ok(w), Ok(g)) => assert!(
                w.shape() == g.shape() && bits(w.as_slice()) == bits(g.as_slice()),
                "seed {seed}: {w:?} vs {g:?}"
            ),
            (Err(_), Err(_)) => {}
            _ => panic!(
                "seed {seed} {form:?} {src_shape:?} {ishape:?} {index:?}: {want:?} vs {got:?}"
            ),
        }
    }
}

fn run_composite<T: Small + Float, I: SmallIndex>(case: &Case) -> Result<(), String> {
    let src: Vec<T> = case.src.iter().map(|&v| T::small(v)).collect();
    let idx: Vec<I> = case.index.iter().map(|&v| I::wrap(v)).collect();
    let (sb, so, ss) = embed(&src, &case.src_shape, case.layouts[0], T::small(NAN));
    let (ib, io, is) = embed(&idx, &case.index_shape, case.layouts[1], I::wrap(0));
    let sv = view_in(&sb, so, &case.src_shape, &ss, case.layouts[0]).map_err(|e| e.to_string())?;
    let iv =
        view_in(&ib, io, &case.index_shape, &is, case.layouts[1]).map_err(|e| e.to_string())?;
    let what = [
        Composite::Softmax,
        Composite::LogSoftmax,
        Composite::LogSumExp,
        Composite::Std { unbiased: true },
        Composite::Std { unbiased: false },
    ][case.src.len() % 5];
    let plain = TensorView::new(&src, &case.src_shape).map_err(|e| e.to_string())?;
    let want = oracle::composite(what, &plain, &iv, &case.opts);
    for threads in [1, 2, 4] {
        let o = case.opts.par(Par::threads_exact(threads));
        let got = match what {
            Composite::Softmax => segment::scatter_softmax(&sv, &iv, &o),
            Composite::LogSoftmax => segment::scatter_log_softmax(&sv, &iv, &o),
            Composite::LogSumExp => segment::scatter_logsumexp(&sv, &iv, &o),
            Composite::Std { unbiased } => segment::scatter_std(&sv, &iv, unbiased, &o),
        };
        match (&want, &got) {
            (Ok(w), Ok(g))
                if w.shape() == g.shape() && bits(w.as_slice()) == bits(g.as_slice()) => {}
            (Err(_), Err(_)) => {}
            (Ok(w), Ok(g)) => {
                return Err(format!(
                    "{what:?}, {threads} threads: {}",
                    first_difference(w.as_slice(), g.as_slice())
                ));
            }
            _ => {
                return Err(format!(
                    "{what:?}, {threads} threads: oracle {want:?}, engine {got:?}"
                ));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: super::prop::cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn segment_composites_match_oracle(seed in any::<u64>()) {
        let mut case = generate(seed, Form::Scatter);
        case.opts = case.opts.reduce(Reduction::Add);
        if case.out.is_some() || matches!(case.index.iter().max(), Some(&m) if m > 1 << 16) {
            return Ok(());
        }
        let r = match Rng::new(seed).below(4) {
            0 => run_composite::<f64, i64>(&case),
            1 => run_composite::<f32, i32>(&case),
            2 => run_composite::<crate::half::f16, u8>(&case),
            _ => run_composite::<crate::half::bf16, i16>(&case),
        };
        r.map_err(|m| TestCaseError::fail(format!("seed {seed}: {m}\ncase: {case:?}")))?;
    }
}

/// Seeds the random runs once got wrong, replayed on every run. 122878 (coo): src [4, 0], an
/// index of a broken broadcast [4, 1] holding u32::MAX, no dim_size: the oracle was asked for an
/// output of 4 x 2^32 cells and the process aborted (the skip missed a src empty along dim).
#[test]
fn segment_known_seeds() {
    for (form, seed) in [(Form::Coo, 122_878), (Form::Coo, 11_120)] {
        check_seed(form, seed).unwrap();
    }
}

#[test]
#[ignore = "replays one seed: TS_SEED=<seed> TS_FORM=scatter|coo|csr"]
fn segment_replay_seed() {
    let seed: u64 = std::env::var("TS_SEED")
        .expect("TS_SEED")
        .parse()
        .expect("a u64");
    let form = match std::env::var("TS_FORM").as_deref() {
        Ok("coo") => Form::Coo,
        Ok("csr") => Form::Csr,
        _ => Form::Scatter,
    };
    let case = generate(seed, form);
    eprintln!("{case:?}");
    check_case(&case).unwrap();
}
