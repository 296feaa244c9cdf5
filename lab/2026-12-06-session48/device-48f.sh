#!/usr/bin/env bash
# device-48f.sh — after the review: configurations of one M only (Choice::m_only) kept out of the bucket's tuning,
# cuBLASLt's first pick timed again with the ranks, the switch in the tuning key, version 0.1.3. The tests of the
# search and of the buckets, memcheck of the addmm test, waves tuned with the default. Carry
# [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "CublasLtSearch.*:TuneBuckets.*:Addmm.EveryCublasLtSearchConfigurationWithItsEpilogue:Tuner.*:Dispatch.*" 200
keep_logs
memcheck_tests "Addmm.EveryCublasLtSearchConfigurationWithItsEpilogue:TuneBuckets.SearchConfigurationsOfOneMAreTimedThereNeverForTheBucket" 120
keep_logs
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites waves:100
keep_logs
stage done
