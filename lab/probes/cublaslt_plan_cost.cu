// cublaslt_plan_cost.cu — lab probe: where cuBLASLt spends host time on a new M of a fixed (N, K) bf16 GEMM
// (row-major a (M,K), b as nn.Linear weight, row-major out): descriptors, heuristic query (top 4), AlgoCheck of the
// first M's rank-0 algorithm, and the host time of the first and second cublasLtMatmul on that M (enqueue only).
// Build: nvcc -O2 -std=c++17 -o lab/probes/cublaslt_plan_cost lab/probes/cublaslt_plan_cost.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }
#define CK(x) do { auto s_ = (x); if ((int)s_ != 0) { std::printf("%s failed: %d (line %d)\n", #x, (int)s_, __LINE__); return 1; } } while (0)

int main(int argc, char** argv) {
  const long N = argc > 1 ? atol(argv[1]) : 14336, K = argc > 2 ? atol(argv[2]) : 4096;
  const std::vector<long> Ms = {1300, 700, 150, 2200, 4500, 8192, 300, 72, 1301, 1302, 701, 151, 2201, 4501, 8191};
  long maxM = 8192;
  void *a, *b, *c, *ws;
  CK(cudaMalloc(&a, maxM * K * 2)); CK(cudaMalloc(&b, N * K * 2)); CK(cudaMalloc(&c, maxM * N * 2));
  CK(cudaMalloc(&ws, 32 << 20));
  cudaStream_t st; CK(cudaStreamCreate(&st));
  auto t0 = clk::now();
  cublasLtHandle_t h; CK(cublasLtCreate(&h));
  std::printf("cublasLtCreate %.3f ms\n", ms(t0, clk::now()));
  cublasLtMatmulAlgo_t pinned{}; bool have_pinned = false;
  for (int pass = 0; pass < 2; ++pass)
  for (long M : Ms) {
    // out row-major: cuBLAS D (N x M col-major) = A (b: K x N stored col-major as W^T? here b is (N,K) row-major = K x N col-major, op T) x B (a: K x M col-major)
    auto t1 = clk::now();
    cublasLtMatmulDesc_t op; CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t tA = CUBLAS_OP_T, tB = CUBLAS_OP_N;
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &tA, sizeof tA));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tB, sizeof tB));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, K, N, K));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, K, M, K));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, N, M, N));
    auto t2 = clk::now();
    cublasLtMatmulPreference_t pref; CK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t wsb = 32 << 20;
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
    cublasLtMatmulHeuristicResult_t res[4]; int n = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, lc, lc, pref, 4, res, &n));
    auto t3 = clk::now();
    if (!have_pinned) { pinned = res[0].algo; have_pinned = true; }
    cublasLtMatmulHeuristicResult_t chk{};
    const int cs = cublasLtMatmulAlgoCheck(h, op, la, lb, lc, lc, &pinned, &chk);
    auto t4 = clk::now();
    float alpha = 1, beta = 0;
    CK(cublasLtMatmul(h, op, &alpha, b, la, a, lb, &beta, c, lc, c, lc, &res[0].algo, ws, 32 << 20, st));
    auto t5 = clk::now();
    CK(cublasLtMatmul(h, op, &alpha, b, la, a, lb, &beta, c, lc, c, lc, &res[0].algo, ws, 32 << 20, st));
    auto t6 = clk::now();
    CK(cudaStreamSynchronize(st));
    auto t7 = clk::now();
    CK(cublasLtMatmul(h, op, &alpha, b, la, a, lb, &beta, c, lc, c, lc, &pinned, ws, 32 << 20, st));
    auto t8 = clk::now();
    CK(cudaStreamSynchronize(st));
    std::printf("pass %d M %5ld: descriptors %.3f  heuristic %.3f  check(pinned) %.3f (st %d)  matmul#1 %.3f  #2 %.3f  pinned %.3f ms\n",
                pass, M, ms(t1, t2), ms(t2, t3), ms(t3, t4), cs, ms(t4, t5), ms(t5, t6), ms(t7, t8));
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
  }
  return 0;
}
