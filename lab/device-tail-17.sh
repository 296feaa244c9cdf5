#!/usr/bin/env bash
# device-tail-17.sh — an experiment on the skinny kernel's tail (seventeenth session, issue 21 point 3): profiling
# builds whose producer lane reads the epilogue's parameters ahead of the stream (kTrace only), traced on the three
# shapes of device-skinny-17.sh's run 3; if the constant-cache misses of those reads, behind the DRAM stream, were the
# ~0.45-1.5 us between the reduction's start and the last store, the step shrinks here. Logs to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "traces"
skinny_traces "16x14336x4096 skinny_128x128_st4_split1" "1x14336x4096 skinny_256x64_st5_split1" \
  "64x4096x4096 skinny_64x64_st12_split2"
stage done
