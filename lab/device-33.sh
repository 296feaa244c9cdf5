#!/usr/bin/env bash
# device-33.sh — this session's device calls (the thirty-third session: B from its row classes, issue 21's misaligned
# rows). Build here, `tmagemm compile-check` into .kcache, tar it (.carry/kcache.tgz), copy build/tmagemm and
# build/tests/tmagemm_gpu_tests into .carry/bin. Carry [".carry/bin", ".carry/kcache.tgz"].
#   PART=1: row classes (pad_bcls_: B from 8 tensor maps, a K-major A reordered in shared memory by the producer
#           warpgroup's other warps, an M-major A copied in the classes' order): PadTma GPU tests, memcheck of the copy
#           kernel and row-class tests, the misaligned suite forced to row-class and copying configs, then tuned.
#           (Ran twice: every row-class kernel faulted, illegal instruction at its first class load; bcls_probe below.)
#   PART=2: bcls_probe (a class box whose inner coordinate is off 16 bytes); Nsight Compute (clocks left alone) of the
#           128x256 TMA-store kernel on 4096x4095x4096 rr (pad path, out stored plain) and on 4096x4096x4096 (TMA
#           stores): the plain chunk's cost at the instruction level (kernels compiled with TMAGEMM_JIT_LINEINFO=1).
#   PART=3: store_block_realigned by row classes (a warp-uniform window, predicated partial stores): plain-store and pad
#           GPU tests, memcheck, ncu of the plain kernel again, the misaligned suite tuned.
#   PART=4: the same build: the misaligned suite twice more, each with a fresh tuning database.
#   PART=5: the same build: the misaligned suite forced to one config at a time, its aligned twin on the same config
#           (regex "(pad_)?<config>"): ping-pong against deferred plain stores, interleaved pairing.
#   PART=6: with the deferred TMA-store configs set aside where out's rows are off 16 bytes (host only): the misaligned
#           suite twice, each with a fresh tuning database (PART=4's commands).
#   PART=7: the in-kernel copy of B (pad_bcopy_, kernels/b_copy.cuh): PadTma GPU tests, memcheck of its test, the
#           misaligned suite forced to in-kernel-copy and copying configs (twin on the same config), then tuned.
#   PART=8: the landed build (plain stores by row class, deferred TMA-store configs set aside for rows off 16 bytes;
#           full kernel cache): GPU tests of the backends it touches, memcheck of the plain-store and pad tests; torch
#           (torch.mm, and torch.compile max-autotune within 200 s) on the misaligned suite's views.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
case "${PART:-1}" in
1)
  gpu_tests "PadTma.*" 420
  memcheck_tests "PadTma.RowClassCopyKernel:PadTma.RowClassesPaddedAndOffsetB" 200
  stage "misaligned forced"
  lab/bench-forced.sh misaligned pad_bcls_persistent_tma_128x256x64_s4_c2_g8_tmastore \
    pad_persistent_tma_128x256x64_s4_c2_g8_tmastore pad_bcls_persistent_tma_128x128x64_s6_c2_g8_cm2_tmastore_pp \
    2>&1 | tee "$out/forced.txt"
  BENCH_LOG=autotune bench_suites misaligned:260
  ;;
2)
  export TMAGEMM_JIT_LINEINFO=1
  for v in plain:4096x4095x4096:pad_persistent_tma_128x256x64_s4_c2_g8_tmastore \
           tma:4096x4096x4096:persistent_tma_128x256x64_s4_c2_g8_tmastore; do
    IFS=: read -r name shape choice <<< "$v"
    stage "ncu $name"
    TMAGEMM_CHOICE_REGEX="^$choice\$" timeout 240 ncu --clock-control none --kernel-name regex:gemm_persistent \
      --launch-count 1 --set full -f -o "$out/$name" build/tmagemm bench --suite "$shape:rr" --out /tmp/ncu-bench \
      > "$out/ncu-$name.log" 2>&1
    echo "rc=$?"; tail -3 "$out/ncu-$name.log"
    ncu --import "$out/$name.ncu-rep" --page details > "$out/$name-details.txt" 2>&1
    ncu --import "$out/$name.ncu-rep" --page source --csv --print-source sass > "$out/$name-sass.csv" 2>&1
    grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|Stall" "$out/$name-details.txt" | head -20
  done
  ;;
3)
  gpu_tests "PersistentTma.TmaStore*:PersistentTma.OutputTypes:PadTma.*:GroupedMm.*" 300
  memcheck_tests "PersistentTma.TmaStoreConfigsOnOutputsTmaCannotAddress:PadTma.OddNDirectAndPlainStores:PadTma.BLdNPlusOneOutLdNPlusThree" 200
  stage "ncu plain"
  TMAGEMM_JIT_LINEINFO=1 TMAGEMM_CHOICE_REGEX="^pad_persistent_tma_128x256x64_s4_c2_g8_tmastore\$" timeout 240 ncu \
    --clock-control none --kernel-name regex:gemm_persistent --launch-count 1 --set full -f -o "$out/plain" \
    build/tmagemm bench --suite "4096x4095x4096:rr" --out /tmp/ncu-bench > "$out/ncu-plain.log" 2>&1
  echo "rc=$?"
  ncu --import "$out/plain.ncu-rep" --page details > "$out/plain-details.txt" 2>&1
  ncu --import "$out/plain.ncu-rep" --page source --csv --print-source sass > "$out/plain-sass.csv" 2>&1
  grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy" "$out/plain-details.txt" | head -5
  BENCH_LOG=autotune bench_suites misaligned:260
  ;;
4|6)
  BENCH_LOG=autotune bench_suites misaligned:260
  fresh_db /tmp/kc/kernels; mkdir -p "$out/run2" && out=$out/run2 BENCH_LOG=autotune bench_suites misaligned:260
  ;;
5)
  stage "misaligned forced, twin on the same config"
  lab/bench-forced.sh misaligned "(pad_)?persistent_tma_128x128x64_s6_c2_g8_cm2_tmastore_pp" \
    "(pad_)?persistent_tma_128x256x64_s4_c2_g8_cm2_cn2_tmastore" "(pad_)?persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore" \
    "(pad_)?persistent_tma_128x128x64_s6_c2_g8_tmastore_pp" 2>&1 | tee "$out/forced.txt"
  ;;
7)
  gpu_tests "PadTma.*" 420
  memcheck_tests "PadTma.InKernelCopyOfB" 240
  stage "misaligned forced"
  lab/bench-forced.sh misaligned "(pad_bcopy_)?persistent_tma_128x256x64_s4_c2_g8_tmastore" \
    "(pad_)?persistent_tma_128x256x64_s4_c2_g8_tmastore" "(pad_bcopy_)?persistent_tma_128x128x64_s6_c2_g8_tmastore_pp" \
    2>&1 | tee "$out/forced.txt"
  BENCH_LOG=autotune bench_suites misaligned:260
  ;;
8)
  gpu_tests "PersistentTma.*:PadTma.*:PingPong.*:StreamK.*:GroupedMm.*:Addmm.*" 420
  memcheck_tests "PersistentTma.TmaStoreConfigsOnOutputsTmaCannotAddress:PadTma.OddMNK:PadTma.OddNDirectAndPlainStores" 200
  stage "torch on the misaligned views"
  timeout 60 python3 lab/2026-12-04-session33/torch_misaligned.py 2>&1 | tee "$out/torch-mm.txt"
  timeout 200 python3 lab/2026-12-04-session33/torch_misaligned.py --compile 2>&1 | grep -v Warning | tail -8 \
    | tee "$out/torch-compile.txt"
  ;;
esac
stage done
