#!/usr/bin/env bash
# device-45d.sh — main (the stream-K cut, the flush-hold rule) tuned on fresh databases: waves, then decode under both
# flushes, grouped last; device-44e.sh without its tests, for an H200 if one comes. Carry [".carry/bin",
# ".carry/kcache.tgz"] (lab/prepare-39.sh PART=1 at HEAD). ~4 min. Not run: the device refused (no H200 came).
out=$OUT
source scripts/device-lib.sh
use_carry
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites waves:60
keep_logs
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites grouped:110
keep_logs
stage done
