#!/usr/bin/env bash
# device-run3-22.sh — twenty-second session, run 3 (branch wave-tiles after the reverts: main with the epilogue's
# vectors loaded under the last K block): the 128x256 TMA-store config forced on the addmm and fp8 suites by main's
# build (.carry/bin/tmagemm_prev) and by this one, then the tuned addmm suite. Logs and JSON straight into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
for sc in "addmm ^persistent_tma_128x256x64_s4_c2_g8_tmastore$" "fp8 ^persistent_tma_fp8_128x256x128_s4_c2_g8_tmastore$"; do
  set -- $sc
  for bin in prev new; do
    exe=build/tmagemm; [ $bin = prev ] && exe=.carry/bin/tmagemm_prev
    stage "forced $1 ($bin)"
    TMAGEMM_CHOICE_REGEX="$2" timeout 100 $exe bench --suite $1 --out "$out/forced-$bin" > "$out/forced-$bin-$1.txt" 2>&1
    echo "rc=$?"; rows < "$out/forced-$bin-$1.txt" | grep geomean
  done
done
bench_suites addmm:170
stage done
