//! Buckets: an element scatter into a destination too large to tile. A first pass checks
//! every index and files each update, in index order, under its destination block; then each
//! block is folded from its buckets alone.

use crate::dtype::Element;
use crate::exec::Ctx;
use crate::exec::tuning::RADIX_SCRATCH_MAX_BYTES;
use crate::index::{IndexInt, resolve_accepted};
use crate::kernels::DestPtr;
use crate::reduce::Combiner;
use crate::shape::part;

use super::{ElemGeom, ElemJob, Line};

/// One chunk's updates, bucketed by destination block, in index order. An entry is the cell's
/// offset inside its block and the update's bits: one `u64` (`offset << 32 | bits`) for
/// types of at most 4 bytes, two (`offset`, `bits`) for 8-byte types. The vectors come from,
/// and return to, [`SCRATCH`]: a fresh tens-of-megabytes allocation per call would cost more
/// in page faults than the kernel itself.
pub(crate) struct Buckets {
    lists: Vec<Line<Vec<u64>>>,
}

/// Recycled bucket vectors (empty, with capacity), at most [`RADIX_SCRATCH_MAX_BYTES`] in all.
static SCRATCH: std::sync::Mutex<Vec<Vec<u64>>> = std::sync::Mutex::new(Vec::new());

fn scratch_take(n: usize, cap: usize) -> Vec<Line<Vec<u64>>> {
    let mut pool = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    (0..n)
        .map(|_| {
            let mut v = pool.pop().unwrap_or_default();
            v.reserve(cap);
            Line(v)
        })
        .collect()
}

impl Drop for Buckets {
    fn drop(&mut self) {
        let mut pool = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
        let mut kept: usize = pool.iter().map(|v| v.capacity() * 8).sum();
        for Line(mut v) in self.lists.drain(..) {
            if kept + v.capacity() * 8 <= RADIX_SCRATCH_MAX_BYTES {
                kept += v.capacity() * 8;
                v.clear();
                pool.push(v);
            }
        }
    }
}

/// Whether an entry takes two words (8-byte types).
const fn two_words<T>() -> bool {
    std::mem::size_of::<T>() > 4
}

/// Pass 1 of the element-scatter radix kernel, for destinations too large for cache: in
/// parallel over chunks of updates (in index order), resolve and range-check every index and
/// append `(offset in block, value)` to its destination block's bucket. Writes only scratch
/// memory; returns the flat position of the first index the policy rejects.
pub(crate) fn radix_bucket<T: Element, I: IndexInt>(
    job: &ElemJob<'_, T, I>,
    block_cells: usize,
    cx: Ctx,
) -> Result<Vec<Buckets>, usize> {
    debug_assert!(block_cells.is_power_of_two() && block_cells <= 1 << 32);
    let g = job.g;
    let total = g.outer * g.n * g.inner;
    let count = g.outer * g.k * g.inner;
    let shift = block_cells.trailing_zeros();
    let blocks = total.div_ceil(block_cells);
    let size = std::mem::size_of::<T>().max(1) + std::mem::size_of::<I>();
    let chunks = cx.tasks(count.saturating_mul(size), 1).max(1);
    let (lo, hi) = crate::index::accepted_range(g.n, job.policy);
    type Slot = std::sync::Mutex<Option<Result<Buckets, usize>>>;
    let mut results: Vec<Slot> = (0..chunks).map(|_| std::sync::Mutex::new(None)).collect();
    cx.run(chunks, |c| {
        let (a, b) = part(count, chunks, c, 1);
        let words = if two_words::<T>() { 2 } else { 1 };
        let expect = ((b - a) / blocks.max(1) + (b - a) / blocks.max(1) / 8 + 16) * words;
        let mut bk = Buckets {
            lists: scratch_take(blocks, expect),
        };
        let out = bucket_range(job, a, b, lo, hi, shift, &mut bk).map(|()| bk);
        *results[c].lock().unwrap_or_else(|e| e.into_inner()) = Some(out);
    });
    let mut buckets = Vec::with_capacity(chunks);
    for r in &mut results {
        match r.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            Some(Ok(bk)) => buckets.push(bk),
            Some(Err(bad)) => return Err(bad), // chunks are in index order: the first error
            None => return Err(0),             // unreachable: every chunk ran
        }
    }
    Ok(buckets)
}

/// Pass 2 of the radix kernel: in parallel over destination blocks (contiguous, about L2
/// sized), copy the block from `src` if given, then apply its buckets chunk by chunk, so every
/// cell sees its updates in index order.
pub(crate) fn radix_apply<T: Element, C: Combiner<T>>(
    g: ElemGeom,
    buckets: &[Buckets],
    src: Option<&[T]>,
    dest: DestPtr<'_, T>,
    block_cells: usize,
    cx: Ctx,
) {
    let total = g.outer * g.n * g.inner;
    let blocks = total.div_ceil(block_cells);
    let tasks = if cx.threads > 1 { blocks } else { 1 };
    cx.run(tasks, |t| {
        let (b0, b1) = part(blocks, tasks, t, 1);
        for blk in b0..b1 {
            let start = blk * block_cells;
            let end = (start + block_cells).min(total);
            let base = g.dest_off + start;
            if let Some(src) = src {
                // SAFETY: block `blk` is owned by this task and lies inside the destination.
                unsafe { dest.copy_in(base, &src[start..end]) };
            }
            for bk in buckets {
                let list = &bk.lists[blk].0;
                let apply = |o: u64, bits: u64| {
                    // SAFETY: o < end - start (pass 1 derived it from a cell of this block,
                    // computed from an accepted index); the block is initialised and owned.
                    unsafe { dest.combine::<C>(base + o as usize, T::from_bits_u64(bits)) };
                };
                if two_words::<T>() {
                    for e in list.chunks_exact(2) {
                        apply(e[0], e[1]);
                    }
                } else {
                    for &e in list {
                        apply(e >> 32, e & 0xffff_ffff);
                    }
                }
            }
        }
    });
}

/// Pass 1 over updates `[a, b)` (flat, row-major over `(o, k, i)`).
#[allow(clippy::too_many_arguments)]
fn bucket_range<T: Element, I: IndexInt>(
    job: &ElemJob<'_, T, I>,
    a: usize,
    b: usize,
    lo: i64,
    hi: i64,
    shift: u32,
    bk: &mut Buckets,
) -> Result<(), usize> {
    let g = job.g;
    if a >= b {
        return Ok(());
    }
    let mask = (1usize << shift) - 1;
    let idx = &job.idx[a..b];
    let upd = &job.upd[a..b];
    // (i, k, o) of position a; `row_base` is the destination cell of (o, 0, i).
    let (mut i, mut kk, mut o) = (a % g.inner, a / g.inner % g.k, a / g.inner / g.k);
    let mut row_base = o * g.n * g.inner + i;
    for (j, (x, &v)) in idx.iter().zip(upd).enumerate() {
        let raw = x.to_i64_sat();
        if raw < lo || raw > hi {
            return Err(a + j);
        }
        if let Some(p) = resolve_accepted(raw, g.n, job.policy) {
            let cell = row_base + p * g.inner;
            let list = &mut bk.lists[cell >> shift].0;
            let off = (cell & mask) as u64;
            if two_words::<T>() {
                list.extend_from_slice(&[off, v.to_bits_u64()]);
            } else {
                list.push(off << 32 | v.to_bits_u64());
            }
        }
        i += 1;
        row_base += 1;
        if i == g.inner {
            i = 0;
            row_base -= g.inner;
            kk += 1;
            if kk == g.k {
                // The axis is exhausted: next outer block.
                kk = 0;
                o += 1;
                row_base = o * g.n * g.inner;
            }
        }
    }
    Ok(())
}
