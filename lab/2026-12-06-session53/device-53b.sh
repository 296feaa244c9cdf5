#!/usr/bin/env bash
# device-53b.sh — what ran on the H100 that device-53a's call got (16:00): decode tuned on a fresh database, timed
# isolated under both flushes, then back to back after the flush kernel under both flushes on the same tuning
# (`bench --back-to-back`, PDL overlapping the kernel's start). Carry [".carry/bin", ".carry/kcache.tgz"]. ~70 s.
out=$OUT
source scripts/device-lib.sh
use_carry >/dev/null
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
for fl in write read; do (out=/tmp/logs; timed_suite decode b2b "$fl" 100); keep_logs; done
