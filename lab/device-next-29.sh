#!/usr/bin/env bash
# device-next-29.sh — for the first device calls of the session after the twenty-eighth. Build here, then
# `tmagemm compile-check` into .kcache, tar it (.carry/kcache.tgz), copy build/tmagemm and build/tests/tmagemm_gpu_tests
# into .carry/bin, and build the CPython 3.12 extension (lab/build-ext-cp312.sh) into .carry/py312.
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/py312"]. Logs and JSON into $OUT.
#   PART=1: the whole Python suite (it did not fit run 7's 170 s), then the tuner's and fault tests (29ec618, the rank
#           timing's error path, never ran on a GPU).                                                       (~400 s)
#   PART=2: decode under both flushes, grouped, bmm and fp8 tuned afresh on the current main (their JSON is from
#           earlier sessions' code).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
case "${PART:-1}" in
1)
  stage pytest
  PYTHONPATH=$PWD/.carry/py312 PYTHONUNBUFFERED=1 timeout 300 python3 -m pytest -q -rs -p no:cacheprovider \
    --durations=10 tests/python > "$out/pytest.txt" 2>&1
  echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR|SKIPPED|^[0-9.]+s " "$out/pytest.txt" | tail -16
  gpu_tests "TuneBuckets.*:Tuner.*:Faults.*" 90
  ;;
2)
  bench_suites decode:150
  BENCH_ARGS= timeout 150 build/tmagemm bench --suite decode --flush read --out "$out" 2>&1 | rows
  bench_suites grouped:200 bmm:120 fp8:200
  ;;
esac
stage done
