#!/usr/bin/env bash
# device-58a.sh — the last GPU tests of version 0.1.4 not yet run on the H200 (fifty-eighth session ran the rest:
# results-h200/): the addmm grid's persistent_tma_large and skinny instances, and EveryBackend/GraphCapture and
# EveryBackend/NonFinite (12 tests). H200 only: on any other card it names the card and stops (every H100 run of
# 0.1.4 is done). Then lab/2026-12-06-session56/device-56d.sh (stream-K's memcheck, ~7 min) and device-57e.sh.
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/redis"]. ~4-5 min on an H200 (the grid's instances took
# 28 s / 92 s on the H200 / H100 for persistent_tma_small).
out=$OUT
source scripts/device-lib.sh
h200_only
use_carry >/dev/null
gpu_tests 'EveryBackend/*:Addmm/AddmmGrid.*persistent_tma_large:Addmm/AddmmGrid.*skinny*' "${LIMIT:-330}"
mv "$out/gpu-tests.txt" "$out/gpu-tests-last.txt"
stage done
