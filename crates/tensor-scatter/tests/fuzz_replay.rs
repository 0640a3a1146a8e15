//! The fuzz check on stable: every committed fuzz regression input (fuzz/regressions/<op>/),
//! then a sweep of random byte strings per operator through the same check the `cargo fuzz`
//! targets run (tests/fuzzcheck/mod.rs). `TS_FUZZ_ITERS` sets the sweep's inputs per operator
//! (default 3000); a large value makes this the long-running arbitrary-input harness.
//! The check compares against the reference oracle, so the file needs the `reference`
//! feature (the README's test command turns every feature on).
#![cfg(feature = "reference")]

mod fuzzcheck;

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::Path;

use fuzzcheck::{OPS, Op, check};

fn run_one(op: Op, input: &[u8], origin: &str) {
    // An abort (e.g. a failed allocation) cannot be caught: with TS_FUZZ_TRACE=FILE each input
    // is written to FILE before it runs, so the last one can be kept as a regression.
    if let Ok(trace) = std::env::var("TS_FUZZ_TRACE") {
        std::fs::write(trace, input).expect("writable TS_FUZZ_TRACE file");
    }
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(op, input))) {
        let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
        eprintln!("{} failed on {origin}: input (hex) {hex}", op.name());
        resume_unwind(panic);
    }
}

#[test]
fn committed_fuzz_regressions_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let mut ran = 0;
    for op in OPS {
        let dir = root.join(op.name());
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).expect("readable regression file");
            run_one(op, &bytes, &f.display().to_string());
            ran += 1;
        }
    }
    // Every input the fuzzers ever crashed on is committed there; an empty run means the
    // files went missing.
    assert!(
        ran >= 2,
        "only {ran} regression inputs found under {}",
        root.display()
    );
}

/// xorshift64*: a fixed, dependency-free byte source.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn random_inputs_keep_every_promise() {
    let iters: usize = std::env::var("TS_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let seed: u64 = std::env::var("TS_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x7e57_5ca7);
    for (n, op) in OPS.into_iter().enumerate() {
        let mut rng = Rng(seed ^ (n as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let t = std::time::Instant::now();
        for i in 0..iters {
            let len = (rng.next() % 300) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            run_one(op, &bytes, &format!("sweep input {i} (seed {seed})"));
        }
        eprintln!("{}: {iters} inputs in {:.1?}", op.name(), t.elapsed());
    }
}
