#!/usr/bin/env bash
# device-49f.sh — where cuBLASLt won a bucket, each other M now times our fastest choice at the bucket's largest M too
# (tune::fastest_of_ours; H200 device-49d: 3000x5000x1000 rc kept cublaslt_algo0 for its bucket, 1.002, where ours ran
# the rr twin at 1.015). GPU tests TuneBuckets.* (OurFastestIsTimedAtEachMOfABucketCublasLtWon new), Tuner.*,
# CublasLtSearch.*; memcheck of the new test; then waves and llm tuned on fresh databases (write flush) on whatever card
# comes. Prediction: llm's 3000x5000x1000 rc from ~1.00 to ~1.015 (the rr row's level); other rows within run-to-run
# spread; waves unchanged. Carry [".carry/bin", ".carry/kcache.tgz"]. ~3 min.
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "TuneBuckets.*:Tuner.*:CublasLtSearch.*" 200
memcheck_tests "TuneBuckets.OurFastestIsTimedAtEachMOfABucketCublasLtWon" 120
keep_logs
for s in llm:150 waves:110; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
stage done
