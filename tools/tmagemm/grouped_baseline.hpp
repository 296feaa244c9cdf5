// grouped_baseline.hpp — the cuBLAS baselines that `tmagemm bench --suite grouped` compares tmagemm::grouped_mm
// against (the MoE forward: out rows [s_g, e_g) = a rows [s_g, e_g) @ b[g] for each group g). Two ways a framework
// would run it with cuBLAS:
//   algorithm 0       cublasGemmGroupedBatchedEx: one call, every non-empty group its own problem (group_size 1);
//   algorithms 1..k   one cuBLASLt matmul per non-empty group, each with its heuristic's (j-1)-th algorithm (or its
//                     last one when it has fewer).
// The bench's trial picks the fastest that runs and is right. 16-bit in and out, fp32 compute, a row-major.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common.hpp"
#include "cublaslt_baseline.hpp"
#include "tmagemm/types.hpp"

namespace tmagemm::cli {

class GroupedBaseline {
 public:
  // `rows[g]`: the rows of group g (sum: total M); a (total_M, K) row-major at `a`, b (G, K, N) dense, row-major (K,N)
  // matrices (layout "rr") or column-major ones (layout "rc": b[g] is an (N, K) row-major weight), out (total_M, N)
  // row-major at `c`. Up to `max_algos` cuBLASLt algorithms per group.
  GroupedBaseline(DType dtype, int64_t n, int64_t k, Layout layout, const std::vector<int64_t>& rows, const void* a,
                  const void* b, void* c, void* workspace, std::size_t workspace_bytes, int max_algos = 4);
  ~GroupedBaseline();
  GroupedBaseline(const GroupedBaseline&) = delete;
  GroupedBaseline& operator=(const GroupedBaseline&) = delete;

  int algo_count() const { return 1 + lt_algos_; }
  // "cublas_grouped" or "cublaslt_loop<j>".
  std::string algo_name(int algo) const;
  // Enqueues every group's product on `stream` with algorithm `algo` (see the file comment). Throws when it fails.
  void run(int algo, cudaStream_t stream) const;

 private:
  struct Group {
    int64_t g, start, rows;
    CublasLtMatmul* lt;  // of its row count (shared by groups of the same size)
  };
  DType dtype_;
  int64_t n_, k_;
  Layout layout_;
  const char* a_;
  const char* b_;
  char* c_;
  std::vector<Group> groups_;  // the non-empty ones
  std::vector<std::unique_ptr<CublasLtMatmul>> lt_;
  int lt_algos_ = 0;
  // cublasGemmGroupedBatchedEx's arguments: host arrays of the problems, device arrays of the pointers.
  cublasHandle_t handle_ = nullptr;
  std::vector<cublasOperation_t> trans_a_, trans_b_;
  std::vector<int> m_, n_arr_, k_arr_, lda_, ldb_, ldc_, group_size_;
  std::vector<float> alpha_, beta_;
  void* pointers_ = nullptr;  // device: the A, B and C pointer arrays, one after another
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace tmagemm::cli
