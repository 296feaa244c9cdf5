#!/usr/bin/env bash
# device-run2-24.sh — twenty-fourth session, run 2 (main after the revert; every compiled kernel's SASS is main's of the
# twenty-third session, bias_pair's rewrite included): the Python package's tests against torch (the carried cp312
# build of this tree), then the first half of the GPU suite. Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
stage pytest
PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1 timeout "${PYTEST_S:-230}" python3 -m pytest -q -rs -p no:cacheprovider \
  tests/python > "$out/pytest.txt" 2>&1
echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR|SKIPPED" "$out/pytest.txt" | tail -25
gpu_tests "${TEST_FILTER:-PersistentTma.*:Skinny.*:ScaledMm.*:Fallback.*:Pdl.*:StreamK.*}" 300
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -60
stage done
