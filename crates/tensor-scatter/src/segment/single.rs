//! A [`scatter`](super::scatter) of single elements (rows of one) runs on the crate's
//! scatter-elements kernel, which streams `src` in index order instead of sorting it by
//! destination; a fresh output folds from the reduction's identity, the kernels' fastest form.

use super::SegmentOptions;
use super::plan::{Dims, Lanes, Mode, Origin};
use crate::dtype::{Element, Reduction};
use crate::error::{Error, Result};
use crate::exec::{Ctx, Par};
use crate::index::IndexInt;
use crate::kernels::segment::fold;
use crate::view::{TensorView, TensorViewMut};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Whether a [`scatter`] of single elements (`k = 1`, rows of one) goes through the crate's
/// scatter-elements kernel: it streams `src` in index order instead of sorting it by
/// destination, which for rows this narrow is several times faster (and folds every cell in
/// the same order, so the bits are the same).
pub(super) fn by_elements(dims: Dims, mode: Mode) -> bool {
    mode != Mode::PerElement && dims.k == 1 && (dims.b == 1 || dims.e >= 1024)
}

/// Whether the scatter-elements path takes this reduction of `T`: every one but a mean of
/// a type other than f32 and f64 (f16/bf16 divide their f32 sum, which only the folds keep;
/// integer means stay on the folds too, so the fast mean is compiled for two types, not
/// thirteen: record/2026-11-29-dask.md).
pub(super) const fn elements_reduce<T: Element>(red: Reduction) -> bool {
    !matches!(red, Reduction::Mean) || fast_mean::<T>()
}

/// Whether a mean of single `T` elements is the fast sum divided by counts: f32 and f64.
pub(super) const fn fast_mean<T: Element>() -> bool {
    matches!(
        T::DTYPE,
        crate::dtype::DType::F32 | crate::dtype::DType::F64
    )
}

/// For a fresh output of single elements: the reduction's identity, when folding every cell
/// from it (the scatter kernels' fastest form, `include_self`) and then giving the cells no
/// update reached the empty value ([`untouched_to_empty`]) is the result without
/// `include_self`: sum, product, min and max.
pub(super) fn identity_start<T: Element>(red: Reduction) -> Option<T> {
    matches!(
        red,
        Reduction::Add | Reduction::Mul | Reduction::Min | Reduction::Max
    )
    .then(|| T::identity(red))
}

/// Updates per block of the scan for identity-valued updates ([`untouched_to_empty`]).
const MARK_BLOCK: usize = 4096;

/// Which blocks of [`MARK_BLOCK`] updates hold a value of `bits`: a scan cut across the
/// threads, a plain compare-and-or per block that the compiler vectorises. Over the updates'
/// bits, so compiled once per width.
fn blocks_holding<U: Element>(ctx: Ctx, updates: &[U], bits: u64) -> Vec<AtomicBool> {
    let blocks = updates.len().div_ceil(MARK_BLOCK);
    let holds: Vec<AtomicBool> = (0..blocks).map(|_| AtomicBool::new(false)).collect();
    let tasks = ctx.tasks(std::mem::size_of_val(updates), 1);
    ctx.run(tasks, |t| {
        let (lo, hi) = crate::shape::part(blocks, tasks, t, 1);
        for (b, held) in holds[lo..hi].iter().enumerate() {
            let at = (lo + b) * MARK_BLOCK;
            let block = &updates[at..(at + MARK_BLOCK).min(updates.len())];
            if block
                .iter()
                .fold(false, |any, u| any | (u.to_bits_u64() == bits))
            {
                held.store(true, Relaxed);
            }
        }
    });
    holds
}

/// After a fold from the identity `id` ([`identity_start`]), the cells no update reached get
/// `empty`. Nothing to do when the two are the same bits (integer sums, every product).
/// Otherwise a cell that took updates ends on the identity's bits only when every update it
/// took has them (`-0.0` is a float sum only of `-0.0`s, `+inf` a minimum only of `+inf`s,
/// `i64::MAX` a minimum only of `i64::MAX`s): so among the cells holding them, those reached
/// were reached by such an update, and only those are marked (usually none; one pass over
/// the updates, cut across the threads, finds out).
#[allow(clippy::too_many_arguments)]
pub(super) fn untouched_to_empty<T: Element>(
    ctx: Ctx,
    op: &'static str,
    buf: &mut [T],
    src: &[T],
    lanes: &Lanes<'_>,
    dims: Dims,
    id: T,
    empty: T,
) -> Result<()> {
    let bits = id.to_bits_u64();
    // No cell holds the identity (every cell reached, the usual case when the updates
    // outnumber the cells): no pass over the updates. A cell that does stops this look early.
    if bits == empty.to_bits_u64() || !buf.iter().any(|x| x.to_bits_u64() == bits) {
        return Ok(());
    }
    let (e, n) = (dims.e, dims.n);
    let updates = &src[..dims.b * e];
    let holds = blocks_holding(ctx, crate::kernels::bits_of(updates), bits);
    let mut marked: Vec<u64> = Vec::new();
    for (b, _) in holds.iter().enumerate().filter(|(_, h)| h.load(Relaxed)) {
        if marked.is_empty() {
            let words = buf.len().div_ceil(64);
            marked
                .try_reserve_exact(words)
                .map_err(|_| Error::out_of_memory(op, "out", words.saturating_mul(8)))?;
            marked.resize(words, 0);
        }
        let at = b * MARK_BLOCK;
        let block = &updates[at..(at + MARK_BLOCK).min(updates.len())];
        for (i, u) in block.iter().enumerate() {
            if u.to_bits_u64() == bits {
                let (lane, j) = ((at + i) / e, (at + i) % e);
                // Every index is in `[0, n)`: checked by the index pass or by the kernel,
                // which succeeded.
                let to = match lanes.narrow {
                    Some(index) => index[j] as usize,
                    None => lanes.lane(lane)[j] as usize,
                };
                let c = lane * n + to;
                marked[c / 64] |= 1 << (c % 64);
            }
        }
    }
    let reached = |c: usize| marked.get(c / 64).is_some_and(|w| w >> (c % 64) & 1 == 1);
    for (c, x) in buf.iter_mut().enumerate() {
        if x.to_bits_u64() == bits && !reached(c) {
            *x = empty;
        }
    }
    Ok(())
}

/// A 1-D [`crate::scatter_elements_into`] per lane of `buf` (`[b, n]`), which checks the
/// indices (on error the lane's cells are unchanged): the fold of each cell
/// in index order from the identity (from `buf`'s value with `include_self`), in `T::Wide`
/// and rounded once, which is [`fold::run`]'s result bit for bit. A cell that receives
/// nothing keeps `buf`'s value (torch_scatter's 0, or 1 for `mul`, without `out`).
#[allow(clippy::too_many_arguments)]
pub(super) fn by_scatter_elements<T: Element>(
    op: &'static str,
    src: &[T],
    lanes: &Lanes<'_>,
    dims: Dims,
    red: Reduction,
    include_self: bool,
    opts: &SegmentOptions,
    buf: &mut [T],
) -> Result<()> {
    if !include_self && red == Reduction::Mul {
        buf.fill(fold::empty_value::<T>(red)); // The others' empty value is `buf`'s 0.
    }
    // The segment family's indices address `[0, n)`, no wrapping: the kernel checks that
    // when the index pass was left to it ([`super::plan::IndexPlan::deferred`]).
    let strict = crate::IndexPolicy::new(crate::NegativeIndices::Error, crate::OutOfRange::Error);
    let so = crate::ScatterOptions::new()
        .reduction(red)
        .include_self(include_self)
        .accumulation(crate::Accumulation::Wide)
        .index_policy(strict)
        .par(opts.par);
    let (e, n) = (dims.e, dims.n);
    for lane in 0..dims.b {
        let updates = TensorView::new(&src[lane * e..(lane + 1) * e], &[e])?;
        let mut dest = TensorViewMut::new(&mut buf[lane * n..(lane + 1) * n], &[n])?;
        match lanes.narrow {
            Some(index) => {
                let index = TensorView::new(index, &[e])?;
                crate::scatter_elements_into(&mut dest, &index, &updates, &so)
            }
            None => {
                let index = TensorView::new(lanes.lane(lane), &[e])?;
                crate::scatter_elements_into(&mut dest, &index, &updates, &so)
            }
        }
        .map_err(|err| err.with_op(op))?;
    }
    Ok(())
}

/// A count of index values: `u32` or `u64`.
pub(super) trait Counter:
    Copy + Default + Into<u64> + std::ops::AddAssign + From<u8> + Send
{
}
impl Counter for u32 {}
impl Counter for u64 {}

/// How many times each of `[0, n)` occurs in `index` (whose values the sum checked; a miss
/// would be a bug, reported, not a panic). Counts are integers, so any cut gives the same
/// counts: an index that outnumbers its cells at least twice is cut across `ctx`'s threads,
/// each task counting its part in its own table (at most one table per `n` indices), the
/// tables added after. One thread counted 1e7 indices into 1e6 cells in about as long as
/// the sum before it took (record/2026-11-30-overwrite-and-int32.md).
fn tally<C: Counter, I: IndexInt>(
    ctx: Ctx,
    op: &'static str,
    index: &[I],
    n: usize,
) -> Result<Vec<C>> {
    let tasks = match index.len() >= n.saturating_mul(2) {
        true => ctx
            .tasks(std::mem::size_of_val(index), 1)
            .min(index.len() / n.max(1)),
        false => 1,
    }
    .max(1);
    let tables: Vec<std::sync::Mutex<Vec<C>>> = (0..tasks)
        .map(|_| std::sync::Mutex::new(Vec::new()))
        .collect();
    let missed = AtomicBool::new(false);
    ctx.run(tasks, |t| {
        let (lo, hi) = crate::shape::part(index.len(), tasks, t, 1);
        let mut table = vec![C::default(); n];
        for &i in &index[lo..hi] {
            match usize::try_from(i.to_i64_sat())
                .ok()
                .and_then(|i| table.get_mut(i))
            {
                Some(c) => *c += C::from(1),
                None => return missed.store(true, Relaxed),
            }
        }
        *tables[t].lock().unwrap_or_else(|e| e.into_inner()) = table;
    });
    if missed.load(Relaxed) {
        return Err(Error::invalid(op, "index", "outside the checked range"));
    }
    let mut tables = tables
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()));
    let mut total = tables.next().unwrap_or_default();
    for table in tables {
        for (a, &b) in total.iter_mut().zip(&table) {
            *a += b;
        }
    }
    Ok(total)
}

/// How many times each of `[0, n)` occurs in a 1-D `index` (PyG's `degree`; the counts a mean
/// divides by), on `par`'s threads: counts are integers, so any cut gives the same. In `u32`
/// counters while the index is shorter than 2^32 (half the memory traffic), widened at the end.
///
/// ```
/// use tensor_scatter::{Par, segment::counts};
/// assert_eq!(counts(&[2i64, 0, 2, 2], 4, Par::default()).unwrap(), [1, 0, 3, 0]);
/// assert!(counts(&[0i32, 4], 4, Par::default()).is_err());
/// ```
///
/// # Errors
/// An index outside `[0, n)`, named with its position and value as
/// [`scatter`](super::scatter) names it.
pub fn counts<I: IndexInt>(index: &[I], n: usize, par: Par) -> Result<Vec<u64>> {
    let ctx = Ctx::new(par);
    let found = if u32::try_from(index.len()).is_ok() {
        tally::<u32, I>(ctx, "counts", index, n).map(|c| c.into_iter().map(u64::from).collect())
    } else {
        tally::<u64, I>(ctx, "counts", index, n)
    };
    found.map_err(|e| {
        let bad = |v: &I| !(0..n as i64).contains(&v.to_i64_sat());
        match index.iter().position(bad) {
            Some(j) => {
                Origin::own("counts", "index", &[], 0).fault(vec![j], index[j].to_i64_sat(), n)
            }
            None => e,
        }
    })
}

/// A mean's last step over the sums of single elements: each cell `sum / count` (the index's
/// count, one more with `include_self`), a cell nothing reached its empty value (0) or, with
/// `include_self`, its own bits. Counts are order-free ([`tally`]), in counters `C` (u32 when
/// a lane is short enough: half the memory traffic of u64).
pub(super) fn divide_by_counts<T: Element, C: Counter>(
    ctx: Ctx,
    op: &'static str,
    buf: &mut [T],
    lanes: &Lanes<'_>,
    dims: Dims,
    include_self: bool,
) -> Result<()> {
    let n = dims.n;
    for lane in 0..dims.b {
        let counts: Vec<C> = match lanes.narrow {
            Some(index) => tally(ctx, op, index, n)?,
            None => tally(ctx, op, lanes.lane(lane), n)?,
        };
        for (x, &c) in buf[lane * n..(lane + 1) * n].iter_mut().zip(&counts) {
            let c: u64 = c.into();
            if c > 0 {
                *x = T::reduce_mean(*x, c + u64::from(include_self));
            } else if !include_self {
                *x = fold::empty_value::<T>(Reduction::Mean);
            }
        }
    }
    Ok(())
}
