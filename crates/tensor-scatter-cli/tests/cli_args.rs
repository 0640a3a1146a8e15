//! Argument handling a user meets first: `--threads`, the `--reduction` help, and `batch`'s
//! exit status.

mod common;

use std::path::Path;

use common::{cli, write_npy};

/// data [3] f32 zeros, indices [1] int64 = 1, updates [1] f32 = 2.5, in `dir`.
fn inputs(dir: &Path) {
    write_npy(&dir.join("d.npy"), "<f4", &[3], &[0u8; 12]);
    write_npy(&dir.join("i.npy"), "<i8", &[1], &1i64.to_le_bytes());
    write_npy(&dir.join("u.npy"), "<f4", &[1], &2.5f32.to_le_bytes());
}

fn scatter(dir: &Path, threads: &str) -> std::process::Output {
    let p = |n: &str| dir.join(n).to_str().unwrap().to_string();
    cli(&[
        "scatter-elements",
        "--data",
        &p("d.npy"),
        "--indices",
        &p("i.npy"),
        "--updates",
        &p("u.npy"),
        "--out",
        &p("o.npy"),
        "--threads",
        threads,
    ])
}

#[test]
fn threads_zero_is_every_core_and_a_negative_count_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    inputs(dir.path());
    assert!(scatter(dir.path(), "0").status.success());
    assert!(scatter(dir.path(), "3").status.success());
    for bad in ["-1", "two"] {
        let o = scatter(dir.path(), bad);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("give 0 for every core, or a thread count"),
            "{err}"
        );
    }
}

#[test]
fn reduction_help_lists_the_names_and_aliases() {
    let o = cli(&["scatter-elements", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for name in [
        "none, add, sub, mul, min, max or mean",
        "sum for add",
        "prod",
        "amax for max",
    ] {
        assert!(help.contains(name), "{name} missing from: {help}");
    }
}

#[test]
fn batch_exits_zero_only_when_every_case_passed() {
    let dir = tempfile::tempdir().unwrap();
    inputs(dir.path());
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let ok = format!(
        "scatter-elements\t--data\t{}\t--indices\t{}\t--updates\t{}\t--out\t{}",
        p("d.npy"),
        p("i.npy"),
        p("u.npy"),
        p("o.npy")
    );
    std::fs::write(p("good.tsv"), format!("{ok}\n{ok}\n")).unwrap();
    let o = cli(&["batch", "--cases", &p("good.tsv")]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "ok\nok\n");
    std::fs::write(p("mixed.tsv"), format!("{ok}\nno-such-command\n")).unwrap();
    let o = cli(&["batch", "--cases", &p("mixed.tsv")]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("ok\nerror: "), "{out}");
}
