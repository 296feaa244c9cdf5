#!/usr/bin/env bash
# device-bmm-19.sh — nineteenth session, run 1: where the bmm suite's time goes. The bmm suite tuned afresh with the
# AUTOTUNE tables (every candidate's time per row), then with cuBLASLt switched off (our best kernel per row against
# cuBLASLt strided-batched), both under the write flush. Carried binaries and kernel cache. Logs to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
BENCH_LOG=autotune bench_suites bmm:200
mkdir -p "$out/own"
stage "bench bmm, cuBLASLt off"
TMAGEMM_CUBLASLT=0 timeout 200 build/tmagemm bench --suite bmm --out "$out/own" > "$out/own/bench-bmm.txt" 2>&1
echo "rc=$?"; rows < "$out/own/bench-bmm.txt"
stage done
