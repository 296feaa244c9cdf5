// cublaslt_probe.cuh — what the cuBLASLt probes (cublaslt_algo_config.cu, cublaslt_algo_search.cu) share: a status
// check for CUDA and cuBLASLt calls, the read flush's kernel (L2 left holding clean lines, as `tmagemm bench --flush
// read`), and reading an algorithm's configuration attribute.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                                   \
  do {                                                                                          \
    auto s_ = (x);                                                                              \
    if (static_cast<int>(s_) != 0) {                                                            \
      std::fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #x, static_cast<int>(s_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

// The read flush: every thread folds its strided 16-byte words; one store keeps the loads alive.
__global__ void read_all(const int4* p, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const int4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;
}

template <class T>
T cfg(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T v{};
  size_t written = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof v, &written);
  return v;
}
