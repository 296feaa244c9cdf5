#!/usr/bin/env bash
# device-43d.sh — the forty-third session's fourth call: square and llm tuned (fresh database), the regression check
# of the stream-K grid change (a stream-K config with fewer tiles than SMs now splits them over every SM: 2048^3 is
# 128 tiles of 128x256, 128 x 8192 x 8192 32). Carry [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites square:120 llm:300
stage done
