#!/usr/bin/env bash
# prepare-45.sh — builds what lab/2026-12-05-session45/device-45b.sh and device-45c.sh carry as .carry/lab (no GPU
# needed), from the repository root: skinny-tma-store.patch (the skinny kernel's reduced tile as one TMA store a CTA;
# measured level to 1-2 % slower, not landed) in a worktree at ba1d361 (/tmp/wt45), its binaries and the compile-check
# of its skinny kernels (any kernel header changes every kernel's cache key, so the lab build's tests are the skinny
# ones). .carry/bin and .carry/kcache.tgz stay main's (lab/prepare-39.sh PART=1).
set -euo pipefail
root=$PWD
rm -rf /tmp/wt45 && git worktree prune && git worktree add --detach /tmp/wt45 ba1d361 >/dev/null
git -C /tmp/wt45 apply "$root/lab/2026-12-05-session45/skinny-tma-store.patch"
cmake -S /tmp/wt45 -B /tmp/wt45/build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build /tmp/wt45/build -j2 --target tmagemm_cli tmagemm_gpu_tests 2>&1 | tail -1
rm -rf /tmp/wt45-kcache
TMAGEMM_CACHE_DIR=/tmp/wt45-kcache /tmp/wt45/build/tmagemm compile-check -j2 --filter skinny | tail -1
rm -rf .carry/lab && mkdir -p .carry/lab
cp /tmp/wt45/build/tmagemm /tmp/wt45/build/tests/tmagemm_gpu_tests .carry/lab/
tar -C /tmp/wt45-kcache -czf .carry/lab/kcache.tgz kernels
du -sh .carry/lab
