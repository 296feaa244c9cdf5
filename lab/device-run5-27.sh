#!/usr/bin/env bash
# device-run5-27.sh — twenty-seventh session, run 5: the tile boundary of the 128x256 TMA-store kernel taken apart
# (trace slots packed, next_full, next_issued, unit0_stored: consumer 0 from the first tile's MMAs done to its first
# stored piece under the second tile). Carry [".carry/bin", ".carry/kcache.tgz"]. Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
c=persistent_tma_128x256x64_s4_c2_g8_tmastore
for s in 8192x8192x1024 4096x4096x4096 3000x5000x1000; do
  f=/tmp/tr-$s.csv
  echo "-- $s $c"
  TMAGEMM_TRACE=$f TMAGEMM_CHOICE_REGEX="^$c\$" timeout 60 build/tmagemm bench --suite $s --reps 20 --out /tmp/tr 2>&1 \
    | grep -E "^[0-9]+x|rror"
  python3 lab/persistent-trace.py "$f"
  cp "$f" "$out/"
done 2>&1 | tee "$out/traces.txt"
