#!/usr/bin/env bash
# device-run2-23.sh — twenty-third session, run 2 (main's kernels): the ceilings of the bmm suite's memory-bound rows
# (lab/probes/hbm_ceiling.py: torch writes, copies, reads and bmm under both flushes), then the bmm suite forced on
# 128x256 with direct stores and with TMA stores, under the write and the read flush. Logs straight into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "ceilings"
python3 lab/probes/hbm_ceiling.py 2>&1 | tee "$out/ceilings.txt"
for fl in write read; do
  stage "forced on bmm, $fl flush"
  BENCH_ARGS="--flush $fl" lab/bench-forced.sh bmm persistent_tma_128x256x64_s4_c2_g8 \
    persistent_tma_128x256x64_s4_c2_g8_tmastore 2>&1 | tee -a "$out/forced-bmm-$fl.txt"
done
stage done
