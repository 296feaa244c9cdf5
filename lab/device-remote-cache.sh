#!/usr/bin/env bash
# device-remote-cache.sh — the Redis remote cache on the H200 (issue 22 point 4): the GPU test RemoteCacheGpu.* —
# process 1 tunes a 1536x1024x768 bf16 mm (cuBLASLt off, so the winner is a tmagemm kernel) with TMAGEMM_REMOTE_CACHE
# and a key, process 2 with an empty local cache makes its first call from the published winner and cubin — and prints
# that call's host time (target: under 100 ms) with the remote hits and NVRTC compiles (both checked by the test).
# Carried binaries and kernel cache (scripts/device-lib.sh). Logs to $OUT.
#
# The test needs a redis-server. The GPU machine (Ubuntu 24.04, no network) has none and apt cannot install one:
# scripts/device-lib.sh carried_redis finds one (or the one carried in .carry/redis/, as it says how to build).
# Without any it says so and skips cleanly.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry

if ! carried_redis; then
  echo "The remote cache GPU test is skipped: nothing measured."
  stage "done"
  exit 0
fi

stage "remote cache gpu test"
timeout 300 build/tests/tmagemm_gpu_tests --gtest_filter='RemoteCacheGpu.*' > "$out/remote-cache.txt" 2>&1
echo "rc=$?"; summary "$out/remote-cache.txt"
grep -E "^process [12]:|^winner |Failure|SKIPPED|Expected|Which is" "$out/remote-cache.txt" | head -30
stage "done"
