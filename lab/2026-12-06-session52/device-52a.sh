#!/usr/bin/env bash
# device-52a.sh — the flush-clear rule (version 0.1.4) on whatever card comes. On an H200: every target suite tuned
# on fresh databases (device-49b's stages: the issues' figures). On any other card: device-51f's stages (llm, bmm,
# grouped tuned fresh, decode under both flushes). Predictions as in those scripts: llm +0.3-0.6 % (the two
# 128 x 8192 x 8192 rows on our 64x128 tile at 1.05-1.07), the rest unchanged. Carry [".carry/bin",
# ".carry/kcache.tgz"]. ~6-8 min.
out=$OUT
source scripts/device-lib.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
use_carry
case "$name" in
  *H200*) first="waves:120 llm:150 square:90" then="bmm:100 grouped:150" ;;
  *) first="llm:185" then="bmm:100 grouped:150" ;;
esac
# Each suite on a fresh database; decode between the two groups, so that a call cut short keeps the issues' rows first.
for s in $first; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
for s in $then; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
stage done
