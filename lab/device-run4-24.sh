#!/usr/bin/env bash
# device-run4-24.sh — twenty-fourth session, run 4 (branch ws-threads): run 3's failure (Addmm.StreamKSplitTilesGetTheEpilogue:
# cudaMemsetAsync of the stream-K counters on a workspace another thread had just grown and freed) — the new test
# StreamK.ThreadsSharingAStreamKeepTheirOwnSums on main's dispatch (tmagemm_gpu_tests_old: expected to fail) and on
# the branch's (each call holds its stream's workspace until its work is enqueued), then run 3's order of suites
# (Carveout, PadTma, Addmm) and the StreamK suite on the branch. Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "new test on main's dispatch"
timeout 120 .carry/bin/tmagemm_gpu_tests_old --gtest_filter=StreamK.ThreadsSharingAStreamKeepTheirOwnSums \
  --gtest_repeat=2 > "$out/old.txt" 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure|error" "$out/old.txt" | head -12
stage "branch: the new test three times"
timeout 150 build/tests/tmagemm_gpu_tests --gtest_filter=StreamK.ThreadsSharingAStreamKeepTheirOwnSums \
  --gtest_repeat=3 > "$out/new-repeat.txt" 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure|^\[       OK" "$out/new-repeat.txt" | head -12
gpu_tests "Carveout.*:PadTma.*:Addmm.AlphaBetaInPlaceNanBiasAndKZero:Addmm.StreamKSplitTilesGetTheEpilogue:StreamK.*" 200
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -30
stage done
