#!/usr/bin/env bash
# device-49d.sh — the per-M record's staleness fix (tune::ranks_record_current) under its GPU tests on any card:
# TuneBuckets.* (ARanksRecordOfAnEarlierBucketWinnerIsTimedAgain new), Tuner.*, CublasLtSearch.*, RemoteCacheGpu*;
# memcheck of the new test. Then, only on an H200, the search's suites as device-49b (waves, llm, square, bmm, grouped
# on fresh databases; decode both flushes). Carry [".carry/bin", ".carry/kcache.tgz"]. ~1.5 min, ~7 on an H200.
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "TuneBuckets.*:Tuner.*:CublasLtSearch.*:RemoteCacheGpu*" 200
memcheck_tests "TuneBuckets.ARanksRecordOfAnEarlierBucketWinnerIsTimedAgain" 120
keep_logs
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$name" in *H200*) ;; *) echo "not an H200 ($name): no suites"; stage done; exit 0 ;; esac
for s in waves:110 llm:140 square:80 bmm:90 grouped:150; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
stage done
