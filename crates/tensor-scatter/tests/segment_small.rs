//! `segment::scatter_small` (the fold of a few elements, with no plan, that the FFI handlers and
//! the Python calls take first) against the planned `segment::scatter` and, with `out`'s values
//! taking part, `segment::scatter_out`, bit for bit: every reduction it takes, float and
//! integer types, int32 and int64 indices, values that stress the fold's rules (NaN payloads,
//! -0.0, infinities, overflow), cells nothing reaches, and the errors.

use half::{bf16, f16};
use tensor_scatter::segment::{self, SMALL_CELLS, SMALL_UPDATES, SegmentOptions, scatter_small};
use tensor_scatter::{Element, IndexInt, Reduction, TensorView, TensorViewMut};

const REDUCTIONS: [Reduction; 5] = [
    Reduction::Add,
    Reduction::Mul,
    Reduction::Mean,
    Reduction::Min,
    Reduction::Max,
];

/// splitmix64.
fn next(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn bits<T: Element>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits_u64()).collect()
}

/// Random cases of `pool` values into up to `SMALL_CELLS` cells, each reduction, compared with
/// the planned path (1 and 2 threads give it the same bits, as its own tests show).
fn check<T: Element, I: IndexInt + TryFrom<i64>>(pool: &[T], seed: u64) {
    let mut s = seed;
    for case in 0..300 {
        // Both tiers: up to 64 cells on the stack, more on the heap.
        let n = 1 + (next(&mut s) as usize) % if case % 2 == 0 { 64 } else { SMALL_CELLS };
        let e = match case % 3 {
            0 => (next(&mut s) as usize) % 12,
            1 => (next(&mut s) as usize) % 200,
            _ => SMALL_UPDATES - (next(&mut s) as usize) % 3,
        };
        let src: Vec<T> = (0..e)
            .map(|_| pool[(next(&mut s) as usize) % pool.len()])
            .collect();
        // Often fewer distinct cells than n, so some cells receive nothing.
        let reach = 1 + (next(&mut s) as usize) % n;
        let idx: Vec<I> = (0..e)
            .map(|_| {
                let c = (next(&mut s) as usize % reach) as i64;
                I::try_from(c).ok().expect("a cell fits the index type")
            })
            .collect();
        let sv = TensorView::new(&src, &[e]).unwrap();
        let iv = TensorView::new(&idx, &[e]).unwrap();
        for red in REDUCTIONS {
            let opts = SegmentOptions::new().dim(0).dim_size(n).reduce(red);
            let want = segment::scatter(&sv, &iv, &opts).unwrap();
            let mut out = vec![pool[0]; n];
            scatter_small(&src, &idx, &mut out, red, false)
                .expect("a small call")
                .unwrap();
            assert_eq!(
                bits(&out),
                bits(want.as_slice()),
                "{} {} {red:?} case {case}: n {n} e {e}",
                T::DTYPE,
                I::DTYPE
            );
            // `out`'s own values taking part (torch_scatter's `out=`), from the same pool.
            let start: Vec<T> = (0..n)
                .map(|_| pool[(next(&mut s) as usize) % pool.len()])
                .collect();
            let mut want = start.clone();
            let mut wv = TensorViewMut::new(&mut want, &[n]).unwrap();
            segment::scatter_out(&sv, &iv, &mut wv, &opts).unwrap();
            let mut out = start.clone();
            scatter_small(&src, &idx, &mut out, red, true)
                .expect("a small call")
                .unwrap();
            assert_eq!(
                bits(&out),
                bits(&want),
                "{} {} {red:?} out= case {case}: n {n} e {e}",
                T::DTYPE,
                I::DTYPE
            );
        }
    }
}

#[test]
fn small_scatters_give_the_planned_paths_bits() {
    let nan = f32::from_bits(0x7fc0_1234);
    let fs = [
        0.0f32,
        -0.0,
        1.5,
        -2.25,
        3.0e38,
        -3.0e38,
        1.0e-45,
        f32::INFINITY,
        f32::NEG_INFINITY,
        nan,
        -nan,
        7.0,
        0.1,
    ];
    check::<f32, i32>(&fs, 1);
    check::<f32, i64>(&fs, 2);
    let ds: Vec<f64> = fs
        .iter()
        .map(|&x| f64::from(x))
        .chain([1e308, 0.3])
        .collect();
    check::<f64, i32>(&ds, 3);
    check::<f64, i64>(&ds, 4);
    let hs: Vec<f16> = fs.iter().map(|&x| f16::from_f32(x)).collect();
    check::<f16, i64>(&hs, 5);
    let bs: Vec<bf16> = fs.iter().map(|&x| bf16::from_f32(x)).collect();
    check::<bf16, i32>(&bs, 6);
    let is = [0i32, 1, -1, 7, -13, i32::MAX, i32::MIN, 100_000];
    check::<i32, i32>(&is, 7);
    let ls: Vec<i64> = is
        .iter()
        .map(|&x| i64::from(x))
        .chain([i64::MAX, i64::MIN])
        .collect();
    check::<i64, i64>(&ls, 8);
    check::<u8, i32>(&[0u8, 1, 2, 200, 255], 9);
}

#[test]
fn small_scatters_refuse_what_the_planned_path_refuses_and_write_nothing() {
    let src = [1.0f32, 2.0, 3.0, 4.0];
    let sv = TensorView::new(&src, &[4]).unwrap();
    for bad in [4i64, -1, i64::MAX, i64::MIN] {
        for at in 0..4 {
            let mut idx = [0i64, 1, 2, 3];
            idx[at] = bad;
            let opts = SegmentOptions::new().dim(0).dim_size(4);
            let want = segment::scatter(&sv, &TensorView::new(&idx, &[4]).unwrap(), &opts)
                .unwrap_err()
                .to_string();
            for include_self in [false, true] {
                let mut out = [9.0f32; 4];
                let got = scatter_small(&src, &idx, &mut out, Reduction::Add, include_self)
                    .expect("a small call")
                    .unwrap_err()
                    .to_string();
                assert_eq!(got, want, "{bad} at {at}");
                assert_eq!(out, [9.0; 4], "written, {bad} at {at}");
            }
            let mut out = [9.0f32; 4];
            let planned = segment::scatter_out(
                &sv,
                &TensorView::new(&idx, &[4]).unwrap(),
                &mut TensorViewMut::new(&mut out, &[4]).unwrap(),
                &opts,
            )
            .unwrap_err()
            .to_string();
            assert_eq!(planned, want, "out= names it too: {bad} at {at}");
        }
    }
}

#[test]
fn calls_that_are_not_small_are_left_to_the_planned_path() {
    let src = vec![1.0f32; SMALL_UPDATES + 1];
    let idx = vec![0i32; SMALL_UPDATES + 1];
    let mut out = vec![0.0f32; SMALL_CELLS + 1];
    assert!(
        scatter_small(&src[..3], &idx[..3], &mut out, Reduction::Add, false).is_none(),
        "cells"
    );
    let few = &mut out[..4];
    assert!(
        scatter_small(&src, &idx, few, Reduction::Add, false).is_none(),
        "too many updates"
    );
    assert!(
        scatter_small(&src[..3], &idx[..2], few, Reduction::Add, false).is_none(),
        "lengths"
    );
    assert!(
        scatter_small(&src[..3], &idx[..3], few, Reduction::None, false).is_none(),
        "none"
    );
    assert!(
        scatter_small(&src[..3], &idx[..3], few, Reduction::Sub, true).is_none(),
        "sub"
    );
    assert!(scatter_small(&src[..3], &idx[..3], few, Reduction::Add, true).is_some());
}
