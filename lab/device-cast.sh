#!/usr/bin/env bash
# device-cast.sh — one call checking the skinny kernel's A multicast (cast): the skinny GPU tests and the tuner's,
# compute-sanitizer memcheck on three skinny tests with cast choices, then (only if those pass) forced cast / no-cast
# choices on M = 16 and 64 decode shapes (read flush), tuned decode and skinny alone on decode (write and read flush).
# Expects the carried kernel cache (.kcache). Writes $OUT/cast.txt and $OUT/results.tgz.
set -uo pipefail
final=${OUT:-out}
mkdir -p "$final"
out=$(mktemp -d)
export TMAGEMM_CACHE_DIR=/tmp/tmagemm-cast-$RANDOM
mkdir -p "$TMAGEMM_CACHE_DIR" && cp -r .kcache/kernels "$TMAGEMM_CACHE_DIR/"
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
source "$(dirname "$0")/../scripts/device-lib.sh"
{
timeout 120 build/tests/tmagemm_gpu_tests --gtest_filter='Skinny.*:Tuner.*' > "$out/gpu-tests.txt" 2>&1
rc=$?
echo "gpu tests rc=$rc: $(grep -E '^\[  (PASSED|FAILED) ' "$out/gpu-tests.txt" | tr '\n' ' ')"
grep -E "Failure|FAILED|Expected|Which is|first bad|rror" "$out/gpu-tests.txt" | head -20
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/tmagemm_gpu_tests \
  --gtest_filter='Skinny.SplitsWithAnEmptyRank:Skinny.BatchedThroughBmm:Skinny.RowsFrom1To64' > "$out/memcheck.txt" 2>&1
mrc=$?
echo "memcheck rc=$mrc: $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED) ' "$out/memcheck.txt" | tr '\n' ' ')"
if [ $rc = 0 ] && [ $mrc = 0 ]; then
  echo "== decode, tuned"
  TMAGEMM_LOG=autotune timeout 150 build/tmagemm bench --suite decode --out "$out" 2>&1 | grep -A5 -E "^AUTOTUNE|^[0-9]+x|geomean|FAIL|rror" | grep -vE "strides|^--"
  echo "== forced, read flush"
  for c in skinny_256x64_st5_split1 skinny_256x64_st5_split1_cast4 skinny_128x64_st4_split1 skinny_128x64_st4_split1_cast4; do
    TMAGEMM_CHOICE_REGEX="^$c\$" timeout 60 build/tmagemm bench --suite 64x28672x8192,64x14336x4096,64x4096x4096,16x28672x8192 --flush read --out /tmp/forced 2>&1 \
      | grep -E "^[0-9]+x|rror" | awk -v c="$c" '{print $1, $2, $3, $4, $5, $6}' | sed "s/^/$c: /"
  done
  skinny_only_decode write 100
  skinny_only_decode read 100
fi
} 2>&1 | tee "$final/cast.txt"
tar czf "$final/results.tgz" -C "$out" .
