//! Where each destination's positions lie in a lane: the boundaries of sorted and CSR
//! input, or a stable counting sort of unsorted input (`kernels::segment`).

use super::{Pos, counting_sort};
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::exec::tuning::NARROW_ORDER_MAX;
use crate::kernels::try_vec_with_huge_pages;
use crate::shape::part;

/// Where each destination's positions lie in one lane: segment `s` holds positions
/// `order[starts[s]..starts[s + 1]]` (or `starts[s]..starts[s + 1]` themselves when the
/// positions are already grouped, as for sorted and CSR input).
#[derive(Default)]
pub(crate) struct Groups {
    pub(crate) starts: Vec<usize>,
    order: OrderBuf,
    pub(crate) sorted: bool,
}

/// The counting sort's order and scratch, in `u32` when a lane's positions fit.
enum OrderBuf {
    Narrow(Vec<u32>, Vec<u32>),
    Wide(Vec<usize>, Vec<usize>),
}

impl Default for OrderBuf {
    fn default() -> Self {
        OrderBuf::Narrow(Vec::new(), Vec::new())
    }
}

impl Groups {
    /// Scratch for lanes of `e` positions into `n` segments, allocated fallibly.
    pub(crate) fn with_capacity(
        op: &'static str,
        n: usize,
        e: usize,
        sorted: bool,
    ) -> Result<Groups> {
        let mut g = Groups {
            sorted,
            ..Groups::default()
        };
        // `count` cells of `size` bytes could not be allocated.
        let oom = |count: usize, size: usize| {
            Error::out_of_memory(op, "index", count.saturating_mul(size))
        };
        let n1 = n
            .checked_add(1)
            .ok_or_else(|| Error::overflow(op, "dim_size"))?;
        g.starts.try_reserve_exact(n1).map_err(|_| oom(n1, 8))?;
        if !sorted {
            // Written in random order: huge pages spare the counting sort a page fault (and
            // a TLB miss) per 4 KiB.
            g.order = if e <= NARROW_ORDER_MAX {
                OrderBuf::Narrow(
                    try_vec_with_huge_pages(e).ok_or_else(|| oom(e, 4))?,
                    Vec::new(),
                )
            } else {
                OrderBuf::Wide(
                    try_vec_with_huge_pages(e).ok_or_else(|| oom(e, 8))?,
                    Vec::new(),
                )
            };
        }
        Ok(g)
    }

    /// Groups one lane of checked index values in `[0, n)`: a stable counting sort (cut
    /// across `ctx`'s threads), or (for a sorted lane) the boundaries alone.
    pub(crate) fn fill_from_index(&mut self, ctx: Ctx, idx: &[i64], n: usize) {
        if self.sorted {
            self.starts.clear();
            self.starts.resize(n + 1, 0);
            // Segment s starts at the first position holding s or more. Each task takes a
            // range of segments: a binary search over the whole lane for its first, then for
            // each next one a search in a short window past the previous start (segments are
            // short), else in the rest.
            let tasks = ctx.tasks(idx.len() * 8, 1).min(n + 1);
            let mut parts = Vec::with_capacity(tasks);
            let mut rest = &mut self.starts[..];
            for t in 0..tasks {
                let (lo, hi) = part(n + 1, tasks, t, 1);
                let (mine, r) = rest.split_at_mut(hi - lo);
                rest = r;
                parts.push(std::sync::Mutex::new((lo, mine)));
            }
            ctx.run(tasks, |t| {
                let mut guard = parts[t].lock().unwrap_or_else(|p| p.into_inner());
                let (s0, starts) = &mut *guard;
                let s0 = *s0;
                let mut at = idx.partition_point(|&v| (v as usize) < s0);
                for (s, start) in (s0..).zip(starts.iter_mut()) {
                    let window = &idx[at..idx.len().min(at + 64)];
                    let below = |&v: &i64| (v as usize) < s;
                    at += match window.last() {
                        // Sorted: the values below `s` are the window's first ones, and a
                        // count of them is branch-free and vectorises (a binary search is
                        // a chain of dependent loads).
                        Some(last) if !below(last) => {
                            window.iter().fold(0, |c, v| c + usize::from(below(v)))
                        }
                        _ => idx[at..].partition_point(below),
                    };
                    *start = at;
                }
            });
            return;
        }
        match &mut self.order {
            OrderBuf::Narrow(order, counts) => {
                counting_sort(ctx, idx, n, &mut self.starts, order, counts);
            }
            OrderBuf::Wide(order, counts) => {
                counting_sort(ctx, idx, n, &mut self.starts, order, counts);
            }
        }
    }

    /// Takes one lane of checked CSR offsets as the boundaries.
    pub(crate) fn fill_from_indptr(&mut self, indptr: &[i64]) {
        self.starts.clear();
        self.starts.extend(indptr.iter().map(|&v| v as usize));
    }

    /// The positions of segment `s`.
    #[inline]
    pub(crate) fn positions(&self, s: usize) -> Positions<'_> {
        let (lo, hi) = (self.starts[s], self.starts[s + 1]);
        match self.order() {
            None => Positions::Range(lo..hi),
            Some(all) => Positions::Order {
                all,
                at: lo,
                end: hi,
            },
        }
    }

    /// The positions in destination order, or `None` when they are already grouped
    /// (sorted and CSR input: segment `s` is `starts[s]..starts[s + 1]` itself).
    #[inline]
    pub(crate) fn order(&self) -> Option<Order<'_>> {
        if self.sorted {
            return None;
        }
        Some(match &self.order {
            OrderBuf::Narrow(o, _) => Order::Narrow(o),
            OrderBuf::Wide(o, _) => Order::Wide(o),
        })
    }

    /// How many positions segments `lo..hi` hold.
    pub(crate) fn count(&self, lo: usize, hi: usize) -> usize {
        self.starts[hi] - self.starts[lo]
    }
}

/// The positions of one segment, in index order.
#[derive(Clone)]
pub(crate) enum Positions<'a> {
    Range(std::ops::Range<usize>),
    /// `all[at..end]`; the positions after `end` are the next segments' (for prefetching).
    Order {
        all: Order<'a>,
        at: usize,
        end: usize,
    },
}

/// A lane's positions grouped by destination ([`Groups`]), in the width they were sorted in.
#[derive(Clone, Copy)]
pub(crate) enum Order<'a> {
    Narrow(&'a [u32]),
    Wide(&'a [usize]),
}

impl Order<'_> {
    /// Position `i`, if there is one.
    #[inline(always)]
    pub(crate) fn get(self, i: usize) -> Option<usize> {
        match self {
            Order::Narrow(o) => o.get(i).map(|p| p.get()),
            Order::Wide(o) => o.get(i).copied(),
        }
    }
}

impl Positions<'_> {
    /// The position `d` places after the next one, when it is a random one (unsorted input)
    /// that exists.
    #[inline]
    pub(crate) fn ahead(&self, d: usize) -> Option<usize> {
        match self {
            Positions::Range(_) => None,
            Positions::Order { all, at, .. } => all.get(*at + d),
        }
    }
}

impl Iterator for Positions<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        match self {
            Positions::Range(r) => r.next(),
            Positions::Order { all, at, end } => {
                if at < end {
                    *at += 1;
                    all.get(*at - 1)
                } else {
                    None
                }
            }
        }
    }
}
