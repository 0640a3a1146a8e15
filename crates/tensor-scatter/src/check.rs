//! The index pass every operator shares: a parallel, branch-free range test over a flat index
//! buffer, and the error that names the first refused index (its coordinate, value,
//! dimension and size), the same whatever the thread count.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use crate::error::{Error, ErrorKind};
use crate::exec::Ctx;
use crate::exec::tuning::CHECK_BLOCK;
use crate::index::{Fault, IndexInt, IndexPolicy, accepted_range, resolve};

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
    let mut position = vec![0; shape.len()];
    let mut rest = bad;
    for (p, &n) in position.iter_mut().zip(shape).rev() {
        *p = rest % n.max(1);
        rest /= n.max(1);
    }
    index_error(op, fault, position, value, dim, size)
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
