// cublaslt.hpp — the cuBLASLt backend: the top-k algorithms of cublasLtMatmulAlgoGetHeuristic for a problem,
// each offered as one choice ("cublaslt_algo<i>"). The mapping of tmagemm's row-major-semantics problem onto
// cuBLASLt's column-major matmul is plain data (CublasLtCall) so that it can be checked without a GPU.
//
// Mapping. tmagemm computes C(M,N) = A(M,K) @ B(K,N), each operand row- or column-major. cuBLASLt computes
// D(m,n) = op(A)(m,k) @ op(B)(k,n) on column-major layouts. A row-major matrix X (ld = row stride) is the
// column-major matrix X^T with the same ld, so:
//   out column-major: D = C directly          — cuBLAS A = our a, B = our b, m = M, n = N;
//   out row-major:    D = C^T = B^T @ A^T      — cuBLAS A = our b, B = our a, m = N, n = M ("swapped").
// Each input is described as stored (column-major rows x cols with its ld) and transposed by cuBLAS exactly
// when its major differs from out's (CUBLAS_OP_T), e.g. mm row/row -> row: A = b (N x K, OP_N),
// B = a (K x M, OP_N), D = out (N x M).
//
// Accuracy floor. Split-K algorithms add their partial sums by a reduction scheme: NONE (no split), COMPUTE_TYPE
// (in an fp32 workspace), INPLACE (in the output buffer, in the output type) or OUTPUT_TYPE (in a workspace, in the
// output type). With a bf16/f16 output the last two add partial sums in 16 bits, so unless
// Options::allow_reduced_precision_reduction the heuristic is asked with a reduction-scheme mask that excludes them
// (cublaslt_reduction_mask), and every algorithm it returns is checked again against that mask.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "choices/choice.hpp"
#include "problem/problem.hpp"

namespace tmagemm::choices {

// Device memory every cuBLASLt choice needs for its workspace (the heuristic is limited to it).
inline constexpr std::size_t kCublasLtWorkspaceBytes = std::size_t{32} << 20;
// Heuristic algorithms offered per problem unless TMAGEMM_CUBLASLT_TOP_K says otherwise (1..16).
inline constexpr int kCublasLtDefaultTopK = 4;
inline constexpr int kCublasLtMaxTopK = 16;

// Empty when cuBLASLt can express `problem` (op, dtypes, layouts, strides); otherwise the reason, in words.
// Needs no GPU. Accepts mm and bmm with bf16 x bf16 or f16 x f16 inputs and an output of the input type or
// f32, every matrix row- or column-major with ld >= the rows of its column-major form, batch < 2^31.
std::string cublaslt_reason_unsupported(const GemmProblem& problem);

// One matrix of the column-major cuBLASLt call, as stored in memory.
struct CublasLtMatrix {
  const char* name = "";         // which tmagemm operand it is: "a", "b" or "out"
  const void* data = nullptr;
  DType dtype = DType::bf16;
  uint64_t rows = 0, cols = 0;   // column-major extents of the stored matrix
  int64_t ld = 0;                // leading dimension (elements)
  int64_t batch_stride = 0;      // elements between batches (0: broadcast); used when batch > 1
  bool transpose = false;        // cuBLAS applies op T to it (inputs only)
  uint32_t alignment = 256;      // bytes (power of two <= 256) dividing the base, ld and batch stride in bytes
};

// The cuBLASLt call that computes a problem: D(m,n) = op(A) @ op(B), C = D = out.
struct CublasLtCall {
  bool swapped = false;          // out row-major: cuBLAS A is our b and cuBLAS B is our a
  uint64_t m = 0, n = 0, k = 0;  // cuBLAS's m, n, k
  int64_t batch = 1;
  CublasLtMatrix a, b, c;        // cuBLAS's A, B and C (= D)
};

// Only meaningful when cublaslt_reason_unsupported(problem) is empty.
CublasLtCall cublaslt_call(const GemmProblem& problem);

// The CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK (cublasLtReductionScheme_t bits) the heuristic is asked with for
// output type `out`: every scheme (CUBLASLT_REDUCTION_SCHEME_MASK) for an f32 output, where each one adds in fp32,
// or when `allow_reduced` (Options::allow_reduced_precision_reduction); else NONE | COMPUTE_TYPE, the schemes that
// add partial sums in fp32. Needs no GPU.
uint32_t cublaslt_reduction_mask(DType out, bool allow_reduced);

// True when an algorithm configured with reduction scheme `scheme` (CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME) is
// allowed by `mask`, i.e. uses no scheme bit outside it (NONE, 0, is always allowed). Needs no GPU.
bool cublaslt_reduction_allowed(uint32_t scheme, uint32_t mask);

// How many heuristic algorithms to offer: TMAGEMM_CUBLASLT_TOP_K (1..16) when set and not empty, else 4.
// A malformed value throws Error(invalid_argument) naming the variable.
int cublaslt_top_k();

}  // namespace tmagemm::choices
