#!/usr/bin/env bash
# device-next-28.sh — the twenty-eighth session's device calls. Both of the twenty-seventh session's kernel patches
# (lab/2026-12-03-session27/odd-block-pieces.patch, ping-pong.patch) applied on the build machine; carry
# [".carry/bin", ".carry/kcache.tgz"]. Logs and JSON into $OUT.
#   PART=1: PingPong.* alone first (a hang shows there, 90 s), the GPU tests the two patches touch, a memcheck
#           sample, then the K = 1024 and 4096^3 rows forced per config against cuBLASLt.                   (~520 s)
#   PART=2: forced benches on the remaining shapes, then square and llm tuned afresh.
#   PART=3: waves and bmm tuned afresh (if the tuner now picks `_pp` configs, they count).
#   PART=4: library ranks per M (tuner): the tuner's GPU tests, then waves, llm and square tuned afresh with the SM
#           clock and power sampled every 200 ms (smi.csv: is the card at its power limit during the long GEMMs?).
#   PART=5: after run 4's fix (explain's choice is one of its own enumeration's): the tuner's tests, pytest of the
#           options and cache (carry .carry/py312 too), then waves, llm, square and addmm tuned afresh.
#   PART=6: after the kernel split (SASS unchanged, lab/sass-compare.py) and the capture rule for ranks: the tuner's
#           tests and a sample of the persistent kernel's, then pytest's ops, options and cache files.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
p=persistent_tma_
configs="${p}128x256x64_s4_c2_g8_tmastore ${p}128x256x64_s4_c2_g8_cm2_tmastore ${p}128x128x64_s6_c2_g8_tmastore_pp
  ${p}128x128x64_s6_c2_g8_cm2_tmastore_pp ${p}64x256x64_s4_c2_g8_cm2_tmastore_pp"
case "${PART:-1}" in
1)
  stage "ping-pong tests"
  timeout 90 build/tests/tmagemm_gpu_tests --gtest_filter="PingPong.*" > "$out/pingpong-tests.txt" 2>&1
  echo "rc=$?"; summary "$out/pingpong-tests.txt"; grep -E "Failure" -A6 "$out/pingpong-tests.txt" | head -30
  gpu_tests "PersistentTma.*:StreamK.*:GroupedMm.*:Addmm.*:ScaledMm.*:-StreamK.Threads*" 260
  grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | awk '{print $4, $5, $6}' | tr '\n' ' '; echo
  memcheck_tests "PingPong.F16AndBatches:PersistentTma.EveryConfigLoopsOverTiles:StreamK.TwoRunsGiveTheSameBits" 90
  stage "forced"
  bash lab/bench-forced.sh 8192x8192x1024,4096x4096x4096 $configs 2>&1 | tee "$out/forced.txt"
  ;;
2)
  stage "forced"
  bash lab/bench-forced.sh 3000x5000x1000,4096x14336x4096,8192x8192x8192 $configs 2>&1 | tee "$out/forced2.txt"
  bench_suites square:150 llm:150
  ;;
3)
  bench_suites waves:200 bmm:200
  ;;
4)
  gpu_tests "TuneBuckets.*:Faults.*:Tuner.*:AccuracyFloor.*" 240
  grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | awk '{print $4, $5, $6}' | tr '\n' ' '; echo
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader -lms 200 > "$out/smi.csv" 2>&1 &
  smi=$!
  BENCH_LOG=autotune bench_suites waves:200 llm:200 square:150
  kill $smi
  # samples per (power band of 50 W, SM clock band of 50 MHz, throttle reasons): the busy bands show the limit
  awk -F', ' '{p=int($4/50)*50; c=int($2/50)*50; print p "W", c "MHz", $7}' "$out/smi.csv" | sort | uniq -c \
    | sort -k2,2n | awk '$1 >= 3' | tail -25
  ;;
5)
  gpu_tests "Tuner.*:TuneBuckets.*:Faults.*" 120
  grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | awk '{print $4, $5, $6}' | tr '\n' ' '; echo
  stage pytest
  PYTHONPATH=$PWD/.carry/py312 timeout 120 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_options.py \
    tests/python/test_cache.py tests/python/test_ops.py > "$out/pytest.txt" 2>&1
  echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR|SKIPPED" "$out/pytest.txt" | tail -8
  bench_suites waves:150 llm:200 square:120 addmm:200
  ;;
6)
  gpu_tests "TuneBuckets.*:Tuner.*:PersistentTma.EveryConfigLoopsOverTiles:StreamK.TwoRunsGiveTheSameBits:GroupedMm.EveryConfig:PingPong.F16AndBatches" 120
  grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | awk '{print $4, $5, $6}' | tr '\n' ' '; echo
  stage pytest
  PYTHONPATH=$PWD/.carry/py312 timeout 170 python3 -m pytest -q -rs -p no:cacheprovider --durations=5 \
    tests/python/test_options.py tests/python/test_cache.py tests/python/test_ops.py > "$out/pytest.txt" 2>&1
  echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR|SKIPPED|^[0-9.]+s " "$out/pytest.txt" | tail -12
  ;;
esac
stage done
