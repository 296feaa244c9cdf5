#!/usr/bin/env bash
# device-43e.sh — the forty-third session's last call: the GPU tests most exposed to the stream-K grid change (a
# stream-K config with fewer tiles than SMs now splits them over every SM; the fixup skips rows past a tile's end):
# every config on few-tile ragged shapes (PersistentTma.EveryConfigEveryLayout), stream-K with epilogues (Addmm), SM
# carveouts, the tuner. Carry [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "PersistentTma.EveryConfigEveryLayout:Addmm.StreamKSplitTilesGetTheEpilogue:Addmm.EveryPersistentTmaConfigLoopsOverTilesWithAnEpilogue:Carveout.*:Tuner.*:Pdl.*" 250
grep -E "OK \]|FAILED \]" "$out/gpu-tests.txt"
stage done
