#!/usr/bin/env bash
# device-run4-22.sh — twenty-second session, run 4 (branch wave-tiles: main with the epilogue's vectors): the tuned
# addmm and fp8 suites. Logs and JSON straight into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
bench_suites addmm:220 fp8:260
stage done
