#!/usr/bin/env bash
# device-margin.sh — tuned decode twice and llm once, each from a fresh tuning database (the carried kernel cache
# copied in), with the AUTOTUNE tables: what the near-tie margin picks. Writes summary-margin.txt and
# results-margin.tgz (the JSONs; the second decode run's as -run2) to $OUT.
set -uo pipefail
final=${OUT:-out}; mkdir -p "$final"
out=$(mktemp -d)
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
source "$(dirname "$0")/../scripts/device-lib.sh"
tuned() {  # SUITE OUTDIR
  echo "== bench $1 (tuned; the AUTOTUNE tables' top 4)"
  TMAGEMM_LOG=autotune timeout 250 build/tmagemm bench --suite "$1" --out "$2" 2>&1 \
    | grep -A5 -E "^AUTOTUNE|^[0-9]+x|geomean|FAIL|error|skipped" | grep -vE "strides|^--"
}
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv
fresh_db; tuned decode "$out"
fresh_db; tuned llm "$out"
fresh_db; tuned decode /tmp/run2
for f in /tmp/run2/*-decode.json; do cp "$f" "$out/$(basename "$f" .json)-run2.json"; done
} 2>&1 | tee "$out/summary-margin.txt"
cp "$out/summary-margin.txt" "$final/" && tar czf "$final/results-margin.tgz" -C "$out" .
