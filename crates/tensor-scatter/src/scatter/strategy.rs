//! Which kernel runs a scatter ([`prepare`]), and the index pass the kernels that do not
//! check indices themselves need before they run.

use crate::check;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::exec::tuning::{
    DEDUP_MIN_CELLS, FED_ANY_ROW_THREADS, MIN_PARALLEL_BYTES, RADIX_MAX_BLOCKS, RADIX_MAX_UPDATES,
    SPLIT_MAX_PARTS, SPLIT_PART_BYTES, STREAM_MIN_BYTES, TILE_BYTES, fold_max_bytes, line_cells,
    radix_min_block,
};
use crate::index::IndexInt;
use crate::kernels::scatter;
use crate::reduce::Reduction;
use crate::view::{Layout, TensorView};

use super::ScatterOptions;
use super::plan::{Plan, SKIP, resolve_indices};
use super::sequential::widens;
use crate::view::is_contiguous;

/// Whether the parallel strategies cover these options. `mean` and wide f16/bf16
/// accumulation keep per-cell state across the fold and run on the sequential engine.
pub(super) fn fast_supported<T: Element>(opts: &ScatterOptions) -> bool {
    opts.reduction != Reduction::Mean && !widens::<T>(opts)
}

/// The `(outer, axis, inner)` collapse of a `scatter_elements` call, when all three tensors
/// are contiguous and `indices` matches `data` on every dimension but the axis.
fn elem_geom(dest: &Layout, idx: &Layout, upd: &Layout, axis: usize) -> Option<scatter::ElemGeom> {
    if !(is_contiguous(dest) && is_contiguous(idx) && is_contiguous(upd)) {
        return None;
    }
    let same = (0..dest.shape.len()).all(|d| d == axis || idx.shape[d] == dest.shape[d]);
    if !same {
        return None;
    }
    Some(scatter::ElemGeom {
        outer: crate::shape::sat_product(&dest.shape[..axis]),
        n: dest.shape[axis],
        k: idx.shape[axis],
        inner: crate::shape::sat_product(&dest.shape[axis + 1..]),
        dest_off: dest.offset,
    })
}

/// The element geometry of a ScatterUpdate or one-component ScatterND whose every tuple
/// addresses one element of a one-row destination (no outer dims, a one-element slice: a 1-D
/// `data`, or `np.add.at`'s work), all three tensors contiguous: the one-row element scatter
/// of its tuples, in their row-major order.
fn one_row_geom(
    plan: &Plan,
    dest: &Layout,
    idx: &Layout,
    upd: &Layout,
) -> Option<scatter::ElemGeom> {
    let [c] = &plan.comps[..] else {
        return None;
    };
    let one = |shape: &[usize]| crate::shape::sat_product(shape) == 1;
    let flat =
        one(&plan.outer_shape) && one(&plan.slice_shape) && (c.size <= 1 || c.dest_stride == 1);
    (flat && is_contiguous(dest) && is_contiguous(idx) && is_contiguous(upd)).then(|| {
        scatter::ElemGeom {
            outer: 1,
            n: c.size,
            k: crate::shape::sat_product(&plan.tuple_shape),
            inner: 1,
            dest_off: dest.offset,
        }
    })
}

/// Where the copy of `data` into the destination happens, for the forms that make one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum DataCopy {
    /// No copy: the scatter is in place.
    None,
    /// Fused into the kernel's tasks (contiguous `data` and destination).
    Fused,
    /// Made by the driver before the kernel runs (a strided destination), so the kernel
    /// is not the first to write.
    First,
}

/// A plan ready for a fast kernel.
pub(super) enum Prepared {
    /// Column tiles, staged or not (see [`scatter::ElemJob::staged`]); the indices were
    /// range-checked in place (no resolved copy).
    Elem { g: scatter::ElemGeom, staged: bool },
    /// One whole-row block (`outer == 1`) folded into scratch, its indices checked by the
    /// fold ([`scatter::elem_checked`]), so nothing was checked yet.
    ElemChecked { g: scatter::ElemGeom },
    /// One row (`outer == 1`, `inner == 1`) cut into one part per task, each task scanning
    /// every update ([`scatter::elem_split`]); its indices are checked by the scans, so
    /// nothing was checked yet.
    ElemSplit { g: scatter::ElemGeom },
    /// One row (`outer == 1`, `inner == 1`) folded by one task while a second resolves its
    /// indices ahead of it ([`scatter::elem_fed`]); the indices are checked by the two, so
    /// nothing was checked yet.
    ElemFed { g: scatter::ElemGeom },
    /// Destination blocks fed by buckets; the kernel's first pass checks the indices (before
    /// any write), so nothing was checked yet.
    ElemRadix {
        g: scatter::ElemGeom,
        block_cells: usize,
    },
    /// Destination ranges over resolved tuple offsets.
    Ranges(Vec<isize>),
    /// ScatterND pairs or triples that each address one element of a one-row contiguous
    /// destination (`x[r, c] += v`), folded by the fed fold, which resolves and checks the
    /// tuples itself ([`scatter::Tuples`]): no offsets buffer, no second pass, so nothing
    /// was checked yet. `dims` and `shifts` as [`scatter::Tuples`] takes them.
    TuplesFed {
        g: scatter::ElemGeom,
        dims: CompDims,
        shifts: Vec<i64>,
    },
    /// ScatterND tuples that each address one element of a contiguous destination (`k`
    /// components, a one-element slice: `x[i, j] += v`) where [`Prepared::TuplesFed`] does
    /// not apply, resolved to flat offsets by the index pass: the element kernel `kernel`
    /// runs over the offsets as a 1-D index.
    /// The offsets are 32-bit (half the bytes of `int64` for the kernel to read): a
    /// destination of more than `i32::MAX` cells takes [`Prepared::Ranges`].
    Flat {
        kernel: Box<Prepared>,
        offsets: Vec<i32>,
    },
}

impl Prepared {
    /// Whether the kernel checks the indices as it runs (nothing was checked before it), and
    /// so must be the first to write ([`prepare`] chooses another when it cannot be).
    pub(super) fn kernel_checks(&self) -> bool {
        match self {
            Prepared::ElemChecked { .. }
            | Prepared::ElemSplit { .. }
            | Prepared::ElemFed { .. }
            | Prepared::ElemRadix { .. }
            | Prepared::TuplesFed { .. } => true,
            Prepared::Elem { .. } | Prepared::Ranges(_) | Prepared::Flat { .. } => false,
        }
    }
}

/// Chooses the element-scatter kernel. Random writes into a destination larger than a cache
/// tile would each cost a cache line from memory, and column tiles of a power-of-two-strided
/// matrix thrash the cache sets, so:
/// * *whole-row blocks* when a block of `n * inner` cells fits the tile budget, staged when
///   the destination has at least `tuning::STREAM_MIN_BYTES` and most of it is written
///   (`dense`, below): a block read in order into scratch, folded there and streamed back
///   beats random misses into it, in place too (W7 in place: 0.75-0.85x the direct fold);
/// * *staged column tiles* when a tile one cache line wide, all `n` rows of it, fits the tile
///   budget and most of the destination is written anyway (`copying`: the copy of `data` is
///   fused into the kernel; or at least one update per destination line); they move the
///   minimum bytes;
/// * otherwise *buckets* (the radix kernel), which touch only the destination blocks that
///   updates reach, at the price of writing and re-reading every update once more;
/// * plain column tiles where neither applies (an identity fill, or too many updates to
///   bucket at once).
#[allow(clippy::absurd_extreme_comparisons)] // STREAM_MIN_BYTES is 0 in the unit-test build
fn elem_strategy<T>(g: scatter::ElemGeom, opts: &ScatterOptions, copying: bool) -> Prepared {
    let size = std::mem::size_of::<T>().max(1);
    let line = line_cells::<T>();
    let fill = opts.fills();
    let total = g.outer.saturating_mul(g.n).saturating_mul(g.inner);
    let count = g.outer.saturating_mul(g.k).saturating_mul(g.inner);
    // Most of the destination is written: the copy of `data` is fused into the kernel, or
    // there is at least one update per destination line.
    let dense = copying || count.saturating_mul(line) >= total;
    if g.n.saturating_mul(g.inner).saturating_mul(size) <= TILE_BYTES {
        // Whole-row blocks: staged when most of a large destination is written.
        let staged = dense && total.saturating_mul(size) >= STREAM_MIN_BYTES;
        return Prepared::Elem { g, staged };
    }
    let stageable = g.n.saturating_mul(line).saturating_mul(size) <= TILE_BYTES;
    if stageable && dense {
        return Prepared::Elem { g, staged: true };
    }
    if fill || count > RADIX_MAX_UPDATES {
        return Prepared::Elem { g, staged: false };
    }
    // About L2-sized blocks, not too many of them (each chunk keeps one bucket per block).
    let block = radix_min_block::<T>().max(total.div_ceil(RADIX_MAX_BLOCKS));
    match block.checked_next_power_of_two() {
        Some(block) if block <= 1 << 32 => Prepared::ElemRadix {
            g,
            block_cells: block,
        },
        _ => Prepared::Elem { g, staged: false },
    }
}

/// Whether an element scatter is one block folded by one task with its indices checked in the
/// fold ([`scatter::elem_checked`]): a single block (`outer == 1`) of at most
/// [`fold_max_bytes`] whose indices take at least as many bytes as the block (a separate
/// index pass would read them once more), unless the column-tile kernel would give every
/// thread its own tiles ([`scatter::column_parallel`]), which measured faster: the fold runs
/// on one thread.
fn check_in_fold<T, I>(g: scatter::ElemGeom, threads: usize) -> bool {
    let block =
        g.n.saturating_mul(g.inner)
            .saturating_mul(std::mem::size_of::<T>());
    g.outer == 1
        && block <= fold_max_bytes(threads)
        && g.k
            .saturating_mul(g.inner)
            .saturating_mul(std::mem::size_of::<I>())
            >= block
        && !scatter::column_parallel::<T, I>(g, threads)
}

/// Whether the split fold ([`scatter::elem_split`], one part per thread) takes this scatter:
/// a row both parallel folds could take ([`parallel_row`]) of at most
/// [`SPLIT_PART_BYTES`](SPLIT_PART_BYTES) per thread, with more than
/// [`FED_ANY_ROW_THREADS`](FED_ANY_ROW_THREADS) and at most
/// [`SPLIT_MAX_PARTS`](SPLIT_MAX_PARTS) threads (below, the fed fold
/// ([`fed_fold`]) takes the row: its folder never waits, so it is never slower than one
/// thread, where every split task reads every index and was up to 1.5x slower than one thread
/// on a host whose cache holds the row). Every task reads every index, and with 8-byte indices
/// that read costs about what halving the updates saves: they are split only when the row is
/// too big for the single fold ([`fold_max_bytes`](fold_max_bytes)).
fn split_fold<T, I>(g: scatter::ElemGeom, opts: &ScatterOptions, threads: usize) -> bool {
    let row = g.n.saturating_mul(std::mem::size_of::<T>());
    let fits = row <= threads.saturating_mul(SPLIT_PART_BYTES);
    (FED_ANY_ROW_THREADS + 1..=SPLIT_MAX_PARTS).contains(&threads)
        && parallel_row::<T, I>(g, opts)
        && g.n <= scatter::SPLIT_MAX_CELLS
        && fits
        && (std::mem::size_of::<I>() <= 4 || row > fold_max_bytes(threads))
}

/// What the split and the fed fold both need: one row (`outer == 1`, `inner == 1`), the
/// `error` out-of-range rule, no identity fill, at least as many index bytes as row bytes
/// (otherwise the row's copies into and out of scratch outweigh the updates), and at least
/// [`MIN_PARALLEL_BYTES`](MIN_PARALLEL_BYTES) of indices, updates and row to
/// move (below that a parallel call costs more than it saves).
#[allow(clippy::absurd_extreme_comparisons)] // MIN_PARALLEL_BYTES is 0 in the unit-test build
fn parallel_row<T, I>(g: scatter::ElemGeom, opts: &ScatterOptions) -> bool {
    let fill = opts.fills();
    let row = g.n.saturating_mul(std::mem::size_of::<T>());
    let index_bytes = g.k.saturating_mul(std::mem::size_of::<I>());
    let bytes = index_bytes
        .saturating_add(g.k.saturating_mul(std::mem::size_of::<T>()))
        .saturating_add(row);
    g.outer == 1
        && g.inner == 1
        && opts.index_policy.out_of_range == crate::index::OutOfRange::Error
        && !fill
        && index_bytes >= row
        && bytes >= MIN_PARALLEL_BYTES
}

/// Whether the fed fold ([`scatter::elem_fed`]) takes this scatter: a row both parallel
/// folds could take ([`parallel_row`]) of at most [`scatter::FED_MAX_CELLS`] cells, either
/// within the single fold's budget ([`check_in_fold`]) or, at 2 to
/// [`FED_ANY_ROW_THREADS`](FED_ANY_ROW_THREADS) threads, of any size. At one thread its folder
/// resolves every chunk itself (a vectorised pass into an L1 buffer, then the fold), which
/// measured 15-28% faster than the single fold's fused check (record/2026-11-29-pairs-fed.md).
/// The split fold, when it applies, comes first (there it takes indices of 4 bytes or less,
/// where it measured faster).
fn fed_fold<T, I>(g: scatter::ElemGeom, opts: &ScatterOptions, threads: usize) -> bool {
    parallel_row::<T, I>(g, opts)
        && g.n <= scatter::FED_MAX_CELLS
        && ((2..=FED_ANY_ROW_THREADS).contains(&threads) || check_in_fold::<T, I>(g, threads))
}

/// The index pass of the fast strategies.
#[allow(clippy::absurd_extreme_comparisons)] // DEDUP_MIN_CELLS is 0 in the unit-test build
pub(super) fn prepare<T, I: IndexInt>(
    plan: &Plan,
    dest: &Layout,
    indices: &TensorView<'_, I>,
    upd: &Layout,
    opts: &ScatterOptions,
    copy: DataCopy,
    cx: Ctx,
) -> Result<Prepared> {
    let geom = match plan.elem_axis {
        Some(axis) => elem_geom(dest, &indices.layout, upd, axis),
        None => one_row_geom(plan, dest, &indices.layout, upd),
    };
    if let Some(g) = geom {
        return elem_kernel::<T, I>(plan, g, indices, opts, copy, true, cx);
    }
    let flat = flat_geom(plan, dest, upd);
    if let Some(g) = flat
        && let Some(p) = tuples_fed::<T, I>(plan, indices, g, opts, copy, cx.threads)
    {
        return Ok(p);
    }
    if let Some(g) = flat
        && let Some(offsets) = flat_fast(plan, indices, g, opts, cx)
    {
        return flat_kernel::<T>(plan, g, offsets, opts, copy, cx);
    }
    let mut resolved = resolve_indices(plan, indices, opts.index_policy)?;
    if let Some(g) = flat
        && !resolved.contains(&SKIP)
    {
        // Every offset lies in `[0, numel)`, and numel fits `i32` (`flat_geom`).
        let offsets = resolved.iter().map(|&r| r as i32).collect();
        return flat_kernel::<T>(plan, g, offsets, opts, copy, cx);
    }
    let cells_per_tuple = crate::shape::sat_product(&plan.outer_shape)
        .saturating_mul(crate::shape::sat_product(&plan.slice_shape));
    if opts.reduction == Reduction::None && cells_per_tuple >= DEDUP_MIN_CELLS {
        drop_overwritten(&mut resolved);
    }
    Ok(Prepared::Ranges(resolved))
}

/// Each component's `(size, stride)` in the destination, as the tuple kernels take them.
type CompDims = Vec<(usize, usize)>;

/// The tuples of a [`flat_geom`] scatter when `indices` is contiguous, one row of components
/// per tuple: the index values, and each component's [`CompDims`].
fn flat_tuples<'i, I: IndexInt>(
    plan: &Plan,
    indices: &TensorView<'i, I>,
    g: scatter::ElemGeom,
) -> Option<(&'i [I], CompDims)> {
    let idx = indices.contiguous()?;
    if plan.comp_stride != 1 || Some(idx.len()) != g.k.checked_mul(plan.comps.len()) {
        return None;
    }
    // A contiguous destination's strides are positive (a dim of one cell accepts only 0).
    let dims = plan
        .comps
        .iter()
        .map(|c| (c.size, c.dest_stride as usize))
        .collect();
    Some((idx, dims))
}

/// The fed fold over the tuples of a [`flat_geom`] scatter, where the 1-D work it is would
/// take the fed fold ([`fed_fold`]): pairs or triples, contiguous `indices`, the `Error`
/// out-of-range rule, no identity fill, and a kernel free to be the first to write.
/// Measured against [`Prepared::Flat`] (an offsets pass, then the 1-D kernel over them):
/// record/2026-11-29-pairs-and-in-place.md and record/2026-11-29-pairs-fed.md.
fn tuples_fed<T, I: IndexInt>(
    plan: &Plan,
    indices: &TensorView<'_, I>,
    g: scatter::ElemGeom,
    opts: &ScatterOptions,
    copy: DataCopy,
    threads: usize,
) -> Option<Prepared> {
    let fits = (2..=3).contains(&plan.comps.len())
        && copy != DataCopy::First
        && fed_fold::<T, I>(g, opts, threads);
    if !fits {
        return None;
    }
    let (_, dims) = flat_tuples(plan, indices, g)?;
    let shifts = plan
        .comps
        .iter()
        .map(|c| crate::index::negative_shift(c.size, opts.index_policy.negative))
        .collect();
    Some(Prepared::TuplesFed { g, dims, shifts })
}

/// The flat offsets of a [`flat_geom`] scatter whose `indices` are contiguous, resolved in
/// parallel ([`scatter::flat_offsets`]); `None` sends the call to the exact index pass
/// (a refused index, to be reported; a clamping or skipping policy; another layout).
fn flat_fast<I: IndexInt>(
    plan: &Plan,
    indices: &TensorView<'_, I>,
    g: scatter::ElemGeom,
    opts: &ScatterOptions,
    cx: Ctx,
) -> Option<Vec<i32>> {
    let (idx, dims) = flat_tuples(plan, indices, g)?;
    scatter::flat_offsets(idx, &dims, opts.index_policy, cx)
}

/// A [`Prepared::Flat`] over resolved `offsets`: each lies in `[0, numel)`, so the kernel's
/// own test passes them all.
fn flat_kernel<T>(
    plan: &Plan,
    g: scatter::ElemGeom,
    offsets: Vec<i32>,
    opts: &ScatterOptions,
    copy: DataCopy,
    cx: Ctx,
) -> Result<Prepared> {
    let flat = TensorView::new(&offsets, &[offsets.len()])?;
    let kernel = elem_kernel::<T, i32>(plan, g, &flat, &flat_options(opts), copy, false, cx)?;
    Ok(Prepared::Flat {
        kernel: Box::new(kernel),
        offsets,
    })
}

/// The options a [`Prepared::Flat`] kernel runs with: its offsets are resolved, so the strict
/// policy (which the parallel row folds require) accepts every one.
pub(super) fn flat_options(opts: &ScatterOptions) -> ScatterOptions {
    opts.negative(crate::index::NegativeIndices::Error)
        .out_of_range(crate::index::OutOfRange::Error)
}

/// The element geometry of a ScatterND whose tuples (two or more components) each address one
/// element of a contiguous destination of at most `i32::MAX` cells: a one-row element scatter
/// over its flat offsets.
fn flat_geom(plan: &Plan, dest: &Layout, upd: &Layout) -> Option<scatter::ElemGeom> {
    let one = |shape: &[usize]| crate::shape::sat_product(shape) == 1;
    let flat = plan.comps.len() >= 2
        && one(&plan.outer_shape)
        && one(&plan.slice_shape)
        && dest.numel <= i32::MAX as usize;
    (flat && is_contiguous(dest) && is_contiguous(upd)).then(|| scatter::ElemGeom {
        outer: 1,
        n: dest.numel,
        k: crate::shape::sat_product(&plan.tuple_shape),
        inner: 1,
        dest_off: dest.offset,
    })
}

/// The element kernel for geometry `g` (see [`elem_strategy`] and the row folds), running
/// the index pass first when the kernel does not check indices itself and `validate` asks
/// for it (a [`Prepared::Flat`] kernel's offsets were resolved by the pass already).
fn elem_kernel<T, I: IndexInt>(
    plan: &Plan,
    g: scatter::ElemGeom,
    indices: &TensorView<'_, I>,
    opts: &ScatterOptions,
    copy: DataCopy,
    validate: bool,
    cx: Ctx,
) -> Result<Prepared> {
    {
        let threads = cx.threads;
        // A kernel that checks the indices as it runs must also be the first to write; when
        // the driver writes before the kernel (the copy of `data` into a strided output),
        // the index pass runs first and the kernel is one that does not check.
        let written_first = copy == DataCopy::First;
        if !written_first {
            if split_fold::<T, I>(g, opts, threads) {
                return Ok(Prepared::ElemSplit { g });
            }
            if fed_fold::<T, I>(g, opts, threads) {
                return Ok(Prepared::ElemFed { g });
            }
            if check_in_fold::<T, I>(g, threads) {
                return Ok(Prepared::ElemChecked { g });
            }
        }
        let mut p = elem_strategy::<T>(g, opts, copy == DataCopy::Fused);
        if written_first && p.kernel_checks() {
            p = Prepared::Elem { g, staged: false };
        }
        if validate && !p.kernel_checks() {
            validate_flat(plan, indices, opts, cx)?;
        }
        Ok(p)
    }
}

/// With `none`, a tuple whose destination offset a later tuple repeats is overwritten by it
/// whole (same offset, same slice cells, written later, whatever lies between), so it cannot
/// change the result: it becomes [`SKIP`] and its updates are never read. OpenVINO's
/// ScatterUpdate-3 case (2,500 indices into an axis of 256, 150,000 cells per index) then
/// reads a tenth of its updates.
///
/// Offsets are keyed by their distance from the lowest one in units of the offsets' greatest
/// common divisor (the stride of the indexed dims), one bit each; when that would take more
/// than 64 bits per tuple, nothing is dropped.
fn drop_overwritten(resolved: &mut [isize]) {
    let Some((lo, hi)) = scatter::rel_range(resolved, SKIP) else {
        return;
    };
    // `r - lo` as the exact unsigned distance (lo <= r <= hi, both offsets into one buffer).
    let dist = |r: isize| r.wrapping_sub(lo) as usize;
    let unit = resolved
        .iter()
        .filter(|&&r| r != SKIP)
        .fold(0, |g, &r| gcd(g, dist(r)))
        .max(1);
    let keys = dist(hi) / unit + 1;
    if keys > resolved.len().saturating_mul(64) {
        return;
    }
    let mut seen = vec![0u64; keys.div_ceil(64)];
    for r in resolved.iter_mut().rev().filter(|r| **r != SKIP) {
        let k = dist(*r) / unit;
        let (word, bit) = (k / 64, 1u64 << (k % 64));
        if seen[word] & bit != 0 {
            *r = SKIP;
        } else {
            seen[word] |= bit;
        }
    }
}

fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The read-only index pass for a contiguous one-component `indices` ([`check::first_bad`]).
fn validate_flat<I: IndexInt>(
    plan: &Plan,
    indices: &TensorView<'_, I>,
    opts: &ScatterOptions,
    cx: Ctx,
) -> Result<()> {
    let Some(flat) = indices.contiguous() else {
        return Ok(()); // unreachable for a contiguous view
    };
    let c = &plan.comps[0];
    match check::first_bad(flat, &[(c.dim, c.size)], opts.index_policy, cx) {
        None => Ok(()),
        Some(bad) => Err(flat_index_error(plan, indices, bad, opts)),
    }
}

/// The error for the index at flat (row-major) position `bad` of a contiguous `indices`.
pub(super) fn flat_index_error<I: IndexInt>(
    plan: &Plan,
    indices: &TensorView<'_, I>,
    bad: usize,
    opts: &ScatterOptions,
) -> Error {
    let l = &indices.layout;
    let c = &plan.comps[0];
    check::error_at(
        plan.op,
        indices.contiguous().unwrap_or(&[]),
        &l.shape,
        bad,
        &[(c.dim, c.size)],
        opts.index_policy,
    )
}

#[cfg(test)]
mod tests {
    use super::{SKIP, drop_overwritten};

    #[test]
    fn only_the_last_tuple_at_an_offset_survives() {
        // Offsets in units of 3, negative ones too (reversed views), and a skipped tuple.
        let mut r = vec![0, 6, 0, -3, 6, SKIP, 9, -3];
        drop_overwritten(&mut r);
        assert_eq!(r, vec![SKIP, SKIP, 0, SKIP, 6, SKIP, 9, -3]);
        // Far-apart offsets with a large common unit are still keyed densely.
        let mut r = vec![1 << 40, 0, 1 << 40];
        drop_overwritten(&mut r);
        assert_eq!(r, vec![SKIP, 0, 1 << 40]);
        // Unit 1 over a span of 2^40: more than 64 keys per tuple, so nothing is dropped.
        let mut r = vec![0, 1, 1 << 40, 0];
        drop_overwritten(&mut r);
        assert_eq!(r, vec![0, 1, 1 << 40, 0]);
        // Nothing kept, nothing to do.
        let mut r = vec![SKIP, SKIP];
        drop_overwritten(&mut r);
        assert_eq!(r, vec![SKIP, SKIP]);
        // The extremes of isize: distances are exact.
        let mut r = vec![isize::MAX, isize::MIN + 1, isize::MAX];
        drop_overwritten(&mut r);
        assert_eq!(r, vec![SKIP, isize::MIN + 1, isize::MAX]);
    }
}
