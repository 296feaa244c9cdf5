#!/usr/bin/env bash
# device-run1-24.sh — twenty-fourth session, run 1 (branch sk-bulk: a stream-K finishing unit that is its CTA's last
# bulk-copies the split tile's partial sums through the free ring): the StreamK tests (the ring and register fixups'
# bits compared), memcheck, per-CTA traces of 2304x2304x8192 and 4224^3 on this build and on main's (tmagemm_prev),
# and the waves suite with each stream-K config forced on both builds. Logs to $OUT/all.tgz.
set -u
out=/tmp/o
source scripts/device-lib.sh
use_carry
new_db=$TMAGEMM_CACHE_DIR  # the carried kernels (this build's text); main's compile on the fly into /tmp/kc-prev
db() { [ "$1" = tmagemm ] && echo "$new_db" || echo /tmp/kc-prev; }
gpu_tests "${TEST_FILTER:-StreamK.*:Addmm.*:PersistentTma.EveryConfigLoopsOverTiles}" 260
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -20
memcheck_tests "StreamK.TwoRunsGiveTheSameBits:StreamK.BatchedProblemSharesItsLastWave" 150
sk1=persistent_tma_128x256x64_s4_c2_g8_tmastore_sk
sk2=persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk
sk3=persistent_tma_128x128x64_s6_c2_g8_tmastore_sk
stage traces
for bin in tmagemm tmagemm_prev; do
  for s in 2304x2304x8192 4224x4224x4224; do
    for c in $sk1 $sk2; do
      f=/tmp/tr-$bin-$s-$c.csv
      echo "-- $bin $s $c"
      TMAGEMM_CACHE_DIR=$(db $bin) TMAGEMM_TRACE=$f TMAGEMM_CHOICE_REGEX="^$c\$" timeout 100 .carry/bin/$bin bench \
        --suite $s --reps 20 --out /tmp/tr 2>&1 | grep -E "^[0-9]+x|rror"
      python3 lab/persistent-trace.py "$f"
    done
  done
done 2>&1 | tee "$out/traces.txt"
stage forced
for bin in tmagemm tmagemm_prev; do
  echo "-- $bin"
  TMAGEMM_CACHE_DIR=$(db $bin) TMAGEMM_BIN=.carry/bin/$bin bash lab/bench-forced.sh waves $sk1 $sk2 $sk3
done 2>&1 | tee "$out/forced.txt"
stage done
tar -C /tmp -czf "$OUT/all.tgz" o
