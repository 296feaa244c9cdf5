#!/usr/bin/env bash
# device-51c.sh — stream-K with each worker's shared-out range first (TMAGEMM_STREAM_K_SHARED_FIRST=1), any card:
# StreamK.* (the new SharedFirstGivesTheBitsOfTheDefaultOrder among them), then the stream-K configs forced, each
# order in turn, against cuBLASLt in the same run: decode rows (read flush) on 64x128 s8 and 64x256 s5 stream-K, waves
# rows (write flush) on 128x256 and 128x256 cm2 stream-K. Prediction: the decode rows whose split tiles' fixups ended
# the launch (forty-third session: 9-12k cycles after the last MMA, 5-8 % behind whole tiles) gain 2-6 %; the waves
# rows 0-3 %. Carry [".carry/bin", ".carry/kcache.tgz"] (the kcache: the stream-K kernels of this build). ~8 min.
# Ran once (2026-12-06, H100) on commit dc79615, reverted after it: results-51c/ and perf-notes "Fifty-first session".
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests 'StreamK.*' 240
decode=1x28672x8192,16x28672x8192,64x28672x8192,64x14336x4096,64x4096x14336,1x14336x4096
waves=2304x2304x8192,4224x4224x4224,6144x1536x4096,2560x2560x2560,1000x1000x1000
run() {  # name config shapes flush order
  stage "$1 order $5"
  TMAGEMM_STREAM_K_SHARED_FIRST=$5 TMAGEMM_CHOICE_REGEX="^persistent_tma_$2\$" timeout 100 build/tmagemm bench \
    --suite "$3" --flush "$4" --out "$out/$1-o$5" > "$out/bench-$1-o$5.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-$1-o$5.txt" | cut -c1-140
}
for o in 0 1; do run d64x128 64x128x64_s8_c1_g8_tmastore_sk $decode read $o; done
for o in 0 1; do run d64x256 64x256x64_s5_c1_g8_tmastore_sk $decode read $o; done
for o in 0 1; do run w128x256 128x256x64_s4_c2_g8_tmastore_sk $waves write $o; done
for o in 0 1; do run w128x256cm2 128x256x64_s4_c2_g8_cm2_tmastore_sk $waves write $o; done
keep_logs
stage done
