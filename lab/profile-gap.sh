#!/usr/bin/env bash
# profile-gap.sh — where our kernel loses to cuBLAS on one shape: ncu sections (clocks left alone) for our
# forced config and for cuBLAS through PyTorch, and the SM clock under sustained load of each (nvidia-smi).
# Usage: lab/profile-gap.sh MxNxK LAYOUT CHOICE_NAME [sections...]   (writes into $OUT)
set -uo pipefail
shape=$1 layout=$2 choice=$3
shift 3
out=${OUT:-out}
mkdir -p "$out"
export TMAGEMM_CACHE_DIR=${TMAGEMM_CACHE_DIR:-/tmp/tmagemm-prof}
mkdir -p "$TMAGEMM_CACHE_DIR" && cp -rn .kcache/kernels "$TMAGEMM_CACHE_DIR/" 2>/dev/null
sections=""
for s in "${@:-SpeedOfLight}"; do sections="$sections --section $s"; done
IFS=x read -r m n k <<< "$shape"
tag="${shape}-${layout}"
ncu=/usr/local/cuda/bin/ncu
TMAGEMM_CHOICE_REGEX="^$choice\$" timeout 120 $ncu --clock-control none $sections -k regex:gemm_persistent -c 1 \
  build/tmagemm bench --suite "$shape:$layout" --reps 1 --out /tmp/p > "$out/ncu-ours-$tag.txt" 2>&1
cat > /tmp/torch_mm.py <<'PY'
import sys, torch
m, n, k, lay = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
if lay[0] == "c": a = torch.randn(k, m, device="cuda", dtype=torch.bfloat16).t()
b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if lay[1] == "r" else torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
for _ in range(12): torch.mm(a, b)
torch.cuda.synchronize()
PY
timeout 120 $ncu --clock-control none $sections -k regex:nvjet --launch-skip 10 -c 1 --target-processes all \
  python3 /tmp/torch_mm.py "$m" "$n" "$k" "$layout" > "$out/ncu-cublas-$tag.txt" 2>&1
echo "ncu done: $(grep -c . "$out/ncu-ours-$tag.txt") / $(grep -c . "$out/ncu-cublas-$tag.txt") lines"
