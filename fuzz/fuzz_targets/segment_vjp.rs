//! `cargo +nightly fuzz run segment_vjp`: arbitrary bytes decoded into one backward of a segment reduction or segment gather,
//! checked for no panic, agreement with the reference oracle and an untouched `out` after
//! errors: `fuzzcheck::check`, this package's library
//! (crates/tensor-scatter/tests/fuzzcheck/segment.rs and vjp.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzcheck::check(fuzzcheck::Op::SegmentVjp, data));
