#!/usr/bin/env bash
# device-45b.sh — the skinny kernel's reduced tile stored with one TMA store a CTA (p.tma_out), built as .carry/lab
# (lab/2026-12-05-session45/prepare-45.sh) beside main's .carry/bin; .carry/kcache.tgz held main's skinny kernels only
# (the working tree's 64 MiB limit). Carry [".carry/bin", ".carry/kcache.tgz", ".carry/lab"]. Ran on an H100 (2.4 min;
# logs-45b-h100).
#   1. The lab build's skinny GPU tests (its carried cache holds the skinny kernels), memcheck.
#   2. The decode rows the skinny grids take, forced per choice, main then lab, under each flush.
#   3. Timelines (TMAGEMM_TRACE) of two split choices, main then lab, read flush.
out=$OUT
source scripts/device-lib.sh
use_carry
use_lab_build tstore
gpu_tests "Skinny.*:Carveout.Skinny:Bmm.SkinnyTakesBatches" 200
memcheck_tests "Skinny.InputAndOutputTypesAndStrides:Skinny.BatchedThroughBmm:Skinny.SplitsWithAnEmptyRank" 150
keep_logs
shapes=64x4096x4096,64x4096x14336,64x14336x4096,16x4096x4096,16x4096x14336,1x4096x4096,1x4096x14336
forced_main_and_lab tstore sk "$shapes" skinny_256x64_st5_split4 skinny_64x64_st12_split2 skinny_128x64_st4_split2
for v in main tstore; do
  cp "/tmp/tmagemm-$v" build/tmagemm
  export TMAGEMM_CACHE_DIR=/tmp/forced-$v
  skinny_traces "64x4096x14336 skinny_256x64_st5_split4" "64x4096x4096 skinny_64x64_st12_split2"
  mv "$out/traces.txt" "$out/traces-$v.txt"
done
keep_logs
stage done
