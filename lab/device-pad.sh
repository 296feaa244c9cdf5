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
stage "memcheck"
timeout "${MEMCHECK_S:-90}" compute-sanitizer --tool memcheck --error-exitcode 9 $t \
  --gtest_filter="${MEMCHECK_FILTER:-PadTma.*-PadTma.TunedCallThroughDispatch}" > "$out/memcheck.txt" 2>&1
echo "rc=$?"; summary "$out/memcheck.txt"; grep -E "^\[ RUN" "$out/memcheck.txt" | tail -1
for s in ${SUITES:-misaligned:150}; do
  name=${s%%:*} limit=${s##*:}
  stage "bench $name"
  timeout "$limit" build/tmagemm bench --suite "$name" --out "$out" > "$out/bench-$name.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-$name.txt"
done
stage done
