//! The gathers at the library's real parallel thresholds (large inputs, against a hand-written
//! loop), their errors (each naming its argument, the output unchanged) and the adapters'
//! rules.

use tensor_scatter::{
    DynGatherOptions, DynTensor, ErrorKind, GatherOp, GatherOptions, GatherOutOfRange,
    NegativeIndices, Par, TensorView, TensorViewMut, bnns, directml, gather, gather_dyn,
    gather_dyn_out, gather_elements, gather_nd, gather_out, onnx, openvino,
};

mod common;
use common::lcg;

fn t<T: tensor_scatter::Element>(v: Vec<T>, s: &[usize]) -> DynTensor {
    DynTensor::from_vec(v, s).unwrap()
}

#[test]
fn embedding_lookup_at_real_thresholds_matches_a_loop_for_every_thread_count() {
    let (rows, width, n) = (5000usize, 64usize, 20_000usize);
    let table: Vec<f32> = (0..rows * width).map(|v| v as f32).collect();
    let mut idx = lcg(7, n, rows as u64);
    for (i, v) in idx.iter_mut().enumerate().step_by(3) {
        *v -= rows as i64 * (i as i64 % 2); // some negative (wrapping) indices
    }
    let mut want = Vec::with_capacity(n * width);
    for &i in &idx {
        let r = if i < 0 { i + rows as i64 } else { i } as usize;
        want.extend_from_slice(&table[r * width..(r + 1) * width]);
    }
    let tv = TensorView::new(&table, &[rows, width]).unwrap();
    let iv = TensorView::new(&idx, &[n]).unwrap();
    for threads in [1, 2, 3, 8] {
        let opts = GatherOptions::new().par(Par::threads_exact(threads));
        let got = gather(&tv, &iv, &opts).unwrap();
        assert_eq!(got.shape(), &[n, width]);
        assert!(got.as_slice() == want.as_slice(), "{threads} threads");
        let mut out = vec![f32::NAN; n * width];
        gather_out(
            &tv,
            &iv,
            &mut TensorViewMut::new(&mut out, &[n, width]).unwrap(),
            &opts,
        )
        .unwrap();
        assert!(out == want, "into, {threads} threads");
    }
}

/// Lookup of `idx` rows of `width` cells from a `rows`-row table, by a hand-written loop:
/// negative indices wrap once, then out-of-range rows are clamped or filled with `fill`.
fn lookup_loop<T: Copy>(table: &[T], width: usize, idx: &[i64], clamp: bool, fill: T) -> Vec<T> {
    let rows = (table.len() / width) as i64;
    let mut want = Vec::with_capacity(idx.len() * width);
    for &i in idx {
        let w = if i < 0 { i + rows } else { i };
        match (w, clamp) {
            (0.., _) if w < rows => {
                want.extend_from_slice(&table[w as usize * width..][..width]);
            }
            (_, true) => {
                let r = w.clamp(0, rows - 1) as usize;
                want.extend_from_slice(&table[r * width..][..width]);
            }
            (_, false) => want.extend(std::iter::repeat_n(fill, width)),
        }
    }
    want
}

/// Wide-row lookups (one index axis, no leading dims, rows of at least a cache line) take a
/// dedicated loop: check it over row widths around a line and past the inline-copy limit,
/// every out-of-range policy, thread counts and instruction-set levels.
fn wide_row_lookups<T: tensor_scatter::Element + PartialEq + std::fmt::Debug>(
    widths: &[usize],
    cell: impl Fn(usize) -> T,
    fill: T,
) {
    use tensor_scatter::isa::{Isa, with_isa};
    // n rows of at least 64 + 8 bytes each: past the 1 MiB parallel threshold.
    let (rows, n) = (3000usize, 20_000usize);
    for &width in widths {
        let table: Vec<T> = (0..rows * width).map(&cell).collect();
        let mut idx = lcg(11, n, rows as u64 * 3);
        for v in idx.iter_mut() {
            *v -= rows as i64 + 7; // in [-rows-7, 2 rows-7): wrapped, in range and past both ends
        }
        let tv = TensorView::new(&table, &[rows, width]).unwrap();
        let iv = TensorView::new(&idx, &[n]).unwrap();
        for (policy, clamp) in [
            (GatherOutOfRange::Clamp, true),
            (GatherOutOfRange::Fill, false),
        ] {
            let want = lookup_loop(&table, width, &idx, clamp, fill);
            for isa in [Isa::Baseline, Isa::Avx2, Isa::Avx512] {
                for threads in [1, 2, 3] {
                    let opts = GatherOptions::new()
                        .out_of_range(policy)
                        .fill_value(fill)
                        .par(Par::threads_exact(threads));
                    let Ok(got) = with_isa(isa, || gather(&tv, &iv, &opts).unwrap()) else {
                        continue; // this CPU lacks the level
                    };
                    assert!(
                        got.as_slice() == want.as_slice(),
                        "width {width}, {policy:?}, {isa:?}, {threads} threads"
                    );
                }
            }
        }
        // The default policy refuses the out-of-range rows, naming the first one.
        let first = idx
            .iter()
            .position(|&i| i < -(rows as i64) || i >= rows as i64)
            .unwrap();
        let err = gather(&tv, &iv, &GatherOptions::new()).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::IndexOutOfRange { position, value, .. }
                if position == &[first] && *value == i128::from(idx[first])),
            "{err}"
        );
    }
}

#[test]
fn wide_row_lookups_match_a_loop_for_every_policy_thread_count_and_isa() {
    // f32 rows of 64 to 2,400 bytes (past the 1,024-byte inline copy), u8 rows of exactly a
    // line, f64 rows past the inline copy.
    wide_row_lookups(&[16, 17, 64, 600], |v| v as f32, -1.5f32);
    wide_row_lookups(&[64, 65], |v| v as u8, 0xAAu8);
    wide_row_lookups(&[300], |v| v as f64, f64::INFINITY);
}

/// `gather` along axis 2 of `data [b, l, n, inner]` with `indices [b, t]` and `batch_dims`
/// 1 (or `indices [t]` and `batch_dims` 0 when `b == 1`), as a loop: `out[b, l, t, i] =
/// data[b, l, idx[b, t], i]`, wrapped negatives, out-of-range clamped or filled.
#[allow(clippy::too_many_arguments)]
fn inner_axis_loop<T: Copy>(
    data: &[T],
    (b, l, n, inner): (usize, usize, usize, usize),
    idx: &[i64],
    t: usize,
    clamp: bool,
    fill: T,
) -> Vec<T> {
    let mut want = Vec::with_capacity(b * l * t * inner);
    for bb in 0..b {
        for ll in 0..l {
            for &i in &idx[bb * t..(bb + 1) * t] {
                let w = if i < 0 { i + n as i64 } else { i };
                let p = if (0..n as i64).contains(&w) || clamp {
                    w.clamp(0, n as i64 - 1) as usize
                } else {
                    want.extend(std::iter::repeat_n(fill, inner));
                    continue;
                };
                let at = ((bb * l + ll) * n + p) * inner;
                want.extend_from_slice(&data[at..at + inner]);
            }
        }
    }
    want
}

/// Gathers of narrow slices along an inner axis (index_select on the last dim, or nearly),
/// whose index list is shared by many lead rows, take a loop of their own: check it against
/// [`inner_axis_loop`] for every out-of-range policy, thread count and instruction-set level,
/// with and without batch dims, and with data rows that are prefetched (4 to 64 KiB) or not.
fn inner_axis_gathers<T: tensor_scatter::Element + PartialEq + std::fmt::Debug>(
    shapes: &[(usize, usize, usize, usize, usize)],
    cell: impl Fn(usize) -> T,
    fill: T,
) {
    use tensor_scatter::isa::{Isa, with_isa};
    for &(b, l, n, inner, t) in shapes {
        let data: Vec<T> = (0..b * l * n * inner).map(&cell).collect();
        let mut idx = lcg(5, b * t, n as u64 * 3);
        for v in idx.iter_mut() {
            *v -= n as i64 + 3; // in [-n-3, 2n-3): wrapped, in range and past both ends
        }
        let dv = TensorView::new(&data, &[b, l, n, inner]).unwrap();
        let (ishape, batch_dims) = if b == 1 {
            (vec![t], 0)
        } else {
            (vec![b, t], 1)
        };
        let (data_view, axis) = if b == 1 {
            (TensorView::new(&data, &[l, n, inner]).unwrap(), 1)
        } else {
            (dv, 2)
        };
        let iv = TensorView::new(&idx, &ishape).unwrap();
        for (policy, clamp) in [
            (GatherOutOfRange::Clamp, true),
            (GatherOutOfRange::Fill, false),
        ] {
            let want = inner_axis_loop(&data, (b, l, n, inner), &idx, t, clamp, fill);
            for isa in [Isa::Baseline, Isa::Avx2, Isa::Avx512] {
                for threads in [1, 2, 3] {
                    let opts = GatherOptions::new()
                        .axis(axis)
                        .batch_dims(batch_dims)
                        .out_of_range(policy)
                        .fill_value(fill)
                        .par(Par::threads_exact(threads));
                    let Ok(got) = with_isa(isa, || gather(&data_view, &iv, &opts).unwrap()) else {
                        continue; // this CPU lacks the level
                    };
                    assert!(
                        got.as_slice() == want.as_slice(),
                        "{:?}, {policy:?}, {isa:?}, {threads} threads",
                        (b, l, n, inner, t)
                    );
                }
            }
        }
        // The default policy refuses the out-of-range indices, naming the first one.
        let first = idx
            .iter()
            .position(|&i| i < -(n as i64) || i >= n as i64)
            .unwrap();
        let opts = GatherOptions::new().axis(axis).batch_dims(batch_dims);
        let err = gather(&data_view, &iv, &opts).unwrap_err();
        let want_pos = if b == 1 {
            vec![first]
        } else {
            vec![first / t, first % t]
        };
        assert!(
            matches!(err.kind(), ErrorKind::IndexOutOfRange { position, value, .. }
                if position == &want_pos && *value == i128::from(idx[first])),
            "{err}"
        );
    }
}

#[test]
fn inner_axis_gathers_match_a_loop_for_every_policy_thread_count_and_isa() {
    // (b, l, n, inner, t): one-cell slices with 16 KiB data rows (prefetched) and 2 KB rows
    // (not), slices of 3 and 15 cells (60 bytes, the widest narrow slice), batch dims.
    inner_axis_gathers(
        &[
            (1, 300, 4096, 1, 1000),
            (1, 700, 500, 1, 600),
            (1, 200, 300, 15, 100),
        ],
        |v| v as f32,
        -2.5f32,
    );
    inner_axis_gathers(
        &[(1, 400, 900, 3, 500), (4, 60, 700, 1, 900)],
        |v| v as u16,
        0xBEEFu16,
    );
    inner_axis_gathers(&[(3, 50, 1000, 2, 800)], |v| v as f64, f64::NEG_INFINITY);
}

#[test]
fn take_along_axis_at_real_thresholds_matches_a_loop() {
    let (r, c, k) = (300usize, 700usize, 250usize);
    let data: Vec<u16> = (0..r * c).map(|v| v as u16).collect();
    let idx = lcg(3, r * k, c as u64);
    let mut want = vec![0u16; r * k];
    for i in 0..r {
        for j in 0..k {
            want[i * k + j] = data[i * c + idx[i * k + j] as usize];
        }
    }
    for threads in [1, 2, 5] {
        let got = gather_elements(
            &TensorView::new(&data, &[r, c]).unwrap(),
            &TensorView::new(&idx, &[r, k]).unwrap(),
            &GatherOptions::new()
                .axis(1)
                .par(Par::threads_exact(threads)),
        )
        .unwrap();
        assert_eq!(got.as_slice(), want.as_slice(), "{threads} threads");
    }
}

#[test]
fn a_bad_index_as_the_last_of_many_is_reported_and_the_output_is_untouched() {
    let data: Vec<i32> = (0..1000).collect();
    let mut idx = lcg(1, 300_000, 1000);
    idx[299_999] = 1000;
    let mut out = vec![-5i32; 300_000];
    let err = gather_out(
        &TensorView::new(&data, &[1000]).unwrap(),
        &TensorView::new(&idx, &[300_000]).unwrap(),
        &mut TensorViewMut::new(&mut out, &[300_000]).unwrap(),
        &GatherOptions::new(),
    )
    .unwrap_err();
    assert_eq!(err.arg(), "indices");
    assert!(
        matches!(err.kind(), ErrorKind::IndexOutOfRange { position, value: 1000, dim: 0, size: 1000, .. } if position == &[299_999]),
        "{err}"
    );
    assert!(out.iter().all(|&v| v == -5));
}

#[test]
fn each_nd_component_is_checked_against_its_own_dimension() {
    // (0, 3) addresses linear offset 3 of a 2 × 3 tensor (valid), but 3 is out of range for
    // dimension 1.
    let err = gather_nd(
        &TensorView::new(&[1u8, 2, 3, 4, 5, 6], &[2, 3]).unwrap(),
        &TensorView::new(&[0i64, 3], &[1, 2]).unwrap(),
        &GatherOptions::new(),
    )
    .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::IndexOutOfRange { position, value: 3, dim: 1, size: 3, .. } if position == &[0, 1]),
        "{err}"
    );
}

#[test]
fn clamp_and_fill_policies() {
    let data = TensorView::new(&[1.0f64, 2.0, 3.0], &[3]).unwrap();
    let idx = TensorView::new(&[-4i64, 5, 1], &[3]).unwrap();
    let clamp = gather(
        &data,
        &idx,
        &GatherOptions::new().out_of_range(GatherOutOfRange::Clamp),
    )
    .unwrap();
    assert_eq!(clamp.as_slice(), &[1.0, 3.0, 2.0]);
    let fill = gather(
        &data,
        &idx,
        &GatherOptions::new()
            .out_of_range(GatherOutOfRange::Fill)
            .fill_value(f64::NAN),
    )
    .unwrap();
    assert!(fill.as_slice()[0].is_nan() && fill.as_slice()[1].is_nan());
    assert_eq!(fill.as_slice()[2], 2.0);
    let err = gather(
        &data,
        &TensorView::new(&[-1i64], &[1]).unwrap(),
        &GatherOptions::new().negative(NegativeIndices::Error),
    )
    .unwrap_err();
    assert!(err.is_negative_index());
    // Clamping into an empty axis has no valid position: an error, not a read.
    let empty: [f64; 0] = [];
    let err = gather(
        &TensorView::new(&empty, &[0]).unwrap(),
        &TensorView::new(&[0i64], &[1]).unwrap(),
        &GatherOptions::new().out_of_range(GatherOutOfRange::Clamp),
    )
    .unwrap_err();
    assert!(err.is_index_out_of_range());
}

#[test]
fn shape_errors_name_their_argument() {
    let d = TensorView::new(&[0i8; 6], &[2, 3]).unwrap();
    let cases: Vec<(tensor_scatter::Error, &str)> = vec![
        (
            gather(
                &d,
                &TensorView::new(&[0i64], &[1]).unwrap(),
                &GatherOptions::new().axis(2),
            )
            .unwrap_err(),
            "axis",
        ),
        (
            gather(
                &d,
                &TensorView::new(&[0i64, 0], &[2, 1]).unwrap(),
                &GatherOptions::new().axis(1).batch_dims(3),
            )
            .unwrap_err(),
            "batch_dims",
        ),
        (
            gather(
                &d,
                &TensorView::new(&[0i64; 3], &[3, 1]).unwrap(),
                &GatherOptions::new().axis(1).batch_dims(1),
            )
            .unwrap_err(),
            "indices",
        ),
        (
            gather_elements(
                &d,
                &TensorView::new(&[0i64; 2], &[2]).unwrap(),
                &GatherOptions::new(),
            )
            .unwrap_err(),
            "indices",
        ),
        (
            gather_nd(
                &d,
                &TensorView::new(&[0i64; 3], &[1, 3]).unwrap(),
                &GatherOptions::new(),
            )
            .unwrap_err(),
            "indices",
        ),
        (
            gather_nd(
                &d,
                &TensorView::new(&[0i64; 2], &[2, 1]).unwrap(),
                &GatherOptions::new().batch_dims(2),
            )
            .unwrap_err(),
            "batch_dims",
        ),
    ];
    for (err, arg) in cases {
        assert_eq!(err.arg(), arg, "{err}");
        assert!(err.to_string().contains(arg), "{err}");
    }
    let mut out = [7i8; 3];
    let err = gather_out(
        &d,
        &TensorView::new(&[0i64], &[1]).unwrap(),
        &mut TensorViewMut::new(&mut out, &[3]).unwrap(),
        &GatherOptions::new(),
    )
    .unwrap_err();
    assert_eq!(err.arg(), "out");
    assert_eq!(out, [7; 3]);
}

#[test]
fn dyn_fill_value_must_match_data() {
    let data = t(vec![1i32, 2], &[2]);
    let idx = t(vec![5i64], &[1]);
    let opts = |fill: DynTensor| {
        DynGatherOptions::new()
            .out_of_range(GatherOutOfRange::Fill)
            .fill_value(Some(fill))
    };
    let err = gather_dyn(GatherOp::Gather, &data, &idx, &opts(t(vec![1.0f32], &[]))).unwrap_err();
    assert_eq!(err.arg(), "fill_value");
    let err = gather_dyn(GatherOp::Gather, &data, &idx, &opts(t(vec![1i32, 2], &[2]))).unwrap_err();
    assert_eq!(err.arg(), "fill_value");
    let ok = gather_dyn(GatherOp::Gather, &data, &idx, &opts(t(vec![-9i32], &[1]))).unwrap();
    assert_eq!(ok.as_slice::<i32>(), Some(&[-9][..]));
    let err = gather_dyn(
        GatherOp::Gather,
        &data,
        &t(vec![0.0f32], &[1]),
        &opts(t(vec![0i32], &[])),
    )
    .unwrap_err();
    assert_eq!(err.arg(), "indices");
    let mut out = t(vec![0u8], &[1]);
    let err = gather_dyn_out(
        GatherOp::Gather,
        &data,
        &t(vec![0i64], &[1]),
        &mut out,
        &DynGatherOptions::new(),
    )
    .unwrap_err();
    assert_eq!(err.arg(), "out");
}

#[test]
fn adapters_follow_their_specs() {
    // ONNX GatherND needs int64 indices and tuples of at least one component.
    let d = t(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    assert_eq!(
        onnx::gather_nd(&d, &t(vec![0i32], &[1, 1]), 0)
            .unwrap_err()
            .arg(),
        "indices"
    );
    assert_eq!(
        onnx::gather_nd(&d, &t(Vec::<i64>::new(), &[2, 0]), 0)
            .unwrap_err()
            .op(),
        "GatherND"
    );
    // ONNX Gather: out of range is an error; OpenVINO Gather-8: zeros.
    let idx = t(vec![2i64], &[1]);
    assert!(
        onnx::gather(&d, &idx, 0)
            .unwrap_err()
            .is_index_out_of_range()
    );
    let ov = openvino::gather(&d, &idx, &t(vec![0i32], &[]), 0).unwrap();
    assert_eq!(ov.as_slice::<f32>(), Some(&[0.0f32, 0.0][..]));
    // OpenVINO GatherElements-6: negative indices are outside [0, s - 1].
    assert!(
        openvino::gather_elements(&d, &t(vec![-1i64, 0], &[1, 2]), 0)
            .unwrap_err()
            .is_negative_index()
    );
    // DirectML: no bool data, indices of the input's DimensionCount, strict element sizes.
    assert_eq!(
        directml::gather(&t(vec![true], &[1]), &t(vec![0u32], &[1]), 0, 1)
            .unwrap_err()
            .arg(),
        "data"
    );
    assert_eq!(
        directml::gather_elements(&d, &t(vec![0u32], &[1, 1]), 0)
            .unwrap_err()
            .arg(),
        "indices"
    );
    // DirectML GATHER example 4: axis 2 of {1, 3, 3} with indices {1, 1, 2}.
    let out = directml::gather(
        &t((1..=9).map(|v| v as f32).collect(), &[1, 3, 3]),
        &t(vec![0u32, 2], &[1, 1, 2]),
        2,
        2,
    )
    .unwrap();
    assert_eq!(out.shape(), &[3, 1, 2]);
    assert_eq!(
        out.as_slice::<f32>(),
        Some(&[1.0f32, 3.0, 4.0, 6.0, 7.0, 9.0][..])
    );
    // BNNS: the output must have the gathered shape; 2-D indices on 3-D input are refused.
    let mut wrong = t(vec![0.0f32; 3], &[3]);
    let err = bnns::gather(0, &d, &t(vec![1i32], &[1]), &mut wrong).unwrap_err();
    assert_eq!(err.arg(), "out");
    assert_eq!(wrong.as_slice::<f32>(), Some(&[0.0f32; 3][..]));
    let mut out = t(vec![0.0f32; 2], &[1, 2]);
    bnns::gather(0, &d, &t(vec![1i32], &[1]), &mut out).unwrap();
    assert_eq!(out.as_slice::<f32>(), Some(&[3.0f32, 4.0][..]));
    let err = bnns::gather(
        0,
        &t(vec![0.0f32; 8], &[2, 2, 2]),
        &t(vec![0i32; 4], &[2, 2]),
        &mut out,
    )
    .unwrap_err();
    assert_eq!(err.arg(), "indices");
}

/// The gathers' former `_into` names still work for one release, as the `_out` forms.
#[test]
#[allow(deprecated)]
fn deprecated_into_names_are_the_out_forms() {
    let d = TensorView::new(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    let i = TensorView::new(&[1i64, 0], &[2]).unwrap();
    let opts = GatherOptions::new();
    let (mut a, mut b) = ([0i32; 4], [0i32; 4]);
    tensor_scatter::gather_into(
        &d,
        &i,
        &mut TensorViewMut::new(&mut a, &[2, 2]).unwrap(),
        &opts,
    )
    .unwrap();
    gather_out(
        &d,
        &i,
        &mut TensorViewMut::new(&mut b, &[2, 2]).unwrap(),
        &opts,
    )
    .unwrap();
    assert_eq!((a, b), ([3, 4, 1, 2], [3, 4, 1, 2]));
    let i2 = TensorView::new(&[1i64, 0, 0, 0], &[2, 2]).unwrap();
    tensor_scatter::gather_elements_into(
        &d,
        &i2,
        &mut TensorViewMut::new(&mut a, &[2, 2]).unwrap(),
        &opts,
    )
    .unwrap();
    assert_eq!(a, [3, 2, 1, 2]);
    let i3 = TensorView::new(&[1i64, 1], &[1, 2]).unwrap();
    let mut c = [0i32; 1];
    tensor_scatter::gather_nd_into(
        &d,
        &i3,
        &mut TensorViewMut::new(&mut c, &[1]).unwrap(),
        &opts,
    )
    .unwrap();
    assert_eq!(c, [4]);
    let mut out = t(vec![0i32; 2], &[2]);
    tensor_scatter::gather_dyn_into(
        GatherOp::Elements,
        &t(vec![5i32, 6, 7], &[3]),
        &t(vec![2i64, 0], &[2]),
        &mut out,
        &DynGatherOptions::new(),
    )
    .unwrap();
    assert_eq!(out.as_slice::<i32>(), Some(&[7, 5][..]));
}
