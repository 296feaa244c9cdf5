#!/usr/bin/env bash
# device-run4-23.sh — twenty-third session, run 4 (branch sparse-routing, the landing build): GPU tests of grouped_mm
# and the tuner, the grouped suite tuned afresh (the representative routing of sparse classes now leaves groups empty),
# the Python package's op and grouped tests against torch (the cp312 build of this tree). Logs and JSON straight into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "GroupedMm.*:Tune*:Addmm.AlphaBetaInPlaceNanBiasAndKZero" 100
BENCH_LOG=autotune bench_suites grouped:150
stage "pytest (ops, grouped)"
PYTHONPATH=$PWD/.carry/py312 timeout 100 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_ops.py tests/python/test_grouped.py \
  > "$out/pytest.txt" 2>&1
echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR" "$out/pytest.txt" | tail -15
stage done
