#!/usr/bin/env bash
# probe-pch.sh — cold-cache tuning time with NVRTC's automatic precompiled headers (build/tmagemm) against the
# build without them (ab/nopch/tmagemm), alternating, each tune into an empty cache directory; TMAGEMM_LOG=autotune
# gives the precompile seconds. Writes $OUT/pch.txt.
set -uo pipefail
out=${OUT:-out}; mkdir -p $out
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
{
nproc
for round in 1 2; do
  for b in ab/nopch/tmagemm build/tmagemm; do
    for s in 4096x4096x4096 16x4096x4096; do
      echo "== round $round $b $s"
      TMAGEMM_LOG=autotune TMAGEMM_CACHE_DIR=/tmp/cold-$RANDOM$RANDOM timeout 60 $b tune $s 2>&1 | grep -E "benchmarked|tune s|^$s|^[0-9]+x" | tail -2
    done
  done
done
} 2>&1 | tee $out/pch.txt
