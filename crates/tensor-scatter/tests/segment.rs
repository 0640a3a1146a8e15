//! The segment family (torch_scatter's API): documented examples, the rules where we depart
//! from torch_scatter, errors, and bit-identical results at several thread counts on inputs
//! large enough to run in parallel.

use tensor_scatter::segment::{
    self, SegmentOptions, gather_coo, gather_csr, scatter, scatter_arg, segment_coo, segment_csr,
};
use tensor_scatter::{ErrorKind, Par, Reduction, TensorView, TensorViewMut};

fn v<'a, T: Copy>(data: &'a [T], shape: &[usize]) -> TensorView<'a, T> {
    TensorView::new(data, shape).unwrap()
}

#[test]
fn torch_scatter_readme_example() {
    // torch_scatter's README: src [[2,0,1,4,3],[0,2,1,3,4]], index [[4,5,4,2,3],[0,0,2,2,1]].
    let src = [2.0f32, 0., 1., 4., 3., 0., 2., 1., 3., 4.];
    let index = [4i64, 5, 4, 2, 3, 0, 0, 2, 2, 1];
    let opts = SegmentOptions::new().reduce(Reduction::Max);
    let (out, arg) = scatter_arg(&v(&src, &[2, 5]), &v(&index, &[2, 5]), &opts).unwrap();
    assert_eq!(out.shape(), &[2, 6]);
    assert_eq!(
        out.as_slice(),
        &[0., 0., 4., 3., 2., 0., 2., 4., 3., 0., 0., 0.]
    );
    assert_eq!(arg.as_slice(), &[5, 5, 3, 4, 0, 1, 1, 4, 3, 5, 5, 5]);
}

#[test]
fn a_one_d_index_lies_along_dim_and_broadcasts() {
    // torch_scatter's docstring: src [10, 6, 64], index of 6, dim 1 -> [10, 3, 64].
    let src: Vec<f64> = (0..10 * 6 * 64).map(|i| i as f64).collect();
    let index = [0i64, 1, 0, 1, 2, 1];
    let out = scatter(
        &v(&src, &[10, 6, 64]),
        &v(&index, &[6]),
        &SegmentOptions::new().dim(1),
    )
    .unwrap();
    assert_eq!(out.shape(), &[10, 3, 64]);
    let at = |b: usize, e: usize, k: usize| src[(b * 6 + e) * 64 + k];
    let o = out.as_slice();
    assert_eq!(
        o[(9 * 3 + 1) * 64 + 7],
        at(9, 1, 7) + at(9, 3, 7) + at(9, 5, 7)
    );
    assert_eq!(o[(2 * 3 + 2) * 64 + 63], at(2, 4, 63));
}

#[test]
fn departures_from_torch_scatter_are_as_documented() {
    // A cell whose minimum is +inf reports it (torch_scatter: 0); an empty cell is 0.
    let src = [f32::INFINITY, f32::INFINITY, 1.0];
    let idx = [0i64, 0, 2];
    let opts = SegmentOptions::new().reduce(Reduction::Min);
    let out = scatter(&v(&src, &[3]), &v(&idx, &[3]), &opts).unwrap();
    assert_eq!(out.as_slice(), &[f32::INFINITY, 0.0, 1.0]);
    // Integer mean rounds toward -inf: (-3 + -4) / 2 = -3.5 -> -4.
    let out = scatter(
        &v(&[-3i32, -4], &[2]),
        &v(&[0u8, 0], &[2]),
        &SegmentOptions::new().reduce(Reduction::Mean),
    )
    .unwrap();
    assert_eq!(out.as_slice(), &[-4]);
    // NaN propagates and arg points at the first NaN.
    let src = [1.0f64, f64::NAN, 5.0, f64::NAN];
    let (out, arg) = scatter_arg(
        &v(&src, &[4]),
        &v(&[0i64, 0, 0, 0], &[4]),
        &SegmentOptions::new().reduce(Reduction::Max),
    )
    .unwrap();
    assert!(out.as_slice()[0].is_nan());
    assert_eq!(arg.as_slice(), &[1]);
    // With out, mean counts out's value: (10 + 2 + 4) / 3.
    let mut out = [10.0f32];
    segment::scatter_out(
        &v(&[2.0f32, 4.0], &[2]),
        &v(&[0i64, 0], &[2]),
        &mut TensorViewMut::new(&mut out, &[1]).unwrap(),
        &SegmentOptions::new().reduce(Reduction::Mean),
    )
    .unwrap();
    assert_eq!(out, [16.0 / 3.0]);
}

/// The position follows the value's bits: `-0` replaces `+0` in a minimum (`+0` a `-0` in a
/// maximum), never the other way. The kernels with positions find a cell's row by its bits
/// after folding, so each pattern is tried in one column among columns that end away from
/// zero or at zeros themselves, at widths that take each of their loops.
#[test]
fn signed_zeros_move_min_and_max_positions_by_their_bits() {
    macro_rules! check {
        ($t:ty) => {{
            let (z, n): ($t, $t) = (0.0, -0.0);
            // (reduction, the column's rows, its value, its position)
            let cases = [
                (Reduction::Min, [z, n, z], n, 1),
                (Reduction::Min, [n, z, n], n, 0),
                (Reduction::Min, [z, z, z], z, 0),
                (Reduction::Max, [n, z, n], z, 1),
                (Reduction::Max, [z, n, z], z, 0),
                (Reduction::Max, [n, n, n], n, 0),
            ];
            for (red, col, want, at) in cases {
                for (w, zeros) in [1, 8, 32, 64, 70]
                    .into_iter()
                    .flat_map(|w| [(w, false), (w, true)])
                {
                    let src: Vec<$t> = (0..3 * w)
                        .map(|i| match (i % w == w / 2, zeros) {
                            (true, _) => col[i / w],
                            (false, false) => (i % 5) as $t + 1.0,
                            (false, true) => [z, n, z, n, n][i % 5],
                        })
                        .collect();
                    let opts = SegmentOptions::new().dim(0).reduce(red);
                    let (out, arg) =
                        scatter_arg(&v(&src, &[3, w]), &v(&[1i64, 1, 1], &[3]), &opts).unwrap();
                    let cell = w + w / 2;
                    let what = format!("{} {red:?} {col:?} w {w} zeros {zeros}", stringify!($t));
                    assert_eq!(out.as_slice()[cell].to_bits(), want.to_bits(), "{what}");
                    assert_eq!(arg.as_slice()[cell], at, "{what}");
                }
            }
        }};
    }
    check!(f32);
    check!(f64);
}

#[test]
fn f16_sums_accumulate_in_f32_and_round_once() {
    use tensor_scatter::half::f16;
    // Rows of one element (the scatter-elements path) and of two (the fold).
    let src = vec![f16::ONE; 6000];
    let idx = vec![0i32; 3000];
    let o = SegmentOptions::new().dim(0);
    let out = scatter(&v(&src[..3000], &[3000]), &v(&idx, &[3000]), &o).unwrap();
    assert_eq!(out.as_slice(), &[f16::from_f32(3000.0)]);
    let out = scatter(&v(&src, &[3000, 2]), &v(&idx, &[3000]), &o).unwrap();
    assert_eq!(out.as_slice(), &[f16::from_f32(3000.0); 2]);
    // With out: its value is one more element of the fold.
    let mut start = [f16::from_f32(0.5)];
    let mut out = TensorViewMut::new(&mut start, &[1]).unwrap();
    segment::scatter_out(&v(&src[..3000], &[3000]), &v(&idx, &[3000]), &mut out, &o).unwrap();
    assert_eq!(start, [f16::from_f32(3000.5)]);
}

#[test]
fn segments_sorted_and_csr() {
    let src = [1.0f32, 2., 3., 4., 5., 6.];
    let idx = [0i64, 0, 1, 1, 1, 3];
    let coo = segment_coo(&v(&src, &[6]), &v(&idx, &[6]), &SegmentOptions::new()).unwrap();
    assert_eq!(coo.as_slice(), &[3., 12., 0., 6.]);
    let indptr = [0i64, 2, 5, 5, 6];
    let csr = segment_csr(&v(&src, &[6]), &v(&indptr, &[5]), &SegmentOptions::new()).unwrap();
    assert_eq!(csr.as_slice(), coo.as_slice());
    let (mx, arg) = segment::segment_csr_arg(
        &v(&src, &[6]),
        &v(&indptr, &[5]),
        &SegmentOptions::new().reduce(Reduction::Max),
    )
    .unwrap();
    assert_eq!(
        (mx.as_slice(), arg.as_slice()),
        (&[2., 5., 0., 6.][..], &[1, 4, 6, 5][..])
    );
    // The inverses.
    let back = gather_csr(&csr.view(), &v(&indptr, &[5]), &SegmentOptions::new()).unwrap();
    assert_eq!(back.as_slice(), &[3., 3., 12., 12., 12., 6.]);
    let back = gather_coo(&coo.view(), &v(&idx, &[6]), &SegmentOptions::new()).unwrap();
    assert_eq!(back.as_slice(), &[3., 3., 12., 12., 12., 6.]);
}

#[test]
fn segment_csr_overwrites_out_and_zero_segments_agree() {
    // torch_scatter: segment_csr writes its result over `out` (empty segments 0, 1 for mul),
    // segment_coo folds `out` in.
    let src = [1.0f64, 2., 3., 4., 5.];
    let indptr = [0i64, 2, 2, 5];
    for red in [
        Reduction::Add,
        Reduction::Mean,
        Reduction::Mul,
        Reduction::Max,
    ] {
        let opts = SegmentOptions::new().reduce(red);
        let want = segment_csr(&v(&src, &[5]), &v(&indptr, &[4]), &opts).unwrap();
        let mut out = [-2.0f64; 3];
        let mut o = TensorViewMut::new(&mut out, &[3]).unwrap();
        segment::segment_csr_out(&v(&src, &[5]), &v(&indptr, &[4]), &mut o, &opts).unwrap();
        assert_eq!(&out[..], want.as_slice(), "{red:?}");
        // Its gradient with respect to out's old values is 0.
        let g = segment::segment_csr_vjp(
            &v(&[1.0f64; 3], &[3]),
            &v(&src, &[5]),
            &v(&indptr, &[4]),
            Some(&v(&[-2.0; 3], &[3])),
            &opts,
        )
        .unwrap();
        assert_eq!(g.out.unwrap().as_slice(), &[0.0; 3]);
    }
    let mut out = [-2.0f64; 3];
    let mut o = TensorViewMut::new(&mut out, &[3]).unwrap();
    let opts = SegmentOptions::new();
    segment::segment_coo_out(&v(&src, &[5]), &v(&[0i64, 0, 2, 2, 2], &[5]), &mut o, &opts).unwrap();
    assert_eq!(out, [1.0, -2.0, 10.0]);
    // An empty src and an empty indptr: zero segments for both (as torch_scatter).
    let empty = v(&[0.0f32; 0], &[0, 3]);
    let none = v(&[0i64; 0], &[0]);
    assert_eq!(segment_csr(&empty, &none, &opts).unwrap().shape(), &[0, 3]);
    assert_eq!(gather_csr(&empty, &none, &opts).unwrap().shape(), &[0, 3]);
    let two = v(&[0i64, 0], &[2]);
    assert!(gather_csr(&empty, &two, &opts).is_err());
}

/// A cell nothing reaches keeps `out`'s value bit for bit (a NaN's payload too) in every
/// form and reduction, as the scatters keep every untouched cell (found by the fuzzer:
/// segment_coo made it the canonical NaN, scatter kept it).
#[test]
fn a_cell_nothing_reaches_keeps_outs_bits() {
    let src = [-0.0f64, 2.0];
    let index = [0i64, 0];
    let nans = [
        f64::from_bits(u64::MAX),
        f64::from_bits(0x7ff0_0000_0000_0001),
    ];
    for red in [
        Reduction::Add,
        Reduction::Mul,
        Reduction::Mean,
        Reduction::Max,
    ] {
        for nan in nans {
            let opts = SegmentOptions::new().dim_size(2).reduce(red);
            for coo in [false, true] {
                let mut out = [1.5, nan];
                let mut o = TensorViewMut::new(&mut out, &[2]).unwrap();
                let (s, i) = (v(&src, &[2]), v(&index, &[2]));
                match coo {
                    true => segment::segment_coo_out(&s, &i, &mut o, &opts).unwrap(),
                    false => segment::scatter_out(&s, &i, &mut o, &opts).unwrap(),
                }
                assert_eq!(out[1].to_bits(), nan.to_bits(), "{red:?}, coo {coo}");
            }
        }
    }
}

/// Shapes with no elements and dims of 2³¹ and more, which the fuzzer found: each is an
/// answer at once, never a panic, an allocation of terabytes or 2³⁵ empty loop rounds.
#[test]
fn empty_inputs_with_huge_dims_are_answered_at_once() {
    let (big, huge) = (1usize << 31, 1usize << 40);
    let opts = SegmentOptions::new();
    let nothing = [0.0f32; 0];
    // A scalar index broadcast along 2⁴⁰ positions of an empty src (was: 8 TB of lanes).
    let src = v(&nothing, &[0, huge]);
    let got = scatter(&src, &v(&[0i64], &[]), &opts).unwrap();
    assert_eq!(got.shape(), &[0, 1]);
    // No cells: logsumexp's [b, k, n] reordering and the softmax backward's positions (were
    // 2³⁵ rounds each, 30 s and more).
    let src = v(&nothing, &[0, 4, big, 4]);
    let index = v(&[0i64; 0], &[0, 4, big]);
    let o = opts.dim(0);
    assert_eq!(
        segment::scatter_logsumexp(&src, &index, &o)
            .unwrap()
            .shape(),
        &[0, 4, big, 4]
    );
    let src = v(&nothing, &[4, big, 1, 0]);
    let o = opts.dim(-2).dim_size(2);
    let g = segment::scatter_softmax_vjp(&src, &src, &src_index(&[4, big, 1, 0]), &o).unwrap();
    assert_eq!(g.shape(), &[4, big, 1, 0]);
    // b · k past usize (was: an overflow panic in the softmax's lanes).
    let src = v(&nothing, &[5, 0, big, big]);
    let o = opts.dim(1).dim_size(0);
    let index = src_index(&[5, 0, big, big]);
    assert_eq!(
        segment::scatter_softmax(&src, &index, &o).unwrap().shape(),
        &[5, 0, big, big]
    );
    // scatter_std's scratch of 2 · k accumulators with k past usize (was: an overflow panic).
    let src = v(&nothing, &[0, 2, huge, big]);
    let o = opts.dim(-3).dim_size(2);
    let std = segment::scatter_std(&src, &v(&[0i64; 0], &[0, 2]), false, &o).unwrap();
    assert_eq!(std.shape(), &[0, 2, huge, big]);
    // gather_csr with no output elements: a final offset of 2⁶³ - 1 (was: an 8-exabyte index)
    // and 2⁴⁰ lanes of a broadcast indptr (was: 128 TB).
    let src = v(&[0.0f64; 0], &[4, 0]);
    let indptr = [1i64, 2, 4, 4, i64::MAX];
    let got = gather_csr(&src, &v(&indptr, &[5]), &opts).unwrap();
    assert_eq!(got.shape(), &[i64::MAX as usize, 0]);
    let src = v(&[0.0f64; 0], &[3, 5, huge, 0]);
    let got = gather_csr(&src, &v(&[0i64; 15], &[3, 5, 1, 1]), &opts).unwrap();
    assert_eq!(got.shape(), &[3, 5, huge, 0]);
    // segment_csr's backward with no offsets at all (was: an index panic), or with lanes along
    // a zero dim.
    let one = [1.0f64];
    let none = v(&[0i64; 0], &[0]);
    let g = segment::segment_csr_vjp(&v(&[0.0; 0], &[0]), &v(&one, &[1]), &none, None, &opts);
    assert_eq!(g.unwrap().src.as_slice(), &[0.0]);
    let g = segment::gather_csr_vjp(
        &v(&[0.0f64; 0], &[4, huge, 5, 0]),
        &v(&[0i64; 20], &[4, 1, 5, 1]),
        &opts,
    );
    assert_eq!(g.unwrap().shape(), &[4, huge, 5, 0]);
}

fn src_index(shape: &[usize]) -> TensorView<'static, i64> {
    TensorView::new(&[], shape).unwrap()
}

#[test]
fn errors_name_the_argument_position_and_value() {
    let src = [1.0f32; 4];
    let e = scatter(
        &v(&src, &[4]),
        &v(&[0i64, 1, 5, 0], &[4]),
        &SegmentOptions::new().dim_size(3),
    )
    .unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::IndexOutOfRange { arg: "index", position, value: 5, size: 3, .. } if position == &[2]
    ));
    let e = scatter(
        &v(&src, &[4]),
        &v(&[0i64, -1, 0, 0], &[4]),
        &SegmentOptions::new(),
    )
    .unwrap_err();
    assert!(e.is_negative_index() && e.arg() == "index", "{e}");
    let e = segment_coo(
        &v(&src, &[4]),
        &v(&[0i64, 2, 1, 3], &[4]),
        &SegmentOptions::new(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("sorted"), "{e}");
    let e = segment_csr(
        &v(&src, &[4]),
        &v(&[0i64, 3, 2], &[3]),
        &SegmentOptions::new(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("non-decreasing") && e.arg() == "indptr",
        "{e}"
    );
    let e = segment_csr(&v(&src, &[4]), &v(&[0i64, 5], &[2]), &SegmentOptions::new()).unwrap_err();
    assert!(e.to_string().contains("[0, 4]"), "{e}");
    let e = scatter(
        &v(&src, &[4]),
        &v(&[0i64; 4], &[4]),
        &SegmentOptions::new().reduce(Reduction::Sub),
    )
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::UnsupportedReduction { .. }));
    let e = scatter_arg(&v(&src, &[4]), &v(&[0i64; 4], &[4]), &SegmentOptions::new()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::UnsupportedReduction { .. }));
    let e = scatter(
        &v(&[true], &[1]),
        &v(&[0i64], &[1]),
        &SegmentOptions::new().reduce(Reduction::Mean),
    )
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::UnsupportedReduction { .. }));
    // A 2-D index that does not broadcast.
    let e = scatter(
        &v(&src, &[2, 2]),
        &v(&[0i64; 6], &[2, 3]),
        &SegmentOptions::new(),
    )
    .unwrap_err();
    assert!(e.is_shape_error() && e.arg() == "index", "{e}");
    // An output too large to exist is an error, not an abort.
    let e = scatter(
        &v(&src, &[4, 1]),
        &v(&[0i64; 4], &[4]),
        &SegmentOptions::new().dim(0).dim_size(1 << 60),
    )
    .unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::OutOfMemory { .. } | ErrorKind::SizeOverflow { .. }
        ),
        "{e}"
    );
}

#[test]
fn out_is_untouched_on_error() {
    let mut out = [7.0f32; 3];
    let r = segment::scatter_out(
        &v(&[1.0f32, 2.0], &[2]),
        &v(&[0i64, 3], &[2]),
        &mut TensorViewMut::new(&mut out, &[3]).unwrap(),
        &SegmentOptions::new(),
    );
    assert!(r.unwrap_err().is_index_out_of_range());
    assert_eq!(out, [7.0; 3]);
}

#[test]
fn index_errors_of_single_element_scatters_name_the_index() {
    // Single elements (rows of one) run on the scatter-elements kernel, which checks the
    // indices as it folds: its refusal is reported as the segment family's, the index's
    // position and value named, and no output is written. One lane, and three lanes sharing
    // a broadcast index (each lane long enough for that kernel), at several thread counts.
    let e = 5000;
    for lanes in [1, 3] {
        let src: Vec<f32> = (0..lanes * e).map(|i| (i % 7) as f32 - 3.0).collect();
        let good: Vec<i64> = (0..e as i64).map(|i| i * 7 % 100).collect();
        for (at, value) in [
            (0, 100),
            (1234, -1),
            (e - 1, i64::MAX),
            (e / 2, i64::MIN),
            (7, i64::from(i32::MAX)),
            (8, i64::from(i32::MIN)),
        ] {
            let mut idx = good.clone();
            idx[at] = value;
            for reduce in [
                Reduction::Add,
                Reduction::Mul,
                Reduction::Max,
                Reduction::Mean,
            ] {
                for threads in [1, 2, 3] {
                    let opts = SegmentOptions::new()
                        .dim(if lanes == 1 { 0 } else { 1 })
                        .dim_size(100)
                        .reduce(reduce)
                        .par(Par::threads_exact(threads));
                    let what = format!("{lanes} lanes, {value} at {at}, {reduce:?}, {threads}T");
                    let shape = if lanes == 1 { vec![e] } else { vec![lanes, e] };
                    let sv = v(&src, &shape);
                    let iv = v(&idx, &[e]);
                    let named = |err: tensor_scatter::Error| {
                        assert_eq!(err.arg(), "index", "{what}: {err}");
                        assert!(
                            err.to_string().contains(&value.to_string()),
                            "{what}: {err}"
                        );
                        assert!(
                            err.to_string().contains(&format!("[{at}]")),
                            "{what}: {err}"
                        );
                        if value < 0 {
                            assert!(err.is_negative_index(), "{what}: {err}");
                        } else {
                            assert!(err.is_index_out_of_range(), "{what}: {err}");
                        }
                    };
                    named(scatter(&sv, &iv, &opts).unwrap_err());
                    let mut out_shape = shape.clone();
                    *out_shape.last_mut().unwrap() = 100;
                    let mut out = vec![7.0f32; lanes * 100];
                    let mut ov = TensorViewMut::new(&mut out, &out_shape).unwrap();
                    named(segment::scatter_out(&sv, &iv, &mut ov, &opts).unwrap_err());
                    assert!(out.iter().all(|&x| x == 7.0), "{what}: out written");
                    // An int32 index (one lane: read as stored, not copied into int64).
                    if let Ok(value) = i32::try_from(value) {
                        let idx32: Vec<i32> = idx.iter().map(|&i| i as i32).collect();
                        let iv = v(&idx32, &[e]);
                        named(scatter(&sv, &iv, &opts).unwrap_err());
                        let mut ov = TensorViewMut::new(&mut out, &out_shape).unwrap();
                        named(segment::scatter_out(&sv, &iv, &mut ov, &opts).unwrap_err());
                        assert!(
                            out.iter().all(|&x| x == 7.0),
                            "{what}: out written ({value})"
                        );
                        // `overwrite` (XLA's buffers) leaves `out` unspecified on error.
                        let mut ov = TensorViewMut::new(&mut out, &out_shape).unwrap();
                        let over = opts.overwrite(true);
                        named(segment::scatter_out(&sv, &iv, &mut ov, &over).unwrap_err());
                    }
                }
            }
        }
    }
}

#[test]
fn int32_and_int64_indices_give_the_same_bits() {
    // A one-lane scatter of single elements reads an int32 index as stored; a scatter of rows
    // or of several lanes reads it into int64 first. Both give the int64 index's bits, for
    // every reduction, fresh, into `out` and over it, at 1 and 2 threads, with -0.0 and NaN
    // updates, cells nothing reaches, and lengths on both sides of the parallel thresholds.
    for (e, n) in [(10usize, 4usize), (3000, 700), (200_000, 50_000)] {
        let raw = values(e, 7, n as u64 - 1);
        let idx: Vec<i64> = raw.iter().map(|&x| x as i64).collect();
        let idx32: Vec<i32> = raw.iter().map(|&x| x as i32).collect();
        let src: Vec<f32> = (0..e)
            .map(|i| match i % 13 {
                0 => -0.0,
                5 => f32::NAN,
                _ => (i as f32 * 0.61).sin(),
            })
            .collect();
        for shape in [vec![e], vec![e, 1]] {
            let sv = v(&src, &shape);
            for reduce in [
                Reduction::Add,
                Reduction::Mean,
                Reduction::Mul,
                Reduction::Min,
                Reduction::Max,
            ] {
                for threads in [1, 2] {
                    let opts = SegmentOptions::new()
                        .dim(0)
                        .dim_size(n + 1)
                        .reduce(reduce)
                        .par(Par::threads_exact(threads));
                    let what = format!("{shape:?} {reduce:?} {threads}T");
                    let bits = |x: &[f32]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                    let want = scatter(&sv, &v(&idx, &[e]), &opts).unwrap();
                    let got = scatter(&sv, &v(&idx32, &[e]), &opts).unwrap();
                    assert_eq!(bits(got.as_slice()), bits(want.as_slice()), "{what}");
                    let start: Vec<f32> = (0..want.as_slice().len()).map(|i| i as f32).collect();
                    for over in [false, true] {
                        let o = opts.overwrite(over);
                        let mut a = start.clone();
                        let mut av = TensorViewMut::new(&mut a, want.shape()).unwrap();
                        segment::scatter_out(&sv, &v(&idx, &[e]), &mut av, &o).unwrap();
                        let mut b = start.clone();
                        let mut bv = TensorViewMut::new(&mut b, want.shape()).unwrap();
                        segment::scatter_out(&sv, &v(&idx32, &[e]), &mut bv, &o).unwrap();
                        assert_eq!(bits(&b), bits(&a), "{what} out, overwrite {over}");
                        if over {
                            assert_eq!(bits(&b), bits(want.as_slice()), "{what} overwrite");
                        }
                    }
                }
            }
        }
    }
}

/// xorshift, for inputs large enough to be cut into tasks.
fn values(n: usize, seed: u64, modulo: u64) -> Vec<u64> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % modulo
        })
        .collect()
}

#[test]
fn any_thread_count_gives_the_same_bits() {
    let (e, n, f) = (140_000usize, 700usize, 24usize);
    let src: Vec<f32> = values(e * f, 7, 2001)
        .iter()
        .map(|&x| x as f32 / 7.0 - 100.0)
        .collect();
    let idx: Vec<i64> = values(e, 9, n as u64).iter().map(|&x| x as i64).collect();
    let mut sorted = idx.clone();
    sorted.sort_unstable();
    let per_elem: Vec<i64> = values(e * f, 11, n as u64)
        .iter()
        .map(|&x| x as i64)
        .collect();
    for red in [
        Reduction::Add,
        Reduction::Mean,
        Reduction::Max,
        Reduction::Min,
        Reduction::Mul,
    ] {
        let run = |threads: usize| {
            let o = SegmentOptions::new()
                .dim(0)
                .dim_size(n)
                .reduce(red)
                .par(Par::threads_exact(threads));
            let sv = v(&src, &[e, f]);
            let a = scatter(&sv, &v(&idx, &[e]), &o).unwrap().into_vec();
            let b = segment_coo(&sv, &v(&sorted, &[e]), &o).unwrap().into_vec();
            let c = scatter(&sv, &v(&per_elem, &[e, f]), &o).unwrap().into_vec();
            // Rows of one element take the scatter-elements path.
            let column = scatter(&v(&src[..e], &[e]), &v(&idx, &[e]), &o).unwrap();
            assert_eq!(column.as_slice().len(), n);
            let d = matches!(red, Reduction::Min | Reduction::Max)
                .then(|| scatter_arg(&sv, &v(&idx, &[e]), &o).unwrap().1.into_vec());
            let bits = |x: Vec<f32>| x.into_iter().map(f32::to_bits).collect::<Vec<_>>();
            (bits(a), bits(b), bits(c), d, bits(column.into_vec()))
        };
        let one = run(1);
        for t in [2, 3, 4] {
            assert!(run(t) == one, "{red:?}: {t} threads differ from 1");
        }
    }
}

#[test]
fn composites_define_their_edge_cases() {
    use tensor_scatter::segment::{
        scatter_log_softmax, scatter_logsumexp, scatter_softmax, scatter_std,
    };
    let inf = f64::INFINITY;
    // Cells: 0 = {1, 2}, 1 = {}, 2 = {-inf, -inf}, 3 = {+inf, 0}, 4 = {NaN, 1}.
    let src = [1.0, 2.0, -inf, -inf, inf, 0.0, f64::NAN, 1.0];
    let idx = [0i64, 0, 2, 2, 3, 3, 4, 4];
    let o = SegmentOptions::new();
    let lse = scatter_logsumexp(&v(&src, &[8]), &v(&idx, &[8]), &o).unwrap();
    let l = lse.as_slice();
    assert_eq!(l[0], 2.0 + (1.0 + (-1.0f64).exp()).ln());
    assert_eq!((l[1], l[2], l[3]), (-inf, -inf, inf));
    assert!(l[4].is_nan());
    let sm = scatter_softmax(&v(&src, &[8]), &v(&idx, &[8]), &o).unwrap();
    let s = sm.as_slice();
    assert!((s[0] + s[1] - 1.0).abs() < 1e-15 && s[1] > s[0]);
    assert!(s[2..].iter().all(|x| x.is_nan()), "{s:?}");
    let ls = scatter_log_softmax(&v(&src, &[8]), &v(&idx, &[8]), &o).unwrap();
    assert!((ls.as_slice()[0] - s[0].ln()).abs() < 1e-15);
    // std: {1, 3} -> sqrt(2) unbiased, 1 biased; one element -> 0; empty -> 0.
    let src = [1.0f32, 3.0, 5.0];
    let idx = [0i64, 0, 2];
    let o = SegmentOptions::new().dim_size(4);
    let u = scatter_std(&v(&src, &[3]), &v(&idx, &[3]), true, &o).unwrap();
    assert_eq!(u.as_slice(), &[2f32.sqrt(), 0.0, 0.0, 0.0]);
    let b = scatter_std(&v(&src, &[3]), &v(&idx, &[3]), false, &o).unwrap();
    assert_eq!(b.as_slice(), &[1.0, 0.0, 0.0, 0.0]);
    // Integer data is refused by the dynamic entry point with a type error.
    let e = tensor_scatter::segment_dyn(
        tensor_scatter::SegmentOp::Softmax,
        &tensor_scatter::DynTensor::from_vec(vec![1i32], &[1]).unwrap(),
        &tensor_scatter::DynTensor::from_vec(vec![0i64], &[1]).unwrap(),
        &SegmentOptions::new(),
        false,
    )
    .unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::UnsupportedDType { arg: "src", .. }),
        "{e}"
    );
}

#[test]
fn vjp_through_the_dynamic_entry_point() {
    use tensor_scatter::{DynTensor, SegmentOp, segment_vjp_dyn};
    let grad = DynTensor::from_vec(vec![4.0f32, 9.0], &[2]).unwrap();
    let src = DynTensor::from_vec(vec![1.0f32, 1.0, 1.0], &[3]).unwrap();
    let index = DynTensor::from_vec(vec![0u8, 0, 1], &[3]).unwrap();
    let out = DynTensor::from_vec(vec![0.0f32, 0.0], &[2]).unwrap();
    let mean = SegmentOptions::new().reduce(Reduction::Mean);
    let (gs, go) = segment_vjp_dyn(
        SegmentOp::Scatter,
        &grad,
        Some((&src).into()),
        &index,
        Some((&out).into()),
        &mean,
    )
    .unwrap();
    assert_eq!(gs.as_slice::<f32>(), Some(&[4.0 / 3.0, 4.0 / 3.0, 4.5][..]));
    assert_eq!(go.unwrap().as_slice::<f32>(), Some(&[4.0 / 3.0, 4.5][..]));
    // gather_coo's backward needs src's extent: from src, else from dim_size.
    let g3 = DynTensor::from_vec(vec![1.0f64, 2.0, 4.0], &[3]).unwrap();
    let o = SegmentOptions::new().dim_size(2);
    let (gs, go) = segment_vjp_dyn(SegmentOp::GatherCoo, &g3, None, &index, None, &o).unwrap();
    assert_eq!(
        (gs.as_slice::<f64>(), go.is_none()),
        (Some(&[3.0, 4.0][..]), true)
    );
    let e = segment_vjp_dyn(
        SegmentOp::GatherCoo,
        &g3,
        None,
        &index,
        None,
        &SegmentOptions::new(),
    )
    .unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::InvalidArgument {
                arg: "dim_size",
                ..
            }
        ),
        "{e}"
    );
    // Integer gradients are refused.
    let gi = DynTensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    let e = segment_vjp_dyn(SegmentOp::Scatter, &gi, None, &index, None, &mean).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::UnsupportedDType { arg: "grad", .. }),
        "{e}"
    );
    // The composites: with respect to src (logsumexp: each cell's gradient times the
    // softmax, here 1/2 in cell 0 and 1 in cell 1).
    let (gs, go) = segment_vjp_dyn(
        SegmentOp::LogSumExp,
        &grad,
        Some((&src).into()),
        &index,
        None,
        &mean,
    )
    .unwrap();
    assert_eq!(
        (gs.as_slice::<f32>(), go.is_none()),
        (Some(&[2.0, 2.0, 9.0][..]), true)
    );
    let (gs, _) = segment_vjp_dyn(
        SegmentOp::Std { unbiased: true },
        &grad,
        Some((&src).into()),
        &index,
        None,
        &mean,
    )
    .unwrap();
    assert_eq!(
        gs.as_slice::<f32>(),
        Some(&[0.0, 0.0, 0.0][..]),
        "σ = 0: no derivative, 0"
    );
    let e = segment_vjp_dyn(SegmentOp::Scatter, &grad, None, &index, None, &mean).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::InvalidArgument { arg: "src", .. }),
        "{e}"
    );
}

#[test]
fn overwrite_writes_the_result_without_out_whatever_out_held() {
    // `overwrite`: the `_out` forms write the plain call's bits over any old values (the
    // buffers XLA hands the handlers), on every path: single elements (k = 1) and rows, the
    // positions of min and max, -0.0 and NaN updates, empty cells, a strided out, 2 threads.
    let n = 4096usize;
    let mut src = Vec::new();
    for i in 0..n * 3 {
        src.push(match i % 11 {
            0 => -0.0f32,
            5 => f32::NAN,
            _ => (i as f32 * 0.37).sin(),
        });
    }
    let index: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 1500).collect();
    for (shape, dim) in [(vec![n, 3], 0i64), (vec![3, n], 1), (vec![n], 0)] {
        for red in [
            Reduction::Add,
            Reduction::Mean,
            Reduction::Mul,
            Reduction::Min,
            Reduction::Max,
        ] {
            for par in [Par::threads_exact(1), Par::threads_exact(2)] {
                let opts = SegmentOptions::new()
                    .dim(dim)
                    .dim_size(1501)
                    .reduce(red)
                    .par(par);
                let s = v(&src[..shape.iter().product::<usize>()], &shape);
                let i = v(&index, &[n]);
                let want = scatter(&s, &i, &opts).unwrap();
                let mut out = vec![12345.0f32; want.as_slice().len()];
                let mut o = TensorViewMut::new(&mut out, want.shape()).unwrap();
                segment::scatter_out(&s, &i, &mut o, &opts.overwrite(true)).unwrap();
                let bits = |x: &[f32]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&out),
                    bits(want.as_slice()),
                    "{shape:?} {red:?} {par:?}"
                );
                if matches!(red, Reduction::Min | Reduction::Max) {
                    let (wv, wa) = scatter_arg(&s, &i, &opts).unwrap();
                    out.fill(-7.0);
                    let mut o = TensorViewMut::new(&mut out, wv.shape()).unwrap();
                    let a = segment::scatter_arg_out(&s, &i, &mut o, &opts.overwrite(true));
                    assert_eq!(a.unwrap().as_slice(), wa.as_slice());
                    assert_eq!(bits(&out), bits(wv.as_slice()));
                }
            }
        }
    }
    // A cell reached only by -0.0 (a sum's identity), one by +inf (a minimum's), one by
    // nothing: each keeps the plain call's bits, whatever the buffer held.
    let s = v(&[-0.0f32, f32::INFINITY, -0.0, 2.0], &[4]);
    let i = v(&[0i64, 1, 0, 3], &[4]);
    for red in [
        Reduction::Add,
        Reduction::Mean,
        Reduction::Min,
        Reduction::Max,
    ] {
        let opts = SegmentOptions::new().dim_size(5).reduce(red);
        let want = scatter(&s, &i, &opts).unwrap();
        let mut out = [f32::NAN, -0.0, f32::NEG_INFINITY, 7.0, -3.0];
        let mut o = TensorViewMut::new(&mut out, &[5]).unwrap();
        segment::scatter_out(&s, &i, &mut o, &opts.overwrite(true)).unwrap();
        let got: Vec<u32> = out.iter().map(|f| f.to_bits()).collect();
        let want: Vec<u32> = want.as_slice().iter().map(|f| f.to_bits()).collect();
        assert_eq!(got, want, "{red:?}");
    }
    // A strided out (every other element of a buffer) takes the copying path.
    let s = v(&src[..n], &[n]);
    let i = v(&index, &[n]);
    let opts = SegmentOptions::new().dim_size(1500);
    let want = scatter(&s, &i, &opts).unwrap();
    let mut buf = vec![9.0f32; 3000];
    let mut o = TensorViewMut::with_strides(&mut buf, 0, &[1500], &[2]).unwrap();
    segment::scatter_out(&s, &i, &mut o, &opts.overwrite(true)).unwrap();
    let got: Vec<u32> = buf.iter().step_by(2).map(|f| f.to_bits()).collect();
    let want: Vec<u32> = want.as_slice().iter().map(|f| f.to_bits()).collect();
    assert_eq!(got, want);
    assert!(buf.iter().skip(1).step_by(2).all(|&x| x == 9.0));
}

#[test]
fn min_max_backward_rows_split_ties_at_any_thread_count() {
    // Large enough for the row-wise backward's tasks: a 1-D index shared by 16 columns, small
    // integers (many ties), NaN in one column; the gradient of each member that equals its
    // cell's result is g / (the cell's count of such members), written by 1, 2 and 3 threads.
    let (e, k, n) = (40_000usize, 16usize, 300usize);
    let src: Vec<f32> = (0..e * k)
        .map(|i| match i % 1013 {
            0 => f32::NAN,
            _ => ((i * 2_654_435_761) % 7) as f32,
        })
        .collect();
    let index: Vec<i64> = (0..e as i64).map(|i| (i * 7919 + 13) % n as i64).collect();
    let g: Vec<f32> = (0..n * k).map(|i| (i % 13) as f32 - 6.0).collect();
    for red in [Reduction::Max, Reduction::Min] {
        let mut want = vec![0.0f32; e * k];
        let best = scatter(
            &v(&src, &[e, k]),
            &v(&index, &[e]),
            &SegmentOptions::new().dim(0).dim_size(n).reduce(red),
        )
        .unwrap();
        let best = best.as_slice();
        let same = |x: f32, r: f32| x == r || (x.is_nan() && r.is_nan());
        let mut count = vec![0u32; n * k];
        for (ei, &s) in index.iter().enumerate() {
            for ki in 0..k {
                let c = s as usize * k + ki;
                count[c] += u32::from(same(src[ei * k + ki], best[c]));
            }
        }
        for (ei, &s) in index.iter().enumerate() {
            for ki in 0..k {
                let c = s as usize * k + ki;
                if same(src[ei * k + ki], best[c]) {
                    want[ei * k + ki] = g[c] / count[c] as f32;
                }
            }
        }
        for threads in [1, 2, 3] {
            let opts = SegmentOptions::new()
                .dim(0)
                .dim_size(n)
                .reduce(red)
                .par(Par::threads_exact(threads));
            let got = segment::scatter_vjp(
                &v(&g, &[n, k]),
                &v(&src, &[e, k]),
                &v(&index, &[e]),
                None,
                &opts,
            )
            .unwrap()
            .src;
            let bits = |x: &[f32]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(got.as_slice()),
                bits(&want),
                "{red:?} {threads} threads"
            );
        }
    }
}

/// `segment::counts` against a count one index at a time: short and long indices (the long
/// ones cut across per-task tables), four index types, 1 to 4 threads; and its errors.
#[test]
fn counts_match_a_naive_count_at_any_thread_count() {
    fn naive(index: &[i64], n: usize) -> Vec<u64> {
        let mut c = vec![0u64; n];
        for &i in index {
            c[i as usize] += 1;
        }
        c
    }
    let mut s = 7u64;
    let mut next = || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        s >> 33
    };
    for (len, n) in [
        (0, 3),
        (1, 1),
        (10, 4),
        (5, 200),
        (300_000, 7),
        (200_000, 100),
    ] {
        let index: Vec<i64> = (0..len).map(|_| (next() % n as u64) as i64).collect();
        let want = naive(&index, n);
        let narrow: Vec<i32> = index.iter().map(|&i| i as i32).collect();
        let unsigned: Vec<u64> = index.iter().map(|&i| i as u64).collect();
        let bytes: Vec<u8> = index.iter().map(|&i| i as u8).collect();
        for t in 1..=4 {
            let par = Par::threads_exact(t);
            assert_eq!(
                segment::counts(&index, n, par).unwrap(),
                want,
                "{len} {n} {t}"
            );
            assert_eq!(segment::counts(&narrow, n, par).unwrap(), want);
            assert_eq!(segment::counts(&unsigned, n, par).unwrap(), want);
            if n <= 256 {
                assert_eq!(segment::counts(&bytes, n, par).unwrap(), want);
            }
        }
    }
    for (bad, at) in [(-1i64, 2usize), (4, 0), (i64::MAX, 3)] {
        let mut index = vec![0i64; 400_000];
        index[at] = bad;
        for t in [1, 2] {
            let e = segment::counts(&index, 4, Par::threads_exact(t)).unwrap_err();
            let msg = e.to_string();
            assert!(
                msg.contains("counts") && msg.contains(&format!("[{at}]")),
                "{msg}"
            );
            assert!(msg.contains(&bad.to_string()), "{msg}");
        }
    }
    let e = segment::counts(&[u64::MAX], 4, Par::default()).unwrap_err();
    assert!(e.to_string().contains("counts"), "{e}");
}
