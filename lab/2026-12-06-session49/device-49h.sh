#!/usr/bin/env bash
# device-49h.sh — the per-M records answer in a later process (the session's tuner changes end to end): llm tuned on
# a fresh database, then llm again in a new process on the same database. Prediction: the second run times nothing
# (no AUTOTUNE table, no "timed at M" line); its ratios within run-to-run spread of the first.
# Carry [".carry/bin", ".carry/kcache.tgz"]. ~3 min.
out=$OUT
source scripts/device-lib.sh
use_carry
fresh_db /tmp/kc/kernels
stage "llm, tuning"
TMAGEMM_LOG=autotune timeout 170 build/tmagemm bench --suite llm --out "$out/first" > "$out/bench-llm-first.txt" 2>&1
echo "rc=$?"; grep -c "^AUTOTUNE mm(" "$out/bench-llm-first.txt"; grep geomean "$out/bench-llm-first.txt"
stage "llm again, same database"
TMAGEMM_LOG=autotune timeout 120 build/tmagemm bench --suite llm --out "$out/second" > "$out/bench-llm-second.txt" 2>&1
echo "rc=$?"; echo "AUTOTUNE tables in the second run: $(grep -c '^AUTOTUNE' "$out/bench-llm-second.txt")"
grep -E "^AUTOTUNE" "$out/bench-llm-second.txt" | head -5; rows < "$out/bench-llm-second.txt"
keep_logs
stage done
