// grouped_baseline.cpp — the cuBLAS grouped baselines of `tmagemm bench --suite grouped` (see grouped_baseline.hpp).
#include "grouped_baseline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace tmagemm::cli {

namespace {

void blas_check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(
        fmt::format("{}: {} ({})", what, cublasGetStatusName(status), cublasGetStatusString(status)));
}

}  // namespace

GroupedBaseline::GroupedBaseline(DType dtype, int64_t n, int64_t k, Layout layout, const std::vector<int64_t>& rows,
                                 const void* a, const void* b, void* c, void* workspace, std::size_t workspace_bytes,
                                 int max_algos)
    : dtype_(dtype),
      n_(n),
      k_(k),
      layout_(layout),
      a_(static_cast<const char*>(a)),
      b_(static_cast<const char*>(b)),
      c_(static_cast<char*>(c)),
      workspace_(workspace),
      workspace_bytes_(workspace_bytes) {
  if (layout.a_col) throw std::invalid_argument("grouped baseline: a must be row-major");
  if (dtype != DType::bf16 && dtype != DType::f16) throw std::invalid_argument("grouped baseline: 16-bit inputs only");
  const std::size_t es = 2;
  // One cuBLASLt matmul per distinct row count, shared by the groups of that size.
  std::map<int64_t, CublasLtMatmul*> by_rows;
  int64_t start = 0;
  for (std::size_t g = 0; g < rows.size(); ++g) {
    const int64_t r = rows[g];
    if (r < 0) throw std::invalid_argument("grouped baseline: a group has a negative row count");
    if (r > 0) {
      const char* ag = a_ + static_cast<std::size_t>(start * k) * es;
      const char* bg = b_ + static_cast<std::size_t>(static_cast<int64_t>(g) * k * n) * es;
      char* cg = c_ + static_cast<std::size_t>(start * n) * es;
      auto it = by_rows.find(r);
      if (it == by_rows.end()) {
        lt_.push_back(std::make_unique<CublasLtMatmul>(dtype, r, n, k, layout, workspace, workspace_bytes, max_algos,
                                                       0, ag, bg, cg));
        it = by_rows.emplace(r, lt_.back().get()).first;
        lt_algos_ = std::max(lt_algos_, lt_.back()->algo_count());
      }
      groups_.push_back(Group{static_cast<int64_t>(g), start, r, it->second});
    }
    start += r;
  }
  if (groups_.empty()) throw std::invalid_argument("grouped baseline: every group is empty");

  // cublasGemmGroupedBatchedEx, column-major: out^T (N x rows, ld N) = op(b[g]) (N x K) @ a_g^T (K x rows, ld K).
  // b[g] row-major (K, N) is a column-major N x K matrix with ld N (no transpose); column-major (ld K) it is K x N,
  // transposed.
  const std::size_t count = groups_.size();
  std::vector<const void*> pa(count), pb(count);
  std::vector<void*> pc(count);
  for (std::size_t i = 0; i < count; ++i) {
    const Group& gr = groups_[i];
    trans_a_.push_back(layout.b_col ? CUBLAS_OP_T : CUBLAS_OP_N);
    trans_b_.push_back(CUBLAS_OP_N);
    m_.push_back(static_cast<int>(n));
    n_arr_.push_back(static_cast<int>(gr.rows));
    k_arr_.push_back(static_cast<int>(k));
    lda_.push_back(static_cast<int>(layout.b_col ? k : n));
    ldb_.push_back(static_cast<int>(k));
    ldc_.push_back(static_cast<int>(n));
    group_size_.push_back(1);
    alpha_.push_back(1.0f);
    beta_.push_back(0.0f);
    pa[i] = b_ + static_cast<std::size_t>(gr.g * k * n) * es;
    pb[i] = a_ + static_cast<std::size_t>(gr.start * k) * es;
    pc[i] = c_ + static_cast<std::size_t>(gr.start * n) * es;
  }
  blas_check(cublasCreate(&handle_), "cublasCreate");
  cuda_check(cudaMalloc(&pointers_, 3 * count * sizeof(void*)), "cudaMalloc(grouped baseline pointers)");
  char* p = static_cast<char*>(pointers_);
  cuda_check(cudaMemcpy(p, pa.data(), count * sizeof(void*), cudaMemcpyHostToDevice), "cudaMemcpy(A pointers)");
  cuda_check(cudaMemcpy(p + count * sizeof(void*), pb.data(), count * sizeof(void*), cudaMemcpyHostToDevice),
             "cudaMemcpy(B pointers)");
  cuda_check(cudaMemcpy(p + 2 * count * sizeof(void*), pc.data(), count * sizeof(void*), cudaMemcpyHostToDevice),
             "cudaMemcpy(C pointers)");
}

GroupedBaseline::~GroupedBaseline() {
  if (handle_) cublasDestroy(handle_);
  if (pointers_) cudaFree(pointers_);
}

std::string GroupedBaseline::algo_name(int algo) const {
  return algo == 0 ? std::string("cublas_grouped") : fmt::format("cublaslt_loop{}", algo - 1);
}

void GroupedBaseline::run(int algo, cudaStream_t stream) const {
  if (algo < 0 || algo >= algo_count()) throw std::invalid_argument("grouped baseline: no such algorithm");
  if (algo == 0) {
    const std::size_t count = groups_.size();
    void** p = static_cast<void**>(pointers_);
    const cudaDataType_t type = dtype_ == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
    blas_check(cublasSetStream(handle_, stream), "cublasSetStream");
    blas_check(cublasSetWorkspace(handle_, workspace_, workspace_bytes_), "cublasSetWorkspace");
    blas_check(cublasGemmGroupedBatchedEx(handle_, trans_a_.data(), trans_b_.data(), m_.data(), n_arr_.data(),
                                          k_arr_.data(), alpha_.data(), const_cast<const void* const*>(p), type,
                                          lda_.data(), const_cast<const void* const*>(p + count), type, ldb_.data(),
                                          beta_.data(), p + 2 * count, type, ldc_.data(), static_cast<int>(count),
                                          group_size_.data(), CUBLAS_COMPUTE_32F),
               "cublasGemmGroupedBatchedEx");
    return;
  }
  const std::size_t es = 2;
  for (const Group& gr : groups_) {
    const int j = std::min(algo - 1, gr.lt->algo_count() - 1);
    gr.lt->run(j, a_ + static_cast<std::size_t>(gr.start * k_) * es,
               b_ + static_cast<std::size_t>(gr.g * k_ * n_) * es, c_ + static_cast<std::size_t>(gr.start * n_) * es,
               stream);
  }
}

}  // namespace tmagemm::cli
