//! The backward passes of the scatters and the gathers: each is made of the other engine's
//! operators (a scatter's gradient is a gather, a gather's a scatter-add) and the segment
//! family's helpers, so it sits above all three. The segment family's own are in `segment`.

mod gather;
mod scatter;

pub use gather::{gather_elements_vjp, gather_nd_vjp, gather_vjp};
pub use scatter::{ScatterGrads, scatter_elements_vjp, scatter_nd_vjp, scatter_update_vjp};
