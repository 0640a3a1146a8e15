//! Lower bounds for the speed targets that no kernel has met (issues 3, 5 and 30), measured
//! beside tensor-scatter in one process on the benchmark's shapes.
//!
//! * W5: 1-D scatter-add, 10^7 random `int64` indices and f32 updates into 10^6 f32 cells.
//!   The target is 0.5x the best peer, torch, whose `scatter_add_` is one thread's loop
//!   (`one-thread-fold` below is the same loop). The ideal loops here drop the ordering
//!   that makes our results bit-identical for any thread count: they are bounds, not kernels.
//! * G1: embedding lookup, 10^5 random rows of a [10^6, 64] f32 table. The target is 1.2x the
//!   floor: the copy of the same number of bytes (`bench/peers/bench.py`'s floor).
//! * Issue 30 (a): scatter of 2·10⁶ rows of 64 f32 into 10⁵ random destinations; the target
//!   is 0.5x the best peer (JAX): the three shapes a deterministic kernel can take (rows
//!   grouped by destination, streamed in order by owner, or partitioned by destination block),
//!   each timed at its simplest (see `gnn.rs`).
//!
//! `cargo run --release -- [--threads N] [--rounds R] [w5] [g1] [gnn]` prints one table per
//! workload and round: median milliseconds and the ratios the targets are stated in.
#![forbid(unsafe_op_in_unsafe_fn)]

mod gnn;

use std::sync::{Barrier, Mutex};
use std::time::Instant;
use tensor_scatter::{
    GatherOptions, Par, Reduction, ScatterOptions, TensorView, TensorViewMut, gather_out,
    scatter_elements_out, vec_with_huge_pages,
};

/// Medians of `reps` timed runs after `warm` untimed ones of `work(t)` on `threads` threads
/// that start together (a barrier) and finish together (a second barrier), in ms.
fn team(threads: usize, warm: usize, reps: usize, work: &(dyn Fn(usize) + Sync)) -> f64 {
    let barrier = Barrier::new(threads);
    let mut times = Vec::with_capacity(reps);
    std::thread::scope(|s| {
        for t in 1..threads {
            let b = &barrier;
            s.spawn(move || {
                for _ in 0..warm + reps {
                    b.wait();
                    work(t);
                    b.wait();
                }
            });
        }
        for run in 0..warm + reps {
            barrier.wait();
            let t0 = Instant::now();
            work(0);
            barrier.wait();
            if run >= warm {
                times.push(t0.elapsed().as_secs_f64() * 1e3);
            }
        }
    });
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// [`team`] of one thread for `call(out)`: a library call, which runs on its own threads.
fn time_call<T: Send>(
    warm: usize,
    reps: usize,
    out: &mut [T],
    call: &mut (dyn FnMut(&mut [T]) + Send),
) -> f64 {
    let (out, call) = (Mutex::new(out), Mutex::new(call));
    team(1, warm, reps, &|_| {
        (call.lock().unwrap())(&mut out.lock().unwrap())
    })
}

/// Thread `t`'s share `[lo, hi)` of `n` items.
fn share(n: usize, t: usize, threads: usize) -> std::ops::Range<usize> {
    n * t / threads..n * (t + 1) / threads
}

/// `buf` (`n` items of `width` elements) cut into each thread's share.
fn split<T>(buf: &mut [T], n: usize, threads: usize, width: usize) -> Vec<Mutex<&mut [T]>> {
    let mut rest = buf;
    let mut parts = Vec::with_capacity(threads);
    for t in 0..threads {
        let (a, b) = std::mem::take(&mut rest).split_at_mut(share(n, t, threads).len() * width);
        parts.push(Mutex::new(a));
        rest = b;
    }
    parts
}

/// A buffer of `n` copies of `v` on transparent huge pages (as the CLI's inputs and outputs).
fn huge<T: Copy>(n: usize, v: T) -> Vec<T> {
    let mut b = vec_with_huge_pages(n);
    b.resize(n, v);
    b
}

/// A fixed pseudo-random stream (xorshift64*).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n
    }
}

/// The floor of `bench.py`: a copy of half the workload's minimum traffic (a copy of B bytes
/// moves 2B), the better of one thread's copy and the team's.
fn floor(bytes: usize, threads: usize, reps: usize) -> f64 {
    let src = huge(bytes, 1u8);
    let mut dst = huge(bytes, 0u8);
    let one = {
        let d = Mutex::new(&mut dst[..]);
        team(1, 3, reps, &|_| d.lock().unwrap().copy_from_slice(&src))
    };
    let parts = split(&mut dst, bytes, threads, 1);
    let all = team(threads, 3, reps, &|t| {
        parts[t]
            .lock()
            .unwrap()
            .copy_from_slice(&src[share(bytes, t, threads)])
    });
    one.min(all)
}

fn w5(threads: usize, rounds: usize) {
    const N: usize = 1_000_000;
    const K: usize = 10_000_000;
    const L1_CELLS: usize = 8 << 10; // 32 KiB of f32: this VM's L1d is 32 KiB per core
    const L2_CELLS: usize = 256 << 10; // 1 MiB: this VM's L2 per core
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let idx: Vec<i64> = {
        let mut v = huge(K, 0i64);
        v.iter_mut().for_each(|x| *x = rng.below(N as u64) as i64);
        v
    };
    let upd: Vec<f32> = {
        let mut v = huge(K, 0f32);
        v.iter_mut().for_each(|x| *x = rng.below(7) as f32 - 3.0);
        v
    };
    let data = huge(N, 1f32);
    // The sequential fold in index order: what every thread count must give, bit for bit.
    let mut expected = data.clone();
    for (&i, &u) in idx.iter().zip(&upd) {
        expected[i as usize] += u;
    }
    let mut out = huge(N, 0f32);
    let dv = TensorView::new(&data, &[N]).unwrap();
    let iv = TensorView::new(&idx, &[K]).unwrap();
    let uv = TensorView::new(&upd, &[K]).unwrap();
    let opts = ScatterOptions::new()
        .axis(0)
        .reduction(Reduction::Add)
        .par(Par::threads_exact(threads));
    let mut ours = |out: &mut [f32]| {
        let mut ov = TensorViewMut::new(out, &[N]).unwrap();
        scatter_elements_out(&dv, &iv, &uv, &mut ov, &opts).unwrap();
    };
    ours(&mut out);
    assert!(
        out.iter()
            .zip(&expected)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );

    let rows: Vec<Mutex<Vec<f32>>> = (0..threads).map(|_| Mutex::new(huge(N, 0f32))).collect();
    let stream = |t: usize| {
        let r = share(K, t, threads);
        let s: i64 = idx[r.clone()].iter().fold(0, |a, &x| a.wrapping_add(x));
        // Integer sums: an f32 sum is one dependent chain of adds, slower than the memory.
        let f: u32 = upd[r].iter().fold(0, |a, &x| a.wrapping_add(x.to_bits()));
        std::hint::black_box((s, f));
    };
    // Each update folded into a region of `cells` cells (index mod cells): the cheapest
    // read-modify-write there is, with the input streamed as W5 streams it.
    let fold_mod = |cells: usize| {
        assert!(cells.is_power_of_two(), "the region is indexed by a mask");
        let rows = &rows;
        let idx = &idx;
        let upd = &upd;
        move |t: usize| {
            let mut row = rows[t].lock().unwrap();
            let row = &mut row[..cells];
            let r = share(K, t, threads);
            for (&i, &u) in idx[r.clone()].iter().zip(&upd[r]) {
                row[i as usize & (cells - 1)] += u;
            }
        }
    };
    // No ordering at all: each of `size` threads folds its share of the updates, checked, into
    // a private copy of the whole row (the copies are not even merged). With a team of one this
    // is torch's `scatter_add_` loop.
    let private = |size: usize| {
        let rows = &rows;
        let (idx, upd) = (&idx, &upd);
        move |t: usize| {
            let mut row = rows[t].lock().unwrap();
            let r = share(K, t, size);
            for (&i, &u) in idx[r.clone()].iter().zip(&upd[r]) {
                match row.get_mut(i as u64 as usize) {
                    Some(c) => *c += u,
                    None => panic!("index out of range"),
                }
            }
        }
    };
    let fl = floor((2 * N * 4 + K * 8 + K * 4) / 2, threads, 15);
    println!(
        "\nW5, {threads} threads: median ms of 15 runs (outputs of tensor-scatter checked \
              bit-equal to the sequential fold)"
    );
    println!(
        "| round | floor | read inputs only | fold into L1 (32 KiB) | fold into L2 (1 MiB) \
              | private 4 MB rows, unordered | one-thread fold (torch's loop) | tensor-scatter |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for round in 1..=rounds {
        let s = team(threads, 2, 15, &stream);
        let l1 = team(threads, 2, 15, &fold_mod(L1_CELLS));
        let l2 = team(threads, 2, 15, &fold_mod(L2_CELLS));
        let p = team(threads, 2, 15, &private(threads));
        let one = team(1, 2, 15, &private(1));
        let o = time_call(2, 15, &mut out, &mut ours);
        println!(
            "| {round} | {fl:.2} | {s:.2} | {l1:.2} | {l2:.2} | {p:.2} ({:.2}x) | {one:.2} | {o:.2} ({:.2}x) |",
            p / one,
            o / one
        );
    }
    println!("(ratios: to the one-thread fold; the target asks tensor-scatter for 0.5x torch)");
}

fn g1(threads: usize, rounds: usize) {
    const N: usize = 1_000_000;
    const K: usize = 100_000;
    const W: usize = 64;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let table: Vec<f32> = {
        let mut v = huge(N * W, 0f32);
        v.iter_mut()
            .for_each(|x| *x = rng.below(2001) as f32 - 1000.0);
        v
    };
    let idx: Vec<i64> = (0..K).map(|_| rng.below(N as u64) as i64).collect();
    let mut expected = huge(K * W, 0f32);
    for (r, &i) in idx.iter().enumerate() {
        expected[r * W..][..W].copy_from_slice(&table[i as usize * W..][..W]);
    }
    let mut out = huge(K * W, 0f32);
    let offset = out.as_ptr() as usize % 64;
    let tv = TensorView::new(&table, &[N, W]).unwrap();
    let iv = TensorView::new(&idx, &[K]).unwrap();
    let opts = GatherOptions::new()
        .axis(0)
        .par(Par::threads_exact(threads));
    let mut ours = |out: &mut [f32]| {
        let mut ov = TensorViewMut::new(out, &[K, W]).unwrap();
        gather_out(&tv, &iv, &mut ov, &opts).unwrap();
    };
    ours(&mut out);
    assert!(out == expected);

    let parts = split(&mut out, K, threads, W);
    // The ideal row gather: each thread copies its rows with the table row 16 rows ahead
    // prefetched (what the library's embedding loop does, without index checks or tasks).
    let rows = |streamed: bool| {
        let (parts, idx, table) = (&parts, &idx, &table);
        move |t: usize| {
            let mut o = parts[t].lock().unwrap();
            let r = share(K, t, threads);
            for (j, row) in r.clone().enumerate() {
                if let Some(&ahead) = idx.get(row + 16).filter(|_| row + 16 < r.end) {
                    prefetch(&table[ahead as usize * W..][..W]);
                }
                let src = &table[idx[row] as usize * W..][..W];
                let dst = &mut o[j * W..][..W];
                if streamed {
                    stream(dst, src)
                } else {
                    dst.copy_from_slice(src)
                }
            }
            fence();
        }
    };
    let (plain, streamed) = (rows(false), rows(true));
    let fl = floor((2 * K * W * 4 + K * 8) / 2, threads, 41);
    println!(
        "\nG1, {threads} threads: median ms of 41 runs (output {offset} bytes past a \
              line; every output checked equal to a sequential gather)"
    );
    println!(
        "| round | floor | ideal rows, plain stores | ideal rows, non-temporal stores | \
              tensor-scatter |"
    );
    println!("|---|---|---|---|---|");
    for round in 1..=rounds {
        let p = team(threads, 3, 41, &plain);
        let s = team(threads, 3, 41, &streamed);
        let o = time_call(3, 41, &mut expected, &mut ours);
        println!(
            "| {round} | {fl:.3} | {p:.3} ({:.2}x) | {s:.3} ({:.2}x) | {o:.3} ({:.2}x) |",
            p / fl,
            s / fl,
            o / fl
        );
    }
    drop(parts);
    // The last ideal loop to write `out` was the non-temporal one.
    assert!(out == expected, "the non-temporal row gather differs");
    println!("(ratios: to the floor; the target asks tensor-scatter for 1.2x)");
}

/// Prefetches the lines of `row` into L1.
#[inline(always)]
fn prefetch(row: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    for line in row.chunks(16) {
        // SAFETY: SSE is part of the x86_64 baseline, and a prefetch of a valid address has no
        // effect on program state.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

/// Copies `src` to `dst` with non-temporal stores where both allow 16-byte vectors.
fn stream(dst: &mut [f32], src: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if (dst.as_ptr() as usize).is_multiple_of(16)
        && dst.len().is_multiple_of(4)
        && dst.len() == src.len()
    {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_stream_ps};
        for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
            // SAFETY: SSE is part of the x86_64 baseline; `s` holds 4 readable f32 and `d` 4
            // writable ones at a 16-byte-aligned address (checked above).
            unsafe { _mm_stream_ps(d.as_mut_ptr(), _mm_loadu_ps(s.as_ptr())) };
        }
        return;
    }
    dst.copy_from_slice(src);
}

/// Orders the non-temporal stores before the thread reports its work done.
fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86_64 baseline; a fence has no other effect.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str, default: usize| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map_or(default, |v| v.parse().expect("a whole number"))
    };
    let threads = value("--threads", 2);
    let rounds = value("--rounds", 3);
    let all = !args.iter().any(|a| a == "w5" || a == "g1" || a == "gnn");
    if all || args.iter().any(|a| a == "w5") {
        w5(threads, rounds);
    }
    if all || args.iter().any(|a| a == "g1") {
        g1(threads, rounds);
    }
    if all || args.iter().any(|a| a == "gnn") {
        gnn::gnn(threads, rounds);
    }
}
