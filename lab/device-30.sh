#!/usr/bin/env bash
# device-30.sh — this session's device calls (the thirtieth session). Build here, then `tmagemm compile-check` into
# .kcache, tar it (.carry/kcache.tgz), copy build/tmagemm and build/tests/tmagemm_gpu_tests into .carry/bin.
# Carry [".carry/bin", ".carry/kcache.tgz"]. Logs and JSON into $OUT.
#   PART=1: the GPU tests that tune large problems or touch what moved (stage_fill.cuh: PersistentTma, StreamK,
#           PingPong, GroupedMm; the sustained block: Sustained, Tuner), memcheck of a sample.       (~480 s)
#   PART=2: square both ways (interleaved, with the sustained final; --sustained), decode under both flushes.
#   PART=3: grouped and bmm, tuned afresh (fp8 not rerun: this session leaves its kernels' SASS as it was).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
case "${PART:-1}" in
1)
  gpu_tests "Sustained.*:TuneBuckets.*:Tuner.*:Faults.*:PersistentTma.*:StreamK.*:PingPong.*:GroupedMm.*" 330
  memcheck_tests "Sustained.*:PersistentTma.AllLayoutsRaggedSizes:GroupedMm.RandomGroupsEveryLayout:StreamK.SplitTilesEveryLayoutAndShape" 150
  ;;
2)
  BENCH_LOG=autotune bench_suites square:100
  stage "bench square --sustained"
  timeout 100 build/tmagemm bench --suite square --sustained --out "$out" > "$out/bench-square-sustained.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-square-sustained.txt"
  bench_suites decode:140
  stage "bench decode --flush read"
  timeout 140 build/tmagemm bench --suite decode --flush read --out "$out" > "$out/bench-decode-read.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-decode-read.txt"
  ;;
3)
  bench_suites grouped:220 bmm:120
  ;;
esac
stage done
