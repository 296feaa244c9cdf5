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
skinny_traces "1x4096x4096 skinny_256x64_st5_split4" "1x4096x4096 skinny_64x64_st12_split2" \
  "1x14336x4096 skinny_256x64_st5_split1" "64x4096x4096 skinny_64x64_st12_split2"
[ -n "${EXACT_SUITES:-}" ] && exact_suites "$EXACT_SUITES" "${BENCH_S:-240}"
stage done
