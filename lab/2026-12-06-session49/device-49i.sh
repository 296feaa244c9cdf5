#!/usr/bin/env bash
# device-49i.sh — device-49e cut to the two waves rows the search left level on the H200 (4224^3 1.001 and
# 6144x1536x4096 0.995, device-49d), to fit the session's last minutes of device time; on an H200 only (exit 3
# elsewhere). Carry [".carry/bin"]. ~1 min.
out=$OUT
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in *H200*) ;; *) echo "not an H200: stopping"; exit 3 ;; esac
mkdir -p "$out"
PASS1_SECONDS=8 timeout 140 .carry/bin/cublaslt_algo_search 4224x4224x4224 6144x1536x4096 \
  > "$out/algo-search-waves2-h200.txt" 2>&1
echo "rc=$?"
grep -A14 "write flush" "$out/algo-search-waves2-h200.txt" | head -34
