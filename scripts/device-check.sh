#!/usr/bin/env bash
# device-check.sh — one call on a GPU machine: device info, compile-check (warms the kernel cache in
# parallel), the GPU test suite, optionally compute-sanitizer memcheck and benchmark suites.
# Usage: scripts/device-check.sh [--tests FILTER] [--sanitize FILTER] [--bench "suite1 suite2"] [--out DIR]
# Logs go to $OUT (or --out; at most 8 files come back from a device run). Expects a built build/.
set -uo pipefail
out=${OUT:-out}
tests='*'
sanitize=''
bench=''
while [ $# -gt 0 ]; do
  case "$1" in
    --tests) tests=$2; shift 2 ;;
    --sanitize) sanitize=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown argument $1"; exit 2 ;;
  esac
done
mkdir -p "$out"
export TMAGEMM_CACHE_DIR=${TMAGEMM_CACHE_DIR:-/tmp/tmagemm-cache}
summary="$out/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee -a "$summary"
build/tmagemm info 2>&1 | tee "$out/info.txt"
start=$(date +%s)
build/tmagemm compile-check -j "$(nproc)" > /tmp/compile-check.txt 2>&1
note "compile-check rc=$? $(tail -n 1 /tmp/compile-check.txt) ($(( $(date +%s) - start )) s wall)"

start=$(date +%s)
timeout 400 build/tests/tmagemm_gpu_tests --gtest_filter="$tests" > "$out/gpu-tests.txt" 2>&1
rc=$?
note "gpu tests rc=$rc ($(( $(date +%s) - start )) s): $(grep -E '^\[  (PASSED|FAILED) ' "$out/gpu-tests.txt" | tr '\n' ' ')"
grep -E "Failure|FAILED|error|Expected|Which is|first bad" "$out/gpu-tests.txt" | head -40 | tee -a "$summary"

if [ -n "$sanitize" ]; then
  start=$(date +%s)
  timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/tmagemm_gpu_tests \
    --gtest_filter="$sanitize" > "$out/memcheck.txt" 2>&1
  note "memcheck rc=$? ($(( $(date +%s) - start )) s): $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED) ' "$out/memcheck.txt" | tr '\n' ' ')"
fi

for s in $bench; do
  start=$(date +%s)
  timeout 300 build/tmagemm bench --suite "$s" --out "$out" > "$out/bench-$s.txt" 2>&1
  note "bench $s rc=$? ($(( $(date +%s) - start )) s)"
  tail -n 30 "$out/bench-$s.txt" | tee -a "$summary"
done
exit 0
