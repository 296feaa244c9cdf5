#!/usr/bin/env bash
# device-50e.sh — python -m tmagemm.bench on the suites device-50c left out, any card: misaligned (torch.mm on the
# same strided views: cuBLAS at ~1/5 of the aligned rate, the motivation), addmm (torch.addmm /
# torch._addmm_activation) and bmm (torch.bmm), fresh database. Prediction: misaligned ~4-5x, addmm ~1.05-1.1 (torch's
# addmm with an activation is cuBLASLt's fused epilogue), bmm ~1.01-1.03. Carry [".carry/bin", ".carry/kcache.tgz",
# ".carry/py312"]. ~5 min.
out=$OUT
source scripts/device-lib.sh
use_carry
export PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1
for s in misaligned:130 addmm:130 bmm:70; do
  name=${s%%:*} limit=${s##*:}
  stage "torch $name"
  timeout "$limit" python3 -m tmagemm.bench --suite "$name" --out "$out" > "$out/torch-$name.txt" 2>&1
  echo "rc=$?"; grep -E "^[0-9]|geomean|rror" "$out/torch-$name.txt" | cut -c1-150
done
keep_logs
stage done
