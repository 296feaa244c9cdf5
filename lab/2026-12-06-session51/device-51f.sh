#!/usr/bin/env bash
# device-51f.sh — the flush-clear rule (version 0.1.4) on the suites it can move, any card, each on a fresh tuning
# database with AUTOTUNE logs: llm (write flush), decode tuned once and read back under both flushes, bmm, grouped.
# Predictions from the replay of 472 earlier tables (perf-notes "Fifty-first session"): llm's two 128 x 8192 x 8192
# rows on our 64x128 tile at 1.05-1.07 (llm +0.3-0.6 %); decode unchanged on the H200 (no table of its forty-ninth run
# changes), at most two rows 1-2 % lower under the read flush on the H100; bmm 64x2048x128x2048 perhaps on the
# ping-pong tile (+2-3 %); grouped unchanged. On an H200 these are the issues' figures. Carry [".carry/bin",
# ".carry/kcache.tgz"]. ~8 min.
out=$OUT
source scripts/device-lib.sh
use_carry
for s in llm:185 bmm:100 grouped:150; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
stage done
