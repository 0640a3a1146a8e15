//! `tensor-scatter`: the scatter operators over NumPy `.npy` files.
//!
//! ```text
//! tensor-scatter scatter-elements|scatter-nd|scatter-update --data D.npy --indices I.npy
//!     --updates U.npy --out O.npy [--axis N] [--reduction none|add|sub|mul|min|max|mean]
//!     [--exclude-self] [--negative-indices wrap|error] [--out-of-range error|clamp|skip]
//!     [--wide-accumulation] [--bf16] [--threads N] [--repeat N [--time-in-place]]
//! tensor-scatter gather|gather-elements|gather-nd --data D.npy --indices I.npy --out O.npy
//!     [--axis N] [--batch-dims N] [--negative-indices wrap|error]
//!     [--out-of-range error|clamp|fill] [--fill-value V] [--bf16] [--threads N] [--repeat N]
//! tensor-scatter segment scatter|segment-coo|segment-csr|gather-coo|gather-csr|softmax|
//!     log-softmax|logsumexp|std --src S.npy --index I.npy --out O.npy [--arg-out A.npy]
//!     [--init O0.npy] [--dim N] [--dim-size N] [--reduce sum|mean|mul|min|max] [--biased]
//!     [--bf16] [--threads N] [--repeat N]
//! tensor-scatter onnx OpType --input X.npy [--input Y.npy ...] --out O.npy [--attr NAME=VALUE ...]
//! tensor-scatter batch --cases FILE
//! tensor-scatter demo
//! ```
//!
//! `onnx` runs one ONNX node through the library's `onnx` adapter, with ONNX's own inputs,
//! attributes and dtype rules (Scatter, ScatterElements, ScatterND, Gather, GatherElements,
//! GatherND, TensorScatter). `batch` runs many invocations in one process: each line of FILE is
//! one command line (arguments separated by tabs, without the program name), and stdout gets one
//! line per case, `ok` or `error: MESSAGE`, in order; it exits with status 1 when some case
//! failed. The conformance and differential harnesses use it.
//!
//! On any error: exit status 2, one `error:` line on stderr naming the argument, and `--out`
//! is neither created nor touched.

mod demo;
mod npy;
mod segment;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::time::Instant;

use tensor_scatter::half::{bf16, f16};
use tensor_scatter::{
    Accumulation, Buffer, DType, DynGatherOptions, DynTensor, GatherOp, GatherOutOfRange,
    IndexPolicy, NegativeIndices, OutOfRange, Reduction, ScatterOp, ScatterOptions,
    default_threads, gather_dyn, gather_dyn_out, scatter_dyn, scatter_dyn_into, scatter_dyn_out,
    set_default_threads,
};

#[derive(Parser)]
#[command(
    name = "tensor-scatter",
    version,
    about = "Exact, deterministic tensor scatter over .npy files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// ONNX ScatterElements: indices of data's rank, element-wise along --axis.
    ScatterElements(OpArgs),
    /// ONNX ScatterND: index tuples in the last dimension of indices.
    ScatterNd(OpArgs),
    /// OpenVINO ScatterUpdate-3: whole slices along --axis, indices of any rank
    /// (negative indices are an error by default).
    ScatterUpdate(OpArgs),
    /// ONNX Gather / OpenVINO Gather-8: whole slices along --axis, indices of any rank,
    /// optional --batch-dims.
    Gather(GatherArgs),
    /// ONNX GatherElements / torch gather: indices of data's rank, element-wise along --axis.
    GatherElements(GatherArgs),
    /// ONNX GatherND: index tuples in the last dimension of indices, optional --batch-dims.
    GatherNd(GatherArgs),
    /// torch_scatter's family: scatter with --dim-size, min/max with positions (--arg-out),
    /// segment-coo/csr, gather-coo/csr and the softmax/logsumexp/std composites.
    Segment(segment::SegmentArgs),
    /// Run one ONNX node (op type as in ONNX) through the library's ONNX adapter.
    Onnx(OnnxArgs),
    /// Run many command lines (one per line of --cases, arguments separated by tabs) in one
    /// process; print `ok` or `error: MESSAGE` per line.
    Batch(BatchArgs),
    /// Run every example of the seed specifications and compare with the documented output.
    Demo,
}

#[derive(Args)]
struct OnnxArgs {
    /// ONNX op type: Scatter, ScatterElements, ScatterND, Gather, GatherElements, GatherND or
    /// TensorScatter.
    op_type: String,
    /// The node's inputs in ONNX order (.npy).
    #[arg(long = "input", required = true)]
    inputs: Vec<PathBuf>,
    /// Output file (.npy); written only on success.
    #[arg(long)]
    out: PathBuf,
    /// A node attribute, NAME=VALUE (axis, batch_dims, reduction, mode).
    #[arg(long = "attr", allow_hyphen_values = true)]
    attrs: Vec<String>,
    /// Read 2-byte void arrays ('<V2', as ml_dtypes saves bfloat16) as bfloat16.
    #[arg(long)]
    bf16: bool,
}

#[derive(Args)]
struct BatchArgs {
    /// File with one command line per line, arguments separated by tabs.
    #[arg(long)]
    cases: PathBuf,
}

/// The attributes of an ONNX node, with ONNX's defaults.
struct OnnxAttrs {
    axis: Option<i64>,
    batch_dims: i64,
    reduction: String,
    mode: String,
}

fn parse_attrs(attrs: &[String]) -> Result<OnnxAttrs, Failure> {
    let mut out = OnnxAttrs {
        axis: None,
        batch_dims: 0,
        reduction: "none".into(),
        mode: "linear".into(),
    };
    for a in attrs {
        let (name, value) = a
            .split_once('=')
            .ok_or_else(|| Failure(format!("--attr: '{a}' is not NAME=VALUE")))?;
        let int = || {
            value
                .parse::<i64>()
                .map_err(|_| Failure(format!("--attr: {name}: '{value}' is not an integer")))
        };
        match name {
            "axis" => out.axis = Some(int()?),
            "batch_dims" => out.batch_dims = int()?,
            "reduction" => out.reduction = value.into(),
            "mode" => out.mode = value.into(),
            _ => return Err(Failure(format!("--attr: unknown attribute '{name}'"))),
        }
    }
    Ok(out)
}

fn run_onnx(a: &OnnxArgs) -> Result<(), Failure> {
    use tensor_scatter::onnx;
    const OPS: [&str; 7] = [
        "Scatter",
        "ScatterElements",
        "ScatterND",
        "Gather",
        "GatherElements",
        "GatherND",
        "TensorScatter",
    ];
    if !OPS.contains(&a.op_type.as_str()) {
        return Err(Failure(format!(
            "op_type: '{}' is not supported (one of {})",
            a.op_type,
            OPS.join(", ")
        )));
    }
    let attrs = parse_attrs(&a.attrs)?;
    let inputs = a
        .inputs
        .iter()
        .enumerate()
        .map(|(i, p)| npy::read(p, a.bf16).map_err(|e| Failure(format!("--input {i}: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let arity = |lo: usize, hi: usize| {
        if (lo..=hi).contains(&inputs.len()) {
            Ok(())
        } else {
            Err(Failure(format!(
                "--input: {} takes {lo}..={hi} inputs, got {}",
                a.op_type,
                inputs.len()
            )))
        }
    };
    let axis0 = attrs.axis.unwrap_or(0);
    let fail = |e: tensor_scatter::Error| Failure(e.to_string());
    let out = match a.op_type.as_str() {
        "Scatter" => {
            arity(3, 3)?;
            onnx::scatter(&inputs[0], &inputs[1], &inputs[2], axis0)
        }
        "ScatterElements" => {
            arity(3, 3)?;
            onnx::scatter_elements(&inputs[0], &inputs[1], &inputs[2], axis0, &attrs.reduction)
        }
        "ScatterND" => {
            arity(3, 3)?;
            onnx::scatter_nd(&inputs[0], &inputs[1], &inputs[2], &attrs.reduction)
        }
        "Gather" => {
            arity(2, 2)?;
            onnx::gather(&inputs[0], &inputs[1], axis0)
        }
        "GatherElements" => {
            arity(2, 2)?;
            onnx::gather_elements(&inputs[0], &inputs[1], axis0)
        }
        "GatherND" => {
            arity(2, 2)?;
            onnx::gather_nd(&inputs[0], &inputs[1], attrs.batch_dims)
        }
        "TensorScatter" => {
            arity(2, 3)?;
            onnx::tensor_scatter(
                &inputs[0],
                &inputs[1],
                inputs.get(2),
                attrs.axis.unwrap_or(-2),
                &attrs.mode,
            )
        }
        other => return Err(Failure(format!("op_type: '{other}' is not supported"))),
    }
    .map_err(fail)?;
    npy::write_atomic(&a.out, &out).map_err(|e| Failure(format!("--out: {e}")))
}

/// Runs every line of `--cases` as a command line of its own; one result line per case.
/// Runs every case of `a.cases`; `Ok(false)` when some case failed.
fn run_batch(a: &BatchArgs) -> Result<bool, Failure> {
    use std::io::Write;
    let text = std::fs::read_to_string(&a.cases).map_err(|e| Failure(format!("--cases: {e}")))?;
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let mut all_ok = true;
    for line in text.lines() {
        let args = std::iter::once("tensor-scatter").chain(line.split('\t'));
        let result = match Cli::try_parse_from(args) {
            Err(e) => Err(Failure(
                e.to_string()
                    .lines()
                    .next()
                    .unwrap_or("bad command line")
                    .into(),
            )),
            Ok(Cli {
                command: Command::Batch(_) | Command::Demo,
            }) => Err(Failure("batch runs operator commands only".into())),
            Ok(cli) => dispatch(&cli.command),
        };
        let status = match result {
            Ok(()) => "ok".to_string(),
            Err(Failure(msg)) => {
                all_ok = false;
                format!("error: {}", msg.replace('\n', " "))
            }
        };
        writeln!(w, "{status}").map_err(|e| Failure(format!("stdout: {e}")))?;
    }
    w.flush().map_err(|e| Failure(format!("stdout: {e}")))?;
    Ok(all_ok)
}

fn dispatch(command: &Command) -> Result<(), Failure> {
    match command {
        Command::ScatterElements(a) => run_op(ScatterOp::Elements, a),
        Command::ScatterNd(a) => run_op(ScatterOp::Nd, a),
        Command::ScatterUpdate(a) => run_op(ScatterOp::Update, a),
        Command::Gather(a) => run_gather(GatherOp::Gather, a),
        Command::GatherElements(a) => run_gather(GatherOp::Elements, a),
        Command::GatherNd(a) => run_gather(GatherOp::Nd, a),
        Command::Segment(a) => segment::run_segment(a),
        Command::Onnx(a) => run_onnx(a),
        Command::Batch(_) | Command::Demo => Ok(()), // run by `main`, never nested
    }
}

#[derive(Args)]
struct OpArgs {
    /// Input tensor (.npy).
    #[arg(long)]
    data: PathBuf,
    /// Index tensor (.npy, any integer dtype).
    #[arg(long)]
    indices: PathBuf,
    /// Updates tensor (.npy, data's dtype).
    #[arg(long)]
    updates: PathBuf,
    /// Output file (.npy); written only on success.
    #[arg(long)]
    out: PathBuf,
    /// Axis, in [-rank, rank) (scatter-elements, scatter-update).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    axis: i64,
    /// How updates combine with the destination: none, add, sub, mul, min, max or mean (also
    /// accepted: assign and update for none, sum for add, subtract for sub, prod and multiply
    /// for mul, amin for min, amax for max).
    #[arg(long, default_value = "none", value_parser = parse_reduction)]
    reduction: Reduction,
    /// Start every targeted cell from the reduction's identity instead of its value.
    #[arg(long)]
    exclude_self: bool,
    /// Meaning of negative indices (default: wrap; error for scatter-update).
    #[arg(long, value_enum)]
    negative_indices: Option<NegativeArg>,
    /// Meaning of out-of-range indices.
    #[arg(long, value_enum, default_value_t = OutOfRangeArg::Error)]
    out_of_range: OutOfRangeArg,
    /// Accumulate f16/bf16 reductions in f32 over the whole operation.
    #[arg(long)]
    wide_accumulation: bool,
    /// Read 2-byte void arrays ('<V2', as ml_dtypes saves bfloat16) as bfloat16.
    #[arg(long)]
    bf16: bool,
    /// Threads to use (0 = every core). The result is the same for every value.
    #[arg(long, default_value_t = 0, value_parser = parse_threads, allow_negative_numbers = true)]
    threads: usize,
    /// Also time the operation: after one untimed warm-up, run it N more times on the loaded
    /// inputs, each producing the output from data afresh (into one reused buffer, the copy
    /// included), and print one JSON line to stderr: median_ms, min_ms, runs, threads, isa.
    /// The warm-up's and the last run's outputs must equal the result.
    #[arg(long, default_value_t = 0)]
    repeat: usize,
    /// With --repeat: time the in-place form instead (the destination is reset to data before
    /// each run, outside the timed region), the cost when a caller donates its buffer.
    #[arg(long, requires = "repeat")]
    time_in_place: bool,
}

#[derive(Args)]
struct GatherArgs {
    /// Input tensor (.npy).
    #[arg(long)]
    data: PathBuf,
    /// Index tensor (.npy, any integer dtype).
    #[arg(long)]
    indices: PathBuf,
    /// Output file (.npy); written only on success.
    #[arg(long)]
    out: PathBuf,
    /// Axis, in [-rank, rank) (gather, gather-elements).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    axis: i64,
    /// Leading dims shared by data and indices (gather: may be negative; gather-nd).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    batch_dims: i64,
    /// Meaning of negative indices.
    #[arg(long, value_enum, default_value_t = NegativeArg::Wrap)]
    negative_indices: NegativeArg,
    /// Meaning of out-of-range indices (fill: the gathered values are --fill-value).
    #[arg(long, value_enum, default_value_t = GatherOutOfRangeArg::Error)]
    out_of_range: GatherOutOfRangeArg,
    /// The value of out-of-range elements with --out-of-range fill, in data's dtype (default 0).
    #[arg(long, allow_negative_numbers = true)]
    fill_value: Option<String>,
    /// Read 2-byte void arrays ('<V2', as ml_dtypes saves bfloat16) as bfloat16.
    #[arg(long)]
    bf16: bool,
    /// Threads to use (0 = every core). The result is the same for every value.
    #[arg(long, default_value_t = 0, value_parser = parse_threads, allow_negative_numbers = true)]
    threads: usize,
    /// Also time the operation: after one untimed warm-up, run it N more times into one reused
    /// output buffer and print one JSON line to stderr: median_ms, min_ms, runs, threads, isa.
    /// The warm-up's and the last run's outputs must equal the result.
    #[arg(long, default_value_t = 0)]
    repeat: usize,
}

#[derive(Clone, Copy, ValueEnum)]
enum GatherOutOfRangeArg {
    Error,
    Clamp,
    Fill,
}

/// `--fill-value` as a 0-D tensor of `dtype`, or an error when it does not parse or fit.
fn parse_fill(text: &str, dtype: DType) -> Result<DynTensor, Failure> {
    let bad = || {
        Failure(format!(
            "--fill-value: '{text}' is not a value of dtype {dtype}"
        ))
    };
    let float = || text.trim().parse::<f64>().map_err(|_| bad());
    let int = || text.trim().parse::<i128>().map_err(|_| bad());
    macro_rules! int_fill {
        ($t:ty) => {
            DynTensor::from_vec(vec![<$t>::try_from(int()?).map_err(|_| bad())?], &[])
        };
    }
    let t = match dtype {
        DType::F64 => DynTensor::from_vec(vec![float()?], &[]),
        DType::F32 => DynTensor::from_vec(vec![float()? as f32], &[]),
        DType::F16 => DynTensor::from_vec(vec![f16::from_f64(float()?)], &[]),
        DType::BF16 => DynTensor::from_vec(vec![bf16::from_f64(float()?)], &[]),
        DType::I64 => int_fill!(i64),
        DType::I32 => int_fill!(i32),
        DType::I16 => int_fill!(i16),
        DType::I8 => int_fill!(i8),
        DType::U64 => int_fill!(u64),
        DType::U32 => int_fill!(u32),
        DType::U16 => int_fill!(u16),
        DType::U8 => int_fill!(u8),
        DType::Bool => DynTensor::from_vec(
            vec![match text.trim() {
                "true" | "1" => true,
                "false" | "0" => false,
                _ => return Err(bad()),
            }],
            &[],
        ),
    };
    t.map_err(|e| Failure(format!("--fill-value: {e}")))
}

fn run_gather(op: GatherOp, a: &GatherArgs) -> Result<(), Failure> {
    let read = |flag: &str, path: &PathBuf| {
        npy::read(path, a.bf16).map_err(|e| Failure(format!("--{flag}: {e}")))
    };
    let data = read("data", &a.data)?;
    let indices = read("indices", &a.indices)?;
    let fill = a
        .fill_value
        .as_deref()
        .map(|v| parse_fill(v, data.dtype()))
        .transpose()?;
    let opts = DynGatherOptions::new()
        .axis(a.axis)
        .batch_dims(a.batch_dims)
        .negative(match a.negative_indices {
            NegativeArg::Wrap => NegativeIndices::Wrap,
            NegativeArg::Error => NegativeIndices::Error,
        })
        .out_of_range(match a.out_of_range {
            GatherOutOfRangeArg::Error => GatherOutOfRange::Error,
            GatherOutOfRangeArg::Clamp => GatherOutOfRange::Clamp,
            GatherOutOfRangeArg::Fill => GatherOutOfRange::Fill,
        })
        .fill_value(fill);
    set_default_threads(a.threads);
    let out = gather_dyn(op, &data, &indices, &opts).map_err(|e| Failure(e.to_string()))?;
    if a.repeat > 0 {
        let mut dest = huge_clone(&out)?;
        let mut times = Vec::with_capacity(a.repeat);
        for run in 0..=a.repeat {
            let t = Instant::now();
            gather_dyn_out(op, &data, &indices, &mut dest, &opts)
                .map_err(|e| Failure(e.to_string()))?;
            let elapsed = t.elapsed();
            if checked_run(run, a.repeat) && !dest.bit_eq(&out) {
                return Err(Failure(format!(
                    "--repeat: run {run} differs from the first result (nondeterminism)"
                )));
            }
            if run > 0 {
                times.push(elapsed.as_secs_f64() * 1e3);
            }
        }
        print_timing(op.name(), "out", &times);
    }
    npy::write_atomic(&a.out, &out).map_err(|e| Failure(format!("--out: {e}")))
}

/// A copy of `t` in memory advised to use transparent huge pages, like the CLI's inputs and
/// the library's allocated outputs: the `--repeat` destination (a plain clone would sit on
/// 4 KiB pages, and column tiles of a large matrix touch a new page every row).
fn huge_clone(t: &DynTensor) -> Result<DynTensor, Failure> {
    macro_rules! copy {
        ($($v:ident),*) => {
            match t.buffer() {
                $(Buffer::$v(x) => {
                    let mut v = tensor_scatter::vec_with_huge_pages(x.len());
                    v.extend_from_slice(x);
                    Buffer::$v(v)
                })*
            }
        };
    }
    let buffer = copy!(
        F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, Bool
    );
    DynTensor::new(buffer, t.shape()).map_err(|e| Failure(e.to_string()))
}

/// Whether `--repeat` compares run `run` (0 = the warm-up) with the first result: the warm-up
/// and the last run, as the peer benchmark checks every system before and after its timed
/// runs. Reading the whole output after every run would leave it in cache for the next one,
/// which changes what is measured (and favours cached over streaming stores); determinism
/// across runs and thread counts is the property tests' job.
fn checked_run(run: usize, repeat: usize) -> bool {
    run == 0 || run == repeat
}

/// The one JSON line of `--repeat`.
fn print_timing(op: &str, form: &str, times: &[f64]) {
    eprintln!(
        "{{\"op\":\"{op}\",\"form\":\"{form}\",\"median_ms\":{:.4},\"min_ms\":{:.4},\"runs\":{},\"threads\":{},\"isa\":\"{}\"}}",
        median(times),
        times.iter().copied().fold(f64::INFINITY, f64::min),
        times.len(),
        default_threads(),
        tensor_scatter::isa::active().name(),
    );
}

/// Parses `--threads`: 0 for every core, or a count.
fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<i128>() {
        Ok(n) if n < 0 => Err(format!(
            "{n} is negative: give 0 for every core, or a thread count"
        )),
        Ok(n) => usize::try_from(n)
            .map_err(|_| format!("{n} threads is more than this machine can address")),
        Err(_) => Err(format!(
            "'{s}' is not a whole number: give 0 for every core, or a thread count"
        )),
    }
}

/// Parses `--reduction` with the library's own names (none, add, sub, mul, min, max, mean).
fn parse_reduction(s: &str) -> Result<Reduction, String> {
    s.parse().map_err(|e: tensor_scatter::Error| e.to_string())
}

#[derive(Clone, Copy, ValueEnum)]
enum NegativeArg {
    Wrap,
    Error,
}

#[derive(Clone, Copy, ValueEnum)]
enum OutOfRangeArg {
    Error,
    Clamp,
    Skip,
}

/// A CLI failure: the message already names the argument.
struct Failure(String);

fn run_op(op: ScatterOp, a: &OpArgs) -> Result<(), Failure> {
    let read = |flag: &str, path: &PathBuf| {
        npy::read(path, a.bf16).map_err(|e| Failure(format!("--{flag}: {e}")))
    };
    let data = read("data", &a.data)?;
    let indices = read("indices", &a.indices)?;
    let updates = read("updates", &a.updates)?;
    let negative = match (a.negative_indices, op) {
        (Some(NegativeArg::Wrap), _) => NegativeIndices::Wrap,
        (Some(NegativeArg::Error), _) | (None, ScatterOp::Update) => NegativeIndices::Error,
        (None, _) => NegativeIndices::Wrap,
    };
    let out_of_range = match a.out_of_range {
        OutOfRangeArg::Error => OutOfRange::Error,
        OutOfRangeArg::Clamp => OutOfRange::Clamp,
        OutOfRangeArg::Skip => OutOfRange::Skip,
    };
    let opts = ScatterOptions::new()
        .axis(a.axis)
        .reduction(a.reduction)
        .include_self(!a.exclude_self)
        .index_policy(IndexPolicy::new(negative, out_of_range))
        .accumulation(if a.wide_accumulation {
            Accumulation::Wide
        } else {
            Accumulation::PerUpdate
        });
    set_default_threads(a.threads);
    let out =
        scatter_dyn(op, &data, &indices, &updates, &opts).map_err(|e| Failure(e.to_string()))?;
    if a.repeat > 0 {
        let form = if a.time_in_place { "in_place" } else { "out" };
        let times = time_runs(op, &data, &indices, &updates, &out, &opts, a)?;
        print_timing(op.name(), form, &times);
    }
    npy::write_atomic(&a.out, &out).map_err(|e| Failure(format!("--out: {e}")))
}

/// Runs the operation `a.repeat` times after one warm-up and returns each run's milliseconds.
/// Every run's output is checked against `expected` (a timing of a wrong answer is no timing).
fn time_runs(
    op: ScatterOp,
    data: &DynTensor,
    indices: &DynTensor,
    updates: &DynTensor,
    expected: &DynTensor,
    opts: &ScatterOptions,
    a: &OpArgs,
) -> Result<Vec<f64>, Failure> {
    let fail = |e: tensor_scatter::Error| Failure(e.to_string());
    let mut dest = huge_clone(data)?;
    let mut times = Vec::with_capacity(a.repeat);
    for run in 0..=a.repeat {
        let elapsed = if a.time_in_place {
            dest = huge_clone(data)?;
            let t = Instant::now();
            scatter_dyn_into(op, &mut dest, indices, updates, opts).map_err(fail)?;
            t.elapsed()
        } else {
            let t = Instant::now();
            scatter_dyn_out(op, data, indices, updates, &mut dest, opts).map_err(fail)?;
            t.elapsed()
        };
        if checked_run(run, a.repeat) && !dest.bit_eq(expected) {
            return Err(Failure(format!(
                "--repeat: run {run} differs from the first result (nondeterminism)"
            )));
        }
        if run > 0 {
            times.push(elapsed.as_secs_f64() * 1e3);
        }
    }
    Ok(times)
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Demo => {
            return if demo::run() == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
        }
        Command::Batch(a) => match run_batch(a) {
            Ok(true) => return ExitCode::SUCCESS,
            Ok(false) => return ExitCode::FAILURE,
            Err(e) => Err(e),
        },
        other => dispatch(other),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_seed_example_passes() {
        for example in super::demo::examples() {
            let o = example();
            assert!(
                o.pass,
                "{} — {} failed:\n{}",
                o.source,
                o.title,
                o.lines.join("\n")
            );
        }
    }
}
