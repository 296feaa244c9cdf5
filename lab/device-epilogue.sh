#!/usr/bin/env bash
# device-epilogue.sh — the epilogue-stage issue's checks in two device calls, from a fresh tuning database with the
# carried kernel cache (.carry/kcache.tgz, `tmagemm compile-check` output of the build machine).
#   part 1: the whole GPU suite (the addmm grids compile their variants on the device), then compute-sanitizer
#           memcheck on the addmm tests in $MEMCHECK_FILTER.
#   part 2: bench addmm, square, llm, decode (tuned, cold tuning database); JSON and logs to $OUT.
set -uo pipefail
part=${1:-1}
out=${OUT:-out}
source scripts/device-lib.sh
BINARIES=build use_carry
t=build/tests/tmagemm_gpu_tests
if [ "$part" = 1 ]; then
  stage "gpu suite"
  timeout "${SUITE_S:-390}" $t > "$out/gpu-tests.txt" 2>&1; echo "rc=$?"
  summary "$out/gpu-tests.txt"; grep -E "^\[  FAILED|Failure" -A3 "$out/gpu-tests.txt" | head -30
  grep -E "^\[       OK \] Addmm" "$out/gpu-tests.txt"
  stage "memcheck"
  timeout "${MEMCHECK_S:-170}" compute-sanitizer --tool memcheck --error-exitcode 9 $t \
    --gtest_filter="${MEMCHECK_FILTER:-Addmm/AddmmGrid.*ragged:Addmm.AlphaBeta*}" > "$out/memcheck.txt" 2>&1
  echo "rc=$?"; summary "$out/memcheck.txt"; grep -E "^\[ RUN|^\[       OK" "$out/memcheck.txt" | tail -3
else
  for s in ${SUITES:-addmm:100 square:60 llm:230 decode:150}; do
    name=${s%%:*} limit=${s##*:}
    stage "bench $name"
    timeout "$limit" build/tmagemm bench --suite "$name" --out "$out" > "$out/bench-$name.txt" 2>&1; echo "rc=$?"
    rows < "$out/bench-$name.txt"
  done
fi
stage done
