#!/usr/bin/env bash
# device-run2-22.sh — twenty-second session, run 2 (branch wave-tiles with epilogue-vectors merged): the tuned waves
# suite with M buckets (the default) isolated and back to back, and tuned per exact M. Logs straight into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
timed_suite waves iso write 150
exact_suites waves 150
timed_suite waves b2b write 150
stage done
