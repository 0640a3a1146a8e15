//! The gather inverses: `gather`, `gather_elements` and `gather_nd`.
//!
//! Each is the read-side mirror of a scatter with the same index semantics:
//!
//! | gather | mirrors | output shape |
//! |---|---|---|
//! | [`gather`] | [`scatter_update`](crate::scatter_update) | `data[..axis] ++ indices[b..] ++ data[axis+1..]` |
//! | [`gather_elements`] | [`scatter_elements`](crate::scatter_elements) | `indices.shape` |
//! | [`gather_nd`] | [`scatter_nd`](crate::scatter_nd) | `indices[..q-1] ++ data[b+k..]` |
//!
//! The data path is the scatters': a shape-only plan, then a read-only pass over every index
//! (an error names the first bad one in row-major order, before anything is written), then
//! an infallible kernel that moves every dtype as the unsigned integer of its width, in
//! parallel over disjoint output ranges.

use std::borrow::Cow;

use super::{contiguous_data, is_contiguous};
use crate::dtype::Element;
use crate::error::{Error, ErrorKind, Result};
use crate::index::{
    Fault, IndexInt, IndexPolicy, NegativeIndices, OutOfRange, accepted_range, with_native_indices,
};
use crate::kernels::gather::{Bits, Comp, ElemGeom, Geom, Job, SliceGeom, as_bits};
use crate::kernels::{self, DestPtr};
use crate::par::Par;
use crate::shape::{Odometer, contiguous_strides, normalize_axis, numel, sat_product};
use crate::view::{Tensor, TensorView, TensorViewMut};

/// What a gather does with an index outside its dimension (after the negative-index rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum GatherOutOfRange {
    /// An error before anything is written (ONNX, DirectML, BNNS, PyTorch, NumPy).
    #[default]
    Error,
    /// Clamp to `[0, s - 1]` (JAX `mode='clip'`, NumPy `mode='clip'`); an error when `s == 0`.
    Clamp,
    /// The whole gathered slice (or element) is [`GatherOptions::fill_value`] (OpenVINO
    /// Gather-8 with zero, JAX `mode='fill'`). For `gather_nd` a tuple with any component out
    /// of range fills its slice.
    Fill,
}

/// Options of the three gathers; `T` is the element type (the type of `fill_value`).
///
/// Defaults follow ONNX: axis 0, no batch dims, negative indices wrap once, out-of-range
/// indices are an error; the fill value (used only with [`GatherOutOfRange::Fill`]) is zero.
///
/// ```
/// use tensor_scatter::{GatherOptions, GatherOutOfRange, NegativeIndices};
/// let o = GatherOptions::new().axis(-1).batch_dims(1).out_of_range(GatherOutOfRange::Fill).fill_value(-1i32);
/// assert_eq!((o.axis, o.batch_dims, o.fill_value), (-1, 1, -1));
/// assert_eq!(o.negative, NegativeIndices::Wrap);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[non_exhaustive]
pub struct GatherOptions<T> {
    /// The axis of `gather` and `gather_elements`, in `[-rank, rank)`; ignored by `gather_nd`.
    pub axis: i64,
    /// Leading dims shared by `data` and `indices` (`gather`: in `[-q, q]`, normalised by the
    /// rank `q` of indices, at most the axis; `gather_nd`: in `[0, q)`); ignored by
    /// `gather_elements`.
    pub batch_dims: i64,
    /// What a negative index means.
    pub negative: NegativeIndices,
    /// What an index outside its dimension means.
    pub out_of_range: GatherOutOfRange,
    /// The value of every element gathered by an out-of-range index under
    /// [`GatherOutOfRange::Fill`].
    pub fill_value: T,
    /// How many threads to use. Never changes the result.
    pub par: Par,
}

impl<T: Default> GatherOptions<T> {
    /// The defaults (ONNX semantics, fill value zero).
    pub fn new() -> Self {
        Self::default()
    }
}

impl<T> GatherOptions<T> {
    /// Sets the axis.
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = axis;
        self
    }
    /// Sets the number of batch dims.
    pub fn batch_dims(mut self, batch_dims: i64) -> Self {
        self.batch_dims = batch_dims;
        self
    }
    /// Sets the negative-index rule.
    pub fn negative(mut self, negative: NegativeIndices) -> Self {
        self.negative = negative;
        self
    }
    /// Sets the out-of-range rule.
    pub fn out_of_range(mut self, out_of_range: GatherOutOfRange) -> Self {
        self.out_of_range = out_of_range;
        self
    }
    /// Sets the fill value (used with [`GatherOutOfRange::Fill`]).
    pub fn fill_value(mut self, fill_value: T) -> Self {
        self.fill_value = fill_value;
        self
    }
    /// Sets the thread setting.
    pub fn par(mut self, par: Par) -> Self {
        self.par = par;
        self
    }
    /// The same options with another fill value (and so another element type).
    pub fn with_fill<U>(self, fill_value: U) -> GatherOptions<U> {
        GatherOptions {
            axis: self.axis,
            batch_dims: self.batch_dims,
            negative: self.negative,
            out_of_range: self.out_of_range,
            fill_value,
            par: self.par,
        }
    }
    /// The scatter-side [`IndexPolicy`] these options resolve indices with (`Fill` resolves
    /// like `Skip`: the index selects nothing).
    pub(crate) fn policy(&self) -> IndexPolicy {
        IndexPolicy::new(
            self.negative,
            match self.out_of_range {
                GatherOutOfRange::Error => OutOfRange::Error,
                GatherOutOfRange::Clamp => OutOfRange::Clamp,
                GatherOutOfRange::Fill => OutOfRange::Skip,
            },
        )
    }
}

/// The shape-only plan of one gather (for contiguous `data` and `indices`).
#[derive(Clone, Debug)]
pub(crate) struct GatherPlan {
    op: &'static str,
    pub(crate) out_shape: Vec<usize>,
    pub(crate) out_numel: usize,
    geom: Geom,
    /// The data dimension and size component `j` of an index tuple addresses.
    comps: Vec<(usize, usize)>,
}

type Planner = fn(&[usize], &[usize], i64, i64) -> Result<GatherPlan>;

fn out_numel(op: &'static str, shape: &[usize]) -> Result<usize> {
    let n = numel(op, "indices", shape)?;
    if n > isize::MAX as usize / 8 {
        return Err(Error::overflow(op, "indices"));
    }
    Ok(n)
}

fn batch_shape_error(op: &'static str, b: usize, data: &[usize], idx: &[usize]) -> Error {
    Error::shape(
        op,
        "indices",
        format!(
            "leading {b} batch dimension(s) equal to data's {:?}",
            &data[..b]
        ),
        idx,
    )
}

const GATHER: &str = "gather";
const GATHER_ELEMENTS: &str = "gather_elements";
const GATHER_ND: &str = "gather_nd";

/// `gather`: `out[B…, O…, I…, S…] = data[B…, O…, indices[B…, I…], S…]`.
pub(crate) fn plan_gather(
    d: &[usize],
    q: &[usize],
    axis: i64,
    batch_dims: i64,
) -> Result<GatherPlan> {
    let op = GATHER;
    let a = normalize_axis(op, "axis", axis, d.len())?;
    let b = i128::from(batch_dims) + if batch_dims < 0 { q.len() as i128 } else { 0 };
    if b < 0 || b > q.len() as i128 {
        return Err(Error::invalid(
            op,
            "batch_dims",
            format!(
                "batch_dims {batch_dims} is outside [-{0}, {0}] for indices of rank {0}",
                q.len()
            ),
        ));
    }
    let b = b as usize;
    if b > a {
        return Err(Error::invalid(
            op,
            "batch_dims",
            format!("batch_dims {b} exceeds the axis {a}"),
        ));
    }
    if d[..b] != q[..b] {
        return Err(batch_shape_error(op, b, d, q));
    }
    let out_shape = [&d[..a], &q[b..], &d[a + 1..]].concat();
    let inner = sat_product(&d[a + 1..]);
    Ok(GatherPlan {
        op,
        out_numel: out_numel(op, &out_shape)?,
        out_shape,
        geom: Geom::Slices(SliceGeom {
            lead_n: sat_product(&d[..a]),
            tuple_n: sat_product(&q[b..]),
            batch_div: sat_product(&d[b..a]),
            lead_data: d[a].saturating_mul(inner),
            comps: vec![Comp {
                size: d[a],
                stride: inner,
            }],
            slice: inner,
        }),
        comps: vec![(a, d[a])],
    })
}

/// `gather_elements`: `out[c] = data[c with c[axis] := indices[c]]`.
pub(crate) fn plan_gather_elements(
    d: &[usize],
    q: &[usize],
    axis: i64,
    _: i64,
) -> Result<GatherPlan> {
    let op = GATHER_ELEMENTS;
    let r = d.len();
    let a = normalize_axis(op, "axis", axis, r)?;
    if q.len() != r {
        return Err(Error::rank(
            op,
            "indices",
            format!("rank of data ({r})"),
            q.len(),
        ));
    }
    if let Some(dim) = (0..r).find(|&x| x != a && q[x] > d[x]) {
        return Err(Error::shape(
            op,
            "indices",
            format!(
                "extent at most data's {d:?} on every dimension except the axis {a} (dimension {dim} is {})",
                q[dim]
            ),
            q,
        ));
    }
    Ok(GatherPlan {
        op,
        out_numel: out_numel(op, q)?,
        out_shape: q.to_vec(),
        geom: Geom::Elements(ElemGeom {
            shape: q.to_vec(),
            data_strides: contiguous_strides(d).iter().map(|&s| s as usize).collect(),
            axis: a,
            axis_size: d[a],
        }),
        comps: vec![(a, d[a])],
    })
}

/// `gather_nd`: `out[B…, T…, S…] = data[B…, indices[B…, T…, 0], …, indices[B…, T…, k-1], S…]`.
pub(crate) fn plan_gather_nd(
    d: &[usize],
    q: &[usize],
    _: i64,
    batch_dims: i64,
) -> Result<GatherPlan> {
    let op = GATHER_ND;
    let Some((&k, tuple)) = q.split_last() else {
        return Err(Error::rank(op, "indices", "rank of at least 1".into(), 0));
    };
    if batch_dims < 0 || batch_dims as u64 >= q.len() as u64 {
        return Err(Error::invalid(
            op,
            "batch_dims",
            format!(
                "batch_dims {batch_dims} is outside [0, {}) for indices of rank {}",
                q.len(),
                q.len()
            ),
        ));
    }
    let b = batch_dims as usize;
    if b.saturating_add(k) > d.len() {
        return Err(Error::shape(
            op,
            "indices",
            format!(
                "a last dimension (tuple length {k}) at most the rank of data ({}) minus batch_dims ({b})",
                d.len()
            ),
            q,
        ));
    }
    if d[..b] != q[..b] {
        return Err(batch_shape_error(op, b, d, q));
    }
    let out_shape = [tuple, &d[b + k..]].concat();
    let comps: Vec<(usize, usize)> = (b..b + k).map(|x| (x, d[x])).collect();
    Ok(GatherPlan {
        op,
        out_numel: out_numel(op, &out_shape)?,
        out_shape,
        geom: Geom::Slices(SliceGeom {
            lead_n: sat_product(&d[..b]),
            tuple_n: sat_product(&tuple[b..]),
            batch_div: 1,
            lead_data: sat_product(&d[b..]),
            comps: comps
                .iter()
                .map(|&(x, size)| Comp {
                    size,
                    stride: sat_product(&d[x + 1..]),
                })
                .collect(),
            slice: sat_product(&d[b + k..]),
        }),
        comps,
    })
}

/// The elements of a view in row-major order, borrowed when it is contiguous.
fn flat<'a, T: Copy>(v: &TensorView<'a, T>) -> Cow<'a, [T]> {
    match contiguous_data(v) {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(v.to_vec()),
    }
}

/// Indices per block of the parallel range check (a multiple of every tuple length).
const CHECK_BLOCK: usize = 1 << 14;

/// The read-only index pass: every index against its component's accepted range, in
/// parallel blocks; the first failing position in row-major order is described precisely.
fn validate<I: IndexInt>(
    plan: &GatherPlan,
    idx: &[I],
    idx_shape: &[usize],
    policy: IndexPolicy,
    threads: usize,
) -> Result<()> {
    let k = plan.comps.len();
    if k == 0 || idx.is_empty() {
        return Ok(());
    }
    let ranges: Vec<(i64, i64)> = plan
        .comps
        .iter()
        .map(|&(_, size)| accepted_range(size, policy))
        .collect();
    let ok = |j: usize, x: &I| {
        let (lo, hi) = ranges[j];
        (lo..=hi).contains(&x.to_i64_sat())
    };
    let block = CHECK_BLOCK * k;
    let tasks = crate::par::task_count(threads, std::mem::size_of_val(idx), 1);
    let first_bad = std::sync::atomic::AtomicUsize::new(usize::MAX);
    let level = crate::isa::active_level();
    crate::par::run_tasks(threads, tasks, |t| {
        use std::sync::atomic::Ordering::Relaxed;
        let (a, b) = crate::par::part(idx.len(), tasks, t, k);
        for start in (a..b).step_by(block) {
            if start > first_bad.load(Relaxed) {
                return; // an earlier failure is already known
            }
            let chunk = &idx[start..(start + block).min(b)];
            let good = if k == 1 {
                kernels::simd::all_in_range(level, chunk, ranges[0].0, ranges[0].1)
            } else {
                chunk
                    .iter()
                    .enumerate()
                    .fold(true, |acc, (i, x)| acc & ok(i % k, x))
            };
            if !good {
                let j = chunk
                    .iter()
                    .enumerate()
                    .position(|(i, x)| !ok(i % k, x))
                    .unwrap_or(0);
                first_bad.fetch_min(start + j, Relaxed);
                return;
            }
        }
    });
    match first_bad.into_inner() {
        usize::MAX => Ok(()),
        bad => Err(index_error(plan, idx, idx_shape, bad, policy)),
    }
}

/// The error for the index at flat position `bad`.
fn index_error<I: IndexInt>(
    plan: &GatherPlan,
    idx: &[I],
    idx_shape: &[usize],
    bad: usize,
    policy: IndexPolicy,
) -> Error {
    let (dim, size) = plan.comps[bad % plan.comps.len()];
    let value = idx[bad].to_i128();
    let mut position = vec![0; idx_shape.len()];
    let mut rest = bad;
    for (p, &n) in position.iter_mut().zip(idx_shape).rev() {
        *p = rest % n.max(1);
        rest /= n.max(1);
    }
    let op = plan.op;
    Error::new(match crate::index::resolve(value, size, policy) {
        Err(Fault::Negative) => ErrorKind::NegativeIndex {
            op,
            arg: "indices",
            position,
            value,
            dim,
        },
        // Ok is unreachable: the range test mirrors `resolve`.
        _ => ErrorKind::IndexOutOfRange {
            op,
            arg: "indices",
            position,
            value,
            dim,
            size,
        },
    })
}

/// Runs the kernel into `dest` (`plan.out_numel` cells), moving `T` as `U`.
fn execute_as<T: Element, U: Bits, I: IndexInt>(
    plan: &GatherPlan,
    data: &[T],
    idx: &[I],
    opts: &GatherOptions<T>,
    dest: DestPtr<'_, T>,
) {
    // SAFETY: `U` is the unsigned integer of `T`'s size (chosen by `execute`; both helpers
    // assert size and alignment), and the kernel writes only bits read from `data` or the
    // fill value, all valid `T`s.
    let (data, dest) = unsafe { (as_bits::<T, U>(data), dest.cast::<U>()) };
    let job = Job {
        data,
        idx,
        policy: opts.policy(),
        fill: U::truncate(opts.fill_value.to_bits_u64()),
        threads: opts.par.threads(),
        level: crate::isa::active_level(),
    };
    kernels::gather::run(&plan.geom, &job, dest, plan.out_numel);
}

/// The byte-width dispatch.
fn execute<T: Element, I: IndexInt>(
    plan: &GatherPlan,
    data: &[T],
    idx: &[I],
    opts: &GatherOptions<T>,
    dest: DestPtr<'_, T>,
) {
    // An empty output has nothing to write; its tuple count need not be bounded by any buffer
    // (GatherND with k = 0 and indices [2⁴⁰, 0]), so the kernels must not walk it (found by
    // the fuzzer as an input that ran for minutes).
    if plan.out_numel == 0 {
        return;
    }
    match std::mem::size_of::<T>() {
        1 => execute_as::<T, u8, I>(plan, data, idx, opts, dest),
        2 => execute_as::<T, u16, I>(plan, data, idx, opts, dest),
        4 => execute_as::<T, u32, I>(plan, data, idx, opts, dest),
        _ => execute_as::<T, u64, I>(plan, data, idx, opts, dest),
    }
}

/// Plans, checks a caller-provided output's shape (when given), then checks every index;
/// returns the plan and `indices` in row-major order.
fn prepare<'a, T: Element, I: IndexInt>(
    planner: Planner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'a, I>,
    out_shape: Option<&[usize]>,
    opts: &GatherOptions<T>,
) -> Result<(GatherPlan, Cow<'a, [I]>)> {
    let plan = planner(
        &data.layout.shape,
        &indices.layout.shape,
        opts.axis,
        opts.batch_dims,
    )?;
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
    let idx = flat(indices);
    validate(
        &plan,
        &idx,
        &indices.layout.shape,
        opts.policy(),
        opts.par.threads(),
    )?;
    Ok((plan, idx))
}

fn build<T: Element, I: IndexInt>(
    plan: &GatherPlan,
    data: &TensorView<'_, T>,
    idx: &[I],
    opts: &GatherOptions<T>,
) -> Result<Vec<T>> {
    let data = flat(data);
    // SAFETY: both geometries write every one of the `out_numel` cells (slices: every row,
    // copied or filled; elements: every element).
    unsafe {
        kernels::build_vec(
            plan.out_numel,
            |bytes| Error::out_of_memory(plan.op, "output", bytes),
            |dest| {
                execute(plan, &data, idx, opts, dest);
                Ok(())
            },
        )
    }
}

fn run_alloc<T: Element, I: IndexInt>(
    op: &'static str,
    planner: Planner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    with_native_indices!(op, indices, idx => alloc(planner, data, idx, opts))
}

fn alloc<T: Element, I: IndexInt>(
    planner: Planner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    let (plan, idx) = prepare(planner, data, indices, None, opts)?;
    let out = build(&plan, data, &idx, opts)?;
    Ok(Tensor {
        data: out,
        shape: plan.out_shape,
    })
}

fn run_into<T: Element, I: IndexInt>(
    op: &'static str,
    planner: Planner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    with_native_indices!(op, indices, idx => into(planner, data, idx, out, opts))
}

fn into<T: Element, I: IndexInt>(
    planner: Planner,
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    let (plan, idx) = prepare(planner, data, indices, Some(&out.layout.shape), opts)?;
    let l = &out.layout;
    if is_contiguous(l) {
        let cells = &mut out.data[l.offset..l.offset + l.numel];
        execute(&plan, &flat(data), &idx, opts, DestPtr::new(cells));
    } else {
        let tmp = build(&plan, data, &idx, opts)?;
        let mut odo = Odometer::new(&l.shape, [&l.strides], [l.offset as isize], l.numel);
        for &v in &tmp {
            if let Some([p]) = odo.next_offsets() {
                out.data[p as usize] = v;
            }
        }
    }
    Ok(())
}

/// Gathers whole slices along an axis (ONNX Gather, OpenVINO Gather-8, torch `index_select`,
/// NumPy `take`, BNNSGather with 1-D indices), with optional batch dims:
///
/// `out[b…, o…, i…, s…] = data[b…, o…, indices[b…, i…], s…]`, where `b` spans the first
/// `batch_dims` dims (shared by data and indices), `o` the data dims before the axis, `i` the
/// remaining indices dims and `s` the data dims after the axis. Output shape:
/// `data[..axis] ++ indices[batch_dims..] ++ data[axis+1..]`.
///
/// # Errors
/// Axis outside `[-r, r)` (so rank-0 data); `batch_dims` outside `[-q, q]` or above the axis;
/// batch dims of data and indices that differ; any index rejected by the negative-index rule
/// or out of range under [`GatherOutOfRange::Error`] (or `Clamp` on an empty axis). Every
/// index is checked, even when the output is empty.
///
/// # Examples
///
/// ```
/// use tensor_scatter::{gather, GatherOptions, GatherOutOfRange, TensorView};
/// // OpenVINO Gather-8's example: out-of-range indices give zeros.
/// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
/// let out = gather(
///     &TensorView::new(&data, &[5]).unwrap(),
///     &TensorView::new(&[3i64, 10, -20], &[3]).unwrap(),
///     &GatherOptions::new().out_of_range(GatherOutOfRange::Fill),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice(), &[4.0, 0.0, 0.0]);
/// ```
pub fn gather<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    run_alloc("gather", plan_gather, data, indices, opts)
}

/// [`gather`] into a caller-provided output of the gathered shape (may be strided).
///
/// # Errors
/// As [`gather`], plus an `out` whose shape is not the gathered shape; on error `out` is
/// unchanged.
///
/// ```
/// use tensor_scatter::{gather_into, GatherOptions, TensorView, TensorViewMut};
/// // Rows 2 and 0 of a 3 × 2 matrix, into a reused buffer.
/// let mut out = [0u8; 4];
/// gather_into(
///     &TensorView::new(&[1u8, 2, 3, 4, 5, 6], &[3, 2]).unwrap(),
///     &TensorView::new(&[2u32, 0], &[2]).unwrap(),
///     &mut TensorViewMut::new(&mut out, &[2, 2]).unwrap(),
///     &GatherOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out, [5, 6, 1, 2]);
/// ```
pub fn gather_into<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    run_into("gather", plan_gather, data, indices, out, opts)
}

/// Gathers elements along an axis (ONNX GatherElements, torch `gather`, NumPy
/// `take_along_axis`, BNNSGather with same-rank indices):
///
/// `out[c] = data[c₀, …, indices[c], …, c_{r-1}]` (the index replaces coordinate `axis`).
/// Output shape: `indices.shape`; `indices` has data's rank and on every dimension except the
/// axis an extent at most data's.
///
/// # Errors
/// Axis outside `[-r, r)`; a rank of indices other than data's; an extent of indices larger
/// than data's off the axis; any index rejected by the policy (as [`gather`]).
///
/// ```
/// use tensor_scatter::{gather_elements, GatherOptions, TensorView};
/// // DirectML GATHER_ELEMENTS' example: output[y, x] = input[indices[y, x], x].
/// let out = gather_elements(
///     &TensorView::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], &[3, 3]).unwrap(),
///     &TensorView::new(&[1u32, 2, 0, 2, 0, 0], &[2, 3]).unwrap(),
///     &GatherOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out.as_slice(), &[4.0, 8.0, 3.0, 7.0, 2.0, 3.0]);
/// ```
pub fn gather_elements<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    run_alloc("gather_elements", plan_gather_elements, data, indices, opts)
}

/// [`gather_elements`] into a caller-provided output of indices' shape (may be strided).
///
/// # Errors
/// As [`gather_elements`], plus an `out` of another shape; on error `out` is unchanged.
///
/// ```
/// use tensor_scatter::{gather_elements_into, GatherOptions, TensorView, TensorViewMut};
/// let mut out = [0i64; 2];
/// gather_elements_into(
///     &TensorView::new(&[10i64, 20, 30], &[3]).unwrap(),
///     &TensorView::new(&[-1i8, 0], &[2]).unwrap(),
///     &mut TensorViewMut::new(&mut out, &[2]).unwrap(),
///     &GatherOptions::new(),
/// )
/// .unwrap();
/// assert_eq!(out, [30, 10]);
/// ```
pub fn gather_elements_into<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    run_into(
        "gather_elements",
        plan_gather_elements,
        data,
        indices,
        out,
        opts,
    )
}

/// Gathers slices addressed by index tuples (ONNX GatherND, TF `gather_nd`, OpenVINO
/// GatherND-8, DirectML GATHER_ND1, BNNSGatherND), with optional batch dims:
///
/// `out[b…, t…, s…] = data[b…, indices[b…, t…, 0], …, indices[b…, t…, k-1], s…]`, where
/// `k = indices.shape[-1]` and each component is checked against its own dimension. Output
/// shape: `indices[..q-1] ++ data[batch_dims + k..]`. `k = 0` gathers the whole (batch) slice
/// per tuple (TF's rule; ONNX requires `k ≥ 1`, which [`onnx::gather_nd`](crate::onnx::gather_nd)
/// enforces).
///
/// # Errors
/// Rank-0 indices; `batch_dims` outside `[0, q)`; `batch_dims + k` above data's rank; batch
/// dims that differ; any index component rejected by the policy (as [`gather`]).
///
/// ```
/// use tensor_scatter::{gather_nd, GatherOptions, TensorView};
/// // ONNX GatherND example 3: tuples (0, 1) and (1, 0) select rows of a 2 × 2 × 2 tensor.
/// let data = [0i32, 1, 2, 3, 4, 5, 6, 7];
/// let out = gather_nd(
///     &TensorView::new(&data, &[2, 2, 2]).unwrap(),
///     &TensorView::new(&[0i64, 1, 1, 0], &[2, 2]).unwrap(),
///     &GatherOptions::new(),
/// )
/// .unwrap();
/// assert_eq!((out.shape(), out.as_slice()), (&[2usize, 2][..], &[2, 3, 4, 5][..]));
/// ```
pub fn gather_nd<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    opts: &GatherOptions<T>,
) -> Result<Tensor<T>> {
    run_alloc("gather_nd", plan_gather_nd, data, indices, opts)
}

/// [`gather_nd`] into a caller-provided output of the gathered shape (may be strided).
///
/// # Errors
/// As [`gather_nd`], plus an `out` of another shape; on error `out` is unchanged.
///
/// ```
/// use tensor_scatter::{gather_nd_into, GatherOptions, TensorView, TensorViewMut};
/// // batch_dims = 1: each batch picks its own element.
/// let mut out = [0u16; 2];
/// gather_nd_into(
///     &TensorView::new(&[1u16, 2, 3, 4], &[2, 2]).unwrap(),
///     &TensorView::new(&[1u8, 0], &[2, 1]).unwrap(),
///     &mut TensorViewMut::new(&mut out, &[2]).unwrap(),
///     &GatherOptions::new().batch_dims(1),
/// )
/// .unwrap();
/// assert_eq!(out, [2, 3]);
/// ```
pub fn gather_nd_into<T: Element, I: IndexInt>(
    data: &TensorView<'_, T>,
    indices: &TensorView<'_, I>,
    out: &mut TensorViewMut<'_, T>,
    opts: &GatherOptions<T>,
) -> Result<()> {
    run_into("gather_nd", plan_gather_nd, data, indices, out, opts)
}
