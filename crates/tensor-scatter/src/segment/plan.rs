//! Shapes and indices of the segment family: torch_scatter's index broadcasting, the read-only
//! pass that checks every index (range, order) and reads it as `i64`, and the grouping of each
//! lane's positions by destination.
//!
//! Every problem is put in one canonical form: `src` as `[b, e, k]` (the dims before `dim`,
//! `dim`, the dims after it), the output as `[b, n, k]`. A *lane* is one 1-D problem along
//! `e`: with an index that does not vary along the trailing dims a lane is a whole `b` and
//! moves rows of `k` elements (row mode); otherwise every `(b, k)` is its own lane of single
//! elements (element mode).

use crate::error::{Error, ErrorKind, Result};
use crate::exec::Ctx;
use crate::index::IndexInt;
use crate::shape::{Odometer, part, sat_product};
use crate::view::TensorView;

use crate::kernels::segment::read_walk;
pub(crate) use crate::kernels::segment::{Dims, Lanes, Mode};

/// torch_scatter's broadcast of `index` to `src`'s shape around `dim`: a 1-D index lies along
/// `dim`; a lower-rank index gets trailing dims; then every dim of extent 1 expands. Returns
/// the expanded index's strides (0 on expanded dims).
pub(crate) fn broadcast_strides<I>(
    op: &'static str,
    arg: &'static str,
    index: &TensorView<'_, I>,
    src_shape: &[usize],
    dim: usize,
) -> Result<Vec<isize>> {
    let (ishape, istrides) = (&index.layout.shape, &index.layout.strides);
    let r = src_shape.len();
    let mut shape = vec![1usize; r];
    let mut strides = vec![0isize; r];
    if ishape.len() == 1 && r > 0 {
        shape[dim] = ishape[0];
        strides[dim] = istrides[0];
    } else if ishape.len() <= r {
        shape[..ishape.len()].copy_from_slice(ishape);
        strides[..ishape.len()].copy_from_slice(istrides);
    } else {
        return Err(Error::rank(
            op,
            arg,
            format!("at most the rank of src ({r})"),
            ishape.len(),
        ));
    }
    for d in 0..r {
        if shape[d] == src_shape[d] {
            if shape[d] == 1 {
                strides[d] = 0;
            }
        } else if shape[d] == 1 {
            strides[d] = 0;
        } else {
            return Err(Error::shape(
                op,
                arg,
                format!(
                    "a shape that broadcasts to src's {src_shape:?} along dim {dim} (a 1-D index lies along dim; other dims of extent 1 expand)"
                ),
                ishape,
            ));
        }
    }
    Ok(strides)
}

/// The mode of an expanded index with `strides` over `src_shape` around `dim`.
pub(crate) fn mode_of(src_shape: &[usize], strides: &[isize], dim: usize) -> Mode {
    let varies =
        |r: std::ops::Range<usize>| r.into_iter().any(|d| strides[d] != 0 && src_shape[d] > 1);
    if varies(dim + 1..src_shape.len()) {
        Mode::PerElement
    } else if varies(0..dim) {
        Mode::PerOuter
    } else {
        Mode::Shared
    }
}

/// `[b, e, k]` of `shape` around `dim` (`e` = `shape[dim]`), with `n` set to 0.
pub(crate) fn dims_of(shape: &[usize], dim: usize) -> Dims {
    Dims {
        b: sat_product(&shape[..dim]),
        e: shape[dim],
        k: sat_product(&shape[dim + 1..]),
        n: 0,
    }
}

/// Reads the expanded index (`strides` over `src_shape`, on `index`'s buffer) lane-major as
/// `i64` (saturated), in the mode's layout. Allocation failure is an error.
pub(crate) fn read_lanes<'a, I: IndexInt>(
    op: &'static str,
    arg: &'static str,
    index: &TensorView<'a, I>,
    src_shape: &[usize],
    strides: &[isize],
    dim: usize,
    mode: Mode,
) -> Result<Lanes<'a>> {
    // The walk: the lane dims in row-major order, then dim.
    let mut order = lane_dims(src_shape.len(), dim, mode);
    order.push(dim);
    let shape: Vec<usize> = order.iter().map(|&d| src_shape[d]).collect();
    let st: Vec<isize> = order.iter().map(|&d| strides[d]).collect();
    Ok(Lanes {
        mode,
        values: read_walk(op, arg, index, &shape, &st)?,
        len: src_shape[dim],
        narrow: None,
    })
}

/// Every line of `index` along `dim`, as given (no broadcast), lane-major.
pub(crate) fn own_lanes<'a, I: IndexInt>(
    op: &'static str,
    arg: &'static str,
    index: &TensorView<'a, I>,
    dim: usize,
) -> Result<Lanes<'a>> {
    let l = &index.layout;
    let mode = if dim == 0 {
        Mode::Shared
    } else {
        Mode::PerOuter
    };
    read_lanes(op, arg, index, &l.shape, &l.strides, dim, mode)
}

/// The dims a lane spans, in row-major order (`dim` excluded).
fn lane_dims(rank: usize, dim: usize, mode: Mode) -> Vec<usize> {
    match mode {
        Mode::Shared => vec![],
        Mode::PerOuter => (0..dim).collect(),
        Mode::PerElement => (0..rank).filter(|&d| d != dim).collect(),
    }
}

/// `dim = index.ndim - 1` for the segment and gather forms, whose index has rank 1 to
/// `src_rank`.
pub(crate) fn index_dim(
    op: &'static str,
    arg: &'static str,
    src_rank: usize,
    ishape: &[usize],
) -> Result<usize> {
    if ishape.is_empty() || ishape.len() > src_rank {
        return Err(Error::rank(
            op,
            arg,
            format!("between 1 and the rank of src ({src_rank})"),
            ishape.len(),
        ));
    }
    Ok(ishape.len() - 1)
}

/// The coordinate in `index` (as given, before broadcasting) of element `e` of `lane`.
fn index_position(
    index_shape: &[usize],
    src_shape: &[usize],
    dim: usize,
    mode: Mode,
    lane: usize,
    e: usize,
) -> Vec<usize> {
    // The coordinate in src's shape, then restricted to the index's own dims.
    let mut coord = vec![0usize; src_shape.len()];
    let mut rest = lane;
    for &d in lane_dims(src_shape.len(), dim, mode).iter().rev() {
        coord[d] = rest % src_shape[d].max(1);
        rest /= src_shape[d].max(1);
    }
    coord[dim] = e;
    if index_shape.len() == 1 && !src_shape.is_empty() {
        return vec![e];
    }
    index_shape
        .iter()
        .zip(&coord)
        .map(|(&s, &c)| if s == 1 { 0 } else { c })
        .collect()
}

/// Where a value was read from, for error messages.
pub(crate) struct Origin<'a> {
    pub(crate) op: &'static str,
    pub(crate) arg: &'static str,
    pub(crate) index_shape: &'a [usize],
    pub(crate) src_shape: &'a [usize],
    pub(crate) dim: usize,
}

impl<'a> Origin<'a> {
    /// For values read from `index_shape` as given (its own lanes, no broadcast).
    pub(crate) fn own(
        op: &'static str,
        arg: &'static str,
        index_shape: &'a [usize],
        dim: usize,
    ) -> Self {
        Origin {
            op,
            arg,
            index_shape,
            src_shape: index_shape,
            dim,
        }
    }

    fn position(&self, mode: Mode, lane: usize, e: usize) -> Vec<usize> {
        index_position(self.index_shape, self.src_shape, self.dim, mode, lane, e)
    }

    fn out_of_range(&self, mode: Mode, lane: usize, e: usize, value: i64, size: usize) -> Error {
        self.fault(self.position(mode, lane, e), value, size)
    }

    /// A negative `value` at `position`, or one outside `[0, size)`.
    pub(crate) fn fault(&self, position: Vec<usize>, value: i64, size: usize) -> Error {
        if value < 0 {
            return Error::new(ErrorKind::NegativeIndex {
                op: self.op,
                arg: self.arg,
                position,
                value: i128::from(value),
                dim: self.dim,
            });
        }
        Error::new(ErrorKind::IndexOutOfRange {
            op: self.op,
            arg: self.arg,
            position,
            value: i128::from(value),
            dim: self.dim,
            size,
        })
    }
}

/// The output extent along `dim` when none is given: `max(index) + 1` over every element of
/// `index` as given (torch_scatter's rule), 0 for an empty index. A negative value is an
/// error here already.
pub(crate) fn extent<I: IndexInt>(index: &TensorView<'_, I>, origin: &Origin<'_>) -> Result<usize> {
    let l = &index.layout;
    let mut odo = Odometer::new(&l.shape, [&l.strides], [l.offset as isize], l.numel);
    let mut max = -1i64;
    let mut bad = None;
    while odo.next_with_coord(|c, [p]| {
        // SAFETY: the odometer walks the view's own layout.
        let v = unsafe { index.data.get(p as usize) }.to_i64_sat();
        if v < 0 && bad.is_none() {
            bad = Some((c.to_vec(), v));
        }
        max = max.max(v);
    }) {
        if let Some((position, v)) = bad.take() {
            return Err(origin.fault(position, v, 0));
        }
    }
    // An index of i64::MAX (a saturated u64 too) would give an extent past any allocation.
    max.checked_add(1)
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| Error::overflow(origin.op, origin.arg))
}

/// Checks every index value against `[0, n)` and, when `sorted`, that each lane is
/// non-decreasing; returns whether each lane is (a scatter's index may be sorted without
/// being asked to be, and then its fold skips the counting sort).
pub(crate) fn check_index(
    ctx: Ctx,
    lanes: &Lanes<'_>,
    n: usize,
    sorted: bool,
    origin: &Origin<'_>,
) -> Result<bool> {
    let len = lanes.len.max(1);
    // A pass without an early exit per value first, cut across the threads; the loop below
    // finds the first fault.
    let values = &lanes.values[..];
    let (in_range, ascending) = match sorted {
        true => {
            let tasks = ctx.tasks(values.len() * 8, 1);
            let faults = std::sync::atomic::AtomicBool::new(false);
            ctx.run(tasks, |t| {
                let (lo, hi) = part(values.len(), tasks, t, 1);
                if !clean_sorted(values, lo..hi, len, n) {
                    faults.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            });
            (!faults.into_inner(), true)
        }
        false => crate::check::range_and_order(ctx, values, len, n),
    };
    if in_range {
        return Ok(ascending);
    }
    for (p, &v) in lanes.values.iter().enumerate() {
        if v < 0 || v as u64 >= n as u64 {
            return Err(origin.out_of_range(lanes.mode, p / len, p % len, v, n));
        }
        if sorted && p % len > 0 && v < lanes.values[p - 1] {
            return Err(Error::new(ErrorKind::InvalidArgument {
                op: origin.op,
                arg: origin.arg,
                reason: format!(
                    "must be sorted along dim {}, but {} at position {:?} follows {}",
                    origin.dim,
                    v,
                    origin.position(lanes.mode, p / len, p % len),
                    lanes.values[p - 1]
                ),
            }));
        }
    }
    Ok(ascending)
}

/// Whether `values[range]` (lanes of `len`) all lie in `[0, n)` and none is below the value
/// before it in its lane: folds without an early exit, so they vectorise. A sorted piece of
/// a lane reads its values once: when it does not descend, its first and last values bound
/// the rest, so they alone are checked against `[0, n)`.
fn clean_sorted(values: &[i64], range: std::ops::Range<usize>, len: usize, n: usize) -> bool {
    let outside = |v: i64| u8::from(v as u64 >= n as u64);
    let mut bad = 0u8;
    let mut p = range.start;
    while p < range.end {
        let end = range.end.min((p / len + 1) * len);
        bad |= outside(values[p]) | outside(values[end - 1]);
        // The pairs (q - 1, q) for q in p..end, but for the lane's first position.
        let from = if p.is_multiple_of(len) { p } else { p - 1 };
        let (a, b) = (&values[from..end - 1], &values[from + 1..end]);
        bad |= a.iter().zip(b).fold(0u8, |d, (x, y)| d | u8::from(y < x));
        p = end;
    }
    bad == 0
}

/// Checks that every lane of `indptr` is non-decreasing within `[0, e]`.
pub(crate) fn check_indptr(lanes: &Lanes<'_>, e: usize, origin: &Origin<'_>) -> Result<()> {
    let len = lanes.len.max(1);
    for (p, &v) in lanes.values.iter().enumerate() {
        let (lane, at) = (p / len, p % len);
        let bad = |reason: String| {
            Error::new(ErrorKind::InvalidArgument {
                op: origin.op,
                arg: origin.arg,
                reason: format!(
                    "{reason} (value {v} at position {:?})",
                    origin.position(lanes.mode, lane, at)
                ),
            })
        };
        if v < 0 || v as u64 > e as u64 {
            return Err(bad(format!(
                "every offset must lie in [0, {e}] (src's extent along dim {})",
                origin.dim
            )));
        }
        if at > 0 && v < lanes.values[p - 1] {
            return Err(bad("offsets must be non-decreasing".into()));
        }
    }
    Ok(())
}

/// [`Prepared`](super::Prepared) but `src`: what only the shapes and the index decide (generic over the index
/// type alone, so compiled once per index type, not per data type too).
pub(super) struct IndexPlan<'s> {
    pub(super) dims: Dims,
    pub(super) mode: Mode,
    pub(super) lanes: Lanes<'s>,
    pub(super) out_shape: Vec<usize>,
    pub(super) total: usize,
    pub(super) dim: usize,
    /// The index values were not checked: `defer` was asked for and the scatter-elements
    /// kernel, which checks them as it runs, takes the call ([`super::single::by_elements`]).
    pub(super) deferred: bool,
    /// Every lane of the index was checked and found non-decreasing (a `segment_coo` index
    /// must be; a `scatter` index may be).
    pub(super) sorted: bool,
}

/// The shapes and the read-only pass of [`prepare`](super::prepare), which a scatter of
/// single elements leaves to its kernel when `defer` (a caller that folds without positions).
pub(super) fn plan_index<'s, I: IndexInt>(
    op: &'static str,
    kind: super::Kind,
    src: &crate::view::Layout,
    index: &TensorView<'s, I>,
    out: Option<&crate::view::Layout>,
    opts: &super::SegmentOptions,
    defer: bool,
) -> Result<IndexPlan<'s>> {
    let arg_name = if kind == super::Kind::Csr {
        "indptr"
    } else {
        "index"
    };
    let sshape = &src.shape;
    let ishape = &index.layout.shape;
    if sshape.is_empty() {
        return Err(Error::rank(op, "src", "at least 1".into(), 0));
    }
    let dim = match kind {
        super::Kind::Scatter => crate::shape::normalize_axis(op, "dim", opts.dim, sshape.len())?,
        super::Kind::Coo | super::Kind::Csr => index_dim(op, arg_name, sshape.len(), ishape)?,
    };
    let mut target = sshape.clone();
    if kind == super::Kind::Csr {
        target[dim] = ishape[dim];
    }
    let strides = broadcast_strides(op, arg_name, index, &target, dim)?;
    let mode = mode_of(&target, &strides, dim);
    let origin = Origin {
        op,
        arg: arg_name,
        index_shape: ishape,
        src_shape: &target,
        dim,
    };
    let mut dims: Dims = dims_of(sshape, dim);
    dims.n = match (kind, out) {
        (super::Kind::Csr, _) => ishape[dim].saturating_sub(1),
        (_, Some(o)) => o.shape.get(dim).copied().unwrap_or(0),
        (_, None) => match opts.dim_size {
            Some(n) => n,
            None => extent(index, &origin)?,
        },
    };
    let mut out_shape = sshape.clone();
    out_shape[dim] = dims.n;
    if let Some(o) = out
        && o.shape != out_shape
    {
        return Err(Error::shape(
            op,
            "out",
            format!("{out_shape:?} (src's shape with dim {dim} of the output's extent)"),
            &o.shape,
        ));
    }
    let total = crate::shape::numel(op, "dim_size", &out_shape)?;
    let unread = match kind {
        // An indptr's own offsets are checked below; its broadcast lanes are read by a fold.
        super::Kind::Csr => total == 0,
        // Every index value some src element reads is checked below.
        _ => src.numel == 0,
    };
    // Every index value some src element reads; every offset of indptr as given. A scatter
    // of single elements may leave it to the scatter-elements kernel, which checks as it runs.
    let deferred = defer && kind == super::Kind::Scatter && super::single::by_elements(dims, mode);
    // One lane (`b = k = 1`) read in the index's own order: every dim but `dim` has extent 1,
    // so an index of `e` elements holds the lane as stored.
    let narrow = match !unread && deferred && dims.b == 1 && index.layout.numel == dims.e {
        true => crate::index::int32_run(index),
        false => None,
    };
    let lanes: Lanes<'s> = if unread || narrow.is_some() {
        // No lane is read: none is needed, and they could still be long (`e` values broadcast
        // from one, or 2⁴⁰ lanes of an indptr), or the one lane is the int32 index as stored.
        Lanes {
            mode,
            values: std::borrow::Cow::Borrowed(&[]),
            len: narrow.map_or(0, <[i32]>::len),
            narrow,
        }
    } else {
        read_lanes(op, arg_name, index, &target, &strides, dim, mode)?
    };
    let mut sorted = false;
    match kind {
        _ if kind != super::Kind::Csr && src.numel == 0 => {}
        _ if deferred => {}
        super::Kind::Scatter | super::Kind::Coo => {
            let must = kind == super::Kind::Coo;
            sorted = check_index(Ctx::new(opts.par), &lanes, dims.n, must, &origin)?;
        }
        super::Kind::Csr => {
            let own = own_lanes(op, arg_name, index, dim)?;
            let origin = Origin::own(op, arg_name, ishape, dim);
            check_indptr(&own, dims.e, &origin)?;
        }
    }

    Ok(IndexPlan {
        dims,
        mode,
        lanes,
        out_shape,
        total,
        dim,
        deferred,
        sorted,
    })
}

#[cfg(test)]
mod tests {
    use super::clean_sorted;
    use crate::check::scan;
    use crate::kernels::segment::row_major;

    /// `clean_sorted` and `scan` over any cut of the values agree with the whole: a descent
    /// or an out-of-range value is found whichever piece holds it, and a lane's first value
    /// is never compared with the previous lane's last.
    #[test]
    fn checks_over_pieces_agree_with_the_whole() {
        let lanes = [
            0i64, 1, 1, 3, /* lane 2 */ 0, 2, 2, 3, /* lane 3 */ 1, 1, 2, 3,
        ];
        let sorted_cut = |v: &[i64]| {
            (0..=v.len()).all(|m| clean_sorted(v, 0..m, 4, 4) && clean_sorted(v, m..v.len(), 4, 4))
        };
        // Per cut: (every piece in range, every piece ascending).
        let scans = |v: &[i64]| {
            (0..=v.len())
                .map(|m| {
                    let (a, b) = (scan(v, 0..m, 4, 4), scan(v, m..v.len(), 4, 4));
                    (a.0 && b.0, a.1 && b.1)
                })
                .collect::<Vec<_>>()
        };
        assert!(clean_sorted(&lanes, 0..12, 4, 4) && sorted_cut(&lanes));
        assert_eq!(scan(&lanes, 0..12, 4, 4), (true, true));
        assert!(scans(&lanes).iter().all(|&c| c == (true, true)));
        for p in 0..lanes.len() {
            let mut v = lanes;
            v[p] = 4; // out of range
            assert!(
                !clean_sorted(&v, 0..12, 4, 4) && !scan(&v, 0..12, 4, 4).0,
                "{p}"
            );
            assert!(scans(&v).iter().all(|c| !c.0), "{p}");
            v[p] = -1; // out of range below, and a descent unless first in its lane
            assert!(
                !scan(&v, 0..12, 4, 4).0 && scans(&v).iter().all(|c| !c.0),
                "{p}"
            );
        }
        for p in 1..lanes.len() {
            let mut v = lanes;
            v[p] = v[p - 1] - 1; // a descent, or a lane starting below the last one's end
            if v[p] < 0 {
                continue;
            }
            let descends = (1..v.len()).any(|q| q % 4 != 0 && v[q] < v[q - 1]);
            assert_eq!(!clean_sorted(&v, 0..12, 4, 4), descends, "{p}");
            assert_eq!(scan(&v, 0..12, 4, 4), (true, !descends), "{p}");
            for m in 0..=v.len() {
                let pieces = clean_sorted(&v, 0..m, 4, 4) && clean_sorted(&v, m..v.len(), 4, 4);
                assert_eq!(!pieces, descends, "{p} cut at {m}");
            }
            assert!(scans(&v).iter().all(|&c| c == (true, !descends)), "{p}");
        }
    }

    #[test]
    fn row_major_walks() {
        assert!(row_major(&[3, 4], &[4, 1]));
        assert!(row_major(&[3, 1, 4], &[4, 7, 1])); // an extent-1 dim's stride is free
        assert!(row_major(&[], &[]));
        assert!(!row_major(&[3, 4], &[1, 3])); // transposed
        assert!(!row_major(&[3, 4], &[0, 1])); // broadcast
        assert!(!row_major(&[3, 4], &[8, 1])); // gaps between rows
        assert!(!row_major(&[4], &[-1])); // reversed
    }
}
