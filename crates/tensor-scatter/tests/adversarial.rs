//! The adversarial categories A–I of research/reliability.md §7, one module each, for all six
//! operators. Every error test checks the error's kind, that its argument name appears in the
//! message, and that the destination (an `_into` call's buffer, poisoned where it has
//! padding) is bit-for-bit unchanged afterwards. Test names cite the peer bug they replay
//! where there is one.

use tensor_scatter::half::{bf16, f16};
use tensor_scatter::{
    Accumulation, DType, DynGatherOptions, DynTensor, Element, Error, ErrorKind, GatherOp,
    GatherOptions, GatherOutOfRange, IndexInt, NegativeIndices, Par, Reduction, ScatterOp,
    ScatterOptions, TensorView, TensorViewMut, gather_dyn, gather_dyn_out, onnx, openvino,
    scatter_dyn, scatter_dyn_into,
};

fn t<T: Element>(v: Vec<T>, s: &[usize]) -> DynTensor {
    DynTensor::from_vec(v, s).unwrap()
}

fn bits(d: &DynTensor) -> Vec<u64> {
    fn all<T: Element>(d: &DynTensor) -> Option<Vec<u64>> {
        d.as_slice::<T>()
            .map(|s| s.iter().map(|x| x.to_bits_u64()).collect())
    }
    all::<f32>(d)
        .or_else(|| all::<i32>(d))
        .or_else(|| all::<f16>(d))
        .or_else(|| all::<u8>(d))
        .or_else(|| all::<i8>(d))
        .or_else(|| all::<bool>(d))
        .or_else(|| all::<f64>(d))
        .or_else(|| all::<i64>(d))
        .expect("a dtype these tests use")
}

/// The error must name `arg`, in `arg()` and in the message.
fn names(err: &Error, arg: &str) {
    assert_eq!(err.arg(), arg, "{err}");
    assert!(err.to_string().contains(arg), "{err}");
}

/// A scatter into a copy of `data` that must fail on `arg`, leaving the copy unchanged.
fn scatter_fails(
    op: ScatterOp,
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    opts: &ScatterOptions,
    arg: &str,
) -> ErrorKind {
    let mut dest = data.clone();
    let err = scatter_dyn_into(op, &mut dest, indices, updates, opts).unwrap_err();
    names(&err, arg);
    assert_eq!(bits(&dest), bits(data), "destination changed after {err}");
    // The allocating form fails the same way.
    let again = scatter_dyn(op, data, indices, updates, opts).unwrap_err();
    assert_eq!(again, err);
    err.kind().clone()
}

/// A gather that must fail on `arg`; with `out_shape`, the `_into` form must fail the same
/// way and leave a poisoned output of that shape unchanged.
fn gather_fails(
    op: GatherOp,
    data: &DynTensor,
    indices: &DynTensor,
    opts: &DynGatherOptions,
    out_shape: Option<&[usize]>,
    arg: &str,
) -> ErrorKind {
    let err = gather_dyn(op, data, indices, opts).unwrap_err();
    names(&err, arg);
    if let Some(shape) = out_shape {
        let n: usize = shape.iter().product();
        let poison = t(vec![f32::from_bits(0x7fc0_dead); n], shape);
        let mut out = poison.clone();
        let e2 = gather_dyn_out(op, data, indices, &mut out, opts).unwrap_err();
        assert_eq!(e2, err);
        assert_eq!(bits(&out), bits(&poison), "output changed after {err}");
    }
    err.kind().clone()
}

fn data23() -> DynTensor {
    t(vec![1.5f32, -0.0, f32::NAN, 4.0, 5.0, 6.0], &[2, 3])
}

/// Out-of-range values of index dtype `I` for a dimension of size 3: whatever of
/// {MIN, MAX, -4 (= -s-1), 3 (= s)} the type can hold.
fn bad_values<I: IndexInt + TryFrom<i128>>() -> Vec<I> {
    let mut v: Vec<I> = [i128::MIN, i128::MAX, -4, 3, 4, 1 << 31, 1 << 32]
        .into_iter()
        .filter_map(|x| I::try_from(x).ok())
        .collect();
    // The type's own extremes.
    for x in [
        i128::from(i64::MIN),
        i128::from(i64::MAX),
        i128::from(u64::MAX),
    ] {
        if let Ok(i) = I::try_from(x) {
            v.push(i);
        }
    }
    macro_rules! ext {
        ($($t:ty),*) => {$(
            if I::DTYPE == <$t as IndexInt>::DTYPE {
                for x in [<$t>::MIN as i128, <$t>::MAX as i128] {
                    if let Ok(i) = I::try_from(x) { v.push(i); }
                }
            }
        )*};
    }
    ext!(i8, i16, i32, i64, u8, u16, u32, u64);
    v.retain(|i| {
        let x = i.to_i128();
        !(-3..3).contains(&x)
    });
    v
}

mod a_index_values {
    use super::*;

    /// Every index dtype's extremes, -s-1 and s, in every operator: errors naming `indices`
    /// with the value as stored; -s and s-1 (the boundaries, openvino PR #37129) are valid.
    fn every_op_refuses<I>()
    where
        I: IndexInt + Element + TryFrom<i128>,
    {
        let data = data23();
        for bad in bad_values::<I>() {
            let v = bad.to_i128();
            let one = |shape: &[usize], n: usize| {
                let mut idx = vec![I::try_from(0).ok().unwrap(); n];
                idx[n - 1] = bad;
                t(idx, shape)
            };
            // scatter_elements along axis 1: indices [1, 2]
            let k = scatter_fails(
                ScatterOp::Elements,
                &data,
                &one(&[1, 2], 2),
                &t(vec![9.0f32; 2], &[1, 2]),
                &ScatterOptions::new().axis(1),
                "indices",
            );
            assert!(
                matches!(k, ErrorKind::IndexOutOfRange { value, .. } | ErrorKind::NegativeIndex { value, .. } if value == v),
                "{k:?}"
            );
            // scatter_nd: one tuple (0, bad)
            scatter_fails(
                ScatterOp::Nd,
                &data,
                &one(&[1, 2], 2),
                &t(vec![9.0f32], &[1]),
                &ScatterOptions::new(),
                "indices",
            );
            // scatter_update along axis 1 (negative indices are errors by default there too)
            scatter_fails(
                ScatterOp::Update,
                &data,
                &one(&[2], 2),
                &t(vec![9.0f32; 4], &[2, 2]),
                &ScatterOptions::new().axis(1),
                "indices",
            );
            let g = DynGatherOptions::new().axis(1);
            gather_fails(
                GatherOp::Gather,
                &data,
                &one(&[2], 2),
                &g,
                Some(&[2, 2]),
                "indices",
            );
            gather_fails(
                GatherOp::Elements,
                &data,
                &one(&[2, 1], 2),
                &g,
                Some(&[2, 1]),
                "indices",
            );
            gather_fails(
                GatherOp::Nd,
                &data,
                &one(&[1, 2], 2),
                &DynGatherOptions::new(),
                Some(&[1]),
                "indices",
            );
        }
        // The boundaries are valid: -3 (where the type has negatives) and 2.
        for edge in [-3i128, 2] {
            let Ok(i) = I::try_from(edge) else { continue };
            let out = gather_dyn(
                GatherOp::Gather,
                &data,
                &t(vec![i], &[1]),
                &DynGatherOptions::new().axis(1),
            )
            .unwrap();
            let col = if edge < 0 { 0 } else { 2 };
            assert_eq!(
                bits(&out),
                vec![
                    data.as_slice::<f32>().unwrap()[col].to_bits_u64(),
                    data.as_slice::<f32>().unwrap()[3 + col].to_bits_u64()
                ]
            );
        }
    }

    #[test]
    fn extremes_of_every_index_dtype_are_errors_in_every_operator() {
        every_op_refuses::<i8>();
        every_op_refuses::<i16>();
        every_op_refuses::<i32>();
        every_op_refuses::<i64>();
        every_op_refuses::<u8>();
        every_op_refuses::<u16>();
        every_op_refuses::<u32>();
        every_op_refuses::<u64>();
    }

    #[test]
    fn u64_max_is_never_minus_one() {
        // As raw bits u64::MAX is -1; it must be the value 18446744073709551615.
        let err = gather_dyn(
            GatherOp::Gather,
            &data23(),
            &t(vec![u64::MAX], &[1]),
            &DynGatherOptions::new().axis(1),
        )
        .unwrap_err();
        assert!(err.to_string().contains("18446744073709551615"), "{err}");
    }

    /// CVE-2022-35939 / openvino PR #37125: each ND component is checked against its own
    /// dimension, never the linear offset. (0, 3) and (1, -4) on a 2 × 3 tensor have valid
    /// linear offsets 3 and -1.
    #[test]
    fn nd_components_are_checked_one_by_one() {
        for tuple in [[0i64, 3], [1, -4], [-3, 0]] {
            let k = scatter_fails(
                ScatterOp::Nd,
                &data23(),
                &t(tuple.to_vec(), &[1, 2]),
                &t(vec![9.0f32], &[1]),
                &ScatterOptions::new(),
                "indices",
            );
            assert!(matches!(k, ErrorKind::IndexOutOfRange { .. }), "{k:?}");
            let k = gather_fails(
                GatherOp::Nd,
                &data23(),
                &t(tuple.to_vec(), &[1, 2]),
                &DynGatherOptions::new(),
                Some(&[1]),
                "indices",
            );
            // The position names the tuple and the component.
            let bad_component = if tuple[0] == -3 { 0 } else { 1 };
            assert!(
                matches!(k, ErrorKind::IndexOutOfRange { ref position, .. } if position == &[0, bad_component]),
                "{k:?}"
            );
        }
    }

    /// A bad index as the last of 10⁵ (the parallel check must still find it, and report that
    /// position) in every operator, at 1 and 4 threads.
    #[test]
    fn a_bad_index_as_the_last_of_100_000() {
        const N: usize = 100_000;
        let mut idx = vec![1i64; N];
        idx[N - 1] = 7;
        for par in [Par::Sequential, Par::threads_exact(4)] {
            let so = ScatterOptions::new().par(par);
            let data = t(vec![0.0f32; 3 * 1000], &[3, 1000]);
            // scatter_elements along axis 0: indices [100, 1000]
            let k = scatter_fails(
                ScatterOp::Elements,
                &data,
                &t(idx.clone(), &[100, 1000]),
                &t(vec![1.0f32; N], &[100, 1000]),
                &so.axis(0).reduction(Reduction::Add),
                "indices",
            );
            assert!(
                matches!(k, ErrorKind::IndexOutOfRange { ref position, value: 7, .. } if position == &[99, 999])
            );
            let k = scatter_fails(
                ScatterOp::Nd,
                &data,
                &t(idx.clone(), &[N, 1]),
                &t(vec![1.0f32; N * 1000], &[N, 1000]),
                &so,
                "indices",
            );
            assert!(
                matches!(k, ErrorKind::IndexOutOfRange { ref position, .. } if position == &[N - 1, 0])
            );
            let g = DynGatherOptions::new().par(par);
            let k = gather_fails(
                GatherOp::Gather,
                &data,
                &t(idx.clone(), &[N]),
                &g,
                Some(&[N, 1000]),
                "indices",
            );
            assert!(
                matches!(k, ErrorKind::IndexOutOfRange { ref position, .. } if position == &[N - 1])
            );
            gather_fails(
                GatherOp::Elements,
                &data,
                &t(idx.clone(), &[100, 1000]),
                &g,
                Some(&[100, 1000]),
                "indices",
            );
            gather_fails(
                GatherOp::Nd,
                &data,
                &t(idx.clone(), &[N, 1]),
                &g,
                Some(&[N, 1000]),
                "indices",
            );
        }
    }

    /// OpenVINO ScatterUpdate-3 and GatherElements-6 refuse negative indices (their specs);
    /// the generic operators refuse them under `NegativeIndices::Error`.
    #[test]
    fn negative_indices_where_the_spec_forbids_them() {
        let data = data23();
        let err = openvino::scatter_update(
            &data,
            &t(vec![-1i32], &[1]),
            &t(vec![9.0f32; 2], &[2, 1]),
            &t(vec![1i64], &[]),
        )
        .unwrap_err();
        names(&err, "indices");
        assert!(err.is_negative_index(), "{err}");
        let err = openvino::gather_elements(&data, &t(vec![-1i64; 2], &[2, 1]), 1).unwrap_err();
        assert!(err.is_negative_index(), "{err}");
        let k = gather_fails(
            GatherOp::Gather,
            &data,
            &t(vec![-1i8], &[1]),
            &DynGatherOptions::new()
                .axis(1)
                .negative(NegativeIndices::Error),
            Some(&[2, 1]),
            "indices",
        );
        assert!(matches!(k, ErrorKind::NegativeIndex { value: -1, .. }));
    }
}

mod b_dtypes_and_argument_kinds {
    use super::*;

    #[test]
    fn updates_of_another_dtype() {
        let k = scatter_fails(
            ScatterOp::Elements,
            &data23(),
            &t(vec![0i64], &[1, 1]),
            &t(vec![1.0f64], &[1, 1]),
            &ScatterOptions::new(),
            "updates",
        );
        assert!(matches!(
            k,
            ErrorKind::DTypeMismatch {
                expected: DType::F32,
                got: DType::F64,
                ..
            }
        ));
    }

    #[test]
    fn float_and_bool_indices_are_refused() {
        for idx in [t(vec![0.0f32], &[1, 1]), t(vec![false], &[1, 1])] {
            let k = scatter_fails(
                ScatterOp::Nd,
                &data23(),
                &idx,
                &t(vec![1.0f32; 3], &[1, 3]),
                &ScatterOptions::new(),
                "indices",
            );
            assert!(matches!(k, ErrorKind::UnsupportedDType { .. }), "{k:?}");
            let k = gather_fails(
                GatherOp::Nd,
                &data23(),
                &idx,
                &DynGatherOptions::new(),
                None,
                "indices",
            );
            assert!(matches!(k, ErrorKind::UnsupportedDType { .. }), "{k:?}");
        }
    }

    #[test]
    fn fill_value_of_another_dtype() {
        let opts = DynGatherOptions::new()
            .out_of_range(GatherOutOfRange::Fill)
            .fill_value(Some(t(vec![1i32], &[])));
        gather_fails(
            GatherOp::Gather,
            &data23(),
            &t(vec![5i64], &[1]),
            &opts,
            Some(&[1, 3]),
            "fill_value",
        );
    }

    /// Each adapter keeps its spec's index dtypes: ONNX ScatterND/GatherND take int64 only.
    #[test]
    fn adapter_index_dtypes() {
        let err = onnx::gather_nd(&data23(), &t(vec![0i32, 0], &[1, 2]), 0).unwrap_err();
        names(&err, "indices");
        let err = onnx::gather(&data23(), &t(vec![0u8], &[1]), 0).unwrap_err();
        names(&err, "indices");
    }

    #[test]
    fn unknown_reductions_are_errors_everywhere() {
        for name in ["sum ", "average", "", "NONE", "mul\0"] {
            let err = name.parse::<Reduction>().unwrap_err();
            names(&err, "reduction");
            assert!(err.to_string().contains(name), "{err}");
        }
        let e = onnx::scatter_elements(
            &data23(),
            &t(vec![0i64], &[1, 1]),
            &t(vec![1.0f32], &[1, 1]),
            0,
            "sum",
        )
        .unwrap_err();
        names(&e, "reduction");
        let e = onnx::scatter_nd(
            &data23(),
            &t(vec![0i64], &[1, 1]),
            &t(vec![1.0f32; 3], &[1, 3]),
            "mean",
        )
        .unwrap_err();
        names(&e, "reduction");
        let e = openvino::scatter_elements_update(
            &data23(),
            &t(vec![0i64], &[1, 1]),
            &t(vec![1.0f32], &[1, 1]),
            &t(vec![0i64], &[]),
            "add",
            true,
        )
        .unwrap_err();
        names(&e, "reduction");
    }

    #[test]
    fn mean_on_bool_is_refused_before_writing() {
        let data = t(vec![true, false, true], &[3]);
        let k = scatter_fails(
            ScatterOp::Elements,
            &data,
            &t(vec![0i64], &[1]),
            &t(vec![false], &[1]),
            &ScatterOptions::new().reduction(Reduction::Mean),
            "reduction",
        );
        assert!(matches!(k, ErrorKind::UnsupportedReduction { .. }));
    }
}

mod c_shape_and_rank_mismatches {
    use super::*;

    /// tensorflow#93680 and five duplicates: indices (4,1,1), updates (4), output [8]. TF
    /// looped over indices' outer dims on the lower-rank updates and aborted.
    #[test]
    fn tf_updates_rank_smaller_than_indices_outer_dims() {
        let data = t(vec![0.0f32; 8], &[8]);
        let k = scatter_fails(
            ScatterOp::Nd,
            &data,
            &t(vec![4i64, 3, 1, 7], &[4, 1, 1]),
            &t(vec![9.0f32, 10.0, 11.0, 12.0], &[4]),
            &ScatterOptions::new(),
            "updates",
        );
        assert!(matches!(k, ErrorKind::ShapeMismatch { .. }), "{k:?}");
    }

    /// CVE-2021-37655: element counts that divide are not enough; the indices shape must be
    /// a prefix of the updates shape. One slot, five updates.
    #[test]
    fn cve_2021_37655_counts_divide_but_shapes_do_not_match() {
        let data = t(vec![0i32], &[1]);
        scatter_fails(
            ScatterOp::Update,
            &data,
            &t(vec![0i64], &[1]),
            &t(vec![1i32; 5], &[5]),
            &ScatterOptions::new(),
            "updates",
        );
    }

    /// pytorch#1653: an index tensor larger than `src` off the axis read past `src`. Ours
    /// require updates.shape == indices.shape and indices ≤ data off the axis.
    #[test]
    fn pytorch_1653_index_larger_than_src() {
        let data = t(vec![0.0f32; 12], &[3, 4]);
        scatter_fails(
            ScatterOp::Elements,
            &data,
            &t(vec![0i64; 12], &[3, 4]),
            &t(vec![1.0f32; 8], &[2, 4]),
            &ScatterOptions::new(),
            "updates",
        );
        // indices wider than data off the axis
        scatter_fails(
            ScatterOp::Elements,
            &data,
            &t(vec![0i64; 5], &[1, 5]),
            &t(vec![1.0f32; 5], &[1, 5]),
            &ScatterOptions::new(),
            "indices",
        );
        gather_fails(
            GatherOp::Elements,
            &data,
            &t(vec![0i64; 5], &[1, 5]),
            &DynGatherOptions::new(),
            None,
            "indices",
        );
    }

    /// onnxruntime#23828: GatherND batch_dims = 1 with 3 data batches and 2 index batches
    /// divided by zero in ORT. Ours: a shape error naming indices.
    #[test]
    fn ort_23828_gather_nd_batch_mismatch() {
        let data = t((0..9).collect::<Vec<i32>>(), &[3, 3]);
        let err = gather_dyn(
            GatherOp::Nd,
            &data,
            &t(vec![1i64, 2], &[2, 1]),
            &DynGatherOptions::new().batch_dims(1),
        )
        .unwrap_err();
        names(&err, "indices");
        assert!(err.is_shape_error());
    }

    #[test]
    fn ranks_and_tuple_lengths() {
        // indices of another rank (scatter_elements, gather_elements)
        let k = scatter_fails(
            ScatterOp::Elements,
            &data23(),
            &t(vec![0i64; 3], &[3]),
            &t(vec![1.0f32; 3], &[3]),
            &ScatterOptions::new(),
            "indices",
        );
        assert!(matches!(k, ErrorKind::RankMismatch { .. }));
        // a tuple longer than data's rank
        scatter_fails(
            ScatterOp::Nd,
            &data23(),
            &t(vec![0i64; 3], &[1, 3]),
            &t(vec![1.0f32], &[1]),
            &ScatterOptions::new(),
            "indices",
        );
        gather_fails(
            GatherOp::Nd,
            &data23(),
            &t(vec![0i64; 2], &[1, 2]),
            &DynGatherOptions::new().batch_dims(1),
            None,
            "indices",
        );
        // rank-0 indices for ScatterND
        scatter_fails(
            ScatterOp::Nd,
            &data23(),
            &t(vec![0i64], &[]),
            &t(vec![1.0f32; 3], &[3]),
            &ScatterOptions::new(),
            "indices",
        );
    }

    /// A caller's output of the wrong shape is an error naming `out`, never a partial write.
    #[test]
    fn gather_into_an_output_of_the_wrong_shape() {
        let mut out = t(vec![7.0f32; 4], &[4]);
        let err = gather_dyn_out(
            GatherOp::Gather,
            &data23(),
            &t(vec![0i64, 1], &[2]),
            &mut out,
            &DynGatherOptions::new(),
        )
        .unwrap_err();
        assert!(err.is_shape_error(), "{err}");
        assert_eq!(out.as_slice::<f32>(), Some(&[7.0f32; 4][..]));
    }
}

mod d_empty_and_zero_size {
    use super::*;

    /// tensorflow PR #122959: rank-1 empty indices (0,) were flattened to (1, 0) and read past
    /// the empty updates. Ours: a no-op returning data.
    #[test]
    fn tf_rank1_empty_indices_are_a_no_op() {
        let data = data23();
        let out = scatter_dyn(
            ScatterOp::Update,
            &data,
            &t(Vec::<i64>::new(), &[0]),
            &t(Vec::<f32>::new(), &[2, 0]),
            &ScatterOptions::new().axis(1).reduction(Reduction::Mul),
        )
        .unwrap();
        assert_eq!(bits(&out), bits(&data));
        let out = gather_dyn(
            GatherOp::Gather,
            &data,
            &t(Vec::<i64>::new(), &[0]),
            &DynGatherOptions::new().axis(1),
        )
        .unwrap();
        assert_eq!(out.shape(), &[2, 0]);
    }

    /// tensorflow#66768: indices (0,0,0,6) with updates (0,0) into (101,32) aborted. The rank
    /// and shape rules run before any shortcut for empty input.
    #[test]
    fn tf_66768_shape_rules_before_the_empty_shortcut() {
        let data = t(vec![0.0f32; 101 * 32], &[101, 32]);
        scatter_fails(
            ScatterOp::Nd,
            &data,
            &t(Vec::<i64>::new(), &[0, 0, 0, 6]),
            &t(Vec::<f32>::new(), &[0, 0]),
            &ScatterOptions::new(),
            "indices",
        );
    }

    /// onnxruntime PR #27963: index 0 into a dimension of size 0 slipped through a sentinel.
    #[test]
    fn ort_27963_index_zero_into_an_empty_dimension() {
        let data = t(Vec::<f32>::new(), &[0, 3]);
        let k = scatter_fails(
            ScatterOp::Nd,
            &data,
            &t(vec![0i64], &[1, 1]),
            &t(vec![1.0f32; 3], &[1, 3]),
            &ScatterOptions::new(),
            "indices",
        );
        assert!(matches!(k, ErrorKind::IndexOutOfRange { size: 0, .. }));
        gather_fails(
            GatherOp::Nd,
            &data,
            &t(vec![0i64], &[1, 1]),
            &DynGatherOptions::new(),
            Some(&[1, 3]),
            "indices",
        );
        // Clamping into an empty dimension has nowhere to go: an error too.
        gather_fails(
            GatherOp::Gather,
            &data,
            &t(vec![0i64], &[1]),
            &DynGatherOptions::new().out_of_range(GatherOutOfRange::Clamp),
            Some(&[1, 3]),
            "indices",
        );
        // Fill has a defined answer.
        let out = gather_dyn(
            GatherOp::Gather,
            &data,
            &t(vec![0i64, 5], &[2]),
            &DynGatherOptions::new()
                .out_of_range(GatherOutOfRange::Fill)
                .fill_value(Some(t(vec![2.5f32], &[]))),
        )
        .unwrap();
        assert_eq!(out.as_slice::<f32>(), Some(&[2.5f32; 6][..]));
    }

    /// onnxruntime PR #32345 review: ScatterND with k = 0 is valid; each tuple updates the
    /// whole tensor (ORT's tests: (1, 0) replaces it, (2, 0) with add sums both).
    #[test]
    fn scatter_nd_with_k_zero_updates_the_whole_tensor() {
        let data = t(vec![1i32, 2, 3], &[3]);
        let out = scatter_dyn(
            ScatterOp::Nd,
            &data,
            &t(Vec::<i64>::new(), &[1, 0]),
            &t(vec![7i32, 8, 9], &[1, 3]),
            &ScatterOptions::new(),
        )
        .unwrap();
        assert_eq!(out.as_slice::<i32>(), Some(&[7, 8, 9][..]));
        let out = scatter_dyn(
            ScatterOp::Nd,
            &data,
            &t(Vec::<i64>::new(), &[2, 0]),
            &t(vec![10i32, 20, 30, 100, 200, 300], &[2, 3]),
            &ScatterOptions::new().reduction(Reduction::Add),
        )
        .unwrap();
        assert_eq!(out.as_slice::<i32>(), Some(&[111, 222, 333][..]));
        // ONNX GatherND requires k ≥ 1.
        let err = onnx::gather_nd(&data, &t(Vec::<i64>::new(), &[2, 0]), 0).unwrap_err();
        names(&err, "indices");
    }

    /// Found by the fuzzer: indices of shape [2⁴⁰, 0] hold no elements but describe 2⁴⁰
    /// tuples. With empty data the scatter has nothing to write; it used to allocate a
    /// resolved offset per tuple (8 TiB) and abort.
    #[test]
    fn fuzz_k_zero_with_2_pow_40_tuples_into_empty_data() {
        let data = t(Vec::<f32>::new(), &[0]);
        let out = scatter_dyn(
            ScatterOp::Nd,
            &data,
            &t(Vec::<i64>::new(), &[1 << 40, 0]),
            &t(Vec::<f32>::new(), &[1 << 40, 0]),
            &ScatterOptions::new(),
        )
        .unwrap();
        assert_eq!(out.shape(), &[0]);
    }

    /// Found by the fuzzer: empty data whose other dims are huge made the gather planner
    /// multiply past usize::MAX (a panic in debug, a silent wrap in release).
    #[test]
    fn fuzz_empty_data_with_huge_dims() {
        let data = t(Vec::<f32>::new(), &[0, 1 << 40, 1 << 30]);
        for axis in 0..3 {
            let r = gather_dyn(
                GatherOp::Gather,
                &data,
                &t(Vec::<i64>::new(), &[0]),
                &DynGatherOptions::new().axis(axis),
            );
            // Either a valid empty result or a size error: never a panic.
            if let Ok(out) = r {
                assert!(out.shape().contains(&0));
            }
        }
    }

    #[test]
    fn empty_everything_is_valid() {
        let data = t(Vec::<f32>::new(), &[0, 4]);
        for op in [ScatterOp::Elements, ScatterOp::Nd] {
            let idx = if op == ScatterOp::Nd {
                t(Vec::<i64>::new(), &[0, 1])
            } else {
                t(Vec::<i64>::new(), &[0, 4])
            };
            let upd = t(Vec::<f32>::new(), &[0, 4]);
            let out = scatter_dyn(op, &data, &idx, &upd, &ScatterOptions::new()).unwrap();
            assert_eq!(out.shape(), &[0, 4]);
        }
    }
}

mod e_axis_and_flags {
    use super::*;

    #[test]
    fn axis_out_of_range_in_every_operator() {
        for axis in [2i64, -3, i64::MIN, i64::MAX] {
            let so = ScatterOptions::new().axis(axis);
            let k = scatter_fails(
                ScatterOp::Elements,
                &data23(),
                &t(vec![0i64], &[1, 1]),
                &t(vec![1.0f32], &[1, 1]),
                &so,
                "axis",
            );
            assert!(
                matches!(k, ErrorKind::AxisOutOfRange { axis: a, rank: 2, .. } if a == i128::from(axis))
            );
            scatter_fails(
                ScatterOp::Update,
                &data23(),
                &t(vec![0i64], &[1]),
                &t(vec![1.0f32; 2], &[2, 1]),
                &so,
                "axis",
            );
            let g = DynGatherOptions::new().axis(axis);
            gather_fails(
                GatherOp::Gather,
                &data23(),
                &t(vec![0i64], &[1]),
                &g,
                None,
                "axis",
            );
            gather_fails(
                GatherOp::Elements,
                &data23(),
                &t(vec![0i64], &[1, 1]),
                &g,
                None,
                "axis",
            );
        }
        // -rank is valid
        let out = gather_dyn(
            GatherOp::Gather,
            &data23(),
            &t(vec![1i64], &[]),
            &DynGatherOptions::new().axis(-2),
        )
        .unwrap();
        assert_eq!(out.as_slice::<f32>(), Some(&[4.0f32, 5.0, 6.0][..]));
    }

    /// CVE-2021-37654: ResourceGather with params (3,2), indices [0], batch_dims = 10 read
    /// out of bounds (a release-mode no-op DCHECK).
    #[test]
    fn cve_2021_37654_batch_dims_out_of_range() {
        let data = t(vec![0.0f32; 6], &[3, 2]);
        for b in [10i64, 2, -3, i64::MIN, i64::MAX] {
            gather_fails(
                GatherOp::Gather,
                &data,
                &t(vec![0i64], &[1]),
                &DynGatherOptions::new().batch_dims(b),
                None,
                "batch_dims",
            );
            gather_fails(
                GatherOp::Nd,
                &data,
                &t(vec![0i64], &[1, 1]),
                &DynGatherOptions::new().batch_dims(b),
                None,
                "batch_dims",
            );
        }
    }

    #[test]
    fn tensor_scatter_attributes() {
        let cache = t(vec![0.0f32; 8], &[2, 4, 1]);
        let upd = t(vec![1.0f32; 2], &[2, 1, 1]);
        let e = onnx::tensor_scatter(&cache, &upd, None, 0, "linear").unwrap_err();
        names(&e, "axis");
        let e = onnx::tensor_scatter(&cache, &upd, None, 3, "linear").unwrap_err();
        names(&e, "axis");
        let e = onnx::tensor_scatter(&cache, &upd, None, -2, "ring").unwrap_err();
        names(&e, "mode");
        let w = t(vec![i64::MAX, 0], &[2]);
        let e = onnx::tensor_scatter(&cache, &upd, Some(&w), -2, "linear").unwrap_err();
        names(&e, "write_indices");
        // circular takes any non-negative start, even i64::MAX
        let out = onnx::tensor_scatter(&cache, &upd, Some(&w), -2, "circular").unwrap();
        // i64::MAX mod 4 = 3
        assert_eq!(
            out.as_slice::<f32>(),
            Some(&[0.0f32, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0][..])
        );
    }
}

mod f_duplicates_and_ordering {
    use super::*;

    /// With `none`, the last duplicate in row-major index order wins, including negative
    /// aliases of the same cell (OpenVINO ScatterNDUpdate-15's rule), at every thread count.
    #[test]
    fn last_duplicate_wins_with_negative_aliases() {
        let data = t(vec![0i32; 4], &[4]);
        let idx = t(vec![1i64, -3, 1, 3, -1], &[5, 1]);
        let upd = t(vec![10i32, 20, 30, 40, 50], &[5]);
        for threads in [1, 2, 4] {
            let out = scatter_dyn(
                ScatterOp::Nd,
                &data,
                &idx,
                &upd,
                &ScatterOptions::new().par(Par::threads_exact(threads)),
            )
            .unwrap();
            assert_eq!(out.as_slice::<i32>(), Some(&[0, 30, 0, 50][..]));
        }
    }

    /// TF's determinism test: 10⁵ updates to one cell, bit-identical at 1, 2, 3 and 8
    /// threads, and equal to the sequential left fold (f32 add is not associative, so any
    /// reordering would show).
    #[test]
    fn hundred_thousand_duplicates_fold_in_index_order() {
        const N: usize = 100_000;
        let upd: Vec<f32> = (0..N).map(|i| 1.0 + (i % 7) as f32 * 1e-3).collect();
        let expected = upd.iter().fold(0.5f32, |acc, &u| acc + u);
        for threads in [1, 2, 3, 8] {
            let out = scatter_dyn(
                ScatterOp::Elements,
                &t(vec![0.5f32, 0.25], &[2]),
                &t(vec![0i64; N], &[N]),
                &t(upd.clone(), &[N]),
                &ScatterOptions::new()
                    .reduction(Reduction::Add)
                    .par(Par::threads_exact(threads)),
            )
            .unwrap();
            assert_eq!(
                out.as_slice::<f32>().unwrap()[0].to_bits(),
                expected.to_bits()
            );
        }
    }
}

mod g_numeric_edges {
    use super::*;

    fn reduce<T: Element>(data: Vec<T>, updates: Vec<T>, r: Reduction) -> Vec<T> {
        let n = updates.len();
        let d = data.len();
        tensor_scatter::scatter_elements(
            &TensorView::new(&data, &[d]).unwrap(),
            &TensorView::new(&vec![0i64; n], &[n]).unwrap(),
            &TensorView::new(&updates, &[n]).unwrap(),
            &ScatterOptions::new().reduction(r),
        )
        .unwrap()
        .as_slice()
        .to_vec()
    }

    /// NaN propagates from either side in min and max (tract keeps data's NaN and drops the
    /// update's; the ONNX reference drops NaN updates); -0 < +0.
    #[test]
    fn nan_and_signed_zero_in_min_max() {
        for r in [Reduction::Min, Reduction::Max] {
            assert!(reduce(vec![f32::NAN], vec![1.0], r)[0].is_nan());
            assert!(reduce(vec![1.0f32], vec![f32::NAN], r)[0].is_nan());
            assert!(reduce(vec![1.0f64], vec![f64::NAN, 2.0], r)[0].is_nan());
        }
        assert_eq!(
            reduce(vec![-0.0f32], vec![0.0], Reduction::Max)[0].to_bits(),
            0.0f32.to_bits()
        );
        assert_eq!(
            reduce(vec![0.0f32], vec![-0.0], Reduction::Min)[0].to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(
            reduce(vec![f32::NEG_INFINITY], vec![f32::INFINITY], Reduction::Max)[0],
            f32::INFINITY
        );
        // inf + -inf is the canonical quiet NaN.
        let n = reduce(vec![f32::INFINITY], vec![f32::NEG_INFINITY], Reduction::Add)[0];
        assert_eq!(n.to_bits(), f32::NAN.to_bits());
    }

    /// Integer overflow wraps, identically in debug and release (this test runs with debug
    /// assertions on: a plain `+` would panic).
    #[test]
    fn integer_overflow_wraps() {
        assert_eq!(
            reduce(vec![i8::MAX], vec![1], Reduction::Add),
            vec![i8::MIN]
        );
        assert_eq!(
            reduce(vec![i8::MIN], vec![1], Reduction::Sub),
            vec![i8::MAX]
        );
        assert_eq!(reduce(vec![200u8], vec![2], Reduction::Mul), vec![144]);
        assert_eq!(reduce(vec![0u64], vec![1], Reduction::Sub), vec![u64::MAX]);
        assert_eq!(
            reduce(vec![i64::MIN], vec![-1], Reduction::Mul),
            vec![i64::MIN]
        );
        // Integer mean floors: (7 + 0) / 2 = 3, (-7 + 0) / 2 = -4.
        assert_eq!(reduce(vec![7i32], vec![0], Reduction::Mean), vec![3]);
        assert_eq!(reduce(vec![-7i32], vec![0], Reduction::Mean), vec![-4]);
        // The mean's sum wraps in the type like every integer sum (as torch's does), then the
        // floor division: 127 + 127 + 127 = 381 wraps to 125 in i8, and 125 / 3 = 41.
        assert_eq!(
            reduce(vec![127i8], vec![127, 127], Reduction::Mean),
            vec![41]
        );
    }

    /// Bool rules (OpenVINO's): add = OR, sub = XOR, mul = AND, max = OR, min = AND.
    #[test]
    fn bool_rules() {
        let r = |d: bool, u: Vec<bool>, red| reduce(vec![d], u, red)[0];
        assert!(r(false, vec![true, false], Reduction::Add));
        assert!(!r(true, vec![true], Reduction::Sub));
        assert!(r(false, vec![true], Reduction::Sub));
        assert!(!r(true, vec![true, false], Reduction::Mul));
        assert!(r(false, vec![false, true], Reduction::Max));
        assert!(!r(true, vec![true, false], Reduction::Min));
    }

    /// f16/bf16 sums round after every update by default (like the type's own `+`), or once
    /// at the end in f32 with `Accumulation::Wide`: 2048 + 1 + 1 in f16 is 2048 per update
    /// (each 2049 rounds to even) and 2050 wide.
    #[test]
    fn half_precision_accumulation() {
        let data = [f16::from_f32(2048.0)];
        let upd = [f16::ONE, f16::ONE];
        let run = |acc| {
            tensor_scatter::scatter_elements(
                &TensorView::new(&data, &[1]).unwrap(),
                &TensorView::new(&[0i32, 0], &[2]).unwrap(),
                &TensorView::new(&upd, &[2]).unwrap(),
                &ScatterOptions::new()
                    .reduction(Reduction::Add)
                    .accumulation(acc),
            )
            .unwrap()
            .as_slice()[0]
                .to_f32()
        };
        assert_eq!(run(Accumulation::PerUpdate), 2048.0);
        assert_eq!(run(Accumulation::Wide), 2050.0);
        // bf16: 256 + 1 + 1 (8 significant bits)
        let d = [bf16::from_f32(256.0)];
        let u = [bf16::ONE, bf16::ONE];
        let out = tensor_scatter::scatter_elements(
            &TensorView::new(&d, &[1]).unwrap(),
            &TensorView::new(&[0u8, 0], &[2]).unwrap(),
            &TensorView::new(&u, &[2]).unwrap(),
            &ScatterOptions::new()
                .reduction(Reduction::Add)
                .accumulation(Accumulation::Wide),
        )
        .unwrap();
        assert_eq!(out.as_slice()[0].to_f32(), 258.0);
    }
}

mod h_size_and_overflow {
    use super::*;

    /// tensorflow#127164: each dim < 2³¹ but the product overflows int32. Ours compute in
    /// usize with checks; a shape whose element count overflows is refused by shape-only
    /// planning, before any buffer exists.
    #[test]
    fn overflowing_shapes_are_refused_before_allocation() {
        let huge = [1usize << 33, 1 << 33];
        let e = ScatterOp::Elements
            .plan(DType::F32, &huge, &[1, 1], &[1, 1], &ScatterOptions::new())
            .unwrap_err();
        names(&e, "data");
        assert!(matches!(e.kind(), ErrorKind::SizeOverflow { .. }));
        // Byte size overflow: 2⁶¹ f64 elements
        let e = ScatterOp::Nd
            .plan(
                DType::F64,
                &[1 << 61],
                &[1, 1],
                &[1],
                &ScatterOptions::new(),
            )
            .unwrap_err();
        names(&e, "data");
        let e = ScatterOp::Update
            .plan(
                DType::U8,
                &[4],
                &[usize::MAX, 2],
                &[4],
                &ScatterOptions::new(),
            )
            .unwrap_err();
        names(&e, "indices");
        // A gather's output: 2⁶² × 2⁶² from shapes whose own sizes fit. The gathers name
        // `indices` for an output too large to address (its size is indices' shape times
        // the slice).
        let e = GatherOp::Gather
            .plan(
                DType::U8,
                &[1, 1 << 62],
                &[1 << 62],
                &GatherOptions::<u8>::new(),
            )
            .unwrap_err();
        names(&e, "indices");
        assert!(matches!(e.kind(), ErrorKind::SizeOverflow { .. }));
        // The plan agrees with the operators on valid shapes and on shape errors.
        let p = GatherOp::Nd
            .plan(
                DType::I16,
                &[2, 3, 4],
                &[5, 2],
                &GatherOptions::<i16>::new(),
            )
            .unwrap();
        assert_eq!((p.shape, p.elements, p.bytes), (vec![5, 4], 20, 40));
        let e = GatherOp::Elements
            .plan(DType::F32, &[2, 3], &[3], &GatherOptions::<f32>::new())
            .unwrap_err();
        names(&e, "indices");
        // A dim above isize::MAX is refused even in an empty shape (found by the fuzzer: a
        // [usize::MAX, 0] tensor broke the i64 index arithmetic).
        let e = TensorView::<f32>::new(&[], &[usize::MAX, 0]).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::SizeOverflow { .. }));
        let e = DynTensor::from_vec(Vec::<f32>::new(), &[0, 1 << 63]).unwrap_err();
        names(&e, "shape");
        // Views refuse overflowing shapes as well.
        let e = TensorView::new(&[0.0f32; 4], &[1 << 62, 1 << 62]).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::SizeOverflow { .. }));
    }

    /// A gather whose modest inputs ask for an output that cannot be allocated returns an
    /// error instead of aborting the process (Rust's default on a failed allocation).
    #[test]
    fn an_unallocatable_output_is_an_error_not_an_abort() {
        let row = vec![1.0f32; 1 << 20];
        let data = TensorView::new(&row, &[1, 1 << 20]).unwrap();
        let zeros = vec![0i32; 1 << 22];
        let idx = TensorView::new(&zeros, &[1 << 22]).unwrap();
        // 2²² × 2²⁰ f32 = 16 TiB.
        let e = tensor_scatter::gather(&data, &idx, &GatherOptions::new()).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::OutOfMemory { .. }), "{e}");
        names(&e, "output");
    }
}

mod i_layout_aliasing_and_rank {
    use super::*;

    /// A writable view that overlaps itself (a zero or overlapping stride) would make the
    /// result depend on write order: refused.
    #[test]
    fn self_overlapping_destinations_are_refused() {
        let mut buf = [0.0f32; 4];
        let e = TensorViewMut::with_strides(&mut buf, 0, &[2, 2], &[0, 1]).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidView { .. }), "{e}");
        let e = TensorViewMut::with_strides(&mut buf, 0, &[3, 2], &[1, 1]).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::InvalidView { .. }), "{e}");
        // Read-only views may broadcast.
        assert!(TensorView::with_strides(&buf, 0, &[2, 2], &[0, 1]).is_ok());
    }

    /// The in-place forms take `&mut` to the destination and `&` to the inputs, so an alias
    /// between them does not compile in safe Rust (a compile_fail doctest on
    /// `scatter_elements_into` shows it); the dyn forms take a `&mut DynTensor` the same way.
    /// What does compile is two views of one read-only buffer as data and updates: allowed.
    #[test]
    fn inputs_may_share_a_buffer() {
        let buf = [1.0f32, 2.0, 3.0, 4.0];
        let data = TensorView::new(&buf, &[4]).unwrap();
        let upd = TensorView::with_strides(&buf, 3, &[2], &[-1]).unwrap(); // [4, 3]
        let out = tensor_scatter::scatter_elements(
            &data,
            &TensorView::new(&[0i64, 1], &[2]).unwrap(),
            &upd,
            &ScatterOptions::new().reduction(Reduction::Add),
        )
        .unwrap();
        assert_eq!(out.as_slice(), &[5.0, 5.0, 3.0, 4.0]);
    }

    /// Rank 64 with every dim 1, in all six operators.
    #[test]
    fn rank_64_all_ones() {
        let shape = [1usize; 64];
        let data = t(vec![5.0f32], &shape);
        let idx = t(vec![0i64], &shape);
        let upd = t(vec![7.0f32], &shape);
        let so = ScatterOptions::new().axis(63).reduction(Reduction::Add);
        let out = scatter_dyn(ScatterOp::Elements, &data, &idx, &upd, &so).unwrap();
        assert_eq!(out.as_slice::<f32>(), Some(&[12.0f32][..]));
        let out = scatter_dyn(
            ScatterOp::Update,
            &data,
            &idx,
            &t(vec![7.0f32], &[1; 127]),
            &so,
        )
        .unwrap();
        assert_eq!(out.as_slice::<f32>(), Some(&[12.0f32][..]));
        let nd_idx = t(vec![0i64; 64], &[1, 64]);
        let out = scatter_dyn(ScatterOp::Nd, &data, &nd_idx, &t(vec![7.0f32], &[1]), &so).unwrap();
        assert_eq!(out.as_slice::<f32>(), Some(&[12.0f32][..]));
        let g = DynGatherOptions::new().axis(-1).batch_dims(63);
        let out = gather_dyn(GatherOp::Gather, &data, &idx, &g).unwrap();
        assert_eq!(out.shape().len(), 64);
        let out = gather_dyn(GatherOp::Elements, &data, &idx, &g).unwrap();
        assert_eq!(out.as_slice::<f32>(), Some(&[5.0f32][..]));
        let out = gather_dyn(GatherOp::Nd, &data, &nd_idx, &DynGatherOptions::new()).unwrap();
        assert_eq!(out.shape(), &[1]);
        // And an index error at rank 64 names the full position.
        let err = gather_dyn(GatherOp::Elements, &data, &t(vec![1i64], &shape), &g).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::IndexOutOfRange { position, .. } if position.len() == 64)
        );
    }
}
