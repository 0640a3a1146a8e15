//! `cargo +nightly fuzz run scatter_elements`: arbitrary bytes decoded into one `scatter_elements` call, checked
//! for no panic, agreement with the reference oracle, the shape rules and an untouched
//! destination after errors: `fuzzcheck::check`, this package's library
//! (crates/tensor-scatter/tests/fuzzcheck/mod.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzcheck::check(fuzzcheck::Op::ScatterElements, data));
