#!/usr/bin/env bash
# device-pairs2-18.sh — run 2 of the eighteenth session: the pairs schedule after its fix (both CTAs of a pair take the
# same share_b when one tile is a group's added CTA tile; run 1 hung in GroupedMm.EveryConfig there), GroupedMm and
# TuneBuckets GPU tests, memcheck of GroupedMm.EveryConfig, then the grouped suite tuned (JSON to $OUT). Logs to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-GroupedMm.*:TuneBuckets.*}" 200
memcheck_tests "GroupedMm.EveryConfig" 120
bench_suites grouped:240
stage done
