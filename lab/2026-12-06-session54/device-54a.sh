#!/usr/bin/env bash
# device-54a.sh — the whole GPU test suite of version 0.1.4 (the build carried in .carry/bin, kernels from
# .carry/kcache.tgz) in one call, on whatever card comes. Run on an H100 in the fifty-fourth session with a 400 s
# limit: 106 of 152 passed, none failed, before the limit stopped it in TuneBuckets (results-54a/gpu-tests.txt);
# device-54b.sh runs the 46 left. Carry [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry >/dev/null
export TMAGEMM_CACHE_DIR=/tmp/kc
gpu_tests '*' "${LIMIT:-400}"
