#!/usr/bin/env bash
# device-run1-23.sh — twenty-third session, run 1 (branch stagger): consumer 1 of the persistent TMA kernel starts
# TMAGEMM_CONSUMER_STAGGER K blocks after consumer 0, so that the two warpgroups' tile boundaries stop coinciding.
# The config sweeps with a stagger of 3 (no hang, results right), then 128x256 (1x1 and 2x1) forced on four large
# shapes for staggers 0-3, twice; five configs forced on the bmm suite. Also brings the device's CPython headers back (the cp312 extension build).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
tar -C "$(dirname "$inc")" -czf "$out/pyinclude.tgz" "$(basename "$inc")"
cp /usr/include/x86_64-linux-gnu/python3.12/pyconfig.h "$out/" 2>/dev/null
TMAGEMM_CONSUMER_STAGGER=3 gpu_tests "PersistentTma.EveryConfigLoopsOverTiles:PersistentTma.AllLayoutsRaggedSizes:StreamK.*:Addmm.EveryPersistentTmaConfigLoopsOverTilesWithAnEpilogue:GroupedMm.EveryConfig:ScaledMm.EveryFp8Choice" 200
mv "$out/gpu-tests.txt" "$out/gpu-tests-stagger3.txt"
stage "forced stagger sweep"
S="4096x4096x4096,8192x8192x8192,4096x14336x4096,4096x4096x14336:rc"
for rep in 1 2; do
  for st in 0 1 2 3; do
    TMAGEMM_CONSUMER_STAGGER=$st lab/bench-forced.sh "$S" persistent_tma_128x256x64_s4_c2_g8_tmastore \
      persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore | sed "s/^/st$st: /"
  done
done 2>&1 | tee "$out/forced-stagger.txt"
stage "forced on bmm"
lab/bench-forced.sh bmm persistent_tma_128x256x64_s4_c2_g8_tmastore persistent_tma_256x128x64_s4_c2_g8_tmastore \
  persistent_tma_128x128x64_s6_c2_g8_tmastore persistent_tma_64x256x64_s5_c1_g8_tmastore \
  persistent_tma_128x256x64_s3_c2_g8_cm2_tmastore_st4 2>&1 | tee "$out/forced-bmm.txt"
stage done
