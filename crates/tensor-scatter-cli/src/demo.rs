//! `tensor-scatter demo`: every example of the five seed documents, run through the library,
//! printed with the documented output beside ours.

use std::fmt::Debug;

use tensor_scatter::bnns::{self, ReduceFunction};
use tensor_scatter::{DynTensor, Element, directml, openvino};

/// One seed example: where it comes from, what it prints, and whether ours matches.
pub(crate) struct Outcome {
    pub(crate) title: &'static str,
    pub(crate) source: &'static str,
    pub(crate) lines: Vec<String>,
    pub(crate) pass: bool,
}

fn t<T: Element>(values: Vec<T>, shape: &[usize]) -> DynTensor {
    DynTensor::from_vec(values, shape).expect("seed example shapes are consistent")
}

fn show<T: Element + Debug>(label: &str, x: &DynTensor) -> String {
    format!(
        "{label:<9} {:?} {:?}",
        x.shape(),
        x.as_slice::<T>().unwrap_or(&[])
    )
}

/// Compares our result with the documented one and builds the printed lines.
fn compare(
    title: &'static str,
    source: &'static str,
    mut lines: Vec<String>,
    documented: DynTensor,
    ours: Result<DynTensor, tensor_scatter::Error>,
) -> Outcome {
    lines.push(show::<f32>("expected", &documented));
    let pass = match &ours {
        Ok(o) => {
            lines.push(show::<f32>("ours", o));
            *o == documented
        }
        Err(e) => {
            lines.push(format!("ours      error: {e}"));
            false
        }
    };
    Outcome {
        title,
        source,
        lines,
        pass,
    }
}

const DML_ELEMENTS: &str = "DirectML DML_SCATTER_OPERATOR_DESC (directml-scatter-elements.md)";
const DML_ND: &str = "DirectML DML_SCATTER_ND_OPERATOR_DESC (directml-scatter-nd.md)";
const BNNS: &str = "Apple BNNSScatter (bnns-scatter.md)";
const OPENVINO: &str = "OpenVINO ScatterUpdate-3 (openvino-scatter-update-3.md)";

fn dml_elements_1d() -> Outcome {
    let input = t(vec![0.0f32, 1.0, 2.0, 3.0, 4.0], &[5]);
    let indices = t(vec![3u32, 1, 3, 0], &[4]);
    let updates = t(vec![5.0f32, 6.0, 7.0, 8.0], &[4]);
    let lines = vec![
        "Axis 0; duplicate index 3: the last write (7) wins".into(),
        show::<f32>("input", &input),
        show::<u32>("indices", &indices),
        show::<f32>("updates", &updates),
    ];
    let ours = directml::scatter_elements(&input, &indices, &updates, 0);
    compare(
        "Example 1. 1D scatter",
        DML_ELEMENTS,
        lines,
        t(vec![8.0f32, 6.0, 2.0, 7.0, 4.0], &[5]),
        ours,
    )
}

fn dml_elements_2d_input() -> DynTensor {
    t(vec![0.0f32; 9], &[3, 3])
}

fn dml_elements_2d() -> Outcome {
    let input = dml_elements_2d_input();
    let indices = t(vec![1u32, 0, 2, 0, 2, 1], &[2, 3]);
    let updates = t(vec![10.0f32, 11.0, 12.0, 20.0, 21.0, 22.0], &[2, 3]);
    let lines = vec![
        "Axis 0; the page declares input Sizes {2,3} but shows a 3x3 tensor and a 3x3 output:"
            .into(),
        "the shown 3x3 input is the consistent reading (Output.Sizes must equal Input.Sizes)."
            .into(),
        show::<f32>("input", &input),
        show::<u32>("indices", &indices),
        show::<f32>("updates", &updates),
    ];
    let ours = directml::scatter_elements(&input, &indices, &updates, 0);
    let expected = t(
        vec![20.0f32, 11.0, 0.0, 10.0, 0.0, 22.0, 0.0, 21.0, 12.0],
        &[3, 3],
    );
    compare("Example 2. 2D scatter", DML_ELEMENTS, lines, expected, ours)
}

fn dml_elements_2d_as_declared() -> Outcome {
    let input = t(vec![0.0f32; 6], &[2, 3]);
    let indices = t(vec![1u32, 0, 2, 0, 2, 1], &[2, 3]);
    let updates = t(vec![10.0f32, 11.0, 12.0, 20.0, 21.0, 22.0], &[2, 3]);
    let ours = directml::scatter_elements(&input, &indices, &updates, 0);
    let mut lines = vec![
        "The same example with input Sizes {2,3} as declared: index 2 has no row to land in,"
            .into(),
        "so the documented 3x3 output cannot come from it; we report an error and write nothing."
            .into(),
    ];
    let pass = match &ours {
        Err(e) => {
            lines.push(format!("ours      error: {e}"));
            e.is_index_out_of_range() && e.arg() == "indices"
        }
        Ok(o) => {
            lines.push(show::<f32>("ours", o));
            false
        }
    };
    Outcome {
        title: "Example 2 with Sizes {2,3} as declared",
        source: DML_ELEMENTS,
        lines,
        pass,
    }
}

fn dml_nd() -> Outcome {
    let input = t(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[8]);
    let indices = t(vec![4u32, 3, 1, 7], &[4, 1]);
    let updates = t(vec![9.0f32, 10.0, 11.0, 12.0], &[4]);
    let float_indices = t(vec![4.0f32, 3.0, 1.0, 7.0], &[4, 1]);
    let float_rejected = directml::scatter_nd(&input, &float_indices, &updates, 1, 2)
        .err()
        .filter(|e| e.arg() == "indices");
    let lines = vec![
        "InputDimensionCount 1, IndicesDimensionCount 2. The page gives the indices DataType"
            .into(),
        "FLOAT32, which DirectML does not accept for indices; we use UINT32 (FLOAT32 is refused:"
            .into(),
        format!(
            "  {})",
            float_rejected
                .as_ref()
                .map_or("NOT REFUSED".to_string(), |e| e.to_string())
        ),
        show::<f32>("input", &input),
        show::<u32>("indices", &indices),
        show::<f32>("updates", &updates),
    ];
    let ours = directml::scatter_nd(&input, &indices, &updates, 1, 2);
    let mut out = compare(
        "Example (ScatterND)",
        DML_ND,
        lines,
        t(vec![1.0f32, 11.0, 3.0, 10.0, 9.0, 6.0, 7.0, 12.0], &[8]),
        ours,
    );
    out.pass &= float_rejected.is_some();
    out
}

fn bnns_example(
    title: &'static str,
    note: &str,
    input: DynTensor,
    indices: DynTensor,
    mut output: DynTensor,
    op: ReduceFunction,
    expected: DynTensor,
) -> Outcome {
    let lines = vec![
        format!("{note}; reduce function {}", op.c_name()),
        show::<f32>("input", &input),
        show::<i32>("indices", &indices),
        show::<f32>("output in", &output),
    ];
    let ours = bnns::scatter(0, op, &input, &indices, &mut output).map(|()| output);
    compare(title, BNNS, lines, expected, ours)
}

fn bnns_sum_1d() -> Outcome {
    bnns_example(
        "1-D vector, Sum",
        "axis 0, updates summed into the existing output",
        t(vec![2.0f32, 4.0, 6.0, 8.0], &[4]),
        t(vec![1i32, 3, 7, 5], &[4]),
        t(
            vec![10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0],
            &[8],
        ),
        ReduceFunction::Sum,
        t(
            vec![10.0f32, 22.0, 30.0, 44.0, 50.0, 68.0, 70.0, 86.0],
            &[8],
        ),
    )
}

fn bnns_rows() -> Outcome {
    bnns_example(
        "1-D indices move whole rows",
        "axis 0, input 3x3 rows to output rows [1, 3, 4] of a 5x3 output",
        t(
            vec![10.0f32, 11.0, 12.0, 30.0, 31.0, 32.0, 40.0, 41.0, 42.0],
            &[3, 3],
        ),
        t(vec![1i32, 3, 4], &[3]),
        t(vec![0.0f32; 15], &[5, 3]),
        ReduceFunction::None,
        t(
            vec![
                0.0f32, 0.0, 0.0, 10.0, 11.0, 12.0, 0.0, 0.0, 0.0, 30.0, 31.0, 32.0, 40.0, 41.0,
                42.0,
            ],
            &[5, 3],
        ),
    )
}

fn bnns_same_shape() -> Outcome {
    bnns_example(
        "Same-shape indices move elements",
        "axis 0, destination row from the index, column from the element's own column",
        t(
            vec![10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0],
            &[3, 3],
        ),
        t(vec![4i32, 2, 3, 0, 0, 0, 2, 4, 4], &[3, 3]),
        t(vec![0.0f32; 15], &[5, 3]),
        ReduceFunction::None,
        t(
            vec![
                40.0f32, 50.0, 60.0, 0.0, 0.0, 0.0, 70.0, 20.0, 0.0, 0.0, 0.0, 30.0, 10.0, 80.0,
                90.0,
            ],
            &[5, 3],
        ),
    )
}

/// OpenVINO example 1 gives shapes only: data `[1000,256,10,15]`, indices `[125,20]`, axis 1,
/// updates `[1000,125,20,10,15]`. We run it for real (1.5 GB of updates) and check every
/// output cell against the rule: the last index position naming its row wins.
fn openvino_shapes() -> Outcome {
    let (n, s, a, b) = (1000usize, 256usize, 10usize, 15usize);
    let (i0, i1) = (125usize, 20usize);
    let inner = a * b;
    let data: Vec<f32> = (0..n * s * inner)
        .map(|x| -((x % 1000) as f32) - 1.0)
        .collect();
    // 2500 indices into rows 0..200 of 256: duplicates are certain and rows 200..256 keep data.
    let indices: Vec<i64> = (0..i0 * i1)
        .map(|p| ((p * 7919 + 13) % (s - 56)) as i64)
        .collect();
    let updates: Vec<f32> = (0..n * i0 * i1 * inner)
        .map(|x| (x % 100_003) as f32)
        .collect();
    let data_t = t(data, &[n, s, a, b]);
    let idx_t = t(indices.clone(), &[i0, i1]);
    let upd_t = t(updates, &[n, i0, i1, a, b]);
    let ours = openvino::scatter_update(&data_t, &idx_t, &upd_t, &t(vec![1i64], &[1]));
    let mut lines = vec![
        "data [1000,256,10,15], indices [125,20], updates [1000,125,20,10,15], axis [1] (FP32)."
            .into(),
        "The page gives shapes only; every output cell is checked against the rule".into(),
        "out[o, r, ...] = updates[o, last p with indices[p] = r, ...], else data.".into(),
    ];
    let pass = match ours {
        Ok(out) => {
            let mut last = vec![None; s];
            for (p, &r) in indices.iter().enumerate() {
                last[r as usize] = Some(p);
            }
            let (o, d, u) = (
                out.as_slice::<f32>().unwrap_or(&[]),
                data_t.as_slice::<f32>().unwrap_or(&[]),
                upd_t.as_slice::<f32>().unwrap_or(&[]),
            );
            let mut ok = out.shape() == [n, s, a, b];
            for outer in 0..n {
                for (r, writer) in last.iter().enumerate() {
                    let dst = &o[(outer * s + r) * inner..][..inner];
                    let want = match writer {
                        Some(p) => &u[(outer * i0 * i1 + p) * inner..][..inner],
                        None => &d[(outer * s + r) * inner..][..inner],
                    };
                    ok &= dst == want;
                }
            }
            lines.push(format!(
                "expected  output shape [1000, 256, 10, 15]; {} rows never written",
                last.iter().filter(|w| w.is_none()).count()
            ));
            lines.push(format!(
                "ours      output shape {:?}; all 38,400,000 cells {}",
                out.shape(),
                if ok { "match" } else { "DO NOT match" }
            ));
            ok
        }
        Err(e) => {
            lines.push(format!("ours      error: {e}"));
            false
        }
    };
    Outcome {
        title: "Example 1 (shapes)",
        source: OPENVINO,
        lines,
        pass,
    }
}

fn openvino_columns() -> Outcome {
    let data = t(
        vec![
            -1.0f32, 1.0, -1.0, 3.0, 4.0, -1.0, 6.0, -1.0, 8.0, 9.0, -1.0, 11.0, 1.0, 13.0, 14.0,
        ],
        &[3, 5],
    );
    let indices = t(vec![0i64, 2], &[2]);
    let updates = t(vec![1.0f32, 1.0, 1.0, 1.0, 1.0, 2.0], &[3, 2]);
    let axis = t(vec![1i64], &[1]);
    let lines = vec![
        "axis {1}: columns 0 and 2 replaced".into(),
        show::<f32>("data", &data),
        show::<i64>("indices", &indices),
        show::<f32>("updates", &updates),
    ];
    let ours = openvino::scatter_update(&data, &indices, &updates, &axis);
    let expected = t(
        vec![
            1.0f32, 1.0, 1.0, 3.0, 4.0, 1.0, 6.0, 1.0, 8.0, 9.0, 1.0, 11.0, 2.0, 13.0, 14.0,
        ],
        &[3, 5],
    );
    compare("Example 2", OPENVINO, lines, expected, ours)
}

/// Every example, in document order. The fifth seed file
/// (`directml-scatter-elements-page.txt`) is an authorization notice with no example.
pub(crate) fn examples() -> Vec<fn() -> Outcome> {
    vec![
        dml_elements_1d,
        dml_elements_2d,
        dml_elements_2d_as_declared,
        dml_nd,
        bnns_sum_1d,
        bnns_rows,
        bnns_same_shape,
        openvino_shapes,
        openvino_columns,
    ]
}

/// Runs and prints every example; returns the number that failed.
pub(crate) fn run() -> usize {
    let mut failed = 0;
    let all = examples();
    for (i, example) in all.iter().enumerate() {
        let o = example();
        println!("[{}/{}] {} — {}", i + 1, all.len(), o.source, o.title);
        for line in &o.lines {
            println!("    {line}");
        }
        println!("    {}", if o.pass { "PASS" } else { "FAIL" });
        println!();
        failed += usize::from(!o.pass);
    }
    println!("demo: {} passed, {} failed", all.len() - failed, failed);
    failed
}
