//! The `ndarray` feature: arrays and views in and out without a copy, any layout.
#![cfg(feature = "ndarray")]

use ndarray::{Array, ArrayD, Axis, Dimension, IxDyn, ShapeBuilder, array, s};
use tensor_scatter::{
    GatherOptions, Reduction, ScatterOptions, Tensor, TensorView, TensorViewMut, gather_elements,
    scatter_elements, scatter_elements_into,
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
fn views_of_every_layout_convert_both_ways_without_a_copy() {
    let base = Array::from_shape_fn((3, 4, 5), |(i, j, k)| (i * 100 + j * 10 + k) as f32);
    let layouts = [
        base.view().into_dyn(),
        base.view().reversed_axes().into_dyn(), // Fortran order
        base.view().permuted_axes([1, 2, 0]).into_dyn(), // any dim order
        base.slice(s![..;-1, .., ..;-1]).into_dyn(), // negative strides
        base.slice(s![1..2, .., ..]).into_dyn(), // a contiguous part
        base.slice(s![.., 2, ..]).into_dyn(),   // one row per plane: gaps
        base.slice(s![.., 1..3, 1..4]).into_dyn(), // a block: gaps between its rows
        base.slice(s![..;2, .., ..;-3]).into_dyn(), // stepped, and backwards
        base.slice(s![.., ..;3, 4]).permuted_axes([1, 0]).into_dyn(),
    ];
    for (n, a) in layouts.iter().enumerate() {
        let v = TensorView::try_from(a.clone()).unwrap();
        assert_eq!(v.shape(), a.shape(), "layout {n}");
        assert!(same_memory(a, &v), "layout {n}");
        assert_eq!(
            v.to_vec(),
            a.iter().copied().collect::<Vec<_>>(),
            "layout {n}"
        );
    }
    // A read-only view may broadcast (stride 0), with gaps too.
    let row = array![1.0f32, 2.0, 3.0];
    let b = row.broadcast((4, 3)).unwrap().into_dyn();
    let v = TensorView::try_from(b.clone()).unwrap();
    assert_eq!(v.strides(), &[0, 1]);
    assert!(same_memory(&b, &v));
    let b = base.view().slice_move(s![0, 0, ..;2]);
    let b = b.broadcast((2, 3)).unwrap().into_dyn();
    assert!(same_memory(&b, &TensorView::try_from(b.clone()).unwrap()));
    // Empty views.
    let e = Array::<f32, _>::zeros((0, 3));
    let v = TensorView::try_from(e.view()).unwrap();
    assert_eq!(v.shape(), &[0, 3]);
    assert_eq!(v.to_ndarray().unwrap().shape(), &[0, 3]);
    // A writable view with gaps goes back as the same elements.
    let mut m = base.clone();
    let t = TensorViewMut::try_from(m.slice_mut(s![.., 1..3, ..;2])).unwrap();
    let mut back = t.into_ndarray().unwrap();
    back[[2, 1, 2]] = -1.0;
    assert_eq!(m[[2, 2, 4]], -1.0);
}

/// The even columns of a [4, 6] array (a view with gaps), while the odd ones stay lent to
/// someone else: every operator reads and writes the even ones where they lie and never
/// touches the odd ones, which here hold the updates.
#[test]
fn views_with_gaps_are_read_and_written_where_they_lie() {
    let start = Array::from_shape_fn((4, 6), |(i, j)| (i * 6 + j) as f32);
    let idx = array![[3i64, 0, 2], [1, 1, 0]];
    for (reduction, mean) in [(Reduction::Add, false), (Reduction::Mean, true)] {
        let opts = ScatterOptions::new().axis(0).reduction(reduction);
        let mut a = start.clone();
        let (even, odd) = a.multi_slice_mut((s![.., ..;2], s![.., 1..;2]));
        let upd = odd.view().slice_move(s![1..3, ..]);
        // The same scatter on copies.
        let want = scatter_elements(
            &TensorView::try_from(even.to_owned().view()).unwrap(),
            &TensorView::try_from(idx.view()).unwrap(),
            &TensorView::try_from(upd.to_owned().view()).unwrap(),
            &opts,
        )
        .unwrap();
        let mut dest = TensorViewMut::try_from(even).unwrap();
        scatter_elements_into(
            &mut dest,
            &TensorView::try_from(idx.view()).unwrap(),
            &TensorView::try_from(upd).unwrap(),
            &opts,
        )
        .unwrap();
        let got: Vec<f32> = a.slice(s![.., ..;2]).iter().copied().collect();
        assert_eq!(got, want.as_slice(), "mean: {mean}");
        assert_eq!(
            a.slice(s![.., 1..;2]),
            start.slice(s![.., 1..;2]),
            "mean: {mean}"
        );
    }
    // A gather from the odd columns, read in place.
    let a = start.clone();
    let g = gather_elements(
        &TensorView::try_from(a.slice(s![.., 1..;2])).unwrap(),
        &TensorView::try_from(idx.view()).unwrap(),
        &GatherOptions::new().axis(0),
    )
    .unwrap();
    assert_eq!(g.as_slice(), &[19.0, 3.0, 17.0, 7.0, 9.0, 5.0]);
    // Indices with gaps too: every other index of a longer row.
    let long = array![3i64, 9, 0, 9, 2, 9];
    let g = tensor_scatter::gather(
        &TensorView::try_from(a.row(1)).unwrap(),
        &TensorView::try_from(long.slice(s![..;2])).unwrap(),
        &GatherOptions::new(),
    )
    .unwrap();
    assert_eq!(g.as_slice(), &[9.0, 6.0, 8.0]);
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
