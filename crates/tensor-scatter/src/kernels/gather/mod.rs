//! The gather kernels. They run after the plan and the index pass, over contiguous `data`,
//! contiguous `indices` and a contiguous destination, and cannot fail.
//!
//! Data movement is dispatched by byte width: every dtype is moved as the unsigned integer of
//! its size ([`BitsOf`](crate::dtype::BitsOf)), so f16, bf16, i16 and u16 share one 2-byte kernel, and so on. Each
//! parallel task owns a contiguous range of the output, so the result does not depend on the
//! thread count.

pub(crate) mod strided;

use super::{DestPtr, prefetch, read};
use crate::dtype::Element;
use crate::exec::Ctx;
use crate::exec::tuning::{
    GATHER_PREFETCH_ROWS as PREFETCH_ROWS, INLINE_ROW_BYTES, NARROW_MAX_TUPLES, NARROW_ROW_BYTES,
};
use crate::index::{IndexInt, IndexPolicy, resolve_accepted};

/// A component of an index tuple: the size of the data dimension it addresses and that
/// dimension's stride in the contiguous `data`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Comp {
    pub(crate) size: usize,
    pub(crate) stride: usize,
}

/// Whole-slice gathers (`gather`, `gather_nd`): the output is `rows` rows of `slice`
/// contiguous elements, row `r = l * tuple_n + t` for lead coordinate `l` (batch and outer
/// dims, flattened) and tuple `t`. Row `r` copies `data[l * lead_data + Σ p_j * stride_j ..]`,
/// `p_j` resolved from `indices[((l / batch_div) * tuple_n + t) * k + j]`.
#[derive(Clone, Debug)]
pub(crate) struct SliceGeom {
    pub(crate) lead_n: usize,
    pub(crate) tuple_n: usize,
    pub(crate) batch_div: usize,
    pub(crate) lead_data: usize,
    pub(crate) comps: Vec<Comp>,
    pub(crate) slice: usize,
}

/// Element gathers (`gather_elements`): the output has the shape of `indices`; element at
/// coordinate `c` reads `data[Σ_{d != axis} c[d] * strides[d] + p * strides[axis]]`.
#[derive(Clone, Debug)]
pub(crate) struct ElementsGeom {
    pub(crate) shape: Vec<usize>,
    /// Contiguous strides of `data`.
    pub(crate) data_strides: Vec<usize>,
    pub(crate) axis: usize,
    pub(crate) axis_size: usize,
}

/// The geometry of one validated gather.
#[derive(Clone, Debug)]
pub(crate) enum Geom {
    Slices(SliceGeom),
    Elements(ElementsGeom),
}

/// The inputs of one kernel run, moved as `U`.
pub(crate) struct Job<'a, U, I> {
    pub(crate) data: &'a [U],
    pub(crate) idx: &'a [I],
    pub(crate) policy: IndexPolicy,
    pub(crate) fill: U,
    /// The threads, and the instruction-set level the multiversioned loops run at.
    pub(crate) cx: Ctx,
}

/// Runs the gather of `geom` into the `n` cells of `dest`, writing every one of them.
pub(crate) fn run<U: Element, I: IndexInt>(
    geom: &Geom,
    job: &Job<'_, U, I>,
    dest: DestPtr<'_, U>,
    n: usize,
) {
    match geom {
        Geom::Slices(g) => slices(g, job, dest),
        Geom::Elements(g) => elements(g, job, dest, n),
    }
}

/// Lines of the next contiguous data row (or block) of `bytes` to prefetch while the current
/// one is read at random cells: all of them for rows of 4 KiB to 64 KiB, none otherwise.
fn next_row_lines(bytes: usize) -> usize {
    if (1 << 12..=1 << 16).contains(&bytes) {
        bytes / 64
    } else {
        0
    }
}

/// How many of a next row's `pf` lines are asked for once `c` of the current row's `m`
/// elements are done: `ceil(c * pf / m)`, so the prefetches spread evenly over the row.
fn lines_before(c: usize, pf: usize, m: usize) -> usize {
    ((c as u128 * pf as u128).div_ceil(m.max(1) as u128) as usize).min(pf)
}

/// Data offset that marks a filled slice in [`narrow_rows`] and [`gather_cells`].
const NONE: usize = usize::MAX;

/// The accepted-index resolver of `policy`, specialised for the default policy (every
/// accepted value is in `[-s, s)` and wraps once), so the hot loops carry no policy match.
macro_rules! with_resolver {
    ($policy:expr, $r:ident => $body:expr) => {
        if $policy.out_of_range == crate::index::OutOfRange::Error {
            let $r = |v: i64, s: usize| {
                Some(if v < 0 {
                    (v + s as i64) as usize
                } else {
                    v as usize
                })
            };
            $body
        } else {
            let policy = $policy;
            let $r = move |v: i64, s: usize| resolve_accepted(v, s, policy);
            $body
        }
    };
}

fn slices<U: Element, I: IndexInt>(g: &SliceGeom, job: &Job<'_, U, I>, dest: DestPtr<'_, U>) {
    with_resolver!(job.policy, r => slices_with(g, job, dest, r))
}

fn slices_with<U: Element, I: IndexInt>(
    g: &SliceGeom,
    job: &Job<'_, U, I>,
    dest: DestPtr<'_, U>,
    resolve: impl Fn(i64, usize) -> Option<usize> + Copy + Sync,
) {
    let rows = g.lead_n * g.tuple_n;
    if rows == 0 {
        return;
    }
    let k = g.comps.len();
    let bytes = rows * (g.slice * std::mem::size_of::<U>() + k * std::mem::size_of::<I>());
    let tasks = job.cx.tasks(bytes, 4).min(rows);
    let level = job.cx.level;
    // Narrow slices whose index list several lead rows share (`index_select` on an inner
    // axis) take `narrow_rows`: the general loop's per-row work (a cursor step, an index read
    // and resolve, a call to copy a few bytes) costs more than the bytes it moves.
    let narrow = k == 1
        && g.slice * std::mem::size_of::<U>() < NARROW_ROW_BYTES
        && g.batch_div >= 2
        && g.tuple_n <= NARROW_MAX_TUPLES
        && g.lead_data > 0; // an empty axis: every slice is filled, and no cell can be read
    job.cx.run(tasks, |task| {
        let (r0, r1) = crate::shape::part(rows, tasks, task, 1);
        if narrow {
            narrow_rows(level, g, job, dest, r0, r1, resolve);
        } else {
            slice_rows(level, g, job, dest, r0, r1, resolve);
        }
    });
}

super::simd::multiversion! {
    /// Rows `[r0, r1)` of a narrow-slice gather with one index component: each batch's
    /// index list is resolved once into data offsets, then every lead row of the batch
    /// copies its slices through them ([`gather_cells`] for one-cell slices). While a lead's
    /// data block is read at random positions, the next lead's block of 4 to 64 KiB is
    /// prefetched, a few lines per block of slices, so those reads hit cache.
    fn narrow_rows<U: Element, I: IndexInt, R: Fn(i64, usize) -> Option<usize>>(
        g: &SliceGeom,
        job: &Job<'_, U, I>,
        dest: DestPtr<'_, U>,
        r0: usize,
        r1: usize,
        resolve: R,
    ) -> () {
        let (tn, slice, c) = (g.tuple_n, g.slice, g.comps[0]);
        let pf_lines = next_row_lines(g.lead_data * std::mem::size_of::<U>());
        // Data offset of each tuple of batch `batch_of` (`NONE` for a filled slice).
        let mut offs: Vec<usize> = Vec::with_capacity(tn);
        let mut batch_of = usize::MAX;
        let mut r = r0;
        while r < r1 {
            let (l, t0) = (r / tn, r % tn);
            let t1 = tn.min(t0 + (r1 - r));
            let batch = l / g.batch_div;
            if batch != batch_of {
                offs.clear();
                offs.extend(job.idx[batch * tn..(batch + 1) * tn].iter().map(|x| {
                    resolve(x.to_i64_sat(), c.size).map_or(NONE, |p| p * c.stride)
                }));
                batch_of = batch;
            }
            let base = l * g.lead_data;
            let pf = if l + 1 < g.lead_n { pf_lines } else { 0 };
            let o = l * tn * slice; // output cell of (l, 0)
            let mut line = lines_before(t0, pf, tn);
            let mut t = t0;
            while t < t1 {
                let e = (t + ELEM_BLOCK).min(t1);
                while line < lines_before(e, pf, tn) {
                    let cell = base + g.lead_data + line * LINE_CELLS::<U>();
                    prefetch(job.data.as_ptr().wrapping_add(cell), 1);
                    line += 1;
                }
                if slice == 1 {
                    // SAFETY: rows [l * tn + t, l * tn + e) are in [r0, r1): this task's; an
                    // offset `p * stride` has `p < size` accepted by the index pass and
                    // `l < lead_n`, so `base + off < lead_n * lead_data = data.len()`.
                    unsafe { gather_cells(job.data, &offs[t..e], dest, o + t, base, job.fill) };
                } else {
                    for (tt, &off) in offs[t..e].iter().enumerate() {
                        // `then`, not `then_some`: `base + NONE` would overflow.
                        let row = (off != NONE).then(|| base + off);
                        // SAFETY: row `l * tn + t + tt` is in [r0, r1), so its cells belong to
                        // this task alone and lie inside the `rows * slice` output cells.
                        unsafe { put_row(dest, job, o + (t + tt) * slice, slice, row) };
                    }
                }
                t = e;
            }
            r += t1 - t0;
        }
    }
}

/// `dest[o + j] = data[base + offs[j]]`, or `fill` where `offs[j]` is [`NONE`]: the
/// one-cell case of [`narrow_rows`], branch-free and with `data` a `noalias` argument so that
/// it becomes a vector gather.
///
/// # Safety
/// Cells `[o, o + offs.len())` of `dest` belong to the caller's task alone, and every offset
/// other than [`NONE`] is below `data.len() - base` (`base < data.len()`).
#[inline(always)]
unsafe fn gather_cells<U: Element>(
    data: &[U],
    offs: &[usize],
    dest: DestPtr<'_, U>,
    o: usize,
    base: usize,
    fill: U,
) {
    for (j, &off) in offs.iter().enumerate() {
        // A filled cell reads the block's first cell and drops it.
        let at = if off == NONE { 0 } else { off };
        // SAFETY: `base + at` is in `data` (contract).
        let x = unsafe { read(data, base + at) };
        let v = if off == NONE { fill } else { x };
        // SAFETY: the cell is the caller's (contract).
        unsafe { dest.set(o + j, v) };
    }
}

super::simd::multiversion! {
    /// Rows `[r0, r1)` of the slice kernel (one task's share).
    fn slice_rows<U: Element, I: IndexInt, R: Fn(i64, usize) -> Option<usize>>(
        g: &SliceGeom,
        job: &Job<'_, U, I>,
        dest: DestPtr<'_, U>,
        r0: usize,
        r1: usize,
        resolve: R,
    ) -> () {
        let k = g.comps.len();
        let row_bytes = g.slice * std::mem::size_of::<U>();
        if k == 1 && g.lead_n == 1 && g.slice == 1 && !job.data.is_empty() {
            // One cell per index, no leading dims (`np.take` of a 1-D array): row r reads
            // index r; each block's offsets are resolved, then copied branch-free (an empty
            // table, where every cell is filled, takes the general loop: no cell to read).
            let c = g.comps[0];
            let mut offs = [NONE; ELEM_BLOCK];
            let mut r = r0;
            while r < r1 {
                let e = (r + ELEM_BLOCK).min(r1);
                for (o, x) in offs.iter_mut().zip(&job.idx[r..e]) {
                    *o = resolve(x.to_i64_sat(), c.size).map_or(NONE, |p| p * c.stride);
                }
                // SAFETY: cells [r, e) are in [r0, r1), this task's alone, inside `dest`;
                // an offset `p * stride` has `p < size` accepted by the index pass, so it
                // is inside `data` (base 0: there are no leading dims).
                unsafe { gather_cells(job.data, &offs[..e - r], dest, r, 0, job.fill) };
                r = e;
            }
            return;
        }
        if k == 1 && g.lead_n == 1 && g.slice >= crate::exec::tuning::line_cells::<U>() {
            // One axis, no leading dims, rows of at least a cache line (an embedding lookup):
            // row r reads index r, so a tight loop without the cursor and ring keeps more
            // rows in flight. (A line is 4 bytes in the unit-test build, so the property
            // tests reach this loop too.)
            let c = g.comps[0];
            let row_of = |r: usize| resolve(job.idx[r].to_i64_sat(), c.size).map(|p| p * c.stride);
            for r in r0..r1 {
                if r + PREFETCH_ROWS < r1
                    && let Some(off) = row_of(r + PREFETCH_ROWS)
                {
                    prefetch(job.data.as_ptr().wrapping_add(off), row_bytes);
                }
                // SAFETY: rows [r0, r1) and so cells [r0 * slice, r1 * slice) belong to this
                // task alone, and lie inside the `rows * slice` cells of `dest`.
                unsafe { put_row(dest, job, r * g.slice, g.slice, row_of(r)) };
            }
            return;
        }
        // The data offset of the tuple at cursor `c`, or None for a filled slice.
        let offset = |c: &Cursor| {
            let ib = (c.batch * g.tuple_n + c.t) * k;
            let mut off = Some(c.l * g.lead_data);
            for (j, c) in g.comps.iter().enumerate() {
                match (resolve(job.idx[ib + j].to_i64_sat(), c.size), off) {
                    (Some(p), Some(o)) => off = Some(o + p * c.stride),
                    _ => off = None,
                }
            }
            off
        };
        let ahead = k == 1 && row_bytes >= 64;
        // Offsets are resolved PREFETCH_ROWS rows ahead (and their rows prefetched), kept in
        // a ring until their row is copied: one index read per row.
        let mut ring = [None; PREFETCH_ROWS];
        let mut pre = Cursor::at(r0, g);
        let mut ahead_of = |r: usize, ring: &mut [Option<usize>; PREFETCH_ROWS]| {
            let off = offset(&pre);
            if let (true, Some(o)) = (ahead, off) {
                prefetch(job.data.as_ptr().wrapping_add(o), row_bytes);
            }
            ring[r % PREFETCH_ROWS] = off;
            pre.step(g);
        };
        for r in r0..(r0 + PREFETCH_ROWS).min(r1) {
            ahead_of(r, &mut ring);
        }
        for r in r0..r1 {
            let off = ring[r % PREFETCH_ROWS];
            if r + PREFETCH_ROWS < r1 {
                ahead_of(r + PREFETCH_ROWS, &mut ring);
            }
            // SAFETY: rows [r0, r1) and so cells [r0 * slice, r1 * slice) belong to this task
            // alone, and lie inside the `rows * slice` cells of `dest`.
            unsafe { put_row(dest, job, r * g.slice, g.slice, off) };
        }
    }
}

/// Writes output cells `[o, o + slice)`: the data row at `off`, or the fill value for `None`.
/// Inlined into each instruction-set version of the slice loops.
///
/// # Safety
/// Cells `[o, o + slice)` lie inside `dest` and belong to the calling task alone.
#[inline(always)]
unsafe fn put_row<U: Element, I>(
    dest: DestPtr<'_, U>,
    job: &Job<'_, U, I>,
    o: usize,
    slice: usize,
    off: Option<usize>,
) {
    match off {
        None => {
            for i in o..o + slice {
                // SAFETY: cell i is in [o, o + slice): inside `dest`, ours (contract).
                unsafe { dest.set(i, job.fill) };
            }
        }
        // SAFETY: as above (one cell).
        Some(off) if slice == 1 => unsafe { dest.set(o, job.data[off]) },
        Some(off) if slice * std::mem::size_of::<U>() <= INLINE_ROW_BYTES => {
            for (i, &v) in job.data[off..off + slice].iter().enumerate() {
                // SAFETY: as above.
                unsafe { dest.set(o + i, v) };
            }
        }
        // SAFETY: as above; `job.data` is a shared borrow distinct from `dest`.
        Some(off) => unsafe { dest.copy_in(o, &job.data[off..off + slice]) },
    }
}

/// A row position of the slice kernel: lead `l`, tuple `t`, and the batch `l / batch_div`
/// with its remainder, all advanced without a division per row.
struct Cursor {
    l: usize,
    t: usize,
    batch: usize,
    rem: usize,
}

impl Cursor {
    fn at(r: usize, g: &SliceGeom) -> Cursor {
        let l = r / g.tuple_n;
        Cursor {
            l,
            t: r % g.tuple_n,
            batch: l / g.batch_div.max(1),
            rem: l % g.batch_div.max(1),
        }
    }

    #[inline(always)]
    fn step(&mut self, g: &SliceGeom) {
        self.t += 1;
        if self.t == g.tuple_n {
            self.t = 0;
            self.l += 1;
            self.rem += 1;
            if self.rem == g.batch_div {
                self.rem = 0;
                self.batch += 1;
            }
        }
    }
}

fn elements<U: Element, I: IndexInt>(
    g: &ElementsGeom,
    job: &Job<'_, U, I>,
    dest: DestPtr<'_, U>,
    n: usize,
) {
    with_resolver!(job.policy, r => elements_with(g, job, dest, n, r))
}

fn elements_with<U: Element, I: IndexInt>(
    g: &ElementsGeom,
    job: &Job<'_, U, I>,
    dest: DestPtr<'_, U>,
    n: usize,
    resolve: impl Fn(i64, usize) -> Option<usize> + Copy + Sync,
) {
    let Some((&m, outer)) = g.shape.split_last() else {
        return;
    };
    if n == 0 {
        return;
    }
    let last = outer.len();
    // Within a row the data position moves by `step` per element, plus the axis term.
    let step = if g.axis == last {
        0
    } else {
        g.data_strides[last]
    };
    let bytes = n * (std::mem::size_of::<U>() + std::mem::size_of::<I>());
    let tasks = job.cx.tasks(bytes, 4).min(n);
    // Lines of the next data row to prefetch per row (0: no prefetch): only along the last
    // axis (the data row is contiguous), for rows of 4 KiB to 64 KiB.
    let pf_lines = if g.axis == last {
        next_row_lines(g.axis_size * std::mem::size_of::<U>())
    } else {
        0
    };
    let row = Row {
        step,
        sa: g.data_strides[g.axis],
        size: g.axis_size,
        fill: job.fill,
        m,
        pf_lines,
    };
    let level = job.cx.level;
    job.cx.run(tasks, |task| {
        let (e0, e1) = crate::shape::part(n, tasks, task, 1);
        // The row coordinate of e0 and the data offset of its non-axis dims.
        let mut coord = vec![0usize; last];
        let mut rest = e0 / m;
        let mut base = 0usize;
        for d in (0..last).rev() {
            coord[d] = rest % outer[d];
            rest /= outer[d];
            if d != g.axis {
                base += coord[d] * g.data_strides[d];
            }
        }
        let advance = |coord: &mut [usize], base: &mut usize| {
            for d in (0..last).rev() {
                coord[d] += 1;
                if d != g.axis {
                    *base += g.data_strides[d];
                }
                if coord[d] < outer[d] {
                    break;
                }
                if d != g.axis {
                    *base -= outer[d] * g.data_strides[d];
                }
                coord[d] = 0;
            }
        };
        let mut e = e0;
        let mut col = e0 % m;
        while e < e1 {
            let end = (e + (m - col)).min(e1);
            // Along the last axis each row reads random cells of one contiguous data row:
            // the next data row streams into cache while this one is gathered (one line
            // every `every` elements), so the random reads hit cache instead of memory.
            let mut next = (coord.clone(), base);
            if pf_lines > 0 {
                advance(&mut next.0, &mut next.1);
            }
            gather_row(
                level,
                &job.idx[e..end],
                job.data,
                dest,
                e,
                col,
                base,
                next.1,
                &row,
                resolve,
            );
            e = end;
            col = 0;
            advance(&mut coord, &mut base);
        }
    });
}

/// The per-row constants of the element kernel.
struct Row<U> {
    step: usize,
    sa: usize,
    size: usize,
    fill: U,
    /// Elements per output row.
    m: usize,
    /// Lines of the next data row to prefetch over one output row (0: none).
    pf_lines: usize,
}

/// Elements gathered between two prefetch points of the element kernel: long enough for the
/// inner loop to vectorise (AVX-512 gathers 8 or 16 lanes at a time), short enough to spread
/// the next row's prefetches over the row.
const ELEM_BLOCK: usize = 64;

super::simd::multiversion! {
    /// One row segment of the element kernel: `dest[i0 + j] = data[base + (c0 + j) * step +
    /// p * sa]` for `p` resolved from `idx[j]`, prefetching the next row from `next_base`. A
    /// function of its own so that the slices are `noalias` arguments and stay in registers,
    /// and multiversioned (see [`simd`](super::simd)) so that its inner loop becomes vector
    /// gathers.
    fn gather_row<U: Element, I: IndexInt, R: Fn(i64, usize) -> Option<usize>>(
        idx: &[I],
        data: &[U],
        dest: DestPtr<'_, U>,
        i0: usize,
        c0: usize,
        base: usize,
        next_base: usize,
        row: &Row<U>,
        resolve: R,
    ) -> () {
        let (step, sa, size, fill) = (row.step, row.sa, row.size, row.fill);
        // The next row's lines are spread evenly over this row's elements: before the block
        // ending at column `c`, lines up to `ceil(c * pf_lines / m)` have been asked for.
        let lines_by = |c: usize| lines_before(c, row.pf_lines, row.m);
        let mut line = lines_by(c0);
        let mut j = 0;
        while j < idx.len() {
            let e = (j + ELEM_BLOCK).min(idx.len());
            let upto = lines_by(c0 + e);
            while line < upto {
                let cell = next_base + line * LINE_CELLS::<U>();
                prefetch(data.as_ptr().wrapping_add(cell), 1);
                line += 1;
            }
            for (jj, &x) in idx[j..e].iter().enumerate() {
                let c = c0 + j + jj;
                let v = match resolve(x.to_i64_sat(), size) {
                    // SAFETY: the index pass accepted `x`, so `p < size` and the position
                    // lies inside `data` (the plan's geometry: `base + c * step` addresses
                    // this row's cell of a contiguous `data` whose axis dim has `size` cells
                    // of stride `sa`).
                    Some(p) => unsafe { read(data, base + c * step + p * sa) },
                    None => fill,
                };
                // SAFETY: the caller's task owns cells [i0, i0 + idx.len()), inside the
                // output.
                unsafe { dest.set(i0 + j + jj, v) };
            }
            j = e;
        }
    }
}

/// Cells of `U` per 64-byte cache line.
#[allow(non_snake_case)]
const fn LINE_CELLS<U>() -> usize {
    64 / std::mem::size_of::<U>()
}
