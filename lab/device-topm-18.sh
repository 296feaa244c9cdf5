#!/usr/bin/env bash
# device-topm-18.sh — run 3 of the eighteenth session: the bucket's largest M on its own fastest (tune::top_m_choice):
# the TuneBuckets GPU tests, decode tuned afresh (both flushes timed by the tuner) under the write flush and, same DB, the read flush; then the
# waves suite (bucketed tuning, the default). JSON and logs to $OUT. (Run 3 ran it without the GPU tests, with the
# first rule: the largest M left the bucket's winner only for a choice more than the tie margin faster; run 4 with
# the second rule: that M runs its own timings' winner; run 5 with cuBLASLt's other ranks timed on that M as well, so
# that it runs what an exact tuning would, and EXTRA_SUITES="square:120 llm:200".)
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
gpu_tests "${TEST_FILTER:-TuneBuckets.*}" 150
stage "bench decode (write flush, tuned afresh)"
TMAGEMM_LOG=autotune timeout 200 build/tmagemm bench --suite decode --out "$out" > "$out/bench-decode.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-decode.txt"; grep "itself runs" "$out/bench-decode.txt"
stage "bench decode (read flush, same DB)"
mkdir -p /tmp/readjson
timeout 140 build/tmagemm bench --suite decode --flush read --out /tmp/readjson > "$out/bench-decode-read.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-decode-read.txt"
for f in /tmp/readjson/*.json; do cp "$f" "$out/$(basename "$f" .json)-flush_read.json"; done
BENCH_LOG=autotune bench_suites waves:150 ${EXTRA_SUITES:-}
grep "itself runs" "$out/bench-waves.txt"
stage done
