//! The index dtypes the `dyn` operators hand to the engine: `int32` and `int64` only.
//!
//! Every `dyn` operator is compiled once per data dtype and index dtype it dispatches to, and
//! each of those copies holds every kernel the operator reaches. Converting the six other index
//! dtypes here, before the dispatch (as [`Native`](crate::index::Native) does inside the typed
//! scatters), keeps their copies out of the library: a quarter of the index dispatch instead of
//! all of it.

use crate::error::{Error, Result};
use crate::index::IndexInt;
use crate::view::TensorView;

use super::view::DynView;

/// Runs `run` on `index` as an `int32` or `int64` view: as it is for those two dtypes (and for
/// a non-integer one, which `run`'s dispatch refuses), else converted (i8, i16, u8 and u16 to
/// `int32`, exactly; u32 to `int64`, exactly; u64 to `int64` saturated at `i64::MAX`, which
/// every policy treats as it treats the value above it). The converted view has `index`'s
/// shape and its broadcast dims stay broadcast, so it costs the values `index` reads, not its
/// shape; an error keeps its positions, and reports a saturated `u64` as stored.
pub(crate) fn with_native_index<R>(
    op: &'static str,
    arg: &'static str,
    index: &DynView<'_>,
    run: impl FnOnce(&DynView<'_>) -> Result<R>,
) -> Result<R> {
    let converted = match index {
        DynView::I8(v) => Converted::I32(compact(op, arg, v)?),
        DynView::I16(v) => Converted::I32(compact(op, arg, v)?),
        DynView::U8(v) => Converted::I32(compact(op, arg, v)?),
        DynView::U16(v) => Converted::I32(compact(op, arg, v)?),
        DynView::U32(v) => Converted::I64(compact(op, arg, v)?),
        DynView::U64(v) => Converted::I64(compact(op, arg, v)?),
        _ => return run(index),
    };
    let shape = index.shape();
    let view = match &converted {
        Converted::I32((values, strides)) => {
            DynView::I32(TensorView::with_strides(values, 0, shape, strides)?)
        }
        Converted::I64((values, strides)) => {
            DynView::I64(TensorView::with_strides(values, 0, shape, strides)?)
        }
    };
    let result = run(&view);
    match index {
        DynView::U64(v) => result.map_err(|e| crate::index::stored_value(e, v)),
        _ => result,
    }
}

/// A converted index: its distinct values and the strides that read them in `index`'s shape.
enum Converted {
    I32((Vec<i32>, Vec<isize>)),
    I64((Vec<i64>, Vec<isize>)),
}

/// `v`'s values as `J`, one per position of its dims that are not broadcast (stride 0), in
/// row-major order, with the strides that read them back in `v`'s shape (0 on the broadcast
/// dims). The allocation is fallible: an error names `op` and `arg`.
fn compact<I: IndexInt, J: Narrow>(
    op: &'static str,
    arg: &'static str,
    v: &TensorView<'_, I>,
) -> Result<(Vec<J>, Vec<isize>)> {
    let (shape, strides) = (v.shape(), v.strides());
    let kept: Vec<usize> = shape
        .iter()
        .zip(strides)
        .map(|(&n, &s)| if s == 0 { n.min(1) } else { n })
        .collect();
    let window = v.window(&kept).ok_or_else(|| {
        Error::invalid(
            op,
            arg,
            "a view without its own dims (a bug: please report it)",
        )
    })?;
    let n = window.len();
    let mut values = Vec::new();
    values
        .try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory(op, arg, n.saturating_mul(size_of::<J>())))?;
    window.for_each(|x| values.push(J::from_i64(x.to_i64_sat())));
    let mut out_strides = vec![0isize; shape.len()];
    let mut step = 1isize;
    for d in (0..shape.len()).rev() {
        if strides[d] != 0 {
            out_strides[d] = step;
        }
        step = step.saturating_mul(kept[d] as isize);
    }
    Ok((values, out_strides))
}

/// The two engine index types, from a value saturated to `i64` (`I::to_i64_sat`).
trait Narrow: Copy {
    fn from_i64(x: i64) -> Self;
}

impl Narrow for i32 {
    fn from_i64(x: i64) -> i32 {
        x as i32 // i8, i16, u8 and u16 values only: exact
    }
}

impl Narrow for i64 {
    fn from_i64(x: i64) -> i64 {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamic::DynTensor;

    #[test]
    fn a_broadcast_index_is_converted_to_the_values_it_reads() {
        // Three u8 values broadcast along a dim of 1,000: 3 values converted, not 3,000.
        let buf = [2u8, 0, 1];
        let v = TensorView::with_strides(&buf, 0, &[3, 1000], &[1, 0]).unwrap();
        let seen = with_native_index("op", "index", &DynView::from(v.clone()), |w| {
            let DynView::I32(w) = w else {
                panic!("u8 converts to int32")
            };
            assert_eq!(w.strides(), &[1, 0]);
            Ok(w.to_vec())
        })
        .unwrap();
        assert_eq!(
            seen,
            v.to_vec().iter().map(|&x| i32::from(x)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn every_index_dtype_keeps_its_values_and_positions() {
        let cases: Vec<(DynTensor, Vec<i64>)> = vec![
            (
                DynTensor::from_vec(vec![-3i8, 7], &[2]).unwrap(),
                vec![-3, 7],
            ),
            (
                DynTensor::from_vec(vec![-300i16, 7], &[2]).unwrap(),
                vec![-300, 7],
            ),
            (
                DynTensor::from_vec(vec![255u8, 0], &[2]).unwrap(),
                vec![255, 0],
            ),
            (
                DynTensor::from_vec(vec![65535u16, 1], &[2]).unwrap(),
                vec![65535, 1],
            ),
            (
                DynTensor::from_vec(vec![u32::MAX, 1], &[2]).unwrap(),
                vec![u32::MAX.into(), 1],
            ),
            (
                DynTensor::from_vec(vec![u64::MAX, 5], &[2]).unwrap(),
                vec![i64::MAX, 5],
            ),
            (
                DynTensor::from_vec(vec![-1i64, 5], &[2]).unwrap(),
                vec![-1, 5],
            ),
        ];
        for (t, want) in cases {
            let got = with_native_index("op", "index", &DynView::from(&t), |w| {
                Ok(match w {
                    DynView::I32(v) => v.to_vec().into_iter().map(i64::from).collect(),
                    DynView::I64(v) => v.to_vec(),
                    _ => panic!("{:?} reached the engine", w.dtype()),
                })
            })
            .unwrap();
            assert_eq!(got, want, "{:?}", t.dtype());
        }
    }

    #[test]
    fn a_saturated_u64_is_reported_as_stored() {
        let t = DynTensor::from_vec(vec![0u64, u64::MAX], &[2]).unwrap();
        let data = DynTensor::from_vec(vec![0.0f32; 3], &[3]).unwrap();
        let e = crate::scatter_dyn(
            crate::ScatterOp::Elements,
            &data,
            &t,
            &DynTensor::from_vec(vec![1.0f32; 2], &[2]).unwrap(),
            &crate::ScatterOptions::new(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("18446744073709551615"), "{e}");
    }
}
