#!/usr/bin/env bash
# device-50f.sh — device-50a cut to the session's last device minutes, on an H200 only (exit 3 at once elsewhere):
# llm tuned on a fresh database with the forty-ninth session's per-M rule (its H200 figure unmeasured; prediction
# 1.015-1.020); with PROBE=1 then cuBLASLt's configurations on the two waves rows the search left level (device-49i's
# probe). Carry [".carry/bin", ".carry/kcache.tgz"]. ~3 min (~5 with the probe).
out=$OUT
source scripts/device-lib.sh
h200_only
use_carry
BENCH_LOG=autotune bench_suites llm:150
keep_logs
[ "${PROBE:-0}" = 1 ] || { stage done; exit 0; }
stage probe
PASS1_SECONDS=8 timeout 140 .carry/bin/cublaslt_algo_search 4224x4224x4224 6144x1536x4096 \
  > "$out/algo-search-waves2-h200.txt" 2>&1
echo "rc=$?"
grep -A14 "write flush" "$out/algo-search-waves2-h200.txt" | head -34
stage done
