//! The hot loops. They run only after the plan and the index pass have proven every position
//! in bounds, so they cannot fail.
//!
//! Today every kernel is safe Rust: each run is bounds-checked once when it is sliced out, and
//! the element loop over the run is a plain zip the compiler vectorises. Unchecked access, when
//! a later kernel needs it, lives only in this module, with a `// SAFETY:` comment per block
//! and a checked twin behind the `checked-kernels` feature.

use crate::dtype::Element;
use crate::reduce::Combiner;

/// `dest[d + i] = C(dest[d + i], upd[u + i])` for `i < len`.
#[inline(always)]
pub(crate) fn combine<T: Element, C: Combiner<T>>(
    dest: &mut [T],
    d: usize,
    upd: &[T],
    u: usize,
    len: usize,
) {
    let dst = &mut dest[d..d + len];
    let src = &upd[u..u + len];
    for (x, &y) in dst.iter_mut().zip(src) {
        *x = C::combine(*x, y);
    }
}

/// `dest[d + i] = value` for `i < len`.
#[inline(always)]
pub(crate) fn fill<T: Copy>(dest: &mut [T], d: usize, len: usize, value: T) {
    dest[d..d + len].fill(value);
}
