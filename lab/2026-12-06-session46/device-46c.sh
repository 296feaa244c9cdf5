#!/usr/bin/env bash
# device-46c.sh — one call for a scarce device: the skinny kernel's batched reduction (skinny-batched-reduce.patch)
# against main, then the patched build tuned on fresh databases (main's stream-K cut and flush-hold rule included:
# never yet tuned on an H200). Carry [".carry/bin", ".carry/kcache.tgz", ".carry/lab"]: .carry/kcache.tgz holds
# main's skinny kernels only, .carry/lab the patched build with its full kernel cache (prepare-46.sh, then
# `compile-check` of every kernel; the 64 MiB limit). ~7 min.
#   1. The patched build's skinny GPU tests.
#   2. The decode rows the skinny grids take, forced per choice, main then patched, under each flush.
#   3. The patched build tuned: decode (both flushes); memcheck of its skinny tests; grouped and waves tuned.
#   4. lab/probes/dsmem_reduce.cu: what the reduction waits on.
# (Ordered by what decides most, for a call cut short.)
out=$OUT
source scripts/device-lib.sh
use_carry
use_lab_build batched
gpu_tests "Skinny.*:Carveout.Skinny:Bmm.SkinnyTakesBatches" 200
keep_logs
shapes=64x4096x4096,64x4096x14336,64x14336x4096,16x4096x4096,16x4096x14336,1x4096x4096,1x4096x14336
forced_main_and_lab batched sk "$shapes" skinny_256x64_st5_split4 skinny_64x64_st12_split2 skinny_128x64_st4_split2
cp /tmp/tmagemm-batched build/tmagemm
decode_tuned_both_flushes /tmp/kcl/kernels
keep_logs
memcheck_tests "Skinny.InputAndOutputTypesAndStrides:Skinny.BatchedThroughBmm:Skinny.SplitsWithAnEmptyRank" 150
keep_logs
fresh_db /tmp/kcl/kernels
BENCH_LOG=autotune bench_suites grouped:110
keep_logs
fresh_db /tmp/kcl/kernels
BENCH_LOG=autotune bench_suites waves:60
keep_logs
stage "dsmem_reduce probe"
timeout 60 .carry/bin/dsmem_reduce > "$out/dsmem-reduce.txt" 2>&1
echo "rc=$?"; cat "$out/dsmem-reduce.txt"
keep_logs
stage done
