#!/usr/bin/env bash
# probe-skinny-lag.sh — skinny v6 (relaxed cluster arrivals) with the two stage-release rules
# (TMAGEMM_EXPERIMENT_SKINNY_LAG 1 / 0): the decode suite with only the skinny backend under both flushes (each run
# with its own tuning database), and ncu of two M = 64 choices under both rules. Writes $OUT/lag.txt and the JSONs.
# The switch was removed after this probe (lag 0 measured slower); with the current build both loops run one kernel.
set -uo pipefail
out=${OUT:-out}; mkdir -p $out
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
source scripts/device-lib.sh
{
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv
for lag in 1 0; do
  for fl in write read; do
    export TMAGEMM_CACHE_DIR=/tmp/kc-$lag-$fl
    mkdir -p $TMAGEMM_CACHE_DIR && cp -r .kcache/kernels $TMAGEMM_CACHE_DIR/
    export TMAGEMM_EXPERIMENT_SKINNY_LAG=$lag
    echo "=== lag $lag"
    skinny_only_decode $fl 200
    for f in $out/*-decode-skinny_only*.json; do mv "$f" "${f%.json}-lag$lag.json"; done
  done
done
m=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__warp_issue_stalled_membar_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct
for lag in 1 0; do
for sc in "64x28672x8192 skinny_256x64_st5_split1_cast4" "64x4096x4096 skinny_64x64_st12_split2" "16x28672x8192 skinny_128x128_st4_split1_cast4"; do
set -- $sc
echo "== lag $lag $1 $2"
TMAGEMM_EXPERIMENT_SKINNY_LAG=$lag TMAGEMM_CACHE_DIR=/tmp/kc-1-write TMAGEMM_TUNING=heuristic TMAGEMM_CHOICE_REGEX="^$2\$" timeout 90 /usr/local/cuda/bin/ncu --clock-control none --metrics $m -k regex:'gemm_skinny' -c 1 build/tmagemm bench --suite $1 --reps 1 --out /tmp/n 2>&1 | grep -E "^    [a-z]" | cut -c1-150
done; done
} 2>&1 | tee $out/lag.txt
# Host time again, the tuned calls measured twice in either order (the first run put the cuBLASLt-won call at 12 us).
export TMAGEMM_CACHE_DIR=/tmp/kc-1-write
for f in 'TunedMm|LaunchOnly|Empty' 'LaunchOnly|TunedMm'; do
  timeout 90 build/tmagemm_host_bench --benchmark_filter="$f" --benchmark_min_time=0.3 --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true 2>&1 | grep -E "median"
done 2>&1 | tee $out/host2.txt
