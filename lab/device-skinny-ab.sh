#!/usr/bin/env bash
# device-skinny-ab.sh — a skinny kernel change measured against the previous build, in two calls (the carried tree's
# 64 MiB holds one whole kernel cache, not three):
#   ab:  the decode suite with only the skinny backend, old and new builds alternating (ab/old/tmagemm with its
#        skinny kernels ab/old/kcache, against build/tmagemm with ab/new/kcache), each run with its own tuning database;
#   new: for the new build (.kcache), tuned decode with the AUTOTUNE tables, skinny alone under both flushes,
#        heuristic decode, tuning time and the host-time benchmark.
# Writes summary-<part>.txt and results-<part>.tgz (the JSONs) to $OUT.
set -uo pipefail
part=${1:-ab}
final=${OUT:-out}; mkdir -p "$final"
out=$(mktemp -d)
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
source "$(dirname "$0")/../scripts/device-lib.sh"
skinny_decode() {  # BINARY
  TMAGEMM_CUBLASLT=0 TMAGEMM_FALLBACK=0 TMAGEMM_PERSISTENT_TMA=0 timeout 150 "$1" bench --suite decode --out /tmp/ab-json 2>&1 | rows
}
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv
if [ "$part" = ab ]; then
for round in 1 2; do
  echo "== round $round: old build, skinny only, write flush"
  fresh_db ab/old/kcache/kernels; skinny_decode ab/old/tmagemm
  echo "== round $round: new build, skinny only, write flush"
  fresh_db ab/new/kcache/kernels; skinny_decode build/tmagemm
done
else
fresh_db
echo "== bench decode (tuned; the AUTOTUNE tables' top 4)"
TMAGEMM_LOG=autotune timeout 200 build/tmagemm bench --suite decode --out "$out" 2>&1 \
  | grep -A11 -E "^AUTOTUNE|^[0-9]+x|geomean|FAIL|error|skipped" | grep -vE "strides|^--"
skinny_only_decode write 150
skinny_only_decode read 150
echo "== decode, heuristic mode"
TMAGEMM_TUNING=heuristic timeout 150 build/tmagemm bench --suite decode --out /tmp/heur 2>&1 | rows
for f in /tmp/heur/*-decode.json; do cp "$f" "$out/$(basename "$f" .json)-heuristic.json"; done
echo "== cold kernel cache: tune one new decode shape (persistent TMA, skinny and cuBLASLt choices)"
TMAGEMM_CACHE_DIR=/tmp/cold-cache-$RANDOM timeout 60 build/tmagemm tune 16x4096x4096 2>&1 | tail -2
echo "== warm kernel cache: tune one new decode shape"
timeout 30 build/tmagemm tune 64x14336x4096 2>&1 | tail -2
echo "== host time of a tuned call"
timeout 90 build/tmagemm_host_bench --benchmark_min_time=0.3 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>&1 | grep -E "median" | head -12
fi
} 2>&1 | tee "$out/summary-$part.txt"
cp "$out/summary-$part.txt" "$final/" && tar czf "$final/results-$part.tgz" -C "$out" .
