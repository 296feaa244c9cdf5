#!/usr/bin/env bash
# device-48e.sh — the rest of the GPU suite with the search on by default (backends alone, capture, carveout, PDL,
# remote cache, grouped, FP8, pad path, stream-K; the tuner's and cuBLASLt's tests ran in device-48c), then waves
# tuned per exact M (TMAGEMM_M_BUCKETS=0: the fitted configurations are candidates of an exact tuning). Carry
# [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "Carveout.*:Pdl.*:RemoteCache*:GroupedMm.*:ScaledMm.*:PadTma.*:Fallback.*:Skinny.*:ClusterSplitK.*:StreamK.*:Addmm.TunedCall*:EveryBackend/*" ${TEST_SECS:-380}
keep_logs
exact_suites "waves" 100
keep_logs
stage done
