//! # tensor-scatter
//!
//! Exact, complete and deterministic tensor **scatter** operators for ML runtimes.
//!
//! | operator | ONNX | DirectML | BNNS | OpenVINO | PyTorch |
//! |---|---|---|---|---|---|
//! | [`scatter_elements`] | ScatterElements | SCATTER(_ELEMENTS) | BNNSScatter, same-shape indices | ScatterElementsUpdate | `scatter_reduce_` |
//! | [`scatter_nd`] | ScatterND | SCATTER_ND | BNNSScatterND | ScatterNDUpdate | `index_put_` |
//! | [`scatter_update`] | — | — | BNNSScatter, 1-D indices | ScatterUpdate-3 | `index_copy_`, `index_add_` |
//!
//! Each has an out-of-place form (`output = data`, then scatter), an `_out` form into a
//! caller-provided output, and an `_into` form that scatters in place into an existing,
//! possibly strided, destination.
//!
//! The gather inverses, [`gather`] (with `batch_dims`), [`gather_elements`] and [`gather_nd`]
//! (with `batch_dims`), read with the same index semantics ([`GatherOptions`]: negative indices
//! wrap or are an error; out of range is an error, clamped, or filled with a value), in an
//! allocating and an `_out` form (`_out` is a caller-provided output for every operator). The [`onnx`], [`directml`],
//! [`bnns`] and [`openvino`] modules speak each seed API's own vocabulary.
//!
//! ## What we guarantee that the specs leave undefined
//! * **Duplicates are defined.** Updates apply in row-major order of `indices`: with
//!   `none` the last write wins, and every reduction folds in that order.
//! * **Deterministic.** The result depends only on the inputs, bit for bit.
//! * **Every bad input is an error before anything is written.** Shapes, axis, reduction,
//!   dtypes and every index value are checked first; after an [`Error`] the destination is
//!   unchanged. Nothing reachable from the public API panics on user data.
//! * **Index policy** ([`IndexPolicy`]): negative indices wrap once or are an error;
//!   out-of-range indices are an error (default), clamped, or skipped. A `u64` above
//!   `i64::MAX` is out of range, never reinterpreted; each ScatterND component is checked
//!   against its own dimension.
//! * **Reductions** ([`Reduction`]): none, add, sub, mul, min, max, mean, with `include_self`.
//!   See [`Element`] for the scalar rules (NaN-propagating min/max, wrapping integers, floor
//!   mean, bool rules, f16/bf16 through f32) and [`Accumulation`] for wide f16/bf16 sums.
//!
//! ## Example
//!
//! ```
//! use tensor_scatter::{scatter_elements, Reduction, ScatterOptions, TensorView};
//!
//! // ONNX ScatterElements with reduction=add: duplicates accumulate in index order.
//! let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
//! let out = scatter_elements(
//!     &TensorView::new(&data, &[1, 5]).unwrap(),
//!     &TensorView::new(&[1i64, 1], &[1, 2]).unwrap(),
//!     &TensorView::new(&[1.1f32, 2.1], &[1, 2]).unwrap(),
//!     &ScatterOptions::new().axis(1).reduction(Reduction::Add),
//! )
//! .unwrap();
//! assert_eq!(out.as_slice(), &[1.0, 2.0 + 1.1 + 2.1, 3.0, 4.0, 5.0]);
//! ```
//!
//! ## Features
//! * `reference`: the naive oracle, module `tensor_scatter::reference` (present only with this
//!   feature, so not linked here), one literal function per operator.
//! * `checked-kernels`: bounds-checked access in every kernel (see `kernels`).
//! * `ndarray`: `ndarray` arrays and views in and out without a copy (`TryFrom<ArrayView>` for
//!   [`TensorView`], `TensorView::to_ndarray`, `From<Tensor>` for `ArrayD`, and so on).
//!
//! The hot loops are compiled for several instruction-set levels and chosen at run time; see
//! [`isa`].
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]
#![doc(test(attr(deny(warnings))))]

mod check;
mod dtype;
mod dynamic;
mod error;
mod exec;
mod gather;
mod index;
mod kernels;
mod raw_view;
mod reduce;
mod scatter;
pub mod segment;
mod shape;
mod view;
mod vjp;

mod adapters;
#[cfg(feature = "ndarray")]
mod ndarray_interop;
pub use exec::isa;

pub use adapters::{bnns, directml, onnx, openvino};

#[cfg(any(test, feature = "reference"))]
pub mod reference;

#[cfg(test)]
mod tests;

/// The README's Rust example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeExample;

pub use dtype::{Buffer, DType, Element, Reduction};
#[allow(deprecated)]
pub use dynamic::gather_dyn_into;
pub use dynamic::{
    DynGatherOptions, DynTensor, DynView, DynViewMut, GatherOp, OutputPlan, ScatterOp, gather_dyn,
    gather_dyn_out, scatter_dyn, scatter_dyn_into, scatter_dyn_out,
};
pub use dynamic::{
    SegmentOp, Segmented, segment_dyn, segment_dyn_out, segment_vjp_dyn, segment_vjp_dyn_out,
};
pub use dynamic::{gather_vjp_dyn, scatter_vjp_dyn};
pub use error::{Error, ErrorKind, Result};
pub use exec::{Par, default_threads, set_default_threads};
pub use gather::{
    GatherOptions, GatherOutOfRange, gather, gather_elements, gather_elements_out, gather_nd,
    gather_nd_out, gather_out,
};
#[allow(deprecated)]
pub use gather::{gather_elements_into, gather_into, gather_nd_into};
pub use index::{IndexInt, IndexPolicy, NegativeIndices, OutOfRange};
pub use kernels::{try_vec_with_huge_pages, vec_with_huge_pages};
pub use raw_view::{element_span, gap_free_span};
pub use reduce::Accumulation;
pub use scatter::ScatterOptions;
pub use scatter::elements::{scatter_elements, scatter_elements_into, scatter_elements_out};
pub use scatter::nd::{scatter_nd, scatter_nd_into, scatter_nd_out};
pub use scatter::update::{scatter_update, scatter_update_into, scatter_update_out};
pub use view::{Tensor, TensorView, TensorViewMut};
pub use vjp::{
    ScatterGrads, gather_elements_vjp, gather_nd_vjp, gather_vjp, scatter_elements_vjp,
    scatter_nd_vjp, scatter_update_vjp,
};

/// Re-export of the `half` crate (f16 and bf16).
pub use half;
/// Re-export of the `ndarray` crate the conversions are written for.
#[cfg(feature = "ndarray")]
pub use ndarray;
