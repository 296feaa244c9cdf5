#!/usr/bin/env bash
# device-stream-19.sh — nineteenth session, run 3: persistent TMA loads an operand it reads exactly once with an L2
# evict_first policy and without L2 promotion (EpilogueParams::l2_stream, persistent_tma.cpp l2_stream_bits).
# GPU tests of the persistent, bmm and stream-K paths, memcheck on two, the bmm suite tuned (cuBLASLt a choice),
# then cuBLASLt off with the new rule and with evict_first off (promotion none everywhere, as run 2's "none").
# Logs to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-PersistentTma.*:Bmm.*:StreamK.*}" 200
memcheck_tests "${MEMCHECK_FILTER:-Bmm.EveryBackendEveryLayout:PersistentTma.AllLayoutsRaggedSizes}" 150
BENCH_LOG=autotune bench_suites bmm:200
for v in rule nohint; do
  d="$out/own-$v"; mkdir -p "$d"; fresh_db /tmp/kc/kernels
  stage "bmm, cuBLASLt off, $v"
  if [ $v = nohint ]; then export TMAGEMM_TMA_L2_STREAM=0 TMAGEMM_TMA_L2_PROMOTION=none; fi
  TMAGEMM_CUBLASLT=0 timeout 120 build/tmagemm bench --suite bmm --out "$d" > "$d/bmm-write.txt" 2>&1; rows < "$d/bmm-write.txt"
  TMAGEMM_CUBLASLT=0 timeout 120 build/tmagemm bench --suite bmm --flush read --out "$d/r" > "$d/bmm-read.txt" 2>&1; rows < "$d/bmm-read.txt"
done
unset TMAGEMM_TMA_L2_STREAM TMAGEMM_TMA_L2_PROMOTION
stage done
