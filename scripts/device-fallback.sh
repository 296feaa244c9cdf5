#!/usr/bin/env bash
# device-fallback.sh — the fallback backend's device check in one call: GPU tests (all), compute-sanitizer
# memcheck on the fallback and dispatch tests, the misaligned suite (tuned, then fallback only), the llm suite
# with the fallback alone, and the tuner's cold/warm times and host time. Expects build/ and a warmed kernel
# cache in .kcache; logs and JSON under $OUT (at most 8 files come back).
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
export TMAGEMM_CACHE_DIR=${TMAGEMM_CACHE_DIR:-$PWD/.kcache}
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
scripts/device-check.sh --tests '*' --sanitize 'Fallback.*:Dispatch.*' --bench "misaligned" --out "$out"
{
echo "== misaligned, fallback only"
TMAGEMM_PERSISTENT_TMA=0 TMAGEMM_CUBLASLT=0 timeout 120 build/tmagemm bench --suite misaligned --out /tmp/fb 2>&1 | grep -E "^[0-9]+x|geomean|FAIL|error"
echo "== llm, fallback only"
TMAGEMM_PERSISTENT_TMA=0 TMAGEMM_CUBLASLT=0 timeout 200 build/tmagemm bench --suite llm --out /tmp/fb 2>&1 | grep -E "^[0-9]+x|geomean|FAIL|error"
cp /tmp/fb/*-llm.json "$out/fallback-only-llm.json" 2>/dev/null
cp /tmp/fb/*-misaligned.json "$out/fallback-only-misaligned.json" 2>/dev/null
echo "== cold kernel cache: tune one new shape"
TMAGEMM_CACHE_DIR=/tmp/cold-cache timeout 120 build/tmagemm tune 4096x4096x4096 2>&1 | tail -2
echo "== warm kernel cache: tune one new shape"
timeout 60 build/tmagemm tune 4000x4096x4096 2>&1 | tail -2
echo "== AUTOTUNE log"
TMAGEMM_LOG=autotune timeout 60 build/tmagemm tune 2048x6144x3072:rc 2>&1 | tail -30
echo "== host time of a tuned call"
timeout 60 build/tmagemm_host_bench --benchmark_min_time=0.3 2>&1 | tail -4
} 2>&1 | tee "$out/extra.txt"
