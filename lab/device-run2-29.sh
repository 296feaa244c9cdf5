#!/usr/bin/env bash
# device-run2-29.sh — energy per FLOP at the power cap by config (lab/probes/power_probe.py, 3 s back to back each):
# does the L2 traffic of a config (1x1, 2x1 / 1x2 multicast, 2x2) or its wgmma shape (128x256 = m64n256 per consumer,
# 256x128, 128x128 ping-pong = m64n128) set its clock? torch.mm first and last. Carry as run 1.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage power
P="env PYTHONPATH=$PWD/.carry/py312 python3 lab/probes/power_probe.py"
for shape in "8192 8192 8192"; do
  $P torch $shape 2>&1 | tail -1
  for c in 128x256x64_s4_c2_g8_tmastore 128x256x64_s4_c2_g8_cm2_tmastore 128x256x64_s4_c2_g8_cm2_cn2_tmastore \
           256x128x64_s4_c2_g8_tmastore 256x128x64_s4_c2_g8_cn2_tmastore 256x128x64_s4_c2_g8_cm2_tmastore \
           128x256x64_s4_c2_g8 128x256x64_s3_c2_g8_cm2_tmastore_st4 128x192x64_s4_c2_g8_tmastore; do
    echo -n "$c: "; TMAGEMM_CHOICE_REGEX="^persistent_tma_$c\$" $P tmagemm $shape 2>&1 | tail -1
  done
  $P torch $shape 2>&1 | tail -1
done | tee "$out/power.txt"
stage done
