#!/usr/bin/env bash
# device-next-27.sh — for the first device calls of the session after the twenty-seventh. Two kernel changes wait
# in lab/2026-12-03-session27/ as patches, neither run through the GPU tests: odd-block-pieces.patch (a finished
# tile's deferred TMA-store pieces after odd K blocks only; forced 8192x8192x1024 1.029 -> 1.049) and ping-pong.patch
# (configs `_pp`: the two consumers take the CTA's tiles in turn, their K loops ordered by named barriers; never run).
# Before the first call: `git apply` both, build, `tmagemm compile-check` into .kcache and tar it (.carry/kcache.tgz),
# copy build/tmagemm and build/tests/tmagemm_gpu_tests into .carry/bin.
#   PART=1: the GPU tests the two touch (PingPong.* first: a hang shows there), memcheck of a sample.   (~450 s)
#   PART=2: forced ping-pong configs against 128x256 and cuBLASLt (lab/bench-forced.sh), the K = 1024 rows first.
#   PART=3: square, llm, waves and bmm tuned afresh (if the tuner now picks `_pp` configs, they count).
# Carry [".carry/bin", ".carry/kcache.tgz"]. Logs and JSON into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
case "${PART:-1}" in
1)
  gpu_tests "PingPong.*:PersistentTma.*:StreamK.*:GroupedMm.*:Addmm.*:ScaledMm.*" 330
  grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | awk '{print $4, $5, $6}' | tr '\n' ' '; echo
  memcheck_tests "PingPong.F16AndBatches:PersistentTma.EveryConfigLoopsOverTiles:StreamK.TwoRunsGiveTheSameBits" 100
  ;;
2)
  p=persistent_tma_
  bash lab/bench-forced.sh 8192x8192x1024,4096x4096x4096,3000x5000x1000,4096x14336x4096,8192x8192x8192 \
    ${p}128x256x64_s4_c2_g8_tmastore ${p}128x256x64_s4_c2_g8_cm2_tmastore ${p}128x128x64_s6_c2_g8_tmastore_pp \
    ${p}128x128x64_s6_c2_g8_cm2_tmastore_pp ${p}64x256x64_s4_c2_g8_cm2_tmastore_pp 2>&1 | tee "$out/forced.txt"
  ;;
3)
  for s in square llm waves bmm; do
    stage "bench $s"
    timeout 140 build/tmagemm bench --suite $s --out "$out" 2>&1 | rows
  done
  ;;
esac
stage done
