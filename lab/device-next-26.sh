#!/usr/bin/env bash
# device-next-26.sh — for the first device calls of the session after the twenty-sixth (which had no device time):
# the paths written since the last H200 run, in two calls that each fit the 600 s per-call limit.
#   PART=1: the per-thread default stream's workspace from tmagemm's own pool (probe: a synchronised cuBLASLt call was
#           170 us there against 32 us on a created stream with the default pool), the two threads tests x3, the
#           Faults suite (56cd17e's review fixes, the new OutOfMemoryThenFailingReplacementsEnds), memcheck of the
#           out-of-memory and per-thread tests.                                                        (~360 s)
#   PART=2: the addmm grid (last run in the twenty-third session) and the whole Python suite.        (~480 s)
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/py312"] (build: make -C build -j2; the probe per its header;
# the py312 extension by lab/build-ext-cp312.sh). Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
if [ "${PART:-1}" = 1 ]; then
  stage "per-thread default stream: a call's cost (lab/probes/per_thread_stream_probe.cpp)"
  timeout 60 .carry/bin/per_thread_stream_probe 2>&1 | tee "$out/per-thread-probe.txt" | tail -8
  stage "threads tests, three repetitions"
  timeout 120 build/tests/tmagemm_gpu_tests \
    --gtest_filter='StreamK.ThreadsOnThePerThreadDefaultStreamKeepTheirOwnSums:StreamK.ThreadsSharingAStreamKeepTheirOwnSums' \
    --gtest_repeat=3 > "$out/threads.txt" 2>&1
  echo "rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure" "$out/threads.txt" | head -12
  gpu_tests "Faults.*" 90
  grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | awk '{print $4, $5, $6}' | tr '\n' ' '; echo
  memcheck_tests "Faults.*OutOfMemory*:StreamK.ThreadsOnThePerThreadDefaultStreamKeepTheirOwnSums" 120
else
  gpu_tests "*AddmmGrid*" 220
  stage pytest
  PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1 timeout 250 python3 -m pytest -q -rs -p no:cacheprovider \
    tests/python > "$out/pytest.txt" 2>&1
  echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR|SKIPPED" "$out/pytest.txt" | tail -15
fi
stage done
