//! Reductions: the [`Reduction`] enum (re-exported from `dtype`, whose `Element` methods
//! carry the scalar rules it selects), its parsing and checks, the [`Accumulation`] setting,
//! and the zero-sized combiners the kernels are monomorphised over (no `match` per element).

use std::fmt;
use std::str::FromStr;

use crate::dtype::{DType, Element};
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
    /// A step of the min/max fold with positions on operands that are not NaN: the new value,
    /// and whether the position moves to `update`'s. The bits of `combine_ordered` and whether
    /// they changed, except that for f32 and f64 it is one compare (`update` strictly better),
    /// selected on, under which a zero never replaces the other zero: a fold that ends
    /// [suspect](Combiner::arg_suspect) is taken again with the full rule when a
    /// [rival](Combiner::arg_rival) is among its values.
    #[inline(always)]
    fn arg_step(acc: T, update: T) -> (T, bool) {
        moved(acc, Self::combine_ordered(acc, update))
    }
    /// Whether a fold of [`arg_step`](Combiner::arg_step)s that ended at `acc` may differ
    /// from the full rule's: for the f32/f64 min at `+0` (a later `-0` replaces it under the
    /// full rule), the max at `-0`. Before any zero the two folds agree, bits and positions;
    /// the first zero taken is the same row in both; after it only that case differs.
    #[inline(always)]
    fn arg_suspect(acc: T) -> bool {
        let _ = acc;
        false
    }
    /// Whether `x` can replace a [suspect](Combiner::arg_suspect) result (`-0` for the min,
    /// `+0` for the max).
    #[inline(always)]
    fn arg_rival(x: T) -> bool {
        let _ = x;
        false
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
    ($name:ident, $method:ident, $ordered:ident, $max:expr) => {
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
            #[inline(always)]
            fn arg_step(acc: T, update: T) -> (T, bool) {
                match beats(update, acc, $max) {
                    Some(b) => (if b { update } else { acc }, b),
                    None => moved(acc, acc.$ordered(update)),
                }
            }
            #[inline(always)]
            fn arg_suspect(acc: T) -> bool {
                is_zero(acc, $max)
            }
            #[inline(always)]
            fn arg_rival(x: T) -> bool {
                is_zero(x, !$max)
            }
        }
    };
}
extreme_combiner!(MinC, fold_min, fold_min_ordered, false);
extreme_combiner!(MaxC, fold_max, fold_max_ordered, true);

/// A fold's step from `acc` to `n`: `n`, and whether its bits differ from `acc`'s (a
/// position moves only when they do).
#[inline(always)]
pub(crate) fn moved<T: Element>(acc: T, n: T) -> (T, bool) {
    (n, n.to_bits_u64() != acc.to_bits_u64())
}

/// For f32 and f64, whether `x` is greater (`max`) or less than `acc`; `None` for other types.
#[inline(always)]
fn beats<T: Element>(x: T, acc: T, max: bool) -> Option<bool> {
    let (x, acc) = (x.to_bits_u64(), acc.to_bits_u64());
    Some(match T::DTYPE {
        DType::F32 => {
            let (x, acc) = (f32::from_bits(x as u32), f32::from_bits(acc as u32));
            if max { x > acc } else { x < acc }
        }
        DType::F64 => {
            let (x, acc) = (f64::from_bits(x), f64::from_bits(acc));
            if max { x > acc } else { x < acc }
        }
        _ => return None,
    })
}

/// Whether `x` is the f32/f64 zero of sign `negative` (false for other types).
#[inline(always)]
fn is_zero<T: Element>(x: T, negative: bool) -> bool {
    let sign = match T::DTYPE {
        DType::F32 => 1 << 31,
        DType::F64 => 1 << 63,
        _ => return false,
    };
    x.to_bits_u64() == if negative { sign } else { 0 }
}
