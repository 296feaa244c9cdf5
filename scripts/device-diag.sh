#!/usr/bin/env bash
# device-diag.sh — one-off measurements on a GPU machine (this session's questions); logs to $OUT.
set -uo pipefail
out=${OUT:-out}; mkdir -p "$out"
fresh() { export TMAGEMM_CACHE_DIR=/tmp/diag$RANDOM$RANDOM; mkdir -p $TMAGEMM_CACHE_DIR; cp -r .kcache/kernels $TMAGEMM_CACHE_DIR/; }
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
python3 scripts/power-drift.py 4096 4096 14336 1.5 > "$out/drift.txt" 2>&1
python3 scripts/power-drift.py 4096 6144 4096 1.0 >> "$out/drift.txt" 2>&1
fresh
timeout 200 build/tests/tmagemm_gpu_tests --gtest_filter='PersistentTma*:Tuner*:Dispatch*' > "$out/tests.txt" 2>&1
echo "tests rc=$?" >> "$out/tests.txt"
# Persistent TMA only, tuned (clusters included), then each cluster config forced.
s=8192x8192x8192:rr,4096x4096x4096:rr,4096x14336x4096:rr,4096x4096x14336:rc,3000x5000x1000:rr,3000x5000x1000:rc,1000x1000x1000:rr,1000x1000x1000:rc
fresh
TMAGEMM_CUBLASLT=0 TMAGEMM_FALLBACK=0 timeout 200 build/tmagemm bench --suite $s --out /tmp/p 2>&1 | grep -E "^[0-9]+x|geomean" > "$out/cluster.txt"
for c in 128x256x64_s4_c2_g8_cm2 256x128x64_s4_c2_g8_cm2 128x128x64_s6_c2_g8_cm2 64x128x64_s8_c1_g8_cm2; do
  echo "== $c" >> "$out/cluster.txt"
  TMAGEMM_CHOICE_REGEX="$c" TMAGEMM_CUBLASLT=0 TMAGEMM_FALLBACK=0 timeout 100 build/tmagemm bench --suite $s --reps 20 \
    --out /tmp/p 2>&1 | grep -E "^[0-9]+x|geomean" >> "$out/cluster.txt"
done
# Tuner: no heat vs 200 ms heat before the final rounds.
for heat in 0 200; do
  fresh
  echo "== heat $heat ms" >> "$out/tuner.txt"
  TMAGEMM_EXPERIMENT_HEAT_MS=$heat TMAGEMM_LOG=autotune timeout 150 build/tmagemm bench \
    --suite 4096x4096x14336:rc,4096x6144x4096:rc,4096x14336x4096:rr,4096x4096x14336:rr --out /tmp/t >> "$out/tuner.txt" 2>&1
done
exit 0
