//! What a tiny call costs: a 4x2 scatter-add, a 4-element gather, and the 1-D scatter-add and
//! gather of 10 elements that `bench/peers/overhead.py` times from Python, with the default options
//! (`Par::Auto`) and on the calling thread alone (`Par::Sequential`), in µs per call (the
//! best of five rounds of 100,000 calls). A small call runs on the calling thread whatever
//! the setting, so the two should cost about the same.
//!
//! `cargo bench -p tensor-scatter --bench call_overhead`
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use tensor_scatter::{
    GatherOptions, Par, Reduction, ScatterOptions, TensorView, gather, scatter_elements,
};

const CALLS: u32 = 100_000;

/// The best of five rounds of `CALLS` calls of `f`, in µs per call.
fn per_call(mut f: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..CALLS {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / f64::from(CALLS)
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let data = [1f32, 2., 3., 4., 5., 6., 7., 8.];
    let idx = [1i64, 0, 3, 2, 0, 1, 2, 3];
    let upd = [0.5f32; 8];
    let table = [10f32, 20., 30., 40.];
    let picks = [3i64, 0, 2, 1];
    println!("call          Par::Auto µs  Par::Sequential µs");
    let scatter = |par| {
        per_call(|| {
            let out = scatter_elements(
                &TensorView::new(black_box(&data), &[4, 2]).unwrap(),
                &TensorView::new(black_box(&idx), &[4, 2]).unwrap(),
                &TensorView::new(black_box(&upd), &[4, 2]).unwrap(),
                &ScatterOptions::new().reduction(Reduction::Add).par(par),
            )
            .unwrap();
            black_box(out);
        })
    };
    let gather4 = |par| {
        per_call(|| {
            let out = gather(
                &TensorView::new(black_box(&table), &[4]).unwrap(),
                &TensorView::new(black_box(&picks), &[4]).unwrap(),
                &GatherOptions::new().par(par),
            )
            .unwrap();
            black_box(out);
        })
    };
    println!(
        "scatter 4x2   {:>12.3}  {:>18.3}",
        scatter(Par::Auto),
        scatter(Par::Sequential)
    );
    println!(
        "gather 4      {:>12.3}  {:>18.3}",
        gather4(Par::Auto),
        gather4(Par::Sequential)
    );
    // n = 10 as in overhead.py: 10 updates into 10 cells, 10 picks from 10, into reused
    // outputs (its Python calls pass out=).
    let d10: Vec<f32> = (0..10).map(|x| x as f32).collect();
    let i10: Vec<i64> = vec![3, 1, 4, 1, 5, 9, 2, 6, 5, 3];
    let mut o10 = [0f32; 10];
    let mut g10 = [0f32; 10];
    let mut scatter10 = |par| {
        per_call(|| {
            tensor_scatter::scatter_elements_out(
                &TensorView::new(black_box(&d10), &[10]).unwrap(),
                &TensorView::new(black_box(&i10), &[10]).unwrap(),
                &TensorView::new(black_box(&d10), &[10]).unwrap(),
                &mut tensor_scatter::TensorViewMut::new(&mut o10, &[10]).unwrap(),
                &ScatterOptions::new().reduction(Reduction::Add).par(par),
            )
            .unwrap();
        })
    };
    println!(
        "scatter 10    {:>12.3}  {:>18.3}",
        scatter10(Par::Auto),
        scatter10(Par::Sequential)
    );
    let mut gather10 = |par| {
        per_call(|| {
            tensor_scatter::gather_out(
                &TensorView::new(black_box(&d10), &[10]).unwrap(),
                &TensorView::new(black_box(&i10), &[10]).unwrap(),
                &mut tensor_scatter::TensorViewMut::new(&mut g10, &[10]).unwrap(),
                &GatherOptions::new().par(par),
            )
            .unwrap();
        })
    };
    println!(
        "gather 10     {:>12.3}  {:>18.3}",
        gather10(Par::Auto),
        gather10(Par::Sequential)
    );
}
