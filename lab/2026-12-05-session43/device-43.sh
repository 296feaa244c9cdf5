#!/usr/bin/env bash
# device-43.sh — the forty-third session's first two calls. Carry [".carry/bin", ".carry/kcache.tgz"]
# (lab/prepare-39.sh PART=1).
#   PART=a (first call, H100): until this session a stream-K config with fewer tiles than SMs launched one CTA a tile
#     (whole tiles); it now launches on every SM, each tile split by K blocks (persistent_tma_workers). StreamK.* and
#     memcheck of two of them; the decode suite forced under both flushes on 64x256 stream-K, 64x256 whole tiles,
#     64x128 stream-K and the skinny kernel's 256x64 split 1; the decode suite tuned (fresh database), then under the
#     read flush on the same database.
#   PART=b (second call, H200): the same, after stream-K's partial sums came to skip the rows at or past the tile's
#     end (kernels/stream_k_fixup.cuh; decode's M = 1 wrote and read all 64 rows of each split unit); GroupedMm.*
#     beside StreamK.* (grouped stream-K is on by default); the skinny config left out of the forced runs.
out=$OUT
source scripts/device-lib.sh
use_carry
p=persistent_tma_
configs="${p}64x256x64_s5_c1_g8_tmastore_sk ${p}64x256x64_s5_c1_g8_tmastore ${p}64x128x64_s8_c1_g8_tmastore_sk"
if [ "${PART:-b}" = a ]; then
  gpu_tests "StreamK.*" 150
  configs="$configs skinny_256x64_st5_split1"
else
  gpu_tests "StreamK.*:GroupedMm.*" 300
fi
grep -E "OK \]" "$out/gpu-tests.txt"
memcheck_tests "StreamK.F16AndF32Outputs:StreamK.BatchedProblemSharesItsLastWave" 120
forced_each_flush decode decode $configs
decode_tuned_both_flushes /tmp/kc/kernels
stage done
