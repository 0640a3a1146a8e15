//! One module per seed API, each speaking that API's own vocabulary over the shared engine;
//! re-exported at the crate root (`tensor_scatter::onnx`, `directml`, `bnns`, `openvino`).

pub mod bnns;
pub mod directml;
pub mod onnx;
pub mod openvino;
