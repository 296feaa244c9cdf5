#!/usr/bin/env bash
# device-grouped-suite.sh — grouped_mm on the H200 (issue 20 points 3-4): the GroupedMm GPU tests (TMA-store configs
# with plain stores for fragments that cross a group's end), memcheck of two of them, then `tmagemm bench --suite
# grouped` against the better of cublasGemmGroupedBatchedEx and one cuBLASLt call per group (JSON into $OUT), and
# optional extra suites. Carried binaries and kernel cache (scripts/device-lib.sh). Logs to $OUT.
# Env: TEST_FILTER, MEMCHECK_FILTER, MEMCHECK_S, SUITES="name:seconds ...", BENCH_LOG (TMAGEMM_LOG for the bench).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "gpu tests"
timeout 240 build/tests/tmagemm_gpu_tests --gtest_filter="${TEST_FILTER:-GroupedMm.*}" > "$out/gpu-tests.txt" 2>&1
echo "rc=$?"; summary "$out/gpu-tests.txt"; grep -E "^\[  FAILED|Failure|error:" "$out/gpu-tests.txt" | head -20
memcheck_tests "${MEMCHECK_FILTER:-GroupedMm.EveryConfig:GroupedMm.OffsetsPastTheEndAndEmptyGroups}" "${MEMCHECK_S:-150}"
bench_suites ${SUITES:-grouped:420}
stage "done"
