//! `tensor-scatter segment`: results, positions, --init, the composites, the error contract
//! (exit status 2, one `error:` line naming the argument, no output file) and `--repeat`.

mod common;

use std::path::Path;

use common::{cli, write_npy};

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The 4-byte or 8-byte little-endian payload of a `.npy` file this CLI wrote.
fn payload(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    bytes[10 + hlen..].to_vec()
}

fn read_f32(path: &Path) -> Vec<f32> {
    payload(path)
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn read_i64(path: &Path) -> Vec<i64> {
    payload(path)
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn segment_subcommand_computes_and_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    // 4 edges x 2 features, destinations [2, 0, 2, 0].
    write_npy(
        Path::new(&p("s.npy")),
        "<f4",
        &[4, 2],
        &f32s(&[1., 10., 2., 20., 3., 30., 4., 40.]),
    );
    write_npy(Path::new(&p("i.npy")), "<i8", &[4], &i64s(&[2, 0, 2, 0]));
    write_npy(
        Path::new(&p("sorted.npy")),
        "<i8",
        &[4],
        &i64s(&[0, 0, 2, 2]),
    );
    write_npy(Path::new(&p("ptr.npy")), "<i8", &[4], &i64s(&[0, 2, 2, 4]));
    write_npy(Path::new(&p("init.npy")), "<f4", &[3, 2], &f32s(&[100.; 6]));
    let (s, i, o, a) = (p("s.npy"), p("i.npy"), p("o.npy"), p("a.npy"));

    let r = cli(&[
        "segment",
        "scatter",
        "--src",
        &s,
        "--index",
        &i,
        "--out",
        &o,
        "--dim",
        "0",
        "--dim-size",
        "3",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(read_f32(Path::new(&o)), vec![6., 60., 0., 0., 4., 40.]);

    let r = cli(&[
        "segment",
        "scatter",
        "--src",
        &s,
        "--index",
        &i,
        "--out",
        &o,
        "--dim",
        "0",
        "--dim-size",
        "3",
        "--reduce",
        "max",
        "--arg-out",
        &a,
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(read_f32(Path::new(&o)), vec![4., 40., 0., 0., 3., 30.]);
    assert_eq!(read_i64(Path::new(&a)), vec![3, 3, 4, 4, 2, 2]);

    // --init: its values take part.
    let r = cli(&[
        "segment",
        "scatter",
        "--src",
        &s,
        "--index",
        &i,
        "--out",
        &o,
        "--dim",
        "0",
        "--init",
        &p("init.npy"),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(
        read_f32(Path::new(&o)),
        vec![106., 160., 100., 100., 104., 140.]
    );

    // Sorted segments, CSR offsets, and their inverse.
    for (op, idx) in [
        ("segment-coo", p("sorted.npy")),
        ("segment-csr", p("ptr.npy")),
    ] {
        let r = cli(&[
            "segment", op, "--src", &s, "--index", &idx, "--out", &o, "--reduce", "mean",
        ]);
        assert!(
            r.status.success(),
            "{op}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert_eq!(
            read_f32(Path::new(&o)),
            vec![1.5, 15., 0., 0., 3.5, 35.],
            "{op}"
        );
    }
    let r = cli(&[
        "segment",
        "gather-csr",
        "--src",
        &o,
        "--index",
        &p("ptr.npy"),
        "--out",
        &p("g.npy"),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(
        read_f32(Path::new(&p("g.npy"))),
        vec![1.5, 15., 1.5, 15., 3.5, 35., 3.5, 35.]
    );

    // A composite, timed: one JSON line on stderr.
    let r = cli(&[
        "segment", "softmax", "--src", &s, "--index", &i, "--out", &o, "--dim", "0", "--repeat",
        "2",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let sm = read_f32(Path::new(&o));
    assert!((sm[0] + sm[4] - 1.0).abs() < 1e-6 && sm[4] > sm[0]);
    assert!(String::from_utf8_lossy(&r.stderr).contains("\"op\":\"scatter_softmax\""));

    // Errors: an unsorted index for segment-coo, an index past --dim-size, positions for sum.
    for (args, names) in [
        (vec!["segment-coo", "--index", &i], "sorted"),
        (
            vec!["scatter", "--index", &i, "--dim", "0", "--dim-size", "2"],
            "index",
        ),
        (
            vec!["scatter", "--index", &i, "--dim", "0", "--arg-out", &a],
            "min or max",
        ),
    ] {
        let bad = p("bad.npy");
        let mut all = vec!["segment"];
        all.extend(args.iter().copied());
        all.extend(["--src", &s, "--out", &bad]);
        let r = cli(&all);
        assert_eq!(r.status.code(), Some(2), "{all:?}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.starts_with("error:") && err.contains(names), "{err}");
        assert!(!Path::new(&bad).exists());
    }
}
