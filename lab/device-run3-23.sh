#!/usr/bin/env bash
# device-run3-23.sh — twenty-third session, run 3 (main's kernels): the grouped suite forced on the 64-row configs, to
# see which tile the MoE decode rows want under the bench's routing (38 of 64 experts routed at 64 tokens; the tuner's
# representative routing routes 59). Logs straight into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "forced on grouped"
lab/bench-forced.sh grouped persistent_tma_64x256x64_s5_c1_g8_tmastore persistent_tma_64x128x64_s8_c1_g8_tmastore \
  persistent_tma_64x128x64_s8_c1_g8_cm2_tmastore persistent_tma_64x128x128_s4_c1_g8_cm2_tmastore 2>&1 \
  | tee "$out/forced-grouped.txt"
stage done
