#!/usr/bin/env bash
# device-streamk-15.sh — stream-K (issue 21 point 2) on the H200: the GPU tests of the persistent TMA kernel (StreamK.*,
# PersistentTma.*, Bmm.*), memcheck of two stream-K tests, then the `waves` suite (the partial last waves stream-K is
# for) and `square` (no regression of the whole-tile configs, whose code the change touched). Carried binaries
# (.carry/bin); kernels compile on the device (NVRTC). Logs and JSON to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "gpu tests"
timeout "${TEST_S:-200}" build/tests/tmagemm_gpu_tests --gtest_filter="${TEST_FILTER:-StreamK.*:PersistentTma.*:Bmm.*}" \
  > "$out/gpu-tests.txt" 2>&1
echo "rc=$?"; summary "$out/gpu-tests.txt"; grep -E "^\[  FAILED|Failure" -A5 "$out/gpu-tests.txt" | head -40
memcheck_tests "StreamK.TwoRunsGiveTheSameBits:StreamK.BatchedProblemSharesItsLastWave" 120
bench_suites ${SUITES:-waves:200 square:150}
stage done
