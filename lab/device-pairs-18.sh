#!/usr/bin/env bash
# device-pairs-18.sh — grouped_mm's 2x1 clusters taking CTA tiles in pairs (eighteenth session, issue 20) on the H200:
# the GroupedMm, TuneBuckets, Bmm GPU tests and a persistent-TMA layout test, memcheck of two grouped tests, then the
# grouped suite with one 2x1 config forced (128x256 s3 st4, the tuner's pick of the two rows under 0.97) on the build
# before the change (.carry/bin/tmagemm_base) and after it, each on a fresh tuning database. Logs and JSON to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-GroupedMm.*:TuneBuckets.*:PersistentTma.AllLayoutsRaggedSizes:Bmm.*}" 200
memcheck_tests "GroupedMm.EveryConfig:GroupedMm.OffsetsPastTheEndAndEmptyGroups" 120
for v in new base; do
  bin=build/tmagemm
  [ "$v" = base ] && bin=.carry/bin/tmagemm_base
  stage "grouped, 128x256 2x1 s3 st4 forced ($v)"
  fresh_db /tmp/kc/kernels
  mkdir -p "$out/ab-$v"
  TMAGEMM_CHOICE_REGEX='^persistent_tma_128x256x64_s3_c2_g8_cm2_tmastore_st4$' timeout 120 "$bin" bench \
    --suite grouped --out "$out/ab-$v" > "$out/bench-grouped-$v.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-grouped-$v.txt"
done
stage done
