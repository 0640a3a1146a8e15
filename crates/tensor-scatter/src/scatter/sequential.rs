//! The sequential engine: one thread, every reduction (mean's per-cell counts and wide
//! f16/bf16 accumulation included).

use crate::dtype::{Element, is_bits};
use crate::kernels::{self};
use crate::reduce::{Accumulation, AddC, Assign, MaxC, MinC, MulC, Reduction, SubC};
use crate::view::Layout;

use super::ScatterOptions;
use super::plan::{Plan, Runs, for_each_run};

/// Runs the kernel for a validated plan. Infallible: every position it touches was proven in
/// bounds by the view checks and the index pass.
pub(crate) fn run_sequential<T: Element>(
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
                    *x = T::reduce_mean(*x, *c + extra);
                }
            }
        }
    }
}

/// Whether f16/bf16 values are promoted to f32 for the whole fold.
pub(super) fn widens<T: Element>(opts: &ScatterOptions) -> bool {
    opts.accumulation == Accumulation::Wide
        && T::DTYPE != <T::Wide as Element>::DTYPE
        && matches!(
            opts.reduction,
            Reduction::Add | Reduction::Sub | Reduction::Mul | Reduction::Mean
        )
}
