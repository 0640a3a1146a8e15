//! The `onnx` subcommand (one ONNX node through the library's ONNX adapter) and `batch` (many
//! command lines in one process, one result line each), which the conformance harnesses use.

mod common;

use std::path::Path;

use common::{cli, write_npy};

fn i32_payload(path: &Path) -> Vec<i32> {
    let bytes = std::fs::read(path).unwrap();
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    bytes[10 + hlen..]
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn bytes_of<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    v.iter().flat_map(|&x| f(x)).collect()
}

#[test]
fn onnx_runs_nodes_with_onnx_rules_and_batch_reports_each_case() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    // TensorScatter circular: cache [2, 3, 1] int32, update [2, 2, 1], write_indices [0, 2].
    write_npy(Path::new(&p("cache.npy")), "<i4", &[2, 3, 1], &[0u8; 24]);
    write_npy(
        Path::new(&p("upd.npy")),
        "<i4",
        &[2, 2, 1],
        &bytes_of(&[1i32, 2, 3, 4], i32::to_le_bytes),
    );
    write_npy(
        Path::new(&p("w.npy")),
        "<i8",
        &[2],
        &bytes_of(&[0i64, 2], i64::to_le_bytes),
    );
    let o = cli(&[
        "onnx",
        "TensorScatter",
        "--input",
        &p("cache.npy"),
        "--input",
        &p("upd.npy"),
        "--input",
        &p("w.npy"),
        "--out",
        &p("o.npy"),
        "--attr",
        "mode=circular",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(i32_payload(Path::new(&p("o.npy"))), vec![1, 2, 0, 4, 0, 3]);

    // ONNX rules, not the library's wider ones: ScatterND takes int64 indices only.
    write_npy(Path::new(&p("d.npy")), "<i4", &[3], &[0u8; 12]);
    write_npy(
        Path::new(&p("i32.npy")),
        "<i4",
        &[1, 1],
        &bytes_of(&[1i32], i32::to_le_bytes),
    );
    write_npy(
        Path::new(&p("u.npy")),
        "<i4",
        &[1],
        &bytes_of(&[9i32], i32::to_le_bytes),
    );
    write_npy(
        Path::new(&p("i1.npy")),
        "<i4",
        &[1],
        &bytes_of(&[1i32], i32::to_le_bytes),
    );
    let o = cli(&[
        "onnx",
        "ScatterND",
        "--input",
        &p("d.npy"),
        "--input",
        &p("i32.npy"),
        "--input",
        &p("u.npy"),
        "--out",
        &p("bad.npy"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("indices"));
    assert!(!Path::new(&p("bad.npy")).exists());

    // batch: one line per case, in order, errors included; the process itself succeeds.
    let lines = [
        format!(
            "onnx\tScatterElements\t--input\t{}\t--input\t{}\t--input\t{}\t--out\t{}\t--attr\treduction=add",
            p("d.npy"),
            p("i1.npy"),
            p("u.npy"),
            p("b1.npy")
        ),
        format!(
            "onnx\tScatterND\t--input\t{}\t--input\t{}\t--input\t{}\t--out\t{}",
            p("d.npy"),
            p("i32.npy"),
            p("u.npy"),
            p("b2.npy")
        ),
        "onnx\tTopK\t--input\tx.npy\t--out\ty.npy".to_string(),
        "demo".to_string(),
        "no-such-command".to_string(),
    ];
    std::fs::write(p("cases.tsv"), lines.join("\n") + "\n").unwrap();
    let o = cli(&["batch", "--cases", &p("cases.tsv")]);
    // Some cases failed: status 1, every case still reported.
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8(o.stdout).unwrap();
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), 5, "{out}");
    assert_eq!(got[0], "ok");
    assert_eq!(i32_payload(Path::new(&p("b1.npy"))), vec![0, 9, 0]);
    assert!(
        got[1].starts_with("error: ") && got[1].contains("indices"),
        "{}",
        got[1]
    );
    assert!(
        got[2].starts_with("error: ") && got[2].contains("TopK"),
        "{}",
        got[2]
    );
    assert!(got[3].starts_with("error: "), "{}", got[3]);
    assert!(got[4].starts_with("error: "), "{}", got[4]);
    assert!(!Path::new(&p("b2.npy")).exists());
}
