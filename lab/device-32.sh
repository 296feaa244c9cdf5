#!/usr/bin/env bash
# device-32.sh — this session's device calls (the thirty-second session: the pad path's copies, issue 21's misaligned
# rows). Build here, `tmagemm compile-check` into .kcache, tar it (.carry/kcache.tgz), copy build/tmagemm,
# build/tests/tmagemm_gpu_tests and lab probes into .carry/bin. Carry [".carry/bin", ".carry/kcache.tgz"].
#   PART=2: the TMA-store epilogue's plain realigned stores (kOutPlain) for outputs TMA cannot address, the pad path
#           without its copy of out: PersistentTma/PadTma/StreamK/PingPong/GroupedMm GPU tests, memcheck of the new
#           test and PadTma, the misaligned suite; repitch_probe with flattened variants.
#   PART=3: kOutPlain's window by selects (no divergent switch per row): the plain-store and pad GPU tests, memcheck,
#           misaligned twice.
#   PART=4: ping-pong configs in the pad path, the realigned store loop unrolled twice (carried cache: the bench's rr
#           bf16 kernels only): PadTma tests, misaligned twice (fresh tuning each).
#   (PART=4 ran three builds: ping-pong in the pad path with the loop unrolled twice; + a piece every fourth K block;
#   + the realigned copy hoisted out of the unrolled pieces: lab/2026-12-04-session32/run4, run5, run6.)
#   PART=5: the landed build (full kernel cache): GPU tests of every backend touched, memcheck of the plain-store and
#           pad ping-pong tests, misaligned once more.
#   PART=6: per-CTA timelines (TMAGEMM_TRACE) of 128x256 and ping-pong 128x128 2x1 on 4096x{14336,14335}x4096 rc
#           (N odd: out rows off 16 bytes, kOutPlain; B column-major needs no copy), and their forced timings.
#   PART=7: after the launch's out_plain was computed once (host only): plain-store, pad and stream-K GPU tests,
#           misaligned once more.
#   PART=1: repitch_probe (the row copy's bandwidth on the suite's copies, variants, cudaMemcpy); the misaligned suite
#           forced to the 128x256 and 256x128 pad configs with direct stores and with the TMA store (out copied back).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
case "${PART:-1}" in
1)
  stage "repitch probe"
  .carry/bin/repitch_probe 2>&1 | tee "$out/repitch-probe.txt"
  stage "misaligned forced: direct store vs TMA store + copy back"
  lab/bench-forced.sh misaligned pad_persistent_tma_128x256x64_s4_c2_g8 pad_persistent_tma_128x256x64_s4_c2_g8_tmastore \
    pad_persistent_tma_256x128x64_s4_c2_g8 pad_persistent_tma_256x128x64_s4_c2_g8_tmastore 2>&1 | tee "$out/forced.txt"
  ;;
2)
  gpu_tests "PersistentTma.*:PadTma.*:StreamK.*:PingPong.*:GroupedMm.*:Addmm.*" 300
  memcheck_tests "PersistentTma.TmaStoreConfigsOnOutputsTmaCannotAddress:PadTma.OddNDirectAndPlainStores:PadTma.BLdNPlusOneOutLdNPlusThree" 200
  BENCH_LOG=autotune bench_suites misaligned:220
  stage "repitch probe (flattened variants)"
  .carry/bin/repitch_probe 2>&1 | tee "$out/repitch-probe.txt"
  ;;
3)
  gpu_tests "PersistentTma.TmaStore*:PersistentTma.OutputTypes:PadTma.*:GroupedMm.*:PingPong.EveryLayoutAndTileCount:StreamK.SplitTilesEveryLayoutAndShape" 200
  memcheck_tests "PersistentTma.TmaStoreConfigsOnOutputsTmaCannotAddress:PadTma.OddNDirectAndPlainStores:PadTma.BLdNPlusOneOutLdNPlusThree:PadTma.OddMNK" 200
  BENCH_LOG=autotune bench_suites misaligned:220
  fresh_db /tmp/kc/kernels; mkdir -p "$out/run2" && out=$out/run2 BENCH_LOG=autotune bench_suites misaligned:220
  ;;
4)
  gpu_tests "PadTma.*:PersistentTma.TmaStore*" 200
  BENCH_LOG=autotune bench_suites misaligned:220
  fresh_db /tmp/kc/kernels; mkdir -p "$out/run2" && out=$out/run2 BENCH_LOG=autotune bench_suites misaligned:220
  ;;
5)
  gpu_tests "PersistentTma.*:PadTma.*:PingPong.EveryLayoutAndTileCount:StreamK.SplitTilesEveryLayoutAndShape:GroupedMm.*" 240
  memcheck_tests "PersistentTma.TmaStoreConfigsOnOutputsTmaCannotAddress:PadTma.OddNDirectAndPlainStores:PadTma.BLdNPlusOneOutLdNPlusThree:PadTma.OddMNK:PadTma.OddK" 200
  BENCH_LOG=autotune bench_suites misaligned:220
  ;;
6)
  stage "forced timings"
  lab/bench-forced.sh "4096x14336x4096:rc,4096x14335x4096:rc" persistent_tma_128x256x64_s4_c2_g8_tmastore \
    persistent_tma_128x128x64_s6_c2_g8_cm2_tmastore_pp 2>&1 | tee "$out/forced.txt"
  stage "traces"
  OUT=$out/trace bash scripts/trace-run.sh 4096x14336x4096:rc=persistent_tma_128x256x64_s4_c2_g8_tmastore \
    4096x14335x4096:rc=persistent_tma_128x256x64_s4_c2_g8_tmastore \
    4096x14336x4096:rc=persistent_tma_128x128x64_s6_c2_g8_cm2_tmastore_pp \
    4096x14335x4096:rc=persistent_tma_128x128x64_s6_c2_g8_cm2_tmastore_pp
  python3 lab/persistent-trace.py "$out"/trace/trace-*.csv 2>&1 | tee "$out/trace-summary.txt"
  ;;
7)
  gpu_tests "PersistentTma.*:PadTma.*:StreamK.SplitTilesEveryLayoutAndShape" 200
  BENCH_LOG=autotune bench_suites misaligned:220
  ;;
esac
stage done
