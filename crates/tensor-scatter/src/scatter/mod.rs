//! The three scatters and the engine they share.
//!
//! All three scatters are one computation: for every *outer* coordinate
//! (ScatterUpdate's `data[..axis]`), for every index *tuple* in row-major order of `indices`,
//! resolve the tuple to a destination offset and combine a *slice* of `updates` into the
//! destination. The operators differ only in how they fill in a [`Plan`]:
//!
//! | operator | outer | tuples | components per tuple | slice |
//! |---|---|---|---|---|
//! | `scatter_elements` | — | `indices.shape` | 1 (the axis) | one element |
//! | `scatter_nd` | — | `indices.shape[..q-1]` | `k = indices.shape[q-1]` | `data.shape[k..]` |
//! | `scatter_update` | `data.shape[..axis]` | `indices.shape` | 1 (the axis) | `data.shape[axis+1..]` |
//!
//! The data path: [`plan`] (shapes only) → [`strategy`] (which kernel, and the index pass where
//! the kernel does not check indices itself) → [`drive`] (the copy of `data`, then the kernel).
//! [`sequential`] is the one-thread engine for what the parallel kernels do not cover.

mod drive;
pub(crate) mod elements;
pub(crate) mod nd;
pub(crate) mod plan;
mod rows;
mod sequential;
mod strategy;
pub(crate) mod update;

pub(crate) use drive::{run_in_place, run_out, run_out_of_place};
pub(crate) use plan::{Component, Plan};

use crate::exec::Par;
use crate::index::{IndexPolicy, NegativeIndices, OutOfRange};
use crate::reduce::{Accumulation, Reduction, Ties};

/// Options shared by the three scatter operators.
///
/// Defaults follow ONNX: axis 0, reduction `none`, `include_self = true`, negative indices
/// wrap once, out-of-range indices are an error, f16/bf16 round after every update.
///
/// The builder methods are the gathers' ([`GatherOptions`](crate::GatherOptions)): `axis`,
/// `negative`, `out_of_range`, `par`; the out-of-range rules differ in one value (a scatter
/// skips, a gather fills).
///
/// ```
/// use tensor_scatter::{IndexPolicy, NegativeIndices, OutOfRange, Reduction, ScatterOptions};
/// let o = ScatterOptions::new().axis(-1).reduction(Reduction::Mean).include_self(false);
/// assert_eq!((o.axis, o.reduction, o.include_self), (-1, Reduction::Mean, false));
/// assert_eq!(o.index_policy.out_of_range, OutOfRange::Error);
/// let strict = ScatterOptions::new().negative(NegativeIndices::Error).out_of_range(OutOfRange::Skip);
/// assert_eq!(
///     strict.index_policy,
///     IndexPolicy::new(NegativeIndices::Error, OutOfRange::Skip)
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScatterOptions {
    /// The axis for `scatter_elements` and `scatter_update`, in `[-rank, rank)`; ignored by
    /// `scatter_nd`.
    pub axis: i64,
    /// How updates combine with the destination.
    pub reduction: Reduction,
    /// Whether the destination's own value starts the fold (ONNX: always; OpenVINO
    /// `use_init_val`; torch `include_self`). When false, every targeted cell starts from the
    /// reduction's identity; untouched cells keep their value. Ignored by `none`.
    pub include_self: bool,
    /// Negative and out-of-range index handling.
    pub index_policy: IndexPolicy,
    /// Where f16/bf16 reductions accumulate.
    pub accumulation: Accumulation,
    /// How many threads to use. Never changes the result.
    pub par: Par,
    /// `scatter_elements` only: `updates` may be larger than `indices` on any dim, and only
    /// the window of indices' extent at its origin is read (PyTorch `scatter_`'s rule for
    /// `src`). Off by default: ONNX and the other specs require equal shapes.
    pub updates_window: bool,
    /// Backward passes only: where the gradient of a min or max cell goes when several of
    /// its fold's members (data's value first, with include_self) equal the result.
    pub ties: Ties,
}

/// The defaults (ONNX semantics), the same as [`ScatterOptions::new`]: `..Default::default()`
/// in a struct literal changes nothing else.
///
/// ```
/// use tensor_scatter::ScatterOptions;
/// assert_eq!(ScatterOptions::default(), ScatterOptions::new());
/// assert!(ScatterOptions::default().include_self);
/// ```
impl Default for ScatterOptions {
    fn default() -> Self {
        ScatterOptions {
            axis: 0,
            reduction: Reduction::default(),
            include_self: true,
            index_policy: IndexPolicy::default(),
            accumulation: Accumulation::default(),
            par: Par::default(),
            updates_window: false,
            ties: Ties::default(),
        }
    }
}

impl ScatterOptions {
    /// The defaults (ONNX semantics).
    pub fn new() -> ScatterOptions {
        Self::default()
    }
    /// Sets the axis.
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = axis;
        self
    }
    /// Sets the reduction.
    pub fn reduction(mut self, reduction: Reduction) -> Self {
        self.reduction = reduction;
        self
    }
    /// Sets `include_self`.
    pub fn include_self(mut self, include_self: bool) -> Self {
        self.include_self = include_self;
        self
    }
    /// Sets the index policy (both rules at once).
    pub fn index_policy(mut self, policy: IndexPolicy) -> Self {
        self.index_policy = policy;
        self
    }
    /// Sets the negative-index rule (as [`GatherOptions::negative`](crate::GatherOptions::negative)).
    pub fn negative(mut self, negative: NegativeIndices) -> Self {
        self.index_policy.negative = negative;
        self
    }
    /// Sets the out-of-range rule (as
    /// [`GatherOptions::out_of_range`](crate::GatherOptions::out_of_range), whose rule fills
    /// instead of skipping).
    pub fn out_of_range(mut self, out_of_range: OutOfRange) -> Self {
        self.index_policy.out_of_range = out_of_range;
        self
    }
    /// Sets the accumulation mode.
    pub fn accumulation(mut self, accumulation: Accumulation) -> Self {
        self.accumulation = accumulation;
        self
    }
    /// Sets the thread setting.
    pub fn par(mut self, par: Par) -> Self {
        self.par = par;
        self
    }
    /// Lets `scatter_elements` read `updates` as PyTorch reads `src` (see
    /// [`updates_window`](Self::updates_window)).
    ///
    /// ```
    /// use tensor_scatter::{scatter_elements, ScatterOptions, TensorView};
    /// // torch: torch.zeros(3).scatter_(0, torch.tensor([2, 0]), torch.tensor([1., 2., 3.]))
    /// let out = scatter_elements(
    ///     &TensorView::new(&[0.0f32; 3], &[3]).unwrap(),
    ///     &TensorView::new(&[2i64, 0], &[2]).unwrap(),
    ///     &TensorView::new(&[1.0f32, 2.0, 3.0], &[3]).unwrap(),
    ///     &ScatterOptions::new().updates_window(true),
    /// )
    /// .unwrap();
    /// assert_eq!(out.as_slice(), &[2.0, 0.0, 1.0]);
    /// ```
    pub fn updates_window(mut self, on: bool) -> Self {
        self.updates_window = on;
        self
    }

    /// Sets the tie rule of the min/max backward passes (see [`ties`](Self::ties)).
    pub fn ties(mut self, ties: Ties) -> Self {
        self.ties = ties;
        self
    }

    /// Whether every targeted cell starts from the reduction's identity (`include_self` false
    /// with a reduction other than `none`).
    pub(crate) fn fills(&self) -> bool {
        self.reduction != Reduction::None && !self.include_self
    }
}

/// Formats a shape rule for error messages.
pub(crate) fn shape_text(shape: &[usize]) -> String {
    format!("{shape:?}")
}
