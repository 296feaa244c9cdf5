#!/usr/bin/env bash
# device-52c.sh — on an H200: device-52b (every target suite under the flush-clear rule). On any other card, a second
# sample of what device-52a's H100 run left open: decode tuned fresh and read under both flushes (did the rule's pick
# on 64x4096x14336, skinny 64x64 split 2 at 0.964 after the read flush, repeat?), then llm tuned fresh (does rr
# 128 x 8192 x 8192 stay on our tile?). Carry [".carry/bin", ".carry/kcache.tgz"]. ~2.5 min on an H100.
out=$OUT
source scripts/device-lib.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$name" in *H200*) exec bash lab/2026-12-06-session52/device-52b.sh ;; esac
echo "card: $name"
use_carry
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites llm:150; keep_logs
stage done
