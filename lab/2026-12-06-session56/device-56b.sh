#!/usr/bin/env bash
# device-56b.sh — the last two memcheck groups of device-55c.sh (stream-K; scaled_mm and addmm without its grid), on
# whichever card comes (after device-56a.sh ran on an H100). ~3 min. Carry [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry >/dev/null
n=3
for f in 'StreamK.*' 'ScaledMm.*:Addmm.*-Addmm/AddmmGrid.*'; do
  n=$((n + 1))
  memcheck_tests "$f" "${LIMIT:-80}"
  mv "$out/memcheck.txt" "$out/memcheck-$n.txt"
done
stage done
