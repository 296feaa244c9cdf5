#!/usr/bin/env bash
# device-next-28.sh — the twenty-eighth session's device calls. Both of the twenty-seventh session's kernel patches
# (lab/2026-12-03-session27/odd-block-pieces.patch, ping-pong.patch) applied on the build machine; carry
# [".carry/bin", ".carry/kcache.tgz"]. Logs and JSON into $OUT.
#   PART=1: PingPong.* alone first (a hang shows there, 90 s), the GPU tests the two patches touch, a memcheck
#           sample, then the K = 1024 and 4096^3 rows forced per config against cuBLASLt.                   (~520 s)
#   PART=2: forced benches on the remaining shapes, then square and llm tuned afresh.
#   PART=3: waves and bmm tuned afresh (if the tuner now picks `_pp` configs, they count).
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
esac
stage done
