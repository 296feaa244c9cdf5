#!/usr/bin/env bash
# device-run2-20.sh — twentieth session, run 2: stream-K v2 (float4 partial sums, a reduction with 8 float4 loads in
# flight a thread, every worker used when tiles are fewer than SMs). The capture-mode probe; StreamK / Addmm stream-K /
# PersistentTma tests and memcheck; per-CTA traces; the waves shapes with each stream-K config forced; waves tuned
# (buckets, and exact M). Logs to $OUT/all.tgz.
set -u
out=/tmp/o
rm -rf /tmp/o
source scripts/device-lib.sh
use_carry
stage probe
.carry/bin/capture_mode_probe 2>&1 | tee "$out/capture-probe.txt"
gpu_tests "${TEST_FILTER:-StreamK*:Addmm.StreamK*:PersistentTma.*:GraphCaptureThreads*}" 240
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -40
memcheck_tests "StreamK.SplitTilesEveryLayoutAndShape:StreamK.TwoRunsGiveTheSameBits" 150
stage traces
{
  for c in persistent_tma_128x256x64_s4_c2_g8_tmastore_sk persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk; do
    persistent_trace 2304x2304x8192 $c; persistent_trace 1536x1536x1536 $c; persistent_trace 1000x1000x1000 $c
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
