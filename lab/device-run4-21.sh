#!/usr/bin/env bash
# device-run4-21.sh — twenty-first session, run 4 (run 3's build): the 128x256 TMA-store config forced on the addmm
# and fp8 suites by the build before the first-block peel (tmagemm_prev: C7515 on those kernels) and by this one;
# decode timed isolated and back to back under both flushes (one tuning DB). Logs to $OUT/all.tgz.
set -u
out=/tmp/o
rm -rf /tmp/o
source scripts/device-lib.sh
use_carry
for bin in prev new; do
  exe=build/tmagemm; [ $bin = prev ] && exe=.carry/bin/tmagemm_prev
  for sc in "addmm ^persistent_tma_128x256x64_s4_c2_g8_tmastore$" "fp8 ^persistent_tma_fp8_128x256x128_s4_c2_g8_tmastore$"; do
    set -- $sc
    stage "forced $1 ($bin)"
    TMAGEMM_CHOICE_REGEX="$2" timeout 120 $exe bench --suite $1 --out "$out/forced-$bin" > "$out/forced-$bin-$1.txt" 2>&1
    echo "rc=$?"; rows < "$out/forced-$bin-$1.txt"
  done
done
for m in iso b2b; do for f in write read; do timed_suite decode $m $f 110; done; done
stage done
tar -C /tmp -czf "$OUT/all.tgz" o
