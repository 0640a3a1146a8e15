//! [`SegmentOptions`]: the options every operator of the segment family takes.

use super::Ties;
use crate::dtype::Reduction;
use crate::exec::Par;

/// Options of the segment family.
///
/// Defaults follow torch_scatter: `dim = -1`, no `dim_size`, reduction `sum`.
///
/// ```
/// use tensor_scatter::{Reduction, segment::SegmentOptions};
/// let o = SegmentOptions::new().dim(0).dim_size(10).reduce(Reduction::Mean);
/// assert_eq!((o.dim, o.dim_size, o.reduce), (0, Some(10), Reduction::Mean));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SegmentOptions {
    /// The dim `index` addresses, in `[-rank, rank)`; used by [`scatter`](super::scatter)
    /// and [`scatter_arg`](super::scatter_arg) only (the segment forms take `index.ndim - 1`).
    pub dim: i64,
    /// The output's extent along `dim` when no `out` is given (`None`: `index.max() + 1`).
    /// Ignored by the CSR forms.
    pub dim_size: Option<usize>,
    /// `Add` (torch_scatter's `sum`), `Mean`, `Min`, `Max`, or `Mul`.
    pub reduce: Reduction,
    /// How many threads to use. Never changes the result.
    pub par: Par,
    /// Where the backward of min and max ([`scatter_vjp`](super::scatter_vjp) and the others)
    /// sends the gradient of a cell whose result several values reach.
    pub ties: Ties,
    /// For the `_out` forms: `out` only receives the result, its values take no part (the
    /// result is the one without `out`, written where a runtime wants it: XLA's buffers). A
    /// call that fails may have written `out`: it starts from the reduction's identity, as a
    /// new result does, before the kernel checks the indices.
    pub overwrite: bool,
}

impl Default for SegmentOptions {
    fn default() -> Self {
        SegmentOptions {
            dim: -1,
            dim_size: None,
            reduce: Reduction::Add,
            par: Par::Auto,
            ties: Ties::Split,
            overwrite: false,
        }
    }
}

impl SegmentOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the dim.
    pub fn dim(mut self, dim: i64) -> Self {
        self.dim = dim;
        self
    }
    /// Sets the output's extent along the dim.
    pub fn dim_size(mut self, n: usize) -> Self {
        self.dim_size = Some(n);
        self
    }
    /// Sets the reduction.
    pub fn reduce(mut self, reduce: Reduction) -> Self {
        self.reduce = reduce;
        self
    }
    /// Sets the thread setting.
    pub fn par(mut self, par: Par) -> Self {
        self.par = par;
        self
    }
    /// Sets the tie rule of the min / max backward.
    pub fn ties(mut self, ties: Ties) -> Self {
        self.ties = ties;
        self
    }
    /// Sets whether an `out` only receives the result ([`SegmentOptions::overwrite`]).
    pub fn overwrite(mut self, overwrite: bool) -> Self {
        self.overwrite = overwrite;
        self
    }
}
