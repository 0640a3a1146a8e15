//! `cargo +nightly fuzz run segment`: arbitrary bytes decoded into one `scatter` (with
//! `dim_size`), `segment_coo` or `segment_csr` call, with or without `out` and positions,
//! checked for no panic, agreement with the reference oracle and an untouched `out` after
//! errors: `fuzzcheck::check`, this package's library
//! (crates/tensor-scatter/tests/fuzzcheck/segment.rs and vjp.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzcheck::check(fuzzcheck::Op::Segment, data));
