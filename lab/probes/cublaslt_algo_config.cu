// cublaslt_algo_config.cu — what cuBLASLt's heuristic picks for a row-major bf16 GEMM (the bench's layout "rr"):
// for each of its top 8 algorithms the config attributes (algo id, tile, stages, split-K count and reduction scheme,
// CTA swizzle, cluster shape) and its median time over 200 runs after a 256 MiB write flush (the bench's method), or
// with FLUSH=read after a kernel that reads the 256 MiB (L2 left holding clean lines: the bench's --flush read).
// Usage: [FLUSH=read] cublaslt_algo_config MxNxK ...   Build (from lab/probes): nvcc -O2 -arch=sm_90a -o cublaslt_algo_config cublaslt_algo_config.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cublaslt_probe.cuh"

int main(int argc, char** argv) {
  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  const size_t flush_bytes = 256u << 20, ws_bytes = 64u << 20;
  void *flush, *ws;
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMalloc(&ws, ws_bytes));
  const char* flush_env = std::getenv("FLUSH");
  const bool read_flush = flush_env && std::string(flush_env) == "read";
  int* sink;
  CK(cudaMalloc(&sink, sizeof(int)));
  CK(cudaMemset(flush, 1, flush_bytes));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int i = 1; i < argc; ++i) {
    long m, n, k;
    if (std::sscanf(argv[i], "%ldx%ldx%ld", &m, &n, &k) != 3) continue;
    void *a, *b, *c;
    CK(cudaMalloc(&a, m * k * 2));
    CK(cudaMalloc(&b, k * n * 2));
    CK(cudaMalloc(&c, m * n * 2));
    cudaMemset(a, 0x3c, m * k * 2);
    cudaMemset(b, 0x3c, k * n * 2);
    // Row-major C = A B as column-major C^T (n x m) = B^T (n x k) A^T (k x m).
    cublasLtMatmulDesc_t op;
    CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, n, k, n));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, m, k));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, m, n));
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t res[8];
    int found = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 8, res, &found));
    std::printf("%ldx%ldx%ld (%s flush): %d algorithms\n", m, n, k, read_flush ? "read" : "write", found);
    const float alpha = 1, beta = 0;
    for (int r = 0; r < found; ++r) {
      const cublasLtMatmulAlgo_t& al = res[r].algo;
      std::vector<float> t;
      for (int rep = 0; rep < 200; ++rep) {
        if (read_flush)
          read_all<<<132 * 8, 512>>>(static_cast<const int4*>(flush), flush_bytes / 16, sink);
        else
          cudaMemsetAsync(flush, rep & 0xff, flush_bytes);
        cudaEventRecord(e0);
        cublasLtMatmul(lt, op, &alpha, b, la, a, lb, &beta, c, lc, c, lc, &al, ws, ws_bytes, 0);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        t.push_back(ms);
      }
      std::sort(t.begin(), t.end());
      const double med_us = t[t.size() / 2] * 1e3;
      std::printf(
          "  rank %d: algo %d tile %u stages %u splitK %d reduction %u swizzle %u cluster %u custom %u ws %zu: %.2f us "
          "%.1f TFLOP/s\n",
          r, cfg<int>(al, CUBLASLT_ALGO_CONFIG_ID), cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_TILE_ID),
          cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_STAGES_ID), cfg<int>(al, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
          cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME), cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
          cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID), cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION),
          res[r].workspaceSize, med_us, 2.0 * m * n * k / med_us * 1e-6);
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  return 0;
}
