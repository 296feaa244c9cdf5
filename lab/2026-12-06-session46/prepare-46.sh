#!/usr/bin/env bash
# prepare-46.sh — builds what lab/2026-12-06-session46/device-46c.sh carries as .carry/lab (no GPU needed), from the
# repository root: skinny-batched-reduce.patch (the skinny kernel's reduction issues the remote loads of several
# units before summing any; measured level, not landed) in a worktree at HEAD (/tmp/wt46), its binaries and the
# compile-check of every kernel (a kernel header change changes every kernel's cache key; device-46c tunes suites on
# this build). Within the 64 MiB carry, .carry/kcache.tgz then holds main's skinny kernels only (the forced main rows):
# keep main's full cache aside and put it back afterwards.
set -euo pipefail
root=$PWD
rm -rf /tmp/wt46 && git worktree prune && git worktree add --detach /tmp/wt46 HEAD >/dev/null
git -C /tmp/wt46 apply "$root/lab/2026-12-06-session46/skinny-batched-reduce.patch"
cmake -S /tmp/wt46 -B /tmp/wt46/build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build /tmp/wt46/build -j2 --target tmagemm_cli tmagemm_gpu_tests 2>&1 | tail -1
rm -rf /tmp/wt46-kcache
TMAGEMM_CACHE_DIR=/tmp/wt46-kcache /tmp/wt46/build/tmagemm compile-check -j2 | tail -1
rm -rf .carry/lab && mkdir -p .carry/lab
cp /tmp/wt46/build/tmagemm /tmp/wt46/build/tests/tmagemm_gpu_tests .carry/lab/
tar -C /tmp/wt46-kcache -czf .carry/lab/kcache.tgz kernels
du -sh .carry/lab
