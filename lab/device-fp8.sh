#!/usr/bin/env bash
# device-fp8.sh — the FP8 issue's checks in one device call, from a fresh tuning database with the carried kernel
# cache (.carry/kcache.tgz: `tmagemm compile-check` output of the build machine) and the carried binaries
# (.carry/bin: tmagemm, tmagemm_gpu_tests).
#   1. the scaled_mm GPU tests ($FP8_FILTER), then a regression subset of the rest ($REST_FILTER)
#   2. compute-sanitizer memcheck on $MEMCHECK_FILTER
#   3. bench fp8 (+ $EXTRA_SUITES); JSON and logs to $OUT
# Stage limits in seconds: FP8_S, REST_S, MEMCHECK_S, BENCH_S.
set -uo pipefail
out=${OUT:-out}
source scripts/device-lib.sh
use_carry
t=build/tests/tmagemm_gpu_tests
if [ "${FP8_S:-150}" -gt 0 ]; then
  stage "scaled_mm tests"
  timeout "${FP8_S:-150}" $t --gtest_filter="${FP8_FILTER:-ScaledMm*}" > "$out/fp8-tests.txt" 2>&1; echo "rc=$?"
  summary "$out/fp8-tests.txt"; grep -E "^\[  FAILED|Failure|error" -A4 "$out/fp8-tests.txt" | head -60
  grep -E "^\[       OK|accuracy|err" "$out/fp8-tests.txt" | head -40
fi
if [ "${REST_S:-120}" -gt 0 ]; then
  stage "regression subset"
  timeout "${REST_S:-120}" $t --gtest_filter="${REST_FILTER:-PersistentTma.*:Skinny.*:Fallback.*:Dispatch.*:AccuracyFloor.*}" \
    > "$out/gpu-tests.txt" 2>&1; echo "rc=$?"
  summary "$out/gpu-tests.txt"; grep -E "^\[  FAILED|Failure" -A3 "$out/gpu-tests.txt" | head -20
fi
if [ "${MEMCHECK_S:-90}" -gt 0 ]; then
  memcheck_tests "${MEMCHECK_FILTER:-ScaledMm*}" "${MEMCHECK_S:-90}"
fi
bench_suites ${SUITES:-fp8:200}
stage done
