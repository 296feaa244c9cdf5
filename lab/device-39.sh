#!/usr/bin/env bash
# device-39.sh — the device calls the thirty-ninth session prepared (no device was lent in that session). The question
# they answer: why do narrow and three-consumer tiles (192x96, 128x160: cuBLASLt's wave-fitting picks) run 0.64-0.89
# of cuBLASLt in our kernel although 192x96 moves the same L2 bytes per FLOP as 128x128? Three layers, each measured:
#   (1) the tensor cores alone: lab/probes/wgmma_rate.cu, wgmma SS from fixed shared memory by N, consumer count,
#       m-blocks, B's layout, with and without bulk copies writing shared memory;
#   (2) our main loop in situ: each tile forced on a shape of exactly 132 (or 128) tiles with K = 32768, where the K loop
#       is ~all of the time, beside cuBLASLt on the same shape;
#   (3) the whole call on the waves shapes (the thirty-eighth session's forced tables).
# (1) against (2) says what the pipeline (barriers, TMA latency, the producer) costs per tile shape; (2) against (3) what
# the prologue, epilogue and wave shape cost.
#
# Prepare here (lab/prepare-39.sh does all of it): build main, `tmagemm compile-check` into .kcache, tar it
# (.carry/kcache.tgz), copy build/tmagemm and build/tests/tmagemm_gpu_tests into .carry/bin, build the probe into
# .carry/bin/wgmma_rate. For PART=2 the three-consumer patch (lab/2026-12-05-session38/three-consumer-tiles.patch)
# is built in a worktree and carried as .carry/lab/{tmagemm,kcache.tgz} (~6 MB). Carry [".carry/bin",
# ".carry/kcache.tgz", ".carry/lab"]; one call (~5 min) runs PART=1 and, where .carry/lab is there, PART=2.
#   PART=1: the probe; the table's tiles on their 132-tile long-K shapes (rr and rc).
#   PART=2: the patched build: 192x96 c3, 192x192 c3 and 128x160 on their long-K shapes, 128x128 and 128x192 beside them
#           as the in-run reference (with that build's own kernel cache).
#   PART=4: (in PART=1's call, last) layer 3: per-CTA timelines (TMAGEMM_TRACE, scripts/trace-run.sh, summarised by
#           lab/persistent-trace.py) of 1536^3 — one tile a CTA, the shape where cuBLASLt's 192x96 takes 14.2 us — on
#           128x192 and 128x128 (main) and on 192x96 c3 and 128x160 (the patched build), and of 1000^3 on 64x128x128
#           2x1: entry, first load, first full stage, last MMAs, last epilogue, exit against the call's time.
#   PART=3: (a second call) the sparse grouped classes tuned over three routings (tuning_group_routings, thirty-ninth
#           session): GroupedMm.* (SparseClassTunedOverSeveralRoutings among them), the grouped suite tuned (fresh
#           database; AUTOTUNE logs: issue 20's grouped target, 1.10, 1.095 last), then its rows forced to 64x128 s8
#           and 64x256 s5 (the tuner picked 64x256 s5 on the 64-token 2048x7168 row at 3.67 TB/s, where 64x128 s8
#           forced read 3.91 in an earlier session).
#   PART=5: (fortieth session; a third call, or after PART=3 where time is left) the prescreen's roofline second
#           chance on memory-bound problems. First the wgmma probe's sustained mode (SS against RS on 128x256 and
#           128x128 for 3 s each at the power cap: whether A's shared-memory reads cost enough energy to matter for
#           square / llm), then lab/probes/tile_stream.cu: the decode weight streamed through the
#           skinny kernel's 2-D box patterns (rr and rc), nothing consumed, beside the 1-D bulk floor, both flushes
#           (~1 min): whether the boxes or the kernel hold the read-flush stream at 110-114 us where bulk copies take
#           102.7 on 448 MB. Then the decode suite tuned (fresh database, AUTOTUNE log: which rescued
#           configs were timed and whether one won), then under the read flush on the same database. PART=3's
#           grouped run already tunes with it (its decode and 64 x 4096 rows time 11-13 persistent configs, 1-9 before).
set -u
out=$OUT
source scripts/device-lib.sh

# One config forced on one or more shapes (lab/bench-forced.sh), appended to $out/$1. Usage: forced FILE SHAPES CONFIG
forced() { lab/bench-forced.sh "$2" "$3" 2>&1 | tee -a "$out/$1"; }

part1() {
  use_carry
  stage "wgmma rate"
  timeout 180 .carry/bin/wgmma_rate 4096 2> "$out/wgmma-rate-launches.txt" | tee "$out/wgmma-rate.txt"
  grep -E "WARNING|error|:[0-9]+ " "$out/wgmma-rate-launches.txt" | head -5; tail -1 "$out/wgmma-rate-launches.txt"
  stage "main loop in situ (132 tiles, K = 32768)"
  p=persistent_tma_
  forced long-k.txt "1536x2816x32768,1536x2816x32768:rc" ${p}128x256x64_s4_c2_g8_tmastore
  forced long-k.txt "1536x2816x32768,1536x2816x32768:rc" ${p}128x256x64_s4_c2_g8_cm2_tmastore
  forced long-k.txt "3072x1408x32768,3072x1408x32768:rc" ${p}256x128x64_s4_c2_g8_tmastore
  forced long-k.txt "1536x2112x32768,1536x2112x32768:rc" ${p}128x192x64_s4_c2_g8_tmastore
  forced long-k.txt "1536x2464x32768" ${p}128x224x64_s4_c2_g8_tmastore
  forced long-k.txt "1536x1408x32768,1536x1408x32768:rc" ${p}128x128x64_s6_c2_g8_tmastore
  forced long-k.txt "768x2816x32768" ${p}64x256x64_s5_c1_g8_tmastore
  forced long-k.txt "768x1408x32768" ${p}64x128x64_s8_c1_g8_tmastore
  forced long-k.txt "1536x1408x32768" ${p}128x128x64_s6_c2_g8_tmastore_pp
}

part3() {
  use_carry
  gpu_tests "GroupedMm.*:Tuner.*" 220
  fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites grouped:240
  if [ -n "${FORCED:-}" ]; then
    stage "grouped, forced (the decode rows come last; the call's limit may cut the second config)"
    p=persistent_tma_
    forced grouped-forced.txt grouped ${p}64x128x64_s8_c1_g8_tmastore
    forced grouped-forced.txt grouped ${p}64x256x64_s5_c1_g8_tmastore
  fi
}

part5() {
  use_carry
  stage "wgmma sustained (SS against RS at the power cap, 3 s a variant)"
  timeout 60 .carry/bin/wgmma_rate 4096 3 2> "$out/wgmma-sustained-launches.txt" | tee "$out/wgmma-sustained.txt"
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv
  stage "tile stream"
  timeout 150 .carry/bin/tile_stream 2> "$out/tile-stream-launches.txt" | tee "$out/tile-stream.txt"
  tail -1 "$out/tile-stream-launches.txt"
  fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites decode:200
  stage "bench decode --flush read"
  timeout 140 build/tmagemm bench --suite decode --flush read --out "$out" > "$out/bench-decode-read.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-decode-read.txt"
}

part2() {
  mkdir -p "$out" /tmp/kc-lab
  tar -C /tmp/kc-lab -xzf .carry/lab/kcache.tgz
  fresh_db /tmp/kc-lab/kernels
  export TMAGEMM_BIN=.carry/lab/tmagemm
  stage "main loop in situ, three-consumer tiles and 128x160"
  p=persistent_tma_
  forced long-k-c3.txt "2304x1056x32768,2304x1056x32768:rc" ${p}192x96x64_s4_c3_g8_tmastore
  forced long-k-c3.txt "2304x2112x32768,2304x2112x32768:rc" ${p}192x192x64_s3_c3_g8_tmastore
  forced long-k-c3.txt "1536x1760x32768,1536x1760x32768:rc" ${p}128x160x64_s4_c2_g8_tmastore
  forced long-k-c3.txt "1536x1408x32768,2304x1056x32768" ${p}128x128x64_s6_c2_g8_tmastore
  forced long-k-c3.txt "1536x2112x32768,2304x2112x32768" ${p}128x192x64_s4_c2_g8_tmastore
  unset TMAGEMM_BIN
}

# Layer 3: timelines of one-tile-a-CTA shapes (each trace build is compiled here by NVRTC: ~10-30 s a config).
part4() {
  stage "timelines"
  mkdir -p "$out/trace"
  p=persistent_tma_
  fresh_db /tmp/kc/kernels
  OUT=$out/trace timeout 200 scripts/trace-run.sh "1536x1536x1536=${p}128x192x64_s4_c2_g8_tmastore" \
    "1536x1536x1536=${p}128x128x64_s6_c2_g8_tmastore" "1000x1000x1000=${p}64x128x128_s4_c1_g8_cm2_tmastore" \
    2>&1 | tee "$out/trace.txt"
  if [ -d .carry/lab ]; then
    mkdir -p "$out/trace-lab" /tmp/kc-lab
    [ -d /tmp/kc-lab/kernels ] || tar -C /tmp/kc-lab -xzf .carry/lab/kcache.tgz
    fresh_db /tmp/kc-lab/kernels
    # trace-run.sh runs build/tmagemm: the patched binary in its place for these two
    cp build/tmagemm /tmp/tmagemm-main && cp .carry/lab/tmagemm build/tmagemm
    OUT=$out/trace-lab timeout 120 scripts/trace-run.sh "1536x1536x1536=${p}192x96x64_s4_c3_g8_tmastore" \
      "1536x1536x1536=${p}128x160x64_s4_c2_g8_tmastore" 2>&1 | tee -a "$out/trace.txt"
    cp /tmp/tmagemm-main build/tmagemm
  fi
  python3 lab/persistent-trace.py "$out"/trace/*.csv "$out"/trace-lab/*.csv 2>&1 | tee "$out/trace-summary.txt"
  (cd "$out" && tar czf traces.tgz trace trace-lab 2>/dev/null && rm -rf trace trace-lab)
}

case "${PART:-1}" in
1)
  part1
  [ -d .carry/lab ] && part2
  part4
  ;;
2)
  mkdir -p "$out"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  part2
  ;;
3)
  part3
  ;;
4)
  use_carry
  part4
  ;;
5)
  part5
  ;;
esac
stage done
