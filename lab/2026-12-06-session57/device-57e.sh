#!/usr/bin/env bash
# device-57e.sh — H200 only: the grouped suite under version 0.1.4 on a fresh database (forty-ninth session, 0.1.3:
# 1.109, MoE decode rows 1.084), the one target suite not yet benched on the H200 under 0.1.4. ~3.5 min.
# Carry [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
h200_only
use_carry >/dev/null
BENCH_LOG=autotune bench_suites grouped:150
keep_logs
stage done
