//! XLA FFI handlers: the operators inside programs JAX compiles (`jax.jit`), written against
//! the C API of `xla/ffi/api/c_api.h` (API 0.x), with nothing from jaxlib at build time.
//!
//! One handler per family (scatter, gather, segment and their backward passes), exported as
//! `extern "C"` symbols that the Python half wraps in capsules and registers. A handler answers
//! XLA's metadata query, then checks the call frame (stage, arity, every buffer's dtype, rank and
//! dims, every attribute) before it reads an element, runs the same library call as the NumPy
//! path (so the same bits, on the library's thread pool), and writes only the result buffers XLA
//! owns. Errors go back through the API's `XLA_FFI_Error_Create` with the library's message; a
//! panic is caught at the boundary; no Python is touched (XLA's own threads call these).

mod frame;

use tensor_scatter::segment::{self, SegmentOptions};
use tensor_scatter::{
    DType, DynGatherOptions, DynTensor, Element, GatherOptions, IndexInt, Reduction,
    ScatterOptions, SegmentOp, gather_dyn_out, gather_vjp_dyn, scatter_dyn_out, scatter_vjp_dyn,
    segment_dyn, segment_dyn_out, segment_vjp_dyn, segment_vjp_dyn_out,
};

use crate::options;
use frame::{Buf, Call, CallFrame, Failure, FfiError, Res, handle};
use options::SEGMENT_REDUCTIONS;

/// The options a scatter and its backward share.
fn scatter_options(c: &Call<'_>, name: &str) -> Res<ScatterOptions> {
    let reduction = c.text("reduction")?;
    Ok(ScatterOptions::new()
        .axis(c.int("axis")?)
        .reduction(options::reduction(
            name,
            "reduction",
            reduction,
            options::SCATTER_REDUCTIONS,
        )?)
        .include_self(c.flag("include_self")?)
        .negative(options::negative(name, c.text("negative_indices")?)?)
        .out_of_range(options::scatter_range(name, c.text("out_of_range")?)?)
        .updates_window(c.flag("updates_window")?)
        .par(c.threads()?))
}

fn scatter(c: &Call<'_>) -> Res<()> {
    let (op, name) = options::scatter_op(c.text("op")?)?;
    c.arity(name, 3..=3, 1)?;
    let accumulation = options::accumulation(name, c.text("accumulation")?)?;
    let opts = scatter_options(c, name)?.accumulation(accumulation);
    let [d, i, u] = &c.args[..] else {
        unreachable!()
    };
    scatter_dyn_out(
        op,
        d.view()?,
        i.view()?,
        u.view()?,
        c.rets[0].view_mut()?,
        &opts,
    )?;
    Ok(())
}

fn gather_options(c: &Call<'_>, name: &str) -> Res<DynGatherOptions> {
    Ok(GatherOptions::new()
        .axis(c.int("axis")?)
        .batch_dims(c.int("batch_dims")?)
        .negative(options::negative(name, c.text("negative_indices")?)?)
        .out_of_range(options::gather_range(name, c.text("out_of_range")?)?)
        .par(c.threads()?))
}

fn gather(c: &Call<'_>) -> Res<()> {
    let (op, name) = options::gather_op(c.text("op")?)?;
    c.arity(name, 2..=3, 1)?;
    let mut opts = gather_options(c, name)?;
    if let Some(f) = c.args.get(2) {
        if f.dtype != c.args[0].dtype || f.dims.iter().product::<i64>() != 1 {
            return Err(format!("{name}: fill_value: not one element of data's dtype").into());
        }
        opts = opts.fill_value(Some(f.view()?.to_tensor()));
    }
    gather_dyn_out(
        op,
        c.args[0].view()?,
        c.args[1].view()?,
        c.rets[0].view_mut()?,
        &opts,
    )?;
    Ok(())
}

fn segment_options(c: &Call<'_>, name: &str, accepted: &[&str]) -> Res<SegmentOptions> {
    let opts = SegmentOptions::new()
        .dim(c.int("dim")?)
        .reduce(options::reduction(
            name,
            "reduce",
            c.text("reduce")?,
            accepted,
        )?)
        .par(c.threads()?);
    Ok(match c.int("dim_size")? {
        -1 => opts,
        n => opts.dim_size(
            usize::try_from(n).map_err(|_| format!("{name}: dim_size: {n} is not a count >= 0"))?,
        ),
    })
}

fn segment(c: &Call<'_>) -> Res<()> {
    if let Some(done) = small_scatter(c) {
        return done;
    }
    let op = options::segment_op(c.text("op")?, true)?;
    let name = op.name();
    let want_arg = c.rets.len() == 2;
    c.arity(name, 2..=2, c.rets.len().clamp(1, 2))?;
    let accepted = if want_arg {
        options::WITH_POSITIONS
    } else {
        options::SEGMENT_REDUCTIONS
    };
    let opts = segment_options(c, name, accepted)?;
    let (src, index) = (c.args[0].view()?, c.args[1].view()?);
    let arg = if matches!(op, SegmentOp::Scatter | SegmentOp::Coo | SegmentOp::Csr) {
        // The reductions write XLA's buffer themselves (no vector of ours, no copy).
        let out = c.rets[0].view_mut()?;
        segment_dyn_out(op, src, index, out, &opts.overwrite(true), want_arg)?
    } else {
        let (values, arg) = segment_dyn(op, src, index, &opts, want_arg)?;
        c.rets[0].receive(&values, name, "values")?;
        arg
    };
    if let (Some(arg), Some(r)) = (arg, c.rets.get(1)) {
        // int64 positions, or int32 where JAX runs without x64 (each checked to fit).
        let arg = match r.dtype {
            DType::I32 => {
                let shape = arg.shape().to_vec();
                let v: Option<Vec<i32>> = arg
                    .into_vec()
                    .into_iter()
                    .map(|p| i32::try_from(p).ok())
                    .collect();
                let v =
                    v.ok_or_else(|| format!("{name}: a position does not fit the int32 result"))?;
                DynTensor::from_vec(v, &shape)?
            }
            _ => DynTensor::from(arg),
        };
        r.receive(&arg, name, "positions")?;
    }
    Ok(())
}

/// A small 1-D `scatter` ([`segment::scatter_small`]: the fold on the stack, no plan, the
/// same bits): `src` and `index` of one dim and the same length into XLA's buffer of
/// `dim_size` cells, f32, f64, int32 or int64 values, int32 or int64 indices, every attribute
/// valid. `None` for every other call, which the planned path takes (and whose errors it
/// reports).
fn small_scatter(c: &Call<'_>) -> Option<Res<()>> {
    let ([s, i], [o]) = (&c.args[..], &c.rets[..]) else {
        return None;
    };
    let one_dim = s.dims.len() == 1 && i.dims == s.dims && o.dims.len() == 1;
    if !one_dim || c.text("op").ok()? != "scatter" || !matches!(c.int("dim").ok()?, 0 | -1) {
        return None;
    }
    if c.int("dim_size").ok()? != o.dims[0] || c.threads().is_err() {
        return None;
    }
    let red = options::reduction(
        "scatter",
        "reduce",
        c.text("reduce").ok()?,
        SEGMENT_REDUCTIONS,
    );
    let red = red.ok()?;
    fn run<T: Element, I: IndexInt + Element>(
        s: &Buf,
        i: &Buf,
        o: &Buf,
        red: Reduction,
    ) -> Option<Res<()>> {
        let done = segment::scatter_small(
            s.slice::<T>()?,
            i.slice::<I>()?,
            o.slice_mut::<T>()?,
            red,
            false,
        )?;
        Some(done.map_err(Failure::from))
    }
    match (s.dtype, i.dtype) {
        (DType::F32, DType::I32) => run::<f32, i32>(s, i, o, red),
        (DType::F32, DType::I64) => run::<f32, i64>(s, i, o, red),
        (DType::F64, DType::I32) => run::<f64, i32>(s, i, o, red),
        (DType::F64, DType::I64) => run::<f64, i64>(s, i, o, red),
        (DType::I32, DType::I32) => run::<i32, i32>(s, i, o, red),
        (DType::I32, DType::I64) => run::<i32, i64>(s, i, o, red),
        (DType::I64, DType::I32) => run::<i64, i32>(s, i, o, red),
        (DType::I64, DType::I64) => run::<i64, i64>(s, i, o, red),
        _ => None,
    }
}

fn scatter_vjp(c: &Call<'_>) -> Res<()> {
    let (op, forward) = options::scatter_op(c.text("op")?)?;
    let name = &format!("{forward}_vjp");
    c.arity(name, 4..=4, 2)?;
    let opts = scatter_options(c, name)?.ties(options::ties(name, c.text("ties")?)?);
    let [g, d, i, u] = &c.args[..] else {
        unreachable!()
    };
    let (gd, gu) = scatter_vjp_dyn(op, &g.view()?, &d.view()?, &i.view()?, &u.view()?, &opts)?;
    c.rets[0].receive(&gd, name, "d data")?;
    c.rets[1].receive(&gu, name, "d updates")
}

fn gather_vjp(c: &Call<'_>) -> Res<()> {
    let (op, forward) = options::gather_op(c.text("op")?)?;
    let name = &format!("{forward}_vjp");
    c.arity(name, 2..=2, 1)?;
    let opts = gather_options(c, name)?;
    let shape = c.rets[0].shape();
    let r = gather_vjp_dyn(op, &c.args[0].view()?, &c.args[1].view()?, &shape, &opts)?;
    c.rets[0].receive(&r, name, "d data")
}

fn segment_vjp(c: &Call<'_>) -> Res<()> {
    let op = options::segment_op(c.text("op")?, true)?;
    let name = &format!("{}_vjp", op.name());
    c.arity(name, 2..=3, 1)?;
    let opts = segment_options(c, name, options::SEGMENT_REDUCTIONS)?
        .ties(options::ties(name, c.text("ties")?)?);
    // (grad, index) for the gathers, (grad, src, index) for the others; the reductions'
    // gradient is written into XLA's buffer (a sum's or mean's gathered there: no copy).
    match (&c.args[..], op) {
        ([g, s, i], SegmentOp::Scatter | SegmentOp::Coo | SegmentOp::Csr) => {
            let d = c.rets[0].view_mut()?;
            Ok(segment_vjp_dyn_out(
                op,
                g.view()?,
                s.view()?,
                i.view()?,
                &opts,
                d,
            )?)
        }
        ([g, s, i], _) => {
            let (gs, _) =
                segment_vjp_dyn(op, &g.view()?, Some(s.view()?), &i.view()?, None, &opts)?;
            c.rets[0].receive(&gs, name, "d src")
        }
        ([g, i], _) => {
            let (gs, _) = segment_vjp_dyn(op, &g.view()?, None, &i.view()?, None, &opts)?;
            c.rets[0].receive(&gs, name, "d src")
        }
        _ => unreachable!("arity checked"),
    }
}

macro_rules! handlers {
    ($($symbol:ident => $body:ident),* $(,)?) => {
        $(
            /// An XLA FFI handler (see the module).
            ///
            /// # Safety
            /// XLA calls it with its call frame (or null).
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $symbol(frame: *mut CallFrame) -> FfiError {
                // SAFETY: the caller's contract.
                unsafe { handle(frame, $body) }
            }
        )*
    };
}

handlers! {
    tensor_scatter_xla_scatter => scatter,
    tensor_scatter_xla_gather => gather,
    tensor_scatter_xla_segment => segment,
    tensor_scatter_xla_scatter_vjp => scatter_vjp,
    tensor_scatter_xla_gather_vjp => gather_vjp,
    tensor_scatter_xla_segment_vjp => segment_vjp,
}
