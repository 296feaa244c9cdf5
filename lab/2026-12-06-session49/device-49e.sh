#!/usr/bin/env bash
# device-49e.sh — on an H200 only (any other card: exit 3 at once): cuBLASLt's configurations beyond its heuristic's
# top 4 on the waves shapes the search did not lift there (device-49d: 4224^3 1.001 on cublaslt_algo3, 6144x1536x4096
# 0.995, 3000x5000x1000 1.018 ours, 1024x12288x4096 1.012, 1536^3 1.013, 1000^3 1.003), write flush as the bench
# (lab/probes/cublaslt_algo_search.cu, rebuilt after the forty-eighth session's refactor). Question: does the H200 have
# wave-fitting configurations the search's candidate rule (fitted to the H100's probe) leaves out? Prediction: the H100
# probe's winners (4224^3 128x352 1.076, 6144x1536x4096 128x280 1.037, 3000x5000x1000 128x168 2x2 1.091) win here too by
# less, since device-49d timed 128x352 3.5 % behind cublaslt_algo3 at 4224. Carry [".carry/bin"]. ~3 min.
out=$OUT
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in *H200*) ;; *) echo "not an H200: stopping"; exit 3 ;; esac
mkdir -p "$out"
PASS1_SECONDS=11 timeout 280 .carry/bin/cublaslt_algo_search 4224x4224x4224 6144x1536x4096 3000x5000x1000 \
  1024x12288x4096 1536x1536x1536 1000x1000x1000 > "$out/algo-search-waves-h200.txt" 2>&1
echo "rc=$?"
grep -A12 "write flush" "$out/algo-search-waves-h200.txt" | head -90
