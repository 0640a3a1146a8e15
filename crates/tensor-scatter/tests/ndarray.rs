//! The `ndarray` feature: arrays and views in and out without a copy, any layout without gaps.
#![cfg(feature = "ndarray")]

use ndarray::{Array, ArrayD, Axis, Dimension, IxDyn, ShapeBuilder, array, s};
use tensor_scatter::{
    ErrorKind, GatherOptions, Reduction, ScatterOptions, Tensor, TensorView, TensorViewMut,
    gather_elements, scatter_elements, scatter_elements_into,
};

/// Whether `v` reads the very memory of `a` (no copy): the same elements at the same
/// addresses, coordinate by coordinate.
fn same_memory(a: &ndarray::ArrayViewD<'_, f32>, v: &TensorView<'_, f32>) -> bool {
    let back = v.to_ndarray().unwrap();
    a.shape() == back.shape()
        && a.indexed_iter()
            .all(|(i, x)| std::ptr::eq(x, &back[i.slice()]) && Some(*x) == v.get(i.slice()))
}

#[test]
fn views_of_every_gap_free_layout_convert_both_ways_without_a_copy() {
    let base = Array::from_shape_fn((3, 4, 5), |(i, j, k)| (i * 100 + j * 10 + k) as f32);
    let layouts = [
        base.view().into_dyn(),
        base.view().reversed_axes().into_dyn(), // Fortran order
        base.view().permuted_axes([1, 2, 0]).into_dyn(), // any dim order
        base.slice(s![..;-1, .., ..;-1]).into_dyn(), // negative strides
        base.slice(s![1..2, .., ..]).into_dyn(), // a contiguous part
        base.slice(s![.., 2, ..]).into_dyn(),   // one row per plane: gaps
    ];
    for (n, a) in layouts.iter().enumerate().take(5) {
        let v = TensorView::try_from(a.clone()).unwrap();
        assert_eq!(v.shape(), a.shape(), "layout {n}");
        assert!(same_memory(a, &v), "layout {n}");
    }
    // The last: [3, 5] taken at one j of every i leaves gaps; refused, with the way out.
    let e = TensorView::try_from(layouts[5].clone()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidView { .. }), "{e}");
    assert!(e.to_string().contains("as_standard_layout"), "{e}");
    // A read-only view may broadcast (stride 0).
    let row = array![1.0f32, 2.0, 3.0];
    let b = row.broadcast((4, 3)).unwrap().into_dyn();
    let v = TensorView::try_from(b.clone()).unwrap();
    assert_eq!(v.strides(), &[0, 1]);
    assert!(same_memory(&b, &v));
    // Empty views.
    let e = Array::<f32, _>::zeros((0, 3));
    let v = TensorView::try_from(e.view()).unwrap();
    assert_eq!(v.shape(), &[0, 3]);
    assert_eq!(v.to_ndarray().unwrap().shape(), &[0, 3]);
}

#[test]
fn stepped_views_are_refused_not_copied() {
    let mut a = Array::from_shape_fn((4, 6), |(i, j)| (i * 6 + j) as f32);
    let e = TensorView::try_from(a.slice(s![.., ..;2])).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidView { .. }), "{e}");
    let e = TensorViewMut::try_from(a.slice_mut(s![..;2, ..])).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidView { .. }), "{e}");
    // The explicit copy works.
    let stepped = a.slice(s![.., ..;2]);
    let copy = stepped.as_standard_layout();
    assert_eq!(
        TensorView::try_from(copy.view()).unwrap().to_vec(),
        stepped.iter().copied().collect::<Vec<_>>()
    );
}

#[test]
fn a_scatter_into_a_permuted_reversed_array_view_matches_the_copy() {
    let idx = array![[2i64, 0, 1], [0, 0, 2]];
    let src = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let opts = ScatterOptions::new().axis(1).reduction(Reduction::Add);
    let base = Array::from_shape_fn((3, 2), |(i, j)| (10 * i + j) as f32);
    // The destination seen through a transpose with its columns reversed.
    let mut acc = base.clone();
    let mut t = acc.view_mut().reversed_axes();
    t.invert_axis(Axis(1));
    let want = {
        let d = t.to_owned();
        scatter_elements(
            &TensorView::try_from(d.view()).unwrap(),
            &TensorView::try_from(idx.view()).unwrap(),
            &TensorView::try_from(src.view()).unwrap(),
            &opts,
        )
        .unwrap()
    };
    let mut dest = TensorViewMut::try_from(t).unwrap();
    scatter_elements_into(
        &mut dest,
        &TensorView::try_from(idx.view()).unwrap(),
        &TensorView::try_from(src.view()).unwrap(),
        &opts,
    )
    .unwrap();
    let mut seen = acc.view().reversed_axes();
    seen.invert_axis(Axis(1));
    assert_eq!(seen.iter().copied().collect::<Vec<_>>(), want.as_slice());
    // And back: our writable view as ndarray's.
    let mut buf = [0f32; 6];
    let mut v = TensorViewMut::with_strides(&mut buf, 5, &[2, 3], &[-3, -1]).unwrap();
    v = v.transpose(0, 1).unwrap();
    let mut nd = v.into_ndarray().unwrap();
    nd[[0, 1]] = 7.0;
    assert_eq!(buf, [0.0, 0.0, 7.0, 0.0, 0.0, 0.0]);
}

#[test]
fn owned_tensors_and_arrays_hand_over_their_buffers() {
    let g = gather_elements(
        &TensorView::new(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap(),
        &TensorView::new(&[1i64, 0, 0, 0], &[2, 2]).unwrap(),
        &GatherOptions::new().axis(1),
    )
    .unwrap();
    let ptr = g.as_slice().as_ptr();
    let a: ArrayD<f32> = g.into();
    assert_eq!(a, array![[2.0, 1.0], [3.0, 3.0]].into_dyn());
    assert_eq!(a.as_ptr(), ptr, "no copy");
    let t: Tensor<f32> = a.clone().into();
    assert_eq!(t.shape(), &[2, 2]);
    assert_eq!(t.as_slice(), &[2.0, 1.0, 3.0, 3.0]);
    // Not row-major: copied into row-major order.
    let f = Array::from_shape_vec(IxDyn(&[2, 3]).f(), (0..6).collect::<Vec<i32>>()).unwrap();
    let t: Tensor<i32> = f.into();
    assert_eq!(t.as_slice(), &[0, 2, 4, 1, 3, 5]);
    // Sliced in place, still row-major: the elements only.
    let mut c = Array::from_shape_vec((4, 2), (0..8).collect::<Vec<u8>>()).unwrap();
    c.slice_collapse(s![1..3, ..]);
    let t: Tensor<u8> = c.into();
    assert_eq!((t.shape(), t.as_slice()), (&[2, 2][..], &[2, 3, 4, 5][..]));
}
