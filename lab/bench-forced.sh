#!/usr/bin/env bash
# bench-forced.sh — the same shapes benchmarked once per forced choice (TMAGEMM_CHOICE_REGEX), rows prefixed with
# the choice (shape, layout, TFLOP/s ours and cuBLASLt, ratio, then the misaligned suite's aligned TFLOP/s and ratio to it). Usage: lab/bench-forced.sh SHAPES CHOICE... (SHAPES as for `tmagemm bench --suite`)
# BENCH_ARGS adds options to every `tmagemm bench` (e.g. BENCH_ARGS="--flush read"); TMAGEMM_BIN another binary.
set -uo pipefail
shapes=$1
shift
export TMAGEMM_CACHE_DIR=${TMAGEMM_CACHE_DIR:-/tmp/tmagemm-forced}
mkdir -p "$TMAGEMM_CACHE_DIR" && [ -d .kcache/kernels ] && cp -rn .kcache/kernels "$TMAGEMM_CACHE_DIR/" 2>/dev/null
for c in "$@"; do
  TMAGEMM_CHOICE_REGEX="^$c\$" timeout 150 "${TMAGEMM_BIN:-build/tmagemm}" bench --suite "$shapes" ${BENCH_ARGS:-} --out /tmp/forced 2>&1 \
    | grep -E "^[0-9]+x|rror" | awk -v c="$c" '{print $1, $2, $3, $4, $5, $6, $7}' | sed "s/^/${c#persistent_tma_}: /"
done
