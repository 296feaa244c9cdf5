#!/usr/bin/env bash
# device-suites-19.sh — nineteenth session, run 5 (the landing build): the grouped, square and llm suites tuned afresh,
# JSON and logs to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
bench_suites grouped:130 square:60 llm:190
stage done
