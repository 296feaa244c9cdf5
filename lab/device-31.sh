#!/usr/bin/env bash
# device-31.sh — this session's device calls (the thirty-first session: the skinny kernel for 65..128 rows).
# Build here, `tmagemm compile-check` into .kcache, tar it (.carry/kcache.tgz), copy build/tmagemm and
# build/tests/tmagemm_gpu_tests into .carry/bin. Carry [".carry/bin", ".carry/kcache.tgz"]. Logs and JSON into $OUT.
#   PART=1: Skinny/TuneBuckets/Tuner GPU tests, memcheck of the 128-row test; the mid-M shapes skinny-only (tuned, the
#           autotune log holds every skinny choice's time) and with every backend; llm tuned.
#   (PART=1 ran the build with the 128-row skinny kernel, lab/2026-12-04-session31/skinny-m128.patch; it was not kept.)
#   PART=2: main's build (the patch reverted): misaligned and waves, tuned afresh (last run on 12-02 / 12-03).
#   PART=3: main's build: fp8 and addmm (last run on 12-02 / 12-03).
#   PART=4: misaligned again, its aligned twin timed interleaved with the row's call after a heat (bench.cpp).
#   PART=5: main's build: misaligned (a second sample of the paired twin) and llm.
#   PART=6: the bench with one heat(): misaligned (a third sample), and a back-to-back read-flush run's JSON name.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
mid="128x8192x8192:rr,128x8192x8192:rc,96x14336x4096:rr,128x14336x4096:rr,128x4096x14336:rr,80x4096x4096:rr,128x28672x8192:rr"
case "${PART:-1}" in
1)
  gpu_tests "Skinny.*:TuneBuckets.*:Tuner.*" 240
  memcheck_tests "Skinny.RowsFrom65To128" 150
  stage "mid-M, skinny only"
  TMAGEMM_LOG=autotune TMAGEMM_CUBLASLT=0 TMAGEMM_FALLBACK=0 TMAGEMM_PERSISTENT_TMA=0 timeout 150 build/tmagemm bench \
    --suite "$mid" --out "$out/skinny-only" > "$out/bench-mid-skinny.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-mid-skinny.txt"
  stage "mid-M, every backend"
  TMAGEMM_LOG=autotune timeout 150 build/tmagemm bench --suite "$mid" --out "$out/all" > "$out/bench-mid.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-mid.txt"
  BENCH_LOG=autotune bench_suites llm:200
  ;;
2)
  BENCH_LOG=autotune bench_suites misaligned:200 waves:220
  ;;
3)
  BENCH_LOG=autotune bench_suites fp8:260 addmm:260
  ;;
4)
  BENCH_LOG=autotune bench_suites misaligned:200
  ;;
5)
  BENCH_LOG=autotune bench_suites misaligned:200 llm:240
  ;;
6)
  BENCH_LOG=autotune bench_suites misaligned:200
  stage "b2b read-flush JSON name"
  timeout 120 build/tmagemm bench --suite 1x4096x4096,16x14336x4096 --back-to-back --flush read --out "$out/b2b" 2>&1 | rows
  ls "$out/b2b"
  ;;
esac
stage done
