//! Error kinds reachable from the public API, each naming its argument, with the destination
//! checked bit-for-bit unchanged afterwards.

use tensor_scatter::{
    DynTensor, ErrorKind, IndexPolicy, NegativeIndices, OutOfRange, Reduction, ScatterOp,
    ScatterOptions, TensorView, TensorViewMut, directml, onnx, openvino, scatter_dyn_into,
};

fn t<T: tensor_scatter::Element>(v: Vec<T>, s: &[usize]) -> DynTensor {
    DynTensor::from_vec(v, s).unwrap()
}

fn fails_in_place(
    op: ScatterOp,
    indices: DynTensor,
    updates: DynTensor,
    opts: ScatterOptions,
    arg: &str,
) -> ErrorKind {
    let before = t(vec![1.5f32, -0.0, f32::NAN, 4.0, 5.0, 6.0], &[2, 3]);
    let mut dest = before.clone();
    let err = scatter_dyn_into(op, &mut dest, &indices, &updates, &opts).unwrap_err();
    assert_eq!(err.arg(), arg, "{err}");
    assert!(err.to_string().contains(arg), "{err}");
    let bits = |d: &DynTensor| {
        d.as_slice::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        bits(&dest),
        bits(&before),
        "destination changed after {err}"
    );
    err.kind().clone()
}

#[test]
fn a_bad_index_as_the_last_of_many_leaves_the_destination_untouched() {
    let mut idx = vec![0i64; 100_000];
    idx[99_999] = 3;
    let opts = ScatterOptions::new().axis(1).reduction(Reduction::Add);
    let k = fails_in_place(
        ScatterOp::Update,
        t(idx, &[100_000]),
        t(vec![9.0f32; 200_000], &[2, 100_000]),
        opts,
        "indices",
    );
    assert!(
        matches!(k, ErrorKind::IndexOutOfRange { ref position, value: 3, dim: 1, size: 3, .. } if position == &[99_999])
    );
}

#[test]
fn negative_index_rejected_by_policy() {
    let opts = ScatterOptions::new()
        .index_policy(IndexPolicy::new(NegativeIndices::Error, OutOfRange::Skip));
    let k = fails_in_place(
        ScatterOp::Nd,
        t(vec![0i8, -1], &[1, 2]),
        t(vec![1.0f32], &[1]),
        opts,
        "indices",
    );
    assert!(matches!(
        k,
        ErrorKind::NegativeIndex {
            value: -1,
            dim: 1,
            ..
        }
    ));
}

#[test]
fn nd_components_are_checked_one_by_one() {
    // (0, 3) on a 2 × 3 tensor: the linear offset 3 is valid, the component is not.
    let k = fails_in_place(
        ScatterOp::Nd,
        t(vec![0u64, 3], &[1, 2]),
        t(vec![1.0f32], &[1]),
        ScatterOptions::new(),
        "indices",
    );
    assert!(
        matches!(k, ErrorKind::IndexOutOfRange { ref position, dim: 1, .. } if position == &[0, 1])
    );
}

#[test]
fn u64_max_is_out_of_range_not_minus_one() {
    let k = fails_in_place(
        ScatterOp::Elements,
        t(vec![u64::MAX], &[1, 1]),
        t(vec![1.0f32], &[1, 1]),
        ScatterOptions::new(),
        "indices",
    );
    assert!(matches!(
        k,
        ErrorKind::IndexOutOfRange {
            value: 18446744073709551615,
            ..
        }
    ));
}

#[test]
fn axis_out_of_range() {
    for axis in [2, -3, i64::MIN, i64::MAX] {
        let opts = ScatterOptions::new().axis(axis);
        let k = fails_in_place(
            ScatterOp::Elements,
            t(vec![0i32], &[1, 1]),
            t(vec![1.0f32], &[1, 1]),
            opts,
            "axis",
        );
        assert!(matches!(k, ErrorKind::AxisOutOfRange { rank: 2, .. }));
    }
}

#[test]
fn shape_rank_and_dtype_errors() {
    let o = ScatterOptions::new;
    let k = fails_in_place(
        ScatterOp::Elements,
        t(vec![0i32], &[1]),
        t(vec![1.0f32], &[1]),
        o(),
        "indices",
    );
    assert!(matches!(k, ErrorKind::RankMismatch { .. }));
    let k = fails_in_place(
        ScatterOp::Elements,
        t(vec![0i32; 2], &[1, 2]),
        t(vec![1.0f32; 2], &[2, 1]),
        o(),
        "updates",
    );
    assert!(matches!(k, ErrorKind::ShapeMismatch { .. }));
    let k = fails_in_place(
        ScatterOp::Elements,
        t(vec![0i32; 4], &[1, 4]),
        t(vec![1.0f32; 4], &[1, 4]),
        o(),
        "indices",
    );
    assert!(matches!(k, ErrorKind::ShapeMismatch { .. }));
    let k = fails_in_place(
        ScatterOp::Nd,
        t(vec![0i32; 3], &[1, 3]),
        t(vec![1.0f32], &[1]),
        o(),
        "indices",
    );
    assert!(matches!(k, ErrorKind::ShapeMismatch { .. }));
    let k = fails_in_place(
        ScatterOp::Update,
        t(vec![0i32], &[1]),
        t(vec![1.0f32; 3], &[3]),
        o(),
        "updates",
    );
    assert!(matches!(k, ErrorKind::RankMismatch { .. }));
    let k = fails_in_place(
        ScatterOp::Elements,
        t(vec![0i32], &[1, 1]),
        t(vec![1.0f64], &[1, 1]),
        o(),
        "updates",
    );
    assert!(matches!(k, ErrorKind::DTypeMismatch { .. }));
    let k = fails_in_place(
        ScatterOp::Elements,
        t(vec![0.0f32], &[1, 1]),
        t(vec![1.0f32], &[1, 1]),
        o(),
        "indices",
    );
    assert!(matches!(k, ErrorKind::UnsupportedDType { .. }));
}

#[test]
fn mean_on_bool_is_an_unsupported_reduction_and_writes_nothing() {
    let mut dest = t(vec![true, false], &[2]);
    let opts = ScatterOptions::new().reduction(Reduction::Mean);
    let err = scatter_dyn_into(
        ScatterOp::Elements,
        &mut dest,
        &t(vec![0i32], &[1]),
        &t(vec![true], &[1]),
        &opts,
    )
    .unwrap_err();
    assert_eq!(err.arg(), "reduction");
    assert_eq!(dest.as_slice::<bool>(), Some(&[true, false][..]));
}

#[test]
fn invalid_views_and_overflowing_shapes() {
    let buf = [0u8; 4];
    let e = TensorView::with_strides(&buf, 0, &[3], &[2]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidView { .. }));
    let e = TensorView::new(&buf, &[usize::MAX, 2]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::SizeOverflow { .. }));
    let mut m = [0u8; 4];
    let e = TensorViewMut::with_strides(&mut m, 0, &[2, 2], &[1, 1]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidView { .. }));
}

#[test]
fn adapters_name_their_arguments() {
    let x = t(vec![0.0f32; 4], &[4]);
    let e = onnx::scatter_elements(&x, &t(vec![0i64], &[1]), &t(vec![1.0f32], &[1]), 0, "mean")
        .unwrap_err();
    assert_eq!((e.op(), e.arg()), ("ScatterElements", "reduction"));
    let e = directml::scatter_nd(&x, &t(vec![0u32], &[1, 1]), &t(vec![1.0f32], &[1]), 0, 2)
        .unwrap_err();
    assert_eq!(
        (e.op(), e.arg()),
        ("DML_SCATTER_ND", "input_dimension_count")
    );
    let e = openvino::scatter_update(
        &x,
        &t(vec![0i64], &[1]),
        &t(vec![1.0f32], &[1]),
        &t(vec![0i64, 0], &[2]),
    )
    .unwrap_err();
    assert_eq!(e.arg(), "axis");
}

#[test]
fn messages_read_as_sentences_and_say_what_is_accepted() {
    use tensor_scatter::{DynGatherOptions, GatherOp, GatherOptions, gather_dyn, gather_nd};
    // A tuple longer than data's rank (less batch_dims).
    let e = gather_nd(
        &TensorView::new(&[0f32; 4], &[2, 2]).unwrap(),
        &TensorView::new(&[0i64; 3], &[1, 3]).unwrap(),
        &GatherOptions::new(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "gather_nd: indices: shape [1, 3] does not match; expected a last dimension (the tuple \
         length) of at most 2: the rank of data (2) minus batch_dims (0)"
    );
    // An axis given for rank-0 data.
    let e = tensor_scatter::gather(
        &TensorView::new(&[1f32], &[]).unwrap(),
        &TensorView::new(&[0i64], &[1]).unwrap(),
        &GatherOptions::new(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("a tensor of rank 0 has no axis"),
        "{e}"
    );
    assert!(!e.to_string().contains("[-0, 0)"), "{e}");
    // Float indices: the message says which dtypes are.
    let e = gather_dyn(
        GatherOp::Gather,
        &t(vec![1.0f32, 2.0], &[2]),
        &t(vec![0.0f32], &[1]),
        &DynGatherOptions::new(),
    )
    .unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::UnsupportedDType { .. }));
    assert!(
        e.to_string().contains("expected an integer index dtype"),
        "{e}"
    );
    // ONNX GatherND takes int64 indices only, and says so.
    let e = onnx::gather_nd(&t(vec![1.0f32, 2.0], &[2]), &t(vec![0i32], &[1, 1]), 0).unwrap_err();
    assert!(
        e.to_string()
            .contains("expected int64 (the ONNX type constraint)"),
        "{e}"
    );
}

#[test]
fn shape_errors_come_before_a_small_index_dtype_is_converted() {
    use tensor_scatter::{
        GatherOptions, gather_elements, gather_elements_out, scatter_elements,
        scatter_elements_into, scatter_elements_out,
    };
    // uint8 indices are converted to int32 before the kernels run, one value per position the
    // view addresses: 2^50 here (4 PiB), so a shape error found after the conversion would
    // read as OutOfMemory. Rank 3 against data of rank 2 is the call's real error.
    let zero = [0u8];
    let one = [1.0f32];
    let huge = [1 << 20, 1 << 20, 1 << 10];
    let idx = TensorView::with_strides(&zero, 0, &huge, &[0, 0, 0]).unwrap();
    let upd = TensorView::with_strides(&one, 0, &huge, &[0, 0, 0]).unwrap();
    let data_buf = [0.5f32, 1.5, 2.5, 3.5];
    let data = TensorView::new(&data_buf, &[2, 2]).unwrap();
    let rank = |e: tensor_scatter::Error| {
        assert!(
            matches!(e.kind(), ErrorKind::RankMismatch { .. }),
            "not the rank error: {e}"
        );
        assert_eq!(e.arg(), "indices", "{e}");
    };
    let opts = ScatterOptions::new();
    rank(scatter_elements(&data, &idx, &upd, &opts).unwrap_err());
    let mut out_buf = [9.0f32; 4];
    let mut out = TensorViewMut::new(&mut out_buf, &[2, 2]).unwrap();
    rank(scatter_elements_out(&data, &idx, &upd, &mut out, &opts).unwrap_err());
    rank(scatter_elements_into(&mut out, &idx, &upd, &opts).unwrap_err());
    assert_eq!(out_buf, [9.0; 4]);
    let g = GatherOptions::new();
    rank(gather_elements(&data, &idx, &g).unwrap_err());
    let mut out = TensorViewMut::new(&mut out_buf, &[2, 2]).unwrap();
    rank(gather_elements_out(&data, &idx, &mut out, &g).unwrap_err());
    assert_eq!(out_buf, [9.0; 4]);
}
