#!/usr/bin/env bash
# prepare-44.sh — builds what lab/2026-12-05-session44/device-44.sh carries (no GPU needed), from the repository root.
#   PART=1: build/ at the work tree (host changes only: the kernels' cache keys are unchanged), .carry/bin/{tmagemm,
#           tmagemm_gpu_tests}; .carry/kcache.tgz is lab/prepare-39.sh PART=1's (rebuild it if a kernel changed).
#   PART=2: the forty-third session's cheaper stream-K fixup (lab/2026-12-05-session43/stream-k-fixup-v2.patch) in a
#           worktree at HEAD (/tmp/wt44), its binaries and the compile-check of the stream-K kernels into .carry/lab.
set -euo pipefail
root=$PWD
case "${PART:-1}" in
1)
  cmake --build build -j2 --target tmagemm_cli tmagemm_gpu_tests 2>&1 | tail -1
  mkdir -p .carry/bin
  cp build/tmagemm build/tests/tmagemm_gpu_tests .carry/bin/
  ;;
2)
  rm -rf /tmp/wt44 && git worktree prune && git worktree add --detach /tmp/wt44 HEAD >/dev/null
  git -C /tmp/wt44 apply "$root/lab/2026-12-05-session43/stream-k-fixup-v2.patch"
  cmake -S /tmp/wt44 -B /tmp/wt44/build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build /tmp/wt44/build -j2 --target tmagemm_cli tmagemm_gpu_tests 2>&1 | tail -1
  rm -rf /tmp/wt44-kcache
  TMAGEMM_CACHE_DIR=/tmp/wt44-kcache /tmp/wt44/build/tmagemm compile-check -j2 --filter '_sk(_|$)' | tail -3
  rm -rf .carry/lab && mkdir -p .carry/lab
  cp /tmp/wt44/build/tmagemm /tmp/wt44/build/tests/tmagemm_gpu_tests .carry/lab/
  tar -C /tmp/wt44-kcache -czf .carry/lab/kcache.tgz kernels
  du -sh .carry/lab
  ;;
esac
