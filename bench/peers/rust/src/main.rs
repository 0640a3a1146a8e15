//! The Rust peers of the side-by-side benchmark, run by `bench.py` in their own process:
//!
//! ```text
//! rust-peers candle OP AXIS REDUCTION DATA.npy INDICES.npy UPDATES.npy|- OUT.npy
//! rust-peers tract MODEL.onnx OUT.npy FEED.npy...
//! ```
//!
//! Each times the operation like the Python harness (one warm-up, then at least 7 runs and
//! up to 30 within about 3 s), writes the last output to `OUT.npy` for the harness to check
//! bit for bit, and prints one JSON line: `median_ms`, `min_ms`, `runs`, `variant`.
//! Every run produces the output from `data` afresh (a copy into a reused output where the
//! API allows it, else a fresh output). Where candle offers several ways to express a
//! workload, each is timed and the fastest reported (`variant` names it). A workload that
//! the library cannot express exits with status 3 and a `not expressible:` line.

use std::time::Instant;

use candle_core::{DType, Device, Tensor};

/// candle's tensor, where tract's prelude is in scope.
type CTensor = candle_core::Tensor;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Times `f` like the harness's `timeit`: one warm-up, then >= 7 and <= 30 runs in ~3 s.
fn timeit(mut f: impl FnMut() -> Res<()>) -> Res<Vec<f64>> {
    f()?;
    let (mut times, start) = (Vec::new(), Instant::now());
    while times.len() < 30 && (times.len() < 7 || start.elapsed().as_secs_f64() < 3.0) {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(times)
}

fn median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let med = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (med, v[0])
}

/// One way of computing the output: a timed closure that leaves its result in `out`.
struct Variant<'a> {
    name: &'static str,
    run: Box<dyn FnMut() -> Res<Tensor> + 'a>,
}

fn not_expressible(what: &str) -> ! {
    eprintln!("not expressible: {what}");
    std::process::exit(3);
}

fn candle(args: &[String]) -> Res<()> {
    let [op, axis, red, data, idx, upd, out] = args else {
        return Err("candle OP AXIS REDUCTION DATA INDICES UPDATES|- OUT".into());
    };
    let axis: usize = axis.parse()?;
    let data = Tensor::read_npy(data)?;
    let idx = Tensor::read_npy(idx)?;
    let upd = if upd == "-" {
        None
    } else {
        Some(Tensor::read_npy(upd)?)
    };
    let add = red == "add";
    // A reused output for the copy-then-scatter-in-place variants (allocated once).
    let reused = Tensor::zeros(data.shape(), data.dtype(), &Device::Cpu)?;
    let mut variants: Vec<Variant> = Vec::new();
    match op.as_str() {
        "gather" => {
            variants.push(Variant {
                name: "index_select",
                run: Box::new(|| Ok(data.index_select(&idx, axis)?)),
            });
        }
        "gather_elements" => {
            variants.push(Variant {
                name: "gather",
                run: Box::new(|| Ok(data.gather(&idx, axis)?)),
            });
        }
        "scatter_elements" | "scatter_nd" => {
            let upd = upd.as_ref().ok_or("updates")?;
            let rows = idx.flatten_all()?; // ScatterND's row indices, for `index_add`
            // candle's scatters take one index per update element: ScatterND rows need the
            // row index repeated along the row (built once, outside the timing).
            let idx = if op == "scatter_nd" {
                idx.broadcast_as(upd.shape())?.contiguous()?
            } else {
                idx.clone()
            };
            if op == "scatter_nd" && add {
                let data = data.clone();
                variants.push(Variant {
                    name: "index_add",
                    run: Box::new(move || Ok(data.index_add(&rows, upd, axis)?)),
                });
            }
            let (idx2, reused2, data2) = (idx.clone(), &reused, data.clone());
            variants.push(Variant {
                name: if add {
                    "slice_set+scatter_add_set"
                } else {
                    "slice_set+scatter_set"
                },
                run: Box::new(move || {
                    reused2.slice_set(&data2, 0, 0)?;
                    if add {
                        reused2.scatter_add_set(&idx2, upd, axis)?;
                    } else {
                        reused2.scatter_set(&idx2, upd, axis)?;
                    }
                    Ok(reused2.clone())
                }),
            });
            variants.push(Variant {
                name: if add { "scatter_add" } else { "scatter" },
                run: Box::new(move || {
                    Ok(if add {
                        data.scatter_add(&idx, upd, axis)?
                    } else {
                        data.scatter(&idx, upd, axis)?
                    })
                }),
            });
        }
        _ => not_expressible("candle has no ScatterUpdate (slice scatter along an inner axis)"),
    }
    let mut best: Option<(f64, f64, usize, &str, Tensor)> = None;
    for mut v in variants {
        let mut last = None;
        let times = timeit(|| {
            last = Some((v.run)()?);
            Ok(())
        })?;
        let runs = times.len();
        let (med, min) = median(times);
        if best.as_ref().is_none_or(|b| med < b.0) {
            best = Some((med, min, runs, v.name, last.ok_or("no run")?));
        }
    }
    let (med, min, runs, name, result) = best.ok_or("no variant")?;
    result.write_npy(out)?;
    println!(
        "{{\"median_ms\":{med:.4},\"min_ms\":{min:.4},\"runs\":{runs},\"variant\":\"candle {name}\"}}"
    );
    Ok(())
}

fn tract(args: &[String]) -> Res<()> {
    use tract_onnx::prelude::*;
    let [model, out, feeds @ ..] = args else {
        return Err("tract MODEL OUT FEED...".into());
    };
    let plan = tract_onnx::onnx()
        .model_for_path(model)?
        .into_optimized()?
        .into_runnable()?;
    let mut inputs: TVec<TValue> = TVec::new();
    for f in feeds {
        let t = CTensor::read_npy(f)?;
        let dt = match t.dtype() {
            DType::F32 => DatumType::F32,
            DType::F16 => DatumType::F16,
            DType::I64 => DatumType::I64,
            other => return Err(format!("feed dtype {other:?}").into()),
        };
        let bytes = candle_bytes(&t)?;
        // SAFETY: `bytes` holds exactly `shape.product()` values of `dt`, read from a tensor
        // of that dtype and shape.
        let tt = unsafe { tract_onnx::prelude::Tensor::from_raw_dt(dt, t.dims(), &bytes)? };
        inputs.push(tt.into_tvalue());
    }
    let mut last = None;
    let times = timeit(|| {
        last = Some(plan.run(inputs.clone())?);
        Ok(())
    })?;
    let runs = times.len();
    let (med, min) = median(times);
    let result = last.ok_or("no run")?.remove(0);
    let dt = match result.datum_type() {
        DatumType::F32 => DType::F32,
        DatumType::F16 => DType::F16,
        other => return Err(format!("output dtype {other:?}").into()),
    };
    let shape = result.shape().to_vec();
    let bytes = result.as_bytes();
    CTensor::from_raw_buffer(bytes, dt, &shape, &Device::Cpu)?.write_npy(out)?;
    println!(
        "{{\"median_ms\":{med:.4},\"min_ms\":{min:.4},\"runs\":{runs},\"variant\":\"tract\"}}"
    );
    Ok(())
}

/// The raw little-endian bytes of a candle tensor.
fn candle_bytes(t: &Tensor) -> Res<Vec<u8>> {
    let flat = t.flatten_all()?;
    Ok(match t.dtype() {
        DType::F32 => flat
            .to_vec1::<f32>()?
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
        DType::F16 => flat
            .to_vec1::<half::f16>()?
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
        DType::I64 => flat
            .to_vec1::<i64>()?
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect(),
        other => return Err(format!("dtype {other:?}").into()),
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("candle") => candle(&args[1..]),
        Some("tract") => tract(&args[1..]),
        _ => Err("usage: rust-peers candle|tract ...".into()),
    };
    if let Err(e) = r {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
