#!/usr/bin/env bash
# device-50a.sh — on an H200 only (any other card: exit 3 at once). (1) cuBLASLt's configurations beyond its
# heuristic's top 4 on six waves shapes (device-49e's probe, never yet run on an H200): does the H200 have wave-fitting
# configurations the search's candidate rule (fitted to the H100 probe) leaves out? Prediction: 4224^3's 128x352 trails
# cublaslt_algo3 (device-49d: 3.5 %), 6144x1536x4096 within 1 %, 3000x5000x1000's 2x2 winner ahead by < 5 %.
# (2) llm and waves tuned on fresh databases with the forty-ninth session's per-M rule (its H200 figure unmeasured;
# prediction llm 1.015-1.020, waves 1.03). Carry [".carry/bin", ".carry/kcache.tgz"]. ~8 min.
out=$OUT
source scripts/device-lib.sh
h200_only
use_carry
stage probe
PASS1_SECONDS=11 timeout 280 .carry/bin/cublaslt_algo_search 4224x4224x4224 6144x1536x4096 3000x5000x1000 \
  1024x12288x4096 1536x1536x1536 1000x1000x1000 > "$out/algo-search-waves-h200.txt" 2>&1
echo "rc=$?"
grep -A12 "write flush" "$out/algo-search-waves-h200.txt" | head -90
for s in llm:140 waves:110; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
stage done
