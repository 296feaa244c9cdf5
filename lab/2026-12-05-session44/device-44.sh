#!/usr/bin/env bash
# device-44.sh — the forty-fourth session's first device call. Carry [".carry/bin", ".carry/kcache.tgz", ".carry/lab"]
# (lab/prepare-39.sh PART=1 for the kernel cache, lab/2026-12-05-session44/prepare-44.sh PART=1 and PART=2).
#   1. main (the tuner's flush-hold rule: a memory-bound pick more than 2 % behind cuBLASLt's fastest after either
#      flush ranks after it): the decode suite tuned on a fresh database, write flush, then read flush on the same one.
#   2. the cheaper stream-K fixup (lab/2026-12-05-session43/stream-k-fixup-v2.patch; .carry/lab): StreamK.*, the addmm
#      stream-K test, GroupedMm.* (grouped stream-K is on by default), memcheck of two StreamK tests.
#   3. forced stream-K configs, main's binary and the patched one in turn: the waves suite (write flush) and the decode
#      suite (read flush).
out=$OUT
source scripts/device-lib.sh
use_carry
decode_tuned_both_flushes /tmp/kc/kernels
cp build/tmagemm /tmp/tmagemm-main
mkdir -p /tmp/kcl && tar -C /tmp/kcl -xzf .carry/lab/kcache.tgz
cp .carry/lab/tmagemm /tmp/tmagemm-v2
cp .carry/lab/tmagemm_gpu_tests build/tests/tmagemm_gpu_tests
fresh_db /tmp/kcl/kernels
gpu_tests "StreamK.*:Addmm.StreamKSplitTilesGetTheEpilogue:GroupedMm.*" 300
memcheck_tests "StreamK.F16AndF32Outputs:StreamK.BatchedProblemSharesItsLastWave" 120
p=persistent_tma_
for v in main v2; do
  [ $v = main ] && kc=/tmp/kc/kernels || kc=/tmp/kcl/kernels
  export TMAGEMM_CACHE_DIR=/tmp/forced-$v; mkdir -p $TMAGEMM_CACHE_DIR; cp -rn $kc $TMAGEMM_CACHE_DIR/
  TMAGEMM_BIN=/tmp/tmagemm-$v FLUSHES=write forced_each_flush waves-$v waves ${p}128x256x64_s4_c2_g8_tmastore_sk \
    ${p}128x256x64_s4_c2_g8_cm2_tmastore_sk ${p}128x128x64_s6_c2_g8_tmastore_sk
  TMAGEMM_BIN=/tmp/tmagemm-$v FLUSHES=read forced_each_flush decode-$v decode ${p}64x256x64_s5_c1_g8_tmastore_sk \
    ${p}64x128x64_s8_c1_g8_tmastore_sk
done
stage done
(cd "$out" && tar czf logs.tgz *.txt && rm -f *.txt)  # (few files come back from $OUT)
