#!/usr/bin/env bash
# device-48d.sh — the addmm test of every search configuration (fixed: beta 1 with a row bias) and its memcheck;
# waves tuned with the search on by default (no environment); cuBLASLt's configurations beyond its heuristic on the
# square suite's shapes and llm's weakest row (lab/probes/cublaslt_algo_search.cu). Carry [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "Addmm.EveryCublasLtSearchConfigurationWithItsEpilogue:CublasLtSearch.*" 100
keep_logs
memcheck_tests "Addmm.EveryCublasLtSearchConfigurationWithItsEpilogue" 100
keep_logs
fresh_db /tmp/kc/kernels
unset TMAGEMM_CUBLASLT_SEARCH
BENCH_LOG=autotune bench_suites waves:120
keep_logs
stage "cuBLASLt configurations beyond the heuristic: square, 8192x8192x28672"
PASS1_SECONDS=12 timeout 200 .carry/bin/cublaslt_algo_search 2048x2048x2048 4096x4096x4096 8192x8192x8192 \
  8192x8192x28672 > /tmp/logs/search-square.txt 2>&1
echo "rc=$?"; keep_logs
stage done
