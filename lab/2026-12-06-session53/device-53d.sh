#!/usr/bin/env bash
# device-53d.sh — the last minutes' call: llm, then waves, each tuned on a fresh database (H200 only; exit 3 at once
# elsewhere). Carry [".carry/bin", ".carry/kcache.tgz"]. ~3 min.
out=$OUT
source scripts/device-lib.sh
h200_only
use_carry
for s in llm:150 waves:120; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
stage done
