#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 240), one after another, with the committed
# regression inputs as seeds; prints libFuzzer's final stats line per target.
#   fuzz/run.sh [--small] [SECONDS] [TARGET...]   (needs cargo-fuzz and a nightly toolchain)
# With TARGETs, only those run (two invocations with disjoint targets can share 2 cores).
# --small builds the library with `--cfg tensor_scatter_small_thresholds`: the unit tests' tiny
# parallel thresholds, so the fuzzer's small inputs take the parallel kernels (column tiles,
# buckets, split and fed folds, staged and streamed copies) and not only the sequential ones.
# allocator_may_return_null: the library's fallible allocations (try_reserve) must see a null
# from ASan, not an abort; -rss_limit_mb=0 / -malloc_limit_mb=0 likewise let a refused
# multi-terabyte request be what it is in production, an OutOfMemory error. -timeout=30 makes
# an input that runs for 30 s a finding (a slow input is a denial of service).
# No -O: cargo-fuzz's default build is already optimised (--release), and only without -O does
# it add -Cdebug-assertions, so that an integer overflow panics (-O turns the checks off).
# The check is the package's library, compiled once for all eleven targets.
# Exits non-zero when any target stops with a finding (crash, timeout, leak, or a build
# failure); the summary at the end names each one.
set -euo pipefail
cd "$(dirname "$0")"
if [ "${1:-}" = "--small" ]; then
    export RUSTFLAGS="${RUSTFLAGS:-} --cfg tensor_scatter_small_thresholds"
    shift
fi
SECS=${1:-240}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
    mapfile -t TARGETS < <(cargo +nightly fuzz list)
    [ ${#TARGETS[@]} -gt 0 ] || { echo "cargo fuzz list found no targets" >&2; exit 2; }
fi
export ASAN_OPTIONS=allocator_may_return_null=1
FAILED=()
for t in "${TARGETS[@]}"; do
    mkdir -p "corpus/$t"
    cp -n regressions/$t/* "corpus/$t/" 2>/dev/null || true
    echo "== $t ($SECS s)"
    set +e
    cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$SECS" \
        -timeout=30 -rss_limit_mb=0 -malloc_limit_mb=0 -print_final_stats=1 2>&1 \
        | grep -E "stat::number_of_executed_units|stat::peak_rss|Done|ERROR|^error|panicked|SUMMARY|crash-|timeout-|deadly"
    status=${PIPESTATUS[0]}
    set -e
    [ "$status" -eq 0 ] || FAILED+=("$t (exit $status)")
done
if [ ${#FAILED[@]} -gt 0 ]; then
    printf 'fuzz finding or failure: %s\n' "${FAILED[@]}" >&2
    exit 1
fi
