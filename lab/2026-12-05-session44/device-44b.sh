#!/usr/bin/env bash
# device-44b.sh — the forty-fourth session's second call, on main with the cheaper stream-K fixup (carried at its
# kernels: lab/prepare-39.sh PART=1) and the tuner's flush-hold rule. Carry [".carry/bin", ".carry/kcache.tgz"].
#   1. The waves suite forced on 128x256 (1x1 and 2x1) whole tiles and their stream-K twins: where stream-K stands
#      against whole tiles now (the first call, on an H100, had only the stream-K configs, main against the patch).
#   2. Tuned, each on a fresh database: waves, decode (write flush, then read flush on the same database), grouped,
#      square, llm.
out=$OUT
source scripts/device-lib.sh
use_carry
p=persistent_tma_
FLUSHES=write forced_each_flush waves waves ${p}128x256x64_s4_c2_g8_tmastore ${p}128x256x64_s4_c2_g8_tmastore_sk \
  ${p}128x256x64_s4_c2_g8_cm2_tmastore ${p}128x256x64_s4_c2_g8_cm2_tmastore_sk
fresh_db /tmp/kc/kernels
BENCH_LOG=autotune bench_suites waves:120
decode_tuned_both_flushes /tmp/kc/kernels
keep_logs
for s in grouped:200 square:150 llm:200; do
  fresh_db /tmp/kc/kernels
  BENCH_LOG=autotune bench_suites $s
  keep_logs
done
stage done
