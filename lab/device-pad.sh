#!/usr/bin/env bash
# device-pad.sh — the pad path (issue 21, part 1) and the whole GPU suite in one device call, with the carried
# binaries (.carry/bin) and kernel cache (.carry/kcache.tgz), from a fresh tuning database:
#   1. every GPU test (the pad backend joins every misaligned problem's choices), 2. memcheck on $MEMCHECK_FILTER,
#   3. the suites of $SUITES ("name:seconds ..."; default: misaligned). Logs and JSON to $OUT.
set -uo pipefail
out=${OUT:-out}
source scripts/device-lib.sh
use_carry
t=build/tests/tmagemm_gpu_tests
stage "GPU suite"
timeout "${SUITE_S:-330}" $t --gtest_filter="${TEST_FILTER:-*}" > "$out/gpu-tests.txt" 2>&1; echo "rc=$?"
summary "$out/gpu-tests.txt"; grep -E "^\[  FAILED|Failure" -A6 "$out/gpu-tests.txt" | head -60
memcheck_tests "${MEMCHECK_FILTER:-PadTma.*-PadTma.TunedCallThroughDispatch}" "${MEMCHECK_S:-90}"
bench_suites ${SUITES:-misaligned:150}
stage done
