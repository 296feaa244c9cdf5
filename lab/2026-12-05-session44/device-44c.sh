#!/usr/bin/env bash
# device-44c.sh — the forty-fourth session's third call. Carry [".carry/bin", ".carry/kcache.tgz", ".carry/lab"]
# (.carry/lab: /tmp/wt44, main with the stream-K cut that cuts a partial wave's tiles alike where one segment fits each
# worker, kernels/scheduler.cuh stream_k_cut; its stream-K kernels compiled).
#   1. The cut's build: StreamK.*, the addmm stream-K test, GroupedMm's stream-K tests, memcheck of two StreamK tests.
#   2. Forced stream-K configs on the waves suite (write flush) and the decode suite (read flush): main, then the cut.
#   3. The cut's build: the waves suite tuned on a fresh database.
out=$OUT
source scripts/device-lib.sh
use_carry
use_lab_build cut
gpu_tests "StreamK.*:Addmm.StreamKSplitTilesGetTheEpilogue:GroupedMm.StreamK*" 240
memcheck_tests "StreamK.F16AndF32Outputs:StreamK.BatchedProblemSharesItsLastWave" 120
keep_logs
p=persistent_tma_
FLUSHES=write forced_main_and_lab cut waves waves ${p}128x256x64_s4_c2_g8_tmastore_sk \
  ${p}128x256x64_s4_c2_g8_cm2_tmastore_sk ${p}128x128x64_s6_c2_g8_tmastore_sk
FLUSHES=read forced_main_and_lab cut decode decode ${p}64x256x64_s5_c1_g8_tmastore_sk ${p}64x128x64_s8_c1_g8_tmastore_sk
cp /tmp/tmagemm-cut build/tmagemm
fresh_db /tmp/kcl/kernels
BENCH_LOG=autotune bench_suites waves:150
keep_logs
stage done
