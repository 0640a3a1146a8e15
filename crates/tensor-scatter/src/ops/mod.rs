//! The operators and the engine they share.
//!
//! All three scatters are one computation (semantics.md §0): for every *outer* coordinate
//! (ScatterUpdate's `data[..axis]`), for every index *tuple* in row-major order of `indices`,
//! resolve the tuple to a destination offset and combine a *slice* of `updates` into the
//! destination. The operators differ only in how they fill in a [`Plan`]:
//!
//! | operator | outer | tuples | components per tuple | slice |
//! |---|---|---|---|---|
//! | `scatter_elements` | — | `indices.shape` | 1 (the axis) | one element |
//! | `scatter_nd` | — | `indices.shape[..q-1]` | `k = indices.shape[q-1]` | `data.shape[k..]` |
//! | `scatter_update` | `data.shape[..axis]` | `indices.shape` | 1 (the axis) | `data.shape[axis+1..]` |
//!
//! The data path is plan (shapes only) → index pass (reads every index, returns an error
//! before anything is written) → kernel (infallible).

pub(crate) mod gather;
pub(crate) mod scatter_elements;
pub(crate) mod scatter_nd;
pub(crate) mod scatter_update;

use crate::dtype::{Element, is_bits};
use crate::error::{Error, ErrorKind, Result};
use crate::index::{
    Fault, IndexInt, IndexPolicy, Resolved, accepted_range, resolve, with_native_indices,
};
use crate::kernels::{self, DestPtr, fast, fed, split};
use crate::par::Par;
use crate::reduce::{Accumulation, AddC, Assign, MaxC, MinC, MulC, Reduction, SubC};
use crate::shape::Odometer;
use crate::view::{Layout, Tensor, TensorView, TensorViewMut};

/// Options shared by the three scatter operators.
///
/// Defaults follow ONNX: axis 0, reduction `none`, `include_self = true`, negative indices
/// wrap once, out-of-range indices are an error, f16/bf16 round after every update.
///
/// ```
/// use tensor_scatter::{Reduction, ScatterOptions, OutOfRange};
/// let o = ScatterOptions::new().axis(-1).reduction(Reduction::Mean).include_self(false);
/// assert_eq!((o.axis, o.reduction, o.include_self), (-1, Reduction::Mean, false));
/// assert_eq!(o.index_policy.out_of_range, OutOfRange::Error);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ScatterOptions {
    /// The axis for `scatter_elements` and `scatter_update`, in `[-rank, rank)`; ignored by
    /// `scatter_nd`.
    pub axis: i64,
    /// How updates combine with the destination.
    pub reduction: Reduction,
    /// Whether the destination's own value starts the fold (ONNX: always; OpenVINO
    /// `use_init_val`; torch `include_self`). When false, every targeted cell starts from the
    /// reduction's identity; untouched cells keep their value. Ignored by `none`.
    pub include_self: bool,
    /// Negative and out-of-range index handling.
    pub index_policy: IndexPolicy,
    /// Where f16/bf16 reductions accumulate.
    pub accumulation: Accumulation,
    /// How many threads to use. Never changes the result.
    pub par: Par,
}

impl ScatterOptions {
    /// The defaults (ONNX semantics).
    pub fn new() -> ScatterOptions {
        ScatterOptions {
            include_self: true,
            ..Default::default()
        }
    }
    /// Sets the axis.
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = axis;
        self
    }
    /// Sets the reduction.
    pub fn reduction(mut self, reduction: Reduction) -> Self {
        self.reduction = reduction;
        self
    }
    /// Sets `include_self`.
    pub fn include_self(mut self, include_self: bool) -> Self {
        self.include_self = include_self;
        self
    }
    /// Sets the index policy.
    pub fn index_policy(mut self, policy: IndexPolicy) -> Self {
        self.index_policy = policy;
        self
    }
    /// Sets the accumulation mode.
    pub fn accumulation(mut self, accumulation: Accumulation) -> Self {
        self.accumulation = accumulation;
        self
    }
    /// Sets the thread setting.
    pub fn par(mut self, par: Par) -> Self {
        self.par = par;
        self
    }
}

/// One index component: which data dimension it addresses.
#[derive(Clone, Debug)]
pub(crate) struct Component {
    pub(crate) dim: usize,
    pub(crate) size: usize,
    pub(crate) dest_stride: isize,
}

/// A contiguous-or-strided walk over a slice, split into runs contiguous in both operands.
#[derive(Clone, Debug)]
pub(crate) struct Runs {
    /// Elements per run (`dest` and `updates` both have stride 1 inside a run).
    len: usize,
    /// The dims iterated around runs, with their strides.
    shape: Vec<usize>,
    dest: Vec<isize>,
    upd: Vec<isize>,
    count: usize,
}

impl Runs {
    /// Collapses the slice dims, then peels off the innermost dim as a run when both operands
    /// are contiguous along it.
    fn new(shape: &[usize], dest: &[isize], upd: &[isize]) -> Runs {
        let mut dims: Vec<(usize, isize, isize)> = Vec::new();
        for ((&n, &d), &u) in shape.iter().zip(dest).zip(upd) {
            if n == 1 {
                continue;
            }
            if let Some(last) = dims.last_mut() {
                // Merge into the previous (outer) dim when this one continues it exactly.
                if last.1 == d.wrapping_mul(n as isize) && last.2 == u.wrapping_mul(n as isize) {
                    *last = (last.0.saturating_mul(n), d, u);
                    continue;
                }
            }
            dims.push((n, d, u));
        }
        let count = crate::shape::sat_product(shape);
        let mut len = 1;
        if let Some(&(n, 1, 1)) = dims.last() {
            len = n;
            dims.pop();
        }
        Runs {
            len,
            shape: dims.iter().map(|d| d.0).collect(),
            dest: dims.iter().map(|d| d.1).collect(),
            upd: dims.iter().map(|d| d.2).collect(),
            count: count.checked_div(len).unwrap_or(0),
        }
    }
}

/// The shape-only plan of one scatter call (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) op: &'static str,
    pub(crate) outer_shape: Vec<usize>,
    pub(crate) dest_outer: Vec<isize>,
    pub(crate) upd_outer: Vec<isize>,
    pub(crate) tuple_shape: Vec<usize>,
    pub(crate) idx_tuple: Vec<isize>,
    pub(crate) upd_tuple: Vec<isize>,
    /// Destination stride of each tuple dim that also addresses data (ScatterElements' non-axis
    /// dims); zero elsewhere.
    pub(crate) dest_tuple: Vec<isize>,
    pub(crate) comps: Vec<Component>,
    /// Stride between the components of one tuple in `indices`.
    pub(crate) comp_stride: isize,
    /// Whether an error position names the component too (ScatterND).
    pub(crate) nd_position: bool,
    pub(crate) slice_shape: Vec<usize>,
    pub(crate) dest_slice: Vec<isize>,
    pub(crate) upd_slice: Vec<isize>,
    /// `Some(axis)` for `scatter_elements` (eligible for the column-tile kernel).
    pub(crate) elem_axis: Option<usize>,
}

/// Marks a dropped tuple in the resolved-offset buffer.
const SKIP: isize = isize::MIN;

/// The index pass: reads every index once, in row-major order, and returns the destination
/// offset of each tuple (relative to the destination's origin), or the first error.
pub(crate) fn resolve_indices<I: IndexInt>(
    plan: &Plan,
    indices: &TensorView<'_, I>,
    policy: IndexPolicy,
) -> Result<Vec<isize>> {
    let n = crate::shape::sat_product(&plan.tuple_shape);
    let mut out = Vec::with_capacity(n);
    let mut odo = Odometer::new(
        &plan.tuple_shape,
        [&plan.idx_tuple, &plan.dest_tuple],
        [indices.layout.offset as isize, 0],
        n,
    );
    let mut failure = None;
    while failure.is_none()
        && odo.next_with_coord(|coord, [idx_off, dest_static]| {
            let mut rel = dest_static;
            let mut skip = false;
            for (j, c) in plan.comps.iter().enumerate() {
                let pos = idx_off + j as isize * plan.comp_stride;
                let value = indices.data[pos as usize].to_i128();
                match resolve(value, c.size, policy) {
                    // Wrapping: with an empty destination (a zero dim elsewhere) a stride
                    // and an accepted position can multiply past `isize::MAX`; only the
                    // index check matters then, and the offsets are never used.
                    Ok(Resolved::At(p)) => {
                        rel = rel.wrapping_add((p as isize).wrapping_mul(c.dest_stride))
                    }
                    Ok(Resolved::Skip) => skip = true,
                    Err(fault) => {
                        let mut position = coord.to_vec();
                        if plan.nd_position {
                            position.push(j);
                        }
                        failure = Some(index_error(plan.op, fault, position, value, c));
                        return;
                    }
                }
            }
            out.push(if skip { SKIP } else { rel });
        })
    {}
    match failure {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

fn index_error(
    op: &'static str,
    fault: Fault,
    position: Vec<usize>,
    value: i128,
    c: &Component,
) -> Error {
    Error::new(match fault {
        Fault::Negative => ErrorKind::NegativeIndex {
            op,
            arg: "indices",
            position,
            value,
            dim: c.dim,
        },
        Fault::OutOfRange => ErrorKind::IndexOutOfRange {
            op,
            arg: "indices",
            position,
            value,
            dim: c.dim,
            size: c.size,
        },
    })
}

/// Calls `f(dest_pos, upd_pos, len)` for every run of every non-skipped tuple, in application
/// order. Positions are absolute buffer positions.
fn for_each_run(
    plan: &Plan,
    runs: &Runs,
    resolved: &[isize],
    dest_base: isize,
    upd_base: isize,
    mut f: impl FnMut(usize, usize, usize),
) {
    if runs.count == 0 || resolved.is_empty() {
        return;
    }
    let outer_n = crate::shape::sat_product(&plan.outer_shape);
    let mut outer = Odometer::new(
        &plan.outer_shape,
        [&plan.dest_outer, &plan.upd_outer],
        [dest_base, upd_base],
        outer_n,
    );
    while let Some([d_outer, u_outer]) = outer.next_offsets() {
        let mut tuples = Odometer::new(
            &plan.tuple_shape,
            [&plan.upd_tuple],
            [u_outer],
            resolved.len(),
        );
        for &rel in resolved {
            let Some([u_tuple]) = tuples.next_offsets() else {
                break;
            };
            if rel == SKIP {
                continue;
            }
            let d0 = d_outer + rel;
            let mut inner = Odometer::new(
                &runs.shape,
                [&runs.dest, &runs.upd],
                [d0, u_tuple],
                runs.count,
            );
            while let Some([d, u]) = inner.next_offsets() {
                f(d as usize, u as usize, runs.len);
            }
        }
    }
}

/// Runs the kernel for a validated plan. Infallible: every position it touches was proven in
/// bounds by the view checks and the index pass.
pub(crate) fn execute<T: Element>(
    plan: &Plan,
    resolved: &[isize],
    dest: &mut [T],
    dest_layout: &Layout,
    upd: &[T],
    upd_layout: &Layout,
    opts: &ScatterOptions,
) {
    let runs = Runs::new(&plan.slice_shape, &plan.dest_slice, &plan.upd_slice);
    let r = opts.reduction;
    let widen = widens::<T>(opts);
    let (Some((dlo, dhi)), Some((ulo, uhi))) = (dest_layout.span(), upd_layout.span()) else {
        return; // nothing to read or nothing to write
    };
    let dest_base = dest_layout.offset as isize;
    let upd_base = upd_layout.offset as isize;
    if !widen {
        apply(
            plan,
            &runs,
            resolved,
            dest,
            dest_base,
            upd,
            upd_base,
            r,
            opts.include_self,
            (dlo, dhi),
        );
        return;
    }
    // Wide accumulation: promote the reachable spans, run the fold in the wide type, and
    // round back only the cells that were targeted (the others stay bit-identical).
    let mut wide_dest: Vec<T::Wide> = dest[dlo..=dhi].iter().map(|x| x.widen()).collect();
    let wide_upd: Vec<T::Wide> = upd[ulo..=uhi].iter().map(|x| x.widen()).collect();
    let (db, ub) = (dest_base - dlo as isize, upd_base - ulo as isize);
    apply(
        plan,
        &runs,
        resolved,
        &mut wide_dest,
        db,
        &wide_upd,
        ub,
        r,
        opts.include_self,
        (0, dhi - dlo),
    );
    let mut touched = vec![false; dhi - dlo + 1];
    for_each_run(plan, &runs, resolved, db, ub, |d, _, len| {
        touched[d..d + len].fill(true)
    });
    for ((t, w), x) in touched.iter().zip(&wide_dest).zip(&mut dest[dlo..=dhi]) {
        if *t {
            *x = T::narrow(*w);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn apply<T: Element>(
    plan: &Plan,
    runs: &Runs,
    resolved: &[isize],
    dest: &mut [T],
    dest_base: isize,
    upd: &[T],
    upd_base: isize,
    reduction: Reduction,
    include_self: bool,
    (lo, hi): (usize, usize),
) {
    let walk = |f: &mut dyn FnMut(usize, usize, usize)| {
        for_each_run(plan, runs, resolved, dest_base, upd_base, f)
    };
    if reduction != Reduction::None && !include_self {
        let id = T::identity(reduction);
        walk(&mut |d, _, len| kernels::fill(dest, d, len, id));
    }
    match reduction {
        // Other dtypes reach `none` as their bits (`run_out_of_place` and the other drivers).
        Reduction::None => {
            if const { is_bits::<T>() } {
                walk(&mut |d, u, len| kernels::combine::<T, Assign>(dest, d, upd, u, len))
            } else {
                unreachable!("`none` runs on the bits of the values")
            }
        }
        Reduction::Add => walk(&mut |d, u, len| kernels::combine::<T, AddC>(dest, d, upd, u, len)),
        Reduction::Sub => walk(&mut |d, u, len| kernels::combine::<T, SubC>(dest, d, upd, u, len)),
        Reduction::Mul => walk(&mut |d, u, len| kernels::combine::<T, MulC>(dest, d, upd, u, len)),
        Reduction::Min => walk(&mut |d, u, len| kernels::combine::<T, MinC>(dest, d, upd, u, len)),
        Reduction::Max => walk(&mut |d, u, len| kernels::combine::<T, MaxC>(dest, d, upd, u, len)),
        Reduction::Mean => {
            let mut counts = vec![0u64; hi - lo + 1];
            walk(&mut |d, u, len| {
                kernels::combine::<T, AddC>(dest, d, upd, u, len);
                for c in &mut counts[d - lo..d - lo + len] {
                    *c += 1;
                }
            });
            let extra = u64::from(include_self);
            for (c, x) in counts.iter().zip(&mut dest[lo..=hi]) {
                if *c > 0 {
                    *x = T::mean(*x, *c + extra);
                }
            }
        }
    }
}

/// Signature of an operator's shape-only planner: destination, indices and updates layouts.
pub(crate) type Planner = fn(&Layout, &Layout, &Layout, &ScatterOptions) -> Result<Plan>;

/// Whether f16/bf16 values are promoted to f32 for the whole fold.
fn widens<T: Element>(opts: &ScatterOptions) -> bool {
    opts.accumulation == Accumulation::Wide
        && T::DTYPE != <T::Wide as Element>::DTYPE
        && matches!(
            opts.reduction,
            Reduction::Add | Reduction::Sub | Reduction::Mul | Reduction::Mean
        )
}

/// Whether the parallel strategies cover these options. `mean` and wide f16/bf16
/// accumulation keep per-cell state across the fold and run on the sequential engine.
fn fast_supported<T: Element>(opts: &ScatterOptions) -> bool {
    opts.reduction != Reduction::Mean && !widens::<T>(opts)
}

/// Row-major contiguity (dims of extent 1 may have any stride).
pub(crate) fn is_contiguous(l: &Layout) -> bool {
    let mut expect = 1isize;
    for (&n, &s) in l.shape.iter().zip(&l.strides).rev() {
        if n != 1 && s != expect {
            return false;
        }
        expect = expect.wrapping_mul(n as isize);
    }
    true
}

/// The elements of a contiguous view as one slice, in row-major order.
pub(crate) fn contiguous_data<'a, T>(v: &TensorView<'a, T>) -> Option<&'a [T]> {
    if !is_contiguous(&v.layout) {
        return None;
    }
    let data: &'a [T] = v.data;
    data.get(v.layout.offset..v.layout.offset + v.layout.numel)
}

/// The `(outer, axis, inner)` collapse of a `scatter_elements` call, when all three tensors
/// are contiguous and `indices` matches `data` on every dimension but the axis.
fn elem_geom(dest: &Layout, idx: &Layout, upd: &Layout, axis: usize) -> Option<fast::ElemGeom> {
    if !(is_contiguous(dest) && is_contiguous(idx) && is_contiguous(upd)) {
        return None;
    }
    let same = (0..dest.shape.len()).all(|d| d == axis || idx.shape[d] == dest.shape[d]);
    if !same {
        return None;
    }
    Some(fast::ElemGeom {
        outer: crate::shape::sat_product(&dest.shape[..axis]),
        n: dest.shape[axis],
        k: idx.shape[axis],
        inner: crate::shape::sat_product(&dest.shape[axis + 1..]),
        dest_off: dest.offset,
        idx_off: idx.offset,
        upd_off: upd.offset,
    })
}

/// A plan ready for a fast kernel.
enum Prepared {
    /// Column tiles, staged or not (see [`fast::ElemJob::staged`]); the indices were
    /// range-checked in place (no resolved copy).
    Elem { g: fast::ElemGeom, staged: bool },
    /// One whole-row block (`outer == 1`) folded into scratch, its indices checked by the
    /// fold ([`fast::elem_checked`]), so nothing was checked yet.
    ElemChecked { g: fast::ElemGeom },
    /// One row (`outer == 1`, `inner == 1`) cut into one part per task, each task scanning
    /// every update ([`split::elem_split`]); its indices are checked by the scans, so
    /// nothing was checked yet.
    ElemSplit { g: fast::ElemGeom },
    /// One row (`outer == 1`, `inner == 1`) folded by one task while a second resolves its
    /// indices ahead of it ([`fed::elem_fed`]); the indices are checked by the two, so
    /// nothing was checked yet.
    ElemFed { g: fast::ElemGeom },
    /// Destination blocks fed by buckets; the kernel's first pass checks the indices (before
    /// any write), so nothing was checked yet.
    ElemRadix {
        g: fast::ElemGeom,
        block_cells: usize,
    },
    /// Destination ranges over resolved tuple offsets.
    Ranges(Vec<isize>),
}

/// The largest number of updates the radix kernel buckets at once (its scratch is
/// `4 + size_of::<T>()` bytes per update).
const RADIX_MAX_UPDATES: usize = 1 << 24;

/// Chooses the element-scatter kernel. Random writes into a destination larger than a cache
/// tile would each cost a cache line from memory, and column tiles of a power-of-two-strided
/// matrix thrash the cache sets, so:
/// * *whole-row blocks* when a block of `n * inner` cells fits the tile budget, staged when
///   the copy of `data` is fused into a destination of at least `par::STREAM_MIN_BYTES`;
/// * *staged column tiles* when a tile one cache line wide, all `n` rows of it, fits the tile
///   budget and most of the destination is written anyway (`copying`: the copy of `data` is
///   fused into the kernel; or at least one update per destination line); they move the
///   minimum bytes;
/// * otherwise *buckets* (the radix kernel), which touch only the destination blocks that
///   updates reach, at the price of writing and re-reading every update once more;
/// * plain column tiles where neither applies (an identity fill, or too many updates to
///   bucket at once).
#[allow(clippy::absurd_extreme_comparisons)] // STREAM_MIN_BYTES is 0 in the unit-test build
fn elem_strategy<T>(g: fast::ElemGeom, opts: &ScatterOptions, copying: bool) -> Prepared {
    let size = std::mem::size_of::<T>().max(1);
    let line = crate::par::line_cells::<T>();
    let fill = opts.reduction != Reduction::None && !opts.include_self;
    let total = g.outer.saturating_mul(g.n).saturating_mul(g.inner);
    let count = g.outer.saturating_mul(g.k).saturating_mul(g.inner);
    if g.n.saturating_mul(g.inner).saturating_mul(size) <= crate::par::TILE_BYTES {
        // Whole-row blocks: staged when the copy is fused and the destination is large.
        let staged = copying && total.saturating_mul(size) >= crate::par::STREAM_MIN_BYTES;
        return Prepared::Elem { g, staged };
    }
    let stageable = g.n.saturating_mul(line).saturating_mul(size) <= crate::par::TILE_BYTES;
    let dense = copying || count.saturating_mul(line) >= total;
    if stageable && dense {
        return Prepared::Elem { g, staged: true };
    }
    if fill || count > RADIX_MAX_UPDATES {
        return Prepared::Elem { g, staged: false };
    }
    // About L2-sized blocks, at most ~256 of them (each chunk keeps one bucket per block).
    let small = if crate::par::SMALL_THRESHOLDS {
        4
    } else {
        crate::par::TILE_BYTES / size
    };
    match small.max(total.div_ceil(256)).checked_next_power_of_two() {
        Some(block) if block <= 1 << 32 => Prepared::ElemRadix {
            g,
            block_cells: block,
        },
        _ => Prepared::Elem { g, staged: false },
    }
}

/// Whether an element scatter is one block folded by one task with its indices checked in the
/// fold ([`fast::elem_checked`]): a single block (`outer == 1`) of at most
/// [`par::fold_max_bytes`](crate::par::fold_max_bytes), whose indices take at least as many
/// bytes as the block, unless the element kernel would give every thread its own column
/// tiles ([`fast::column_parallel`]). A separate index pass would read every index once more,
/// and the bucketed kernel writes and re-reads every update; the fold into scratch costs two
/// copies of the block instead, small against the updates. But it runs on one thread, and
/// rows wide enough to cut into column tiles measured faster with the (parallel) index pass
/// and one tile per thread: 2-D f32 add along axis 0, `int64` indices, CLI `--repeat 301`,
/// the binaries before and after alternating process by process, medians in µs, three
/// rounds at 2 threads: `[512, 256]` with 256 update rows 78–125 against 132–227;
/// `[256, 1024]` with 128 rows 235–238 against 420–497; `[1024, 256]` with 1,024 rows
/// 282–285 against 565–574; `[2048, 256]` with 1,024 rows 333–568 against 662–712;
/// `[4096, 64]` with 4,096 rows 379–442 against 546–559. At 1 thread (one round) level.
fn check_in_fold<T, I>(g: fast::ElemGeom, threads: usize) -> bool {
    let block =
        g.n.saturating_mul(g.inner)
            .saturating_mul(std::mem::size_of::<T>());
    g.outer == 1
        && block <= crate::par::fold_max_bytes(threads)
        && g.k
            .saturating_mul(g.inner)
            .saturating_mul(std::mem::size_of::<I>())
            >= block
        && !fast::column_parallel::<T, I>(g, threads)
}

/// Whether the split fold ([`split::elem_split`], one part per thread) takes this scatter:
/// a row both parallel folds could take ([`parallel_row`]) of at most
/// [`par::SPLIT_PART_BYTES`](crate::par::SPLIT_PART_BYTES) per thread, with 2 to
/// [`par::SPLIT_MAX_PARTS`](crate::par::SPLIT_MAX_PARTS) threads. Every task reads every
/// index, and with 8-byte indices that read costs about what halving the updates saves: they
/// are split only above [`par::FED_ANY_ROW_THREADS`](crate::par::FED_ANY_ROW_THREADS)
/// threads and only when the row is too big for the single fold
/// ([`par::fold_max_bytes`](crate::par::fold_max_bytes)); up to that thread count the fed
/// fold ([`fed_fold`]) takes them, which measured faster there.
fn split_fold<T, I>(g: fast::ElemGeom, opts: &ScatterOptions, threads: usize) -> bool {
    let row = g.n.saturating_mul(std::mem::size_of::<T>());
    let fits = row <= threads.saturating_mul(crate::par::SPLIT_PART_BYTES);
    (2..=crate::par::SPLIT_MAX_PARTS).contains(&threads)
        && parallel_row::<T, I>(g, opts)
        && g.n <= split::SPLIT_MAX_CELLS
        && fits
        && (std::mem::size_of::<I>() <= 4
            || (threads > crate::par::FED_ANY_ROW_THREADS
                && row > crate::par::fold_max_bytes(threads)))
}

/// What the split and the fed fold both need: one row (`outer == 1`, `inner == 1`), the
/// `error` out-of-range rule, no identity fill, at least as many index bytes as row bytes
/// (otherwise the row's copies into and out of scratch outweigh the updates), and at least
/// [`par::MIN_PARALLEL_BYTES`](crate::par::MIN_PARALLEL_BYTES) of indices, updates and row to
/// move (below that a parallel call costs more than it saves).
#[allow(clippy::absurd_extreme_comparisons)] // MIN_PARALLEL_BYTES is 0 in the unit-test build
fn parallel_row<T, I>(g: fast::ElemGeom, opts: &ScatterOptions) -> bool {
    let fill = opts.reduction != Reduction::None && !opts.include_self;
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
        && bytes >= crate::par::MIN_PARALLEL_BYTES
}

/// Whether the fed fold ([`fed::elem_fed`]) takes this scatter: at 2 threads or more, a row
/// both parallel folds could take ([`parallel_row`]) of at most [`fed::FED_MAX_CELLS`]
/// cells, either within the single fold's budget ([`check_in_fold`]) or, up to
/// [`par::FED_ANY_ROW_THREADS`](crate::par::FED_ANY_ROW_THREADS) threads, of any size. The
/// split fold, when it applies, comes first (there it takes indices of 4 bytes or less,
/// where it measured faster).
fn fed_fold<T, I>(g: fast::ElemGeom, opts: &ScatterOptions, threads: usize) -> bool {
    threads >= 2
        && parallel_row::<T, I>(g, opts)
        && g.n <= fed::FED_MAX_CELLS
        && (threads <= crate::par::FED_ANY_ROW_THREADS || check_in_fold::<T, I>(g, threads))
}

/// The index pass of the fast strategies.
#[allow(clippy::absurd_extreme_comparisons)] // DEDUP_MIN_CELLS is 0 in the unit-test build
fn prepare<T, I: IndexInt>(
    plan: &Plan,
    dest: &Layout,
    indices: &TensorView<'_, I>,
    upd: &Layout,
    opts: &ScatterOptions,
    copying: bool,
) -> Result<Prepared> {
    if let Some(axis) = plan.elem_axis
        && let Some(g) = elem_geom(dest, &indices.layout, upd, axis)
    {
        if split_fold::<T, I>(g, opts, opts.par.threads()) {
            return Ok(Prepared::ElemSplit { g });
        }
        if fed_fold::<T, I>(g, opts, opts.par.threads()) {
            return Ok(Prepared::ElemFed { g });
        }
        if check_in_fold::<T, I>(g, opts.par.threads()) {
            return Ok(Prepared::ElemChecked { g });
        }
        let p = elem_strategy::<T>(g, opts, copying);
        if let Prepared::Elem { .. } = p {
            validate_flat(plan, indices, opts)?;
        }
        return Ok(p);
    }
    let mut resolved = resolve_indices(plan, indices, opts.index_policy)?;
    let cells_per_tuple = crate::shape::sat_product(&plan.outer_shape)
        .saturating_mul(crate::shape::sat_product(&plan.slice_shape));
    if opts.reduction == Reduction::None && cells_per_tuple >= crate::par::DEDUP_MIN_CELLS {
        drop_overwritten(&mut resolved);
    }
    Ok(Prepared::Ranges(resolved))
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
    let Some((lo, hi)) = fast::rel_range(resolved, SKIP) else {
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

/// Cells per block of the parallel range check.
const CHECK_BLOCK: usize = 1 << 14;

/// The read-only index pass for a contiguous one-component `indices`: a branch-free range
/// test per block, in parallel; the first failing position (in row-major order, whatever the
/// thread count) is described precisely by [`resolve`].
fn validate_flat<I: IndexInt>(
    plan: &Plan,
    indices: &TensorView<'_, I>,
    opts: &ScatterOptions,
) -> Result<()> {
    let comp = &plan.comps[0];
    let l = &indices.layout;
    let Some(flat) = indices.data.get(l.offset..l.offset + l.numel) else {
        return Ok(()); // unreachable for a contiguous view
    };
    let (lo, hi) = accepted_range(comp.size, opts.index_policy);
    let ok = |x: &I| (lo..=hi).contains(&x.to_i64_sat());
    let threads = opts.par.threads();
    let tasks = crate::par::task_count(threads, std::mem::size_of_val(flat), 1);
    let first_bad = std::sync::atomic::AtomicUsize::new(usize::MAX);
    let level = crate::isa::active_level();
    crate::par::run_tasks(threads, tasks, |t| {
        use std::sync::atomic::Ordering::Relaxed;
        let (a, b) = fast::split(flat.len(), tasks, t, 1);
        for start in (a..b).step_by(CHECK_BLOCK) {
            if start > first_bad.load(Relaxed) {
                return; // an earlier failure is already known
            }
            let block = &flat[start..(start + CHECK_BLOCK).min(b)];
            if !kernels::simd::all_in_range(level, block, lo, hi) {
                let j = block.iter().position(|x| !ok(x)).unwrap_or(0);
                first_bad.fetch_min(start + j, Relaxed);
                return;
            }
        }
    });
    match first_bad.into_inner() {
        usize::MAX => Ok(()),
        bad => Err(flat_index_error(plan, indices, bad, opts)),
    }
}

/// The error for the index at flat (row-major) position `bad` of a contiguous `indices`.
fn flat_index_error<I: IndexInt>(
    plan: &Plan,
    indices: &TensorView<'_, I>,
    bad: usize,
    opts: &ScatterOptions,
) -> Error {
    let comp = &plan.comps[0];
    let l = &indices.layout;
    let value = indices.data[l.offset + bad].to_i128();
    let fault = match resolve(value, comp.size, opts.index_policy) {
        Err(f) => f,
        Ok(_) => Fault::OutOfRange, // unreachable: the range test mirrors `resolve`
    };
    let mut position = vec![0; l.shape.len()];
    let mut rest = bad;
    for (p, &n) in position.iter_mut().zip(&l.shape).rev() {
        *p = rest % n.max(1);
        rest /= n.max(1);
    }
    index_error(plan.op, fault, position, value, comp)
}

/// Runs `$body` with `$C` bound to the combiner of reduction `$r` (`mean` never reaches the
/// fast kernels: it keeps per-cell counts and runs on the sequential engine).
macro_rules! with_combiner {
    ($r:expr, $T:ty, $C:ident => $body:expr) => {
        match $r {
            // Other dtypes reach `none` as their bits (`run_out_of_place` and the other
            // drivers), so only the unsigned integers compile its kernels.
            Reduction::None => {
                if const { is_bits::<$T>() } {
                    type $C = Assign;
                    $body
                } else {
                    unreachable!("`none` runs on the bits of the values")
                }
            }
            Reduction::Add => {
                type $C = AddC;
                $body
            }
            Reduction::Sub => {
                type $C = SubC;
                $body
            }
            Reduction::Mul => {
                type $C = MulC;
                $body
            }
            Reduction::Min => {
                type $C = MinC;
                $body
            }
            Reduction::Max => {
                type $C = MaxC;
                $body
            }
            Reduction::Mean => unreachable!("mean runs on the sequential engine"),
        }
    };
}

/// Runs a fast kernel. `src`, when given, is the contiguous `data` whose copy the kernel
/// fuses into its tasks (the destination is then contiguous too).
#[allow(clippy::too_many_arguments)]
fn run_fast<T: Element, I: IndexInt>(
    plan: &Plan,
    prep: &Prepared,
    dest: DestPtr<'_, T>,
    dest_layout: &Layout,
    src: Option<&[T]>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    let threads = opts.par.threads();
    let r = opts.reduction;
    let fill = (r != Reduction::None && !opts.include_self).then(|| T::identity(r));
    let elem_job = |g, fill, staged| fast::ElemJob {
        g,
        idx: indices.data,
        upd: updates.data,
        src,
        policy: opts.index_policy,
        fill,
        staged,
    };
    match prep {
        &Prepared::ElemRadix { g, block_cells } => {
            let job = elem_job(g, None, false);
            let buckets = fast::radix_bucket(&job, block_cells, threads)
                .map_err(|bad| flat_index_error(plan, indices, bad, opts))?;
            with_combiner!(r, T, C => fast::radix_apply::<T, C>(g, &buckets, src, dest, block_cells, threads));
            Ok(())
        }
        &Prepared::ElemChecked { g } => {
            let job = elem_job(g, fill, false);
            // SAFETY: the plan's geometry has outer == 1 and `dest` covers it (`elem_geom`);
            // with `src` absent the destination was initialised by the caller or the copy.
            with_combiner!(r, T, C => unsafe { fast::elem_checked::<T, I, C>(&job, dest) })
                .map_err(|bad| flat_index_error(plan, indices, bad, opts))
        }
        &Prepared::ElemSplit { g } => {
            let job = elem_job(g, None, false);
            // SAFETY: `split_fold` took a single row of at most SPLIT_MAX_CELLS cells under
            // the `Error` out-of-range rule without a fill, and `dest` covers it
            // (`elem_geom`); with `src` absent the destination was initialised by the caller
            // or the copy.
            with_combiner!(r, T, C => unsafe { split::elem_split::<T, I, C>(&job, dest, threads) })
                .map_err(|bad| flat_index_error(plan, indices, bad, opts))
        }
        &Prepared::ElemFed { g } => {
            let job = elem_job(g, None, false);
            // SAFETY: `fed_fold` took a single row of at most FED_MAX_CELLS cells under the
            // `Error` out-of-range rule without a fill, and `dest` covers it (`elem_geom`);
            // with `src` absent the destination was initialised by the caller or the copy.
            with_combiner!(r, T, C => unsafe { fed::elem_fed::<T, I, C>(&job, dest) })
                .map_err(|bad| flat_index_error(plan, indices, bad, opts))
        }
        &Prepared::Elem { g, staged } => {
            let job = elem_job(g, fill, staged);
            with_combiner!(r, T, C => fast::elements::<T, I, C>(&job, dest, threads));
            Ok(())
        }
        Prepared::Ranges(resolved) => {
            let Some((span_lo, span_hi)) = dest_layout.span() else {
                return Ok(()); // an empty destination: nothing to copy or write
            };
            let runs = Runs::new(&plan.slice_shape, &plan.dest_slice, &plan.upd_slice);
            let (mut slice_lo, mut slice_hi) = (0isize, 0isize);
            for (&n, &s) in plan.slice_shape.iter().zip(&plan.dest_slice) {
                let reach = (n as isize).saturating_sub(1).wrapping_mul(s);
                if reach < 0 {
                    slice_lo += reach
                } else {
                    slice_hi += reach
                }
            }
            let job = fast::RangeJob {
                outer_shape: &plan.outer_shape,
                dest_outer: &plan.dest_outer,
                upd_outer: &plan.upd_outer,
                tuple_shape: &plan.tuple_shape,
                upd_tuple: &plan.upd_tuple,
                resolved,
                skip: SKIP,
                rel_range: fast::rel_range(resolved, SKIP),
                run_len: runs.len,
                run_shape: &runs.shape,
                run_dest: &runs.dest,
                run_upd: &runs.upd,
                run_count: if updates.layout.numel == 0 {
                    0
                } else {
                    runs.count
                },
                slice_lo,
                slice_hi,
                dest_base: dest_layout.offset as isize,
                upd_base: updates.layout.offset as isize,
                span_lo,
                span_hi,
                upd: updates.data,
                src,
                fill,
            };
            with_combiner!(r, T, C => fast::ranges::<T, C>(&job, dest, threads));
            Ok(())
        }
    }
}

/// `dest = src`, cell by cell, for two views of one shape.
fn copy_view<T: Copy>(src: &TensorView<'_, T>, dest: &mut [T], dest_layout: &Layout) {
    let mut odo = Odometer::new(
        &dest_layout.shape,
        [&src.layout.strides, &dest_layout.strides],
        [src.layout.offset as isize, dest_layout.offset as isize],
        dest_layout.numel,
    );
    while let Some([s, d]) = odo.next_offsets() {
        dest[d as usize] = src.data[s as usize];
    }
}

/// The index pass alone, for a scatter with no update elements (nothing is written, every
/// index is still checked). Tuples without components (ScatterND with k = 0) have nothing to
/// check, and their count is not bounded by any buffer (indices of shape [2⁴⁰, 0] hold no
/// elements), so they are never materialised; with components, the tuple count is at most the
/// index element count.
fn check_only<I: IndexInt>(
    plan: &Plan,
    indices: &TensorView<'_, I>,
    opts: &ScatterOptions,
) -> Result<()> {
    if !plan.comps.is_empty() {
        resolve_indices(plan, indices, opts.index_policy)?;
    }
    Ok(())
}

/// Validates, then (optionally) copies `copy_from` into `dest` and scatters into it. On error
/// `dest` is untouched.
#[allow(clippy::too_many_arguments)]
fn run_into<T: Element, I: IndexInt>(
    plan: &Plan,
    dest: &mut [T],
    dest_layout: &Layout,
    copy_from: Option<&TensorView<'_, T>>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    if updates.layout.numel == 0 {
        check_only(plan, indices, opts)?;
        if let Some(d) = copy_from {
            copy_view(d, dest, dest_layout);
        }
        return Ok(());
    }
    if fast_supported::<T>(opts) {
        let fused = copy_from
            .filter(|_| is_contiguous(dest_layout))
            .and_then(contiguous_data);
        let prep = prepare::<T, I>(
            plan,
            dest_layout,
            indices,
            &updates.layout,
            opts,
            fused.is_some(),
        )?;
        if let (Some(d), None) = (copy_from, fused) {
            if let Prepared::ElemRadix { .. }
            | Prepared::ElemChecked { .. }
            | Prepared::ElemSplit { .. }
            | Prepared::ElemFed { .. } = prep
            {
                // These kernels check indices as they go; the copy comes earlier.
                validate_flat(plan, indices, opts)?;
            }
            copy_view(d, dest, dest_layout);
        }
        run_fast(
            plan,
            &prep,
            DestPtr::new(dest),
            dest_layout,
            fused,
            indices,
            updates,
            opts,
        )?;
    } else {
        let resolved = resolve_indices(plan, indices, opts.index_policy)?;
        if let Some(d) = copy_from {
            copy_view(d, dest, dest_layout);
        }
        execute(
            plan,
            &resolved,
            dest,
            dest_layout,
            updates.data,
            &updates.layout,
            opts,
        );
    }
    Ok(())
}

/// Out-of-place driver: validate everything, then build the output. With contiguous `data`
/// the copy is fused into the kernel's tasks and written straight into fresh memory.
pub(crate) fn run_out_of_place<T: Element, I: IndexInt>(
    op: &'static str,
    planner: Planner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<Tensor<T>> {
    if const { !is_bits::<T>() } && opts.reduction == Reduction::None {
        let (data, updates) = (kernels::bits_view(data), kernels::bits_view(updates));
        let out = run_out_of_place(op, planner, &data, indices, &updates, opts)?;
        // SAFETY: `none` writes only bits read from `data` and `updates`, which are `T`s.
        let data = unsafe { kernels::vec_from_bits::<T>(out.data) };
        return Ok(Tensor {
            data,
            shape: out.shape,
        });
    }
    with_native_indices!(op, indices, idx => out_of_place(op, planner, data, idx, updates, opts))
}

fn out_of_place<T: Element, I: IndexInt>(
    op: &'static str,
    planner: Planner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<Tensor<T>> {
    opts.reduction.check_for::<T>(op)?;
    let dest_layout = Layout::contiguous_unchecked(&data.layout.shape, data.layout.numel);
    let plan = planner(&dest_layout, &indices.layout, &updates.layout, opts)?;
    if fast_supported::<T>(opts)
        && updates.layout.numel > 0
        && let Some(src) = contiguous_data(data)
    {
        let prep = prepare::<T, I>(&plan, &dest_layout, indices, &updates.layout, opts, true)?;
        // SAFETY: with `src` given, every fast kernel that returns Ok copied every cell of the
        // contiguous destination (tiles, blocks and ranges each partition all of it) before
        // updating it.
        let out = unsafe {
            kernels::build_vec(
                dest_layout.numel,
                |bytes| Error::out_of_memory(op, "output", bytes),
                |dest| {
                    run_fast(
                        &plan,
                        &prep,
                        dest,
                        &dest_layout,
                        Some(src),
                        indices,
                        updates,
                        opts,
                    )
                },
            )
        }?;
        return Ok(Tensor {
            data: out,
            shape: data.layout.shape.clone(),
        });
    }
    let mut out = data.to_tensor();
    run_into(
        &plan,
        &mut out.data,
        &dest_layout,
        None,
        indices,
        updates,
        opts,
    )?;
    Ok(out)
}

/// Caller-provided output driver: `out = data`, then scatter into `out`, with the copy fused
/// into the kernel when both are contiguous. On error `out` is untouched.
pub(crate) fn run_out<T: Element, I: IndexInt>(
    op: &'static str,
    planner: Planner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    out: &mut TensorViewMut<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    if const { !is_bits::<T>() } && opts.reduction == Reduction::None {
        let (data, updates) = (kernels::bits_view(data), kernels::bits_view(updates));
        // SAFETY: `none` writes only bits read from `data` and `updates`, which are `T`s.
        let mut out = unsafe { kernels::bits_view_mut(out) };
        return run_out(op, planner, &data, indices, &updates, &mut out, opts);
    }
    with_native_indices!(op, indices, idx => out_into(op, planner, data, idx, updates, out, opts))
}

fn out_into<T: Element, I: IndexInt>(
    op: &'static str,
    planner: Planner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    out: &mut TensorViewMut<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    opts.reduction.check_for::<T>(op)?;
    if out.layout.shape != data.layout.shape {
        return Err(Error::shape(
            op,
            "out",
            format!("the shape of data {}", shape_text(&data.layout.shape)),
            &out.layout.shape,
        ));
    }
    let plan = planner(&out.layout, &indices.layout, &updates.layout, opts)?;
    run_into(
        &plan,
        out.data,
        &out.layout,
        Some(data),
        indices,
        updates,
        opts,
    )
}

/// In-place driver: validate everything, then scatter into `dest`. On error `dest` is untouched.
pub(crate) fn run_in_place<T: Element, I: IndexInt>(
    op: &'static str,
    planner: Planner,
    dest: &mut TensorViewMut<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    if const { !is_bits::<T>() } && opts.reduction == Reduction::None {
        // SAFETY: `none` writes only bits read from `updates`, which are `T`s.
        let mut dest = unsafe { kernels::bits_view_mut(dest) };
        let updates = kernels::bits_view(updates);
        return run_in_place(op, planner, &mut dest, indices, &updates, opts);
    }
    with_native_indices!(op, indices, idx => in_place(op, planner, dest, idx, updates, opts))
}

fn in_place<T: Element, I: IndexInt>(
    op: &'static str,
    planner: Planner,
    dest: &mut TensorViewMut<'_, T>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    opts.reduction.check_for::<T>(op)?;
    let plan = planner(&dest.layout, &indices.layout, &updates.layout, opts)?;
    run_into(&plan, dest.data, &dest.layout, None, indices, updates, opts)
}

/// Formats a shape rule for error messages.
pub(crate) fn shape_text(shape: &[usize]) -> String {
    format!("{shape:?}")
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
