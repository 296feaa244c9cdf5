#!/usr/bin/env bash
# device-run1-29.sh — the twenty-ninth session's first device call: the whole Python suite and the tuner / fault
# tests (29ec618's rank-timing error path had not run on a GPU), then lab/probes/power_probe.py: energy per FLOP of
# tmagemm against torch.mm (cuBLAS) at the power cap. Carry [".carry/bin", ".carry/kcache.tgz", ".carry/py312"].
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "TuneBuckets.*:Tuner.*:Faults.*" 90
stage pytest
PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1 timeout 280 python3 -m pytest -q -rs -p no:cacheprovider \
  --durations=10 tests/python > "$out/pytest.txt" 2>&1
echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR|SKIPPED|^[0-9.]+s " "$out/pytest.txt" | tail -16
stage power
for shape in "8192 8192 8192" "4096 14336 4096"; do
  PYTHONPATH=$PWD/.carry/py312 python3 lab/probes/power_probe.py torch $shape 2>&1 | tail -1
  PYTHONPATH=$PWD/.carry/py312 TMAGEMM_CHOICE_REGEX='^persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore$' \
    python3 lab/probes/power_probe.py tmagemm $shape 2>&1 | tail -1
  PYTHONPATH=$PWD/.carry/py312 TMAGEMM_CHOICE_REGEX='^persistent_tma_128x128x64_s6_c2_g8_cm2_tmastore_pp$' \
    python3 lab/probes/power_probe.py tmagemm $shape 2>&1 | tail -1
  PYTHONPATH=$PWD/.carry/py312 python3 lab/probes/power_probe.py torch $shape 2>&1 | tail -1
done | tee "$out/power.txt"
stage done
