#!/usr/bin/env bash
# device-run6-27.sh — twenty-seventh session, run 6: the tile boundary's two costs (run 5) attacked behind lab switches
# (TMAGEMM_LAB_FLAGS: bit 0 the producer prefetches the next tile's first three K blocks into L2 eight blocks before
# its unit's last load; bit 1 the deferred TMA stores go out after odd K blocks only). Forced 128x256 TMA-store (1x1),
# same-run cuBLASLt, each flag setting; then the config sweep test with both switches on. Carry [".carry/bin",
# ".carry/kcache.tgz"]. Logs into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
c=persistent_tma_128x256x64_s4_c2_g8_tmastore
shapes=8192x8192x1024,4096x4096x4096,3000x5000x1000,4096x14336x4096
for round in 1 2; do
  for flags in 0 3 1 2; do
    echo "-- flags $flags round $round"
    TMAGEMM_LAB_FLAGS=$flags TMAGEMM_CHOICE_REGEX="^$c\$" timeout 40 build/tmagemm bench --suite $shapes --out /tmp/b 2>&1 \
      | grep -E "^[0-9]+x|rror|geomean"
  done
done 2>&1 | tee "$out/flags.txt"
TMAGEMM_LAB_FLAGS=3 gpu_tests "PersistentTma.EveryConfigLoopsOverTiles" 70
stage done
