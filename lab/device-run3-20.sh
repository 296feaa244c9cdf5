#!/usr/bin/env bash
# device-run3-20.sh — twentieth session, run 3: stream-K v3 (every unit of a split tile finishes a share of its
# columns after all have arrived, cooperative launch). StreamK / Addmm stream-K tests and memcheck; per-CTA traces;
# the waves shapes with each stream-K config forced; waves tuned (buckets, exact M). Logs to $OUT/all.tgz.
set -u
out=/tmp/o
rm -rf /tmp/o
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-StreamK*:Addmm.StreamK*:PersistentTma.*}" 240
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -40
memcheck_tests "StreamK.SplitTilesEveryLayoutAndShape:StreamK.TwoRunsGiveTheSameBits" 150
stage traces
{
  for c in persistent_tma_128x256x64_s4_c2_g8_tmastore_sk persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk; do
    persistent_trace 2304x2304x8192 $c; persistent_trace 1536x1536x1536 $c; persistent_trace 2560x2560x2560 $c
  done
} 2>&1 | tee "$out/traces.txt"
stage forced
bash lab/bench-forced.sh waves persistent_tma_128x256x64_s4_c2_g8_tmastore_sk \
  persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk persistent_tma_128x128x64_s6_c2_g8_tmastore_sk 2>&1 | tee "$out/forced.txt"
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites waves:200
exact_suites "waves" 200
stage done
tar -C /tmp -czf "$OUT/all.tgz" o
