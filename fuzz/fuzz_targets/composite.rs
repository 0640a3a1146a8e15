//! `cargo +nightly fuzz run composite`: arbitrary bytes decoded into one composite (softmax, log-softmax, logsumexp, std) or its backward,
//! checked for no panic, agreement with the reference oracle and an untouched `out` after
//! errors: `fuzzcheck::check`, this package's library
//! (crates/tensor-scatter/tests/fuzzcheck/segment.rs and vjp.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzcheck::check(fuzzcheck::Op::Composite, data));
