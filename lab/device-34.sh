#!/usr/bin/env bash
# device-34.sh — this session's device calls (the thirty-fourth session: the in-kernel copy of B again, issue 21's
# B ld N + 1 row). Build here, `tmagemm compile-check` into .kcache, tar it (.carry/kcache.tgz), copy build/tmagemm and
# build/tests/tmagemm_gpu_tests into .carry/bin. Carry [".carry/bin", ".carry/kcache.tgz"].
#   PART=1: pad_bcopy_ v2 (whole-M raster, 8-row parts, two blocks in flight a lane, producer warpgroup at 56 registers):
#           PadTma GPU tests, memcheck of its test, the misaligned suite forced to in-kernel-copy and copying configs
#           (twin on the same config), then tuned.
#   PART=3: which costs the in-kernel copy (pad_bcopy_ 128x256 2x1, 16-row parts): forced on the misaligned suite with
#           the copy kernel and the in-kernel copy, each with the raster's groups of 8 and with whole columns of M
#           (TMAGEMM_LAB_GROUP_M / TMAGEMM_LAB_BCOPY_GROUP_M, lab-only knobs); a kernel cache of those kernels only.
#   PART=4: main as it stands (no kernel change this session), fresh tuning: grouped, bmm, decode under the read and the
#           write flush, square, waves (the suites of issues 20 and 21 not re-run since the thirtieth/thirty-first
#           sessions).
#   PART=5: PART=4's grouped, decode (write flush), square and waves again, their JSON in one tar.
#   PART=6: library_rank_at_m times a bucket winner of ours against cuBLASLt's ranks at each other M (host only):
#           GPU tests TuneBuckets.* and Tuner.*, the waves suite twice and llm once, each with a fresh tuning database.
#   PART=7: pick_winner judges cuBLASLt's near-ties against the fastest choice (host only): GPU tests of the tuner,
#           bmm, decode under both flushes, grouped, each with a fresh tuning database.
#   PART=8: the landed build (both tuner changes): misaligned, waves, square, each with a fresh tuning database.
#   (After PART=8, the buckets test's stored-choice block factored into a helper: TuneBuckets.* 9/9, one command:
#   `gpu_tests "TuneBuckets.*:PickWinner*" 200`, run8/gpu-tests-tunebuckets.txt.)
#   PART=2: the misaligned suite tuned twice, each with a fresh tuning database; GPU tests of the backends it touches.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
case "${PART:-1}" in
1)
  gpu_tests "PadTma.*" 420
  memcheck_tests "PadTma.InKernelCopyOfB" 240
  stage "misaligned forced"
  lab/bench-forced.sh misaligned "(pad_bcopy_)?persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore" \
    "(pad_)?persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore" \
    "(pad_bcopy_)?persistent_tma_128x128x64_s6_c2_g8_cm2_tmastore_pp" 2>&1 | tee "$out/forced.txt"
  BENCH_LOG=autotune bench_suites misaligned:260
  ;;
3)
  c=persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore
  stage "forced: copy kernel, g8"; lab/bench-forced.sh misaligned "(pad_)?$c" 2>&1 | tee "$out/forced-pad-g8.txt"
  stage "forced: in-kernel copy, g8"; lab/bench-forced.sh misaligned "(pad_bcopy_)?$c" 2>&1 | tee "$out/forced-bcopy-g8.txt"
  stage "forced: in-kernel copy, whole M"
  TMAGEMM_LAB_BCOPY_GROUP_M=8192 lab/bench-forced.sh misaligned "(pad_bcopy_)?$c" 2>&1 | tee "$out/forced-bcopy-wm.txt"
  stage "forced: copy kernel, whole M (twin too)"
  TMAGEMM_LAB_GROUP_M=8192 lab/bench-forced.sh misaligned "(pad_)?$c" 2>&1 | tee "$out/forced-pad-wm.txt"
  ;;
4)
  BENCH_LOG=autotune bench_suites grouped:200 bmm:120
  stage "bench decode --flush read"
  timeout 120 build/tmagemm bench --suite decode --flush read --out "$out" > "$out/bench-decode-read.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-decode-read.txt"
  bench_suites decode:100 square:90 waves:100
  ;;
5)
  # PART=4's suites whose JSON did not come back (the results folder returns a limited number of files): again, the
  # JSON tarred.
  BENCH_LOG=autotune bench_suites grouped:200 decode:100 square:90 waves:100
  (cd "$out" && tar czf results.tgz ./*.json && rm -f ./*.json)
  ;;
6)
  gpu_tests "TuneBuckets.*:Tuner.*:Faults.*" 300
  BENCH_LOG=autotune bench_suites waves:150
  fresh_db /tmp/kc/kernels; mkdir -p "$out/run2" && out=$out/run2 BENCH_LOG=autotune bench_suites waves:150
  fresh_db /tmp/kc/kernels; mkdir -p "$out/run3" && out=$out/run3 BENCH_LOG=autotune bench_suites llm:260
  (cd "$out" && tar czf results.tgz ./*.json ./run2/*.json ./run3/*.json && rm -f ./*.json ./run2/*.json ./run3/*.json)
  ;;
7)
  gpu_tests "TuneBuckets.*:Tuner.*:Faults.*" 300
  BENCH_LOG=autotune bench_suites bmm:120
  fresh_db /tmp/kc/kernels; stage "bench decode --flush read"
  timeout 120 build/tmagemm bench --suite decode --flush read --out "$out" > "$out/bench-decode-read.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-decode-read.txt"
  fresh_db /tmp/kc/kernels; bench_suites decode:100
  fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites grouped:200
  (cd "$out" && tar czf results.tgz ./*.json && rm -f ./*.json)
  ;;
8)
  BENCH_LOG=autotune bench_suites misaligned:200
  fresh_db /tmp/kc/kernels; bench_suites waves:120
  fresh_db /tmp/kc/kernels; bench_suites square:90
  (cd "$out" && tar czf results.tgz ./*.json && rm -f ./*.json)
  ;;
2)
  BENCH_LOG=autotune bench_suites misaligned:260
  fresh_db /tmp/kc/kernels; mkdir -p "$out/run2" && out=$out/run2 BENCH_LOG=autotune bench_suites misaligned:260
  out=${out%/run2}
  gpu_tests "PersistentTma.*:PadTma.*:PingPong.*:StreamK.*:Addmm.*" 420
  ;;
esac
stage done
