//! The gather drivers: plan, check every index, then run the kernel into fresh memory or a
//! caller's output.

use std::borrow::Cow;

use crate::check;
use crate::dtype::{BitsOf, Element};
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::index::{IndexInt, IndexPolicy, with_native_indices};
use crate::kernels::gather::strided::{self, DataView, SliceDims};
use crate::kernels::gather::{Geom, Job};
use crate::kernels::{self, DestPtr};
use crate::scatter::is_contiguous;
use crate::view::{Tensor, TensorView, TensorViewMut};

use super::GatherOptions;
use super::plan::{GatherPlan, GatherPlanner};

/// The indices in row-major order: borrowed when contiguous, else copied (the index pass
/// and the kernels read them flat); a copy that cannot be allocated is an error.
fn flat_indices<'a, I: Copy>(op: &'static str, v: &TensorView<'a, I>) -> Result<Cow<'a, [I]>> {
    Ok(match v.contiguous() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(v.try_to_vec(op, "indices")?),
    })
}

/// The read-only index pass: every index against its component's accepted range
/// ([`check::first_bad`]); the first failing position in row-major order is described
/// precisely.
fn validate<I: IndexInt>(
    plan: &GatherPlan,
    idx: &[I],
    idx_shape: &[usize],
    policy: IndexPolicy,
    cx: Ctx,
) -> Result<()> {
    match check::first_bad(idx, &plan.comps, policy, cx) {
        None => Ok(()),
        Some(bad) => Err(check::error_at(
            plan.op,
            idx,
            idx_shape,
            bad,
            &plan.comps,
            policy,
        )),
    }
}

/// Runs the kernel into `dest` (`plan.out_numel` cells), moving `T` as its bits
/// ([`BitsOf`]): one kernel per byte width. A `data` view that is not contiguous is read
/// where it lies ([`strided`](kernels::gather::strided)), never copied.
fn run_kernel<T: Element, I: IndexInt>(
    plan: &GatherPlan,
    data: &TensorView<'_, T>,
    idx: &[I],
    opts: &GatherOptions<T>,
    dest: DestPtr<'_, T>,
    cx: Ctx,
) {
    // An empty output has nothing to write; its tuple count need not be bounded by any buffer
    // (GatherND with k = 0 and indices [2⁴⁰, 0]), so the kernels must not walk it (found by
    // the fuzzer as an input that ran for minutes).
    if plan.out_numel == 0 {
        return;
    }
    // SAFETY: `BitsOf<T>` has `T`'s size and alignment, and the kernel writes only bits read
    // from `data` or the fill value's, all valid `T`s.
    let dest = unsafe { dest.cast::<BitsOf<T>>() };
    let contiguous = data.contiguous();
    let job = Job {
        data: kernels::bits_of(contiguous.unwrap_or(&[])),
        idx,
        policy: opts.policy(),
        fill: BitsOf::<T>::from_bits_u64(opts.fill_value.to_bits_u64()),
        cx,
    };
    if contiguous.is_some() {
        kernels::gather::run(&plan.geom, &job, dest, plan.out_numel);
        return;
    }
    let l = &data.layout;
    let view = DataView {
        // SAFETY: `BitsOf<T>` has `T`'s size and alignment, and every bit pattern is a valid
        // unsigned integer.
        data: unsafe { data.data.cast() },
        offset: l.offset,
        shape: &l.shape,
        strides: &l.strides,
    };
    match &plan.geom {
        Geom::Slices(g) => {
            let comp_dims: Vec<usize> = plan.comps.iter().map(|&(d, _)| d).collect();
            let dims = SliceDims {
                lead_end: plan.lead_end,
                comp_dims: &comp_dims,
                slice_start: plan.slice_start,
            };
            // SAFETY: the view was validated against its buffer (`TensorView`), the plan was
            // made from its shape, every index was checked, and `dest` holds `out_numel`
            // cells, this call's alone.
            unsafe { strided::slices(g, dims, view, &job, dest) }
        }
        // SAFETY: as above.
        Geom::Elements(g) => unsafe { strided::elements(g, view, &job, dest, plan.out_numel) },
    }
}

/// The plan and the checks that need no index value (every shape rule, `out`'s shape).
fn plan_shapes<T: Element>(
    planner: GatherPlanner,
    data: &TensorView<'_, T>,
    indices: &[usize],
    out_shape: Option<&[usize]>,
    opts: &GatherOptions<T>,
) -> Result<GatherPlan> {
    let plan = planner(&data.layout.shape, indices, opts.axis, opts.batch_dims)?;
    if let Some(got) = out_shape
        && got != plan.out_shape
    {
        return Err(Error::shape(
            plan.op,
            "out",
            format!("the gathered shape {:?}", plan.out_shape),
            got,
        ));
    }
    Ok(plan)
}

/// Plans, checks a caller-provided output's shape (when given), then checks every index;
/// returns the plan and `indices` in row-major order.
fn plan_checked<'a, T: Element, I: IndexInt>(
    planner: GatherPlanner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'a, I>,
    out_shape: Option<&[usize]>,
    opts: &GatherOptions<T>,
    cx: Ctx,
) -> Result<(GatherPlan, Cow<'a, [I]>)> {
    let plan = plan_shapes(planner, data, &indices.layout.shape, out_shape, opts)?;
    let idx = flat_indices(plan.op, indices)?;
    validate(&plan, &idx, &indices.layout.shape, opts.policy(), cx)?;
    Ok((plan, idx))
}

fn build<T: Element, I: IndexInt>(
    plan: &GatherPlan,
    data: &TensorView<'_, T>,
    idx: &[I],
    opts: &GatherOptions<T>,
    cx: Ctx,
) -> Result<Vec<T>> {
    // SAFETY: both geometries, contiguous or strided, write every one of the `out_numel`
    // cells (slices: every row, copied or filled; elements: every element).
    unsafe {
        kernels::build_vec(
            plan.out_numel,
            |bytes| Error::out_of_memory(plan.op, "output", bytes),
            |dest| {
                run_kernel(plan, data, idx, opts, dest, cx);
                Ok(())
            },
        )
    }
}

pub(super) fn drive_alloc<T: Element, I: IndexInt>(
    op: &'static str,
    planner: GatherPlanner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    if crate::index::converts(indices) {
        // The shape checks first ([`crate::index::converts`]).
        plan_shapes(planner, data, &indices.layout.shape, None, opts)?;
    }
    with_native_indices!(op, indices, idx => alloc(planner, data, idx, opts))
}

fn alloc<T: Element, I: IndexInt>(
    planner: GatherPlanner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    let cx = Ctx::new(opts.par);
    let (plan, idx) = plan_checked(planner, data, indices, None, opts, cx)?;
    let out = build(&plan, data, &idx, opts, cx)?;
    Ok(Tensor {
        data: out,
        shape: plan.out_shape,
    })
}

pub(super) fn drive_into<T: Element, I: IndexInt>(
    op: &'static str,
    planner: GatherPlanner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    if crate::index::converts(indices) {
        plan_shapes(
            planner,
            data,
            &indices.layout.shape,
            Some(&out.layout.shape),
            opts,
        )?;
    }
    with_native_indices!(op, indices, idx => into(planner, data, idx, out, opts))
}

fn into<T: Element, I: IndexInt>(
    planner: GatherPlanner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    let cx = Ctx::new(opts.par);
    let (plan, idx) = plan_checked(planner, data, indices, Some(&out.layout.shape), opts, cx)?;
    let l = &out.layout;
    if is_contiguous(l) {
        let (at, n) = (l.offset, l.numel);
        // A contiguous view's elements are positions `[offset, offset + numel)`, so the
        // kernel writes only them.
        let dest = out.data.dest().sub(at, n);
        run_kernel(&plan, data, &idx, opts, dest, cx);
    } else {
        let tmp = build(&plan, data, &idx, opts, cx)?;
        out.write_row_major(&tmp);
    }
    Ok(())
}
