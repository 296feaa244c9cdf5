#!/usr/bin/env bash
# device-run3-29.sh — `tmagemm bench --sustained` (each side alone back to back, no flush, 0.8 s blocks ABBA) on
# square and llm as tuned (fresh DB), then the 128x256 2x1 TMA-store config forced on the rows where the tuner picks
# ping-pong or cuBLASLt. Carry as run 1.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
for s in square llm; do
  stage "bench $s --sustained"
  timeout 200 build/tmagemm bench --suite $s --sustained --out "$out" > "$out/bench-$s-sustained.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-$s-sustained.txt"
done
stage "forced 128x256 cm2, sustained"
BENCH_ARGS=--sustained bash lab/bench-forced.sh \
  "2048x2048x2048,4096x4096x4096,8192x28672x8192,8192x28672x8192:rc,4096x4096x14336:rc,4096x14336x4096" \
  persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore | tee "$out/forced-sustained.txt"
stage done
