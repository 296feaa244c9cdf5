#!/usr/bin/env bash
# device-49c.sh — what ragged group ends cost grouped_mm (forty-ninth session): the grouped suite tuned on a fresh
# database three times, with the suite's MoE routing and with the same routing's groups rounded to multiples of 64 and
# of 128 rows (`tmagemm bench --routing aligned:Q`, the total kept), tmagemm and the cuBLAS baseline alike.
# Prediction (from the routing, suites.cpp moe_routing): on the compute-bound rows a 128-row tile computes
# sum(ceil(rows/64) x 64) rows where a consumer warpgroup past its group's end idles (gemm_persistent_tma.cuh `idle`):
# 8 x 4096 wastes 192 rows (4.7 %), 64 x 32768 ~6 %, 8 x 32768 0.6 %; so aligned:64 should lift ours by ~4-6 % on
# 8x4096 and 64x32768 rows (and the loop of cuBLASLt calls alike), aligned:128 no further if the idle warpgroup gives
# its time back; MoE decode rows unchanged (bandwidth). Carry [".carry/bin", ".carry/kcache.tgz"]. ~7 min.
out=$OUT
source scripts/device-lib.sh
use_carry
for r in moe aligned:64 aligned:128; do
  fresh_db /tmp/kc/kernels
  tag=${r/:/}
  stage "grouped --routing $r"
  mkdir -p "$out/$tag"
  TMAGEMM_LOG=autotune timeout 170 build/tmagemm bench --suite grouped --routing "$r" --out "$out/$tag" \
    > "$out/bench-grouped-$tag.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-grouped-$tag.txt"
  keep_logs
done
stage done
