#!/usr/bin/env bash
# trace-run.sh — per-CTA timelines (TMAGEMM_TRACE builds) of forced configs; one CSV per "SHAPE:LAYOUT=CHOICE"
# argument into $OUT (the last launch of a one-rep bench).
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
export TMAGEMM_CACHE_DIR=${TMAGEMM_CACHE_DIR:-/tmp/tmagemm-trace}
i=0
for spec in "$@"; do
  shape=${spec%%=*} choice=${spec#*=}
  i=$((i + 1))
  TMAGEMM_TRACE="$out/trace-$i.csv" TMAGEMM_CHOICE_REGEX="^$choice\$" timeout 120 build/tmagemm bench --suite "$shape" \
    --reps 1 --out /tmp/tr 2>&1 | grep -E "^[0-9]+x|rror" | sed "s/^/$i: /"
done
