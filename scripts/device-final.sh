#!/usr/bin/env bash
# device-final.sh — the release check in one call: the GPU suite, tuned benchmarks (square, llm, decode,
# misaligned), persistent TMA alone and heuristic mode on llm, cold/warm tuning time, the AUTOTUNE log and
# the host-time benchmark. Expects build binaries and a warmed kernel cache in .kcache (TMAGEMM_CACHE_DIR).
# Writes at most 8 files under $OUT: summary.txt, gpu-tests.txt and six JSON result files.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
export TMAGEMM_CACHE_DIR=${TMAGEMM_CACHE_DIR:-$PWD/.kcache}
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
rows() { grep -E "^[0-9]+x|geomean|FAIL|error|skipped"; }
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
start=$(date +%s)
timeout 300 build/tests/tmagemm_gpu_tests > "$out/gpu-tests.txt" 2>&1
echo "gpu tests rc=$? ($(( $(date +%s) - start )) s): $(grep -E '^\[  (PASSED|FAILED) ' "$out/gpu-tests.txt" | tr '\n' ' ')"
grep -E "Failure|FAILED|Expected|Which is|first bad" "$out/gpu-tests.txt" | head -20
for s in square llm decode misaligned; do
  echo "== bench $s (tuned)"
  timeout 240 build/tmagemm bench --suite "$s" --out "$out" 2>&1 | rows
done
echo "== llm, persistent TMA only"
TMAGEMM_CUBLASLT=0 TMAGEMM_FALLBACK=0 timeout 240 build/tmagemm bench --suite llm --out /tmp/pt 2>&1 | rows
for f in /tmp/pt/*-llm.json; do cp "$f" "$out/$(basename "$f" .json)-persistent_tma_only.json"; done
echo "== llm, heuristic mode"
TMAGEMM_TUNING=heuristic timeout 240 build/tmagemm bench --suite llm --out /tmp/heur 2>&1 | rows
for f in /tmp/heur/*-llm.json; do cp "$f" "$out/$(basename "$f" .json)-heuristic.json"; done
echo "== cold kernel cache: tune one new shape"
TMAGEMM_CACHE_DIR=/tmp/cold-cache timeout 120 build/tmagemm tune 4096x4096x4096 2>&1 | tail -2
echo "== warm kernel cache: tune one new shape"
timeout 60 build/tmagemm tune 4000x4096x4096 2>&1 | tail -2
echo "== AUTOTUNE log"
TMAGEMM_LOG=autotune timeout 60 build/tmagemm tune 2048x6144x3072:rc 2>&1 | tail -24
echo "== host time of a tuned call"
timeout 60 build/tmagemm_host_bench --benchmark_min_time=0.3 2>&1 | tail -5
} 2>&1 | tee "$out/summary.txt"
