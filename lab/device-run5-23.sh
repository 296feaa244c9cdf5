#!/usr/bin/env bash
# device-run5-23.sh — twenty-third session, run 5: the Python package's op and grouped tests against torch on the
# landing build (run 4's cp312 build lacked hiredis; lab/build-ext-cp312.sh now links it). Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry > /dev/null
PYTHONPATH=$PWD/.carry/py312 timeout 100 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_ops.py \
  tests/python/test_grouped.py > "$out/pytest.txt" 2>&1
echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR" "$out/pytest.txt" | tail -15
