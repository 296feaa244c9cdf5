#!/usr/bin/env bash
# device-48b.sh — the search with its fitted configurations (choices/cublaslt.hpp cublaslt_search_configs: the best
# tiles at the call's own M, timed there with the library's ranks): GPU tests, then waves, square and llm tuned on
# fresh databases with TMAGEMM_CUBLASLT_SEARCH=1, and waves with it off (the same card's baseline). Carry
# [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "CublasLtSearch.*:TuneBuckets.*" 150
keep_logs
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites waves:150
mkdir -p "$out/search-off" && mv "$out"/*waves.json "$out/search-off/" && mv "$out/bench-waves.txt" "$out/search-off/"
export TMAGEMM_CUBLASLT_SEARCH=1
for s in ${SUITES:-waves square llm}; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites $s:150; keep_logs; done
stage done
