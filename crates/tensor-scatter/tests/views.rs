//! Views as a user builds them: broadcast views of a huge logical size, strided inputs and
//! empty views. An input the engine would have to copy in full is read where it lies, and an
//! allocation that depends on an input's logical size is an `OutOfMemory` error, never an
//! abort.

use tensor_scatter::{
    ErrorKind, GatherOptions, Par, ScatterOptions, TensorView, TensorViewMut, gather,
    gather_elements, gather_nd, gather_out, scatter_elements_into, scatter_nd, scatter_update,
};

/// A [2²⁰, 2²⁰] f32 view of one element (4 TiB logically).
fn huge_broadcast(one: &[f32]) -> TensorView<'_, f32> {
    TensorView::with_strides(one, 0, &[1 << 20, 1 << 20], &[0, 0]).unwrap()
}

fn out_of_memory(e: &tensor_scatter::Error) -> bool {
    matches!(e.kind(), ErrorKind::OutOfMemory { .. })
}

#[test]
fn gathers_read_a_huge_broadcast_table_where_it_lies() {
    let one = [7.5f32];
    let big = huge_broadcast(&one);
    let idx = TensorView::new(&[5i64, -1], &[2]).unwrap();
    // One row of 2²⁰ cells from each index: 8 MiB out, nothing else allocated.
    let rows = gather(&big, &idx, &GatherOptions::new()).unwrap();
    assert_eq!(rows.shape(), &[2, 1 << 20]);
    assert!(rows.as_slice().iter().all(|&x| x == 7.5));
    let cols = gather(&big, &idx, &GatherOptions::new().axis(1)).unwrap();
    assert_eq!(cols.shape(), &[1 << 20, 2]);
    let cells = gather_nd(
        &big,
        &TensorView::new(&[3i64, 4, -2, 9], &[2, 2]).unwrap(),
        &GatherOptions::new(),
    )
    .unwrap();
    assert_eq!(cells.as_slice(), &[7.5, 7.5]);
    let elems = gather_elements(
        &big,
        &TensorView::new(&[0i64, 1 << 19, 3], &[1, 3]).unwrap(),
        &GatherOptions::new().axis(1),
    )
    .unwrap();
    assert_eq!(elems.as_slice(), &[7.5; 3]);
}

#[test]
fn a_strided_table_is_gathered_from_the_right_cells() {
    // A [3, 4] view of a [4, 6] buffer: rows reversed, every other column.
    let buf: Vec<f32> = (0..24).map(|x| x as f32).collect();
    let v = TensorView::with_strides(&buf, 18, &[3, 4], &[-6, 1]).unwrap();
    // Rows of the view: [18..22], [12..16], [6..10].
    let idx = TensorView::new(&[2i64, 0], &[2]).unwrap();
    let g = gather(&v, &idx, &GatherOptions::new()).unwrap();
    assert_eq!(g.as_slice(), &[6.0, 7.0, 8.0, 9.0, 18.0, 19.0, 20.0, 21.0]);
    let cols = TensorView::with_strides(&buf, 0, &[4, 3], &[6, 2]).unwrap();
    let e = gather_elements(
        &cols,
        &TensorView::new(&[2i64, 0, 1, 1], &[4, 1]).unwrap(),
        &GatherOptions::new().axis(1),
    )
    .unwrap();
    assert_eq!(e.as_slice(), &[4.0, 6.0, 14.0, 20.0]);
}

#[test]
fn scatters_whose_output_or_tuples_cannot_exist_are_errors() {
    let one = [1f32];
    // The output of an out-of-place scatter has data's logical size: 2⁴⁶ f32, 256 TiB (more
    // than a 47-bit address space, so no overcommit setting can grant it).
    let big = TensorView::with_strides(&one, 0, &[1 << 24, 1 << 22], &[0, 0]).unwrap();
    let updates = TensorView::with_strides(&one, 0, &[1, 1 << 22], &[0, 0]).unwrap();
    let e = scatter_update(
        &big,
        &TensorView::new(&[0i64], &[1]).unwrap(),
        &updates,
        &ScatterOptions::new(),
    )
    .unwrap_err();
    assert!(out_of_memory(&e), "{e}");
    // 2⁴⁵ index tuples (a broadcast `indices`) resolve to 256 TiB of offsets.
    let data = [0f32; 4];
    let zero = [0i64];
    let e = scatter_nd(
        &TensorView::new(&data, &[4]).unwrap(),
        &TensorView::with_strides(&zero, 0, &[1 << 45, 1], &[0, 0]).unwrap(),
        &TensorView::with_strides(&one, 0, &[1 << 45], &[0]).unwrap(),
        &ScatterOptions::new(),
    )
    .unwrap_err();
    assert!(out_of_memory(&e), "{e}");
    // A huge broadcast `indices` of a gather is copied flat for the index pass: 2⁴⁶ int64
    // indices, 512 TiB (the output, 2⁴⁶ f32, still has a size), an error too.
    let e = gather(
        &TensorView::new(&data, &[4]).unwrap(),
        &TensorView::with_strides(&zero, 0, &[1 << 23, 1 << 23], &[0, 0]).unwrap(),
        &GatherOptions::new(),
    )
    .unwrap_err();
    assert!(out_of_memory(&e), "{e}");
}

#[test]
fn an_empty_view_may_start_anywhere() {
    let buf = [1.0f32];
    // No element is addressed, so an offset past the end is no error.
    let empty = TensorView::with_strides(&buf, 3, &[0, 4], &[4, 1]).unwrap();
    assert!(empty.is_empty());
    let g = gather(
        &empty,
        &TensorView::new(&[0i64; 0], &[0]).unwrap(),
        &GatherOptions::new(),
    )
    .unwrap();
    assert_eq!(g.shape(), &[0, 4]);
    let mut out_buf = [9.0f32];
    let mut out = TensorViewMut::with_strides(&mut out_buf, 5, &[0], &[1]).unwrap();
    gather_out(
        &TensorView::new(&[1.0f32, 2.0], &[2]).unwrap(),
        &TensorView::new(&[0i64; 0], &[0]).unwrap(),
        &mut out,
        &GatherOptions::new(),
    )
    .unwrap();
    let mut dest = TensorViewMut::with_strides(&mut out_buf, 2, &[0], &[1]).unwrap();
    scatter_elements_into(
        &mut dest,
        &TensorView::new(&[0i64; 0], &[0]).unwrap(),
        &TensorView::new(&[0f32; 0], &[0]).unwrap(),
        &ScatterOptions::new(),
    )
    .unwrap();
    assert_eq!(out_buf, [9.0]);
}

#[test]
fn more_threads_than_cores_give_the_same_bits() {
    // 4 MiB of traffic: cut into tasks for 1,000 threads, run on the cores there are.
    let n = 1 << 20;
    let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let idx: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % n as i64).collect();
    let upd: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let run = |par| {
        tensor_scatter::scatter_elements(
            &TensorView::new(&data, &[n]).unwrap(),
            &TensorView::new(&idx, &[n]).unwrap(),
            &TensorView::new(&upd, &[n]).unwrap(),
            &ScatterOptions::new()
                .reduction(tensor_scatter::Reduction::Add)
                .par(par),
        )
        .unwrap()
    };
    let one = run(Par::Sequential);
    let many = run(Par::threads_exact(1000));
    assert!(
        one.as_slice()
            .iter()
            .zip(many.as_slice())
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );
}

#[test]
fn updates_larger_than_indices_are_read_as_pytorch_reads_src() {
    use tensor_scatter::{Reduction, scatter_elements_into, scatter_elements_out};
    // data [3, 4]; indices [2, 2] along axis 1; src [3, 5]: only src[:2, :2] is read.
    let data: Vec<f32> = (0..12).map(|x| x as f32).collect();
    let idx = [3i64, 0, 1, 1];
    let src: Vec<f32> = (0..15).map(|x| 100.0 + x as f32).collect();
    let window = [100.0f32, 101.0, 105.0, 106.0]; // src[:2, :2]
    let opts = ScatterOptions::new().axis(1).reduction(Reduction::Add);
    let dv = TensorView::new(&data, &[3, 4]).unwrap();
    let iv = TensorView::new(&idx, &[2, 2]).unwrap();
    let expected = tensor_scatter::scatter_elements(
        &dv,
        &iv,
        &TensorView::new(&window, &[2, 2]).unwrap(),
        &opts,
    )
    .unwrap();
    let big = TensorView::new(&src, &[3, 5]).unwrap();
    // Refused by default (the ONNX rule), accepted with the window.
    let e = tensor_scatter::scatter_elements(&dv, &iv, &big, &opts).unwrap_err();
    assert_eq!(e.arg(), "updates");
    let w = opts.updates_window(true);
    assert_eq!(
        tensor_scatter::scatter_elements(&dv, &iv, &big, &w).unwrap(),
        expected
    );
    let mut out = vec![0f32; 12];
    scatter_elements_out(
        &dv,
        &iv,
        &big,
        &mut TensorViewMut::new(&mut out, &[3, 4]).unwrap(),
        &w,
    )
    .unwrap();
    assert_eq!(out, expected.as_slice());
    let mut dest = data.clone();
    scatter_elements_into(
        &mut TensorViewMut::new(&mut dest, &[3, 4]).unwrap(),
        &iv,
        &big,
        &w,
    )
    .unwrap();
    assert_eq!(dest, expected.as_slice());
    // Smaller than indices on some dim is still an error, naming the rule.
    let small = TensorView::new(&src[..3], &[3, 1]).unwrap();
    let e = tensor_scatter::scatter_elements(&dv, &iv, &small, &w).unwrap_err();
    assert!(e.to_string().contains("at least indices' extent"), "{e}");
}

#[test]
fn erased_views_run_every_operator_on_borrowed_strided_memory() {
    use tensor_scatter::{
        DType, DynGatherOptions, DynTensor, DynView, DynViewMut, GatherOp, Reduction, ScatterOp,
        gather_dyn, gather_dyn_out, scatter_dyn, scatter_dyn_into, scatter_dyn_out,
    };
    // data: the transpose of a [3, 2] buffer, as a [2, 3] view; updates every other element.
    let buf = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
    let data = DynView::from(TensorView::with_strides(&buf, 0, &[2, 3], &[1, 2]).unwrap());
    let idx = [2i32, 0];
    let indices = DynView::from(TensorView::new(&idx, &[1, 2]).unwrap());
    let ubuf = [10.0f64, -1.0, 20.0];
    let updates = DynView::from(TensorView::with_strides(&ubuf, 0, &[1, 2], &[2, 2]).unwrap());
    let opts = ScatterOptions::new().axis(1).reduction(Reduction::Add);
    // The same call on owned copies gives the reference.
    let owned = |v: &DynView<'_>| match v {
        DynView::F64(t) => DynTensor::from_vec(t.to_vec(), t.shape()).unwrap(),
        DynView::I32(t) => DynTensor::from_vec(t.to_vec(), t.shape()).unwrap(),
        _ => unreachable!(),
    };
    let want = scatter_dyn(
        ScatterOp::Elements,
        &owned(&data),
        &owned(&indices),
        &owned(&updates),
        &opts,
    )
    .unwrap();
    let got = scatter_dyn(ScatterOp::Elements, &data, &indices, &updates, &opts).unwrap();
    assert!(got.bit_eq(&want));
    assert_eq!(
        got.as_slice::<f64>(),
        Some(&[21.0, 3.0, 15.0, 2.0, 4.0, 6.0][..])
    );
    // _out into a reversed view, and in place into a strided destination.
    let mut obuf = [0.0f64; 6];
    let mut out =
        DynViewMut::from(TensorViewMut::with_strides(&mut obuf, 5, &[2, 3], &[-3, -1]).unwrap());
    scatter_dyn_out(
        ScatterOp::Elements,
        &data,
        &indices,
        &updates,
        &mut out,
        &opts,
    )
    .unwrap();
    assert_eq!(out.shape(), &[2, 3]);
    assert_eq!(obuf, [6.0, 4.0, 2.0, 15.0, 3.0, 21.0]);
    let mut dbuf = buf;
    let mut dest =
        DynViewMut::from(TensorViewMut::with_strides(&mut dbuf, 0, &[2, 3], &[1, 2]).unwrap());
    scatter_dyn_into(ScatterOp::Elements, &mut dest, &indices, &updates, &opts).unwrap();
    assert_eq!(dbuf, [21.0, 2.0, 3.0, 4.0, 15.0, 6.0]);
    // Gathers read the strided view where it lies.
    let g = gather_dyn(
        GatherOp::Gather,
        &data,
        &indices,
        &DynGatherOptions::new().axis(1),
    )
    .unwrap();
    assert_eq!(g.shape(), &[2, 1, 2]);
    assert_eq!(g.as_slice::<f64>(), Some(&[5.0, 1.0, 6.0, 2.0][..]));
    let mut gbuf = [0.0f64; 4];
    gather_dyn_out(
        GatherOp::Gather,
        &data,
        &indices,
        DynViewMut::from(TensorViewMut::new(&mut gbuf, &[2, 1, 2]).unwrap()),
        &DynGatherOptions::new().axis(1),
    )
    .unwrap();
    assert_eq!(gbuf, [5.0, 1.0, 6.0, 2.0]);
    // A dtype mismatch names the argument; nothing is written.
    let f32s = [0f32; 2];
    let bad = DynView::from(TensorView::new(&f32s, &[1, 2]).unwrap());
    let before = dbuf;
    let mut dest =
        DynViewMut::from(TensorViewMut::with_strides(&mut dbuf, 0, &[2, 3], &[1, 2]).unwrap());
    let e = scatter_dyn_into(ScatterOp::Elements, &mut dest, &indices, &bad, &opts).unwrap_err();
    assert_eq!(e.arg(), "updates");
    assert_eq!(dest.dtype(), DType::F64);
    assert_eq!(dbuf, before);
}

/// Two writable views interleaved in one buffer (the even and the odd columns of [64, 2]),
/// made from raw parts as a binding would: one thread scatters into the even column (every
/// kernel family: an element scatter, mean on the sequential engine, f16 accumulation) while
/// another counts in the odd one. A scatter that read or wrote the positions between its
/// elements would race with the counter and lose counts; the even column must match the same
/// scatters on a contiguous copy.
#[test]
fn views_with_gaps_leave_the_cells_between_their_elements_to_their_owner() {
    use tensor_scatter::{Reduction, half::f16, scatter_elements};
    const ROWS: usize = 64;
    const ROUNDS: usize = 200;
    fn run<T: tensor_scatter::Element + PartialEq + std::fmt::Debug>(
        reduction: Reduction,
        one: T,
        next: impl Fn(T) -> T + Sync,
    ) {
        let mut buf = vec![T::default(); 2 * ROWS];
        let base = buf.as_mut_ptr();
        let idx: Vec<i64> = (0..ROWS as i64).map(|i| (i * 7) % ROWS as i64).collect();
        let upd = vec![one; ROWS];
        let opts = ScatterOptions::new()
            .reduction(reduction)
            .par(Par::threads_exact(2));
        let (iv, uv) = (
            TensorView::new(&idx, &[ROWS]).unwrap(),
            TensorView::new(&upd, &[ROWS]).unwrap(),
        );
        // SAFETY: the even and the odd cells of `buf` are disjoint, each view's alone, and
        // `buf` outlives both (the scope below ends first).
        let (mut even, mut odd) = unsafe {
            (
                TensorViewMut::from_raw_parts(base, &[ROWS], &[2]).unwrap(),
                TensorViewMut::from_raw_parts(base.add(1), &[ROWS], &[2]).unwrap(),
            )
        };
        let mut want = vec![T::default(); ROWS];
        for _ in 0..ROUNDS {
            want = scatter_elements(&TensorView::new(&want, &[ROWS]).unwrap(), &iv, &uv, &opts)
                .unwrap()
                .into_vec();
        }
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..ROUNDS {
                    scatter_elements_into(&mut even, &iv, &uv, &opts).unwrap();
                }
            });
            s.spawn(|| {
                // Counts through its own view, as another owner would.
                for _ in 0..ROUNDS * 4 {
                    let cur = odd.to_vec();
                    let bumped: Vec<T> = cur.iter().map(|&x| next(x)).collect();
                    let all: Vec<i64> = (0..ROWS as i64).collect();
                    let set = ScatterOptions::new();
                    scatter_elements_into(
                        &mut odd,
                        &TensorView::new(&all, &[ROWS]).unwrap(),
                        &TensorView::new(&bumped, &[ROWS]).unwrap(),
                        &set,
                    )
                    .unwrap();
                }
            });
        });
        let (evens, odds): (Vec<T>, Vec<T>) = (
            buf.iter().step_by(2).copied().collect(),
            buf.iter().skip(1).step_by(2).copied().collect(),
        );
        assert_eq!(evens, want, "{reduction:?}");
        let mut count = T::default();
        for _ in 0..ROUNDS * 4 {
            count = next(count);
        }
        assert!(odds.iter().all(|&x| x == count), "{reduction:?}: {odds:?}");
    }
    run(Reduction::Add, 1.0f32, |x| x + 1.0);
    run(Reduction::Mean, 1.0f32, |x| x + 1.0);
    run(Reduction::Add, f16::ONE, |x| x + f16::ONE);
    run(Reduction::Max, 3i32, |x| x + 1);
}
