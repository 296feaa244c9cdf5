#!/usr/bin/env bash
# device-43.sh — the forty-third session's first call. Until this session a stream-K config with fewer tiles than
# SMs launched one CTA a tile (whole tiles); it now launches on every SM, each tile split by K blocks
# (persistent_tma_workers). Carry [".carry/bin", ".carry/kcache.tgz"] (kernels unchanged: the cache stands).
#   1. StreamK.* (the few-tile shapes now split over every SM) and memcheck of two of them.
#   2. The decode suite forced, both flushes: 64x256 stream-K (now over 132 SMs), 64x256 whole tiles, 64x128
#      stream-K, the skinny kernel's 256x64 split 1.
#   3. The decode suite tuned (fresh database), then under the read flush on the same database.
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "StreamK.*" 150; grep -E "OK \] StreamK" $OUT/gpu-tests.txt
memcheck_tests "StreamK.F16AndF32Outputs:StreamK.BatchedProblemSharesItsLastWave" 120
p=persistent_tma_
for fl in read write; do
  stage "decode forced, flush $fl"
  BENCH_ARGS="--flush $fl" lab/bench-forced.sh decode ${p}64x256x64_s5_c1_g8_tmastore_sk \
    ${p}64x256x64_s5_c1_g8_tmastore ${p}64x128x64_s8_c1_g8_tmastore_sk skinny_256x64_st5_split1 2>&1 |
    tee -a "$out/decode-forced-$fl.txt"
done
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites decode:120
stage "bench decode --flush read"
timeout 100 build/tmagemm bench --suite decode --flush read --out "$out" > "$out/bench-decode-read.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-decode-read.txt"
stage done
