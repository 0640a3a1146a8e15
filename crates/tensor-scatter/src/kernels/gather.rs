//! The gather kernels. They run after the plan and the index pass, over contiguous `data`,
//! contiguous `indices` and a contiguous destination, and cannot fail.
//!
//! Data movement is dispatched by byte width: every dtype is moved as the unsigned integer of
//! its size ([`Bits`]), so f16, bf16, i16 and u16 share one 2-byte kernel, and so on. Each
//! parallel task owns a contiguous range of the output, so the result does not depend on the
//! thread count.

use super::DestPtr;
use crate::index::{IndexInt, IndexPolicy, resolve_accepted};
use crate::par::{run_tasks, task_count};

/// The unsigned integer types a value is moved as.
pub(crate) trait Bits: Copy + Send + Sync + 'static {
    /// The low `8 * size_of::<Self>()` bits of `v`.
    fn truncate(v: u64) -> Self;
}
macro_rules! bits {
    ($($t:ty),*) => {$(impl Bits for $t {
        #[inline(always)]
        fn truncate(v: u64) -> Self { v as $t }
    })*};
}
bits!(u8, u16, u32, u64);

/// Reinterprets a slice of `T` as a slice of the same-size unsigned integer `U`.
///
/// # Safety
/// `T` must be one of the crate's element types (a primitive without padding, every byte
/// initialised), with `size_of::<T>() == size_of::<U>()` and `align_of::<U>() <= align_of::<T>()`
/// (both asserted).
pub(crate) unsafe fn as_bits<T, U: Bits>(s: &[T]) -> &[U] {
    assert!(std::mem::size_of::<T>() == std::mem::size_of::<U>());
    assert!(std::mem::align_of::<U>() <= std::mem::align_of::<T>());
    // SAFETY: same size and compatible alignment (asserted); every byte of a primitive
    // element is initialised, and every bit pattern is a valid unsigned integer.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<U>(), s.len()) }
}

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
pub(crate) struct ElemGeom {
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
    Elements(ElemGeom),
}

/// The inputs of one kernel run, moved as `U`.
pub(crate) struct Job<'a, U, I> {
    pub(crate) data: &'a [U],
    pub(crate) idx: &'a [I],
    pub(crate) policy: IndexPolicy,
    pub(crate) fill: U,
    pub(crate) threads: usize,
}

/// Runs the gather of `geom` into the `n` cells of `dest`, writing every one of them.
pub(crate) fn run<U: Bits, I: IndexInt>(
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

fn slices<U: Bits, I: IndexInt>(g: &SliceGeom, job: &Job<'_, U, I>, dest: DestPtr<'_, U>) {
    let rows = g.lead_n * g.tuple_n;
    if rows == 0 {
        return;
    }
    let k = g.comps.len();
    let bytes = rows * (g.slice * std::mem::size_of::<U>() + k * std::mem::size_of::<I>());
    let tasks = task_count(job.threads, bytes, 4).min(rows);
    run_tasks(job.threads, tasks, |task| {
        let (r0, r1) = super::fast::split(rows, tasks, task, 1);
        let (mut l, mut t) = (r0 / g.tuple_n, r0 % g.tuple_n);
        for r in r0..r1 {
            let ib = ((l / g.batch_div) * g.tuple_n + t) * k;
            let mut off = l * g.lead_data;
            let mut fill = false;
            for (j, c) in g.comps.iter().enumerate() {
                match resolve_accepted(job.idx[ib + j].to_i64_sat(), c.size, job.policy) {
                    Some(p) => off += p * c.stride,
                    None => fill = true,
                }
            }
            let o = r * g.slice;
            if fill {
                for i in o..o + g.slice {
                    // SAFETY: rows [r0, r1) and so cells [r0 * slice, r1 * slice) belong to
                    // this task alone, and lie inside the `rows * slice` cells of `dest`.
                    unsafe { dest.set(i, job.fill) };
                }
            } else if g.slice == 1 {
                // SAFETY: as above (one cell).
                unsafe { dest.set(o, job.data[off]) };
            } else {
                // SAFETY: as above; `job.data` is a shared borrow distinct from `dest`.
                unsafe { dest.copy_in(o, &job.data[off..off + g.slice]) };
            }
            t += 1;
            if t == g.tuple_n {
                t = 0;
                l += 1;
            }
        }
    });
}

fn elements<U: Bits, I: IndexInt>(
    g: &ElemGeom,
    job: &Job<'_, U, I>,
    dest: DestPtr<'_, U>,
    n: usize,
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
    let sa = g.data_strides[g.axis];
    let bytes = n * (std::mem::size_of::<U>() + std::mem::size_of::<I>());
    let tasks = task_count(job.threads, bytes, 4).min(n);
    run_tasks(job.threads, tasks, |task| {
        let (e0, e1) = super::fast::split(n, tasks, task, 1);
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
        let mut e = e0;
        let mut col = e0 % m;
        while e < e1 {
            let end = (e + (m - col)).min(e1);
            for (i, c) in (e..end).zip(col..) {
                let v = match resolve_accepted(job.idx[i].to_i64_sat(), g.axis_size, job.policy) {
                    Some(p) => job.data[base + c * step + p * sa],
                    None => job.fill,
                };
                // SAFETY: cells [e0, e1) belong to this task alone and lie inside `n`.
                unsafe { dest.set(i, v) };
            }
            e = end;
            col = 0;
            // Next row: advance the odometer over the outer dims.
            for d in (0..last).rev() {
                coord[d] += 1;
                if d != g.axis {
                    base += g.data_strides[d];
                }
                if coord[d] < outer[d] {
                    break;
                }
                if d != g.axis {
                    base -= outer[d] * g.data_strides[d];
                }
                coord[d] = 0;
            }
        }
    });
}
