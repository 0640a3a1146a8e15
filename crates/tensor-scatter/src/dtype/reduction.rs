//! The [`Reduction`] enum, plain data: its parsing and its checks against a dtype are in
//! `reduce`, the layer above.

use std::fmt;

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
