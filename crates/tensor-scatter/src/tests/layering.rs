//! DESIGN.md's "Layering", read from the source: a module's code names only modules below it
//! (`crate::x` paths outside comments), so the library has no import cycle.

use std::path::Path;

/// Bottom to top, as DESIGN.md draws them.
const LAYERS: [&str; 15] = [
    "dtype", "error", "shape", "view", "index", "exec", "reduce", "kernels", "check", "scatter",
    "gather", "segment", "vjp", "dynamic", "adapters",
];

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn code_names_only_the_layers_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rank = |m: &str| LAYERS.iter().position(|&l| l == m);
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut upward = Vec::new();
    for path in &all {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let Some(own) = rank(first.trim_end_matches(".rs")) else {
            continue; // lib.rs, the tests, the oracle and the interop glue sit above every layer
        };
        for (n, line) in std::fs::read_to_string(path).unwrap().lines().enumerate() {
            let code = line.split("//").next().unwrap();
            for (at, _) in code.match_indices("crate::") {
                let name: String = code[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if rank(&name).is_some_and(|r| r > own) {
                    upward.push(format!("{}:{}: {name}", rel.display(), n + 1));
                }
            }
        }
    }
    assert!(all.len() > 50, "read {} files", all.len());
    assert!(
        upward.is_empty(),
        "code naming a higher layer:\n{}",
        upward.join("\n")
    );
}
