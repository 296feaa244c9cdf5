#!/usr/bin/env bash
# device-35.sh — this session's device calls (the thirty-fifth session, issue 21's misaligned rows). Build here,
# `tmagemm compile-check` into .kcache, tar it (.carry/kcache.tgz), copy build/tmagemm and build/tests/tmagemm_gpu_tests
# into .carry/bin. Carry [".carry/bin", ".carry/kcache.tgz"].
#   (Runs 1-3 were the gathered TMA loads, lab/2026-12-04-session35/gathered-tma-loads.patch: every gathered kernel
#   faulted with an illegal instruction at its first TMA load whose box starts off 16 bytes; perf-notes.)
#   PART=1: cuBLASLt on the pad path's copies (pad_cublaslt_algo<rank>): PadTma GPU tests, memcheck of the B ld N + 1
#           test, the misaligned suite forced to cuBLASLt's first pick (twin on the same algorithm rank), then tuned.
#   PART=2: after cuBLASLt on the copies stands aside where out's rows are off 16 bytes: PadTma GPU tests (a captured
#           graph of pad_cublaslt_algo0 among them) and the graph-capture tests of every backend, the
#           misaligned suite tuned twice (a fresh database each), the JSON tarred.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
case "${PART:-1}" in
1)
  gpu_tests "PadTma.*" 300
  memcheck_tests "PadTma.BLdNPlusOneOutLdNPlusThree" 200
  stage "forced"
  lab/bench-forced.sh misaligned "(pad_)?cublaslt_algo0" "(pad_)?persistent_tma_128x256x64_s4_c2_g8_cm2_cn2_tmastore" \
    2>&1 | tee "$out/forced.txt"
  BENCH_LOG=autotune bench_suites misaligned:260
  (cd "$out" && tar czf results.tgz ./*.json && rm -f ./*.json)
  ;;
2)
  gpu_tests "PadTma.*:EveryBackend/GraphCapture.*" 300
  BENCH_LOG=autotune bench_suites misaligned:260
  fresh_db /tmp/kc/kernels; mkdir -p "$out/run2" && out=$out/run2 BENCH_LOG=autotune bench_suites misaligned:260
  (cd "$out" && tar czf results.tgz ./*.json ./run2/*.json && rm -f ./*.json ./run2/*.json)
  ;;
esac
stage done
