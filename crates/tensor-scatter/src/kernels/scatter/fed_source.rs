//! Where the fed fold's cell numbers come from: one index per update ([`Elems`]), or a
//! ScatterND pair or triple per update that addresses one cell of the row ([`Tuples`],
//! `x[r, c] += v`). The fold takes them as a `&dyn` [`Cells`], so it is compiled once per
//! value type and reduction, not again per index type and tuple length; a call to the source
//! resolves a whole chunk, vectorised.

use crate::index::{IndexInt, shifted_cell};
use crate::isa::Level;

/// A source of cell numbers for the fed fold.
///
/// # Safety
/// [`resolve`](Cells::resolve) returns `true` only if every number it wrote is below
/// [`cells`](Cells::cells): the fold indexes its row with them unchecked.
pub(crate) unsafe trait Cells: Sync {
    /// The number of updates.
    fn count(&self) -> usize;

    /// The number of cells in the row.
    fn cells(&self) -> usize;

    /// Writes the cell numbers of updates `lo..lo + out.len()` to `out`; whether every one
    /// was accepted (the numbers of a refused chunk are garbage).
    fn resolve(&self, lo: usize, out: &mut [u32]) -> bool;

    /// The position of the first refused update in `lo..hi` (`hi` when there is none).
    fn first_refused(&self, lo: usize, hi: usize) -> usize {
        (lo..hi)
            .find(|&e| !self.resolve(e, &mut [0u32]))
            .unwrap_or(hi)
    }
}

/// One index per update (`scatter_elements`, `scatter_update`, one-component ScatterND) into
/// a row of `n` cells, negative indices shifted by `shift` ([`shifted_cell`]).
pub(crate) struct Elems<'a, I> {
    pub(crate) idx: &'a [I],
    pub(crate) n: usize,
    pub(crate) shift: i64,
    pub(crate) level: Level,
}

// SAFETY: `elem_cells` accepts a number only below `n`.
unsafe impl<I: IndexInt> Cells for Elems<'_, I> {
    fn count(&self) -> usize {
        self.idx.len()
    }

    fn cells(&self) -> usize {
        self.n
    }

    fn resolve(&self, lo: usize, out: &mut [u32]) -> bool {
        let idx = &self.idx[lo..lo + out.len()];
        elem_cells(self.level, idx, self.n, self.shift, out)
    }
}

/// Pairs or triples per update (`dims.len()` components, row-major), each addressing one cell
/// of a row of `n` cells: component `j` a position along a dim of `dims[j].0` cells at stride
/// `dims[j].1`, negative ones shifted by `shifts[j]`.
pub(crate) struct Tuples<'a, I> {
    pub(crate) idx: &'a [I],
    pub(crate) dims: &'a [(usize, usize)],
    pub(crate) shifts: &'a [i64],
    pub(crate) n: usize,
    pub(crate) level: Level,
}

// SAFETY: `tuple_cells` accepts a number only below `n`.
unsafe impl<I: IndexInt> Cells for Tuples<'_, I> {
    fn count(&self) -> usize {
        self.idx.len() / self.dims.len()
    }

    fn cells(&self) -> usize {
        self.n
    }

    fn resolve(&self, lo: usize, out: &mut [u32]) -> bool {
        let k = self.dims.len();
        let idx = &self.idx[lo * k..(lo + out.len()) * k];
        tuple_cells(self.level, idx, self.dims, self.shifts, self.n, out)
    }
}

crate::kernels::simd::multiversion! {
    /// The cells of `idx` in a row of `n` cells (negative indices shifted by `shift`) into
    /// `out`; whether every one lies below `n`. Branch-free, so it vectorises.
    fn elem_cells<I: IndexInt>(idx: &[I], n: usize, shift: i64, out: &mut [u32]) -> bool {
        let mut ok = true;
        for (o, x) in out.iter_mut().zip(idx) {
            let p = shifted_cell(x.to_i64_sat(), shift);
            ok &= p < n as u64;
            // A refused number's truncation is garbage, and the chunk is refused.
            *o = p as u32;
        }
        ok
    }
}

/// The offset of one tuple of `K` components and whether each was accepted. In 32-bit
/// arithmetic: exact for an accepted tuple of a row of at most `u32::MAX` cells (every term
/// is at most the offset); a refused tuple's offset is garbage.
#[inline(always)]
fn tuple_cell<I: IndexInt, const K: usize>(
    tuple: &[I],
    dims: &[(usize, usize); K],
    shifts: &[i64; K],
) -> (u32, bool) {
    let mut ok = true;
    let mut off = 0u32;
    for j in 0..K {
        let c = shifted_cell(tuple[j].to_i64_sat(), shifts[j]);
        ok &= c < dims[j].0 as u64;
        off = off.wrapping_add((c as u32).wrapping_mul(dims[j].1 as u32));
    }
    (off, ok)
}

crate::kernels::simd::multiversion! {
    /// The cells of the pairs or triples of `idx` in a row of `n` cells, into `out` (one per
    /// tuple); whether every tuple was accepted and lies below `n`. Other tuple lengths are
    /// refused. Unrolled per length, so it vectorises.
    fn tuple_cells<I: IndexInt>(
        idx: &[I],
        dims: &[(usize, usize)],
        shifts: &[i64],
        n: usize,
        out: &mut [u32],
    ) -> bool {
        #[inline(always)]
        fn fixed<I: IndexInt, const K: usize>(
            idx: &[I],
            dims: &[(usize, usize); K],
            shifts: &[i64; K],
            n: usize,
            out: &mut [u32],
        ) -> bool {
            let mut ok = true;
            for (tuple, o) in idx.chunks_exact(K).zip(out) {
                let (off, good) = tuple_cell(tuple, dims, shifts);
                ok &= good & ((off as usize) < n);
                *o = off;
            }
            ok
        }
        match (dims, shifts) {
            (&[a, b], &[sa, sb]) => fixed(idx, &[a, b], &[sa, sb], n, out),
            (&[a, b, c], &[sa, sb, sc]) => fixed(idx, &[a, b, c], &[sa, sb, sc], n, out),
            _ => false,
        }
    }
}
