#!/usr/bin/env bash
# device-42.sh — the forty-second session's device call: the 64-row stream-K configs (64x256 s5 and 64x128 s8, one
# consumer) on the memory-bound few-row problems. lab/probes/tile_stream.cu grid measured a 470 MB weight streamed in
# the skinny grids' boxes at 111.1 us on one CTA a tile (112 CTAs) against 106.9 us shared out over all 132 SMs in
# stream-K order (read flush, H200); these configs run that schedule. Carry [".carry/bin", ".carry/kcache.tgz"]
# (lab/prepare-39.sh PART=1 builds them).
#   1. GPU tests: StreamK.* (the new configs on every layout, decode's few rows among the shapes),
#      PersistentTma.EveryConfigLoopsOverTiles.
#   2. The decode suite with each new config forced, beside 64x256 whole tiles and the skinny kernel's 256x64 split 1,
#      under both flushes (each row's ratio against cuBLASLt measured in the same run).
#   3. The decode suite tuned (fresh database: the prescreen now times a memory-bound stream-K config within its
#      ratio of the best whole tile's roofline), then under the read flush on the same database.
#   4. Where time is left: the grouped suite tuned (its MoE decode rows).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
p=persistent_tma_
if [ "${PART:-a}" = b ]; then
  forced_each_flush 28672 1x28672x8192,16x28672x8192,64x28672x8192 ${p}64x256x64_s5_c1_g8_tmastore_sk \
    ${p}64x256x64_s5_c1_g8_tmastore skinny_256x64_st5_split1
  BENCH_LOG=autotune bench_suites bmm:100
  stage done
  exit 0
fi
gpu_tests "StreamK.*:PersistentTma.EveryConfigLoopsOverTiles" 150
FLUSHES="write read" forced_each_flush decode decode ${p}64x256x64_s5_c1_g8_tmastore_sk \
  ${p}64x128x64_s8_c1_g8_tmastore_sk ${p}64x256x64_s5_c1_g8_tmastore skinny_256x64_st5_split1
decode_tuned_both_flushes /tmp/kc/kernels
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites grouped:200
stage done
# PART b (a second, short call, ~3 min; `PART=b bash lab/device-42.sh` runs it alone): the 28672 x 8192 rows forced
# (64x256 stream-K, 64x256 whole tiles, the skinny kernel's 256x64 split 1) under both flushes, and the bmm suite
# tuned (its 64 x 2048 x 128 x 2048 row is memory-bound with a partial last round: the prescreen now times the
# stream-K configs there).
