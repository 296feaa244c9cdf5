#!/usr/bin/env bash
# Superseded by lab/2026-12-06-session56/device-56c.sh and device-56d.sh (this script's 80 s a memcheck group is too short for stream-K).
# device-55c.sh — third of three (device-55a.sh says why): compute-sanitizer memcheck of each backend's test group and
# of the paths whose indexing is their own (pad scratch, stream-K fixup, grouped rows, batched descriptors, addmm and
# scaled_mm epilogues, skinny's cluster reduction, PDL), each group within its own limit so that one slow group does
# not hide the rest; first the addmm grid's fallback instances (device-55b.sh runs the others).
# Carry [".carry/bin", ".carry/kcache.tgz"]. ~9 min.
out=$OUT
source scripts/device-lib.sh
use_carry >/dev/null
gpu_tests 'Addmm/AddmmGrid.*fallback*' "${LIMIT1:-120}"
mv "$out/gpu-tests.txt" "$out/gpu-tests-addmm-grid-fallback.txt"
n=0
for f in 'PadTma.*:Pdl.*:Fallback.*:CallContract.*' 'Skinny.*:Bmm.*' 'GroupedMm.*' 'StreamK.*' \
         'ScaledMm.*:Addmm.*-Addmm/AddmmGrid.*'; do
  n=$((n + 1))
  memcheck_tests "$f" "${LIMIT:-80}"
  mv "$out/memcheck.txt" "$out/memcheck-$n.txt"
done
stage done
