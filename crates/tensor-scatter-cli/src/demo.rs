//! `tensor-scatter demo`: every example of the five seed documents, and the gather examples of
//! the DirectML, BNNS and OpenVINO documentation, run through the library and printed with the
//! documented output beside ours.

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

const DML_GATHER: &str = "DirectML DML_GATHER_OPERATOR_DESC";
const DML_GATHER_ELEMENTS: &str = "DirectML DML_GATHER_ELEMENTS_OPERATOR_DESC";
const DML_GATHER_ND: &str = "DirectML DML_GATHER_ND(1)_OPERATOR_DESC";
const BNNS_GATHER: &str = "Apple BNNSGather / BNNSGatherND";
const OPENVINO_GATHER: &str = "OpenVINO Gather-8 / GatherND-8";

/// The indices of an example, whatever their integer dtype.
fn show_indices(x: &DynTensor) -> String {
    let values: Vec<i128> = if let Some(v) = x.as_slice::<u32>() {
        v.iter().map(|&i| i128::from(i)).collect()
    } else if let Some(v) = x.as_slice::<i32>() {
        v.iter().map(|&i| i128::from(i)).collect()
    } else {
        x.as_slice::<i64>()
            .unwrap_or(&[])
            .iter()
            .map(|&i| i128::from(i))
            .collect()
    };
    format!("{:<9} {:?} {values:?}", "indices", x.shape())
}

fn gather_example(
    title: &'static str,
    source: &'static str,
    note: &str,
    input: &DynTensor,
    indices: &DynTensor,
    ours: Result<DynTensor, tensor_scatter::Error>,
    expected: DynTensor,
) -> Outcome {
    let lines = vec![
        note.to_string(),
        show::<f32>("input", input),
        show_indices(indices),
    ];
    compare(title, source, lines, expected, ours)
}

fn f(values: &[f32], shape: &[usize]) -> DynTensor {
    t(values.to_vec(), shape)
}

fn dml_gather_1d() -> Outcome {
    let (input, indices) = (
        f(&[11., 12., 13., 14.], &[4]),
        t(vec![3u32, 1, 3, 0, 2], &[5]),
    );
    let ours = directml::gather(&input, &indices, 0, 1);
    gather_example(
        "Example 1. 1D remapping",
        DML_GATHER,
        "Axis 0, IndexDimensions 1: output[x] = input[indices[x]]",
        &input,
        &indices,
        ours,
        f(&[14., 12., 14., 11., 13.], &[5]),
    )
}

fn dml_gather_rows() -> Outcome {
    let input = f(&[1., 2., 3., 4., 5., 6.], &[3, 2]);
    let indices = t(vec![0u32, 1, 1, 2], &[1, 4]);
    let ours = directml::gather(&input, &indices, 0, 1);
    gather_example(
        "Example 2. 2D output, 1D indices, concatenate rows",
        DML_GATHER,
        "Axis 0, IndexDimensions 1 (indices {1,4}: the leading 1 is ignored)",
        &input,
        &indices,
        ours,
        f(&[1., 2., 3., 4., 3., 4., 5., 6.], &[4, 2]),
    )
}

fn dml_gather_swap_columns() -> Outcome {
    let input = f(&[1., 2., 3., 4., 5., 6.], &[3, 2]);
    let indices = t(vec![1u32, 0], &[1, 2]);
    let ours = directml::gather(&input, &indices, 1, 1);
    let mut o = gather_example(
        "Example 3. Axis 1, swap columns (run with IndexDimensions 1)",
        DML_GATHER,
        "The doc says IndexDimensions 2, but then original rank 2 + 2 - 1 = 3 dims exceed the \
         output's DimensionCount 2 (its own rule); with 1 the documented output follows",
        &input,
        &indices,
        ours,
        f(&[2., 1., 4., 3., 6., 5.], &[3, 2]),
    );
    let declared = directml::gather(&input, &indices, 1, 2);
    o.lines.push(match &declared {
        Ok(x) => format!(
            "as declared (IndexDimensions 2): accepted, shape {:?}",
            x.shape()
        ),
        Err(e) => format!("as declared (IndexDimensions 2): error: {e}"),
    });
    o.pass &= declared.is_err();
    o
}

fn dml_gather_nested_axis2() -> Outcome {
    let input = f(&[1., 2., 3., 4., 5., 6., 7., 8., 9.], &[1, 3, 3]);
    let indices = t(vec![0u32, 2], &[1, 1, 2]);
    let ours = directml::gather(&input, &indices, 2, 2);
    gather_example(
        "Example 4. Nested indices, axis 2",
        DML_GATHER,
        "Axis 2, IndexDimensions 2: output[z, y, x] = input[z, indices[y, x]]",
        &input,
        &indices,
        ours,
        f(&[1., 3., 4., 6., 7., 9.], &[3, 1, 2]),
    )
}

fn dml_gather_nested_axis1() -> Outcome {
    let input = f(&[1., 2., 3., 4., 5., 6.], &[1, 3, 2]);
    let indices = t(vec![0u32, 1, 1, 2], &[1, 2, 2]);
    let ours = directml::gather(&input, &indices, 1, 2);
    gather_example(
        "Example 5. Nested indices, axis 1",
        DML_GATHER,
        "Axis 1, IndexDimensions 2: output[z, y, x] = input[indices[z, y], x]",
        &input,
        &indices,
        ours,
        f(&[1., 2., 3., 4., 3., 4., 5., 6.], &[2, 2, 2]),
    )
}

fn dml_gather_elements() -> Outcome {
    let input = f(&[1., 2., 3., 4., 5., 6., 7., 8., 9.], &[3, 3]);
    let indices = t(vec![1u32, 2, 0, 2, 0, 0], &[2, 3]);
    let ours = directml::gather_elements(&input, &indices, 0);
    gather_example(
        "Example: select elements vertically",
        DML_GATHER_ELEMENTS,
        "Axis 0: output[y, x] = input[indices[y, x], x]",
        &input,
        &indices,
        ours,
        f(&[4., 8., 3., 7., 2., 3.], &[2, 3]),
    )
}

fn dml_gather_nd_1d() -> Outcome {
    let (input, indices) = (f(&[0., 1., 2., 3.], &[2, 2]), t(vec![1u32, 0], &[2, 1]));
    let ours = directml::gather_nd(&input, &indices, 2, 2, 0);
    gather_example(
        "Example 1. 1D remapping",
        DML_GATHER_ND,
        "InputDimensionCount 2, IndicesDimensionCount 2: output[y, x] = input[indices[y], x]",
        &input,
        &indices,
        ours,
        f(&[2., 3., 0., 1.], &[2, 2]),
    )
}

fn dml_gather_nd_2d() -> Outcome {
    let input = f(&[0., 1., 2., 3., 4., 5., 6., 7.], &[1, 2, 2, 2]);
    let indices = t(vec![0u32, 1, 1, 0], &[1, 1, 2, 2]);
    let ours = directml::gather_nd(&input, &indices, 3, 2, 0);
    gather_example(
        "Example 2. 2D remapping",
        DML_GATHER_ND,
        "InputDimensionCount 3, IndicesDimensionCount 2: output[y, x] = input[indices[y, 0], indices[y, 1], x]",
        &input,
        &indices,
        ours,
        f(&[2., 3., 4., 5.], &[1, 1, 2, 2]),
    )
}

fn dml_gather_nd1_batch() -> Outcome {
    let input = t((0..12).map(|v| v as f32).collect(), &[1, 3, 2, 2]);
    let indices = t(vec![0u32, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0], &[1, 3, 2, 2]);
    let ours = directml::gather_nd(&input, &indices, 3, 3, 1);
    gather_example(
        "GATHER_ND1 Example 2. 2D remapping with batch count",
        DML_GATHER_ND,
        "BatchDimensionCount 1: output[batch, x] = input[batch, indices[batch, x, 0], indices[batch, x, 1]]",
        &input,
        &indices,
        ours,
        f(&[0., 3., 7., 4., 9., 10.], &[1, 1, 3, 2]),
    )
}

fn bnns_gather_1d() -> Outcome {
    let input = f(&[10., 20., 30., 40., 50., 60., 70., 80.], &[8]);
    let indices = t(vec![1i32, 3, 7, 5], &[4]);
    let mut out = f(&[0.; 4], &[4]);
    let ours = bnns::gather(0, &input, &indices, &mut out).map(|()| out);
    gather_example(
        "BNNSGather: elements of a vector",
        BNNS_GATHER,
        "axis 0, into a caller-allocated output of the indices' shape",
        &input,
        &indices,
        ours,
        f(&[20., 40., 80., 60.], &[4]),
    )
}

fn bnns_gather_nd_slice() -> Outcome {
    let input = f(
        &[10., 11., 12., 13., 20., 21., 22., 23., 30., 31., 32., 33.],
        &[3, 2, 2],
    );
    let indices = t(vec![1i32], &[1]);
    let mut out = f(&[0.; 4], &[2, 2]);
    let ours = bnns::gather_nd(&input, &indices, &mut out).map(|()| out);
    gather_example(
        "BNNSGatherND: a scalar index gathers a 2D slice",
        BNNS_GATHER,
        "a one-component lookup vector into a 3x2x2 input",
        &input,
        &indices,
        ours,
        f(&[20., 21., 22., 23.], &[2, 2]),
    )
}

fn openvino_gather_fill() -> Outcome {
    let input = f(&[1., 2., 3., 4., 5.], &[5]);
    let indices = t(vec![3i64, 10, -20], &[3]);
    let ours = openvino::gather(&input, &indices, &t(vec![0i64], &[]), 0);
    gather_example(
        "Gather-8: out-of-range indices give zeros",
        OPENVINO_GATHER,
        "axis 0, batch_dims 0; 10 and -20 are outside [-5, 4]",
        &input,
        &indices,
        ours,
        f(&[4., 0., 0.], &[3]),
    )
}

fn openvino_gather_nd() -> Outcome {
    let input = f(&[1., 2., 3., 4.], &[2, 2]);
    let cases = [
        (t(vec![0i64, 0, 1, 0], &[2, 2]), f(&[1., 3.], &[2])),
        (t(vec![1i64, 0], &[2, 1]), f(&[3., 4., 1., 2.], &[2, 2])),
        (
            t(vec![1i64, 0], &[2, 1, 1]),
            f(&[3., 4., 1., 2.], &[2, 1, 2]),
        ),
    ];
    let mut lines = vec!["GatherND examples 1-3: elements, slices, leading index dims".into()];
    let mut pass = true;
    for (indices, expected) in cases {
        let ours = openvino::gather_nd(&input, &indices, 0);
        lines.push(show_indices(&indices));
        lines.push(show::<f32>("expected", &expected));
        match ours {
            Ok(o) => {
                lines.push(show::<f32>("ours", &o));
                pass &= o == expected;
            }
            Err(e) => {
                lines.push(format!("ours      error: {e}"));
                pass = false;
            }
        }
    }
    Outcome {
        title: "GatherND: elements and slices",
        source: OPENVINO_GATHER,
        lines,
        pass,
    }
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
        dml_gather_1d,
        dml_gather_rows,
        dml_gather_swap_columns,
        dml_gather_nested_axis2,
        dml_gather_nested_axis1,
        dml_gather_elements,
        dml_gather_nd_1d,
        dml_gather_nd_2d,
        dml_gather_nd1_batch,
        bnns_gather_1d,
        bnns_gather_nd_slice,
        openvino_gather_fill,
        openvino_gather_nd,
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
