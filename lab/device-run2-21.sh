#!/usr/bin/env bash
# device-run2-21.sh — twenty-first session, run 2: lab/probes/capture_culprit (CUPTI callbacks on the tuning thread)
# names the CUDA call after which another thread's global-mode capture is no longer active. Logs to $OUT/all.tgz.
set -u
out=/tmp/o
rm -rf /tmp/o
source scripts/device-lib.sh
use_carry
stage "capture culprit"
LD_LIBRARY_PATH=/usr/local/cuda/lib:$PWD/.carry/bin timeout 100 .carry/bin/capture_culprit_before 6 > "$out/culprit-before.txt" 2>&1; echo "rc=$?"; grep -v "^tmagemm autotune" "$out/culprit-before.txt" | head -80
stage "capture culprit, fixed"
LD_LIBRARY_PATH=/usr/local/cuda/lib:$PWD/.carry/bin timeout 150 .carry/bin/capture_culprit 12 > "$out/culprit.txt" 2>&1
echo "rc=$?"; grep -v "^tmagemm autotune" "$out/culprit.txt" | head -120
stage done
tar -C /tmp -czf "$OUT/all.tgz" o
