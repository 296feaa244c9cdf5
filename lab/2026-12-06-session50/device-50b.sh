#!/usr/bin/env bash
# device-50b.sh — on an H200 only (exit 3 elsewhere), after device-50a on the same machine. The two waves rows the
# search left level on the H200 (4224^3 1.001, 6144x1536x4096 0.995 in device-49d, both cuBLASLt's third pick):
# (1) waves tuned per exact M (TMAGEMM_M_BUCKETS=0), fresh database: at M = 4224 the bucket rule timed 11 choices
# (the bucket winner, cuBLASLt's ranks and the search's tiles), not our stream-K configs. Prediction: 1.03-1.04,
# the two rows within 1 % of 1.00. (2) Our stream-K and best whole tiles forced on the two rows (lab/bench-forced.sh).
# Prediction: 128x256 stream-K 0.97-1.01 of cuBLASLt's best of four. Carry [".carry/bin", ".carry/kcache.tgz"]. ~4 min.
out=$OUT
source scripts/device-lib.sh
h200_only
use_carry
fresh_db /tmp/kc/kernels
stage "waves per exact M"
TMAGEMM_M_BUCKETS=0 TMAGEMM_LOG=autotune timeout 200 build/tmagemm bench --suite waves --out "$out/exact" \
  > "$out/bench-waves-exact.txt" 2>&1
echo "rc=$?"; rows < "$out/bench-waves-exact.txt"
stage forced
fresh_db /tmp/kc/kernels
bash lab/bench-forced.sh 4224x4224x4224,6144x1536x4096 \
  persistent_tma_128x256x64_s4_c2_g8_tmastore_sk persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk \
  persistent_tma_128x128x64_s6_c2_g8_tmastore_sk persistent_tma_256x128x64_s4_c2_g8_tmastore \
  persistent_tma_128x128x64_s6_c2_g8_tmastore_pp 2>&1 | tee "$out/forced-waves2.txt"
keep_logs
stage done
