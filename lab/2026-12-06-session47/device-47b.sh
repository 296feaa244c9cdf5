#!/usr/bin/env bash
# device-47b.sh — for the next session's first call (the device gave no time for it in the forty-seventh): the
# cuBLASLt configuration search (src/choices/cublaslt.hpp; built from lab/probes/cublaslt_algo_search
# on the H100, where cuBLASLt's own wave-fitting tiles ran 4-14 % ahead of its heuristic's best of 4 on five of the
# eight waves shapes). 1) Its GPU tests (CublasLtSearch.*) and the bucket tests it must not break (TuneBuckets.*);
# 2) the waves suite tuned on a fresh database (write flush, as the target); 3) memcheck of the search's
# configurations; with SQUARE=1 the square suite tuned; with DUMP=1 the probe's medians of every configuration. Carry [".carry/bin", ".carry/kcache.tgz"] (this build; the kernels are main's, unchanged). ~5 min.
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
# With DUMP=1: every configuration's pass-1 median on the waves shapes (lab/probes/cublaslt_algo_search.cu, built into
# .carry/bin), the data to fit the search's candidate rule to on the H200.
if [ -n "${DUMP:-}" ]; then
  stage "cuBLASLt configurations, every median"
  DUMP=1 PASS1_SECONDS=20 timeout 260 .carry/bin/cublaslt_algo_search 2304x2304x8192 2560x2560x2560 6144x1536x4096 \
    4224x4224x4224 3000x5000x1000 1536x1536x1536 1024x12288x4096 1000x1000x1000 > /tmp/logs/dump-waves.txt 2>&1
  echo "rc=$?"; keep_logs
fi
stage done
