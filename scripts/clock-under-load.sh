#!/usr/bin/env bash
# clock-under-load.sh — the SM clock and power while our forced config and then cuBLASLt run back to back
# (bench --no-interleave, many reps), sampled every 50 ms. Usage: scripts/clock-under-load.sh SHAPE CHOICE REPS
set -uo pipefail
shape=$1 choice=$2 reps=$3
out=${OUT:-out}
export TMAGEMM_CACHE_DIR=${TMAGEMM_CACHE_DIR:-/tmp/tmagemm-prof}
mkdir -p "$TMAGEMM_CACHE_DIR" && cp -rn .kcache/kernels "$TMAGEMM_CACHE_DIR/" 2>/dev/null
log="$out/clock-$(echo "$shape" | tr ':' '-')-$choice.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv,noheader -lms 50 > /tmp/smi.txt &
smi=$!
sleep 1
echo "start $(date +%T.%N)" > "$log"
TMAGEMM_CHOICE_REGEX="^$choice\$" timeout 200 build/tmagemm bench --suite "$shape" --no-interleave --reps "$reps" --out /tmp/c >> "$log" 2>&1
echo "end $(date +%T.%N)" >> "$log"
sleep 0.5
kill $smi
cat /tmp/smi.txt >> "$log"
grep -E "^[0-9]+x" "$log"
