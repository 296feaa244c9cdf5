#!/usr/bin/env bash
# device-epilogue-vectors.sh — branch epilogue-vectors (prepared in the twenty-first session, not yet run): the GPU
# tests the epilogue's vector loads touch, memcheck of the config sweep, the 128x256 TMA-store config forced on the
# addmm and fp8 suites by main's build (.carry/bin/tmagemm_prev) and by this one, then the tuned addmm and fp8 suites.
# Carry this branch's tmagemm + tmagemm_gpu_tests and kcache, main's tmagemm as tmagemm_prev. Logs straight into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "Addmm.*:Addmm/AddmmGrid.*persistent_tma*:ScaledMm.*" 420
memcheck_tests "Addmm.EveryPersistentTmaConfigLoopsOverTilesWithAnEpilogue" 150
for bin in prev new; do
  exe=build/tmagemm; [ $bin = prev ] && exe=.carry/bin/tmagemm_prev
  for sc in "addmm ^persistent_tma_128x256x64_s4_c2_g8_tmastore$" "fp8 ^persistent_tma_fp8_128x256x128_s4_c2_g8_tmastore$"; do
    set -- $sc
    stage "forced $1 ($bin)"
    TMAGEMM_CHOICE_REGEX="$2" timeout 120 $exe bench --suite $1 --out "$out/forced-$bin" > "$out/forced-$bin-$1.txt" 2>&1
    echo "rc=$?"; rows < "$out/forced-$bin-$1.txt" | grep geomean
  done
done
bench_suites addmm:200 fp8:240
stage done
