#!/usr/bin/env bash
# device-48c.sh — the search on by default: every GPU test that tunes or enumerates cuBLASLt, the addmm test of
# every search configuration with cuBLASLt's epilogues, memcheck of the search's configurations (mm and addmm), and
# the bmm suite tuned. Carry [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "CublasLtSearch.*:TuneBuckets.*:Tuner.*:Addmm.EveryCublasLtSearch*:Addmm.TunedCall*:Addmm.AlphaBeta*:Bmm.*:Dispatch.*:CallContract.*:GraphCaptureThreads.*:EveryBackend/*:Sustained.*:AccuracyFloor.*:Faults.*:TuneMemory.*" ${TEST_SECS:-280}
keep_logs
memcheck_tests "CublasLtSearch.ConfigurationsMatchTheReference:Addmm.EveryCublasLtSearchConfigurationWithItsEpilogue" 120
keep_logs
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites ${SUITES:-bmm:100}
keep_logs
stage done
