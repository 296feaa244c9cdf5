#!/usr/bin/env bash
# device-50c.sh — python -m tmagemm.bench (new: tmagemm against torch on the same inputs, one process) on any card:
# its tests (tests/python/test_bench.py), then the llm, decode (write and read flush) and grouped suites against
# torch.mm / torch._grouped_mm, tuned on a fresh database. The carried cp312 build of tmagemm._C
# (lab/build-ext-cp312.sh). Prediction (H100 or H200): llm ~1.01-1.02 of torch.mm (torch runs cuBLAS's first pick),
# decode 1.03-1.08 write / ~1.0 read, grouped > 1.05 of torch._grouped_mm. Carry [".carry/bin", ".carry/kcache.tgz",
# ".carry/py312"]. ~8 min.
out=$OUT
source scripts/device-lib.sh
use_carry
export PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1
stage pytest
timeout 200 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_bench.py > "$out/pytest-bench.txt" 2>&1
echo "rc=$?"; tail -4 "$out/pytest-bench.txt"
for s in llm:170 decode:90 decode-read:90 grouped:170; do
  name=${s%%:*} limit=${s##*:} flush=write
  [ "$name" = decode-read ] && name=decode flush=read
  stage "torch $name $flush"
  timeout "$limit" python3 -m tmagemm.bench --suite "$name" --flush "$flush" --out "$out" > "$out/torch-${s%%:*}.txt" 2>&1
  echo "rc=$?"; grep -E "^[0-9]|geomean|rror" "$out/torch-${s%%:*}.txt" | cut -c1-150
done
keep_logs
stage done
