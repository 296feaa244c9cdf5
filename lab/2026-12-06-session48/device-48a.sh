#!/usr/bin/env bash
# device-48a.sh — the forty-eighth session's first call: the cuBLASLt configuration search (src/choices/cublaslt.hpp),
# built in the forty-seventh session and never run on a GPU. 1) its GPU tests and the bucket tests it must not break;
# 2) waves tuned on a fresh database with the search on (write flush, as the target); 3) memcheck of its
# configurations; 4) bmm tuned with the search on. Carry [".carry/bin", ".carry/kcache.tgz"]. ~8 min.
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "CublasLtSearch.*:TuneBuckets.CublasLtInABucketIsItsHeuristicsFirstPick:TuneBuckets.OneTuningServesEveryMOfTheBucket" 100
keep_logs
export TMAGEMM_CUBLASLT_SEARCH=1
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites waves:190
keep_logs
memcheck_tests "CublasLtSearch.ConfigurationsMatchTheReference" 80
keep_logs
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites ${SUITES:-bmm:150}
keep_logs
stage done
