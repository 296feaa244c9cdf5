#!/usr/bin/env bash
# device-run3-27.sh — twenty-seventh session, run 3: tail halves (kernels/scheduler.cuh TailHalves; the partial wave's
# tiles cut into halves of their rows where they are at most half the workers). The TailHalves GPU tests, memcheck of
# the smaller one, then the waves suite with each tail-halves config and its whole-tile twin forced (same-run
# cuBLASLt), then the waves suite tuned (the tuner now holds the _th configs). Carry [".carry/bin",
# ".carry/kcache.tgz"]. Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "TailHalves.*" 150
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -8
memcheck_tests "TailHalves.F16AndBatches" 90
stage forced
p=persistent_tma_
for pair in "128x224x64_s4_c2_g8_tmastore" "128x256x64_s4_c2_g8_tmastore" "128x192x64_s4_c2_g8_tmastore" \
            "128x256x64_s4_c2_g8_cm2_tmastore"; do
  bash lab/bench-forced.sh waves "$p$pair" "$p${pair}_th"
done 2>&1 | tee "$out/forced.txt"
stage "waves, tuned"
timeout 150 build/tmagemm bench --suite waves --out "$out" 2>&1 | rows | tee "$out/waves.txt"
stage done
