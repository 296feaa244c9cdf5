#!/usr/bin/env bash
# device-skinny-17.sh — the skinny kernel's split-1 path (seventeenth session, issue 21 point 3) on the H200: GPU tests
# of the skinny paths, memcheck of two, timelines of split-1 and split-2 choices on decode shapes (lab/skinny-trace.py),
# then the decode suite tuned afresh (the tuner times both flushes) under the write flush and, same DB, the read flush.
# Carried binaries (.carry/bin); kernels compile on the device. Logs and JSON to $OUT. (Run 2 of the session measured a
# split-1 path storing from registers; run 3 the one that landed: the partial tile read back locally.)
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "Skinny.*:Bmm.SkinnyTakesBatches:ScaledMm.EveryFp8Choice:Carveout.Skinny" 150
memcheck_tests "Skinny.SplitsWithAnEmptyRank:Skinny.RowsFrom1To64" 120
stage "traces"
skinny_traces "16x14336x4096 skinny_128x128_st4_split1" "1x14336x4096 skinny_256x64_st5_split1" \
  "64x4096x4096 skinny_64x64_st12_split2"
stage "bench decode (write flush, tuned afresh)"
TMAGEMM_LOG=autotune timeout 200 build/tmagemm bench --suite decode --out "$out" > "$out/bench-decode.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-decode.txt"
stage "bench decode (read flush, same DB)"
mkdir -p /tmp/readjson
timeout 150 build/tmagemm bench --suite decode --flush read --out /tmp/readjson > "$out/bench-decode-read.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-decode-read.txt"
for f in /tmp/readjson/*.json; do cp "$f" "$out/$(basename "$f" .json)-flush_read.json"; done
stage done
