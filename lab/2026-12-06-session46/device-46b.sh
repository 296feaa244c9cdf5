#!/usr/bin/env bash
# device-46b.sh — the skinny kernel's reduction with the remote loads of several units issued before any sum
# (skinny-batched-reduce.patch), built as .carry/lab (lab/2026-12-06-session46/prepare-46.sh) beside main's .carry/bin.
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/lab"]. ~4 min.
#   1. The lab build's skinny GPU tests (its carried cache holds the skinny kernels), memcheck.
#   2. The decode rows the skinny grids take, forced per choice, main then lab, under each flush.
#   3. Timelines (TMAGEMM_TRACE) of two split choices, main then lab, read flush.
#   4. lab/probes/dsmem_reduce.cu (what the reduction waits on), if time is left.
out=$OUT
source scripts/device-lib.sh
use_carry
use_lab_build batched
gpu_tests "Skinny.*:Carveout.Skinny:Bmm.SkinnyTakesBatches" 200
memcheck_tests "Skinny.InputAndOutputTypesAndStrides:Skinny.BatchedThroughBmm:Skinny.SplitsWithAnEmptyRank" 150
keep_logs
shapes=64x4096x4096,64x4096x14336,64x14336x4096,16x4096x4096,16x4096x14336,1x4096x4096,1x4096x14336
forced_main_and_lab batched sk "$shapes" skinny_256x64_st5_split4 skinny_64x64_st12_split2 skinny_128x64_st4_split2
for v in main batched; do
  cp "/tmp/tmagemm-$v" build/tmagemm
  export TMAGEMM_CACHE_DIR=/tmp/forced-$v
  skinny_traces "64x4096x14336 skinny_256x64_st5_split4" "64x4096x4096 skinny_64x64_st12_split2"
  mv "$out/traces.txt" "$out/traces-$v.txt"
done
keep_logs
stage "dsmem_reduce probe"
timeout 120 .carry/bin/dsmem_reduce > "$out/dsmem-reduce.txt" 2>&1
echo "rc=$?"; cat "$out/dsmem-reduce.txt"
keep_logs
stage done
