#!/usr/bin/env bash
# device-57a.sh — the fifty-seventh session's first call, H200 only (every H100 run of version 0.1.4 is done, sessions
# 54-56): the long GPU test groups of device-55a.sh (PersistentTma, StreamK, Addmm but its grid, ScaledMm, GroupedMm),
# without its grouped bench, which waits until the tests and memcheck have run on the H200 (device-57e.sh). On any
# other card it names the card and stops, and the machine is handed back at once.
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/redis"]. ~7 min on an H200.
out=$OUT
source scripts/device-lib.sh
h200_only
use_carry >/dev/null
gpu_tests 'PersistentTma.*:StreamK.*:Addmm.*:ScaledMm.*:GroupedMm.*-Addmm/AddmmGrid.*' "${LIMIT:-450}"
mv "$out/gpu-tests.txt" "$out/gpu-tests-long.txt"
stage done
