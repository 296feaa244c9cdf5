#!/usr/bin/env bash
# device-run2-25.sh — twenty-fifth session, run 2 (commit 879098e: device memory running out is a failure of the
# moment): the Faults suite (four new out-of-memory tests), the Python error and cache tests against torch (the new
# OutOfMemoryError, the new counters), memcheck of the out-of-memory paths, then the GPU suite but Addmm (run 1) and
# Faults, as far as it gets in its time; first the cost of a call on the per-thread default stream (a probe).
# Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "per-thread default stream: a call's cost (lab/probes/per_thread_stream_probe.cpp)"
timeout 60 .carry/bin/per_thread_stream_probe 2>&1 | tee "$out/per-thread-probe.txt" | tail -8
stage "Faults"
timeout 150 build/tests/tmagemm_gpu_tests --gtest_filter='Faults.*' > "$out/faults.txt" 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure|^\[       OK|^\[  FAILED" -A3 "$out/faults.txt" | head -40
stage pytest
PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1 timeout 120 python3 -m pytest -q -rs -p no:cacheprovider \
  tests/python/test_errors.py tests/python/test_cache.py > "$out/pytest.txt" 2>&1
echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR|SKIPPED" "$out/pytest.txt" | tail -15
memcheck_tests "Faults.ChoiceThatRunsOutOfMemoryStaysTheChoice:Faults.EveryChoiceOutOfMemoryThrowsOutOfMemoryAndLeavesOutAlone:Faults.TuningThatRunsOutOfMemoryRunsTheHeuristicChoiceUntimed" 120
gpu_tests "-Addmm.*:Addmm/*:Faults.*" 330
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | awk '{print $4, $5, $6}' | tr '\n' ' ' | head -c 6000; echo
stage done
