//! `tensor-scatter segment OP`: the graph-learning family (torch_scatter's API) over `.npy`
//! files.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use tensor_scatter::segment::SegmentOptions;
use tensor_scatter::{
    DynTensor, Reduction, SegmentOp, segment_dyn, segment_dyn_out, set_default_threads,
};

use crate::{Failure, huge_clone, npy, parse_reduction, parse_threads, print_timing};

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SegmentKind {
    /// torch_scatter `scatter`: reduce src into the cells index names along --dim.
    Scatter,
    /// `segment_coo`: a sorted index, dim = index.ndim - 1.
    SegmentCoo,
    /// `segment_csr`: offsets (--index is indptr), dim = indptr.ndim - 1.
    SegmentCsr,
    /// `gather_coo`: every position reads its segment's row.
    GatherCoo,
    /// `gather_csr`: every position of segment i reads row i.
    GatherCsr,
    /// `scatter_softmax` (floats).
    Softmax,
    /// `scatter_log_softmax` (floats).
    LogSoftmax,
    /// `scatter_logsumexp` (floats).
    Logsumexp,
    /// `scatter_std` (floats; --biased divides by n).
    Std,
}

#[derive(Args)]
pub(crate) struct SegmentArgs {
    /// The operator.
    #[arg(value_enum)]
    op: SegmentKind,
    /// Source tensor (.npy).
    #[arg(long)]
    src: PathBuf,
    /// Index tensor, or CSR offsets for segment-csr and gather-csr (.npy, any integer dtype).
    #[arg(long)]
    index: PathBuf,
    /// Output file (.npy); written only on success.
    #[arg(long)]
    out: PathBuf,
    /// With min or max (scatter, segment-coo, segment-csr): also write the positions (int64)
    /// of the elements each cell took its value from.
    #[arg(long)]
    arg_out: Option<PathBuf>,
    /// Starting values of the output (torch_scatter's out=): they take part in the fold.
    #[arg(long)]
    init: Option<PathBuf>,
    /// The dim index addresses (scatter and the composites).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    dim: i64,
    /// The output's extent along dim (default: index.max() + 1).
    #[arg(long)]
    dim_size: Option<usize>,
    /// sum (add), mean, mul (prod), min or max.
    #[arg(long, default_value = "sum", value_parser = parse_reduction)]
    reduce: Reduction,
    /// std: divide by n instead of n - 1.
    #[arg(long)]
    biased: bool,
    /// Read 2-byte void arrays ('<V2', as ml_dtypes saves bfloat16) as bfloat16.
    #[arg(long)]
    bf16: bool,
    /// Threads to use (0 = every core). The result is the same for every value.
    #[arg(long, default_value_t = 0, value_parser = parse_threads, allow_negative_numbers = true)]
    threads: usize,
    /// Also time the operation: after one untimed warm-up, run it N more times on the loaded
    /// inputs and print one JSON line to stderr (median_ms, min_ms, runs, threads, isa). The
    /// last run's output must equal the result.
    #[arg(long, default_value_t = 0)]
    repeat: usize,
}

pub(crate) fn run_segment(a: &SegmentArgs) -> Result<(), Failure> {
    let read = |flag: &str, path: &PathBuf| {
        npy::read(path, a.bf16).map_err(|e| Failure(format!("--{flag}: {e}")))
    };
    let src = read("src", &a.src)?;
    let index = read("index", &a.index)?;
    let init = a.init.as_ref().map(|p| read("init", p)).transpose()?;
    let op = match a.op {
        SegmentKind::Scatter => SegmentOp::Scatter,
        SegmentKind::SegmentCoo => SegmentOp::Coo,
        SegmentKind::SegmentCsr => SegmentOp::Csr,
        SegmentKind::GatherCoo => SegmentOp::GatherCoo,
        SegmentKind::GatherCsr => SegmentOp::GatherCsr,
        SegmentKind::Softmax => SegmentOp::Softmax,
        SegmentKind::LogSoftmax => SegmentOp::LogSoftmax,
        SegmentKind::Logsumexp => SegmentOp::LogSumExp,
        SegmentKind::Std => SegmentOp::Std {
            unbiased: !a.biased,
        },
    };
    let mut opts = SegmentOptions::new().dim(a.dim).reduce(a.reduce);
    if let Some(n) = a.dim_size {
        opts = opts.dim_size(n);
    }
    let want_arg = a.arg_out.is_some();
    set_default_threads(a.threads);
    let fail = |e: tensor_scatter::Error| Failure(e.to_string());
    let run = || -> Result<(DynTensor, Option<tensor_scatter::Tensor<i64>>), Failure> {
        match &init {
            None => segment_dyn(op, &src, &index, &opts, want_arg).map_err(fail),
            Some(i) => {
                let mut out = huge_clone(i)?;
                let arg =
                    segment_dyn_out(op, &src, &index, &mut out, &opts, want_arg).map_err(fail)?;
                Ok((out, arg))
            }
        }
    };
    let (out, arg) = run()?;
    if a.repeat > 0 {
        let mut times = Vec::with_capacity(a.repeat);
        let mut last = None;
        for _ in 0..a.repeat {
            let t = Instant::now();
            let r = run()?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            last = Some(r);
        }
        if last.is_some_and(|(v, _)| !v.bit_eq(&out)) {
            return Err(Failure(
                "--repeat: a timed run differs from the result".into(),
            ));
        }
        print_timing(op.name(), "out_of_place", &times);
    }
    npy::write_atomic(&a.out, &out).map_err(|e| Failure(format!("--out: {e}")))?;
    if let (Some(path), Some(arg)) = (&a.arg_out, arg) {
        npy::write_atomic(path, &arg.into()).map_err(|e| Failure(format!("--arg-out: {e}")))?;
    }
    Ok(())
}
