#!/usr/bin/env bash
# device-49g.sh — the review's fix (a required choice that fails at an M is kept in its per-M record untimed, so the
# record answers; tune/tuner.cpp library_rank_at_m): TuneBuckets.* (ARequiredChoiceThatFailsAtAnMIsRecordedThereUntimed
# new) and Tuner.*; memcheck of the new test. Then, on an H200 only, device-49e's probe of the waves rows.
# Carry [".carry/bin", ".carry/kcache.tgz"]. ~1.5 min; ~4.5 on an H200.
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "TuneBuckets.*:Tuner.*" 200
memcheck_tests "TuneBuckets.ARequiredChoiceThatFailsAtAnMIsRecordedThereUntimed" 120
keep_logs
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$name" in *H200*) ;; *) echo "not an H200 ($name): no probe"; stage done; exit 0 ;; esac
stage "probe: cuBLASLt configurations on the waves rows (H200)"
PASS1_SECONDS=9 timeout 200 .carry/bin/cublaslt_algo_search 4224x4224x4224 6144x1536x4096 3000x5000x1000 \
  1024x12288x4096 1536x1536x1536 > "$out/algo-search-waves-h200.txt" 2>&1
echo "rc=$?"
grep -A12 "write flush" "$out/algo-search-waves-h200.txt" | head -70
stage done
