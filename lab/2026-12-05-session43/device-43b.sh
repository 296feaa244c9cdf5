#!/usr/bin/env bash
# device-43b.sh — the forty-third session's second call: stream-K's partial sums now skip the rows at or past the
# tile's end (kernels/stream_k_fixup.cuh; decode's M = 1 wrote and read all 64 rows of each split unit). Carry
# [".carry/bin", ".carry/kcache.tgz"] (lab/prepare-39.sh PART=1).
#   1. StreamK.* and GroupedMm.* (grouped stream-K is on by default), memcheck of two StreamK tests.
#   2. The decode suite forced, both flushes: 64x256 stream-K (over 132 SMs), 64x256 whole tiles, 64x128 stream-K.
#   3. The decode suite tuned (fresh database), then under the read flush on the same database.
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "StreamK.*:GroupedMm.*" 300; grep -cE "OK \]" $OUT/gpu-tests.txt
memcheck_tests "StreamK.F16AndF32Outputs:StreamK.BatchedProblemSharesItsLastWave" 120
p=persistent_tma_
for fl in read write; do
  stage "decode forced, flush $fl"
  BENCH_ARGS="--flush $fl" lab/bench-forced.sh decode ${p}64x256x64_s5_c1_g8_tmastore_sk \
    ${p}64x256x64_s5_c1_g8_tmastore ${p}64x128x64_s8_c1_g8_tmastore_sk 2>&1 | tee -a "$out/decode-forced-$fl.txt"
done
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites decode:120
stage "bench decode --flush read"
timeout 100 build/tmagemm bench --suite decode --flush read --out "$out" > "$out/bench-decode-read.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-decode-read.txt"
stage done
