#!/usr/bin/env bash
# device-trace-16.sh — where the skinny kernel's time goes on a 32 MB decode weight (issue 21 point 3): profiling
# builds (TMAGEMM_TRACE, kernels/gemm_skinny.cuh SkinnyTraceSlot) of forced skinny choices on 1x4096x4096 and
# 64x4096x4096 under the read flush; the last timed launch's per-CTA timeline is printed (lab/skinny-trace.py).
# Then, with EXACT_SUITES, suites tuned per exact M (TMAGEMM_M_BUCKETS=0). Logs to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "traces"
for sc in ${TRACES:-"1x4096x4096 skinny_256x64_st5_split4" "1x4096x4096 skinny_64x64_st12_split2" \
  "1x14336x4096 skinny_256x64_st5_split1" "64x4096x4096 skinny_64x64_st12_split2"}; do
  set -- $sc
  f=/tmp/trace-$1-$2.csv
  TMAGEMM_TRACE=$f TMAGEMM_CHOICE_REGEX="^$2\$" timeout 120 build/tmagemm bench --suite "$1" --flush read \
    --reps 20 --out /tmp/tr > /tmp/trace-bench.txt 2>&1
  echo "== $1 $2 (rc=$?)"; python3 lab/skinny-trace.py "$f"
done 2>&1 | tee "$out/traces.txt"
if [ -n "${EXACT_SUITES:-}" ]; then
  mkdir -p "$out/exact"
  for s in $EXACT_SUITES; do
    stage "bench $s (exact M tuning)"
    TMAGEMM_M_BUCKETS=0 TMAGEMM_LOG=autotune timeout "${BENCH_S:-240}" build/tmagemm bench --suite "$s" \
      --out "$out/exact" > "$out/exact/bench-$s.txt" 2>&1
    echo "rc=$?"; rows < "$out/exact/bench-$s.txt"
  done
fi
stage done
