mod fold;
mod gather_prop;
mod layering;
mod prop;
mod segment_prop;
mod segment_vjp;
mod vjp;

use crate::{Result, TensorView, TensorViewMut};

/// Makes `indices` (row-major over `shape`) constant along the dims after `axis`: each value
/// becomes the one at its coordinate with those dims zeroed (an index that moves rows).
/// Nothing when not `rows`.
pub(crate) fn constant_after<V: Copy>(rows: bool, indices: &mut [V], shape: &[usize], axis: usize) {
    if !rows {
        return;
    }
    let inner: usize = shape.get(axis + 1..).map_or(1, |d| d.iter().product());
    for p in 0..indices.len() {
        indices[p] = indices[p - p % inner.max(1)];
    }
}

/// `values` (row-major over `shape`, constant along the dims after `axis`) as a view of a
/// buffer holding one value per row, with stride 0 along those dims.
fn broadcast_after<T: Copy>(
    values: &[T],
    shape: &[usize],
    axis: usize,
) -> (Vec<T>, usize, Vec<isize>) {
    let inner: usize = shape[axis + 1..].iter().product();
    let buf: Vec<T> = values.iter().step_by(inner.max(1)).copied().collect();
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for d in (0..=axis).rev() {
        strides[d] = acc;
        acc *= shape[d] as isize;
    }
    (buf, 0, strides)
}

/// A case's index buffer: laid out as `layout` ([`prop::embed`]'s kinds), or for layout 3
/// (a case whose index is constant along the dims after the axis) broadcast along them, when
/// the index has data's rank and `axis` is valid for it (`(axis, data's shape)`).
pub(crate) fn index_in<I: Copy>(
    idx: &[I],
    shape: &[usize],
    layout: u8,
    (axis, data): (i64, &[usize]),
    zero: I,
) -> (Vec<I>, usize, Vec<isize>) {
    let r = data.len() as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if layout == 3 && shape.len() == data.len() && (0..r).contains(&a) {
        return broadcast_after(idx, shape, a as usize);
    }
    prop::embed(idx, shape, layout % 3, zero)
}

/// `layouts`, with the indices read through a broadcast view (layout 3) for half the `rows`
/// cases.
pub(crate) fn rows_layout(mut layouts: [u8; 3], rows: bool, rng: &mut prop::Rng) -> [u8; 3] {
    if rows && rng.chance(50) {
        layouts[1] = 3;
    }
    layouts
}

/// A view of `buf` with this layout, made from a raw pointer for layout kind 2 (padded and
/// reversed: its padding is then a gap the view never touches, as in NumPy's and ndarray's
/// stepped views), from the slice otherwise.
pub(crate) fn view_in<'a, T: Copy>(
    buf: &'a [T],
    offset: usize,
    shape: &[usize],
    strides: &[isize],
    kind: u8,
) -> Result<TensorView<'a, T>> {
    let v = TensorView::with_strides(buf, offset, shape, strides)?;
    if kind != 2 || v.is_empty() {
        return Ok(v);
    }
    // SAFETY: `with_strides` showed that every element lies in `buf` (so `offset` does),
    // which is borrowed for 'a.
    unsafe { TensorView::from_raw_parts(buf.as_ptr().add(offset), shape, strides) }
}

/// [`view_in`] for a writable view.
pub(crate) fn view_mut_in<'a, T: Copy>(
    buf: &'a mut [T],
    offset: usize,
    shape: &[usize],
    strides: &[isize],
    kind: u8,
) -> Result<TensorViewMut<'a, T>> {
    if kind != 2 || shape.contains(&0) {
        return TensorViewMut::with_strides(buf, offset, shape, strides);
    }
    TensorViewMut::with_strides(&mut *buf, offset, shape, strides)?;
    // SAFETY: as in `view_in` (the check just above), with `buf` borrowed exclusively for 'a.
    unsafe { TensorViewMut::from_raw_parts(buf.as_mut_ptr().add(offset), shape, strides) }
}

/// `Default::default()` of every options type is its documented defaults (what `new()` gives),
/// so `..Default::default()` in a struct literal changes nothing the caller did not set.
#[test]
fn options_defaults_are_the_documented_defaults() {
    use crate::segment::{SegmentOptions, Ties};
    use crate::{
        Accumulation, GatherOptions, GatherOutOfRange, IndexPolicy, NegativeIndices, OutOfRange,
        Par, Reduction, ScatterOptions,
    };
    let s = ScatterOptions::default();
    assert_eq!(s, ScatterOptions::new());
    assert!(s.include_self, "ONNX: the destination's value takes part");
    assert_eq!(
        (s.axis, s.reduction, s.updates_window),
        (0, Reduction::None, false)
    );
    assert_eq!(
        s.index_policy,
        IndexPolicy::new(NegativeIndices::Wrap, OutOfRange::Error)
    );
    assert_eq!(
        (s.accumulation, s.par, s.ties),
        (Accumulation::PerUpdate, Par::Auto, Ties::Split)
    );
    let g = GatherOptions::<f32>::default();
    assert_eq!(g, GatherOptions::new());
    assert_eq!((g.axis, g.batch_dims, g.fill_value), (0, 0, 0.0));
    assert_eq!(
        (g.negative, g.out_of_range),
        (NegativeIndices::Wrap, GatherOutOfRange::Error)
    );
    let o = SegmentOptions::default();
    assert_eq!(o, SegmentOptions::new());
    assert_eq!((o.dim, o.dim_size, o.reduce), (-1, None, Reduction::Add));
}
