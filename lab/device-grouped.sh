#!/usr/bin/env bash
# device-grouped.sh — grouped_mm on the H200 (issue 20 part 2): the GPU tests (grouped, bmm, persistent TMA, skinny),
# memcheck of two grouped tests, the Python grouped tests and the ops against torch, then a first timing against
# torch._grouped_mm (lab/grouped-probe.py). Carried binaries, kernel cache and cp312 extension. Logs to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
export PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1 TMAGEMM_RESULTS=$PWD/bench/results
stage "gpu tests"
timeout 200 build/tests/tmagemm_gpu_tests --gtest_filter="${TEST_FILTER:-GroupedMm.*:Bmm.*:PersistentTma.*:Skinny.*}" \
  > "$out/gpu-tests.txt" 2>&1
echo "rc=$?"; summary "$out/gpu-tests.txt"; grep -E "^\[  FAILED|Failure|error" "$out/gpu-tests.txt" | head -20
memcheck_tests "GroupedMm.RandomGroupsEveryLayout:GroupedMm.OffsetsPastTheEndAndEmptyGroups" 90
stage "pytest"
timeout 150 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_grouped.py tests/python/test_ops.py \
  -k "grouped or mm_against_torch or bmm" > "$out/pytest.txt" 2>&1
echo "rc=$?"; grep -E "passed|failed|FAILED|Error" "$out/pytest.txt" | tail -15
stage "grouped probe"
timeout 120 python3 lab/grouped-probe.py 2>&1 | tee "$out/grouped-probe.txt"
stage "done"
