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
keep_logs() { mkdir -p /tmp/logs; mv "$out"/*.txt /tmp/logs/ 2>/dev/null; tar czf "$out/logs.tgz" -C /tmp/logs .; }
cp build/tmagemm /tmp/tmagemm-main
mkdir -p /tmp/kcl && tar -C /tmp/kcl -xzf .carry/lab/kcache.tgz
cp .carry/lab/tmagemm /tmp/tmagemm-cut
cp .carry/lab/tmagemm_gpu_tests build/tests/tmagemm_gpu_tests
fresh_db /tmp/kcl/kernels
gpu_tests "StreamK.*:Addmm.StreamKSplitTilesGetTheEpilogue:GroupedMm.StreamK*" 240
memcheck_tests "StreamK.F16AndF32Outputs:StreamK.BatchedProblemSharesItsLastWave" 120
keep_logs
p=persistent_tma_
for v in main cut; do
  [ $v = main ] && kc=/tmp/kc/kernels || kc=/tmp/kcl/kernels
  export TMAGEMM_CACHE_DIR=/tmp/forced-$v; mkdir -p $TMAGEMM_CACHE_DIR; cp -r --update=none $kc $TMAGEMM_CACHE_DIR/
  TMAGEMM_BIN=/tmp/tmagemm-$v FLUSHES=write forced_each_flush waves-$v waves ${p}128x256x64_s4_c2_g8_tmastore_sk \
    ${p}128x256x64_s4_c2_g8_cm2_tmastore_sk ${p}128x128x64_s6_c2_g8_tmastore_sk
  TMAGEMM_BIN=/tmp/tmagemm-$v FLUSHES=read forced_each_flush decode-$v decode ${p}64x256x64_s5_c1_g8_tmastore_sk \
    ${p}64x128x64_s8_c1_g8_tmastore_sk
  keep_logs
done
cp /tmp/tmagemm-cut build/tmagemm
fresh_db /tmp/kcl/kernels
BENCH_LOG=autotune bench_suites waves:150
keep_logs
stage done
