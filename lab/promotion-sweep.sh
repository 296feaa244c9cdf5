#!/usr/bin/env bash
# promotion-sweep.sh — skinny choices on wide-N decode shapes with each TMA L2 promotion (TMAGEMM_TMA_L2_PROMOTION)
# under both flushes, then ncu's L2 read sectors without promotion. Writes $OUT/probe5.txt.
set -uo pipefail
out=${OUT:-out}; mkdir -p $out
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
{
for fl in read write; do
for pr in 256 none 128; do
echo "== promotion $pr flush $fl"
for c in skinny_256x64_st5_split1 skinny_128x64_st8_split1 skinny_64x64_st12_split2; do
  TMAGEMM_TMA_L2_PROMOTION=$pr TMAGEMM_CHOICE_REGEX="^$c\$" timeout 150 build/tmagemm bench --suite 16x28672x8192,16x33792x8192,64x28672x8192,16x4096x4096 --flush $fl --out /tmp/forced 2>&1 \
    | grep -E "^[0-9]+x|rror" | awk -v c="$c" '{print $1, $2, $3, $4, $5, $6}' | sed "s/^/$c: /"
done
done
done
m=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_op_read_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum
TMAGEMM_TMA_L2_PROMOTION=none TMAGEMM_TUNING=heuristic TMAGEMM_CHOICE_REGEX="^skinny_256x64_st5_split1\$" timeout 90 /usr/local/cuda/bin/ncu --clock-control none --metrics $m -k regex:'gemm_skinny' -c 1 build/tmagemm bench --suite 16x28672x8192 --reps 1 --out /tmp/n 2>&1 | grep -E "^    [a-z]" | cut -c1-150
} 2>&1 | tee $out/probe5.txt
