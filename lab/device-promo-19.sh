#!/usr/bin/env bash
# device-promo-19.sh — nineteenth session, run 2: L2 promotion of persistent TMA's loads on memory-bound shapes.
# For each TMAGEMM_TMA_L2_PROMOTION setting (the rule's default: 256 B on aligned rows; none; 128 B), a fresh tuning
# database and cuBLASLt off as a choice (the baseline column is still cuBLASLt): the bmm suite under the write and
# the read flush, and a few mm rows (M = 128 weight streams, a compute-bound check). Logs to $OUT/promo-<setting>.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
for P in default none 128; do
  d="$out/promo-$P"; mkdir -p "$d"
  fresh_db /tmp/kc/kernels
  if [ "$P" = default ]; then unset TMAGEMM_TMA_L2_PROMOTION; else export TMAGEMM_TMA_L2_PROMOTION=$P; fi
  stage "promotion $P: bmm write"
  TMAGEMM_CUBLASLT=0 timeout 120 build/tmagemm bench --suite bmm --out "$d" > "$d/bmm-write.txt" 2>&1; rows < "$d/bmm-write.txt"
  stage "promotion $P: bmm read"
  TMAGEMM_CUBLASLT=0 timeout 120 build/tmagemm bench --suite bmm --flush read --out "$d/r" > "$d/bmm-read.txt" 2>&1; rows < "$d/bmm-read.txt"
  stage "promotion $P: mm rows"
  TMAGEMM_CUBLASLT=0 timeout 120 build/tmagemm bench --suite 128x8192x8192:rr,128x8192x8192:rc,512x14336x4096:rr,4096x4096x4096:rr,8192x8192x8192:rr --out "$d/m" > "$d/mm.txt" 2>&1; rows < "$d/mm.txt"
done
stage done
