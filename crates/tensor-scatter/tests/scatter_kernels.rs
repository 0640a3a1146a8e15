//! `scatter_elements` at the library's real kernel thresholds (destinations larger than a
//! cache tile), against the reference oracle, bit for bit: staged column tiles (fused copy,
//! in place with many updates), buckets (in place with few updates), column tiles with an
//! identity fill, and whole-row blocks (staged above 8 MiB with the fused copy), for every
//! form, several reductions, thread counts, instruction-set levels and destination alignments
//! (the staged kernel streams whole 64-byte lines, and shifts its tile grid to the
//! destination's line boundaries). Blocks that fit a tile, fewer than the threads, are cut
//! into column tiles. Single rows are also cut into one part per thread (the split fold),
//! with the index dtypes its vector scans take and one they do not. ScatterND tuples that
//! each address one element (`x[r, c] += v`) are resolved to flat offsets in parallel, or,
//! where the index outweighs the table, folded by the fed fold, which resolves them itself.
#![cfg(feature = "reference")]

use tensor_scatter::isa::{Isa, with_isa};
use tensor_scatter::{
    Element, IndexInt, IndexPolicy, NegativeIndices, OutOfRange, Par, Reduction, ScatterOptions,
    TensorView, TensorViewMut, reference, scatter_elements, scatter_elements_into,
    scatter_elements_out, scatter_nd, scatter_nd_into, scatter_nd_out,
};

mod common;

/// Whole numbers as `T` (exact under every reduction and order).
trait Whole: Element {
    fn whole(v: i64) -> Self;
    fn bits(s: &[Self]) -> Vec<u64>;
}
impl Whole for f32 {
    fn whole(v: i64) -> Self {
        v as f32
    }
    fn bits(s: &[Self]) -> Vec<u64> {
        s.iter().map(|x| u64::from(x.to_bits())).collect()
    }
}
impl Whole for f64 {
    fn whole(v: i64) -> Self {
        v as f64
    }
    fn bits(s: &[Self]) -> Vec<u64> {
        s.iter().map(|x| x.to_bits()).collect()
    }
}
impl Whole for half::f16 {
    fn whole(v: i64) -> Self {
        half::f16::from_f32(v as f32)
    }
    fn bits(s: &[Self]) -> Vec<u64> {
        s.iter().map(|x| u64::from(x.to_bits())).collect()
    }
}
impl Whole for u8 {
    fn whole(v: i64) -> Self {
        v.rem_euclid(7) as u8
    }
    fn bits(s: &[Self]) -> Vec<u64> {
        s.iter().map(|&x| u64::from(x)).collect()
    }
}

/// Scatters `k` rows of updates into `data` of shape `[outer, n, inner]` along axis 1, in
/// every form, and compares each with the oracle.
fn check<T: Whole>(outer: usize, n: usize, k: usize, inner: usize, seed: u64) {
    let shape = [outer, n, inner];
    let ushape = [outer, k, inner];
    let cells = outer * n * inner;
    let count = outer * k * inner;
    let data: Vec<T> = (0..cells).map(|i| T::whole((i % 13) as i64 - 6)).collect();
    let upd: Vec<T> = (0..count).map(|i| T::whole((i % 5) as i64 - 2)).collect();
    // In [-n, n): negative indices wrap (the default policy), duplicates are frequent.
    let mut idx = common::lcg(seed, count, 2 * n as u64);
    idx.iter_mut().for_each(|x| *x -= n as i64);
    let dv = TensorView::new(&data, &shape).unwrap();
    let iv = TensorView::new(&idx, &ushape).unwrap();
    let uv = TensorView::new(&upd, &ushape).unwrap();
    let cases = [
        (Reduction::None, true),
        (Reduction::Add, true),
        (Reduction::Max, true),
        (Reduction::Add, false), // identity fill of the targeted cells
    ];
    for (reduction, include_self) in cases {
        let base = ScatterOptions::new()
            .axis(1)
            .reduction(reduction)
            .include_self(include_self);
        let want = reference::scatter_elements(&dv, &iv, &uv, &base).unwrap();
        let want = T::bits(want.as_slice());
        for isa in Isa::supported() {
            for threads in [1, 2, 3] {
                let opts = base.par(Par::threads_exact(threads));
                let what = format!("{reduction:?} self={include_self} {isa:?} {threads}T");
                let got = with_isa(isa, || scatter_elements(&dv, &iv, &uv, &opts))
                    .unwrap()
                    .unwrap();
                assert!(T::bits(got.as_slice()) == want, "allocating, {what}");
                // `_out` and in place, at every alignment of the destination within a line.
                for shift in [0, 1, 3] {
                    let mut buf = vec![T::whole(99); cells + 8];
                    let out = &mut buf[shift..shift + cells];
                    let mut ov = TensorViewMut::new(out, &shape).unwrap();
                    with_isa(isa, || scatter_elements_out(&dv, &iv, &uv, &mut ov, &opts))
                        .unwrap()
                        .unwrap();
                    assert!(T::bits(out) == want, "out +{shift}, {what}");
                    out.copy_from_slice(&data);
                    let mut ov = TensorViewMut::new(out, &shape).unwrap();
                    with_isa(isa, || scatter_elements_into(&mut ov, &iv, &uv, &opts))
                        .unwrap()
                        .unwrap();
                    assert!(T::bits(out) == want, "into +{shift}, {what}");
                    // Nothing outside the destination was written.
                    assert!(T::bits(&buf[..shift]) == T::bits(&vec![T::whole(99); shift]));
                    let after = &buf[shift + cells..];
                    assert!(T::bits(after) == T::bits(&vec![T::whole(99); after.len()]));
                }
            }
        }
    }
}

#[test]
fn staged_tiles_match_the_oracle() {
    // Dense updates (k = n / 3): staged in every form. Rows of 1000 cells are not a whole
    // number of lines, so the rows' alignments differ; 4096 cells are.
    check::<f32>(1, 300, 100, 1000, 1);
    check::<f32>(2, 80, 40, 4096, 2);
    check::<half::f16>(1, 600, 150, 1100, 3);
    check::<f64>(2, 100, 50, 1500, 4);
    check::<u8>(1, 1000, 400, 1200, 5);
}

#[test]
fn sparse_updates_in_place_match_the_oracle() {
    // Few updates (fewer than one per line of the destination): buckets in place, staged
    // with the fused copy.
    check::<f32>(1, 2000, 3, 1000, 6);
    check::<half::f16>(2, 500, 2, 2000, 7);
}

#[test]
fn whole_row_blocks_match_the_oracle() {
    // Blocks of n * inner cells that fit a tile: the axis is the innermost dim (rows of one
    // cell, index_add / scatter_add along the last dim) or nearly so. Destinations of 8 MiB
    // and more are staged and streamed out when the copy is fused; smaller ones are not.
    check::<f32>(520, 4096, 1024, 1, 8); // 8.3 MiB: staged
    check::<half::f16>(1100, 4000, 900, 1, 9); // 8.4 MiB: staged, rows not whole lines
    check::<f32>(60, 3000, 700, 1, 10); // 0.7 MiB: copied and folded in place
    check::<f64>(40, 500, 300, 3, 11); // three cells per row
    check::<u8>(200, 5000, 2000, 1, 12);
}

#[test]
fn single_blocks_checked_in_the_fold_match_the_oracle() {
    // One block (outer = 1) of 1.2-1.6 MB with more index bytes than block bytes: one task
    // folds it into scratch, checking each index as it goes, at 1 and 2 threads; at 3 (a
    // 1.33 MiB budget) the two 1.6 MB blocks take the buckets, the others still the fold.
    check::<f32>(1, 400_000, 220_000, 1, 13); // a 1-D scatter
    check::<f64>(1, 50_000, 60_000, 4, 14); // rows of four cells
    check::<half::f16>(1, 600_000, 160_000, 1, 15);
    check::<u8>(1, 1_300_000, 200_000, 1, 16);
}

/// Every form of `scatter_elements` (allocating, `_out`, in place) over `data` of `shape`, at
/// each of `threads`, fails with the oracle's error under `base` and leaves its output
/// untouched.
fn rejects_untouched(
    data: &[f32],
    shape: &[usize],
    iv: &TensorView<'_, i64>,
    uv: &TensorView<'_, f32>,
    base: ScatterOptions,
    threads: &[usize],
    what: &str,
) {
    let dv = TensorView::new(data, shape).unwrap();
    let want = reference::scatter_elements(&dv, iv, uv, &base)
        .unwrap_err()
        .to_string();
    for &t in threads {
        let opts = base.par(Par::threads_exact(t));
        let what = format!("{what} {t}T");
        let got = scatter_elements(&dv, iv, uv, &opts).unwrap_err();
        assert_eq!(got.to_string(), want, "allocating, {what}");
        let mut out = vec![7.0f32; data.len()];
        let mut ov = TensorViewMut::new(&mut out, shape).unwrap();
        let got = scatter_elements_out(&dv, iv, uv, &mut ov, &opts).unwrap_err();
        assert_eq!(got.to_string(), want, "out, {what}");
        assert!(out.iter().all(|&x| x == 7.0), "out written, {what}");
        let mut out = data.to_vec();
        let mut ov = TensorViewMut::new(&mut out, shape).unwrap();
        let got = scatter_elements_into(&mut ov, iv, uv, &opts).unwrap_err();
        assert_eq!(got.to_string(), want, "in place, {what}");
        assert!(out == data, "in place written, {what}");
    }
}

#[test]
fn blocks_fewer_than_threads_are_cut_into_column_tiles() {
    // One or two blocks that each fit a tile, rows at least two lines wide: at 2 and 3
    // threads each block is cut into column tiles of whole lines, one per thread (at 1
    // thread the single ones are checked in the fold). Rows of 300 and 500 cells are not a
    // whole number of lines, so the last tile is narrower; the copy is fused or not.
    check::<f32>(1, 512, 256, 256, 22); // the fold's shape, more index bytes than block
    check::<f32>(2, 300, 200, 300, 23); // two blocks, three threads: two tiles per block
    check::<half::f16>(1, 1000, 300, 500, 24);
    check::<f64>(1, 200, 500, 48, 25); // three lines per row
    check::<u8>(1, 2000, 600, 400, 26);
}

#[test]
fn blocks_cut_into_column_tiles_reject_before_writing() {
    // The same rejected indices as the checked fold, where the block is cut into column
    // tiles at 2 and 3 threads: the index pass rejects them before anything is written.
    let (n, k, inner) = (512, 256, 256);
    let data: Vec<f32> = (0..n * inner).map(|i| (i % 11) as f32).collect();
    let upd: Vec<f32> = (0..k * inner).map(|i| (i % 3) as f32).collect();
    let uv = TensorView::new(&upd, &[k, inner]).unwrap();
    for bad in [n as i64, -(n as i64) - 1] {
        for at in [0, k * inner / 2 + 17, k * inner - 1] {
            let mut idx = common::lcg(27, k * inner, n as u64);
            idx[at] = bad;
            let iv = TensorView::new(&idx, &[k, inner]).unwrap();
            for (reduction, include_self) in [(Reduction::Add, true), (Reduction::Max, false)] {
                let base = ScatterOptions::new()
                    .axis(0)
                    .reduction(reduction)
                    .include_self(include_self);
                let what = format!("{bad} at {at} {reduction:?}");
                rejects_untouched(&data, &[n, inner], &iv, &uv, base, &[1, 2, 3], &what);
            }
        }
    }
}

#[test]
fn single_blocks_checked_in_the_fold_reject_before_writing() {
    // A rejected index anywhere in the fold (the first, the middle, the last update) leaves
    // the output untouched and names the same position and value as the oracle.
    let n = 300_000;
    let k = 200_000;
    let data: Vec<f32> = (0..n).map(|i| (i % 11) as f32).collect();
    let upd: Vec<f32> = (0..k).map(|i| (i % 3) as f32).collect();
    let uv = TensorView::new(&upd, &[k]).unwrap();
    let policies = [
        (IndexPolicy::default(), n as i64),
        (IndexPolicy::default(), -(n as i64) - 1),
        (
            IndexPolicy::new(NegativeIndices::Error, OutOfRange::Error),
            -1,
        ),
        (
            IndexPolicy::new(NegativeIndices::Error, OutOfRange::Clamp),
            -3,
        ),
    ];
    for (policy, bad) in policies {
        for at in [0, k / 2, k - 1] {
            let mut idx = common::lcg(17, k, n as u64);
            idx[at] = bad;
            let iv = TensorView::new(&idx, &[k]).unwrap();
            for (reduction, include_self) in [(Reduction::Add, true), (Reduction::Max, false)] {
                let base = ScatterOptions::new()
                    .axis(0)
                    .reduction(reduction)
                    .include_self(include_self)
                    .index_policy(policy);
                let what = format!("{policy:?} {bad} at {at} {reduction:?}");
                rejects_untouched(&data, &[n], &iv, &uv, base, &[1, 2], &what);
            }
        }
    }
}

/// A 1-D scatter of `k` updates into `n` cells with `I` indices (negative ones, when `I` has
/// them, wrap), in every form, every reduction the split fold takes, every ISA level and 1-4
/// threads, against the oracle; and the same indices with one of them rejected, at each
/// position of `bad_at`, leave every output untouched with the oracle's error.
fn check_row<T: Whole, I: IndexInt + TryFrom<i64>>(n: usize, k: usize, seed: u64, bad: &[i64]) {
    let signed = I::try_from(-1).is_ok();
    let data: Vec<T> = (0..n).map(|i| T::whole((i % 13) as i64 - 6)).collect();
    let upd: Vec<T> = (0..k).map(|i| T::whole((i % 5) as i64 - 2)).collect();
    let raw = common::lcg(seed, k, if signed { 2 * n as u64 } else { n as u64 });
    let shift = if signed { n as i64 } else { 0 };
    let to_i = |v: i64| I::try_from(v).ok().expect("index fits the index type");
    let idx: Vec<I> = raw.iter().map(|&v| to_i(v - shift)).collect();
    let dv = TensorView::new(&data, &[n]).unwrap();
    let iv = TensorView::new(&idx, &[k]).unwrap();
    let uv = TensorView::new(&upd, &[k]).unwrap();
    for reduction in [
        Reduction::None,
        Reduction::Add,
        Reduction::Min,
        Reduction::Mul,
    ] {
        let base = ScatterOptions::new().reduction(reduction);
        let want = reference::scatter_elements(&dv, &iv, &uv, &base).unwrap();
        let want = T::bits(want.as_slice());
        for isa in Isa::supported() {
            for threads in [1, 2, 3, 4] {
                let opts = base.par(Par::threads_exact(threads));
                let what = format!("{} {reduction:?} {isa:?} {threads}T", I::DTYPE);
                let got = with_isa(isa, || scatter_elements(&dv, &iv, &uv, &opts))
                    .unwrap()
                    .unwrap();
                assert!(T::bits(got.as_slice()) == want, "allocating, {what}");
                let mut out = vec![T::whole(99); n];
                let mut ov = TensorViewMut::new(&mut out, &[n]).unwrap();
                with_isa(isa, || scatter_elements_out(&dv, &iv, &uv, &mut ov, &opts))
                    .unwrap()
                    .unwrap();
                assert!(T::bits(&out) == want, "out, {what}");
                out.copy_from_slice(&data);
                let mut ov = TensorViewMut::new(&mut out, &[n]).unwrap();
                with_isa(isa, || scatter_elements_into(&mut ov, &iv, &uv, &opts))
                    .unwrap()
                    .unwrap();
                assert!(T::bits(&out) == want, "into, {what}");
            }
        }
    }
    // Rejected indices: at the first update, in a vector lane of a later batch, in the
    // middle, in the scalar tail of the last batch, and at the last update.
    let strict = IndexPolicy::new(NegativeIndices::Error, OutOfRange::Error);
    for &value in bad {
        for at in [0, 1029, k / 2, k - 3, k - 1] {
            let mut bad_idx = idx.clone();
            bad_idx[at] = to_i(value);
            let iv = TensorView::new(&bad_idx, &[k]).unwrap();
            for policy in [IndexPolicy::default(), strict] {
                let base = ScatterOptions::new()
                    .reduction(Reduction::Add)
                    .index_policy(policy);
                // Under the strict policy the first negative index may come first.
                let want = reference::scatter_elements(&dv, &iv, &uv, &base)
                    .unwrap_err()
                    .to_string();
                for isa in Isa::supported() {
                    for threads in [2, 3] {
                        let opts = base.par(Par::threads_exact(threads));
                        let what = format!("{value} at {at} {policy:?} {isa:?} {threads}T");
                        let run = |f: &mut dyn FnMut() -> tensor_scatter::Result<()>| {
                            with_isa(isa, f).unwrap().unwrap_err().to_string()
                        };
                        let got = run(&mut || scatter_elements(&dv, &iv, &uv, &opts).map(drop));
                        assert_eq!(got, want, "allocating, {what}");
                        let mut out = vec![T::whole(7); n];
                        let mut ov = TensorViewMut::new(&mut out, &[n]).unwrap();
                        let got = run(&mut || scatter_elements_out(&dv, &iv, &uv, &mut ov, &opts));
                        assert_eq!(got, want, "out, {what}");
                        assert!(
                            T::bits(&out) == T::bits(&vec![T::whole(7); n]),
                            "out written, {what}"
                        );
                        let mut out = data.clone();
                        let mut ov = TensorViewMut::new(&mut out, &[n]).unwrap();
                        let got = run(&mut || scatter_elements_into(&mut ov, &iv, &uv, &opts));
                        assert_eq!(got, want, "in place, {what}");
                        assert!(T::bits(&out) == T::bits(&data), "in place written, {what}");
                    }
                }
            }
        }
    }
}

#[test]
fn single_rows_split_by_destination_match_the_oracle() {
    // Rows of up to 3 MB (at most 2 MiB per thread) with more index bytes than row bytes:
    // at 3 and 4 threads each thread folds its part of the row, scanning every update (eight
    // at a time for int32 and int64 indices above the baseline level, one at a time
    // otherwise), 8-byte indices only into rows too big for one task (above 1.33 MiB at 3);
    // at 2 threads one task folds the row fed by the other (the fed fold); at 1 thread one
    // task folds the whole row. k is not a multiple of 8, so the last batch has a scalar
    // tail.
    let (n, m) = (700_000i64, 400_000i64);
    check_row::<f32, i64>(n as usize, 500_003, 21, &[n, -n - 1, i64::MIN, i64::MAX]);
    check_row::<f32, i32>(m as usize, 400_005, 22, &[m, -m - 1, i32::MIN.into()]);
    check_row::<u8, u32>(1_000_000, 300_001, 23, &[1_000_000, u32::MAX.into()]);
    check_row::<f64, i16>(30_000, 130_007, 24, &[30_000, -30_001, i16::MIN.into()]);
    check_row::<half::f16, u64>(1_500_000, 400_003, 25, &[1_500_000]);
}

#[test]
fn single_rows_past_the_split_are_fed_at_two_threads() {
    // A 9.2 MB row, past the split fold's 2 MiB per thread, with 4-byte indices: at 2
    // threads the fed fold takes it (one task folds the whole row in scratch while the other
    // resolves the indices), at 1, 3 and 4 threads the buckets.
    let n = 2_300_000i64;
    check_row::<f32, u32>(n as usize, 2_300_003, 26, &[n, u32::MAX.into()]);
}

/// ScatterND of single elements of a `dims`-shaped table (`k = dims.len()` components per
/// tuple) in every form against the oracle, then the refusal of a bad component at several
/// positions: the oracle's error, nothing written.
fn check_tuples<T: Whole, I: IndexInt + TryFrom<i64>>(dims: &[usize], m: usize, seed: u64) {
    let k = dims.len();
    let n: usize = dims.iter().product();
    let data: Vec<T> = (0..n).map(|i| T::whole((i % 13) as i64 - 6)).collect();
    let upd: Vec<T> = (0..m).map(|i| T::whole((i % 5) as i64 - 2)).collect();
    let to_i = |v: i64| I::try_from(v).ok().expect("index fits the index type");
    // Component j of tuple t: in [-size, size), negative ones wrapped by the default policy.
    let raw: Vec<Vec<i64>> = dims
        .iter()
        .enumerate()
        .map(|(j, &d)| common::lcg(seed + j as u64, m, 2 * d as u64))
        .collect();
    let idx: Vec<I> = (0..m * k)
        .map(|p| to_i(raw[p % k][p / k] - dims[p % k] as i64))
        .collect();
    let dv = TensorView::new(&data, dims).unwrap();
    let iv = TensorView::new(&idx, &[m, k]).unwrap();
    let uv = TensorView::new(&upd, &[m]).unwrap();
    for reduction in [Reduction::None, Reduction::Add, Reduction::Max] {
        let opts = ScatterOptions::new().reduction(reduction);
        let want = reference::scatter_nd(&dv, &iv, &uv, &opts).unwrap();
        let want = T::bits(want.as_slice());
        for threads in [1, 2, 3, 4] {
            let opts = opts.par(Par::threads_exact(threads));
            let what = format!("{dims:?} {} {reduction:?} {threads}T", I::DTYPE);
            let got = scatter_nd(&dv, &iv, &uv, &opts).unwrap();
            assert!(T::bits(got.as_slice()) == want, "allocating, {what}");
            let mut out = vec![T::whole(99); n];
            let mut ov = TensorViewMut::new(&mut out, dims).unwrap();
            scatter_nd_out(&dv, &iv, &uv, &mut ov, &opts).unwrap();
            assert!(T::bits(&out) == want, "out, {what}");
            out.copy_from_slice(&data);
            let mut ov = TensorViewMut::new(&mut out, dims).unwrap();
            scatter_nd_into(&mut ov, &iv, &uv, &opts).unwrap();
            assert!(T::bits(&out) == want, "into, {what}");
        }
    }
    let strict = IndexPolicy::new(NegativeIndices::Error, OutOfRange::Error);
    for at in [0, 1, m * k / 2 + 1, m * k - 1] {
        let size = dims[at % k] as i64;
        for value in [size, -size - 1] {
            let mut bad = idx.clone();
            bad[at] = to_i(value);
            let iv = TensorView::new(&bad, &[m, k]).unwrap();
            for policy in [IndexPolicy::default(), strict] {
                let base = ScatterOptions::new()
                    .reduction(Reduction::Add)
                    .index_policy(policy);
                let want = reference::scatter_nd(&dv, &iv, &uv, &base)
                    .unwrap_err()
                    .to_string();
                for threads in [2, 3] {
                    let opts = base.par(Par::threads_exact(threads));
                    let what = format!("{dims:?} {value} at {at} {policy:?} {threads}T");
                    let got = scatter_nd(&dv, &iv, &uv, &opts).unwrap_err();
                    assert_eq!(got.to_string(), want, "allocating, {what}");
                    let mut out = data.clone();
                    let mut ov = TensorViewMut::new(&mut out, dims).unwrap();
                    let got = scatter_nd_into(&mut ov, &iv, &uv, &opts).unwrap_err();
                    assert_eq!(got.to_string(), want, "in place, {what}");
                    assert!(T::bits(&out) == T::bits(&data), "in place written, {what}");
                }
            }
        }
    }
}

#[test]
fn element_tuples_resolved_in_parallel_match_the_oracle() {
    // More tuples than one block of the parallel pass per task (2^14), so the parts and the
    // blocks both have seams; pairs into a table of rows, triples into a cube; 32-bit
    // offsets (every destination here); wrapped negative components.
    check_tuples::<f32, i64>(&[1000, 300], 100_003, 31);
    check_tuples::<f64, i32>(&[40, 50, 60], 70_001, 32);
    check_tuples::<u8, i16>(&[300, 7], 40_009, 33);
}

#[test]
fn element_tuples_folded_by_the_fed_fold_match_the_oracle() {
    // Tuples whose index outweighs the table (pairs: 800 KB of int64 against 240 KB of f32;
    // triples: 200 KB of int32 against 48 KB of f64): the fed fold resolves them itself, its
    // feeder on a second thread, its folder alone at one thread; chunks of 8,192 tuples, so
    // the ring of 8 slots wraps.
    check_tuples::<f32, i64>(&[300, 200], 100_003, 34);
    check_tuples::<f64, i32>(&[20, 30, 10], 50_001, 35);
}
