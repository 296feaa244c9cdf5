#!/usr/bin/env bash
# device-run2-24.sh — twenty-fourth session, run 2 (main after the revert, with bias_pair through bias_bits_pair): the
# GPU tests of every backend's epilogue (Addmm, ScaledMm, Skinny, Fallback) and a stream-K check, then the Python
# package's tests against torch (the carried cp312 build of this tree). Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-Addmm.*:ScaledMm.*:Skinny.*:Fallback.*:StreamK.TwoRunsGiveTheSameBits}" 300
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -40
stage pytest
PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1 timeout "${PYTEST_S:-240}" python3 -m pytest -q -rs -p no:cacheprovider \
  tests/python > "$out/pytest.txt" 2>&1
echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR|SKIPPED" "$out/pytest.txt" | tail -25
stage done
