#!/usr/bin/env bash
# device-addmm.sh — one device call for the addmm issue: the addmm GPU tests (kernel variants compile on the device,
# 16 threads), the addmm bench suite, the rest of the GPU suite, then compute-sanitizer memcheck on the addmm tests
# named in $MEMCHECK_FILTER. Expects build/ and .carry/kcache.tgz (`tmagemm compile-check` output of the build
# machine). Stage limits in seconds: ADDMM_S, BENCH_S, SUITE_S, MEMCHECK_S.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out" /tmp/kc
tar -C /tmp/kc -xzf .carry/kcache.tgz
source scripts/device-lib.sh
fresh_db /tmp/kc/kernels
t=build/tests/tmagemm_gpu_tests
stage() { echo "== $* ($(date +%T))"; }
summary() { grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) |tests ran" "$1" | tr '\n' ' '; echo; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
stage "addmm tests"
timeout "${ADDMM_S:-240}" $t --gtest_filter="${ADDMM_FILTER:-Addmm*}" > "$out/addmm-tests.txt" 2>&1; echo "rc=$?"
summary "$out/addmm-tests.txt"; grep -E "^\[       OK|Failure|addmm_test.cpp" "$out/addmm-tests.txt" | head -40
if [ "${BENCH_S:-150}" -gt 0 ]; then
  stage "bench addmm"
  timeout "${BENCH_S:-150}" build/tmagemm bench --suite "${BENCH_SUITE:-addmm}" --out "$out" > "$out/bench-addmm.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-addmm.txt"
fi
if [ "${SUITE_S:-120}" -gt 0 ]; then
  stage "rest of the gpu suite"
  timeout "${SUITE_S:-120}" $t --gtest_filter='-Addmm*' > "$out/gpu-tests.txt" 2>&1; echo "rc=$?"
  summary "$out/gpu-tests.txt"; grep -E "^\[  FAILED|Failure" "$out/gpu-tests.txt" | head -20
fi
if [ "${MEMCHECK_S:-60}" -gt 0 ]; then
  stage "memcheck"
  timeout "${MEMCHECK_S:-60}" compute-sanitizer --tool memcheck --error-exitcode 9 $t \
    --gtest_filter="${MEMCHECK_FILTER:-Addmm/AddmmGrid.*ragged:Addmm.AlphaBeta*}" > "$out/memcheck.txt" 2>&1
  echo "rc=$?"; summary "$out/memcheck.txt"; grep -E "^\[ RUN" "$out/memcheck.txt" | tail -1
fi
stage done
