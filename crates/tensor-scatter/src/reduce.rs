//! Reductions: the [`Reduction`] enum (re-exported from `dtype`, whose `Element` methods
//! carry the scalar rules it selects), its parsing and checks, the [`Accumulation`] setting,
//! and the zero-sized combiners the kernels are monomorphised over (no `match` per element).

use std::fmt;
use std::str::FromStr;

use crate::dtype::Element;
use crate::error::{Error, Result};

/// How an update combines with the value already in the destination cell.
///
/// With duplicates, updates fold in row-major order of `indices`:
/// `cell = f(...f(f(start, u₀), u₁)..., uₙ)` where `start` is the cell's value
/// (`include_self = true`) or the reduction's identity (`include_self = false`).
/// `Mean` divides that sum by the number of terms (`n + 1` or `n`).
///
/// ```
/// use tensor_scatter::Reduction;
/// assert_eq!("add".parse::<Reduction>().unwrap(), Reduction::Add);
/// assert_eq!("sum".parse::<Reduction>().unwrap(), Reduction::Add); // OpenVINO's name
/// assert_eq!(Reduction::Max.to_string(), "max");
/// assert!("argmax".parse::<Reduction>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Reduction {
    /// Assignment: the last update in index order wins (ONNX `none`).
    #[default]
    None,
    /// Sum (OpenVINO `sum`; bool: OR).
    Add,
    /// Subtraction of each update (OpenVINO ScatterNDUpdate-15 `sub`; bool: XOR).
    Sub,
    /// Product (OpenVINO `prod`; bool: AND).
    Mul,
    /// IEEE `minimum` (torch `amin`; bool: AND).
    Min,
    /// IEEE `maximum` (torch `amax`; bool: OR).
    Max,
    /// Arithmetic mean; integer results round toward −∞. Not defined for bool.
    Mean,
}

impl Reduction {
    /// Every reduction, in declaration order.
    pub const ALL: [Reduction; 7] = [
        Reduction::None,
        Reduction::Add,
        Reduction::Sub,
        Reduction::Mul,
        Reduction::Min,
        Reduction::Max,
        Reduction::Mean,
    ];

    /// The canonical lower-case name (`none`, `add`, `sub`, `mul`, `min`, `max`, `mean`).
    ///
    /// ```
    /// assert_eq!(tensor_scatter::Reduction::Mean.name(), "mean");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Reduction::None => "none",
            Reduction::Add => "add",
            Reduction::Sub => "sub",
            Reduction::Mul => "mul",
            Reduction::Min => "min",
            Reduction::Max => "max",
            Reduction::Mean => "mean",
        }
    }
}

impl fmt::Display for Reduction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
    fn combine(acc: T, update: T) -> T;
    /// `combine` when neither operand is NaN: the same bits, possibly in fewer steps.
    #[inline(always)]
    fn combine_ordered(acc: T, update: T) -> T {
        Self::combine(acc, update)
    }
}

macro_rules! combiner {
    ($name:ident, $method:ident) => {
        pub(crate) struct $name;
        impl<T: Element> Combiner<T> for $name {
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
combiner!(FoldMulC, fold_mul);

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
