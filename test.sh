#!/usr/bin/env bash
# Every test: the Rust workspace (unit, property, integration and doc tests, with every
# feature) and the Python package (built into crates/tensor-scatter-py/.venv).
set -euo pipefail
cd "$(dirname "$0")"
cargo test --workspace --all-features
crates/tensor-scatter-py/run-tests
