#!/usr/bin/env bash
# device-run3-21.sh — twenty-first session, run 3 (main with branch pdl merged, cuBLASLt in thread-local capture
# mode, the first K block peeled where an epilogue writes the accumulators): GraphCaptureThreads twelve times, the GPU
# tests these touch, memcheck. Logs to $OUT/all.tgz.
set -u
out=/tmp/o
rm -rf /tmp/o
source scripts/device-lib.sh
use_carry
stage "capture test x12"
timeout 120 build/tests/tmagemm_gpu_tests --gtest_filter='GraphCaptureThreads.*' --gtest_repeat=12 > "$out/capture-x12.txt" 2>&1
echo "rc=$?"; grep -cE "^\[       OK \] GraphCaptureThreads" "$out/capture-x12.txt"
gpu_tests "${TEST_FILTER:-Pdl.*:StreamK.*:EveryBackend/GraphCapture.*:Skinny.*:PersistentTma.*:GroupedMm.*:Addmm.*:ScaledMm.EveryFp8Choice:ScaledMm.TorchCasesOnEveryBackend:CallContract.*}" 420
memcheck_tests "Pdl.*:StreamK.ConcurrentLaunchesOnTwoStreamsFinish:GroupedMm.GraphReplayWithNewOffsets" 100
stage done
tar -C /tmp -czf "$OUT/all.tgz" o
