#!/usr/bin/env bash
# Builds and runs lab/probes/prescreen_list.cpp against the CPU build's library (build/libtmagemm.a).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
b=${BUILD:-$root/build}
c++ -O1 -std=c++20 -DFMT_HEADER_ONLY=1 -I"$root/src" -I"$root/tests" -I"$root/include" -I"$b/generated/include" \
  -isystem /usr/local/cuda/include "$root/lab/probes/prescreen_list.cpp" -o /tmp/prescreen_list \
  -Wl,-rpath,/usr/local/cuda/lib "$b/libtmagemm.a" /usr/local/cuda/lib/libnvrtc.so -lsqlite3 \
  /usr/local/cuda/lib/stubs/libcuda.so /usr/local/cuda/lib/libcudart_static.a -lrt /usr/local/cuda/lib/libcublasLt.so \
  -ldl /usr/lib/x86_64-linux-gnu/libhiredis.a -lcrypto -lpthread
/tmp/prescreen_list
