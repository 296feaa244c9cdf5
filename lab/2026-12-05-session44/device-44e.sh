#!/usr/bin/env bash
# device-44e.sh — the forty-fourth session's last call, not run (the device refused: too little device time left):
# main with the stream-K cut (carried at its kernels, lab/prepare-39.sh PART=1), tuned on fresh databases: waves,
# grouped, decode under both flushes. For the next session's first call.
# Carry [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry
BENCH_LOG=autotune bench_suites waves:60
keep_logs
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites grouped:110
keep_logs
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
stage done
