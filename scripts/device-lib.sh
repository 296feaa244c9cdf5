# device-lib.sh — helpers shared by the device scripts (sourced, not run). Expects $out (the results folder).

# The result rows of `tmagemm bench` output.
rows() { grep -E "^[0-9]+x|geomean|FAIL|error|skipped"; }

# The decode suite with only the skinny backend, L2 flushed by `write` or `read`; the JSON lands in $out as
# <name>-skinny_only.json (write) or <name>-skinny_only-flush_read.json (read). Usage: skinny_only_decode FLUSH SECONDS
skinny_only_decode() {
  local flush=$1 limit=$2 tmp suffix=-skinny_only
  [ "$flush" = read ] && suffix=-skinny_only-flush_read
  tmp=$(mktemp -d)
  echo "== decode, skinny only$([ "$flush" = read ] && echo ", read flush")"
  TMAGEMM_CUBLASLT=0 TMAGEMM_FALLBACK=0 TMAGEMM_PERSISTENT_TMA=0 timeout "$limit" build/tmagemm bench --suite decode \
    --flush "$flush" --out "$tmp" 2>&1 | rows
  for f in "$tmp"/*-decode.json; do cp "$f" "$out/$(basename "$f" .json)$suffix.json"; done
}

# A fresh tuning database: exports TMAGEMM_CACHE_DIR as a new directory holding a copy of the kernel cache's cubins
# (default .kcache/kernels), so that a run tunes afresh without compiling. Usage: fresh_db [KERNELS_DIR]
fresh_db() {
  export TMAGEMM_CACHE_DIR
  TMAGEMM_CACHE_DIR=$(mktemp -d /tmp/tmagemm-db-XXXXXX)
  cp -r "${1:-.kcache/kernels}" "$TMAGEMM_CACHE_DIR/kernels"
}

# The device scripts' common start: $out created, the carried kernel cache (.carry/kcache.tgz: `tmagemm compile-check`
# output of the build machine) unpacked under a fresh tuning database, the carried binaries (.carry/bin: tmagemm,
# tmagemm_gpu_tests) in build/ unless BINARIES=build (binaries built on the device), and the GPU's clocks printed.
use_carry() {
  mkdir -p "$out" /tmp/kc build/tests
  tar -C /tmp/kc -xzf .carry/kcache.tgz
  if [ "${BINARIES:-carry}" = carry ]; then
    cp .carry/bin/tmagemm build/; [ -f .carry/bin/tmagemm_gpu_tests ] && cp .carry/bin/tmagemm_gpu_tests build/tests/
  fi
  fresh_db /tmp/kc/kernels
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
}

# Stops the script (exit 3) unless the card is an H200: for runs whose figures only that card gives.
h200_only() {
  local name
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  echo "card: $name"
  case "$name" in *H200*) ;; *) echo "not an H200: stopping"; exit 3 ;; esac
}

# Exports TMAGEMM_REDIS_SERVER for the remote cache GPU tests (RemoteCacheGpu.*): one set already, one on PATH, or the
# server carried in .carry/redis/ (the GPU machine has none and no network; built there by
#   mkdir -p .carry/redis && cp -L /usr/bin/redis-server /lib/x86_64-linux-gnu/liblzf.so.1 \
#     /lib/x86_64-linux-gnu/libjemalloc.so.2 .carry/redis/   # and carry .carry/redis
# : Debian 12's binary and the two libraries Ubuntu 24.04 lacks) through a wrapper that puts them on its library
# path. Prints which; returns 1 (tests then skip with a message) when none runs here.
carried_redis() {
  local redis=${TMAGEMM_REDIS_SERVER:-$(command -v redis-server || true)} wrapper=/tmp/tmagemm-redis-server
  if [ -z "$redis" ] && [ -x .carry/redis/redis-server ]; then
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
      "$PWD/.carry/redis" "$PWD/.carry/redis/redis-server" > "$wrapper"
    chmod +x "$wrapper"
    if "$wrapper" --version > /dev/null 2>&1; then redis=$wrapper; else echo "carried redis-server does not run here:"; "$wrapper" --version 2>&1 | head -3; fi
  fi
  if [ -z "$redis" ]; then echo "redis-server: none here, none carried in .carry/redis/"; return 1; fi
  export TMAGEMM_REDIS_SERVER=$redis
  echo "redis-server: $redis ($("$redis" --version | head -n 1))"
}

# A stage header with the time, and the one-line summary of a gtest / compute-sanitizer log.
stage() { echo "== $* ($(date +%T))"; }
summary() { grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) |tests ran" "$1" | tr '\n' ' '; echo; }

# The GPU tests in filter $1 (a TEST_FILTER in the environment replaces it) within $2 seconds, logged to
# $out/gpu-tests.txt; the summary and the first failures printed.
gpu_tests() {
  stage "gpu tests"
  timeout "$2" build/tests/tmagemm_gpu_tests --gtest_filter="${TEST_FILTER:-$1}" > "$out/gpu-tests.txt" 2>&1
  echo "rc=$?"; summary "$out/gpu-tests.txt"; grep -E "^\[  FAILED|Failure" -A5 "$out/gpu-tests.txt" | head -30
}

# compute-sanitizer memcheck of the GPU tests in filter $1 within $2 seconds, logged to $out/memcheck.txt.
memcheck_tests() {
  stage "memcheck"
  timeout "$2" compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/tmagemm_gpu_tests \
    --gtest_filter="$1" > "$out/memcheck.txt" 2>&1
  echo "rc=$?"; summary "$out/memcheck.txt"; grep -E "^\[ RUN" "$out/memcheck.txt" | tail -1
}

# `tmagemm bench` on each "suite:seconds" argument, logged to $out/bench-<suite>.txt (JSON into $out), rows printed.
bench_suites() {
  local s name limit
  for s in "$@"; do
    name=${s%%:*} limit=${s##*:}
    stage "bench $name"
    TMAGEMM_LOG=${BENCH_LOG:-} timeout "$limit" build/tmagemm bench --suite "$name" --out "$out" \
      > "$out/bench-$name.txt" 2>&1
    echo "rc=$?"; rows < "$out/bench-$name.txt"
  done
}

# Suites tuned per exact M (TMAGEMM_M_BUCKETS=0, as for static shapes), write flush, AUTOTUNE logs, into $out/exact.
# Usage: exact_suites "SUITE ..." SECONDS
exact_suites() {
  local s
  mkdir -p "$out/exact"
  for s in $1; do
    stage "bench $s (exact M tuning)"
    TMAGEMM_M_BUCKETS=0 TMAGEMM_LOG=autotune timeout "$2" build/tmagemm bench --suite "$s" \
      --out "$out/exact" > "$out/exact/bench-$s.txt" 2>&1
    echo "rc=$?"; rows < "$out/exact/bench-$s.txt"
  done
}

# Profiling builds (TMAGEMM_TRACE) of forced skinny choices under the read flush; the last timed launch's per-CTA
# timeline summarised by lab/skinny-trace.py, into $out/traces.txt. Usage: skinny_traces "SHAPE CHOICE" ...
skinny_traces() {
  local sc f
  for sc in "$@"; do
    set -- $sc
    f=/tmp/trace-$1-$2.csv
    TMAGEMM_TRACE=$f TMAGEMM_CHOICE_REGEX="^$2\$" timeout 120 build/tmagemm bench --suite "$1" --flush read \
      --reps 20 --out /tmp/tr > /tmp/trace-bench.txt 2>&1
    echo "== $1 $2 (rc=$?)"; python3 lab/skinny-trace.py "$f"
  done 2>&1 | tee "$out/traces.txt"
}

# A profiling build (TMAGEMM_TRACE) of a forced persistent-TMA choice on one shape (write flush, 20 reps); the last
# launch's per-CTA timeline summarised by lab/persistent-trace.py. Usage: persistent_trace SHAPE CHOICE
persistent_trace() {
  local f=/tmp/tr-$1-$2.csv
  TMAGEMM_TRACE=$f TMAGEMM_CHOICE_REGEX="^$2\$" timeout 120 build/tmagemm bench --suite "$1" --reps 20 --out /tmp/tr 2>&1 \
    | grep -E "^[0-9]+x|rror" | sed "s/^/$2: /"
  python3 lab/persistent-trace.py "$f"
}

# `tmagemm bench` of one suite timed isolated (events around the run) or back to back (the run right after the flush
# kernel, less the flush's own median: how a serving loop sees it, PDL overlapping the kernel's start), under the
# write or read flush; log and JSON into $out/<suite>-<iso|b2b>-<flush>/, rows printed.
# Usage: timed_suite SUITE iso|b2b write|read SECONDS
timed_suite() {
  local d="$out/$1-$2-$3" args="--flush $3"
  [ "$2" = b2b ] && args="$args --back-to-back"
  mkdir -p "$d"
  stage "bench $1, $2, $3 flush"
  TMAGEMM_LOG=${BENCH_LOG:-autotune} timeout "$4" build/tmagemm bench --suite "$1" $args --out "$d" > "$d/bench.txt" 2>&1
  echo "rc=$?"; rows < "$d/bench.txt"
}

# Forced choices (lab/bench-forced.sh) on one suite or shape list under each flush of $FLUSHES (default "read write"),
# logged to $out/<name>-forced-<flush>.txt. Usage: forced_each_flush NAME SHAPES CHOICE...
forced_each_flush() {
  local name=$1 shapes=$2 fl
  shift 2
  for fl in ${FLUSHES:-read write}; do
    stage "$name forced, flush $fl"
    BENCH_ARGS="--flush $fl" lab/bench-forced.sh "$shapes" "$@" 2>&1 | tee -a "$out/$name-forced-$fl.txt"
  done
}

# The decode suite tuned on a fresh database (AUTOTUNE log), then benchmarked under the read flush on the same one.
# Usage: decode_tuned_both_flushes KERNELS_DIR
decode_tuned_both_flushes() {
  fresh_db "$1"
  BENCH_LOG=autotune bench_suites decode:120
  stage "bench decode --flush read"
  timeout 100 build/tmagemm bench --suite decode --flush read --out "$out" > "$out/bench-decode-read.txt" 2>&1
  echo "rc=$?"; rows < "$out/bench-decode-read.txt"
}

# Few files come back from $OUT: moves $out's logs to /tmp/logs and packs them all into $out/logs.tgz (call after
# each step, so that a run cut short still returns what it logged).
keep_logs() { mkdir -p /tmp/logs; mv "$out"/*.txt /tmp/logs/ 2>/dev/null; tar czf "$out/logs.tgz" -C /tmp/logs .; }

# A second build carried in .carry/lab (tmagemm, tmagemm_gpu_tests, kcache.tgz) beside main's (use_carry first): main's
# binary kept as /tmp/tmagemm-main, the second as /tmp/tmagemm-$1 with its kernels in /tmp/kcl/kernels; its GPU tests
# take build/tests; a fresh tuning database on its kernels. Usage: use_lab_build NAME
use_lab_build() {
  cp build/tmagemm /tmp/tmagemm-main
  mkdir -p /tmp/kcl && tar -C /tmp/kcl -xzf .carry/lab/kcache.tgz
  cp .carry/lab/tmagemm "/tmp/tmagemm-$1"
  cp .carry/lab/tmagemm_gpu_tests build/tests/tmagemm_gpu_tests
  fresh_db /tmp/kcl/kernels
}

# Forced choices (forced_each_flush) with main's binary, then use_lab_build's LAB, each on its own kernels; logs
# NAME-main-forced-<flush>.txt and NAME-LAB-forced-<flush>.txt. Usage: forced_main_and_lab LAB NAME SHAPES CHOICE...
forced_main_and_lab() {
  local lab=$1 name=$2 shapes=$3 v kc
  shift 3
  for v in main "$lab"; do
    [ "$v" = main ] && kc=/tmp/kc/kernels || kc=/tmp/kcl/kernels
    export TMAGEMM_CACHE_DIR=/tmp/forced-$v
    mkdir -p "$TMAGEMM_CACHE_DIR" && cp -r --update=none "$kc" "$TMAGEMM_CACHE_DIR/"
    TMAGEMM_BIN=/tmp/tmagemm-$v forced_each_flush "$name-$v" "$shapes" "$@"
    keep_logs
  done
}
