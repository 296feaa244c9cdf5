#!/usr/bin/env bash
# device-run6-21.sh — prepared in the twenty-first session, not yet run (no device time left): what the epilogue costs the 128x256 TMA-store
# config: mm and addmm forced to it in one process run each, against cuBLASLt. Logs straight into $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
c='^persistent_tma_128x256x64_s4_c2_g8_tmastore$'
stage "mm forced"
TMAGEMM_CHOICE_REGEX="$c" timeout 40 build/tmagemm bench --suite "4096x14336x4096,8192x8192x8192,8192x28672x8192:rc" --out "$out/mm" > "$out/mm.txt" 2>&1
echo "rc=$?"; rows < "$out/mm.txt"
stage "addmm forced"
TMAGEMM_CHOICE_REGEX="$c" timeout 60 build/tmagemm bench --suite addmm --out "$out/addmm" > "$out/addmm.txt" 2>&1
echo "rc=$?"; rows < "$out/addmm.txt" | head -9
stage done
