#!/usr/bin/env bash
# device-release-14.sh — the fourteenth session's build on the H200 (persistent TMA: idle consumers skip their MMAs;
# grouped_mm on TMA-store configs, tuned on an uneven routing; shape buckets, module unloading, the Redis cache): the
# whole GPU suite except the slow tuning-sweep tests (the deployment tests run in lab/device-buckets.sh), memcheck of
# the kernel tests the change touches, then `tmagemm bench` on the grouped and waves suites. Carried binaries and
# kernel cache (scripts/device-lib.sh). Logs and JSON to $OUT.
# Env: TEST_FILTER, MEMCHECK_FILTER, SUITES="name:seconds ...".
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "gpu tests"
timeout 280 build/tests/tmagemm_gpu_tests --gtest_filter="${TEST_FILTER:--TuneBuckets.*:TuneMemory.*:RemoteCacheGpu.*}" \
  > "$out/gpu-tests.txt" 2>&1
echo "rc=$?"; summary "$out/gpu-tests.txt"; grep -E "^\[  FAILED|Failure|error:" "$out/gpu-tests.txt" | head -20
memcheck_tests "${MEMCHECK_FILTER:-GroupedMm.EveryConfig:PersistentTma.AllLayoutsRaggedSizes}" 70
bench_suites ${SUITES:-grouped:150 waves:120}
stage "done"
