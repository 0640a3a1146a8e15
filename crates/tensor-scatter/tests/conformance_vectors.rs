//! Vendor reference vectors, ported with provenance into conformance/vectors/*.json, run
//! through the adapter of the system they come from, for every data dtype × index dtype the
//! file (or the case) lists. Each file names its source; each case keeps upstream's name.
//!
//! A case holds `data`, `indices`, `updates` (`{"shape", "values"}`; values are numbers or
//! "nan" / "inf" / "-inf") and either `expected` (compared by value: NaN matches NaN, the
//! sign of zero counts, `tolerance` only where upstream itself compares approximately) or
//! `error`, the argument the error must name (and then the input must be unchanged).
//! The test counts every executed (case, dtype, index dtype) run and fails if a file runs
//! fewer than its cases or the total differs from the count recorded below, so a case that
//! silently stops running is noticed.

use std::path::Path;

use serde_json::Value;
use tensor_scatter::half::{bf16, f16};
use tensor_scatter::{
    DType, DynGatherOptions, DynTensor, GatherOp, GatherOutOfRange, IndexPolicy, NegativeIndices,
    OutOfRange, Reduction, ScatterOp, ScatterOptions, gather_dyn, openvino, scatter_dyn,
};

/// Executed (case × dtype × index dtype) runs over all files; update when vectors are added.
const EXPECTED_RUNS: usize = 1132;

fn dtype(name: &str) -> DType {
    match name {
        "f64" => DType::F64,
        "f32" => DType::F32,
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        "i64" => DType::I64,
        "i32" => DType::I32,
        "i16" => DType::I16,
        "i8" => DType::I8,
        "u64" => DType::U64,
        "u32" => DType::U32,
        "u16" => DType::U16,
        "u8" => DType::U8,
        "bool" => DType::Bool,
        other => panic!("unknown dtype {other}"),
    }
}

fn number(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().expect("a finite number"),
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("unknown value {other}"),
        },
        other => panic!("not a value: {other}"),
    }
}

/// `{"shape", "values"}` as a tensor of `dt`.
fn tensor(v: &Value, dt: DType) -> DynTensor {
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_u64().expect("dim") as usize)
        .collect();
    let vals: Vec<f64> = v["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(number)
        .collect();
    macro_rules! ints {
        ($t:ty) => {
            DynTensor::from_vec(
                vals.iter()
                    .map(|&x| {
                        assert_eq!(x.fract(), 0.0, "integer data holds {x}");
                        <$t>::try_from(x as i128).expect("value fits the dtype")
                    })
                    .collect(),
                &shape,
            )
        };
    }
    match dt {
        DType::F64 => DynTensor::from_vec(vals, &shape),
        DType::F32 => DynTensor::from_vec(vals.iter().map(|&x| x as f32).collect(), &shape),
        DType::F16 => DynTensor::from_vec(vals.iter().map(|&x| f16::from_f64(x)).collect(), &shape),
        DType::BF16 => {
            DynTensor::from_vec(vals.iter().map(|&x| bf16::from_f64(x)).collect(), &shape)
        }
        DType::I64 => ints!(i64),
        DType::I32 => ints!(i32),
        DType::I16 => ints!(i16),
        DType::I8 => ints!(i8),
        DType::U64 => ints!(u64),
        DType::U32 => ints!(u32),
        DType::U16 => ints!(u16),
        DType::U8 => ints!(u8),
        DType::Bool => DynTensor::from_vec(vals.iter().map(|&x| x != 0.0).collect(), &shape),
    }
    .expect("a consistent tensor")
}

/// Every element as f64 (bool as 0/1), for comparison by value.
fn values(t: &DynTensor) -> Vec<f64> {
    macro_rules! as_f64 {
        ($($t:ty => $e:expr),*) => {$(
            if let Some(s) = t.as_slice::<$t>() {
                return s.iter().map($e).collect();
            }
        )*};
    }
    as_f64!(
        f64 => |&x| x, f32 => |&x| f64::from(x), f16 => |x| x.to_f64(), bf16 => |x| x.to_f64(),
        i64 => |&x| x as f64, i32 => |&x| f64::from(x), i16 => |&x| f64::from(x),
        i8 => |&x| f64::from(x), u64 => |&x| x as f64, u32 => |&x| f64::from(x),
        u16 => |&x| f64::from(x), u8 => |&x| f64::from(x), bool => |&x| f64::from(u8::from(x))
    );
    unreachable!("every dtype is listed")
}

fn same(got: f64, want: f64, dt: DType, tol: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    // The expected value as the dtype holds it (upstream writes 11.33333 for 34/3).
    let want = match dt {
        DType::F32 => f64::from(want as f32),
        DType::F16 => f16::from_f64(want).to_f64(),
        DType::BF16 => bf16::from_f64(want).to_f64(),
        _ => want,
    };
    if tol > 0.0 {
        return (got - want).abs() <= tol * want.abs().max(1.0);
    }
    got == want && got.is_sign_negative() == want.is_sign_negative()
}

fn run(op: &str, case: &Value, dt: DType, it: DType) -> tensor_scatter::Result<DynTensor> {
    let data = tensor(&case["data"], dt);
    // Upstream writes negative indices as i + d for unsigned index types.
    let unsigned = matches!(it, DType::U8 | DType::U16 | DType::U32 | DType::U64);
    let indices = match case.get("indices_unsigned") {
        Some(u) if unsigned => tensor(u, it),
        _ => tensor(&case["indices"], it),
    };
    let updates = match case.get("updates") {
        Some(u) => tensor(u, dt),
        None => tensor(&serde_json::json!({"shape": [0], "values": []}), dt),
    };
    let red = case["reduction"].as_str().unwrap_or("none");
    match op {
        "openvino.scatter_nd_update" => openvino::scatter_nd_update(&data, &indices, &updates, red),
        "openvino.scatter_update" => openvino::scatter_update(
            &data,
            &indices,
            &updates,
            &tensor(
                &serde_json::json!({"shape": [1], "values": [case["axis"].clone()]}),
                it,
            ),
        ),
        "openvino.scatter_elements_update" => openvino::scatter_elements_update(
            &data,
            &indices,
            &updates,
            &DynTensor::from_vec(vec![case["axis"].as_i64().expect("axis")], &[]).unwrap(),
            red,
            case["use_init_val"].as_bool().expect("use_init_val"),
        ),
        "torch.scatter_reduce" => {
            let opts = ScatterOptions::new()
                .axis(case["axis"].as_i64().expect("axis"))
                .reduction(red.parse::<Reduction>().expect("a torch reduction name"))
                .include_self(case["include_self"].as_bool().expect("include_self"));
            scatter_dyn(ScatterOp::Elements, &data, &indices, &updates, &opts)
        }
        "jax.indexing" => match case["mode"].as_str().expect("mode") {
            "scatter_add_drop" => {
                let opts = ScatterOptions::new()
                    .reduction(Reduction::Add)
                    .index_policy(IndexPolicy::new(NegativeIndices::Wrap, OutOfRange::Skip));
                scatter_dyn(ScatterOp::Elements, &data, &indices, &updates, &opts)
            }
            mode => {
                let fill = case
                    .get("fill_value")
                    .map(|v| tensor(&serde_json::json!({"shape": [], "values": [v]}), dt));
                let opts = DynGatherOptions::new()
                    .out_of_range(if mode == "clip" {
                        GatherOutOfRange::Clamp
                    } else {
                        GatherOutOfRange::Fill
                    })
                    .fill_value(fill);
                gather_dyn(GatherOp::Gather, &data, &indices, &opts)
            }
        },
        other => panic!("unknown operator {other}"),
    }
}

fn list(v: &Value) -> Vec<DType> {
    v.as_array()
        .expect("a dtype list")
        .iter()
        .map(|d| dtype(d.as_str().expect("dtype name")))
        .collect()
}

#[test]
fn vendor_vectors_pass() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/vectors");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("conformance/vectors exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 3,
        "vector files missing from {}",
        dir.display()
    );
    let mut total = 0;
    let mut failures = vec![];
    for f in &files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        assert!(
            doc["source"].as_str().is_some_and(|s| !s.is_empty()),
            "{f:?} names no source"
        );
        let op = doc["operator"].as_str().expect("operator");
        let cases = doc["cases"].as_array().expect("cases");
        let mut ran = 0;
        for case in cases {
            let name = case["name"].as_str().expect("name");
            let dts = list(case.get("dtypes").unwrap_or(&doc["dtypes"]));
            let its = list(case.get("index_dtypes").unwrap_or(&doc["index_dtypes"]));
            let tol = case["tolerance"].as_f64().unwrap_or(0.0);
            for &dt in &dts {
                for &it in &its {
                    ran += 1;
                    let tag = format!("{}: {name} [{dt}, {it}]", f.display());
                    match (run(op, case, dt, it), case.get("error")) {
                        (Ok(out), None) => {
                            let want = tensor(&case["expected"], DType::F64);
                            let (got, want_v) = (values(&out), values(&want));
                            let ok = out.shape() == want.shape()
                                && out.dtype() == dt
                                && got.len() == want_v.len()
                                && got.iter().zip(&want_v).all(|(&g, &w)| same(g, w, dt, tol));
                            if !ok {
                                failures.push(format!("{tag}: got {got:?}, expected {want_v:?}"));
                            }
                        }
                        (Err(e), Some(arg)) => {
                            if e.arg() != arg.as_str().unwrap() {
                                failures.push(format!("{tag}: error names {}, not {arg}", e.arg()));
                            }
                        }
                        (Ok(_), Some(arg)) => {
                            failures.push(format!("{tag}: expected an error on {arg}"))
                        }
                        (Err(e), None) => failures.push(format!("{tag}: unexpected error {e}")),
                    }
                }
            }
        }
        assert!(
            ran >= cases.len(),
            "{f:?}: only {ran} runs for {} cases",
            cases.len()
        );
        println!("{}: {} cases, {ran} runs", f.display(), cases.len());
        total += ran;
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        total, EXPECTED_RUNS,
        "executed runs changed: update EXPECTED_RUNS if intended"
    );
}
