#!/usr/bin/env bash
# device-python.sh — the Python package on the H200 (issue 19): the carried cp312 build of tmagemm._C
# (lab/build-ext-cp312.sh) with python/tmagemm, the carried kernel cache under a fresh tuning DB, then the smoke call,
# pytest tests/python (GPU tests included), and the host-overhead benchmark. Logs and JSON to $OUT.
# Env: PYTEST_S (pytest time limit, s), PYTEST_ARGS (extra pytest arguments), SKIP_OVERHEAD=1, SUITES="name:seconds ..."
# (then `tmagemm bench` on those suites with the carried binary).
set -u
out=$OUT
source scripts/device-lib.sh
BINARIES=carry use_carry
export PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1 TMAGEMM_RESULTS=$PWD/bench/results
cp /usr/include/x86_64-linux-gnu/python3.12/pyconfig.h "$out/pyconfig-3.12.h" 2>/dev/null
stage "smoke"
python3 scripts/python-smoke.py 2>&1 | tee "$out/smoke.txt"
stage "pytest"
timeout "${PYTEST_S:-420}" python3 -m pytest -q -rs -p no:cacheprovider tests/python ${PYTEST_ARGS:-} \
  > "$out/pytest.txt" 2>&1
echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR" "$out/pytest.txt" | tail -25
if [ "${SKIP_OVERHEAD:-0}" != 1 ]; then
  stage "host overhead"
  python3 bench/python_overhead.py --out "$out" 2>&1 | tee "$out/overhead.txt"
fi
[ -n "${SUITES:-}" ] && bench_suites $SUITES
stage "done"
