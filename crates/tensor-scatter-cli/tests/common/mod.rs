//! Helpers shared by the CLI integration tests.

use std::path::Path;
use std::process::{Command, Output};

/// A minimal `.npy` (version 1.0) writer for little-endian arrays.
pub(crate) fn write_npy(path: &Path, descr: &str, shape: &[usize], body: &[u8]) {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(body);
    std::fs::write(path, bytes).unwrap();
}

/// Runs the CLI binary with `args`.
pub(crate) fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tensor-scatter"))
        .args(args)
        .output()
        .unwrap()
}
