#!/usr/bin/env bash
# device-43.sh — the forty-third session's first call: on an H200, lab/device-42.sh PART=b (the 64-row stream-K
# configs forced on the 28672 x 8192 decode rows under both flushes, bmm tuned); on any card, the StreamK tests
# (restructured: operands and reference once per shape and layout) and lab/device-39.sh PART=4 (timelines).
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/lab"].
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "GPU: $gpu"
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "StreamK.*" 150; grep -E "OK \] StreamK" $OUT/gpu-tests.txt
if echo "$gpu" | grep -q H200; then
  PART=b bash lab/device-42.sh > $OUT/part-b.log 2>&1; tail -40 $OUT/part-b.log
fi
PART=4 bash lab/device-39.sh > $OUT/part-4.log 2>&1; tail -60 $OUT/part-4.log
