#!/usr/bin/env bash
# device-51d.sh — addmm's short path (python/tmagemm/_ops.py: the common call skips the general path's descriptions,
# as mm's does), any card: the host time of one call (host_time.py) with the package before it (.carry/py312-old) and
# with it (.carry/py312), then the Python addmm tests but autograd's. Prediction: tmagemm.addmm from ~35 us (fiftieth
# session, beside large kernels) to within ~3 us of tmagemm.mm. Carry [".carry/bin", ".carry/kcache.tgz",
# ".carry/py312", ".carry/py312-old"]. ~3 min.
out=$OUT
source scripts/device-lib.sh
use_carry
export PYTHONUNBUFFERED=1
for v in py312-old py312; do
  stage "host time $v"
  PYTHONPATH=$PWD/.carry/$v timeout 120 python3 lab/2026-12-06-session51/host_time.py 2>&1 | tee "$out/host-time-$v.txt"
done
stage pytest
PYTHONPATH=$PWD/.carry/py312 timeout 200 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_ops.py \
  -k "addmm and not autograd" > "$out/pytest-addmm.txt" 2>&1
echo "rc=$?"; tail -4 "$out/pytest-addmm.txt"
stage done
