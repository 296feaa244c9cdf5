#!/usr/bin/env bash
# device-next-30.sh — for the first device calls of the session after the twenty-ninth. Build here, then
# `tmagemm compile-check` into .kcache, tar it (.carry/kcache.tgz), copy build/tmagemm and build/tests/tmagemm_gpu_tests
# into .carry/bin, and build the CPython 3.12 extension (lab/build-ext-cp312.sh) into .carry/py312.
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/py312"]. Logs and JSON into $OUT.
#   PART=1: square with the landed sustained final, both ways (interleaved; --sustained), and the GPU tests that tune
#           large problems (their tunings now include the final): TuneBuckets, Tuner, Faults, PersistentTma.  (~300 s)
#   PART=2: decode under both flushes, grouped, bmm and fp8 tuned afresh on the current main (their JSON is from
#           earlier sessions' code); fp8 and addmm --sustained (does the energy spread hold there too?).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
case "${PART:-1}" in
1)
  gpu_tests "TuneBuckets.*:Tuner.*:Faults.*:PersistentTma.*" 200
  TMAGEMM_LOG=autotune bench_suites square:120
  stage "bench square --sustained"
  timeout 120 build/tmagemm bench --suite square --sustained --out "$out" > "$out/bench-square-sustained.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-square-sustained.txt"
  ;;
2)
  bench_suites decode:150
  BENCH_ARGS= timeout 150 build/tmagemm bench --suite decode --flush read --out "$out" 2>&1 | rows
  bench_suites grouped:200 bmm:120 fp8:200
  for s in fp8 addmm; do
    stage "bench $s --sustained"
    timeout 200 build/tmagemm bench --suite $s --sustained --out "$out" > "$out/bench-$s-sustained.txt" 2>&1
    echo "rc=$?"; rows < "$out/bench-$s-sustained.txt"
  done
  ;;
esac
stage done
