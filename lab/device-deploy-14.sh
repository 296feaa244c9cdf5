#!/usr/bin/env bash
# device-deploy-14.sh — the rest of the fourteenth session's GPU checks in one call: lab/device-buckets.sh with the GPU
# tests the release call (lab/device-release-14.sh) did not reach (Faults, AddmmGrid, GraphCapture, NonFinite) beside
# the bucket and memory tests and a 12-value M sweep, then lab/device-remote-cache.sh (the Redis cache: a second process
# runs the first's winner without compiling or timing). Carried binaries, kernel cache and redis-server. Logs to $OUT.
set -u
TEST_FILTER="Faults.*:Addmm/AddmmGrid.*:EveryBackend/*:TuneBuckets.*:TuneMemory.*" \
  SWEEP_M="${SWEEP_M:-1,8,16,40,72,150,300,700,1300,2200,4500,8192}" bash lab/device-buckets.sh
bash lab/device-remote-cache.sh
