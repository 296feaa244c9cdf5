#!/usr/bin/env bash
# device-skinny-16.sh — the skinny kernel's start and reduction changes (sixteenth session, issue 21 point 3) on the
# H200: GPU tests of every skinny path, memcheck of two, traces of two decode choices (lab/skinny-trace.py), then the
# decode suite tuned afresh (both flushes timed by the tuner) under the write flush and, same DB, the read flush.
# Carried binaries (.carry/bin); kernels compile on the device. Logs and JSON to $OUT.
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "Skinny.*:Bmm.SkinnyTakesBatches:ScaledMm.EveryFp8Choice:Carveout.Skinny:AccuracyFloor.*:TuneBuckets.SkinnyRowsShareTheirBucket" 260
memcheck_tests "Skinny.SplitsWithAnEmptyRank:Skinny.RowsFrom1To64" 150
stage "traces"
skinny_traces "1x4096x4096 skinny_256x64_st5_split4" "64x4096x4096 skinny_64x64_st12_split2"
stage "bench decode (write flush, tuned afresh)"
TMAGEMM_LOG=autotune timeout 240 build/tmagemm bench --suite decode --out "$out" > "$out/bench-decode.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-decode.txt"
stage "bench decode (read flush, same DB)"
mkdir -p /tmp/readjson
timeout 200 build/tmagemm bench --suite decode --flush read --out /tmp/readjson > "$out/bench-decode-read.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-decode-read.txt"
for f in /tmp/readjson/*.json; do cp "$f" "$out/$(basename "$f" .json)-flush_read.json"; done
stage done
