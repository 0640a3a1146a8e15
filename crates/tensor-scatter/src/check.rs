//! The index pass every operator shares: a parallel, branch-free range test over a flat index
//! buffer, and the error that names the first refused index (its coordinate, value,
//! dimension and size), the same whatever the thread count.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use crate::error::{Error, ErrorKind};
use crate::exec::Ctx;
use crate::exec::tuning::CHECK_BLOCK;
use crate::index::{Fault, IndexInt, IndexPolicy, accepted_range, resolve};
use crate::shape::sat_product;
use crate::view::TensorView;

/// The row-major position in `idx` of the first index `policy` refuses, or `None`. `idx` holds
/// tuples of `dims.len()` components, component `j` addressing a dimension of `dims[j].1`
/// cells (`dims[j].0` is its number, for errors).
pub(crate) fn first_bad<I: IndexInt>(
    idx: &[I],
    dims: &[(usize, usize)],
    policy: IndexPolicy,
    cx: Ctx,
) -> Option<usize> {
    let k = dims.len();
    if k == 0 || idx.is_empty() {
        return None;
    }
    let ranges: Vec<(i64, i64)> = dims
        .iter()
        .map(|&(_, size)| accepted_range(size, policy))
        .collect();
    let ok = |j: usize, x: &I| {
        let (lo, hi) = ranges[j];
        (lo..=hi).contains(&x.to_i64_sat())
    };
    let block = CHECK_BLOCK * k;
    let tasks = cx.tasks(std::mem::size_of_val(idx), 1);
    let first = AtomicUsize::new(usize::MAX);
    let level = cx.level;
    cx.run(tasks, |t| {
        // Parts and blocks start on tuple boundaries, so `i % k` is the component.
        let (a, b) = crate::shape::part(idx.len(), tasks, t, k);
        for start in (a..b).step_by(block) {
            if start > first.load(Relaxed) {
                return; // an earlier failure is already known
            }
            let chunk = &idx[start..(start + block).min(b)];
            let good = if k == 1 {
                crate::kernels::simd::all_in_range(level, chunk, ranges[0].0, ranges[0].1)
            } else {
                chunk
                    .iter()
                    .enumerate()
                    .fold(true, |acc, (i, x)| acc & ok(i % k, x))
            };
            if !good {
                let j = chunk
                    .iter()
                    .enumerate()
                    .position(|(i, x)| !ok(i % k, x))
                    .unwrap_or(0);
                first.fetch_min(start + j, Relaxed);
                return;
            }
        }
    });
    match first.into_inner() {
        usize::MAX => None,
        bad => Some(bad),
    }
}

/// Whether every value of `values` lies in `[0, n)`, and whether each lane of `len` values
/// is non-decreasing: one read, cut across the threads ([`scan`]). A scatter's index pass, so
/// that an index found sorted can skip the sort by destination.
pub(crate) fn range_and_order(ctx: Ctx, values: &[i64], len: usize, n: usize) -> (bool, bool) {
    let tasks = ctx.tasks(std::mem::size_of_val(values), 1);
    let faults = std::sync::atomic::AtomicBool::new(false);
    let descends = std::sync::atomic::AtomicBool::new(false);
    ctx.run(tasks, |t| {
        let (lo, hi) = crate::shape::part(values.len(), tasks, t, 1);
        let (in_range, ascending) = scan(values, lo..hi, len.max(1), n);
        if !in_range {
            faults.store(true, Relaxed);
        }
        if !ascending {
            descends.store(true, Relaxed);
        }
    });
    (!faults.into_inner(), !descends.into_inner())
}

/// Whether `values[range]` (lanes of `len`) all lie in `[0, n)`, and whether none is below
/// the value before it in its lane: one pass, folds without an early exit, so it vectorises.
pub(crate) fn scan(
    values: &[i64],
    range: std::ops::Range<usize>,
    len: usize,
    n: usize,
) -> (bool, bool) {
    let outside = |v: i64| u8::from(v as u64 >= n as u64);
    let (mut bad, mut down) = (0u8, 0u8);
    let mut p = range.start;
    while p < range.end {
        let end = range.end.min((p / len + 1) * len);
        // The pairs (q - 1, q) for q in p..end, but for the lane's first position, which is
        // checked alone; every other value is the pair's second.
        let from = if p.is_multiple_of(len) {
            bad |= outside(values[p]);
            p
        } else {
            p - 1
        };
        let (a, b) = (&values[from..end - 1], &values[from + 1..end]);
        let (o, d) = a.iter().zip(b).fold((0u8, 0u8), |(o, d), (x, &y)| {
            (o | outside(y), d | u8::from(y < *x))
        });
        (bad, down) = (bad | o, down | d);
        p = end;
    }
    (bad == 0, down == 0)
}

/// How an index steps through the dims after `axis` (`shape` and `strides` its layout):
/// `Some(None)` when it does not (every such dim broadcast, or of extent 1: one value per
/// row), `Some(Some((k, step)))` when they are one run of `k` elements `step` apart (its
/// values must then be read to know whether they are constant, [`constant_rows`]), `None`
/// otherwise.
pub(crate) fn after_axis(
    shape: &[usize],
    strides: &[isize],
    axis: usize,
) -> Option<Option<(usize, isize)>> {
    let mut run: Option<(usize, isize)> = None; // the run so far, from the last dim
    for d in (axis + 1..shape.len()).rev() {
        let (m, st) = (shape[d], strides[d]);
        if m == 1 {
            continue;
        }
        run = match run {
            None => Some((m, st)),
            Some((k, t)) if st == t.wrapping_mul(k as isize) => Some((k * m, t)),
            Some(_) => return None,
        };
    }
    Some(run.filter(|&(_, st)| st != 0))
}

/// A new vector of `len` values written by `cx`'s tasks (cut by `bytes` of work), each into
/// its own part of memory nobody touched before, so the pages fault in the tasks, in
/// parallel, and nothing is zero-filled first: the task whose part starts at position `lo`
/// takes its values from `start(lo)`, one call per position in order. `None` as soon as one
/// call gives `None` (the other tasks stop within 64 positions), or when the allocation
/// fails (`Copy` values: those written before are then forgotten, with nothing to drop).
pub(crate) fn fresh_vec<O, G>(
    len: usize,
    bytes: usize,
    cx: Ctx,
    start: impl Fn(usize) -> G + Sync,
) -> Option<Vec<O>>
where
    O: Copy + Send,
    G: FnMut() -> Option<O>,
{
    use std::mem::MaybeUninit;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    let mut out: Vec<O> = Vec::new();
    out.try_reserve_exact(len).ok()?;
    let tasks = cx.tasks(bytes, 1);
    let mut parts = Vec::with_capacity(tasks);
    let mut rest: &mut [MaybeUninit<O>] = &mut out.spare_capacity_mut()[..len];
    for t in 0..tasks {
        let (lo, hi) = crate::shape::part(len, tasks, t, 1);
        let (part, r) = rest.split_at_mut(hi - lo);
        rest = r;
        parts.push(Mutex::new(part));
    }
    let stopped = AtomicBool::new(false);
    cx.run(tasks, |t| {
        let (lo, _) = crate::shape::part(len, tasks, t, 1);
        let mut part = parts[t].lock().unwrap_or_else(|e| e.into_inner());
        let mut next = start(lo);
        for (p, slot) in part.iter_mut().enumerate() {
            if p % 64 == 0 && stopped.load(Relaxed) {
                return;
            }
            match next() {
                Some(v) => {
                    slot.write(v);
                }
                None => {
                    stopped.store(true, Relaxed);
                    return;
                }
            }
        }
    });
    drop(parts);
    if stopped.into_inner() {
        return None;
    }
    // SAFETY: the parts cover `0..len` of the reserved capacity, and a task leaves its part
    // before writing every element only after `stopped` is set, which it is not: every
    // element is written (a task that panicked has propagated out of `run`).
    unsafe { out.set_len(len) };
    Some(out)
}

/// The value of every index row, as `map` gives it, when `indices` holds one value along the
/// dims after an axis at every position of a walk (`walk_shape` with `walk_strides`): the `k`
/// values `step` apart from each position are equal (an index expanded and then made
/// contiguous). One pass over the index by `cx`'s threads ([`fresh_vec`]: no zero fill, the
/// pages fault in the tasks), stopping at the first row that differs (`None`, as for a walk
/// outside the view or an allocation that fails: the caller then reads the index element by
/// element).
pub(crate) fn constant_rows<I: IndexInt, O: Copy + Send>(
    indices: &TensorView<'_, I>,
    walk_shape: &[usize],
    walk_strides: &[isize],
    (k, step): (usize, isize),
    cx: Ctx,
    map: impl Fn(I) -> O + Sync,
) -> Option<Vec<O>> {
    let walk = walk_shape.iter().copied().zip(walk_strides.iter().copied());
    if k == 0 || !indices.walks_within(walk.chain([(k, step)])) {
        return None;
    }
    let positions = sat_product(walk_shape);
    let bytes = positions
        .saturating_mul(k)
        .saturating_mul(std::mem::size_of::<I>());
    fresh_vec(positions, bytes, cx, |lo| {
        let mut coord = unravel(lo, walk_shape);
        let map = &map;
        move || {
            let at = indices.layout.offset as isize
                + coord
                    .iter()
                    .zip(walk_strides)
                    .map(|(&c, &s)| c as isize * s)
                    .sum::<isize>();
            next_coord(&mut coord, walk_shape);
            // SAFETY: the `k` positions `step` apart from `at` are steps of the walk checked
            // above.
            unsafe { row_value(indices, at, (k, step)) }.map(map)
        }
    })
}

/// The value of the `k` index values `step` apart from position `at`, when they are equal.
/// Compiled once per index type (not per caller and result type: the binary's size).
///
/// # Safety
/// Positions `at + j * step` for `j < k` (`k >= 1`) lie within `indices`' buffer.
#[inline(never)]
unsafe fn row_value<I: IndexInt>(
    indices: &TensorView<'_, I>,
    at: isize,
    (k, step): (usize, isize),
) -> Option<I> {
    // Branch-free within a row, so the compares vectorise.
    let (first, same) = if step == 1 {
        // SAFETY: positions `at..at + k` are within the buffer (the caller's contract).
        let r = unsafe { indices.data.run(at as usize, k) };
        (r[0], r.iter().fold(true, |acc, &v| acc & (v == r[0])))
    } else {
        // SAFETY: `at + j * step` for `j < k` are within the buffer (the caller's contract).
        let first = unsafe { indices.data.get(at as usize) };
        let same = (1..k as isize).fold(true, |acc, j| {
            // SAFETY: as above.
            acc & (unsafe { indices.data.get((at + j * step) as usize) } == first)
        });
        (first, same)
    };
    same.then_some(first)
}

/// The row-major coordinate of flat position `p` in `shape`.
pub(crate) fn unravel(mut p: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for (x, &n) in c.iter_mut().zip(shape).rev() {
        *x = p % n.max(1);
        p /= n.max(1);
    }
    c
}

fn next_coord(c: &mut [usize], shape: &[usize]) {
    for (x, &n) in c.iter_mut().zip(shape).rev() {
        *x += 1;
        if *x < n {
            return;
        }
        *x = 0;
    }
}

/// The error for the index at row-major position `bad` of `idx`, a tensor of `shape` holding
/// tuples of `dims.len()` components (see [`first_bad`]).
pub(crate) fn error_at<I: IndexInt>(
    op: &'static str,
    idx: &[I],
    shape: &[usize],
    bad: usize,
    dims: &[(usize, usize)],
    policy: IndexPolicy,
) -> Error {
    let (dim, size) = dims[bad % dims.len()];
    let value = idx[bad].to_i128();
    let fault = match resolve(value, size, policy) {
        Err(f) => f,
        Ok(_) => Fault::OutOfRange, // unreachable: the range test mirrors `resolve`
    };
    index_error(op, fault, unravel(bad, shape), value, dim, size)
}

/// The error for index `value` at `position` of `indices`, refused for dimension `dim` of
/// `size` cells.
pub(crate) fn index_error(
    op: &'static str,
    fault: Fault,
    position: Vec<usize>,
    value: i128,
    dim: usize,
    size: usize,
) -> Error {
    Error::new(match fault {
        Fault::Negative => ErrorKind::NegativeIndex {
            op,
            arg: "indices",
            position,
            value,
            dim,
        },
        Fault::OutOfRange => ErrorKind::IndexOutOfRange {
            op,
            arg: "indices",
            position,
            value,
            dim,
            size,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::{constant_rows, fresh_vec};
    use crate::TensorView;
    use crate::exec::{Ctx, Par};

    /// Rows of equal values give every row's value, mapped, at any thread count (the unit-test
    /// build cuts even these few rows into tasks), read in place or `step` apart (a transposed
    /// index); one value that differs anywhere (the first row, a middle one, the last value)
    /// gives `None`, however many tasks had written all their rows before.
    #[test]
    fn constant_rows_gives_every_row_or_none() {
        let (rows, k) = (37usize, 5usize);
        let base: Vec<i32> = (0..rows as i32).map(|r| r * 7 - 40).collect();
        let want: Vec<i64> = base.iter().map(|&v| i64::from(v) * 2).collect();
        let row_major: Vec<i32> = base.iter().flat_map(|&v| [v; 5]).collect();
        let col_major: Vec<i32> = (0..rows * k).map(|p| base[p % rows]).collect();
        // (buffer, strides, step): row r's value j at r * strides[0] + j * strides[1]
        let layouts: [(&[i32], [isize; 2], isize); 2] = [
            (&row_major, [k as isize, 1], 1),
            (&col_major, [1, rows as isize], rows as isize),
        ];
        for (buf, strides, step) in layouts {
            for threads in 1..=4 {
                let cx = Ctx::new(Par::threads_exact(threads));
                let read = |b: &[i32]| {
                    let v = TensorView::with_strides(b, 0, &[rows, k], &strides).unwrap();
                    constant_rows(&v, &[rows], &strides[..1], (k, step), cx, |x| {
                        i64::from(x) * 2
                    })
                };
                assert_eq!(read(buf), Some(want.clone()), "{threads} threads");
                for (r, j) in [(0, 1), (rows / 2, 3), (rows - 1, k - 1), (rows - 1, 0)] {
                    let mut b = buf.to_vec();
                    b[r * strides[0] as usize + j * strides[1] as usize] += 1;
                    assert_eq!(read(&b), None, "row {r}, value {j}, {threads} threads");
                }
            }
        }
    }

    /// Every position's value, in order, at any thread count; `None` when any one position
    /// gives `None` (a task's first, its last, the very last), whatever the others did.
    #[test]
    fn fresh_vec_writes_every_position_or_none() {
        let len = 1000;
        for threads in 1..=4 {
            let cx = Ctx::new(Par::threads_exact(threads));
            let make = |refuse: usize| {
                fresh_vec(len, len * 8, cx, |lo| {
                    let mut p = lo;
                    move || {
                        p += 1;
                        (p - 1 != refuse).then_some((p - 1) as u64 * 3)
                    }
                })
            };
            let want: Vec<u64> = (0..len as u64).map(|p| p * 3).collect();
            assert_eq!(make(usize::MAX), Some(want), "{threads} threads");
            for refuse in [0, 1, 249, 250, 500, 999] {
                assert_eq!(make(refuse), None, "refused at {refuse}, {threads} threads");
            }
        }
        let cx = Ctx::new(Par::threads_exact(2));
        assert_eq!(fresh_vec(0, 0, cx, |_| || Some(1u8)), Some(vec![]));
    }
}
