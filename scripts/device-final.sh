#!/usr/bin/env bash
# device-final.sh — the autotuner's device check in one call: GPU tests, tuned benchmarks (square, llm,
# decode), heuristic-mode llm for comparison, cold/warm tuning time and the host-time benchmark.
# Expects build/ and a warmed kernel cache in .kcache (TMAGEMM_CACHE_DIR); logs and JSON under $OUT.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
export TMAGEMM_CACHE_DIR=${TMAGEMM_CACHE_DIR:-$PWD/.kcache}
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
scripts/device-check.sh --tests '*' --bench "square llm" --out "$out"
echo "== cold kernel cache: tune one new shape"
TMAGEMM_CACHE_DIR=/tmp/cold-cache timeout 120 build/tmagemm tune 4096x4096x4096 2>&1 | tail -2
echo "== warm kernel cache: tune one new shape"
timeout 60 build/tmagemm tune 4000x4096x4096 2>&1 | tail -2
echo "== AUTOTUNE log"
TMAGEMM_LOG=autotune timeout 60 build/tmagemm tune 2048x6144x3072:rc 2>&1 | tail -24
echo "== host time of a tuned call"
timeout 60 build/tmagemm_host_bench --benchmark_min_time=0.3 2>&1 | tail -4
echo "== heuristic mode, llm"
TMAGEMM_TUNING=heuristic timeout 120 build/tmagemm bench --suite llm --out /tmp/heur 2>&1 | grep -E "^[0-9]+x|geomean"
echo "== decode (tuned)"
timeout 120 build/tmagemm bench --suite decode --out "$out" 2>&1 | grep -E "^[0-9]+x|geomean"
