#!/usr/bin/env bash
# device-44d.sh — device-44c.sh cut down after that call's machine stopped answering (10 of the session's 30 device
# minutes left): the cut's StreamK.* and memcheck, then 128x256 stream-K (1x1, 2x1) forced on the waves suite, main
# then the cut. Carry [".carry/bin", ".carry/kcache.tgz", ".carry/lab"].
out=$OUT
source scripts/device-lib.sh
use_carry
keep_logs() { mkdir -p /tmp/logs; mv "$out"/*.txt /tmp/logs/ 2>/dev/null; tar czf "$out/logs.tgz" -C /tmp/logs .; }
cp build/tmagemm /tmp/tmagemm-main
mkdir -p /tmp/kcl && tar -C /tmp/kcl -xzf .carry/lab/kcache.tgz
cp .carry/lab/tmagemm /tmp/tmagemm-cut
cp .carry/lab/tmagemm_gpu_tests build/tests/tmagemm_gpu_tests
fresh_db /tmp/kcl/kernels
gpu_tests "StreamK.*:GroupedMm.StreamKSharesOutThePartialWave" 120
keep_logs
memcheck_tests "StreamK.F16AndF32Outputs:StreamK.BatchedProblemSharesItsLastWave" 60
keep_logs
p=persistent_tma_
for v in main cut; do
  [ $v = main ] && kc=/tmp/kc/kernels || kc=/tmp/kcl/kernels
  export TMAGEMM_CACHE_DIR=/tmp/forced-$v; mkdir -p $TMAGEMM_CACHE_DIR; cp -r --update=none $kc $TMAGEMM_CACHE_DIR/
  TMAGEMM_BIN=/tmp/tmagemm-$v FLUSHES=write forced_each_flush waves-$v waves ${p}128x256x64_s4_c2_g8_tmastore_sk \
    ${p}128x256x64_s4_c2_g8_cm2_tmastore_sk
  keep_logs
done
stage done
