#!/usr/bin/env bash
# device-decode-16.sh — issue 21 point 3 (decode under both flushes) on the H200, sixteenth session:
#   1. lab/probes/decode_floor (the time to stream a decode weight alone, both flushes; carried in .carry/probe);
#   2. the decode suite tuned afresh with the tuner timing memory-bound problems after both flushes
#      (TMAGEMM_LOG=autotune: each candidate's write / read medians), write flush;
#   3. the same tuning DB, bench under the read flush (the decision made once, measured under both);
#   NCU=1: ncu kernel durations of skinny grids on 1x4096x4096 and of the probe's stream;
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
# Optional (NCU=1): ncu's kernel duration (no launch overhead, caches flushed, clocks untouched) of two skinny grids
# on 1x4096x4096 (64 and 128 CTAs) and of the probe's 132-CTA weight stream.
if [ "${NCU:-0}" = 1 ]; then
  stage "ncu"
  m=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size
  for c in ${NCU_CHOICES:-skinny_128x64_st8_split2 skinny_64x64_st12_split2 skinny_128x64_st4_split4}; do
    echo "== $c"
    TMAGEMM_TUNING=heuristic TMAGEMM_CHOICE_REGEX="^$c\$" timeout 90 /usr/local/cuda/bin/ncu --clock-control none \
      --metrics $m -k regex:gemm_skinny -c 2 build/tmagemm bench --suite 1x4096x4096 --reps 1 --out /tmp/n 2>&1 \
      | grep -E "^  [a-zA-Z_]|^    [a-z]" | cut -c1-150
  done > "$out/ncu.txt" 2>&1
  timeout 60 /usr/local/cuda/bin/ncu --clock-control none --metrics $m -k regex:bulk_stream -c 2 \
    .carry/probe/decode_floor 2>&1 | grep -E "^  [a-zA-Z_]|^    [a-z]" | cut -c1-150 >> "$out/ncu.txt"
  cat "$out/ncu.txt"
fi
# Optional: suites under the write flush only (TMAGEMM_LOG=autotune), same DB.
for s in ${WRITE_SUITES:-}; do
  stage "bench $s (write flush)"
  TMAGEMM_LOG=autotune timeout "${BENCH_S:-240}" build/tmagemm bench --suite "$s" --out "$out" > "$out/bench-$s.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-$s.txt"
done
# Optional: suites tuned per exact M (TMAGEMM_M_BUCKETS=0, as for static shapes), into $out/exact.
[ -n "${EXACT_SUITES:-}" ] && exact_suites "$EXACT_SUITES" "${BENCH_S:-240}"
stage done
