#!/usr/bin/env bash
# device-56a.sh — one call for whichever card comes. On an H200: device-55a.sh (the grouped suite on a fresh database,
# then the long GPU test groups). On any other card (an H100): what the fifty-fourth and fifty-fifth sessions' H100
# calls left of version 0.1.4's GPU suite — the addmm grid's skinny_large and fallback instances — then memcheck of
# the first three groups of device-55c.sh (its other two: device-56b.sh). ~7.5 min elsewhere.
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/redis"].
out=$OUT
source scripts/device-lib.sh
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) exec bash lab/2026-12-06-session55/device-55a.sh ;;
esac
use_carry >/dev/null
gpu_tests 'Addmm/AddmmGrid.*skinny_large:Addmm/AddmmGrid.*fallback*' "${LIMIT1:-200}"
mv "$out/gpu-tests.txt" "$out/gpu-tests-addmm-grid-rest.txt"
n=0
for f in 'PadTma.*:Pdl.*:Fallback.*:CallContract.*' 'Skinny.*:Bmm.*' 'GroupedMm.*'; do
  n=$((n + 1))
  memcheck_tests "$f" "${LIMIT:-80}"
  mv "$out/memcheck.txt" "$out/memcheck-$n.txt"
done
stage done
