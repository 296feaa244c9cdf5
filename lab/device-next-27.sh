#!/usr/bin/env bash
# device-next-27.sh — for the first device calls of the session after the twenty-seventh: the kernel change of
# lab/2026-12-03-session27/odd-block-pieces.patch (a finished tile's deferred TMA-store pieces after odd K blocks only;
# apply it and build first) through the GPU tests, then the suites it moves.
#   PART=1: PersistentTma.*, StreamK.*, GroupedMm.*, Addmm.*, ScaledMm.* and memcheck of a sample.       (~400 s)
#   PART=2: bench square, llm, waves (isolated and back to back) and bmm, tuned afresh.                  (~500 s)
# Carry [".carry/bin", ".carry/kcache.tgz"] (build: make -C build -j2; kcache: `tmagemm compile-check` into .kcache,
# tar -C .kcache -czf .carry/kcache.tgz kernels). Logs and JSON into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
if [ "${PART:-1}" = 1 ]; then
  gpu_tests "PersistentTma.*:StreamK.*:GroupedMm.*:Addmm.*:ScaledMm.*" 300
  grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | awk '{print $4, $5, $6}' | tr '\n' ' '; echo
  memcheck_tests "PersistentTma.EveryConfigLoopsOverTiles:StreamK.TwoRunsGiveTheSameBits" 150
else
  for s in square llm waves bmm; do
    stage "bench $s"
    timeout 150 build/tmagemm bench --suite $s --out "$out" 2>&1 | rows
  done
  stage "bench waves, back to back"
  mkdir -p /tmp/b2b && timeout 100 build/tmagemm bench --suite waves --back-to-back --out /tmp/b2b 2>&1 | rows
  for f in /tmp/b2b/*.json; do cp "$f" "$out/$(basename "$f" .json)-b2b.json"; done
fi
stage done
