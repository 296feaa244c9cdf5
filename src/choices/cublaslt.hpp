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

// How many heuristic algorithms to offer: TMAGEMM_CUBLASLT_TOP_K (1..16) when set and not empty, else 4.
// A malformed value throws Error(invalid_argument) naming the variable.
int cublaslt_top_k();

}  // namespace tmagemm::choices
