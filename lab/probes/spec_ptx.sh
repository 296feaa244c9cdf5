#!/usr/bin/env bash
# Builds lab/probes/spec_ptx.cpp against the CPU build's library (build/libtmagemm.a) and runs it:
#   lab/probes/spec_ptx.sh NAME KERNELS_DIR OUT_PTX OUT_CUBIN
# SASS of the cubin: nvdisasm -c OUT_CUBIN (nvdisasm from PyPI's nvidia-cuda-nvdisasm where the toolkit lacks it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
b=${BUILD:-$root/build}
if [ ! -x /tmp/spec_ptx ] || [ "$root/lab/probes/spec_ptx.cpp" -nt /tmp/spec_ptx ]; then
  c++ -O1 -std=c++20 -DFMT_HEADER_ONLY=1 -I"$root/src" -I"$root/include" -I"$b/generated/include" \
    -isystem /usr/local/cuda/include "$root/lab/probes/spec_ptx.cpp" -o /tmp/spec_ptx \
    -Wl,-rpath,/usr/local/cuda/lib "$b/libtmagemm.a" /usr/local/cuda/lib/libnvrtc.so -lsqlite3 \
    /usr/local/cuda/lib/stubs/libcuda.so /usr/local/cuda/lib/libcudart_static.a -lrt /usr/local/cuda/lib/libcublasLt.so \
    -ldl /usr/lib/x86_64-linux-gnu/libhiredis.a -lcrypto -lpthread
fi
/tmp/spec_ptx "$@"
