#!/usr/bin/env bash
# device-44e.sh — the forty-fourth session's last call, not run (the device refused: too little device time left):
# main with the stream-K cut (kernels/scheduler.cuh stream_k_cut; carried at its kernels, lab/prepare-39.sh PART=1).
# For the next session's first call (~7 min on an H100). Carry [".carry/bin", ".carry/kcache.tgz"].
#   1. The GPU tests the cut touches that the session's calls did not run on it (the grouped stream-K tests but one,
#      every config on ragged shapes, the addmm stream-K epilogue, the tuner), memcheck of two StreamK tests.
#   2. Tuned on fresh databases: waves, grouped, decode under both flushes.
out=$OUT
source scripts/device-lib.sh
use_carry
tests="StreamK.*:GroupedMm.StreamK*:Addmm.StreamKSplitTilesGetTheEpilogue:PersistentTma.EveryConfigEveryLayout"
gpu_tests "$tests:Tuner.*" 300
memcheck_tests "StreamK.F16AndF32Outputs:GroupedMm.StreamKWorstSplitInAWorkspaceOfExactlyItsSize" 120
keep_logs
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites waves:60
keep_logs
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites grouped:110
keep_logs
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
stage done
