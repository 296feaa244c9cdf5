#!/usr/bin/env bash
# device-49a.sh — for the next session's first call (this session's eight calls all got an H100): the cuBLASLt
# configuration search, on by default since 0.1.3, on whatever card comes (the H200 is the target's card).
# 1) the search's and the buckets' GPU tests and the addmm configurations test; 2) waves, llm, square and bmm tuned
# on fresh databases (write flush, as the targets); 3) decode tuned and then read back under the read flush (the
# search takes no M <= 64: expected unchanged). Carry [".carry/bin", ".carry/kcache.tgz"] (build, compile-check
# into a kernel cache packed as kcache.tgz; the kernels are unchanged since the forty-sixth session). ~8 min.
# Predictions (from the H100, forty-eighth session): waves ~1.05 (1.004 without the search on the H100), llm ~1.02,
# square ~1.00, bmm ~1.01, decode unchanged (H200, forty-sixth: 1.053 write / 1.005 read).
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "CublasLtSearch.*:TuneBuckets.*:Addmm.EveryCublasLtSearchConfigurationWithItsEpilogue" 120
keep_logs
for s in waves:120 llm:150 square:90 bmm:100; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
stage done
