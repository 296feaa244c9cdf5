#!/usr/bin/env bash
# device-run3-25.sh — twenty-fifth session, run 3 (not run; for the next session): the per-thread default stream's
# workspace from tmagemm's own memory pool (was the default pool, 170 us a synchronised call): the probe again, the two threads tests three times, then the
# addmm grid (not run since the twenty-third session), the Faults suite after the review fixes (set-aside choices
# marked failed, no out_of_memory tuning over a rejected choice, a 30 s tuning backoff) and the whole Python suite
# against torch. Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "per-thread default stream: a call's cost (lab/probes/per_thread_stream_probe.cpp)"
timeout 60 .carry/bin/per_thread_stream_probe 2>&1 | tee "$out/per-thread-probe.txt" | tail -8
stage "threads tests, three repetitions"
timeout 150 build/tests/tmagemm_gpu_tests \
  --gtest_filter='StreamK.ThreadsOnThePerThreadDefaultStreamKeepTheirOwnSums:StreamK.ThreadsSharingAStreamKeepTheirOwnSums' \
  --gtest_repeat=3 > "$out/threads.txt" 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure" "$out/threads.txt" | head -12
gpu_tests "*AddmmGrid*:Faults.*" 200
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | awk '{print $4, $5, $6}' | tr '\n' ' '; echo
stage pytest
PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1 timeout "${PYTEST_S:-270}" python3 -m pytest -q -rs -p no:cacheprovider \
  tests/python > "$out/pytest.txt" 2>&1
echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR|SKIPPED" "$out/pytest.txt" | tail -15
stage done
