#!/usr/bin/env bash
# device-47b.sh — the cuBLASLt configuration search (src/choices/cublaslt.hpp; built from lab/probes/cublaslt_algo_search
# on the H100, where cuBLASLt's own wave-fitting tiles ran 4-14 % ahead of its heuristic's best of 4 on five of the
# eight waves shapes). 1) Its GPU tests (CublasLtSearch.*) and the bucket tests it must not break (TuneBuckets.*);
# 2) the waves suite tuned on a fresh database (write flush, as the target); 3) memcheck of the search's
# configurations; with SQUARE=1 the square suite tuned. Carry [".carry/bin", ".carry/kcache.tgz"] (this build; the kernels are main's, unchanged). ~5 min.
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "CublasLtSearch.*:TuneBuckets.CublasLtInABucketIsItsHeuristicsFirstPick:TuneBuckets.OneTuningServesEveryMOfTheBucket" 120
keep_logs
fresh_db /tmp/kc/kernels
export TMAGEMM_CUBLASLT_SEARCH=1  # off by default until measured here
BENCH_LOG=autotune bench_suites waves:200
keep_logs
memcheck_tests "CublasLtSearch.ConfigurationsMatchTheReference" 90
keep_logs
if [ -n "${SQUARE:-}" ]; then fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites square:150; keep_logs; fi
stage done
