#!/usr/bin/env bash
# device-remote-cache.sh — the Redis remote cache on the H200 (issue 22 point 4): the GPU test RemoteCacheGpu.* —
# process 1 tunes a 1536x1024x768 bf16 mm (cuBLASLt off, so the winner is a tmagemm kernel) with TMAGEMM_REMOTE_CACHE
# and a key, process 2 with an empty local cache makes its first call from the published winner and cubin — and prints
# that call's host time (target: under 100 ms) with the remote hits and NVRTC compiles (both checked by the test).
# Carried binaries and kernel cache (scripts/device-lib.sh). Logs to $OUT.
#
# The test needs a redis-server. The GPU machine (Ubuntu 24.04, no network) has none and apt cannot install one: this
# uses $TMAGEMM_REDIS_SERVER or one on PATH, else a server carried from the build machine in .carry/redis/ (Debian 12's
# /usr/bin/redis-server with the two libraries Ubuntu lacks:
#   mkdir -p .carry/redis && cp /usr/bin/redis-server /lib/x86_64-linux-gnu/liblzf.so.1 \
#     /lib/x86_64-linux-gnu/libjemalloc.so.2 .carry/redis/   # and carry .carry/redis
# ), started through a wrapper that puts them on its library path. Without any of them it says so and skips cleanly.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry

redis=${TMAGEMM_REDIS_SERVER:-$(command -v redis-server || true)}
if [ -z "$redis" ] && [ -x .carry/redis/redis-server ]; then
  wrapper=/tmp/tmagemm-redis-server
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
    "$PWD/.carry/redis" "$PWD/.carry/redis/redis-server" > "$wrapper"
  chmod +x "$wrapper"
  if "$wrapper" --version > /dev/null 2>&1; then redis=$wrapper; else echo "carried redis-server does not run here:"; "$wrapper" --version 2>&1 | head -3; fi
fi
if [ -z "$redis" ]; then
  echo "redis-server: none on this machine (Ubuntu 24.04 without network: apt cannot install it), none carried in"
  echo ".carry/redis/ and TMAGEMM_REDIS_SERVER unset. The remote cache GPU test is skipped: nothing measured."
  stage "done"
  exit 0
fi
export TMAGEMM_REDIS_SERVER=$redis
echo "redis-server: $redis ($("$redis" --version | head -n 1))"

stage "remote cache gpu test"
timeout 300 build/tests/tmagemm_gpu_tests --gtest_filter='RemoteCacheGpu.*' > "$out/remote-cache.txt" 2>&1
echo "rc=$?"; summary "$out/remote-cache.txt"
grep -E "^process [12]:|^winner |Failure|SKIPPED|Expected|Which is" "$out/remote-cache.txt" | head -30
stage "done"
