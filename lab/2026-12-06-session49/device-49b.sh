#!/usr/bin/env bash
# device-49b.sh — the H200 figures of the configuration search (on by default since 0.1.3), only where the call got an
# H200: on any other card it prints the card and stops at once (exit 3), so that a call that gets an H100 costs only
# its start. On the H200: the search's, buckets' and addmm configuration GPU tests, then waves, llm, square, bmm and
# grouped tuned on fresh databases (write flush, the targets' method), and decode tuned and read back under the read
# flush. Carry [".carry/bin", ".carry/kcache.tgz"]. ~6 min. Predictions (H100, forty-eighth / forty-ninth sessions:
# waves 1.055 / 1.043, llm 1.020 / 1.018): on the H200 waves ~1.04-1.05 (1.006 without the search, forty-sixth), llm
# ~1.015, square ~1.00, bmm ~1.01, grouped ~1.09 (unchanged: the search takes no grouped problem), decode unchanged.
out=$OUT
source scripts/device-lib.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in *H200*) ;; *) echo "not an H200: stopping"; exit 3 ;; esac
use_carry
gpu_tests "CublasLtSearch.*:TuneBuckets.*:Addmm.EveryCublasLtSearchConfigurationWithItsEpilogue" 120
keep_logs
for s in waves:120 llm:150 square:90 bmm:100 grouped:150; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
stage done
