#!/usr/bin/env bash
# device-54b.sh — the 46 GPU tests device-54a.sh's 400 s did not reach (TuneBuckets, Faults, TuneMemory, the remote
# cache, Tuner, graph capture and non-finite inputs of every backend, then the addmm grid, whose epilogue variants
# NVRTC compiles: the carried cache holds compile-check's sample only). Carry [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry >/dev/null
export TMAGEMM_CACHE_DIR=/tmp/kc
gpu_tests 'TuneBuckets.*:Faults.*:TuneMemory.*:RemoteCache*:Tuner.*:*GraphCapture*:*NonFinite*' "${LIMIT1:-300}"
mv "$out/gpu-tests.txt" "$out/gpu-tests-rest.txt"
gpu_tests 'Addmm/AddmmGrid.*' "${LIMIT2:-240}"
mv "$out/gpu-tests.txt" "$out/gpu-tests-addmm-grid.txt"
