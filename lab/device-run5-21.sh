#!/usr/bin/env bash
# device-run5-21.sh — twenty-first session, run 5 (run 3's build): waves timed isolated and back to back (write flush,
# one tuning DB), then the fp8 suite tuned. Logs straight into $OUT (the device time was nearly spent).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
for m in iso b2b; do timed_suite waves $m write 100; done
timed_suite fp8 iso write 90
stage done
