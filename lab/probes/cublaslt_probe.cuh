// cublaslt_probe.cuh — what the cuBLASLt probes (cublaslt_algo_config.cu, cublaslt_algo_search.cu) share: a status
// check for CUDA and cuBLASLt calls, the read flush's kernel (L2 left holding clean lines, as `tmagemm bench --flush
// read`), reading an algorithm's configuration attribute, the timing bench (handle, workspace, flush, events) and a
// row-major bf16 problem in cuBLASLt's column-major form.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

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

// One cuBLASLt handle, a 64 MiB workspace, the 256 MiB flush buffer and two events: `timed` flushes L2 (a memset of
// the buffer, the bench's default, or with FLUSH=read a kernel reading it) and returns the milliseconds of `launch`
// on the default stream.
struct ProbeBench {
  static constexpr size_t kFlushBytes = 256u << 20, kWorkspaceBytes = 64u << 20;
  cublasLtHandle_t lt;
  void *flush, *ws;
  int* sink;
  bool read_flush;
  cudaEvent_t e0, e1;
  ProbeBench() {
    CK(cublasLtCreate(&lt));
    CK(cudaMalloc(&flush, kFlushBytes));
    CK(cudaMalloc(&ws, kWorkspaceBytes));
    CK(cudaMalloc(&sink, sizeof(int)));
    CK(cudaMemset(flush, 1, kFlushBytes));
    const char* fe = std::getenv("FLUSH");
    read_flush = fe && std::string(fe) == "read";
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
  }
  template <class Launch>
  float timed(int memset_byte, Launch&& launch) {
    if (read_flush)
      read_all<<<132 * 8, 512>>>(static_cast<const int4*>(flush), kFlushBytes / 16, sink);
    else
      cudaMemsetAsync(flush, memset_byte, kFlushBytes);
    cudaEventRecord(e0);
    launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    return ms;
  }
};

// Row-major bf16 C = A B (the bench's layout "rr") of an "MxNxK" argument as cuBLASLt's column-major
// C^T (n x m) = B^T (n x k) A^T (k x m): the operands (uninitialised: the probe fills them) and descriptors.
struct RowMajorGemm {
  long m = 0, n = 0, k = 0;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, lc;
  // False when `arg` is not MxNxK.
  bool parse(const char* arg) { return std::sscanf(arg, "%ldx%ldx%ld", &m, &n, &k) == 3; }
  void create() {
    CK(cudaMalloc(&a, m * k * 2));
    CK(cudaMalloc(&b, k * n * 2));
    CK(cudaMalloc(&c, m * n * 2));
    CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, n, k, n));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, m, k));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, m, n));
  }
  cublasStatus_t run(const ProbeBench& pb, const cublasLtMatmulAlgo_t& algo) const {
    const float alpha = 1, beta = 0;
    return cublasLtMatmul(pb.lt, op, &alpha, b, la, a, lb, &beta, c, lc, c, lc, &algo, pb.ws,
                          ProbeBench::kWorkspaceBytes, 0);
  }
  void destroy() {
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
};
