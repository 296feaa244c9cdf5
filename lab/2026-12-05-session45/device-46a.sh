#!/usr/bin/env bash
# device-46a.sh — for the next session's first call (not run here: no device time left). Carry [".carry/bin",
# ".carry/kcache.tgz"] (lab/prepare-39.sh PART=1 at HEAD: builds .carry/bin/dsmem_reduce too). ~5 min.
#   1. lab/probes/dsmem_reduce.cu: what the skinny kernel's split reduction waits on (DSMEM load latency per unit,
#      bandwidth, stores, a busy DRAM): five ways to read the partials, alone and beside a DRAM stream.
#   2. device-45d.sh: main tuned on fresh databases (the forty-fourth session's stream-K cut and flush-hold rule,
#      never yet on an H200): waves, decode under both flushes, grouped.
out=$OUT
source scripts/device-lib.sh
use_carry
stage "dsmem_reduce probe"
timeout 120 .carry/bin/dsmem_reduce > "$out/dsmem-reduce.txt" 2>&1
echo "rc=$?"; cat "$out/dsmem-reduce.txt"
keep_logs
bash lab/2026-12-05-session45/device-45d.sh  # waves, decode under both flushes, grouped
