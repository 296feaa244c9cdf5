#!/usr/bin/env bash
# device-run5-29.sh — the sustained final with six finalists in 0.2 s blocks (run 4's three missed the 128x256 tiles):
# the tuner tests, then llm tuned afresh and benched both ways (interleaved, then --sustained on the same DB).
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/py312"].
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "Tuner.*" 60
stage "bench llm"
TMAGEMM_LOG=autotune timeout 200 build/tmagemm bench --suite llm --out "$out" > "$out/bench-llm.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-llm.txt"
stage "bench llm --sustained"
timeout 120 build/tmagemm bench --suite llm --sustained --out "$out" > "$out/bench-llm-sustained.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-llm-sustained.txt"
stage done
