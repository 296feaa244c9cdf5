#!/usr/bin/env bash
# device-run1-20.sh — twentieth session, run 1: (1) the capture-mode branch's GPU tests (GraphCaptureThreads and the
# tuner's suites); (2) per-CTA traces of stream-K against whole-tile configs on partial-wave shapes; (3) the waves
# shapes with each stream-K config forced. Logs to $OUT/all.tgz.
set -u
out=/tmp/o
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-GraphCapture*:Tuner*:Faults*:Bmm.TunedCallIsRight}" 170
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -40
stage traces
{
  for c in persistent_tma_128x256x64_s4_c2_g8_tmastore_sk persistent_tma_128x256x64_s4_c2_g8_tmastore \
           persistent_tma_128x192x64_s4_c2_g8_tmastore; do persistent_trace 2304x2304x8192 $c; done
  for c in persistent_tma_128x256x64_s4_c2_g8_tmastore_sk persistent_tma_128x192x64_s4_c2_g8_tmastore \
           persistent_tma_128x128x64_s6_c2_g8_tmastore_sk; do persistent_trace 1536x1536x1536 $c; done
} 2>&1 | tee "$out/traces.txt"
stage forced
bash lab/bench-forced.sh waves persistent_tma_128x256x64_s4_c2_g8_tmastore_sk \
  persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk persistent_tma_128x128x64_s6_c2_g8_tmastore_sk 2>&1 | tee "$out/forced.txt"
stage done
tar -C /tmp -czf "$OUT/all.tgz" o
