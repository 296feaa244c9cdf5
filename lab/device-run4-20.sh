#!/usr/bin/env bash
# device-run4-20.sh — twentieth session, run 4: programmatic dependent launch (PDL) of the persistent TMA and skinny
# kernels. Tests (Pdl, StreamK, Addmm stream-K, GraphCapture, GroupedMm, Skinny, PersistentTma) and memcheck; decode
# under the read flush timed isolated (the bench's method), back to back after the flush kernel, and back to back
# with TMAGEMM_PDL=0 (same tuning DB). Logs to $OUT/all.tgz.
set -u
out=/tmp/o
rm -rf /tmp/o
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-Pdl.*:StreamK*:Addmm.StreamK*:GraphCapture*:GroupedMm.*:Skinny.*:PersistentTma.*}" 300
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -60
memcheck_tests "Pdl.*:StreamK.ConcurrentLaunchesOnTwoStreamsFinish" 120
for mode in iso b2b b2b-nopdl; do
  stage "decode, read flush, $mode"
  mkdir -p "$out/$mode"
  args="--flush read"
  [ "$mode" != iso ] && args="$args --back-to-back"
  env $([ "$mode" = b2b-nopdl ] && echo TMAGEMM_PDL=0) TMAGEMM_LOG=autotune timeout 200 build/tmagemm bench --suite decode \
    $args --out "$out/$mode" > "$out/$mode/bench-decode.txt" 2>&1
  echo "rc=$?"; rows < "$out/$mode/bench-decode.txt"
done
stage done
tar -C /tmp -czf "$OUT/all.tgz" o
