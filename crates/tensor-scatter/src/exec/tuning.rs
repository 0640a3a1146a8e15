//! Every tuning constant of the engine, one line each. Results never depend on them, only
//! speed does; why each has its value is in DESIGN.md, the measurements in `record/`.

#[cfg(feature = "parallel")]
use std::time::Duration;

/// Whether the thresholds take their small values, so that small inputs go through every
/// parallel split, tile, stage and ring: in the unit tests and in builds made with
/// `RUSTFLAGS="--cfg tensor_scatter_small_thresholds"` (never for production builds).
pub(crate) const SMALL_THRESHOLDS: bool = cfg!(any(test, tensor_scatter_small_thresholds));

/// Work below this many bytes of traffic runs on the calling thread.
pub(crate) const MIN_PARALLEL_BYTES: usize = if SMALL_THRESHOLDS { 0 } else { 1 << 18 };

/// The fewest bytes a task of a parallel kernel moves.
pub(crate) const MIN_TASK_BYTES: usize = if SMALL_THRESHOLDS { 1 } else { 1 << 16 };

/// A destination tile of the element scatter fits in this many bytes (stays in L2).
pub(crate) const TILE_BYTES: usize = if SMALL_THRESHOLDS { 16 } else { 1 << 20 };

/// The single fold's block budget, divided by the thread count ([`fold_max_bytes`]).
pub(crate) const FOLD_BUDGET_BYTES: usize = if SMALL_THRESHOLDS { 64 } else { 4 << 20 };

/// The largest row part per thread the split fold takes.
pub(crate) const SPLIT_PART_BYTES: usize = if SMALL_THRESHOLDS { 64 } else { 2 << 20 };

/// The most parts the split fold cuts a row into (every part reads every index).
pub(crate) const SPLIT_MAX_PARTS: usize = 4;

/// Up to this many threads the fed fold takes single rows of any size.
pub(crate) const FED_ANY_ROW_THREADS: usize = 2;

/// A fused whole-row element scatter is staged and streamed out from this many bytes.
pub(crate) const STREAM_MIN_BYTES: usize = if SMALL_THRESHOLDS { 0 } else { 8 << 20 };

/// A slice scatter's task copies its range from `data` with streaming stores from this size.
pub(crate) const RANGE_STREAM_MIN_BYTES: usize = if SMALL_THRESHOLDS { 64 } else { 8 << 20 };

/// Slice scatters with `none` drop overwritten tuples when each moves this many cells.
pub(crate) const DEDUP_MIN_CELLS: usize = if SMALL_THRESHOLDS { 0 } else { 512 };

/// A scatter whose every index moves a run of at least this many contiguous cells runs on the
/// row fold (`scatter::rows`); narrower runs take the element kernels.
pub(crate) const ROWS_MIN_WIDTH: usize = 2;

/// The fewest updates per destination row for which the row fold beats the slice kernel in
/// place (it visits every row); [`ROWS_MIN_DENSITY_COPY`] when `data` is copied too.
pub(crate) const ROWS_MIN_DENSITY: usize = 1;

/// [`ROWS_MIN_DENSITY`] for the forms that copy `data` (the slice kernel streams the copy).
pub(crate) const ROWS_MIN_DENSITY_COPY: usize = if SMALL_THRESHOLDS { 1 } else { 4 };

/// Bytes per cache line, the alignment of task boundaries ([`line_cells`]).
const LINE_BYTES: usize = if SMALL_THRESHOLDS { 4 } else { 64 };

/// Index values per block of the parallel range test (times the tuple length).
pub(crate) const CHECK_BLOCK: usize = if SMALL_THRESHOLDS { 1 << 4 } else { 1 << 14 };

/// Tasks per thread the column-tile kernel cuts a parallel scatter into, when the work allows.
pub(crate) const ELEM_TASKS_PER_THREAD: usize = 4;

/// Update rows the staged column-tile kernel prefetches ahead.
pub(crate) const STAGE_PREFETCH_ROWS: usize = 2;

/// The most staging buffers kept between calls.
pub(crate) const STAGE_POOL_MAX: usize = 16;

/// The most bytes of staging buffers kept between calls.
pub(crate) const STAGE_POOL_MAX_BYTES: usize = 64 << 20;

/// The most updates the radix kernel buckets at once.
pub(crate) const RADIX_MAX_UPDATES: usize = 1 << 24;

/// The most destination blocks the radix kernel cuts a destination into.
pub(crate) const RADIX_MAX_BLOCKS: usize = 256;

/// The smallest radix block, in cells of `T` (about a tile).
pub(crate) fn radix_min_block<T>() -> usize {
    if SMALL_THRESHOLDS {
        4
    } else {
        TILE_BYTES / std::mem::size_of::<T>().max(1)
    }
}

/// The most bucket memory kept between calls.
pub(crate) const RADIX_SCRATCH_MAX_BYTES: usize = 256 << 20;

/// Updates per chunk of the fed fold's ring.
pub(crate) const FED_CHUNK: usize = if SMALL_THRESHOLDS { 3 } else { 8192 };

/// Chunks the fed fold's ring holds (how far the feeder may run ahead).
pub(crate) const FED_RING: usize = if SMALL_THRESHOLDS { 2 } else { 8 };

/// Updates the split fold scans per batch (their positions stay in L1).
pub(crate) const SPLIT_BATCH: usize = 1024;

/// Tuples ahead whose slices the slice scatter prefetches.
pub(crate) const TUPLE_LOOKAHEAD: usize = 8;

/// Rows the segment fold prefetches ahead when it reads `src` in index order (unsorted).
pub(crate) const SEGMENT_PREFETCH_ROWS: usize = 16;

/// Positions ahead whose slot the counting sort asks for before it writes there: its writes
/// land at random in an order of megabytes, and each waits on memory. 16 ahead made the
/// unsorted sum of 64 f32 1-2% faster, 160 another 6% (64: 3-5%, 256: 5-7%, 400: 2-6%; no
/// change at 10^3 or 10^6 destinations): record/2026-11-27-unchecked-rows.md.
pub(crate) const SORT_PREFETCH: usize = 160;

/// The longest lane whose counting sort orders its positions as `u32` (half the bytes of a
/// `usize` order); longer lanes use `usize`.
pub(crate) const NARROW_ORDER_MAX: usize = if SMALL_THRESHOLDS {
    2
} else {
    u32::MAX as usize
};

/// Bytes ahead the segment fold prefetches when it reads rows of 64 bytes or more in
/// sequence (sorted or CSR input).
pub(crate) const RUN_PREFETCH_BYTES: usize = 4096;

/// Rows the slice gather prefetches ahead.
pub(crate) const GATHER_PREFETCH_ROWS: usize = 16;

/// Gathered rows up to this many bytes take the narrow-row kernel.
pub(crate) const NARROW_ROW_BYTES: usize = 64;

/// The most tuples whose offsets the narrow-row gather resolves at once.
pub(crate) const NARROW_MAX_TUPLES: usize = 1 << 16;

/// Rows up to this many bytes are copied by an inlined loop, longer ones by `memcpy`.
pub(crate) const INLINE_ROW_BYTES: usize = 1024;

/// How long an idle helper thread spins for the next call before it sleeps.
#[cfg(feature = "parallel")]
pub(crate) const HELPER_SPIN: Duration = Duration::from_micros(200);

/// How long a caller done with its own tasks spins for the helpers' before it sleeps.
#[cfg(feature = "parallel")]
pub(crate) const CALLER_SPIN: Duration = Duration::from_micros(20);

/// The most helper threads started (more threads run their tasks on these).
#[cfg(feature = "parallel")]
pub(crate) const MAX_HELPERS: usize = 255;

/// The largest block folded by one task at `threads` threads.
pub(crate) fn fold_max_bytes(threads: usize) -> usize {
    (FOLD_BUDGET_BYTES / threads.max(1)).max(TILE_BYTES)
}

/// Cells of `T` per cache line.
pub(crate) fn line_cells<T>() -> usize {
    (LINE_BYTES / std::mem::size_of::<T>().max(1)).max(1)
}

/// Bytes of rows (whole lines) in one piece of the min/max-with-positions fold: half of L1,
/// so that the scan that finds each moved cell's row reads them from cache.
pub(crate) const ARG_RESCAN_BYTES: usize = 16 << 10;

/// The most rows in one piece of the min/max-with-positions fold, whose marks are `u32`
/// (`u32::MAX` marks a cell no row matched). The rescan's pieces (unsorted rows) are
/// smaller still, about 16 KiB of rows; the small value lets the unit tests cut short
/// segments into several pieces.
pub(crate) const ARG_CHUNK_ROWS: usize = if SMALL_THRESHOLDS {
    3
} else {
    u32::MAX as usize - 1
};
