#!/usr/bin/env bash
# device-run4-29.sh — the tuner's sustained final (src/tune/benchmark.cpp step 7): the tuner tests (the new
# Tuner.SustainedFinalOrdersTheNearTiedFinalists among them), pytest's options test, then square and llm tuned afresh
# with it and benched both ways: the method's interleaved, flushed runs, and --sustained (the same tuning DB).
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/py312"].
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "Tuner.*:TuneBuckets.*" 120
stage pytest options
PYTHONPATH=$PWD/.carry/py312 timeout 60 python3 -m pytest -q -p no:cacheprovider tests/python/test_options.py 2>&1 | tail -2
for s in square llm; do
  stage "bench $s"
  TMAGEMM_LOG=autotune timeout 240 build/tmagemm bench --suite $s --out "$out" > "$out/bench-$s.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-$s.txt"; grep -c "sustained" "$out/bench-$s.txt"
done
for s in square llm; do
  stage "bench $s --sustained"
  timeout 150 build/tmagemm bench --suite $s --sustained --out "$out" > "$out/bench-$s-sustained.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-$s-sustained.txt"
done
stage done
