#!/usr/bin/env bash
# device-run4-27.sh — twenty-seventh session, run 4: per-CTA traces of the 128x256 TMA-store kernel on K = 1000-1024
# and K = 4096 shapes (how much of a tile's time lies outside its MMAs when K is short: the question for a ping-pong
# schedule), then the addmm grid's cases run 2 did not reach (skinny large, fallback). Carry [".carry/bin",
# ".carry/kcache.tgz"]. Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage traces
c=persistent_tma_128x256x64_s4_c2_g8_tmastore
for s in 3000x5000x1000 4096x4096x1024 4096x4096x4096 8192x8192x1024; do
  f=/tmp/tr-$s.csv
  echo "-- $s $c"
  TMAGEMM_TRACE=$f TMAGEMM_CHOICE_REGEX="^$c\$" timeout 60 build/tmagemm bench --suite $s --reps 20 --out /tmp/tr 2>&1 \
    | grep -E "^[0-9]+x|rror"
  python3 lab/persistent-trace.py "$f"
  cp "$f" "$out/"
done 2>&1 | tee "$out/traces.txt"
gpu_tests "Addmm/AddmmGrid.*skinny_large*:Addmm/AddmmGrid.*fallback*" 330
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -8
stage done
