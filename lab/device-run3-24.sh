#!/usr/bin/env bash
# device-run3-24.sh — twenty-fourth session, run 3: the second half of the GPU suite on run 2's build (every test run 2
# did not run), then memcheck on a sample. Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-*-PersistentTma.*:Skinny.*:ScaledMm.*:Fallback.*:Pdl.*:StreamK.*}" 430
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -80
memcheck_tests "GroupedMm.GraphReplayWithNewOffsets:Bmm.BroadcastEitherOperand:PadTma.*:Pdl.*" 100
stage done
