// cublaslt_baseline.cpp — cuBLASLt baseline matmul for `tmagemm bench` (see cublaslt_baseline.hpp).
#include "cublaslt_baseline.hpp"

#include <fmt/core.h>

#include <stdexcept>
#include <cstdint>
#include <string>
#include <utility>

namespace tmagemm::cli {

namespace {

void lt_check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("{}: {} ({})", what, cublasLtGetStatusName(status),
                                         cublasLtGetStatusString(status)));
}

cudaDataType_t cuda_type(DType dtype) {
  switch (dtype) {
    case DType::bf16: return CUDA_R_16BF;
    case DType::f16: return CUDA_R_16F;
    case DType::f32: return CUDA_R_32F;
    case DType::e4m3: return CUDA_R_8F_E4M3;
    case DType::e5m2: return CUDA_R_8F_E5M2;
    default: throw std::invalid_argument(std::string("cuBLASLt baseline: unsupported dtype ") + to_string(dtype));
  }
}

// cuBLASLt's fused epilogue for an optional bias and an activation. Its GELU is the tanh approximation.
cublasLtEpilogue_t lt_epilogue(bool bias, Activation act) {
  switch (act) {
    case Activation::none: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case Activation::relu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::gelu_tanh: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default:
      throw std::invalid_argument(std::string("cuBLASLt baseline: no cuBLASLt epilogue computes activation ") +
                                  to_string(act));
  }
}

}  // namespace

cublasLtHandle_t cublaslt_handle() {
  static cublasLtHandle_t handle = [] {
    cublasLtHandle_t h = nullptr;
    lt_check(cublasLtCreate(&h), "cublasLtCreate");
    return h;
  }();
  return handle;
}

CublasLtMatmul::CublasLtMatmul(DType dtype, int64_t m, int64_t n, int64_t k, Layout layout, void* workspace,
                               std::size_t workspace_bytes, int max_algos, int64_t lda, const void* a,
                               const void* b, const void* c, const void* bias, Activation act,
                               const Fp8Baseline* fp8, int64_t ldb, int64_t ldc, const StridedBatch& batch)
    : workspace_(workspace), workspace_bytes_(workspace_bytes) {
  if (fp8 && (layout.a_col || !layout.b_col))
    throw std::invalid_argument("cuBLASLt FP8 baseline: A must be row-major and B column-major (layout rc)");
  if (batch.count < 1 || batch.count > INT32_MAX || batch.stride_a < 0 || batch.stride_b < 0 || batch.stride_c < 0)
    throw std::invalid_argument("cuBLASLt baseline: the batch count must be in [1, 2^31) and its strides >= 0");
  const cudaDataType_t type = cuda_type(fp8 ? fp8->out : dtype);
  // cuBLASLt's A is our B and its B our A (below): their fp8 types and scales swap too.
  const cudaDataType_t type_a = fp8 ? cuda_type(fp8->b) : type, type_b = fp8 ? cuda_type(fp8->a) : type;
  lt_check(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  if (fp8) {
    const float* sa = fp8->scale_b;  // cuBLASLt's A = our B
    const float* sb = fp8->scale_a;
    lt_check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa),
             "set A_SCALE_POINTER");
    lt_check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb),
             "set B_SCALE_POINTER");
    if (fp8->rowwise) {
      // NOTE: cublasLt.h, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F: one fp32 scale per row of op(A) (m values:
      // our N columns) and per column of op(B) (n values: our M rows).
      const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
      lt_check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode),
               "set A_SCALE_MODE");
      lt_check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode),
               "set B_SCALE_MODE");
    }
    const int8_t fast = fp8->fast_accum ? 1 : 0;
    lt_check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast),
             "set FAST_ACCUM");
  }
  // Column-major view: C^T (N x M, ld N) = op(B_mem) (N x K) * op(A_mem) (K x M).
  // Our B row-major (K x N, ld N) is B^T column-major (N x K, ld N): no transpose.
  // Our B col-major (K x N, ld K) is B column-major (K x N, ld K): transpose.
  // Our A row-major (M x K, ld K) is A^T column-major (K x M, ld K): no transpose.
  // Our A col-major (M x K, ld M) is A column-major (M x K, ld M): transpose.
  const cublasOperation_t op_lt_a = layout.b_col ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_lt_b = layout.a_col ? CUBLAS_OP_T : CUBLAS_OP_N;
  lt_check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_lt_a, sizeof op_lt_a),
           "set TRANSA");
  lt_check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_lt_b, sizeof op_lt_b),
           "set TRANSB");
  // The epilogue (before the heuristic, which picks algorithms for it; the bias pointer tells it the alignment).
  // cuBLASLt's bias has one value per row of its column-major D = C^T (N x M): one per column of our C.
  const cublasLtEpilogue_t epilogue = lt_epilogue(bias != nullptr, act);
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT)
    lt_check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue),
             "set EPILOGUE");
  if (bias) {
    lt_check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
             "set BIAS_POINTER");
    // The bias has the output's dtype (cuBLASLt's default, said explicitly); FP8: the given bias dtype.
    const int32_t bias_type = fp8 ? cuda_type(fp8->bias_dtype) : type;
    lt_check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type),
             "set BIAS_DATA_TYPE");
  }
  auto u = [](int64_t x) { return static_cast<uint64_t>(x); };
  if (ldb == 0) ldb = layout.b_col ? k : n;
  if (ldc == 0) ldc = n;
  if (layout.b_col)
    lt_check(cublasLtMatrixLayoutCreate(&lt_a_, type_a, u(k), u(n), ldb), "layout A (our B, column-major)");
  else
    lt_check(cublasLtMatrixLayoutCreate(&lt_a_, type_a, u(n), u(k), ldb), "layout A (our B, row-major)");
  if (lda == 0) lda = layout.a_col ? m : k;
  if (layout.a_col)
    lt_check(cublasLtMatrixLayoutCreate(&lt_b_, type_b, u(m), u(k), lda), "layout B (our A, column-major)");
  else
    lt_check(cublasLtMatrixLayoutCreate(&lt_b_, type_b, u(k), u(m), lda), "layout B (our A, row-major)");
  lt_check(cublasLtMatrixLayoutCreate(&lt_c_, type, u(n), u(m), ldc), "layout C");
  // Strided batch: every layout has the batch count and its own matrix's stride (cuBLASLt's A is our B). C and D
  // share lt_c_. Dense strides: our A has K (column-major) or M rows of lda, our B N or K of ldb, C M of ldc.
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // in elements, of our A, B and C; 0 when not batched
  if (batch.count > 1) {
    stride_a = batch.stride_a ? batch.stride_a : (layout.a_col ? k : m) * lda;
    stride_b = batch.stride_b ? batch.stride_b : (layout.b_col ? n : k) * ldb;
    stride_c = batch.stride_c ? batch.stride_c : m * ldc;
    const int32_t count = static_cast<int32_t>(batch.count);
    auto set_batch = [&count](cublasLtMatrixLayout_t lt, int64_t stride, const std::string& what) {
      lt_check(cublasLtMatrixLayoutSetAttribute(lt, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
               (what + ": set BATCH_COUNT").c_str());
      lt_check(
          cublasLtMatrixLayoutSetAttribute(lt, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
               (what + ": set STRIDED_BATCH_OFFSET").c_str());
    };
    set_batch(lt_a_, stride_b, "layout A (our B)");
    set_batch(lt_b_, stride_a, "layout B (our A)");
    set_batch(lt_c_, stride_c, "layout C");
  }

  cublasLtMatmulPreference_t pref = nullptr;
  lt_check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  uint64_t ws = workspace_bytes_;
  cublasStatus_t st =
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  // NOTE: the heuristic assumes 256-byte-aligned matrices unless told otherwise; an algorithm picked under
  // that assumption refuses (or misreads) a less aligned pointer or leading dimension. A batch stride sets where
  // the later matrices begin: it counts too.
  const int64_t es = fp8 ? 1 : static_cast<int64_t>(itemsize(dtype));
  const int64_t es_out = fp8 ? static_cast<int64_t>(itemsize(fp8->out)) : es;
  auto align = [](const void* p, int64_t ld_bytes, int64_t stride_bytes) {
    uint64_t x = reinterpret_cast<std::uintptr_t>(p) | static_cast<uint64_t>(ld_bytes) |
                 static_cast<uint64_t>(stride_bytes) | 256u;
    return static_cast<uint32_t>(x & (~x + 1));  // lowest set bit, at most 256
  };
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align(b, ldb * es, stride_b * es)},  // our B
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align(a, lda * es, stride_a * es)},  // our A
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align(c, ldc * es_out, stride_c * es_out)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align(c, ldc * es_out, stride_c * es_out)}};
  for (const auto& [attr, bytes] : alignments)
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulPreferenceSetAttribute(pref, attr, &bytes, sizeof bytes);
  algos_.resize(static_cast<std::size_t>(max_algos));
  int returned = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(cublaslt_handle(), desc_, lt_a_, lt_b_, lt_c_, lt_c_, pref, max_algos,
                                        algos_.data(), &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  lt_check(st, "cublasLtMatmulAlgoGetHeuristic");
  algos_.resize(static_cast<std::size_t>(returned));
  std::erase_if(algos_, [](const cublasLtMatmulHeuristicResult_t& r) { return r.state != CUBLAS_STATUS_SUCCESS; });
  if (algos_.empty()) throw std::runtime_error("cuBLASLt heuristic returned no algorithm for this problem");
}

CublasLtMatmul::~CublasLtMatmul() {
  if (lt_c_) cublasLtMatrixLayoutDestroy(lt_c_);
  if (lt_b_) cublasLtMatrixLayoutDestroy(lt_b_);
  if (lt_a_) cublasLtMatrixLayoutDestroy(lt_a_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

void CublasLtMatmul::run(int algo, const void* a, const void* b, void* c, cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  const auto& h = algos_.at(static_cast<std::size_t>(algo));
  // cuBLASLt's A is our B and its B is our A (see the constructor).
  lt_check(cublasLtMatmul(cublaslt_handle(), desc_, &alpha, b, lt_a_, a, lt_b_, &beta, c, lt_c_, c, lt_c_, &h.algo,
                          workspace_, workspace_bytes_, stream),
           "cublasLtMatmul");
}

}  // namespace tmagemm::cli
