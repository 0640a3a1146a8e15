//! The fuzz check, shared by the `cargo fuzz` targets and the stable replay/sweep test
//! (tests/fuzz_replay.rs, where it is a module). For `cargo fuzz` this file is the root of the
//! fuzz package's library (`fuzzcheck`, fuzz/Cargo.toml), so its generic code over every dtype
//! and operator is compiled and instrumented once, and the eleven targets are thin wrappers that
//! link it (each used to include the file and compile all of it again).
//!
//! [`check`] decodes arbitrary bytes into one call of an operator (shapes of rank 0–5 with
//! dims 0–6 and, rarely, 2³¹ / 2⁴⁰ / usize::MAX; every data dtype and index dtype; the axis
//! and batch_dims as raw i64; every reduction and index policy; index values biased towards
//! 0, ±1, ±size, ±(size+1), 2³¹, 2³², i64::MIN, i64::MAX; contiguous or padded views) and
//! panics if
//! 1. the engine panics (the fuzzer sees the panic);
//! 2. the engine and the naive reference oracle disagree: both `Ok` with different bits or
//!    shapes, one `Ok` and one `Err`, or errors of different kinds or arguments;
//! 3. the oracle returns `Ok` where the operator's shape rules (written out again here, from
//!    DESIGN.md) say the shapes are invalid, or an output shape other than the rules' formula;
//! 4. an `_into` call that fails changes its destination, or one that succeeds differs from
//!    the oracle or writes outside the output's elements (poisoned padding).

// `pub` so the fuzz package's targets can call it; in the test crate nothing is reachable.
#![allow(dead_code, unreachable_pub)]

mod input;
mod segment;
mod vjp;

use std::mem::discriminant;

use tensor_scatter::half::{bf16, f16};
use tensor_scatter::segment::Float;
use tensor_scatter::{
    Accumulation, Element, Error, GatherOptions, GatherOutOfRange, IndexPolicy, NegativeIndices,
    OutOfRange, Par, Reduction, ScatterOptions, TensorView, reference,
};

use input::{Bytes, FromI128, contiguous_strides, count, gapped, gapped_mut, padded, values};

/// The operator a fuzz target drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    ScatterElements,
    ScatterNd,
    ScatterUpdate,
    Gather,
    GatherElements,
    GatherNd,
    /// The segment reductions: `scatter` with `dim_size`, `segment_coo`, `segment_csr`, with
    /// and without `out` and positions (segment.rs).
    Segment,
    /// `gather_coo` and `gather_csr` (segment.rs).
    SegmentGather,
    /// The composites (softmax, log-softmax, logsumexp, std) and their backward (segment.rs).
    Composite,
    /// The segment reductions' and segment gathers' backward passes (segment.rs).
    SegmentVjp,
    /// The six seed operators' backward passes (vjp.rs).
    Vjp,
}

pub const OPS: [Op; 11] = [
    Op::ScatterElements,
    Op::ScatterNd,
    Op::ScatterUpdate,
    Op::Gather,
    Op::GatherElements,
    Op::GatherNd,
    Op::Segment,
    Op::SegmentGather,
    Op::Composite,
    Op::SegmentVjp,
    Op::Vjp,
];

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::ScatterElements => "scatter_elements",
            Op::ScatterNd => "scatter_nd",
            Op::ScatterUpdate => "scatter_update",
            Op::Gather => "gather",
            Op::GatherElements => "gather_elements",
            Op::GatherNd => "gather_nd",
            Op::Segment => "segment",
            Op::SegmentGather => "segment_gather",
            Op::Composite => "composite",
            Op::SegmentVjp => "segment_vjp",
            Op::Vjp => "vjp",
        }
    }
}

fn bits_of<T: Element>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits_u64()).collect()
}

/// Same error class: the kind's variant and the argument at fault.
fn same_error(engine: &Error, oracle: &Error) -> bool {
    discriminant(engine.kind()) == discriminant(oracle.kind()) && engine.arg() == oracle.arg()
}

fn axis_ok(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i128;
    let a = i128::from(axis);
    let a = if a < 0 { a + r } else { a };
    (0..r).contains(&a).then_some(a as usize)
}

/// The output shape the operator's shape rules give, or `None` where they refuse the shapes.
/// Written from DESIGN.md, independently of both the engine and the oracle.
fn rule_shape(
    op: Op,
    ds: &[usize],
    is: &[usize],
    us: &[usize],
    axis: i64,
    batch_dims: i64,
) -> Option<Vec<usize>> {
    let r = ds.len();
    match op {
        Op::ScatterElements => {
            let a = axis_ok(axis, r)?;
            (is.len() == r && us == is && (0..r).all(|d| d == a || is[d] <= ds[d]))
                .then(|| ds.to_vec())
        }
        Op::ScatterNd => {
            let (&k, tuples) = is.split_last()?;
            (k <= r && us == [tuples, &ds[k..]].concat()).then(|| ds.to_vec())
        }
        Op::ScatterUpdate => {
            let a = axis_ok(axis, r)?;
            (us == [&ds[..a], is, &ds[a + 1..]].concat()).then(|| ds.to_vec())
        }
        Op::Gather => {
            let a = axis_ok(axis, r)?;
            let q = is.len() as i128;
            let b = i128::from(batch_dims) + if batch_dims < 0 { q } else { 0 };
            if b < 0 || b > q || b > a as i128 {
                return None;
            }
            let b = b as usize;
            (ds[..b] == is[..b]).then(|| [&ds[..a], &is[b..], &ds[a + 1..]].concat())
        }
        Op::GatherElements => {
            let a = axis_ok(axis, r)?;
            (is.len() == r && (0..r).all(|d| d == a || is[d] <= ds[d])).then(|| is.to_vec())
        }
        Op::GatherNd => {
            let (&k, tuples) = is.split_last()?;
            let b = usize::try_from(batch_dims).ok()?;
            if b > tuples.len() || b.checked_add(k)? > r || ds[..b] != is[..b] {
                return None;
            }
            Some([tuples, &ds[b + k..]].concat())
        }
        _ => None,
    }
}

/// Runs one fuzz input for `op`; panics on any broken promise (see the module docs).
pub fn check(op: Op, input: &[u8]) {
    let mut b = Bytes { b: input, at: 0 };
    if matches!(op, Op::Composite | Op::SegmentVjp | Op::Vjp) {
        // The backward passes and composites take the float dtypes only.
        return match b.u8() % 8 {
            0 => float::<f32, i64>(op, &mut b),
            1 => float::<f32, u32>(op, &mut b),
            2 => float::<f16, i32>(op, &mut b),
            3 => float::<f16, u16>(op, &mut b),
            4 => float::<bf16, u8>(op, &mut b),
            5 => float::<bf16, i64>(op, &mut b),
            6 => float::<f64, i8>(op, &mut b),
            _ => float::<f64, u64>(op, &mut b),
        };
    }
    // Every data dtype and every index dtype, in 13 pairs.
    match b.u8() % 13 {
        0 => any::<f32, i64>(op, &mut b),
        1 => any::<f16, i32>(op, &mut b),
        2 => any::<bf16, u8>(op, &mut b),
        3 => any::<f64, i8>(op, &mut b),
        4 => any::<i8, u64>(op, &mut b),
        5 => any::<i32, i16>(op, &mut b),
        6 => any::<u8, u16>(op, &mut b),
        7 => any::<u64, u32>(op, &mut b),
        8 => any::<bool, i64>(op, &mut b),
        9 => any::<i16, i8>(op, &mut b),
        10 => any::<u16, i64>(op, &mut b),
        11 => any::<u32, u64>(op, &mut b),
        _ => any::<i64, i32>(op, &mut b),
    }
}

fn any<T: Element, I: FromI128>(op: Op, b: &mut Bytes<'_>) {
    match op {
        Op::Segment | Op::SegmentGather => segment::run::<T, I>(op, b),
        _ => run::<T, I>(op, b),
    }
}

fn float<T: Float, I: FromI128>(op: Op, b: &mut Bytes<'_>) {
    match op {
        Op::Vjp => vjp::run::<T, I>(b),
        _ => segment::run_float::<T, I>(op, b),
    }
}

/// One seed operator's call decoded from the input: data's shape, the index's and the
/// updates' derived from it (mostly valid, then perhaps broken), the values, and index values
/// near the edges of the dimension each addresses. `None` where a buffer would be absurd.
pub(crate) struct SeedCall<T, I> {
    pub(crate) ds: Vec<usize>,
    pub(crate) is: Vec<usize>,
    pub(crate) us: Vec<usize>,
    pub(crate) axis: i64,
    pub(crate) batch_dims: i64,
    pub(crate) data: Vec<T>,
    pub(crate) updates: Vec<T>,
    pub(crate) indices: Vec<I>,
}

pub(crate) fn decode_seed<T: Element, I: FromI128>(
    op: Op,
    b: &mut Bytes<'_>,
) -> Option<SeedCall<T, I>> {
    let rank = usize::from(b.u8() % 6);
    let ds = b.shape(rank);
    let axis = b.signed_attr(rank);
    let batch_dims = b.signed_attr(rank);
    let a = axis_ok(axis, rank).unwrap_or(0);
    // Index shape: derived from data's (mostly valid), then perhaps broken.
    let mut is: Vec<usize> = match op {
        Op::ScatterElements | Op::GatherElements => (0..rank)
            .map(|d| {
                if d == a {
                    b.small_dim()
                } else {
                    usize::from(b.u8()) % (ds[d].min(6) + 1)
                }
            })
            .collect(),
        Op::ScatterNd => {
            let mut s: Vec<usize> = (0..b.u8() % 3).map(|_| b.small_dim()).collect();
            s.push(usize::from(b.u8()) % (rank + 1));
            s
        }
        Op::GatherNd => {
            let nb = usize::try_from(batch_dims).unwrap_or(0).min(rank);
            let mut s = ds[..nb].to_vec();
            s.extend((0..b.u8() % 3).map(|_| b.small_dim()));
            s.push(usize::from(b.u8()) % (rank + 1 - nb.min(rank)).max(1) + 1);
            s
        }
        _ => {
            let mut s = if op == Op::Gather {
                let nb = usize::try_from(batch_dims).unwrap_or(0).min(a);
                ds[..nb].to_vec()
            } else {
                vec![]
            };
            s.extend((0..b.u8() % 3).map(|_| b.small_dim()));
            s
        }
    };
    b.break_shape(&mut is);
    let mut us: Vec<usize> = match op {
        Op::ScatterElements => is.clone(),
        Op::ScatterNd => match is.split_last() {
            Some((&k, t)) => [t, &ds[k.min(rank)..]].concat(),
            None => vec![],
        },
        Op::ScatterUpdate => [&ds[..a.min(rank)], &is, ds.get(a + 1..).unwrap_or(&[])].concat(),
        _ => vec![],
    };
    if b.flag(8) {
        match us.last_mut() {
            Some(d) => *d = d.wrapping_add(1) % 7,
            None => us.push(1),
        }
    }

    let data = values::<T>(b, &ds)?;
    let updates = values::<T>(b, &us)?;
    let n_idx = count(&is).filter(|&n| n <= 1 << 16)?;
    // The dimension each index element addresses, so values land near its edges.
    let k = is.last().copied().unwrap_or(1).max(1);
    let nd_base = match op {
        Op::GatherNd => usize::try_from(batch_dims).unwrap_or(0),
        _ => 0,
    };
    let indices: Vec<I> = (0..n_idx)
        .map(|i| {
            let dim = match op {
                Op::ScatterNd | Op::GatherNd => ds.get(nd_base + i % k).copied().unwrap_or(0),
                _ => ds.get(a).copied().unwrap_or(0),
            };
            I::wrap(b.index(dim))
        })
        .collect();
    Some(SeedCall {
        ds,
        is,
        us,
        axis,
        batch_dims,
        data,
        updates,
        indices,
    })
}

fn run<T: Element, I: FromI128>(op: Op, b: &mut Bytes<'_>) {
    let Some(SeedCall {
        ds,
        is,
        us,
        axis,
        batch_dims,
        data,
        updates,
        indices,
    }) = decode_seed::<T, I>(op, b)
    else {
        return;
    };

    let reduction = Reduction::ALL[usize::from(b.u8()) % Reduction::ALL.len()];
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
    let padded_data = b.flag(3);
    let poison = T::from_bits_u64(0x5a5a_5a5a_5a5a_5a5a);

    let data_buf = if padded_data {
        padded(&data, poison)
    } else {
        data.clone()
    };
    let data_view = if padded_data {
        let Some(strides) = contiguous_strides(&ds, 2) else {
            return;
        };
        gapped(&data_buf, &ds, &strides)
    } else {
        TensorView::new(&data_buf, &ds)
    };
    let idx_view = TensorView::new(&indices, &is);
    let upd_view = TensorView::new(&updates, &us);
    let (Ok(dv), Ok(iv), Ok(uv)) = (data_view, idx_view, upd_view) else {
        // A view whose strides overflow is refused at construction (an error, no panic).
        return;
    };

    let rule = rule_shape(op, &ds, &is, &us, axis, batch_dims);
    // Shapes the literal oracle cannot enumerate: ND tuples without components (k = 0) can
    // number 2⁴⁰ in an index tensor holding no elements, and a gather's output can be huge
    // while its inputs are tiny (data [2⁴⁰, 0] with fill). Such cases check the engine alone:
    // no panic or abort; a result of the rules' shape (and, for a scatter, data itself: no
    // update elements exist), or an error (OutOfMemory included).
    let tuples = is.split_last().map_or(Some(1), |(_, t)| count(t));
    let out_count = rule.as_deref().map(count);
    let engine_only = (matches!(op, Op::ScatterNd | Op::GatherNd)
        && tuples.is_none_or(|t| t > 1 << 16))
        || (matches!(op, Op::Gather | Op::GatherElements | Op::GatherNd)
            && out_count.is_some_and(|c| c.is_none_or(|c| c > 1 << 20)));
    match op {
        Op::ScatterElements | Op::ScatterNd | Op::ScatterUpdate => {
            let opts = scatter_opts(b, axis, reduction, negative, par);
            if engine_only {
                if let Ok(out) = tensor_scatter::scatter_nd(&dv, &iv, &uv, &opts) {
                    assert!(rule.is_some(), "scatter_nd: Ok on shapes the rules refuse");
                    assert!(
                        bits_of(out.as_slice()) == bits_of(&data),
                        "scatter_nd: changed data"
                    );
                }
                return;
            }
            let (engine, oracle) = match op {
                Op::ScatterElements => (
                    tensor_scatter::scatter_elements(&dv, &iv, &uv, &opts),
                    reference::scatter_elements(&dv, &iv, &uv, &opts),
                ),
                Op::ScatterNd => (
                    tensor_scatter::scatter_nd(&dv, &iv, &uv, &opts),
                    reference::scatter_nd(&dv, &iv, &uv, &opts),
                ),
                _ => (
                    tensor_scatter::scatter_update(&dv, &iv, &uv, &opts),
                    reference::scatter_update(&dv, &iv, &uv, &opts),
                ),
            };
            let oracle = compare(op, engine, oracle, rule.as_deref());
            // The in-place form into a poisoned padded destination.
            let mut dest = padded(&data, poison);
            let before = bits_of(&dest);
            let Some(strides) = contiguous_strides(&ds, 2) else {
                return;
            };
            let Ok(mut out) = gapped_mut(&mut dest, &ds, &strides) else {
                return;
            };
            let r = match op {
                Op::ScatterElements => {
                    tensor_scatter::scatter_elements_into(&mut out, &iv, &uv, &opts)
                }
                Op::ScatterNd => tensor_scatter::scatter_nd_into(&mut out, &iv, &uv, &opts),
                _ => tensor_scatter::scatter_update_into(&mut out, &iv, &uv, &opts),
            };
            check_into(op, r, &dest, &before, oracle.as_deref(), poison);
        }
        _ => {
            let opts = gather_opts::<T>(b, axis, batch_dims, negative, par);
            if engine_only {
                // A valid request for gigabytes is the caller's to make; the fuzzer only
                // checks outputs the machine can hold quickly (larger ones: shapes above).
                if out_count.is_some_and(|c| c.is_some_and(|c| c > 1 << 26)) {
                    return;
                }
                let r = match op {
                    Op::Gather => tensor_scatter::gather(&dv, &iv, &opts),
                    Op::GatherElements => tensor_scatter::gather_elements(&dv, &iv, &opts),
                    _ => tensor_scatter::gather_nd(&dv, &iv, &opts),
                };
                if let Ok(out) = r {
                    assert_eq!(
                        Some(out.shape()),
                        rule.as_deref(),
                        "{}: output shape",
                        op.name()
                    );
                }
                return;
            }
            let (engine, oracle) = match op {
                Op::Gather => (
                    tensor_scatter::gather(&dv, &iv, &opts),
                    reference::gather(&dv, &iv, &opts),
                ),
                Op::GatherElements => (
                    tensor_scatter::gather_elements(&dv, &iv, &opts),
                    reference::gather_elements(&dv, &iv, &opts),
                ),
                _ => (
                    tensor_scatter::gather_nd(&dv, &iv, &opts),
                    reference::gather_nd(&dv, &iv, &opts),
                ),
            };
            let oracle = compare(op, engine, oracle, rule.as_deref());
            // The into form, into a poisoned padded output of the rules' shape.
            let Some(out_shape) = rule.clone() else {
                return;
            };
            let Some(n) = count(&out_shape).filter(|&n| n <= 1 << 16) else {
                return;
            };
            let mut dest = vec![poison; 2 * n + 1];
            let before = bits_of(&dest);
            let Some(strides) = contiguous_strides(&out_shape, 2) else {
                return;
            };
            let Ok(mut out) = gapped_mut(&mut dest, &out_shape, &strides) else {
                return;
            };
            let r = match op {
                Op::Gather => tensor_scatter::gather_out(&dv, &iv, &mut out, &opts),
                Op::GatherElements => {
                    tensor_scatter::gather_elements_out(&dv, &iv, &mut out, &opts)
                }
                _ => tensor_scatter::gather_nd_out(&dv, &iv, &mut out, &opts),
            };
            check_into(op, r, &dest, &before, oracle.as_deref(), poison);
        }
    }
}

/// A scatter's options from the input (its index policy, `include_self`, accumulation).
pub(crate) fn scatter_opts(
    b: &mut Bytes<'_>,
    axis: i64,
    reduction: Reduction,
    negative: NegativeIndices,
    par: Par,
) -> ScatterOptions {
    let policy = IndexPolicy::new(
        negative,
        [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Skip][usize::from(b.u8() % 3)],
    );
    ScatterOptions::new()
        .axis(axis)
        .reduction(reduction)
        .include_self(!b.flag(3))
        .index_policy(policy)
        .accumulation(if b.flag(4) {
            Accumulation::Wide
        } else {
            Accumulation::PerUpdate
        })
        .par(par)
}

/// A gather's options from the input (its fill value and out-of-range rule).
pub(crate) fn gather_opts<T: Element>(
    b: &mut Bytes<'_>,
    axis: i64,
    batch_dims: i64,
    negative: NegativeIndices,
    par: Par,
) -> GatherOptions<T> {
    let fill = T::from_bits_u64(b.bits(std::mem::size_of::<T>()));
    let out_of_range = [
        GatherOutOfRange::Error,
        GatherOutOfRange::Clamp,
        GatherOutOfRange::Fill,
    ][usize::from(b.u8() % 3)];
    GatherOptions::new()
        .axis(axis)
        .batch_dims(batch_dims)
        .negative(negative)
        .out_of_range(out_of_range)
        .fill_value(fill)
        .par(par)
}

/// Engine against oracle, and the oracle against the shape rules. Returns the oracle's
/// output bits on success.
fn compare<T: Element>(
    op: Op,
    engine: tensor_scatter::Result<tensor_scatter::Tensor<T>>,
    oracle: tensor_scatter::Result<tensor_scatter::Tensor<T>>,
    rule: Option<&[usize]>,
) -> Option<Vec<u64>> {
    match (engine, oracle) {
        (Ok(e), Ok(o)) => {
            assert_eq!(e.shape(), o.shape(), "{}: output shapes differ", op.name());
            assert_eq!(
                Some(o.shape()),
                rule,
                "{}: the oracle accepted shapes the rules give another output for",
                op.name()
            );
            let (eb, ob) = (bits_of(e.as_slice()), bits_of(o.as_slice()));
            assert!(eb == ob, "{}: engine and oracle differ", op.name());
            Some(ob)
        }
        (Err(e), Err(o)) => {
            assert!(
                same_error(&e, &o),
                "{}: different errors: engine {e:?}, oracle {o:?}",
                op.name()
            );
            let _ = e.to_string();
            None
        }
        (Ok(_), Err(o)) => panic!("{}: engine Ok, oracle Err {o:?}", op.name()),
        (Err(e), Ok(_)) => panic!("{}: engine Err {e:?}, oracle Ok", op.name()),
    }
}

/// After an `_into` call: untouched on error; on success the oracle's values at the odd
/// positions and the poison everywhere else.
fn check_into(
    op: Op,
    r: tensor_scatter::Result<()>,
    dest_bits_src: &[impl Element],
    before: &[u64],
    oracle: Option<&[u64]>,
    poison: impl Element,
) {
    let after = bits_of(dest_bits_src);
    match (r, oracle) {
        (Err(_), _) => assert!(after == before, "{}: a failed _into wrote", op.name()),
        (Ok(()), Some(o)) => {
            for (i, &x) in after.iter().enumerate() {
                if i % 2 == 1 {
                    assert_eq!(x, o[i / 2], "{}: _into differs from the oracle", op.name());
                } else {
                    assert_eq!(
                        x,
                        poison.to_bits_u64(),
                        "{}: _into wrote padding",
                        op.name()
                    );
                }
            }
        }
        (Ok(()), None) => panic!("{}: _into succeeded where the oracle failed", op.name()),
    }
}
