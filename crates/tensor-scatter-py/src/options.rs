//! The operators and options by name, as both callers give them: Python keywords (`lib.rs`)
//! and XLA attributes (`xla.rs`). An unknown name is a message naming the operator, the
//! keyword and the names accepted; each caller raises it its own way.

use tensor_scatter::segment::Ties;
use tensor_scatter::{
    Accumulation, GatherOp, GatherOutOfRange, NegativeIndices, OutOfRange, Reduction, ScatterOp,
    SegmentOp,
};

/// The reductions the three scatters take: ours, then the peers' names for them.
pub const SCATTER_REDUCTIONS: &[&str] = &[
    "none", "add", "sub", "mul", "min", "max", "mean", "sum", "prod", "amin", "amax", "assign",
    "update", "subtract", "multiply",
];

/// The reductions of the segment family, by torch_scatter's names (then PyTorch's).
pub const SEGMENT_REDUCTIONS: &[&str] = &[
    "sum", "add", "mul", "mean", "min", "max", "prod", "multiply", "amin", "amax",
];

/// The reductions that also give positions.
pub const WITH_POSITIONS: &[&str] = &["min", "max", "amin", "amax"];

pub fn scatter_op(s: &str) -> Result<(ScatterOp, &'static str), String> {
    match s {
        "elements" => Ok((ScatterOp::Elements, "scatter_elements")),
        "nd" => Ok((ScatterOp::Nd, "scatter_nd")),
        "update" => Ok((ScatterOp::Update, "scatter_update")),
        _ => Err(format!("unknown scatter '{s}'")),
    }
}

pub fn gather_op(s: &str) -> Result<(GatherOp, &'static str), String> {
    match s {
        "gather" => Ok((GatherOp::Gather, "gather")),
        "elements" => Ok((GatherOp::Elements, "gather_elements")),
        "nd" => Ok((GatherOp::Nd, "gather_nd")),
        _ => Err(format!("unknown gather '{s}'")),
    }
}

/// A segment-family operator; `"std_biased"` is `scatter_std(unbiased=False)`.
pub fn segment_op(s: &str, unbiased: bool) -> Result<SegmentOp, String> {
    Ok(match s {
        "scatter" => SegmentOp::Scatter,
        "coo" => SegmentOp::Coo,
        "csr" => SegmentOp::Csr,
        "gather_coo" => SegmentOp::GatherCoo,
        "gather_csr" => SegmentOp::GatherCsr,
        "softmax" => SegmentOp::Softmax,
        "log_softmax" => SegmentOp::LogSoftmax,
        "logsumexp" => SegmentOp::LogSumExp,
        "std" => SegmentOp::Std { unbiased },
        "std_biased" => SegmentOp::Std { unbiased: false },
        _ => return Err(format!("unknown segment operator '{s}'")),
    })
}

/// `"'a', 'b', 'c'"`.
pub fn listed(accepted: &[&str]) -> String {
    let quoted: Vec<String> = accepted.iter().map(|a| format!("'{a}'")).collect();
    quoted.join(", ")
}

/// A reduction by name, one of `accepted` (the names the caller's function takes).
pub fn reduction(
    name: &str,
    keyword: &str,
    s: &str,
    accepted: &[&str],
) -> Result<Reduction, String> {
    match (accepted.contains(&s), s.parse::<Reduction>()) {
        (true, Ok(r)) => Ok(r),
        _ => Err(format!(
            "{name}: {keyword}: '{s}' is not one of {}",
            listed(accepted)
        )),
    }
}

fn one_of<T: Copy>(name: &str, keyword: &str, s: &str, names: &[(&str, T)]) -> Result<T, String> {
    match names.iter().find(|(n, _)| *n == s) {
        Some(&(_, v)) => Ok(v),
        None => {
            let accepted: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
            Err(format!(
                "{name}: {keyword}: '{s}' is not one of {}",
                listed(&accepted)
            ))
        }
    }
}

pub fn negative(name: &str, s: &str) -> Result<NegativeIndices, String> {
    let names = [
        ("wrap", NegativeIndices::Wrap),
        ("error", NegativeIndices::Error),
    ];
    one_of(name, "negative_indices", s, &names)
}

/// `out_of_range=` of a scatter.
pub fn scatter_range(name: &str, s: &str) -> Result<OutOfRange, String> {
    let names = [
        ("error", OutOfRange::Error),
        ("clamp", OutOfRange::Clamp),
        ("skip", OutOfRange::Skip),
    ];
    one_of(name, "out_of_range", s, &names)
}

/// `out_of_range=` of a gather.
pub fn gather_range(name: &str, s: &str) -> Result<GatherOutOfRange, String> {
    let names = [
        ("error", GatherOutOfRange::Error),
        ("clamp", GatherOutOfRange::Clamp),
        ("fill", GatherOutOfRange::Fill),
    ];
    one_of(name, "out_of_range", s, &names)
}

pub fn accumulation(name: &str, s: &str) -> Result<Accumulation, String> {
    let names = [
        ("per_update", Accumulation::PerUpdate),
        ("wide", Accumulation::Wide),
    ];
    one_of(name, "accumulation", s, &names)
}

/// `ties=` of a backward pass.
pub fn ties(name: &str, s: &str) -> Result<Ties, String> {
    one_of(
        name,
        "ties",
        s,
        &[("split", Ties::Split), ("first", Ties::First)],
    )
}
