#!/usr/bin/env bash
# device-56c.sh — replaces device-55c.sh, whose 80 s a memcheck group the fifty-sixth session measured too short on an
# H100 (memcheck runs the stream-K thread tests ~6.5x slower: 9-19 s -> 60-130 s). The addmm grid's fallback
# instances (~40 s), then memcheck of four groups: PadTma/Pdl/Fallback/CallContract (23 s on the H100), Skinny/Bmm
# (32 s), GroupedMm (65 s), ScaledMm + Addmm without its grid (~200 s). Stream-K's memcheck (~420 s) is
# device-56d.sh. ~6.5 min. Carry [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry >/dev/null
gpu_tests 'Addmm/AddmmGrid.*fallback*' "${LIMIT1:-120}"
mv "$out/gpu-tests.txt" "$out/gpu-tests-addmm-grid-fallback.txt"
n=0
for f in 'PadTma.*:Pdl.*:Fallback.*:CallContract.*:60' 'Skinny.*:Bmm.*:80' 'GroupedMm.*:130' \
         'ScaledMm.*:Addmm.*-Addmm/AddmmGrid.*:300'; do
  n=$((n + 1))
  memcheck_tests "${f%:*}" "${f##*:}"
  mv "$out/memcheck.txt" "$out/memcheck-$n.txt"
done
stage done
