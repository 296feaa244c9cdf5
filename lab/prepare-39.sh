#!/usr/bin/env bash
# prepare-39.sh — builds what lab/device-39.sh carries, on the build machine (no GPU needed). From the repository root,
# after scripts/install-deps.sh:
#   PART=1 (default): build/ (Release), the full compile-check into .kcache, .carry/bin/{tmagemm,tmagemm_gpu_tests,
#           wgmma_rate,tile_stream,dsmem_reduce}, .carry/kcache.tgz. ~20 min on 2 cores from scratch (the compile-check
#           is ~8 of them).
#   PART=2: the thirty-eighth session's three-consumer patch built in a worktree (/tmp/wt39, at 8944695: the patch
#           predates the forty-first session's kernel split), its compile-check of
#           the patched configs only, .carry/lab/{tmagemm,kcache.tgz}.
set -euo pipefail
root=$PWD
case "${PART:-1}" in
1)
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j2
  TMAGEMM_CACHE_DIR=$root/.kcache ./build/tmagemm compile-check -j2 | tail -3
  rm -rf .carry/bin .carry/kcache.tgz && mkdir -p .carry/bin
  cp build/tmagemm build/tests/tmagemm_gpu_tests .carry/bin/
  tar -C .kcache -czf .carry/kcache.tgz kernels
  nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Ikernels \
    -o .carry/bin/wgmma_rate lab/probes/wgmma_rate.cu
  nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o .carry/bin/tile_stream lab/probes/tile_stream.cu
  nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o .carry/bin/dsmem_reduce lab/probes/dsmem_reduce.cu
  du -sh .carry
  ;;
2)
  rm -rf /tmp/wt39 && git worktree prune && git worktree add --detach /tmp/wt39 8944695 >/dev/null
  git -C /tmp/wt39 apply "$root/lab/2026-12-05-session38/three-consumer-tiles.patch"
  cmake -S /tmp/wt39 -B /tmp/wt39/build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build /tmp/wt39/build -j2 --target tmagemm_cli 2>/dev/null || cmake --build /tmp/wt39/build -j2
  rm -rf /tmp/wt39-kcache
  TMAGEMM_CACHE_DIR=/tmp/wt39-kcache /tmp/wt39/build/tmagemm compile-check -j2 \
    --filter '192x96x64_s4_c3|192x192x64_s3_c3|128x160x64_s4|128x128x64_s6_c2_g8_tmastore|128x192x64_s4_c2_g8_tmastore' |
    tail -3
  rm -rf .carry/lab && mkdir -p .carry/lab
  cp /tmp/wt39/build/tmagemm .carry/lab/
  tar -C /tmp/wt39-kcache -czf .carry/lab/kcache.tgz kernels
  du -sh .carry/lab
  ;;
esac
