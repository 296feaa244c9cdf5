#!/usr/bin/env bash
# device-stream-19.sh — nineteenth session, run 3: persistent TMA loads an operand it reads exactly once with an L2
# evict_first policy and without L2 promotion (EpilogueParams::l2_stream, persistent_tma.cpp l2_stream_bits; for
# grouped_mm a group's B where the group has one block of rows, TileCoord::b_once).
# GPU tests of the persistent, bmm, stream-K, grouped and skinny paths, memcheck on three, the bmm suite tuned
# (cuBLASLt a choice), cuBLASLt off with the rule and with it off (TMAGEMM_TMA_L2_STREAM=0, promotion none everywhere:
# run 2's "none"), then the grouped suite tuned. Logs to $OUT. Env: PARTS (default "tests bmm grouped"),
# GROUPED_ENV (e.g. "TMAGEMM_TMA_L2_STREAM=0" for the A/B of the grouped suite).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
PARTS=${PARTS:-tests bmm grouped}
if [[ $PARTS == *tests* ]]; then
  gpu_tests "${TEST_FILTER:-PersistentTma.*:Bmm.*:StreamK.*:GroupedMm.*:Skinny.*}" 200
  memcheck_tests "${MEMCHECK_FILTER:-Bmm.EveryBackendEveryLayout:GroupedMm.EveryConfig:PersistentTma.AllLayoutsRaggedSizes}" 150
fi
if [[ $PARTS == *bmm* ]]; then
  BENCH_LOG=autotune bench_suites bmm:200
  for v in rule nohint; do
    d="$out/own-$v"; mkdir -p "$d"; fresh_db /tmp/kc/kernels
    stage "bmm, cuBLASLt off, $v"
    if [ $v = nohint ]; then export TMAGEMM_TMA_L2_STREAM=0 TMAGEMM_TMA_L2_PROMOTION=none; fi
    TMAGEMM_CUBLASLT=0 timeout 120 build/tmagemm bench --suite bmm --out "$d" > "$d/bmm-write.txt" 2>&1; rows < "$d/bmm-write.txt"
    TMAGEMM_CUBLASLT=0 timeout 120 build/tmagemm bench --suite bmm --flush read --out "$d/r" > "$d/bmm-read.txt" 2>&1; rows < "$d/bmm-read.txt"
  done
  unset TMAGEMM_TMA_L2_STREAM TMAGEMM_TMA_L2_PROMOTION
fi
if [[ $PARTS == *grouped* ]]; then
  fresh_db /tmp/kc/kernels
  stage "bench grouped ${GROUPED_ENV:-}"
  env ${GROUPED_ENV:-} TMAGEMM_LOG=autotune timeout 240 build/tmagemm bench --suite grouped --out "$out" > "$out/bench-grouped.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-grouped.txt"
fi
stage done
