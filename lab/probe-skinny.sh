#!/usr/bin/env bash
# probe-skinny.sh — skinny choices on balanced (132 tiles) and decode shapes under both flushes, and the kernels
# cuBLASLt runs for decode shapes (ncu: grid, cluster, shared memory, DRAM throughput). Writes $OUT/probe1.txt.
set -uo pipefail
out=${OUT:-out}; mkdir -p $out
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
{
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv
for fl in read write; do
echo "=== flush $fl"
export BENCH_ARGS="--flush $fl"
lab/bench-forced.sh 16x33792x8192 skinny_256x64_st5_split1 skinny_128x64_st4_split1
lab/bench-forced.sh 16x16896x8192 skinny_128x128_st4_split1 skinny_128x64_st8_split1
lab/bench-forced.sh 16x28672x8192 skinny_256x64_st5_split1 skinny_128x128_st4_split1 skinny_128x64_st4_split1 skinny_64x64_st12_split1 skinny_64x64_st12_split2 cublaslt_algo0 cublaslt_algo1
done
echo "=== cuBLASLt kernels (ncu)"
for s in 16x28672x8192 64x28672x8192 16x4096x4096 64x4096x4096 1x14336x4096; do
TMAGEMM_CHOICE_REGEX='^cublaslt_algo0$' timeout 90 /usr/local/cuda/bin/ncu --metrics launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__shared_mem_per_block_dynamic,gpu__time_duration.sum,dram__bytes_read.sum.per_second,launch__registers_per_thread \
  -c 6 build/tmagemm bench --suite $s --reps 1 --out /tmp/n 2>&1 | grep -E "^  [a-zA-Z_]|launch__|gpu__time|dram__" | sed "s/^/$s /"
done
} 2>&1 | tee $out/probe1.txt
