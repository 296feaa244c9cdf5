#!/usr/bin/env bash
# device-51a.sh — a one-element addmm bias ((1), (1,1); 0-dim in Python), broadcast as torch.addmm does, on any card:
# the addmm GPU tests (the grid's new "one element" bias shape on persistent TMA, skinny and fallback; stream-K; K = 0),
# memcheck of the small grids, the Python addmm tests against torch.addmm (0-dim, (1,), (1,1) among them, autograd
# too). On an H200 then llm tuned on a fresh database (device-50f). Carry [".carry/bin", ".carry/kcache.tgz",
# ".carry/py312"]. ~6-9 min.
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests 'AddmmGrid.*:Addmm.AlphaBetaInPlaceNanBiasAndKZero:Addmm.StreamKSplitTilesGetTheEpilogue' 300
stage memcheck
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/tmagemm_gpu_tests \
  --gtest_filter='AddmmGrid.*/persistent_tma_small:AddmmGrid.*/skinny_small:AddmmGrid.*/fallback_small' \
  > "$out/memcheck.txt" 2>&1
echo "rc=$?"; summary "$out/memcheck.txt"
export PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1
stage pytest
timeout 150 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_ops.py -k addmm > "$out/pytest-addmm.txt" 2>&1
echo "rc=$?"; tail -4 "$out/pytest-addmm.txt"
keep_logs
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$name" in *H200*) ;; *) stage done; exit 0 ;; esac
BENCH_LOG=autotune bench_suites llm:150
keep_logs
stage done
