//! The gather subcommands end to end: results, the error contract (exit status 2, one
//! `error:` line naming the argument, no output file) and `--repeat`.

mod common;

use std::path::Path;

use common::{cli, write_npy};

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The f32 payload of a `.npy` file this CLI wrote.
fn read_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap();
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    bytes[10 + hlen..]
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn gather_subcommands_compute_and_refuse_bad_indices() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    write_npy(
        &p("d.npy"),
        "<f4",
        &[3, 2],
        &f32s(&[1., 2., 3., 4., 5., 6.]),
    );
    write_npy(&p("i.npy"), "<i8", &[2], &i64s(&[2, -3]));
    write_npy(&p("bad.npy"), "<i8", &[2], &i64s(&[0, 3]));
    let s = |q: &Path| q.to_str().unwrap().to_string();
    let (d, i, bad, o) = (
        s(&p("d.npy")),
        s(&p("i.npy")),
        s(&p("bad.npy")),
        s(&p("o.npy")),
    );

    let r = cli(&["gather", "--data", &d, "--indices", &i, "--out", &o]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(read_f32(Path::new(&o)), vec![5., 6., 1., 2.]);

    // Out of range: exit 2, an error line naming indices, and no output file.
    let o2 = s(&p("o2.npy"));
    let r = cli(&["gather", "--data", &d, "--indices", &bad, "--out", &o2]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.starts_with("error:") && err.contains("indices"),
        "{err}"
    );
    assert!(!Path::new(&o2).exists());

    // The same indices with --out-of-range fill.
    let r = cli(&[
        "gather",
        "--data",
        &d,
        "--indices",
        &bad,
        "--out",
        &o2,
        "--out-of-range",
        "fill",
        "--fill-value",
        "-1.5",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(read_f32(Path::new(&o2)), vec![1., 2., -1.5, -1.5]);

    // A fill value that is not of data's dtype is an error naming --fill-value.
    let r = cli(&[
        "gather",
        "--data",
        &d,
        "--indices",
        &bad,
        "--out",
        &o2,
        "--out-of-range",
        "fill",
        "--fill-value",
        "x",
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--fill-value"));

    // gather-elements along axis 1, timed: one JSON line on stderr.
    write_npy(&p("e.npy"), "<i8", &[3, 1], &i64s(&[1, 0, -1]));
    let e = s(&p("e.npy"));
    let r = cli(&[
        "gather-elements",
        "--data",
        &d,
        "--indices",
        &e,
        "--out",
        &o,
        "--axis",
        "1",
        "--repeat",
        "3",
        "--threads",
        "2",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(read_f32(Path::new(&o)), vec![2., 3., 6.]);
    let line = String::from_utf8_lossy(&r.stderr);
    assert!(
        line.contains("\"op\":\"gather_elements\"")
            && line.contains("\"runs\":3")
            && line.contains("\"isa\":\""),
        "{line}"
    );

    // gather-nd with batch dims: each row picks one of its own elements.
    write_npy(&p("n.npy"), "<i8", &[3, 1], &i64s(&[1, 0, 1]));
    let n = s(&p("n.npy"));
    let r = cli(&[
        "gather-nd",
        "--data",
        &d,
        "--indices",
        &n,
        "--out",
        &o,
        "--batch-dims",
        "1",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(read_f32(Path::new(&o)), vec![2., 3., 6.]);
}
