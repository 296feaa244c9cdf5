#!/usr/bin/env bash
# tune-vs-bench.sh — does the tuner rank choices the way the bench does? For each shape: the tuner's AUTOTUNE table
# TUNES times (fresh tuning database each time, the carried kernel cache), then the bench's ratio of each forced
# choice. nvidia-smi samples clock and power every 50 ms into $OUT/smi.csv.
# Usage: lab/tune-vs-bench.sh "SHAPE[:layout] ..." TUNES CHOICE...   (TMAGEMM_* filters in the environment apply
# to the tuning, e.g. TMAGEMM_CUBLASLT=0 to rank persistent TMA alone)
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
shapes=$1 tunes=$2
shift 2
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv,noheader -lms 50 > "$out/smi.csv" 2>&1 &
smi=$!
for s in $shapes; do
  for i in $(seq "$tunes"); do
    export TMAGEMM_CACHE_DIR=/tmp/tvb-$RANDOM$RANDOM
    mkdir -p "$TMAGEMM_CACHE_DIR" && cp -r .kcache/kernels "$TMAGEMM_CACHE_DIR/"
    echo "== tune $s #$i $(date +%T.%N | cut -c1-12)"
    TMAGEMM_LOG=autotune timeout 60 build/tmagemm tune "$s" 2>&1 | grep -E "^  [a-z]|benchmarked" | head -8
  done
  echo "== forced bench $s $(date +%T.%N | cut -c1-12)"
  (unset TMAGEMM_CUBLASLT TMAGEMM_FALLBACK TMAGEMM_PERSISTENT_TMA; TMAGEMM_CACHE_DIR=/tmp/tvb-forced bash lab/bench-forced.sh "$s" "$@")
done
kill $smi
