//! Reductions: the parsing and checks of the [`Reduction`] enum (plain data in `dtype`, whose
//! `Element` methods carry the scalar rules it selects), the [`Accumulation`] setting, and
//! the zero-sized combiners the kernels are monomorphised over (no `match` per element).

use std::str::FromStr;

use crate::dtype::Element;
pub(crate) use crate::dtype::Reduction;
use crate::error::{Error, Result};

impl Reduction {
    /// Checks that the reduction is defined for the data type `T` (mean is not defined for bool).
    pub(crate) fn check_for<T: Element>(self, op: &'static str) -> Result<()> {
        if self == Reduction::Mean && !T::HAS_MEAN {
            return Err(Error::reduction(
                op,
                "mean",
                format!("mean is not defined for {} data", T::DTYPE),
            ));
        }
        Ok(())
    }
}

impl FromStr for Reduction {
    type Err = Error;

    /// Parses our names plus the peers' aliases: `sum`, `prod`/`multiply`, `amin`, `amax`,
    /// `subtract`, `assign`/`update`.
    fn from_str(s: &str) -> Result<Reduction> {
        Ok(match s {
            "none" | "assign" | "update" => Reduction::None,
            "add" | "sum" => Reduction::Add,
            "sub" | "subtract" => Reduction::Sub,
            "mul" | "prod" | "multiply" => Reduction::Mul,
            "min" | "amin" => Reduction::Min,
            "max" | "amax" => Reduction::Max,
            "mean" => Reduction::Mean,
            other => {
                return Err(Error::reduction(
                    "parse",
                    other,
                    "expected one of none, add, sub, mul, min, max, mean",
                ));
            }
        })
    }
}

/// Where the gradient of a min or max cell goes when several of its values equal the result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ties {
    /// Evenly among them, `out`'s starting value included (PyTorch's `scatter_reduce` rule).
    #[default]
    Split,
    /// All to the one the forward's `arg` names: the first in index order, or `out`'s value
    /// when the cell kept it (torch_scatter's rule).
    First,
}

/// Where f16/bf16 reductions accumulate.
///
/// ```
/// use half::f16;
/// use tensor_scatter::{scatter_elements, Accumulation, Reduction, ScatterOptions, TensorView};
///
/// // 3000 additions of 1.0 into an f16 zero.
/// let data = [f16::ZERO];
/// let idx = vec![0i32; 3000];
/// let upd = vec![f16::ONE; 3000];
/// let run = |acc| {
///     let opts = ScatterOptions::new().reduction(Reduction::Add).accumulation(acc);
///     scatter_elements(
///         &TensorView::new(&data, &[1]).unwrap(),
///         &TensorView::new(&idx, &[3000]).unwrap(),
///         &TensorView::new(&upd, &[3000]).unwrap(),
///         &opts,
///     )
///     .unwrap()
///     .into_vec()[0]
/// };
/// assert_eq!(run(Accumulation::PerUpdate), f16::from_f32(2048.0)); // 2048 + 1 rounds back
/// assert_eq!(run(Accumulation::Wide), f16::from_f32(3000.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Accumulation {
    /// Each update is computed in f32 and rounded once to the storage type (what the specs,
    /// ONNX Runtime, PyTorch CPU and JAX do).
    #[default]
    PerUpdate,
    /// The whole fold of a cell runs in f32 and is rounded once at the end. Applies to f16
    /// and bf16; other dtypes already compute in their own type and are unaffected.
    Wide,
}

/// A binary combine step `acc ← f(acc, update)`, as a zero-sized type per reduction.
pub(crate) trait Combiner<T: Element> {
    /// Whether the combine only moves the update (`none`).
    const MOVES: bool = false;
    /// Whether the segment folds compile this combine per instruction set (for the float
    /// types): every one but the product, which no benchmark workload runs. Its folds run the
    /// baseline code; their AVX2 and AVX-512 copies were 0.35 MB of each binary
    /// (record/2026-11-28-binary-size.md). (The scatter folds' copies of the product and the
    /// difference are 44 KB: kept.)
    const VERSIONED: bool = true;
    fn combine(acc: T, update: T) -> T;
    /// `combine` when neither operand is NaN: the same bits, possibly in fewer steps.
    #[inline(always)]
    fn combine_ordered(acc: T, update: T) -> T {
        Self::combine(acc, update)
    }
}

macro_rules! combiner {
    ($name:ident, $method:ident $(, $versioned:literal)?) => {
        pub(crate) struct $name;
        impl<T: Element> Combiner<T> for $name {
            $(const VERSIONED: bool = $versioned;)?
            #[inline(always)]
            fn combine(acc: T, update: T) -> T {
                acc.$method(update)
            }
        }
    };
}

pub(crate) struct Assign;
impl<T: Element> Combiner<T> for Assign {
    const MOVES: bool = true;
    #[inline(always)]
    fn combine(_acc: T, update: T) -> T {
        update
    }
}
combiner!(AddC, reduce_add);
combiner!(SubC, reduce_sub);
combiner!(MulC, reduce_mul);
combiner!(FoldAddC, fold_add);
combiner!(FoldMulC, fold_mul, false);

/// Min and max: their ordered forms skip the NaN rule (see `Element::fold_min_ordered`).
macro_rules! extreme_combiner {
    ($name:ident, $method:ident, $ordered:ident) => {
        pub(crate) struct $name;
        impl<T: Element> Combiner<T> for $name {
            #[inline(always)]
            fn combine(acc: T, update: T) -> T {
                acc.$method(update)
            }
            #[inline(always)]
            fn combine_ordered(acc: T, update: T) -> T {
                acc.$ordered(update)
            }
        }
    };
}
extreme_combiner!(MinC, fold_min, fold_min_ordered);
extreme_combiner!(MaxC, fold_max, fold_max_ordered);
