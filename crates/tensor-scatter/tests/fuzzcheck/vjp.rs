//! The six seed operators' backward passes under the fuzz check: a call decoded as the
//! forward's is ([`decode_seed`]), a gradient of the output's shape (sometimes of another),
//! the engine's VJP against the oracle's (`reference::vjp`): no panic, the same bits for both
//! gradients, errors on both sides.

use tensor_scatter::segment::Float;
use tensor_scatter::{NegativeIndices, Par, Reduction, TensorView, reference};

use super::input::{Bytes, FromI128, contiguous_strides, count, gapped, padded, values};
use super::{OPS, Op, SeedCall, bits_of, decode_seed, gather_opts, rule_shape, scatter_opts};

pub(crate) fn run<T: Float, I: FromI128>(b: &mut Bytes<'_>) {
    let op = OPS[usize::from(b.u8() % 6)];
    let Some(c) = decode_seed::<T, I>(op, b) else {
        return;
    };
    let SeedCall {
        ds,
        is,
        us,
        axis,
        batch_dims,
        ..
    } = &c;
    let (axis, batch_dims) = (*axis, *batch_dims);
    let rule = rule_shape(op, ds, is, us, axis, batch_dims);
    // The oracle enumerates every tuple and output cell: the shapes the forward's check runs
    // the engine alone on are left to it.
    let tuples = is.split_last().map_or(Some(1), |(_, t)| count(t));
    let nd = matches!(op, Op::ScatterNd | Op::GatherNd);
    if (nd && tuples.is_none_or(|t| t > 1 << 16))
        || rule
            .as_deref()
            .is_some_and(|r| count(r).is_none_or(|c| c > 1 << 16))
    {
        return;
    }
    let mut gs = rule.unwrap_or_else(|| ds.clone());
    if b.flag(16) {
        match gs.last_mut() {
            Some(x) => *x = x.wrapping_add(1) % 7,
            None => gs.push(1),
        }
    }
    let Some(grad) = values::<T>(b, &gs) else {
        return;
    };
    let poison = T::from_bits_u64(0x5a5a_5a5a_5a5a_5a5a);
    let gbuf = padded(&grad, poison);
    let gv = if b.flag(3) {
        let Some(strides) = contiguous_strides(&gs, 2) else {
            return;
        };
        gapped(&gbuf, &gs, &strides)
    } else {
        TensorView::new(&grad, &gs)
    };
    let (Ok(gv), Ok(dv), Ok(iv), Ok(uv)) = (
        gv,
        TensorView::new(&c.data, ds),
        TensorView::new(&c.indices, is),
        TensorView::new(&c.updates, us),
    ) else {
        return;
    };
    let negative = if b.flag(3) {
        NegativeIndices::Error
    } else {
        NegativeIndices::Wrap
    };
    let par = [
        Par::Sequential,
        Par::threads_exact(2),
        Par::threads_exact(3),
    ][usize::from(b.u8() % 3)];
    let name = op.name();
    match op {
        Op::ScatterElements | Op::ScatterNd | Op::ScatterUpdate => {
            let reduction = Reduction::ALL[usize::from(b.u8()) % Reduction::ALL.len()];
            let opts = scatter_opts(b, axis, reduction, negative, par);
            let (got, want) = match op {
                Op::ScatterElements => (
                    tensor_scatter::scatter_elements_vjp(&gv, &dv, &iv, &uv, &opts),
                    reference::scatter_elements_vjp(&gv, &dv, &iv, &uv, &opts),
                ),
                Op::ScatterNd => (
                    tensor_scatter::scatter_nd_vjp(&gv, &dv, &iv, &uv, &opts),
                    reference::scatter_nd_vjp(&gv, &dv, &iv, &uv, &opts),
                ),
                _ => (
                    tensor_scatter::scatter_update_vjp(&gv, &dv, &iv, &uv, &opts),
                    reference::scatter_update_vjp(&gv, &dv, &iv, &uv, &opts),
                ),
            };
            match (got, want) {
                (Ok(g), Ok(w)) => {
                    for (what, g, w) in [
                        ("data", &g.data, &w.data),
                        ("updates", &g.updates, &w.updates),
                    ] {
                        assert_eq!(g.shape(), w.shape(), "{name}_vjp: {what} shapes differ");
                        assert!(
                            bits_of(g.as_slice()) == bits_of(w.as_slice()),
                            "{name}_vjp: {what} gradients differ"
                        );
                    }
                }
                (Err(e), Err(_)) => {
                    let _ = e.to_string();
                }
                (g, w) => panic!("{name}_vjp: engine {:?}, oracle {:?}", g.err(), w.err()),
            }
        }
        _ => {
            let opts = gather_opts::<T>(b, axis, batch_dims, negative, par);
            let (got, want) = match op {
                Op::Gather => (
                    tensor_scatter::gather_vjp(&gv, &iv, ds, &opts),
                    reference::gather_vjp(&gv, &iv, ds, &opts),
                ),
                Op::GatherElements => (
                    tensor_scatter::gather_elements_vjp(&gv, &iv, ds, &opts),
                    reference::gather_elements_vjp(&gv, &iv, ds, &opts),
                ),
                _ => (
                    tensor_scatter::gather_nd_vjp(&gv, &iv, ds, &opts),
                    reference::gather_nd_vjp(&gv, &iv, ds, &opts),
                ),
            };
            match (got, want) {
                (Ok(g), Ok(w)) => {
                    assert_eq!(g.shape(), w.shape(), "{name}_vjp: shapes differ");
                    assert!(
                        bits_of(g.as_slice()) == bits_of(w.as_slice()),
                        "{name}_vjp: gradients differ"
                    );
                }
                (Err(e), Err(_)) => {
                    let _ = e.to_string();
                }
                (g, w) => panic!("{name}_vjp: engine {:?}, oracle {:?}", g.err(), w.err()),
            }
        }
    }
}
