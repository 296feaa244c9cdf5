#!/usr/bin/env bash
# l2-sectors.sh — ncu (clocks unlocked) on a skinny choice and cuBLASLt's pick for three decode shapes: DRAM bytes,
# L2 read sectors requested by the SMs and the L2 hit rate. Found the 256-byte promotion's extra sectors (perf notes,
# skinny v4). Writes $OUT/probe4.txt.
set -uo pipefail
out=${OUT:-out}; mkdir -p $out
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_requests_op_read.sum,lts__t_sector_op_read_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,sm__cycles_active.avg,smsp__inst_executed.sum,launch__grid_size
{
for s in 16x28672x8192 16x33792x8192 64x28672x8192; do
for c in skinny_256x64_st5_split1 cublaslt_algo0; do
echo "== $s $c"
TMAGEMM_TUNING=heuristic TMAGEMM_CHOICE_REGEX="^$c\$" timeout 90 /usr/local/cuda/bin/ncu --clock-control none --metrics $m -k regex:'nvjet|gemm_skinny' -c 2 build/tmagemm bench --suite $s --reps 1 --out /tmp/n 2>&1 | grep -E "^  [a-zA-Z_]|^    [a-z]" | cut -c1-150
done; done
} 2>&1 | tee $out/probe4.txt
