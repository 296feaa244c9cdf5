#!/usr/bin/env bash
# device-50g.sh — the whole fp8 suite (52 rows: six shapes and six decode rows, each tensorwise / rowwise, fast and
# two-level accumulation) against torch._scaled_mm with python -m tmagemm.bench, on any card (the 0-dim tensorwise
# scales now taken). Prediction (H100 rows of this session): ~1.0 where both run cuBLASLt, 1.05-1.3 on the two-level
# and decode rows. Carry [".carry/bin", ".carry/kcache.tgz", ".carry/py312"]. ~5 min.
out=$OUT
source scripts/device-lib.sh
use_carry
export PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1
stage "torch fp8"
timeout 420 python3 -m tmagemm.bench --suite fp8 --out "$out" > "$out/torch-fp8.txt" 2>&1
echo "rc=$?"; grep -E "^[0-9]|geomean|rror" "$out/torch-fp8.txt" | cut -c1-150
keep_logs
stage done
