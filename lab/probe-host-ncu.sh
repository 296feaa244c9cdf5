#!/usr/bin/env bash
# probe-host-ncu.sh — (1) the host time of a tuned call taken apart (bench/host_overhead.cpp: pointer query,
# cudaSetDevice, validation, launch alone, an empty launch); (2) ncu (clocks unlocked) of a skinny choice beside
# cuBLASLt's pick on two M = 64 decode shapes: time, DRAM and L2 traffic, warp stall reasons.
# Writes $OUT/host.txt and $OUT/ncu.txt.
set -uo pipefail
out=${OUT:-out}; mkdir -p $out
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
export TMAGEMM_CACHE_DIR=$PWD/.kcache
timeout 120 build/tmagemm_host_bench --benchmark_min_time=0.3 --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true 2>&1 | grep -E "median|Run on|MHz|CPU" | tee $out/host.txt
m=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,sm__cycles_active.avg,smsp__inst_executed.sum,launch__grid_size,launch__cluster_dim_x,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__warp_issue_stalled_sleeping_per_warp_active.pct,smsp__warp_issue_stalled_membar_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct,smsp__warp_issue_stalled_misc_per_warp_active.pct,smsp__warp_issue_stalled_selected_per_warp_active.pct,smsp__warp_issue_stalled_no_instruction_per_warp_active.pct,smsp__cycles_active.avg,gpc__cycles_elapsed.max
{
for sc in "64x28672x8192 skinny_256x64_st5_split1_cast4" "64x28672x8192 skinny_128x64_st4_split1_cast2" "64x28672x8192 cublaslt_algo1" \
          "64x4096x4096 skinny_64x64_st12_split2" "64x4096x4096 cublaslt_algo0" "16x28672x8192 skinny_128x128_st4_split1_cast4" "16x28672x8192 cublaslt_algo0"; do
set -- $sc
echo "== $1 $2"
TMAGEMM_TUNING=heuristic TMAGEMM_CHOICE_REGEX="^$2\$" timeout 90 /usr/local/cuda/bin/ncu --clock-control none --metrics $m -k regex:'nvjet|gemm_skinny|splitK|reduce' -c 3 build/tmagemm bench --suite $1 --reps 1 --out /tmp/n 2>&1 | grep -E "^  [a-zA-Z_]|^    [a-z]" | cut -c1-150
done
} 2>&1 | tee $out/ncu.txt
