#!/usr/bin/env bash
# device-run1-22.sh — twenty-second session, run 1 (branch wave-tiles: the wave-fitting widths 128x144/176/208/240,
# with branch epilogue-vectors merged): the GPU tests that sweep every config (the new widths included) and the
# epilogue's vectors, memcheck of the config sweep with an epilogue, then each width forced on the waves suite
# against the widths we had. Logs straight into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "PersistentTma.EveryConfig*:PersistentTma.AllLayoutsLarge:GroupedMm.*:Addmm.*:ScaledMm.EveryFp8Choice:ScaledMm.TorchCasesOnEveryBackend" 240
memcheck_tests "Addmm.EveryPersistentTmaConfigLoopsOverTilesWithAnEpilogue" 150
stage "forced on waves"
for w in 144 176 208 240 224 192 256; do
  lab/bench-forced.sh waves persistent_tma_128x${w}x64_s4_c2_g8_tmastore
done 2>&1 | tee "$out/forced-waves.txt"
stage done
