#!/usr/bin/env bash
# device-bmm.sh — bmm on the H200 (issue 20 part 1): the bmm GPU tests (every backend, layout, B = 1, ragged, broadcast,
# 4096 batches, the tuned call) and the existing batched tests, memcheck on a subset, then `tmagemm bench --suite
# bmm` against cuBLASLt strided-batched. Carried binaries and kernel cache (scripts/device-lib.sh). Logs to $OUT.
# Env: TEST_FILTER, MEMCHECK_FILTER, MEMCHECK_S, SUITES="name:seconds ...".
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage "gpu tests"
timeout 240 build/tests/tmagemm_gpu_tests --gtest_filter="${TEST_FILTER:-Bmm.*:PersistentTma.Batched*:Skinny.Batched*}" \
  > "$out/gpu-tests.txt" 2>&1
echo "rc=$?"; summary "$out/gpu-tests.txt"; grep -E "^\[  FAILED|Failure|error:" "$out/gpu-tests.txt" | head -20
memcheck_tests "${MEMCHECK_FILTER:-Bmm.EveryBackendEveryLayout:Bmm.BroadcastEitherOperand}" "${MEMCHECK_S:-150}"
bench_suites ${SUITES:-bmm:200}
stage "done"
