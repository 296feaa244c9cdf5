#!/usr/bin/env bash
# device-decode-16.sh — issue 21 point 3 (decode under both flushes) on the H200, sixteenth session:
#   1. lab/probes/decode_floor (the time to stream a decode weight alone, both flushes; carried in .carry/probe);
#   2. the decode suite tuned afresh with the tuner timing memory-bound problems after both flushes
#      (TMAGEMM_LOG=autotune: each candidate's write / read medians), write flush;
#   3. the same tuning DB, bench under the read flush (the decision made once, measured under both);
#   4. with WRITE_SUITES="grouped ...": those suites under the write flush only;
#   5. with EXACT_SUITES="waves ...": those suites tuned per exact M (TMAGEMM_M_BUCKETS=0), into $OUT/exact.
# Carried binaries (.carry/bin); kernels compile on the device. Logs and JSON to $OUT (decode JSON of the read flush
# renamed -flush_read).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
if [ "${PROBE:-1}" = 1 ]; then
  stage "probe: decode floor"
  timeout 120 .carry/probe/decode_floor > "$out/decode-floor.txt" 2>&1; echo "rc=$?"
fi
for s in ${SUITES:-decode}; do
  stage "bench $s (write flush, tuned afresh)"
  TMAGEMM_LOG=autotune timeout "${BENCH_S:-240}" build/tmagemm bench --suite "$s" --out "$out" > "$out/bench-$s.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-$s.txt"
  stage "bench $s (read flush, same DB)"
  mkdir -p /tmp/readjson
  timeout "${BENCH_S:-240}" build/tmagemm bench --suite "$s" --flush read --out /tmp/readjson \
    > "$out/bench-$s-read.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-$s-read.txt"
  for f in /tmp/readjson/*.json; do cp "$f" "$out/$(basename "$f" .json)-flush_read.json"; done
done
# Optional: suites under the write flush only (TMAGEMM_LOG=autotune), same DB.
for s in ${WRITE_SUITES:-}; do
  stage "bench $s (write flush)"
  TMAGEMM_LOG=autotune timeout "${BENCH_S:-240}" build/tmagemm bench --suite "$s" --out "$out" > "$out/bench-$s.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-$s.txt"
done
# Optional: suites tuned per exact M (TMAGEMM_M_BUCKETS=0, as for static shapes), write flush, into $out/exact.
if [ -n "${EXACT_SUITES:-}" ]; then
  mkdir -p "$out/exact"
  for s in $EXACT_SUITES; do
    stage "bench $s (exact M tuning)"
    TMAGEMM_M_BUCKETS=0 TMAGEMM_LOG=autotune timeout "${BENCH_S:-240}" build/tmagemm bench --suite "$s" \
      --out "$out/exact" > "$out/exact/bench-$s.txt" 2>&1
    echo "rc=$?"; rows < "$out/exact/bench-$s.txt"
  done
fi
stage done
