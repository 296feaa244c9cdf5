// cublaslt_baseline.hpp — the cuBLASLt matmul that `tmagemm bench` compares against: row-major
// C(M,N) = A(M,K) @ B(K,N) with A/B row- or column-major, 16-bit in and out, fp32 compute, and the
// best of cuBLASLt's top heuristic algorithms; optionally with cuBLASLt's fused epilogue
// C = act(A @ B + bias) for a bias of N values (one per output column), or strided-batched (bmm).
#pragma once
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "tmagemm/types.hpp"

namespace tmagemm::cli {

// One cuBLASLt handle for the process (created on first use).
cublasLtHandle_t cublaslt_handle();

// scaled_mm's FP8 baseline: e4m3/e5m2 A (row-major) and B (column-major), the out dtype, fp32 scales (one each, or
// M and N values with `rowwise`), cuBLASLt's fast accumulation flag, and an optional bias (N values of bias_dtype).
struct Fp8Baseline {
  DType a = DType::e4m3, b = DType::e4m3, out = DType::bf16, bias_dtype = DType::bf16;
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
  bool rowwise = false, fast_accum = false;
};

// bmm's baseline: `count` products of the same shape, the matrices of each operand `stride_*` elements apart
// (cuBLASLt's strided batch). A stride of 0 means dense: each operand's matrices one after another (rows or columns
// times its leading dimension; M*K, K*N and M*N for dense leading dimensions). count 1: one matmul, no batch.
struct StridedBatch {
  int64_t count = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
};

class CublasLtMatmul {
 public:
  // Row-major C = A @ B is computed as column-major C^T = B^T A^T: cuBLASLt's "A" is our B and its "B"
  // is our A, with m = N, n = M. Asks the heuristic for up to `max_algos` algorithms. `lda` 0 means dense;
  // the sample pointers a/b/c (the ones later passed to run) tell the heuristic their alignment, so that odd
  // leading dimensions or offset bases get algorithms that accept them (null: a 256-byte-aligned pointer).
  // `bias` (N values of `dtype`, dense; null: none) and `act` select cuBLASLt's epilogue: BIAS, RELU_BIAS,
  // GELU_BIAS (the tanh approximation: Activation::gelu_tanh), or RELU / GELU without a bias. A per-column bias of
  // row-major C is a per-row bias of the column-major C^T that cuBLASLt computes: its bias vector of m = N
  // values. Other activations throw std::invalid_argument (cuBLASLt has no epilogue for them).
  // `ldb` / `ldc` 0: dense B / C (row-major C only: ldc >= n).
  // With `fp8` (layout "rc" only): torch._scaled_mm's product, out = (A @ B) * scale_a * scale_b (+ bias), through
  // cuBLASLt's scale pointers (rowwise: its outer-vector scale mode) and its FAST_ACCUM flag; `dtype` is then unused.
  // `batch` (count > 1): C[i] = A[i] @ B[i] for i < count, through each layout's BATCH_COUNT and
  // STRIDED_BATCH_OFFSET (cuBLASLt's A takes our B's stride, its B our A's); a, b and c point at the first matrices.
  CublasLtMatmul(DType dtype, int64_t m, int64_t n, int64_t k, Layout layout, void* workspace,
                 std::size_t workspace_bytes, int max_algos = 4, int64_t lda = 0, const void* a = nullptr,
                 const void* b = nullptr, const void* c = nullptr, const void* bias = nullptr,
                 Activation act = Activation::none, const Fp8Baseline* fp8 = nullptr, int64_t ldb = 0,
                 int64_t ldc = 0, const StridedBatch& batch = {});
  ~CublasLtMatmul();
  CublasLtMatmul(const CublasLtMatmul&) = delete;
  CublasLtMatmul& operator=(const CublasLtMatmul&) = delete;

  int algo_count() const { return static_cast<int>(algos_.size()); }
  // Enqueue C = A @ B (each product of the batch) on `stream` with heuristic algorithm `algo` (index into the
  // heuristic's list).
  void run(int algo, const void* a, const void* b, void* c, cudaStream_t stream) const;

 private:
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t lt_a_ = nullptr, lt_b_ = nullptr, lt_c_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos_;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace tmagemm::cli
