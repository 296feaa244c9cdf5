#!/usr/bin/env bash
# device-final-19.sh — nineteenth session, run 4 (the landing build): GPU tests and memcheck of the persistent, bmm,
# stream-K, skinny and grouped paths; an A/B of the streamed operand's evict_first policy on the bmm suite with
# cuBLASLt off (TMAGEMM_TMA_L2_STREAM unset: no promotion + evict_first; nohint: no promotion only), two rounds,
# both flushes; then the bmm suite and decode under both flushes, tuned afresh. Logs and JSON to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-PersistentTma.*:Bmm.*:StreamK.*:GroupedMm.*:Skinny.*:Tune*:Dispatch*}" 220
memcheck_tests "${MEMCHECK_FILTER:-Bmm.EveryBackendEveryLayout:PersistentTma.AllLayoutsRaggedSizes:Skinny.*Batch*}" 90
for round in 1 2; do
  for v in hint nohint; do
    d="$out/ab-$v-$round"; mkdir -p "$d"; fresh_db /tmp/kc/kernels
    stage "bmm, cuBLASLt off, $v, round $round"
    if [ $v = nohint ]; then export TMAGEMM_TMA_L2_STREAM=nohint; else unset TMAGEMM_TMA_L2_STREAM; fi
    TMAGEMM_CUBLASLT=0 timeout 100 build/tmagemm bench --suite bmm --out "$d" > "$d/bmm-write.txt" 2>&1; rows < "$d/bmm-write.txt"
    TMAGEMM_CUBLASLT=0 timeout 100 build/tmagemm bench --suite bmm --flush read --out "$d/r" > "$d/bmm-read.txt" 2>&1; rows < "$d/bmm-read.txt"
  done
done
unset TMAGEMM_TMA_L2_STREAM
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites bmm:150
stage "bench decode (write flush, tuned afresh)"
timeout 150 build/tmagemm bench --suite decode --out "$out" > "$out/bench-decode.txt" 2>&1; echo "rc=$?"; rows < "$out/bench-decode.txt"
stage "bench decode (read flush, same DB)"
mkdir -p /tmp/readjson
timeout 120 build/tmagemm bench --suite decode --flush read --out /tmp/readjson > "$out/bench-decode-read.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-decode-read.txt"
for f in /tmp/readjson/*.json; do cp "$f" "$out/$(basename "$f" .json)-flush_read.json"; done
stage done
