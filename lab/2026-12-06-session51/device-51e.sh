#!/usr/bin/env bash
# device-51e.sh — the flush-clear rule (src/tune/benchmark.cpp flush_ranked_ms, version 0.1.4), any card: the llm
# suite tuned on a fresh database (write flush, the target's method), AUTOTUNE logs kept. Prediction: both 128 x 8192
# x 8192 rows run our 64x128 tile at 1.05-1.07 of cuBLASLt (before: cuBLASLt at 1.00 in half the tunings), the rest
# unchanged; llm +0.3-0.6 % (H200 1.017 in the forty-ninth session, H100 1.014-1.020). Carry [".carry/bin",
# ".carry/kcache.tgz"]. ~3 min.
out=$OUT
source scripts/device-lib.sh
use_carry
BENCH_LOG=autotune bench_suites llm:185
keep_logs
stage done
