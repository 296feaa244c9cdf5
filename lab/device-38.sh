#!/usr/bin/env bash
# device-38.sh — the thirty-eighth session's device calls: cluster split-K (kernels/cluster_split_k.cuh, the _ks2
# configs). Build here, `tmagemm compile-check` into .kcache, tar it (.carry/kcache.tgz), copy build/tmagemm and
# build/tests/tmagemm_gpu_tests into .carry/bin; carry [".carry/bin", ".carry/kcache.tgz"]. One call each:
#   PART=1: cuBLASLt's top-8 algorithms' configs on the waves shapes (.carry/bin/cublaslt_algo_config, built from
#           lab/probes/cublaslt_algo_config.cu); ClusterSplitK.* and PersistentTma.EveryConfigLoopsOverTiles (every table row, the new ones too), memcheck
#           of the exchange across tiles; then the ks2 configs forced on few-tile shapes beside the whole-tile config
#           that wins 1000^3 today, each row's cuBLASLt in the same run.
#   PART=2: the ks2 config forced on M = 128 rows (B streamed once by 128 CTAs instead of 64) beside the 64x128 split-N
#           2x1 config that wins 128x8192x8192 rc today; the llm suite tuned (fresh database, AUTOTUNE logs).
#   PART=3: the three-consumer configs and 128x160 (cuBLASLt's wave-fitting tiles): every table row's GPU tests, then
#           each forced on the waves shapes they were made for.
#   PART=4: the square suite tuned, then the waves suite (fresh databases).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
ks="persistent_tma_128x128x64_s4_c2_g8_tmastore_ks2"
case "${PART:-1}" in
1)
  stage "cuBLASLt's picks"  # lab/probes/cublaslt_algo_config.cu, built here into .carry/bin
  timeout 60 .carry/bin/cublaslt_algo_config 1000x1000x1000 1536x1536x1536 2560x2560x2560 3000x5000x1000 \
    1024x12288x4096 2304x2304x8192 6144x1536x4096 4224x4224x4224 2>&1 | tee "$out/cublaslt-algos.txt"
  gpu_tests "ClusterSplitK.*:PersistentTma.EveryConfigLoopsOverTiles" 200
  memcheck_tests "ClusterSplitK.F16BatchesAndPlainStores:ClusterSplitK.TwoRunsGiveTheSameBits" 150
  stage "forced"
  # shellcheck disable=SC2086
  lab/bench-forced.sh "1000x1000x1000,1000x1000x1000:rc,1024x1024x4096,768x1024x8192,1024x1536x8192,1000x1000x4000" \
    $ks persistent_tma_64x128x128_s4_c1_g8_cm2_tmastore persistent_tma_128x128x64_s6_c2_g8_tmastore 2>&1 \
    | tee "$out/forced.txt"
  ;;
2)
  stage "forced, M = 128"
  # shellcheck disable=SC2086
  lab/bench-forced.sh "128x8192x8192,128x8192x8192:rc,128x4096x14336,128x4096x14336:rc,128x8192x4096" $ks \
    persistent_tma_64x128x64_s8_c2_sn_g8_cm2_tmastore 2>&1 | tee "$out/forced-m128.txt"
  BENCH_LOG=autotune bench_suites llm:330
  ;;
3)
  gpu_tests "PersistentTma.EveryConfig*:PersistentTma.TmaStoreConfigsOnOutputsTmaCannotAddress" 240
  stage "forced, cuBLASLt's tiles"
  lab/bench-forced.sh "1536x1536x1536,1536x1536x1536:rc,4224x4224x4224,6144x1536x4096,2560x2560x2560,4096x4096x4096,1000x1000x1000" \
    persistent_tma_192x192x64_s3_c3_g8_tmastore persistent_tma_192x96x64_s4_c3_g8_tmastore \
    persistent_tma_128x160x64_s4_c2_g8_tmastore 2>&1 | tee "$out/forced-tiles.txt"
  ;;
5)
  # PART=3, PART=2's forced rows and PART=4 in one call (a machine is scarce): GPU tests, forced rows, waves and
  # square tuned.
  gpu_tests "PersistentTma.EveryConfig*:PersistentTma.TmaStoreConfigsOnOutputsTmaCannotAddress" 150
  stage "forced, cuBLASLt's tiles"
  lab/bench-forced.sh "1536x1536x1536,1536x1536x1536:rc,4224x4224x4224,6144x1536x4096,2560x2560x2560,4096x4096x4096,1000x1000x1000" \
    persistent_tma_192x192x64_s3_c3_g8_tmastore persistent_tma_192x96x64_s4_c3_g8_tmastore \
    persistent_tma_128x160x64_s4_c2_g8_tmastore 2>&1 | tee "$out/forced-tiles.txt"
  stage "forced, M = 128"
  # shellcheck disable=SC2086
  lab/bench-forced.sh "128x8192x8192,128x8192x8192:rc,128x4096x14336,128x4096x14336:rc,128x8192x4096" $ks \
    persistent_tma_64x128x64_s8_c2_sn_g8_cm2_tmastore 2>&1 | tee "$out/forced-m128.txt"
  BENCH_LOG=autotune bench_suites waves:170
  fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites square:120
  ;;
6)
  # The landing build (three-consumer tiles dropped): every config on ragged shapes (cluster split-K skipping K of one
  # block), the cluster split-K tests again.
  gpu_tests "PersistentTma.EveryConfigEveryLayout:ClusterSplitK.*" 200
  ;;
4)
  BENCH_LOG=autotune bench_suites square:150
  fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites waves:200
  ;;
esac
stage done
