//! The drivers: plan, choose the kernel, check, copy `data`, run; on error nothing is
//! written.

use crate::dtype::{Element, is_bits};
use crate::error::{Error, Result};
use crate::exec::Ctx;
use crate::index::{IndexInt, with_native_indices};
use crate::kernels::segment::fold::Start;
use crate::kernels::{self, DestPtr, Rows, build_rows, scatter};
use crate::reduce::{AddC, Assign, MaxC, MinC, MulC, Reduction, SubC};
use crate::view::{Layout, Tensor, TensorView, TensorViewMut};

use super::plan::{Plan, Planner, Runs, SKIP, resolve_indices};
use super::rows;
use super::sequential::run_sequential;
use super::strategy::{DataCopy, Prepared, fast_supported, flat_index_error, prepare};
use super::{ScatterOptions, shape_text};
use crate::view::is_contiguous;

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
    cx: Ctx,
) -> Result<()> {
    let r = opts.reduction;
    let fill = opts.fills().then(|| T::identity(r));
    // The element kernels run only on contiguous indices and updates (`elem_geom`).
    let elem_job = |g, fill, staged| scatter::ElemJob {
        g,
        idx: indices.contiguous().unwrap_or(&[]),
        upd: updates.contiguous().unwrap_or(&[]),
        src,
        policy: opts.index_policy,
        fill,
        staged,
    };
    match prep {
        &Prepared::ElemRadix { g, block_cells } => {
            let job = elem_job(g, None, false);
            let buckets = scatter::radix_bucket(&job, block_cells, cx)
                .map_err(|bad| flat_index_error(plan, indices, bad, opts))?;
            with_combiner!(r, T, C => scatter::radix_apply::<T, C>(g, &buckets, src, dest, block_cells, cx));
            Ok(())
        }
        &Prepared::ElemChecked { g } => {
            let job = elem_job(g, fill, false);
            // SAFETY: the plan's geometry has outer == 1 and `dest` covers it (`elem_geom`);
            // with `src` absent the destination was initialised by the caller or the copy.
            with_combiner!(r, T, C => unsafe { scatter::elem_checked::<T, I, C>(&job, dest, cx) })
                .map_err(|bad| flat_index_error(plan, indices, bad, opts))
        }
        &Prepared::ElemSplit { g } => {
            let job = elem_job(g, None, false);
            // SAFETY: `split_fold` took a single row of at most SPLIT_MAX_CELLS cells under
            // the `Error` out-of-range rule without a fill, and `dest` covers it
            // (`elem_geom`); with `src` absent the destination was initialised by the caller
            // or the copy.
            with_combiner!(r, T, C => unsafe { scatter::elem_split::<T, I, C>(&job, dest, cx) })
                .map_err(|bad| flat_index_error(plan, indices, bad, opts))
        }
        &Prepared::ElemFed { g } => {
            let job = elem_job(g, None, false);
            // SAFETY: `fed_fold` took a single row of at most FED_MAX_CELLS cells under the
            // `Error` out-of-range rule without a fill, and `dest` covers it (`elem_geom`);
            // with `src` absent the destination was initialised by the caller or the copy.
            with_combiner!(r, T, C => unsafe { scatter::elem_fed::<T, I, C>(&job, dest, cx) })
                .map_err(|bad| flat_index_error(plan, indices, bad, opts))
        }
        &Prepared::Elem { g, staged } => {
            let job = elem_job(g, fill, staged);
            with_combiner!(r, T, C => scatter::elements::<T, I, C>(&job, dest, cx));
            Ok(())
        }
        Prepared::TuplesFed { g, dims, shifts } => {
            let row = scatter::Row {
                n: g.n,
                dest_off: g.dest_off,
                src,
            };
            let source = scatter::Tuples {
                idx: indices.contiguous().unwrap_or(&[]),
                dims,
                shifts,
                n: g.n,
                level: cx.level,
            };
            let upd = updates.contiguous().unwrap_or(&[]);
            // SAFETY: `tuples_fed` took pairs or triples of contiguous `indices` into a
            // one-row contiguous destination of at most FED_MAX_CELLS cells (`flat_geom`),
            // whose dims and strides `dims` are, one tuple per update; `dest` covers it, and
            // with `src` absent it was initialised by the caller.
            with_combiner!(r, T, C => unsafe { scatter::fed_cells::<T, C>(&source, upd, row, dest, cx) })
                .map_err(|_| tuple_error(plan, indices, opts))
        }
        Prepared::Flat { kernel, offsets } => {
            let flat = TensorView::new(offsets, &[offsets.len()])?;
            let strict = super::strategy::flat_options(opts);
            run_fast(
                plan,
                kernel,
                dest,
                dest_layout,
                src,
                &flat,
                updates,
                &strict,
                cx,
            )
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
            let job = scatter::RangeJob {
                outer_shape: &plan.outer_shape,
                dest_outer: &plan.dest_outer,
                upd_outer: &plan.upd_outer,
                tuple_shape: &plan.tuple_shape,
                upd_tuple: &plan.upd_tuple,
                resolved,
                skip: SKIP,
                rel_range: scatter::rel_range(resolved, SKIP),
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
            with_combiner!(r, T, C => scatter::ranges::<T, C>(&job, dest, cx));
            Ok(())
        }
    }
}

/// The error for a tuple the fed fold refused: the exact index pass names the first one
/// (position, component, value), as it would have before any kernel ran.
fn tuple_error<I: IndexInt>(
    plan: &Plan,
    indices: &TensorView<'_, I>,
    opts: &ScatterOptions,
) -> Error {
    match resolve_indices(plan, indices, opts.index_policy) {
        Err(e) => e,
        Ok(_) => Error::invalid(
            plan.op,
            "indices",
            "a tuple the fold refused and the index pass accepted (a bug: please report it)",
        ),
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
    planner: Planner,
    plan: &Plan,
    dest: &mut TensorViewMut<'_, T>,
    copy_from: Option<&TensorView<'_, T>>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
    cx: Ctx,
) -> Result<()> {
    if updates.layout.numel == 0 {
        check_only(plan, indices, opts)?;
        if let Some(d) = copy_from {
            dest.copy_from(d);
        }
        return Ok(());
    }
    if run_rows_into(plan, dest, copy_from, indices, updates, opts, cx)? {
        return Ok(());
    }
    if fast_supported::<T>(opts) {
        let fused = copy_from
            .filter(|_| is_contiguous(&dest.layout))
            .and_then(|d| d.contiguous());
        let prep = prepare::<T, I>(
            plan,
            &dest.layout,
            indices,
            &updates.layout,
            opts,
            match (copy_from, fused) {
                (None, _) => DataCopy::None,
                (Some(_), Some(_)) => DataCopy::Fused,
                (Some(_), None) => DataCopy::First,
            },
            cx,
        )?;
        if let (Some(d), None) = (copy_from, fused) {
            // Every index was checked: `prepare` takes no checking kernel when the copy
            // comes first.
            debug_assert!(!prep.kernel_checks());
            dest.copy_from(d);
        }
        run_fast(
            plan,
            &prep,
            dest.data.dest(),
            &dest.layout,
            fused,
            indices,
            updates,
            opts,
            cx,
        )?;
        return Ok(());
    }
    if let (true, Some(upd)) = (dest.data.is_whole(), updates.data.whole()) {
        let resolved = resolve_indices(plan, indices, opts.index_policy)?;
        if let Some(d) = copy_from {
            dest.copy_from(d);
        }
        if let Some(d) = dest.data.whole_mut() {
            run_sequential(plan, &resolved, d, &dest.layout, upd, &updates.layout, opts);
        }
        return Ok(());
    }
    // The sequential engine reads and writes the buffers between the elements too (its wide
    // accumulation promotes the whole span), so views with gaps run on contiguous copies of
    // their elements, planned anew, and the result is written back.
    let staged_upd = match updates.data.whole() {
        Some(_) => None,
        None => Some(Tensor::from_vec(
            updates.try_to_vec(plan.op, "updates")?,
            &updates.layout.shape,
        )?),
    };
    let upd = staged_upd
        .as_ref()
        .map_or_else(|| updates.clone(), Tensor::view);
    let from = copy_from.cloned().unwrap_or_else(|| dest.as_view());
    let mut staged = Tensor::from_vec(from.try_to_vec(plan.op, "output")?, &from.layout.shape)?;
    let mut view = staged.view_mut();
    let flat = planner(&view.layout, &indices.layout, &upd.layout, opts)?;
    run_into(planner, &flat, &mut view, None, indices, &upd, opts, cx)?;
    dest.write_row_major(&staged.data);
    Ok(())
}

/// The row fold into `dest` (contiguous), from `copy_from` (contiguous) or in place, when the
/// work is rows ([`rows`]); `Ok(false)`: not taken, nothing written.
#[allow(clippy::too_many_arguments)]
fn run_rows_into<T: Element, I: IndexInt>(
    plan: &Plan,
    dest: &mut TensorViewMut<'_, T>,
    copy_from: Option<&TensorView<'_, T>>,
    indices: &TensorView<'_, I>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
    cx: Ctx,
) -> Result<bool> {
    let copies = copy_from.is_some();
    let (dl, il, ul) = (&dest.layout, &indices.layout, &updates.layout);
    let Some(rp) = rows::plan::<T>(plan, dl, il, ul, opts, copies) else {
        return Ok(false);
    };
    let start = match copy_from.map(TensorView::contiguous) {
        None => Start::Keep,
        Some(Some(d)) => Start::Data(d),
        Some(None) => return Ok(false), // a strided `data` would be copied first
    };
    let (Some(upd), true) = (updates.contiguous(), is_contiguous(&dest.layout)) else {
        return Ok(false);
    };
    let Some(work) = rows::prepare(plan, &rp, indices, opts, cx)? else {
        return Ok(false);
    };
    let Some(cells) = dest.contiguous_mut() else {
        return Ok(false); // unreachable: the layout is contiguous
    };
    rows::run(plan.op, &work, upd, Rows::init(cells), start, opts, cx)?;
    Ok(true)
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
    if crate::index::converts(indices) {
        let dest = Layout::contiguous_unchecked(&data.layout.shape, data.layout.numel);
        shape_checks::<T>(op, planner, &dest, indices, updates, opts)?;
    }
    with_native_indices!(op, indices, idx => out_of_place(op, planner, data, idx, updates, opts))
}

/// The checks that need no index value (the reduction for the dtype, every shape rule), for
/// an index dtype that is converted before the operation ([`crate::index::converts`]).
fn shape_checks<T: Element>(
    op: &'static str,
    planner: Planner,
    dest: &Layout,
    indices: &TensorView<'_, impl IndexInt>,
    updates: &TensorView<'_, T>,
    opts: &ScatterOptions,
) -> Result<()> {
    opts.reduction.check_for::<T>(op)?;
    planner(dest, &indices.layout, &updates.layout, opts).map(|_| ())
}

/// `out` has data's shape.
fn check_out_shape(op: &'static str, data: &Layout, out: &Layout) -> Result<()> {
    if out.shape != data.shape {
        return Err(Error::shape(
            op,
            "out",
            format!("the shape of data {}", shape_text(&data.shape)),
            &out.shape,
        ));
    }
    Ok(())
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
    let cx = Ctx::new(opts.par);
    let dest_layout = Layout::contiguous_unchecked(&data.layout.shape, data.layout.numel);
    let plan = planner(&dest_layout, &indices.layout, &updates.layout, opts)?;
    if let Some(rp) = rows::plan::<T>(
        &plan,
        &dest_layout,
        &indices.layout,
        &updates.layout,
        opts,
        true,
    ) && let (Some(src), Some(upd)) = (data.contiguous(), updates.contiguous())
        && let Some(work) = rows::prepare(&plan, &rp, indices, opts, cx)?
    {
        let oom = |bytes| Error::out_of_memory(op, "output", bytes);
        let out = build_rows(dest_layout.numel, T::default(), oom, |r| {
            rows::run(op, &work, upd, r, Start::Data(src), opts, cx)
        })?;
        return Ok(Tensor {
            data: out,
            shape: data.layout.shape.clone(),
        });
    }
    if fast_supported::<T>(opts)
        && updates.layout.numel > 0
        && let Some(src) = data.contiguous()
    {
        let prep = prepare::<T, I>(
            &plan,
            &dest_layout,
            indices,
            &updates.layout,
            opts,
            DataCopy::Fused,
            cx,
        )?;
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
                        cx,
                    )
                },
            )
        }?;
        return Ok(Tensor {
            data: out,
            shape: data.layout.shape.clone(),
        });
    }
    let mut out = Tensor {
        data: data.try_to_vec(op, "output")?,
        shape: data.layout.shape.clone(),
    };
    run_into(
        planner,
        &plan,
        &mut out.view_mut(),
        None,
        indices,
        updates,
        opts,
        cx,
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
    if crate::index::converts(indices) {
        check_out_shape(op, &data.layout, &out.layout)?;
        shape_checks::<T>(op, planner, &out.layout, indices, updates, opts)?;
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
    let cx = Ctx::new(opts.par);
    check_out_shape(op, &data.layout, &out.layout)?;
    let plan = planner(&out.layout, &indices.layout, &updates.layout, opts)?;
    run_into(planner, &plan, out, Some(data), indices, updates, opts, cx)
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
    if crate::index::converts(indices) {
        shape_checks::<T>(op, planner, &dest.layout, indices, updates, opts)?;
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
    let cx = Ctx::new(opts.par);
    let plan = planner(&dest.layout, &indices.layout, &updates.layout, opts)?;
    run_into(planner, &plan, dest, None, indices, updates, opts, cx)
}
