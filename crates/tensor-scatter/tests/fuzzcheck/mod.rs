//! The fuzz check, shared by the `cargo fuzz` targets and the stable replay/sweep test
//! (tests/fuzz_replay.rs, where it is a module). For `cargo fuzz` this file is the root of the
//! fuzz package's library (`fuzzcheck`, fuzz/Cargo.toml), so its generic code over every dtype
//! and operator is compiled and instrumented once, and the six targets are thin wrappers that
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

use std::mem::discriminant;

use tensor_scatter::half::{bf16, f16};
use tensor_scatter::{
    Accumulation, Element, Error, GatherOptions, GatherOutOfRange, IndexInt, IndexPolicy,
    NegativeIndices, OutOfRange, Par, Reduction, ScatterOptions, TensorView, TensorViewMut,
    reference,
};

/// The operator a fuzz target drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    ScatterElements,
    ScatterNd,
    ScatterUpdate,
    Gather,
    GatherElements,
    GatherNd,
}

pub const OPS: [Op; 6] = [
    Op::ScatterElements,
    Op::ScatterNd,
    Op::ScatterUpdate,
    Op::Gather,
    Op::GatherElements,
    Op::GatherNd,
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
        }
    }
}

/// Reads the fuzz input; past the end every read is 0.
struct Bytes<'a> {
    b: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let v = self.b.get(self.at).copied().unwrap_or(0);
        self.at = self.at.saturating_add(1);
        v
    }
    fn u64(&mut self) -> u64 {
        (0..8).fold(0u64, |acc, i| acc | (u64::from(self.u8()) << (8 * i)))
    }
    fn flag(&mut self, one_in: u8) -> bool {
        self.u8().is_multiple_of(one_in)
    }
    /// A dimension: mostly 0..=6, rarely huge (only valid where another dim is 0).
    fn dim(&mut self) -> usize {
        match self.u8() {
            0..=243 => usize::from(self.u8() % 7),
            244..=247 => 1 << 31,
            248..=251 => 1 << 40,
            252..=253 => usize::MAX,
            _ => 0,
        }
    }
    fn small_dim(&mut self) -> usize {
        usize::from(self.u8() % 5)
    }
    fn shape(&mut self, rank: usize) -> Vec<usize> {
        (0..rank).map(|_| self.dim()).collect()
    }
    /// An axis or batch_dims: mostly in [-rank-1, rank], rarely an extreme.
    fn signed_attr(&mut self, rank: usize) -> i64 {
        let r = rank as i64;
        match self.u8() {
            0..=239 => i64::from(self.u8()) % (2 * r + 3) - r - 1,
            240..=243 => i64::MIN,
            244..=247 => i64::MAX,
            248..=251 => r,
            _ => -r - 1,
        }
    }
    /// An index value for a dimension of `size`, biased towards the edges.
    fn index(&mut self, size: usize) -> i128 {
        let s = size as i128;
        match self.u8() {
            0..=179 => {
                if s == 0 {
                    0
                } else {
                    i128::from(self.u8()) % (2 * s) - s
                }
            }
            180..=189 => s,
            190..=199 => -s - 1,
            200..=204 => s + 1,
            205..=209 => -1,
            210..=214 => 0,
            215..=219 => 1 << 31,
            220..=224 => 1 << 32,
            225..=229 => i128::from(i64::MIN),
            230..=234 => i128::from(i64::MAX),
            235..=239 => i128::from(u64::MAX),
            240..=244 => -(1 << 31),
            _ => i128::from(self.u64() as i64),
        }
    }
    /// A value's bits: small patterns mostly, then the edges of the type's width.
    fn bits(&mut self, width: usize) -> u64 {
        let top = 1u64 << (8 * width - 1);
        match self.u8() {
            0..=199 => u64::from(self.u8() % 9),
            200..=214 => self.u64(),
            215..=224 => u64::MAX, // NaN with payload / -1 / MAX
            225..=234 => top,      // -0.0 / MIN
            235..=244 => top - 1,  // largest finite-ish / MAX
            _ => match width {
                2 => 0x7c00,                // f16 inf (bf16: a large finite)
                4 => 0x7f80_0000,           // f32 inf
                _ => 0x7ff0_0000_0000_0000, // f64 inf
            },
        }
    }
}

/// Index dtypes built from any i128 by wrapping (as a buffer of raw index data would hold).
pub(crate) trait FromI128: IndexInt {
    fn wrap(v: i128) -> Self;
}
macro_rules! from_i128 {
    ($($t:ty),*) => {$(impl FromI128 for $t { fn wrap(v: i128) -> Self { v as $t } })*};
}
from_i128!(i8, i16, i32, i64, u8, u16, u32, u64);

fn count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// A contiguous buffer of `shape` filled from the input, or `None` when the element count
/// is absurd (a huge dim without a zero dim: no caller could hold such a buffer either).
fn values<T: Element>(b: &mut Bytes<'_>, shape: &[usize]) -> Option<Vec<T>> {
    let n = count(shape).filter(|&n| n <= 1 << 16)?;
    let w = std::mem::size_of::<T>();
    Some((0..n).map(|_| T::from_bits_u64(b.bits(w))).collect())
}

/// A poisoned padded copy: element `i` of `v` at `2·i + 1`, poison elsewhere.
fn padded<T: Element>(v: &[T], poison: T) -> Vec<T> {
    let mut out = vec![poison; 2 * v.len() + 1];
    for (i, &x) in v.iter().enumerate() {
        out[2 * i + 1] = x;
    }
    out
}

/// Every other element of `buf` from position 1 (a [`padded`] buffer) as a view with gaps,
/// made from raw parts as a binding would: the poisoned positions between the elements belong
/// to nobody the view may touch.
fn gapped<'a, T: Element>(
    buf: &'a [T],
    shape: &[usize],
    strides: &[isize],
) -> tensor_scatter::Result<TensorView<'a, T>> {
    let v = TensorView::with_strides(buf, 1, shape, strides)?;
    if v.is_empty() {
        return Ok(v);
    }
    // SAFETY: `with_strides` showed every element lies in `buf`, borrowed for 'a.
    unsafe { TensorView::from_raw_parts(buf.as_ptr().add(1), shape, strides) }
}

/// [`gapped`], writable.
fn gapped_mut<'a, T: Element>(
    buf: &'a mut [T],
    shape: &[usize],
    strides: &[isize],
) -> tensor_scatter::Result<TensorViewMut<'a, T>> {
    if shape.contains(&0) {
        return TensorViewMut::with_strides(buf, 1, shape, strides);
    }
    TensorViewMut::with_strides(&mut *buf, 1, shape, strides)?;
    // SAFETY: as in `gapped` (the check just above), with `buf` borrowed exclusively for 'a.
    unsafe { TensorViewMut::from_raw_parts(buf.as_mut_ptr().add(1), shape, strides) }
}

fn contiguous_strides(shape: &[usize], scale: isize) -> Option<Vec<isize>> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc: isize = scale;
    for d in (0..shape.len()).rev() {
        strides[d] = acc;
        acc = acc.checked_mul(isize::try_from(shape[d].max(1)).ok()?)?;
    }
    Some(strides)
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
    }
}

/// Runs one fuzz input for `op`; panics on any broken promise (see the module docs).
pub fn check(op: Op, input: &[u8]) {
    let mut b = Bytes { b: input, at: 0 };
    // Every data dtype and every index dtype, in 13 pairs.
    match b.u8() % 13 {
        0 => run::<f32, i64>(op, &mut b),
        1 => run::<f16, i32>(op, &mut b),
        2 => run::<bf16, u8>(op, &mut b),
        3 => run::<f64, i8>(op, &mut b),
        4 => run::<i8, u64>(op, &mut b),
        5 => run::<i32, i16>(op, &mut b),
        6 => run::<u8, u16>(op, &mut b),
        7 => run::<u64, u32>(op, &mut b),
        8 => run::<bool, i64>(op, &mut b),
        9 => run::<i16, i8>(op, &mut b),
        10 => run::<u16, i64>(op, &mut b),
        11 => run::<u32, u64>(op, &mut b),
        _ => run::<i64, i32>(op, &mut b),
    }
}

fn run<T: Element, I: FromI128>(op: Op, b: &mut Bytes<'_>) {
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
        Op::ScatterUpdate | Op::Gather => {
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
    if b.flag(8) {
        match b.u8() % 3 {
            0 => is.push(b.small_dim()),
            1 => {
                is.pop();
            }
            _ => {
                if let Some(d) = is.first_mut() {
                    *d = b.dim();
                }
            }
        }
    }
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

    let Some(data) = values::<T>(b, &ds) else {
        return;
    };
    let Some(updates) = values::<T>(b, &us) else {
        return;
    };
    let Some(n_idx) = count(&is).filter(|&n| n <= 1 << 16) else {
        return;
    };
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
            let policy = IndexPolicy::new(
                negative,
                [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Skip][usize::from(b.u8() % 3)],
            );
            let opts = ScatterOptions::new()
                .axis(axis)
                .reduction(reduction)
                .include_self(!b.flag(3))
                .index_policy(policy)
                .accumulation(if b.flag(4) {
                    Accumulation::Wide
                } else {
                    Accumulation::PerUpdate
                })
                .par(par);
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
        Op::Gather | Op::GatherElements | Op::GatherNd => {
            let fill = T::from_bits_u64(b.bits(std::mem::size_of::<T>()));
            let opts = GatherOptions::new()
                .axis(axis)
                .batch_dims(batch_dims)
                .negative(negative)
                .out_of_range(
                    [
                        GatherOutOfRange::Error,
                        GatherOutOfRange::Clamp,
                        GatherOutOfRange::Fill,
                    ][usize::from(b.u8() % 3)],
                )
                .fill_value(fill)
                .par(par);
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
