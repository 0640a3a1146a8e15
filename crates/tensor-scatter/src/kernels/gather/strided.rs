//! Gathers from a `data` view that is not contiguous (padded, reversed, permuted or
//! broadcast), read where it lies: each output row or element finds its data position from the
//! view's strides, so a gather reads only the cells it gathers. A contiguous copy first would
//! cost the whole view, and a broadcast view can be far larger than memory. Per element these
//! loops are slower than the contiguous kernels of the parent module.

use super::{ElementsGeom, Job, SliceGeom};
use crate::dtype::Element;
use crate::index::{IndexInt, resolve_accepted};
use crate::kernels::{DestPtr, read};
use crate::shape::part;
use crate::view::elems::Elems;

/// A validated `data` view: every position `offset + Σ c[d] * strides[d]` with `c` inside
/// `shape` is one of its elements in `data` (the positions between them may be gaps, never
/// read; the job's own `data` slice is not used).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DataView<'a, U> {
    pub(crate) data: Elems<'a, U>,
    pub(crate) offset: usize,
    pub(crate) shape: &'a [usize],
    pub(crate) strides: &'a [isize],
}

/// The data dimensions of a whole-slice gather: `[0, lead_end)` are the lead (batch and
/// outer) dims, `comp_dims` the dims the index tuple addresses, `[slice_start, rank)` the
/// slice.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SliceDims<'a> {
    pub(crate) lead_end: usize,
    pub(crate) comp_dims: &'a [usize],
    pub(crate) slice_start: usize,
}

/// `Σ c[d] * strides[d]` for the row-major coordinate `c` of flat position `flat` in `shape`.
fn offset_of(mut flat: usize, shape: &[usize], strides: &[isize]) -> isize {
    let mut off = 0isize;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        off = off.wrapping_add(((flat % n) as isize).wrapping_mul(s));
        flat /= n;
    }
    off
}

/// Steps the row-major coordinate `coord` of `shape` by one and moves `pos` with it by
/// `strides` (dims whose stride is 0 do not move it); wraps to the origin after the last.
#[inline(always)]
fn advance(coord: &mut [usize], shape: &[usize], strides: &[isize], pos: &mut isize) {
    for d in (0..shape.len()).rev() {
        coord[d] += 1;
        *pos = pos.wrapping_add(strides[d]);
        if coord[d] < shape[d] {
            return;
        }
        *pos = pos.wrapping_sub(strides[d].wrapping_mul(shape[d] as isize));
        coord[d] = 0;
    }
}

/// [`super::slices`] over a strided view. Row `r = l * tuple_n + t` copies the slice at lead
/// coordinate `l` and the resolved tuple `t`, element by element.
///
/// # Safety
/// The view is valid ([`DataView`]); `dims` and `g` describe it; every index
/// was accepted by the index pass; `dest` has `g.lead_n * g.tuple_n * g.slice` cells, none of
/// them touched by anyone else during the call.
pub(crate) unsafe fn slices<U: Element, I: IndexInt>(
    g: &SliceGeom,
    dims: SliceDims<'_>,
    view: DataView<'_, U>,
    job: &Job<'_, U, I>,
    dest: DestPtr<'_, U>,
) {
    let rows = g.lead_n.saturating_mul(g.tuple_n);
    if rows == 0 || g.slice == 0 {
        return;
    }
    let k = dims.comp_dims.len();
    let (lead_shape, lead_strides) = (&view.shape[..dims.lead_end], &view.strides[..dims.lead_end]);
    let (slice_shape, slice_strides) = (
        &view.shape[dims.slice_start..],
        &view.strides[dims.slice_start..],
    );
    let bytes = rows.saturating_mul(
        g.slice
            .saturating_mul(std::mem::size_of::<U>())
            .saturating_add(k * std::mem::size_of::<I>()),
    );
    let tasks = job.cx.tasks(bytes, 4).min(rows);
    job.cx.run(tasks, |task| {
        let (r0, r1) = part(rows, tasks, task, 1);
        let mut coord = vec![0usize; slice_shape.len()];
        for r in r0..r1 {
            let (l, t) = (r / g.tuple_n, r % g.tuple_n);
            let tuple = ((l / g.batch_div) * g.tuple_n + t) * k;
            let mut pos =
                (view.offset as isize).wrapping_add(offset_of(l, lead_shape, lead_strides));
            let mut filled = false;
            for (j, &d) in dims.comp_dims.iter().enumerate() {
                // SAFETY: tuple `(l / batch_div) * tuple_n + t` exists in `indices`, whose
                // rows hold `k` components (the plan).
                let v = unsafe { read(job.idx, tuple + j) }.to_i64_sat();
                match resolve_accepted(v, view.shape[d], job.policy) {
                    Some(p) => pos = pos.wrapping_add((p as isize).wrapping_mul(view.strides[d])),
                    None => filled = true,
                }
            }
            let out = r * g.slice;
            if filled {
                for e in 0..g.slice {
                    // SAFETY: row `r` of `dest` is this task's (`part` cuts disjoint rows).
                    unsafe { dest.set(out + e, job.fill) };
                }
                continue;
            }
            coord.fill(0);
            for e in 0..g.slice {
                // SAFETY: `pos` is the view position of an in-shape coordinate (the lead
                // coordinate of `l`, accepted indices, the slice coordinate `coord`), so it
                // is one of the view's elements; the row is this task's.
                unsafe { dest.set(out + e, view.data.get(pos as usize)) };
                advance(&mut coord, slice_shape, slice_strides, &mut pos);
            }
        }
    });
}

/// [`super::elements`] over a strided view: the element at output coordinate `c` reads
/// `data[offset + Σ_{d != axis} c[d] * strides[d] + p * strides[axis]]`.
///
/// # Safety
/// As [`slices`], with `g` describing the view and `dest` holding `n` cells (the element count
/// of `g.shape`).
pub(crate) unsafe fn elements<U: Element, I: IndexInt>(
    g: &ElementsGeom,
    view: DataView<'_, U>,
    job: &Job<'_, U, I>,
    dest: DestPtr<'_, U>,
    n: usize,
) {
    if n == 0 {
        return;
    }
    // The axis term comes from the index; the other dims move the position.
    let strides: Vec<isize> = (0..g.shape.len())
        .map(|d| if d == g.axis { 0 } else { view.strides[d] })
        .collect();
    let sa = view.strides[g.axis];
    let bytes = n.saturating_mul(std::mem::size_of::<U>() + std::mem::size_of::<I>());
    let tasks = job.cx.tasks(bytes, 4).min(n);
    job.cx.run(tasks, |task| {
        let (e0, e1) = part(n, tasks, task, 1);
        let mut coord = vec![0usize; g.shape.len()];
        let mut rest = e0;
        for d in (0..g.shape.len()).rev() {
            coord[d] = rest % g.shape[d];
            rest /= g.shape[d];
        }
        let mut base = (view.offset as isize).wrapping_add(offset_of(e0, &g.shape, &strides));
        for e in e0..e1 {
            // SAFETY: `indices` has the output's `n` elements, contiguous.
            let v = unsafe { read(job.idx, e) }.to_i64_sat();
            let x = match resolve_accepted(v, g.axis_size, job.policy) {
                // SAFETY: `coord` is inside `indices`' shape, which is inside data's on every
                // dim but the axis (the plan), and `p` is an accepted axis position, so the
                // position is the view's at an in-shape coordinate.
                Some(p) => unsafe {
                    view.data
                        .get(base.wrapping_add((p as isize).wrapping_mul(sa)) as usize)
                },
                None => job.fill,
            };
            // SAFETY: element `e` is this task's (`part` cuts disjoint ranges).
            unsafe { dest.set(e, x) };
            advance(&mut coord, &g.shape, &strides, &mut base);
        }
    });
}
