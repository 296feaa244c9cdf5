#!/usr/bin/env bash
# device-fp8-v2.sh — FP8 v2 (two-level in column groups, rowwise scales in registers) in one device
# call, with the carried binaries (.carry/bin) and kernel cache (.carry/kcache.tgz), from a fresh tuning database:
#   PART=1: scaled_mm GPU tests (cuBLASLt FP8 choices included), the mm regression subset ($REST_FILTER), memcheck
#           on $MEMCHECK_FILTER, then (unless SKIP_FORCED=1) configs ($FORCED) forced one at a time on $FORCED_ROWS (lab/bench-forced.sh's
#           method), then the suites of $SUITES ("name:seconds ...");
#   PART=2: bench fp8 (+ $SUITES). Logs and JSON to $OUT.
set -uo pipefail
out=${OUT:-out}
source scripts/device-lib.sh
use_carry
t=build/tests/tmagemm_gpu_tests
if [ "${PART:-1}" = 1 ]; then
  stage "scaled_mm tests"
  timeout 200 $t --gtest_filter="ScaledMm*" > "$out/fp8-tests.txt" 2>&1; echo "rc=$?"
  summary "$out/fp8-tests.txt"; grep -E "^\[  FAILED|Failure" -A6 "$out/fp8-tests.txt" | head -60
  stage "regression subset"
  timeout 120 $t --gtest_filter="${REST_FILTER:-PersistentTma.*:Skinny.*:Fallback.*:Dispatch.*:AccuracyFloor.*:Addmm.*}" \
    > "$out/gpu-tests.txt" 2>&1; echo "rc=$?"
  summary "$out/gpu-tests.txt"; grep -E "^\[  FAILED|Failure" -A3 "$out/gpu-tests.txt" | head -20
  memcheck_tests "${MEMCHECK_FILTER:-ScaledMm.*}" 150
  if [ "${SKIP_FORCED:-0}" = 0 ]; then
  stage "forced two-level variants"
  p=persistent_tma_fp8_
  timeout 150 lab/bench-forced.sh "${FORCED_ROWS:-fp8:8192x8192x8192@tensorwise,8192x8192x8192@rowwise}" \
    ${FORCED:-${p}128x256x128_s4_c2_g8_tmastore_p1n128 ${p}128x256x128_s4_c2_g8_cm2_tmastore_p1n128} \
    2>&1 | tee "$out/forced.txt"
  stage "forced fast rowwise"
  timeout 60 lab/bench-forced.sh "fp8:8192x8192x8192@rowwise+fast,8192x8192x8192@tensorwise+fast" \
    ${p}128x256x128_s4_c2_g8_tmastore 2>&1 | tee -a "$out/forced.txt"
  fi
  bench_suites ${SUITES:-}
else
  bench_suites ${SUITES:-fp8:300}
fi
stage done
