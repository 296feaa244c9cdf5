#!/usr/bin/env bash
# device-run1-25.sh — twenty-fifth session, run 1 (main at 8d05927): the per-thread default stream's workspace test
# (written last session, never run on a GPU) three times, the threads-sharing-a-stream test, then the addmm suites
# that did not run last session (Addmm.*, AddmmGrid.*). Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "per-thread default stream, three repetitions"
timeout 150 build/tests/tmagemm_gpu_tests \
  --gtest_filter='StreamK.ThreadsOnThePerThreadDefaultStreamKeepTheirOwnSums:StreamK.ThreadsSharingAStreamKeepTheirOwnSums' \
  --gtest_repeat=3 > "$out/threads.txt" 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure|^\[       OK" "$out/threads.txt" | head -12
gpu_tests "Addmm.*:AddmmGrid.*" 330
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -30
stage done
