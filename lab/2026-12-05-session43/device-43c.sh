#!/usr/bin/env bash
# device-43c.sh — the forty-third session's third call. Carry [".carry/bin", ".carry/kcache.tgz"].
#   1. Per-CTA timelines (TMAGEMM_TRACE) of 16 x 28672 x 8192 on 64x256 stream-K (132 CTAs, each tile split in two)
#      and whole tiles (112 CTAs), and 1 x 4096 x 14336 on 64x256 stream-K (16 tiles over 132 CTAs): where the
#      stream-K launch loses 6-8 % to whole tiles (forced, H200, second call) that the tile_stream probe's stream order
#      gained (4 %).
#   2. The waves suite tuned (fresh database): a stream-K config with fewer tiles than SMs now splits them over every
#      SM; whether the tuner's picks hold (last: 1.003).
#   3. lab/device-39.sh PART=4's main traces (1536^3 on 128x192 and 128x128, 1000^3 on 64x128x128 2x1).
out=$OUT
source scripts/device-lib.sh
use_carry
p=persistent_tma_
stage "stream-K timelines"
mkdir -p "$out/trace-sk"
OUT=$out/trace-sk timeout 150 scripts/trace-run.sh "16x28672x8192=${p}64x256x64_s5_c1_g8_tmastore_sk" \
  "16x28672x8192=${p}64x256x64_s5_c1_g8_tmastore" "1x4096x14336=${p}64x256x64_s5_c1_g8_tmastore_sk" 2>&1 |
  tee "$out/trace-sk.txt"
python3 lab/persistent-trace.py "$out"/trace-sk/*.csv 2>&1 | tee -a "$out/trace-sk.txt"
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites waves:150
PART=4 bash lab/device-39.sh > "$out/part4.log" 2>&1; tail -40 "$out/part4.log"
stage done
