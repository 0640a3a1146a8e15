//! Criterion benches: operator × dtype × index distribution × reduction, reported as GB/s
//! over the minimum bytes an out-of-place call moves (read data, write output, read indices
//! and updates). CI compiles them (`cargo bench --no-run`); timings belong in BENCHMARKS.md,
//! measured side by side with the peers by `bench/peers/run`, never in tests.
//!
//! The gathers (`gathers/…`) report GB/s over the bytes they must move: read the gathered
//! values, write them, read the indices.
//!
//! `cargo bench -p tensor-scatter --bench scatter -- 'elements/f32'` runs a subset.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tensor_scatter::half::f16;
use tensor_scatter::{
    Element, GatherOptions, Reduction, ScatterOptions, TensorView, TensorViewMut,
    gather_elements_out, gather_nd_out, gather_out, scatter_elements_out, scatter_nd_out,
    scatter_update_out,
};

/// How indices are drawn.
#[derive(Clone, Copy, Debug)]
enum Dist {
    /// 0, 1, 2, ... (wrapping): streaming, no duplicates.
    Sequential,
    /// Uniform random (duplicates as chance gives them).
    Uniform,
    /// 90% of updates hit 1% of the positions.
    Skewed,
    /// Every update hits position 0.
    AllSame,
}

const DISTS: [Dist; 4] = [Dist::Sequential, Dist::Uniform, Dist::Skewed, Dist::AllSame];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn indices(dist: Dist, count: usize, size: usize, seed: u64) -> Vec<i64> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|i| {
            (match dist {
                Dist::Sequential => i % size,
                Dist::Uniform => rng.next() as usize % size,
                Dist::Skewed if !rng.next().is_multiple_of(10) => {
                    rng.next() as usize % size.div_ceil(100)
                }
                Dist::Skewed => rng.next() as usize % size,
                Dist::AllSame => 0,
            }) as i64
        })
        .collect()
}

trait Value: Element {
    fn from_i(v: i64) -> Self;
}
impl Value for f32 {
    fn from_i(v: i64) -> Self {
        v as f32
    }
}
impl Value for f16 {
    fn from_i(v: i64) -> Self {
        f16::from_f32(v as f32)
    }
}
impl Value for i64 {
    fn from_i(v: i64) -> Self {
        v
    }
}

fn values<T: Value>(n: usize) -> Vec<T> {
    (0..n).map(|i| T::from_i((i % 17) as i64 - 8)).collect()
}

/// ScatterElements along axis 0 of a [rows, cols] matrix with [k, cols] updates.
fn elements<T: Value>(c: &mut Criterion, name: &str) {
    let (rows, cols, k) = (2048, 1024, 512);
    let data = values::<T>(rows * cols);
    let upd = values::<T>(k * cols);
    let mut out = vec![T::from_i(0); rows * cols];
    let mut g = c.benchmark_group(format!("elements/{name}"));
    let bytes = 2 * data.len() * size_of::<T>() + k * cols * (8 + size_of::<T>());
    g.throughput(Throughput::Bytes(bytes as u64));
    for dist in DISTS {
        let idx = indices(dist, k * cols, rows, 1);
        for r in [Reduction::None, Reduction::Add] {
            let opts = ScatterOptions::new().reduction(r);
            g.bench_function(BenchmarkId::new(format!("{dist:?}"), r.name()), |b| {
                b.iter(|| {
                    scatter_elements_out(
                        &TensorView::new(&data, &[rows, cols]).unwrap(),
                        &TensorView::new(&idx, &[k, cols]).unwrap(),
                        &TensorView::new(&upd, &[k, cols]).unwrap(),
                        &mut TensorViewMut::new(&mut out, &[rows, cols]).unwrap(),
                        &opts,
                    )
                    .unwrap()
                })
            });
        }
    }
    g.finish();
}

/// 1-D scatter-add of many updates into a small vector (a histogram).
fn histogram(c: &mut Criterion) {
    let (n, k) = (1 << 18, 1 << 21);
    let data = values::<f32>(n);
    let upd = values::<f32>(k);
    let mut out = vec![0f32; n];
    let mut g = c.benchmark_group("histogram/f32");
    g.throughput(Throughput::Bytes((2 * n * 4 + k * 12) as u64));
    for dist in DISTS {
        let idx = indices(dist, k, n, 2);
        let opts = ScatterOptions::new().reduction(Reduction::Add);
        g.bench_function(format!("{dist:?}"), |b| {
            b.iter(|| {
                scatter_elements_out(
                    &TensorView::new(&data, &[n]).unwrap(),
                    &TensorView::new(&idx, &[k]).unwrap(),
                    &TensorView::new(&upd, &[k]).unwrap(),
                    &mut TensorViewMut::new(&mut out, &[n]).unwrap(),
                    &opts,
                )
                .unwrap()
            })
        });
    }
    g.finish();
}

/// ScatterND row updates (an embedding gradient) and ScatterUpdate slices.
fn rows<T: Value>(c: &mut Criterion, name: &str) {
    let (n, k, w) = (1 << 17, 1 << 14, 64);
    let data = values::<T>(n * w);
    let upd = values::<T>(k * w);
    let mut out = vec![T::from_i(0); n * w];
    let mut g = c.benchmark_group(format!("rows/{name}"));
    g.throughput(Throughput::Bytes(
        (2 * data.len() * size_of::<T>() + k * (8 + w * size_of::<T>())) as u64,
    ));
    for dist in DISTS {
        let idx = indices(dist, k, n, 3);
        for r in [Reduction::None, Reduction::Add] {
            let opts = ScatterOptions::new().reduction(r);
            g.bench_function(BenchmarkId::new(format!("nd/{dist:?}"), r.name()), |b| {
                b.iter(|| {
                    scatter_nd_out(
                        &TensorView::new(&data, &[n, w]).unwrap(),
                        &TensorView::new(&idx, &[k, 1]).unwrap(),
                        &TensorView::new(&upd, &[k, w]).unwrap(),
                        &mut TensorViewMut::new(&mut out, &[n, w]).unwrap(),
                        &opts,
                    )
                    .unwrap()
                })
            });
        }
        let opts = ScatterOptions::new();
        g.bench_function(BenchmarkId::new(format!("update/{dist:?}"), "none"), |b| {
            b.iter(|| {
                scatter_update_out(
                    &TensorView::new(&data, &[n, w]).unwrap(),
                    &TensorView::new(&idx, &[k]).unwrap(),
                    &TensorView::new(&upd, &[k, w]).unwrap(),
                    &mut TensorViewMut::new(&mut out, &[n, w]).unwrap(),
                    &opts,
                )
                .unwrap()
            })
        });
    }
    g.finish();
}

/// Gathers into a reused output: embedding rows (`gather` and `gather_nd` with one-component
/// tuples) and `take_along_axis` (`gather_elements` along the last axis), per distribution.
fn gathers<T: Value>(c: &mut Criterion, name: &str) {
    let mut g = c.benchmark_group(format!("gathers/{name}"));
    let (n, w, k) = (1 << 18, 64usize, 1 << 15);
    let table: Vec<T> = (0..n * w).map(|i| T::from_i(i as i64 % 97)).collect();
    let mut out = vec![T::from_i(0); k * w];
    let bytes = 2 * k * w * std::mem::size_of::<T>() + k * 8;
    g.throughput(Throughput::Bytes(bytes as u64));
    let opts = GatherOptions::new();
    for dist in DISTS {
        let idx = indices(dist, k, n, 5);
        g.bench_function(BenchmarkId::new("gather", format!("{dist:?}")), |b| {
            b.iter(|| {
                gather_out(
                    &TensorView::new(&table, &[n, w]).unwrap(),
                    &TensorView::new(&idx, &[k]).unwrap(),
                    &mut TensorViewMut::new(&mut out, &[k, w]).unwrap(),
                    &opts,
                )
                .unwrap()
            })
        });
        g.bench_function(BenchmarkId::new("gather_nd", format!("{dist:?}")), |b| {
            b.iter(|| {
                gather_nd_out(
                    &TensorView::new(&table, &[n, w]).unwrap(),
                    &TensorView::new(&idx, &[k, 1]).unwrap(),
                    &mut TensorViewMut::new(&mut out, &[k, w]).unwrap(),
                    &opts,
                )
                .unwrap()
            })
        });
    }
    let (r, cols, m) = (2048usize, 2048usize, 512usize);
    let data: Vec<T> = (0..r * cols).map(|i| T::from_i(i as i64 % 89)).collect();
    let mut out = vec![T::from_i(0); r * m];
    let bytes = 2 * r * m * std::mem::size_of::<T>() + r * m * 8;
    g.throughput(Throughput::Bytes(bytes as u64));
    let opts = GatherOptions::new().axis(1);
    for dist in DISTS {
        let idx = indices(dist, r * m, cols, 9);
        g.bench_function(
            BenchmarkId::new("gather_elements", format!("{dist:?}")),
            |b| {
                b.iter(|| {
                    gather_elements_out(
                        &TensorView::new(&data, &[r, cols]).unwrap(),
                        &TensorView::new(&idx, &[r, m]).unwrap(),
                        &mut TensorViewMut::new(&mut out, &[r, m]).unwrap(),
                        &opts,
                    )
                    .unwrap()
                })
            },
        );
    }
    g.finish();
}

fn all(c: &mut Criterion) {
    gathers::<f32>(c, "f32");
    gathers::<f16>(c, "f16");
    elements::<f32>(c, "f32");
    elements::<f16>(c, "f16");
    elements::<i64>(c, "i64");
    histogram(c);
    rows::<f32>(c, "f32");
    rows::<f16>(c, "f16");
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = all
}
criterion_main!(benches);
