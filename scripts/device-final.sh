#!/usr/bin/env bash
# device-final.sh — the release check in two calls (each under the device's 10-minute limit), from a fresh
# tuning database with the carried kernel cache (.kcache) copied in.
#   part 1 (the kernel): the GPU suite, compute-sanitizer memcheck on the kernel/tuner/dispatch tests, ncu
#          instruction counts on one shape.
#   part 2 (the benchmarks): tuned square, llm (with the AUTOTUNE tables), decode and misaligned, persistent TMA
#          alone on square and llm, skinny alone on decode (write and read flush), heuristic mode on llm and decode
#          (decode also with the skinny backend off; both also with no TMA L2 promotion), cold/warm tuning time,
#          the AUTOTUNE log and the host-time benchmark.
# Writes summary-<part>.txt and results-<part>.tgz (the result files; a device call returns at most 8 files).
set -uo pipefail
part=${1:-1}
final=${OUT:-out}
mkdir -p "$final"
out=$(mktemp -d)
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
source "$(dirname "$0")/device-lib.sh"
fresh_db
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
if [ "$part" = 1 ]; then
  start=$(date +%s)
  timeout 330 build/tests/tmagemm_gpu_tests > "$out/gpu-tests.txt" 2>&1
  echo "gpu tests rc=$? ($(( $(date +%s) - start )) s): $(grep -E '^\[  (PASSED|FAILED) ' "$out/gpu-tests.txt" | tr '\n' ' ')"
  grep -E "Failure|FAILED|Expected|Which is|first bad" "$out/gpu-tests.txt" | head -20
  start=$(date +%s)
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/tmagemm_gpu_tests \
    --gtest_filter='PersistentTma.EveryConfigEveryLayout:PersistentTma.EachOperand*:PersistentTma.KTail*:Tuner*:Dispatch*:Skinny.SplitsWithAnEmptyRank:Skinny.InputAndOutputTypesAndStrides:Skinny.BatchedThroughBmm' \
    > /tmp/memcheck.txt 2>&1
  echo "memcheck rc=$? ($(( $(date +%s) - start )) s): $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED|SKIPPED) ' /tmp/memcheck.txt | tr '\n' ' ')"
  grep -E "^\[ RUN|^\[       OK" /tmp/memcheck.txt | tail -4
  echo "== ncu: instructions on 4096x14336x4096 rr"
  for c in persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore persistent_tma_256x128x64_s4_c2_g8_cn2_tmastore; do
    TMAGEMM_CHOICE_REGEX="^$c\$" timeout 60 /usr/local/cuda/bin/ncu --metrics gpu__time_duration.sum,sm__inst_executed.sum \
      -k regex:gemm_persistent -c 1 build/tmagemm bench --suite 4096x14336x4096:rr --reps 1 --out /tmp/n 2>&1 \
      | grep -E "gpu__time|sm__inst" | sed "s/^/$c /"
  done
else
  timeout 120 build/tests/tmagemm_gpu_tests --gtest_filter='Tuner*' > /tmp/tuner-tests.txt 2>&1
  echo "tuner gpu tests rc=$?: $(grep -E '^\[  (PASSED|FAILED) ' /tmp/tuner-tests.txt | tr '\n' ' ')"
  for s in square llm decode misaligned; do
    echo "== bench $s (tuned; the AUTOTUNE tables' top 4)"
    TMAGEMM_LOG=autotune timeout 200 build/tmagemm bench --suite "$s" --out "$out" 2>&1 \
      | grep -A11 -E "^AUTOTUNE|^[0-9]+x|geomean|FAIL|error|skipped" | grep -vE "strides|^--"
  done
  for s in square llm; do
    echo "== $s, persistent TMA only"
    TMAGEMM_CUBLASLT=0 TMAGEMM_FALLBACK=0 TMAGEMM_SKINNY=0 timeout 200 build/tmagemm bench --suite $s --out /tmp/pt 2>&1 | rows
    for f in /tmp/pt/*-$s.json; do cp "$f" "$out/$(basename "$f" .json)-persistent_tma_only.json"; done
  done
  skinny_only_decode write 150
  skinny_only_decode read 150
  echo "== llm and decode, heuristic mode, no TMA L2 promotion anywhere (persistent TMA too)"
  for s in llm decode; do
    TMAGEMM_TUNING=heuristic TMAGEMM_TMA_L2_PROMOTION=none timeout 150 build/tmagemm bench --suite $s --out /tmp/heurnp 2>&1 | rows
  done
  for s in llm decode; do
    echo "== $s, heuristic mode"
    TMAGEMM_TUNING=heuristic timeout 150 build/tmagemm bench --suite $s --out /tmp/heur 2>&1 | rows
    for f in /tmp/heur/*-$s.json; do cp "$f" "$out/$(basename "$f" .json)-heuristic.json"; done
  done
  echo "== decode, heuristic mode without the skinny backend"
  TMAGEMM_TUNING=heuristic TMAGEMM_SKINNY=0 timeout 150 build/tmagemm bench --suite decode --out /tmp/heur2 2>&1 | rows
  echo "== cold kernel cache: tune one new shape"
  TMAGEMM_CACHE_DIR=/tmp/cold-cache-$RANDOM timeout 60 build/tmagemm tune 4096x4096x4096 2>&1 | tail -2
  echo "== cold kernel cache: tune one new decode shape (persistent TMA, skinny and cuBLASLt choices)"
  TMAGEMM_CACHE_DIR=/tmp/cold-cache-$RANDOM timeout 60 build/tmagemm tune 16x4096x4096 2>&1 | tail -2
  echo "== warm kernel cache: tune one new shape"
  timeout 30 build/tmagemm tune 4000x4096x4096 2>&1 | tail -2
  echo "== AUTOTUNE log"
  TMAGEMM_LOG=autotune timeout 30 build/tmagemm tune 2048x6144x3072:rc 2>&1 | tail -24
  echo "== host time of a tuned call"
  timeout 60 build/tmagemm_host_bench --benchmark_min_time=0.3 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>&1 | grep -E "median" | head -12
fi
} 2>&1 | tee "$out/summary-$part.txt"
cp "$out/summary-$part.txt" "$final/" && tar czf "$final/results-$part.tgz" -C "$out" .
