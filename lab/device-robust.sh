#!/usr/bin/env bash
# device-robust.sh — one device call for the robustness issue: the whole GPU suite, then compute-sanitizer memcheck
# over the suite (all but the tests named in $heavy first, which run last if time is left), then racecheck on a
# subset. Expects build/ and .carry/kcache.tgz (the kernel cache made by `tmagemm compile-check` on the build machine).
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out" /tmp/tmagemm-cache
tar -C /tmp/tmagemm-cache -xzf .carry/kcache.tgz
export TMAGEMM_CACHE_DIR=/tmp/tmagemm-cache
t=build/tests/tmagemm_gpu_tests
stage() { echo "== $* ($(date +%T))"; }
summary() { grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) |tests ran" "$1" | tr '\n' ' '; echo; }
stage "gpu suite"
timeout "${SUITE_S:-240}" $t > "$out/gpu-tests.txt" 2>&1; echo "rc=$?"; summary "$out/gpu-tests.txt"
grep -E "^\[  FAILED|Failure" "$out/gpu-tests.txt" | head -20
heavy='PersistentTma.AllLayoutsLarge:AccuracyFloor.EveryRealChoicePassesAcrossOutputTypesAndK'
stage "memcheck (all but heavy)"
timeout "${MEMCHECK_S:-240}" compute-sanitizer --tool memcheck --error-exitcode 9 $t --gtest_filter="-$heavy" > "$out/memcheck.txt" 2>&1
echo "rc=$?"; summary "$out/memcheck.txt"; grep -E "^\[ RUN" "$out/memcheck.txt" | tail -1
stage "racecheck (subset)"
timeout "${RACECHECK_S:-90}" compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 9 $t \
  --gtest_filter="${RACE_FILTER:-Dispatch.*:Carveout.FallbackOnOneSm:Skinny.SplitsWithAnEmptyRank:PersistentTma.OutputTypes:*GraphCapture.Tuned*}" \
  > "$out/racecheck.txt" 2>&1
echo "rc=$?"; summary "$out/racecheck.txt"; grep -E "^\[ RUN" "$out/racecheck.txt" | tail -1
stage "memcheck (heavy)"
timeout "${HEAVY_S:-60}" compute-sanitizer --tool memcheck --error-exitcode 9 $t --gtest_filter="$heavy" > "$out/memcheck-heavy.txt" 2>&1
echo "rc=$?"; summary "$out/memcheck-heavy.txt"
stage done
