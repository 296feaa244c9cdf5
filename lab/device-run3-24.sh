#!/usr/bin/env bash
# device-run3-24.sh — twenty-fourth session, run 3 (run 2's build): the GPU tests run 2 did not run, less the addmm
# grid (Addmm/AddmmGrid, ~240 s; its kernels' SASS is that of the twenty-second session's run, where it passed), a
# memcheck sample, and the two Python tests run 2's time limit cut off (with pytest's durations). Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-*-PersistentTma.*:Skinny.*:ScaledMm.*:Fallback.*:Pdl.*:StreamK.*:Addmm/AddmmGrid.*}" 330
grep -E "^\[ +(OK|FAILED) " "$out/gpu-tests.txt" | head -80
memcheck_tests "GroupedMm.GraphReplayWithNewOffsets:Bmm.BroadcastEitherOperand:Pdl.*" 70
stage pytest
PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1 timeout 60 python3 -m pytest -q -rs -p no:cacheprovider --durations=5 \
  tests/python/test_plot.py::test_command_line tests/python/test_threads.py > "$out/pytest.txt" 2>&1
echo "rc=$?"; tail -12 "$out/pytest.txt"
stage done
