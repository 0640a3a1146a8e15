//! The gather drivers: plan, check every index, then run the kernel into fresh memory or a
//! caller's output.

use std::borrow::Cow;

use crate::check;
use crate::dtype::{BitsOf, Element};
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::exec::tuning::ROWS_MIN_WIDTH;
use crate::index::{Fault, IndexInt, IndexPolicy, resolve, with_native_indices};
use crate::kernels::gather::strided::{self, DataView, SliceDims};
use crate::kernels::gather::{Geom, Job};
use crate::kernels::{self, DestPtr};
use crate::view::is_contiguous;
use crate::view::{Tensor, TensorView, TensorViewMut};

use super::GatherOptions;
use super::plan::{GATHER_ELEMENTS, GatherPlan, GatherPlanner, plan_gather};

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

/// What runs after the shape checks: the row gather a `gather_elements` amounts to
/// ([`element_rows`]), else `plan` itself over `data`, with `indices` in row-major order and
/// every index checked.
#[allow(clippy::type_complexity)]
fn prepare<'v, 'd, 'a, T: Element, I: IndexInt>(
    plan: GatherPlan,
    data: &'v TensorView<'d, T>,
    indices: &TensorView<'a, I>,
    opts: &GatherOptions<T>,
    cx: Ctx,
) -> Result<(GatherPlan, Cow<'v, TensorView<'d, T>>, Cow<'a, [I]>)> {
    if plan.op == GATHER_ELEMENTS
        && let Some((rows, window, idx)) = element_rows(&plan, data, indices, opts, cx)?
    {
        return Ok((rows, Cow::Owned(window), idx));
    }
    let idx = flat_indices(plan.op, indices)?;
    validate(&plan, &idx, &indices.layout.shape, opts.policy(), cx)?;
    Ok((plan, Cow::Borrowed(data), idx))
}

/// A `gather_elements` whose indices hold one value per row of the dims after the axis
/// (broadcast along them, as torch's `index.view(-1, 1).expand(...)`, or made contiguous with
/// the same values), of at least [`ROWS_MIN_WIDTH`] cells (or of one, when the dims before the
/// axis share the index): the same work as a slice gather of those rows. Returns the slice gather's plan, the window of `data` it reads (`indices`'
/// extents off the axis) and the row indices, checked (the error, at its coordinate of
/// `indices`, is the one the element gather gives); `None` when the indices are not rows.
#[allow(clippy::type_complexity)]
fn element_rows<'d, 'a, T: Element, I: IndexInt>(
    plan: &GatherPlan,
    data: &TensorView<'d, T>,
    indices: &TensorView<'a, I>,
    opts: &GatherOptions<T>,
    cx: Ctx,
) -> Result<Option<(GatherPlan, TensorView<'d, T>, Cow<'a, [I]>)>> {
    let l = &indices.layout;
    let (axis, n) = plan.comps[0];
    let rank = l.shape.len();
    let width = crate::shape::sat_product(&l.shape[axis + 1..]);
    // Rows of one element are rows too when every outer position shares the index (a 1-D
    // `gather_elements` is `gather`): the slice gather then reads them faster.
    let per_outer = (0..axis).any(|d| l.shape[d] > 1 && l.strides[d] != 0);
    if plan.out_numel == 0 || (width < ROWS_MIN_WIDTH && (per_outer || width == 0)) {
        return Ok(None);
    }
    // The dims after the axis: broadcast, or one run of equal values.
    let Some(run) = check::after_axis(&l.shape, &l.strides, axis) else {
        return Ok(None);
    };
    let lane_dims: Vec<usize> = if per_outer {
        (0..=axis).collect()
    } else {
        vec![axis]
    };
    let (Some(lanes), Some(window)) = (indices.select_dims(&lane_dims), {
        let mut shape = l.shape.clone();
        shape[axis] = n;
        data.window(&shape)
    }) else {
        return Ok(None);
    };
    let batch = if per_outer { axis } else { 0 };
    let (shape, strides) = (&lanes.layout.shape, &lanes.layout.strides);
    let rows = plan_gather(&window.layout.shape, shape, axis as i64, batch as i64)?;
    let idx = match run {
        // A contiguous expanded index: its rows' values, read in one pass that checks them.
        Some(inner) => {
            match check::constant_rows(indices, shape, strides, inner, cx, std::convert::identity) {
                Some(values) => Cow::Owned(values),
                None => return Ok(None),
            }
        }
        None => flat_indices(plan.op, &lanes)?,
    };
    let policy = opts.policy();
    if let Some(bad) = check::first_bad(&idx, &rows.comps, policy, cx) {
        let at = check::unravel(bad, &lanes.layout.shape);
        let mut position = vec![0; rank];
        for (&d, c) in lane_dims.iter().zip(at) {
            position[d] = c;
        }
        let value = idx[bad].to_i128();
        let fault = resolve(value, n, policy).err().unwrap_or(Fault::OutOfRange);
        return Err(check::index_error(plan.op, fault, position, value, axis, n));
    }
    Ok(Some((rows, window, idx)))
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

pub(crate) fn drive_alloc<T: Element, I: IndexInt>(
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
    let plan = plan_shapes(planner, data, &indices.layout.shape, None, opts)?;
    let shape = plan.out_shape.clone();
    let (plan, data, idx) = prepare(plan, data, indices, opts, cx)?;
    let out = build(&plan, &data, &idx, opts, cx)?;
    Ok(Tensor { data: out, shape })
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
    let plan = plan_shapes(
        planner,
        data,
        &indices.layout.shape,
        Some(&out.layout.shape),
        opts,
    )?;
    let (plan, data, idx) = prepare(plan, data, indices, opts, cx)?;
    let data = &*data;
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
