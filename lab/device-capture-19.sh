#!/usr/bin/env bash
# device-capture-19.sh — nineteenth session, run 6: the tuner's CUDA calls in thread-local capture mode
# (runtime::ThreadLocalCaptureMode): GraphCaptureThreads (a tuning on one thread while another captures in global
# mode), the GraphCapture suite, Tuner/Faults/Bmm sanity. Logs to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-GraphCapture*:Tuner*:Faults*:Bmm.TunedCallIsRight}" 150
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -30
stage done
