#!/usr/bin/env bash
# device-52b.sh — device-52a's H200 half only: on any other card it stops at once (exit 3), so that an H100 costs only
# its start. On the H200: waves, llm, square tuned on fresh databases, decode tuned and read back under both flushes,
# then bmm and grouped (the issues' figures under version 0.1.4's flush-clear rule). Predictions (forty-ninth session's
# H200: waves 1.033, llm 1.017, square 0.996, decode 1.075 / 1.026, bmm 1.013, grouped 1.109): llm ~1.020 (rr
# 128 x 8192 x 8192 on our 64x128 tile at 1.05-1.06, as the H100 run of device-52a showed), the rest unchanged.
# Carry [".carry/bin", ".carry/kcache.tgz"]. ~6 min.
out=$OUT
source scripts/device-lib.sh
h200_only
use_carry
for s in waves:120 llm:150 square:90; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
for s in bmm:100 grouped:150; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
stage done
