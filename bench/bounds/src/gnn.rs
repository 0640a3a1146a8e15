//! Issue 30 (a): the scatter of 2·10⁶ rows of 64 f32 into 10⁵ random destinations, beside the
//! three shapes a deterministic kernel for it can take. Each fold adds every cell's rows in
//! index order from 0, so its result is tensor-scatter's bit for bit (checked):
//!
//! * by destination (tensor-scatter's shape): the rows grouped by destination, each group
//!   summed in registers and written out (`folded`), and the same reads alone (`read
//!   only`); the grouping (a sort) is not timed, so both bound the shape from below;
//! * in order, by owner: every thread reads the whole index and folds the rows of the
//!   destinations it owns, in index order, into its part of the output;
//! * by destination block: the rows bucketed by block of 256 destinations (a stable
//!   partition), each block folded in index order into a 64 KiB buffer that stays in cache,
//!   then written out once (partition, fold and writes all timed).
//!
//! The probe loops are compiled for AVX-512 when the CPU has it, as the library's kernels are.

use super::{Rng, floor, huge, prefetch, share, split, team, time_call};
use std::sync::Mutex;
use tensor_scatter::segment::{self, SegmentOptions};
use tensor_scatter::{Par, Reduction, TensorView, vec_with_huge_pages};

const E: usize = 2_000_000;
const N: usize = 100_000;
const F: usize = 64;
/// Rows prefetched ahead by the probe loops.
const AHEAD: usize = 16;
/// Destinations per block of the partitioned fold: 64 KiB of f32 at F = 64.
const BLOCK: usize = 256;

/// Runs `f`, compiled for AVX-512 when the CPU has it (the closure is inlined into the
/// wrapper, whose target features its loops then use).
#[inline(always)]
fn wide<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        #[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")]
        fn v4<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        // SAFETY: every feature `v4` enables was detected on this CPU just above.
        return unsafe { v4(f) };
    }
    f()
}

/// `acc += row`, 64 lanes.
#[inline(always)]
fn add_row(acc: &mut [f32], row: &[f32]) {
    let (acc, row): (&mut [f32; F], &[f32; F]) =
        (acc.try_into().expect("F"), row.try_into().expect("F"));
    acc.iter_mut().zip(row).for_each(|(a, &x)| *a += x);
}

/// The sum by destination block: scratch kept between calls, as a kernel would pool it.
struct Partitioned {
    /// (position << 8 | destination within its block), block by block, each in index order.
    entries: Vec<u64>,
}

impl Partitioned {
    /// Folds `src` by `idx` into `out` (`[N, F]`) on `threads` threads.
    fn run(&mut self, src: &[f32], idx: &[i64], threads: usize, out: &mut [f32]) {
        let blocks = N.div_ceil(BLOCK);
        // 1. Each thread counts its share's rows per block.
        let mut counts = vec![0usize; threads * blocks];
        std::thread::scope(|s| {
            for (t, row) in counts.chunks_mut(blocks).enumerate() {
                let mine = &idx[share(E, t, threads)];
                s.spawn(move || {
                    wide(
                        #[inline(always)]
                        || count(mine, row),
                    )
                });
            }
        });
        // 2. Each (block, thread) gets its slots: blocks in order, threads in order within a
        // block, so each block's entries are in index order.
        self.entries.resize(E, 0);
        let mut pieces: Vec<Vec<&mut [u64]>> = (0..threads).map(|_| Vec::new()).collect();
        let mut starts = Vec::with_capacity(blocks + 1);
        let mut rest = &mut self.entries[..];
        for b in 0..blocks {
            starts.push(E - rest.len());
            for (t, mine) in pieces.iter_mut().enumerate() {
                let (piece, r) = std::mem::take(&mut rest).split_at_mut(counts[t * blocks + b]);
                mine.push(piece);
                rest = r;
            }
        }
        starts.push(E);
        // 3. Each thread writes its rows' entries to its slots.
        std::thread::scope(|s| {
            for (t, mut mine) in pieces.into_iter().enumerate() {
                let lo = share(E, t, threads).start;
                let share = &idx[share(E, t, threads)];
                s.spawn(move || {
                    wide(
                        #[inline(always)]
                        || place(share, lo, &mut mine),
                    )
                });
            }
        });
        // 4. Each thread folds its blocks, one at a time, in a buffer in cache.
        let entries = &self.entries[..];
        let mut rest = out;
        std::thread::scope(|s| {
            for t in 0..threads {
                let mine = share(blocks, t, threads);
                let rows = (mine.end * BLOCK).min(N) - mine.start * BLOCK;
                let (part, r) = std::mem::take(&mut rest).split_at_mut(rows * F);
                rest = r;
                let starts = &starts;
                s.spawn(move || {
                    let mut acc = vec![0f32; BLOCK * F];
                    for (b, dst) in mine.zip(part.chunks_mut(BLOCK * F)) {
                        let list = &entries[starts[b]..starts[b + 1]];
                        wide(
                            #[inline(always)]
                            || fold_block(src, list, &mut acc, dst),
                        );
                    }
                });
            }
        });
    }
}

/// Counts `idx`'s rows per block into `row`.
#[inline(always)]
fn count(idx: &[i64], row: &mut [usize]) {
    idx.iter().for_each(|&d| row[d as usize / BLOCK] += 1);
}

/// Writes the entries of `idx` (positions from `lo`) into their blocks' `pieces`, in order.
#[inline(always)]
fn place(idx: &[i64], lo: usize, pieces: &mut [&mut [u64]]) {
    let mut next = vec![0usize; pieces.len()];
    for (i, &d) in idx.iter().enumerate() {
        let (b, d) = (d as usize / BLOCK, d as usize % BLOCK);
        pieces[b][next[b]] = ((lo + i) as u64) << 8 | d as u64;
        next[b] += 1;
    }
}

/// Folds one block's entries (`list`) into `acc` from 0 and writes its rows to `dst`.
#[inline(always)]
fn fold_block(src: &[f32], list: &[u64], acc: &mut [f32], dst: &mut [f32]) {
    acc.fill(0.0);
    for (i, &q) in list.iter().enumerate() {
        if let Some(&a) = list.get(i + AHEAD) {
            prefetch(&src[(a >> 8) as usize * F..][..F]);
        }
        let (r, d) = ((q >> 8) as usize, (q & 0xff) as usize);
        add_row(&mut acc[d * F..][..F], &src[r * F..][..F]);
    }
    dst.copy_from_slice(&acc[..dst.len()]);
}

/// Issue 30 (a): the shapes above beside tensor-scatter's sum, max and max with positions.
pub(crate) fn gnn(threads: usize, rounds: usize) {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut idx = huge(E, 0i64);
    idx.iter_mut().for_each(|x| *x = rng.below(N as u64) as i64);
    let mut src = huge(E * F, 0f32);
    src.iter_mut()
        .for_each(|x| *x = rng.below(1000) as f32 / 8.0);
    // The positions grouped by destination, in index order within each (a stable counting sort).
    let mut starts = vec![0usize; N + 1];
    idx.iter().for_each(|&d| starts[d as usize + 1] += 1);
    (0..N).for_each(|i| starts[i + 1] += starts[i]);
    let first = starts.clone();
    let mut order = huge(E, 0u32);
    for (r, &d) in idx.iter().enumerate() {
        order[starts[d as usize]] = r as u32;
        starts[d as usize] += 1;
    }
    let (sv, iv) = (
        TensorView::new(&src, &[E, F]).unwrap(),
        TensorView::new(&idx, &[E]).unwrap(),
    );
    let opts = |reduce| {
        let mut o = SegmentOptions::new().dim(0).dim_size(N);
        (o.reduce, o.par) = (reduce, Par::threads_exact(threads));
        o
    };
    let (sum, max) = (opts(Reduction::Add), opts(Reduction::Max));
    let by_dest = |t: usize| {
        wide(
            #[inline(always)]
            || {
                let mut acc = [0f32; F];
                let mine = &order[share(E, t, threads)];
                for (i, &r) in mine.iter().enumerate() {
                    if let Some(&a) = mine.get(i + AHEAD) {
                        prefetch(&src[a as usize * F..][..F]);
                    }
                    add_row(&mut acc, &src[r as usize * F..][..F]);
                }
                std::hint::black_box(acc);
            },
        )
    };
    // The same, each destination's rows summed from 0 and written to its output row.
    let fold_dest = |t: usize, parts: &[Mutex<&mut [f32]>]| {
        let mut out = parts[t].lock().unwrap();
        wide(
            #[inline(always)]
            || {
                let mine = share(N, t, threads);
                let list = &order[first[mine.start]..first[mine.end]];
                let mut i = 0;
                for (o, d) in out.chunks_exact_mut(F).zip(mine) {
                    let mut acc = [0f32; F];
                    for _ in first[d]..first[d + 1] {
                        if let Some(&a) = list.get(i + AHEAD) {
                            prefetch(&src[a as usize * F..][..F]);
                        }
                        add_row(&mut acc, &src[list[i] as usize * F..][..F]);
                        i += 1;
                    }
                    o.copy_from_slice(&acc);
                }
            },
        )
    };
    let fold_owned = |t: usize, parts: &[Mutex<&mut [f32]>]| {
        let mut out = parts[t].lock().unwrap();
        wide(
            #[inline(always)]
            || {
                out.fill(0.0);
                let mine = share(N, t, threads);
                let (lo, hi) = (mine.start as i64, mine.end as i64);
                for r in 0..E {
                    if let Some(&d) = idx.get(r + AHEAD)
                        && (lo..hi).contains(&d)
                    {
                        prefetch(&src[(r + AHEAD) * F..][..F]);
                        prefetch(&out[(d - lo) as usize * F..][..F]);
                    }
                    let d = idx[r];
                    if (lo..hi).contains(&d) {
                        add_row(&mut out[(d - lo) as usize * F..][..F], &src[r * F..][..F]);
                    }
                }
            },
        )
    };
    // A fresh 51.2 MB of int64 positions (one allocation, as the library's: above glibc's
    // largest mmap threshold, so new pages every call), each thread writing its share once.
    let fresh = || {
        let mut v: Vec<i64> = vec_with_huge_pages(N * F);
        let mut rest = &mut v.spare_capacity_mut()[..N * F];
        std::thread::scope(|s| {
            for t in 0..threads {
                let (mine, r) =
                    std::mem::take(&mut rest).split_at_mut(share(N * F, t, threads).len());
                rest = r;
                s.spawn(move || {
                    for x in mine {
                        x.write(1);
                    }
                });
            }
        });
        std::hint::black_box(&v);
    };
    let expected = segment::scatter(&sv, &iv, &sum).unwrap();
    let same = |a: &[f32]| {
        a.iter()
            .zip(expected.as_slice())
            .all(|(a, b)| a.to_bits() == b.to_bits())
    };
    let mut owned = huge(N * F, 0f32);
    {
        let parts = split(&mut owned, N, threads, F);
        team(threads, 0, 1, &|t| fold_owned(t, &parts));
    }
    assert!(same(&owned), "the in-order fold differs");
    let mut dest_out = huge(N * F, 0f32);
    {
        let parts = split(&mut dest_out, N, threads, F);
        team(threads, 0, 1, &|t| fold_dest(t, &parts));
    }
    assert!(same(&dest_out), "the fold by destination differs");
    let dest_parts = split(&mut dest_out, N, threads, F);
    let mut blocked = Partitioned {
        entries: Vec::new(),
    };
    let mut by_block = huge(N * F, 0f32);
    blocked.run(&src, &idx, threads, &mut by_block);
    assert!(same(&by_block), "the fold by destination block differs");
    let parts = split(&mut owned, N, threads, F);
    let by_owner = |t: usize| fold_owned(t, &parts);
    let fl = floor((E * F * 4 + E * 8 + 2 * N * F * 4) / 2, threads, 7);
    println!(
        "\nIssue 30 (a), {threads} threads: median ms of 9 runs (each fold checked bit-equal to \
              tensor-scatter's sum)"
    );
    println!(
        "| round | floor | rows by destination, read only | by destination, folded | in order, by owner | \
              by destination block | tensor-scatter sum | max | max with positions | \
              fresh positions written |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut none = [0u8; 0];
    for round in 1..=rounds {
        let d = team(threads, 1, 9, &by_dest);
        let df = team(threads, 1, 9, &|t| fold_dest(t, &dest_parts));
        let o = team(threads, 1, 9, &by_owner);
        let b = time_call(1, 9, &mut by_block, &mut |out| {
            blocked.run(&src, &idx, threads, out)
        });
        let mut call = |f: &(dyn Fn() + Sync)| time_call(1, 9, &mut none, &mut |_| f());
        let s = call(&|| drop(segment::scatter(&sv, &iv, &sum).unwrap()));
        let m = call(&|| drop(segment::scatter(&sv, &iv, &max).unwrap()));
        let a = call(&|| drop(segment::scatter_arg(&sv, &iv, &max).unwrap()));
        let p = call(&fresh);
        println!(
            "| {round} | {fl:.2} | {d:.2} | {df:.2} | {o:.2} | {b:.2} | {s:.2} | {m:.2} | {a:.2} ({:.2}x max) \
             | {p:.2} |",
            a / m
        );
    }
}
