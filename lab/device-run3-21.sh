#!/usr/bin/env bash
# device-run3-21.sh — twenty-first session, run 3 (main with branch pdl merged and cuBLASLt in thread-local capture
# mode): GraphCaptureThreads twelve times, the GPU tests PDL touches, memcheck, and decode timed isolated and back to
# back under both flushes (one tuning DB). Logs to $OUT/all.tgz.
set -u
out=/tmp/o
rm -rf /tmp/o
source scripts/device-lib.sh
use_carry
stage "capture test x12"
timeout 120 build/tests/tmagemm_gpu_tests --gtest_filter='GraphCaptureThreads.*' --gtest_repeat=12 > "$out/capture-x12.txt" 2>&1
echo "rc=$?"; grep -cE "^\[       OK \] GraphCaptureThreads" "$out/capture-x12.txt"
gpu_tests "${TEST_FILTER:-Pdl.*:StreamK.*:EveryBackend/GraphCapture.*:Skinny.*:PersistentTma.*:GroupedMm.*:Addmm.StreamK*:CallContract.*:Dispatch.*}" 300
memcheck_tests "Pdl.*:StreamK.ConcurrentLaunchesOnTwoStreamsFinish:GroupedMm.GraphReplayWithNewOffsets" 120
for m in iso b2b; do for f in write read; do timed_suite decode $m $f 120; done; done
stage done
tar -C /tmp -czf "$OUT/all.tgz" o
