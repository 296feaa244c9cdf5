#!/usr/bin/env bash
# device-44.sh — the forty-fourth session's first device call. Carry [".carry/bin", ".carry/kcache.tgz", ".carry/lab"]
# (lab/prepare-39.sh PART=1 for the kernel cache, lab/2026-12-05-session44/prepare-44.sh PART=1 and PART=2). The
# session's later helpers (use_lab_build, forced_main_and_lab, keep_logs: scripts/device-lib.sh) replaced its inline
# steps (as run: main's waves and decode runs, then the patch's; the helper runs each suite's builds in turn).
#   1. main (the tuner's flush-hold rule: a memory-bound pick more than 2 % behind cuBLASLt's fastest after either
#      flush ranks after it): the decode suite tuned on a fresh database, write flush, then read flush on the same one.
#   2. the cheaper stream-K fixup (lab/2026-12-05-session43/stream-k-fixup-v2.patch; .carry/lab): StreamK.*, the addmm
#      stream-K test, GroupedMm.* (grouped stream-K is on by default), memcheck of two StreamK tests.
#   3. forced stream-K configs, main's binary and the patched one in turn: the waves suite (write flush) and the decode
#      suite (read flush).
out=$OUT
source scripts/device-lib.sh
use_carry
decode_tuned_both_flushes /tmp/kc/kernels
use_lab_build v2
gpu_tests "StreamK.*:Addmm.StreamKSplitTilesGetTheEpilogue:GroupedMm.*" 300
memcheck_tests "StreamK.F16AndF32Outputs:StreamK.BatchedProblemSharesItsLastWave" 120
p=persistent_tma_
FLUSHES=write forced_main_and_lab v2 waves waves ${p}128x256x64_s4_c2_g8_tmastore_sk \
  ${p}128x256x64_s4_c2_g8_cm2_tmastore_sk ${p}128x128x64_s6_c2_g8_tmastore_sk
FLUSHES=read forced_main_and_lab v2 decode decode ${p}64x256x64_s5_c1_g8_tmastore_sk ${p}64x128x64_s8_c1_g8_tmastore_sk
stage done
keep_logs
