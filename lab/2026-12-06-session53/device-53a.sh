#!/usr/bin/env bash
# device-53a.sh — device-52b (every target suite under version 0.1.4's flush-clear rule, each tuned on a fresh
# database; H200 only, exit 3 at once elsewhere) and then decode timed back to back after the flush kernel under both
# flushes on decode's own tuning (`bench --back-to-back`: how a serving loop sees it, PDL overlapping the kernel's
# start; last measured on the H200 in the twenty-first session, 1.133 / 1.072). Predictions as device-52b; decode back
# to back ~1.10 / ~1.06. Carry [".carry/bin", ".carry/kcache.tgz"]. ~7 min. Cut down for a short budget by
# FIRST (suites before decode), DECODE=0 (no decode) and LAST (suites after it): device-53c.sh, device-53d.sh.
out=$OUT
source scripts/device-lib.sh
h200_only
use_carry
for s in ${FIRST-llm:150 waves:120 square:90}; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
if [ "${DECODE:-1}" = 1 ]; then
  decode_tuned_both_flushes /tmp/kc/kernels
  keep_logs
  # On decode's own tuning (TMAGEMM_CACHE_DIR still its database): back to back, logs and JSON packed with the logs.
  for fl in write read; do (out=/tmp/logs; BENCH_LOG= timed_suite decode b2b "$fl" 100); keep_logs; done
fi
for s in ${LAST-bmm:100 grouped:150}; do fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites "$s"; keep_logs; done
stage done
