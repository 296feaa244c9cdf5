// cublaslt.cpp — the cuBLASLt backend (see cublaslt.hpp): problem -> column-major cuBLASLt call (with addmm's
// epilogue where cuBLASLt has one, and scaled_mm's FP8 scales, scale mode, fast accumulation and bias), per-device
// handles, descriptors and heuristic query (with the reduction-scheme accuracy floor) at enumeration, one Choice per
// heuristic algorithm, launch.
#include "choices/cublaslt.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cctype>
#include <cstring>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::choices {

namespace {

bool is_16bit_float(DType d) { return d == DType::bf16 || d == DType::f16; }
bool is_fp8(DType d) { return d == DType::e4m3 || d == DType::e5m2; }

// Largest power of two <= 256 dividing `bytes` (256 for 0).
uint32_t alignment_of(uint64_t bytes) {
  if (bytes == 0) return 256;
  return static_cast<uint32_t>(std::min<uint64_t>(bytes & (~bytes + 1), 256));
}

CublasLtMatrix stored(const char* name, const Operand& o, bool out_col, int64_t batch) {
  CublasLtMatrix x;
  x.name = name;
  x.data = o.data;
  x.dtype = o.dtype;
  const bool col = o.major() == Major::col;
  x.rows = static_cast<uint64_t>(col ? o.rows : o.cols);
  x.cols = static_cast<uint64_t>(col ? o.cols : o.rows);
  x.ld = o.ld();
  x.batch_stride = o.batch_stride;
  x.transpose = col != out_col;
  const uint64_t elem = itemsize(o.dtype);
  uint32_t align = alignment_of(reinterpret_cast<std::uintptr_t>(o.data));
  // NOTE: cuBLASLt's alignment requirement covers the buffer pointer, the leading dimension and the batch stride.
  align = std::min(align, alignment_of(static_cast<uint64_t>(x.ld) * elem));
  if (batch > 1) align = std::min(align, alignment_of(static_cast<uint64_t>(x.batch_stride) * elem));
  x.alignment = align;
  return x;
}

// scaled_mm's input and output types against cuBLASLt's FP8 type table.
std::string fp8_types_reason(const GemmProblem& p) {
  if (!is_fp8(p.a.dtype) || !is_fp8(p.b.dtype))
    return fmt::format("scaled_mm inputs must be e4m3 or e5m2 (got {} and {})", to_string(p.a.dtype),
                       to_string(p.b.dtype));
  // NOTE: cuBLASLt's FP8 type table (the cuBLAS documentation of cublasLtMatmul(), "See the table below when using
  // FP8 kernels") pairs e4m3 x e4m3, e4m3 x e5m2 and e5m2 x e4m3 only.
  if (p.a.dtype == DType::e5m2 && p.b.dtype == DType::e5m2)
    return "a and b are both e5m2: cuBLASLt's FP8 type table has no e5m2 x e5m2 (scaled_mm refuses it too, torch's "
           "rule)";
  // NOTE: the same table: D is bf16, f16 or f32 (or an FP8 type, which tmagemm never writes).
  if (p.out.dtype != DType::bf16 && p.out.dtype != DType::f16 && p.out.dtype != DType::f32)
    return fmt::format("scaled_mm output dtype {} is not in cuBLASLt's FP8 type table (out must be bf16, f16 or f32)",
                       to_string(p.out.dtype));
  return {};
}

// scaled_mm's layouts, alignment and scales, for a problem whose operands passed the common checks.
std::string fp8_call_reason(const GemmProblem& p) {
  // NOTE: cuBLASLt's FP8 kernels take only "TN" on Hopper (the cuBLAS documentation of cublasLtMatmul(): "A must be
  // transposed and B non-transposed (The "TN" format) on Ada (compute capability 8.9), Hopper (compute capability
  // 9.0) ..."). Our a row-major and b column-major are both K-major, which is TN whichever way out is laid out.
  if (p.a.major() != Major::row)
    return fmt::format("a is {}-major: cuBLASLt's FP8 kernels need it K-major (row-major), the \"TN\" form of "
                       "cublasLtMatmul",
                       to_string(p.a.major()));
  if (p.b.major() != Major::col)
    return fmt::format("b is {}-major: cuBLASLt's FP8 kernels need it K-major (column-major), the \"TN\" form of "
                       "cublasLtMatmul",
                       to_string(p.b.major()));
  const CublasLtCall call = cublaslt_call(p);
  // NOTE: FP8 kernels need the matrices of "Tensor Core Usage" 16-byte aligned (the cuBLAS documentation of
  // cublasLtMatmul(): "pointers and matrix dimension must support 16-byte alignment"): for TN, k * sizeof(A),
  // k * sizeof(B) and m * sizeof(C) multiples of 16, every leading dimension in bytes a multiple of 16, every pointer
  // 16-byte aligned.
  const uint64_t out_bytes = itemsize(p.out.dtype);
  if (call.k % 16 != 0)
    return fmt::format("K = {} is not a multiple of 16 (cuBLASLt's FP8 kernels need 16-byte rows)", call.k);
  if ((call.m * out_bytes) % 16 != 0)
    return fmt::format("cuBLASLt's D (out{}) has {} rows of {} bytes = {} bytes per column, not a multiple of 16 "
                       "(cuBLASLt's FP8 kernels need 16-byte aligned matrix dimensions)",
                       call.swapped ? " transposed: N" : ": M", call.m, out_bytes, call.m * out_bytes);
  const std::pair<const char*, const CublasLtMatrix*> matrices[] = {{"A", &call.a}, {"B", &call.b}, {"D", &call.c}};
  for (const auto& [role, x] : matrices)
    if (x->alignment < 16)
      return fmt::format("{} (cuBLAS's {}) is only {}-byte aligned (base address and leading dimension {} x {} bytes): "
                         "cuBLASLt's FP8 kernels need 16-byte aligned pointers and leading dimensions",
                         x->name, role, x->alignment, x->ld, itemsize(x->dtype));
  if (p.scale_kind == ScaleKind::none) return "scaled_mm problem without scales";
  if (p.scale_a == nullptr || p.scale_b == nullptr) return "scaled_mm problem with a null scale pointer";
  return cublaslt_scale_mode_reason(p.scale_kind, cublaslt_version());
}

}  // namespace

int cublaslt_version() {
  static const int version =
      static_cast<int>(std::min<std::size_t>(cublasLtGetVersion(), static_cast<std::size_t>(CUBLAS_VERSION)));
  return version;
}

std::string cublaslt_scale_mode_reason(ScaleKind kind, int version) {
  if (kind != ScaleKind::rowwise) return {};
  // NOTE: CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F (cublasLt.h, cublasLtMatmulMatrixScale_t) is new in cuBLAS 12.9
  // (NVIDIA's cuBLAS 12.9 announcement: outer-vector FP8 scaling on Hopper); earlier headers have no such value.
  if (version < kCublasLtOuterVectorScaleVersion)
    return fmt::format("rowwise scales need cuBLASLt's outer-vector scale mode (CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_"
                       "32F, cuBLASLt {}.{} or later); this cuBLASLt is {}.{}",
                       kCublasLtOuterVectorScaleVersion / 10000, kCublasLtOuterVectorScaleVersion / 100 % 100,
                       version / 10000, version / 100 % 100);
  return {};
}

std::string cublaslt_device_reason(const GemmProblem& p, int cc_major, int cc_minor) {
  if (p.op != Op::scaled_mm) return {};
  const int cc = cc_major * 10 + cc_minor;
  // NOTE: the cuBLAS documentation's "Scaling Mode Support Overview" (narrow precision data types): tensorwise FP8
  // scaling on compute capability 8.9+, outer-vector scaling on 9.0.
  if (cc < 89)
    return fmt::format("cuBLASLt's FP8 kernels need compute capability 8.9 or later (device has {}.{})", cc_major,
                       cc_minor);
  if (p.scale_kind == ScaleKind::rowwise && cc != 90)
    return fmt::format("cuBLASLt documents outer-vector (rowwise) FP8 scales for compute capability 9.0 only (device "
                       "has {}.{})",
                       cc_major, cc_minor);
  return {};
}

std::string cublaslt_reason_unsupported(const GemmProblem& p) {
  if (p.op != Op::mm && p.op != Op::bmm && p.op != Op::addmm && p.op != Op::scaled_mm)
    return fmt::format("op {} not handled by the cuBLASLt backend yet", to_string(p.op));
  if (p.op == Op::scaled_mm) {
    if (auto r = fp8_types_reason(p); !r.empty()) return r;
  } else {
    if (!is_16bit_float(p.a.dtype) || p.a.dtype != p.b.dtype)
      return fmt::format("inputs must be both bf16 or both f16 (got {} and {})", to_string(p.a.dtype),
                         to_string(p.b.dtype));
    // NOTE: with CUBLAS_COMPUTE_32F and 16-bit A/B, cuBLASLt's C/D type is the input type or f32 (no bf16 <-> f16).
    if (p.out.dtype != p.a.dtype && p.out.dtype != DType::f32)
      return fmt::format("output dtype {} with {} inputs is not a cuBLASLt type combination (out must be {} or f32)",
                         to_string(p.out.dtype), to_string(p.a.dtype), to_string(p.a.dtype));
  }
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.batch <= 0)
    return "empty problem (M, N, K or batch is 0) needs no GEMM kernel";
  if (p.batch > std::numeric_limits<int32_t>::max())
    return fmt::format("batch {} exceeds cuBLASLt's 32-bit batch count", p.batch);
  const std::pair<const char*, const Operand*> operands[] = {{"a", &p.a}, {"b", &p.b}, {"out", &p.out}};
  for (const auto& [name, o] : operands) {
    const Major major = o->major();
    if (major == Major::strided)
      return fmt::format("{} has no unit stride (cuBLASLt needs column- or row-major operands; strides {}, {})", name,
                         o->row_stride, o->col_stride);
    // NOTE: cuBLASLt needs ld >= rows of the column-major matrix (no overlapping or broadcast rows/columns).
    const int64_t contiguous = major == Major::col ? o->rows : o->cols;
    if (o->ld() < std::max<int64_t>(1, contiguous))
      return fmt::format(
          "{} is {}-major with {} stride {}, less than its {} {} (cuBLASLt needs a leading dimension of at least "
          "the contiguous extent)",
          name, to_string(major), major == Major::col ? "col" : "row", o->ld(), contiguous,
          major == Major::col ? "rows" : "columns");
    if (p.batch > 1 && o->batch_stride < 0) return fmt::format("{} has a negative batch stride", name);
  }
  if (p.batch > 1 && p.out.batch_stride == 0)
    return "out has batch stride 0 with batch > 1 (every batch would write the same matrix)";
  if (p.op == Op::scaled_mm)
    if (auto r = fp8_call_reason(p); !r.empty()) return r;
  return cublaslt_epilogue_reason(p);
}

namespace {

// scaled_mm's bias (N values, one per output column) through the BIAS epilogue.
std::string fp8_bias_reason(const GemmProblem& p) {
  if (p.bias_kind == BiasKind::none) return {};
  if (p.bias_kind != BiasKind::row_vector)
    return "scaled_mm's bias must be a row vector of N values (one per output column)";
  // NOTE: the BIAS epilogue adds one value per row of D (cublasLt.h, CUBLASLT_EPILOGUE_BIAS: "Bias vector length must
  // match matrix D rows"); D's rows are the output's columns only when out is row-major (the swapped call).
  if (p.out.major() != Major::row)
    return fmt::format("scaled_mm's bias has one value per output column but out is {}-major: cuBLASLt's bias "
                       "epilogue adds one value per row of its column-major D, which is one per output row here",
                       to_string(p.out.major()));
  // NOTE: the bias vector must be packed (cublasLt.h, CUBLASLT_EPILOGUE_BIAS: "stride between vector elements is 1").
  if (p.bias.cols > 1 && p.bias.col_stride != 1)
    return fmt::format("bias has element stride {}: cuBLASLt's bias epilogue needs a packed vector (stride 1)",
                       p.bias.col_stride);
  // NOTE: cuBLASLt's FP8 type table (the cuBLAS documentation of cublasLtMatmul()) gives the bias type per D type:
  // bf16 for D bf16, f16 for D f16, bf16 for D f32 (cublasLt.h, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: out's type
  // except for "fp8 kernels with an output type of CUDA_R_32F").
  const DType expected = p.out.dtype == DType::f32 ? DType::bf16 : p.out.dtype;
  if (p.bias.dtype != expected)
    return fmt::format("bias dtype {} with out dtype {}: cuBLASLt's FP8 kernels take a {} bias for that output (their "
                       "type table in the cublasLtMatmul documentation)",
                       to_string(p.bias.dtype), to_string(p.out.dtype), to_string(expected));
  if (p.bias.data == p.out.data)
    return "bias is out's own memory (in place): cuBLASLt does not document reading a bias vector that D overwrites";
  return {};
}

}  // namespace

std::string cublaslt_epilogue_reason(const GemmProblem& p) {
  if (p.op == Op::scaled_mm) return fp8_bias_reason(p);
  if (p.op != Op::addmm) return {};
  switch (p.act) {
    case Activation::none:
    case Activation::relu:
    case Activation::gelu_tanh: break;
    case Activation::gelu:
      return "cuBLASLt has no epilogue for act=gelu (erf): its GELU epilogue is the tanh approximation "
             "(act=gelu_tanh)";
    default: return fmt::format("cuBLASLt has no epilogue for act={}", to_string(p.act));
  }
  // beta == 0: the bias is never read (NaN in it must not reach out), so the call is a plain GEMM.
  if (p.beta == 0.0f || p.bias_kind == BiasKind::none) return {};
  const bool out_col = p.out.major() == Major::col;
  if (p.bias_kind == BiasKind::row_vector || p.bias_kind == BiasKind::col_vector) {
    const bool per_column = p.bias_kind == BiasKind::row_vector;  // one value per output column
    const char* kind =
        per_column ? "row vector (one value per output column)" : "column vector (one value per output row)";
    if (p.beta != 1.0f)
      return fmt::format("cuBLASLt's bias epilogue adds the bias unscaled (beta must be 1; got beta={} with a {} "
                         "bias)",
                         p.beta, per_column ? "row-vector" : "column-vector");
    // NOTE: cuBLASLt's bias vector has one element per row of D (cublasLt.h, CUBLASLT_EPILOGUE_BIAS: "Bias vector
    // length must match matrix D rows ... broadcasted to all columns"). D is out^T (one row per output column)
    // when out is row-major and out itself (one row per output row) when out is column-major.
    if (per_column == out_col)
      return fmt::format(
          "bias is a {} but out is {}-major: cuBLASLt's bias epilogue adds one value per row of its column-major D, "
          "which is one per output {} here",
          kind, out_col ? "column" : "row", out_col ? "row" : "column");
    // NOTE: the bias vector must be packed (cublasLt.h, CUBLASLT_EPILOGUE_BIAS: "stride between vector elements
    // is 1"); a vector of one element has no stride to speak of.
    const int64_t length = per_column ? p.bias.cols : p.bias.rows;
    const int64_t stride = per_column ? p.bias.col_stride : p.bias.row_stride;
    if (length > 1 && stride != 1)
      return fmt::format("bias {} has element stride {}: cuBLASLt's bias epilogue needs a packed vector (stride 1)",
                         kind, stride);
    // NOTE: cuBLASLt's bias vector has D's type except for int8 (IMMA) and fp8 kernels (cublasLt.h,
    // CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE), so an f32 bias with a 16-bit out is not a documented combination (on an
    // H200 with cuBLASLt 13.1, bf16 in/out with BIAS_DATA_TYPE = CUDA_R_32F: the heuristic says INVALID_VALUE).
    if (p.bias.dtype != p.out.dtype)
      return fmt::format(
          "bias dtype {} differs from out's {}: cuBLASLt's bias vector has the output type for 16-bit inputs "
          "(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE takes another type only for int8 and fp8 kernels)",
          to_string(p.bias.dtype), to_string(p.out.dtype));
    if (p.bias.data == p.out.data)
      return "bias is out's own memory (in place): cuBLASLt does not document reading a bias vector that D "
             "overwrites";
    return {};
  }
  // Full MxN bias: cuBLAS's C, scaled by cuBLAS's beta.
  // NOTE: cublasLt.h documents RELU and GELU as transforms of "the results" and says only of the BIAS epilogues that
  // the bias is added before them; it does not say that beta * C comes first. cuBLASLt 13.1 on an H200 did apply
  // RELU and GELU after beta * C, but an undocumented order is not relied on: a full bias with an activation is
  // refused.
  if (p.act != Activation::none)
    return fmt::format(
        "cuBLASLt adds a full MxN bias only as its C matrix (beta * C), and cublasLt.h does not say whether the {} "
        "epilogue applies after beta * C is added (act={} needs a bias vector or beta = 0)",
        p.act == Activation::relu ? "RELU" : "GELU", to_string(p.act));
  // NOTE: cuBLASLt's C has D's type for 16-bit inputs with CUBLAS_COMPUTE_32F (C and D share one column in the
  // cuBLAS documentation's table of cublasLtMatmul's type combinations; cublasLt.h does not list them).
  if (p.bias.dtype != p.out.dtype)
    return fmt::format("full bias dtype {} differs from out's {}: cuBLASLt reads a full bias as its C matrix, which "
                       "has the output type",
                       to_string(p.bias.dtype), to_string(p.out.dtype));
  const Major major = p.bias.major();
  if (major == Major::strided)
    return fmt::format("full bias has no unit stride (strides {}, {}): cuBLASLt reads it as its C matrix, which must "
                       "be column- or row-major",
                       p.bias.row_stride, p.bias.col_stride);
  // NOTE: cuBLASLt applies no op to C (cublasLt.h, CUBLASLT_MATMUL_DESC_TRANSC: "Currently only CUBLAS_OP_N is
  // supported"), so C must be stored in D's orientation, i.e. bias in out's order.
  if (major != p.out.major())
    return fmt::format("full bias is {}-major but out is {}-major: cuBLASLt reads the bias as its C matrix "
                       "untransposed (CUBLASLT_MATMUL_DESC_TRANSC takes only CUBLAS_OP_N), so it must have out's "
                       "order",
                       to_string(major), to_string(p.out.major()));
  const int64_t contiguous = major == Major::col ? p.bias.rows : p.bias.cols;
  if (p.bias.ld() < std::max<int64_t>(1, contiguous))
    return fmt::format("full bias is {}-major with {} stride {}, less than its {} {} (cuBLASLt needs a leading "
                       "dimension of at least the contiguous extent)",
                       to_string(major), major == Major::col ? "col" : "row", p.bias.ld(), contiguous,
                       major == Major::col ? "rows" : "columns");
  // NOTE: cuBLASLt computes in place (C == D) only when C and D have the same layout; out of place, C's leading
  // dimension may differ from D's (the cuBLAS documentation of cublasLtMatmul; cublasLt.h says nothing of it).
  if (p.bias.data == p.out.data && p.bias.ld() != p.out.ld())
    return fmt::format("full bias is out's memory with leading dimension {} against out's {}: cuBLASLt computes in "
                       "place (C == D) only with identical C and D layouts",
                       p.bias.ld(), p.out.ld());
  return {};
}

namespace {

bool is_bias_epilogue(int epilogue) {
  return epilogue == CUBLASLT_EPILOGUE_BIAS || epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
         epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
}

}  // namespace

int cublaslt_epilogue(const GemmProblem& p) {
  if (p.op == Op::scaled_mm) return p.bias_kind == BiasKind::none ? CUBLASLT_EPILOGUE_DEFAULT : CUBLASLT_EPILOGUE_BIAS;
  if (p.op != Op::addmm) return CUBLASLT_EPILOGUE_DEFAULT;
  const bool vector = p.beta != 0.0f && (p.bias_kind == BiasKind::row_vector || p.bias_kind == BiasKind::col_vector);
  switch (p.act) {
    case Activation::relu: return vector ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    // NOTE: CUBLASLT_EPILOGUE_GELU is the tanh approximation of GELU. cublasLt.h says only "GELU point-wise
    // transform"; PyTorch's _addmm_activation(use_gelu=True) runs this epilogue and, where it cannot, applies
    // gelu(approximate="tanh") instead. Seen on an H200 with cuBLASLt 13.1 (GELU and GELU_BIAS, f32 out, x in
    // [-6, 6]): within 5e-6 of the tanh formula, 4.7e-4 off the erf one.
    case Activation::gelu_tanh: return vector ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default: return vector ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

CublasLtCall cublaslt_call(const GemmProblem& p) {
  CublasLtCall call;
  const bool out_col = p.out.major() == Major::col;
  call.swapped = !out_col;
  call.k = static_cast<uint64_t>(p.k);
  call.batch = p.batch;
  if (out_col) {  // D = C = A @ B
    call.m = static_cast<uint64_t>(p.m);
    call.n = static_cast<uint64_t>(p.n);
    call.a = stored("a", p.a, out_col, p.batch);
    call.b = stored("b", p.b, out_col, p.batch);
  } else {  // D = C^T = B^T @ A^T
    call.m = static_cast<uint64_t>(p.n);
    call.n = static_cast<uint64_t>(p.m);
    call.a = stored("b", p.b, out_col, p.batch);
    call.b = stored("a", p.a, out_col, p.batch);
  }
  call.c = stored("out", p.out, out_col, p.batch);
  call.c_in = call.c;
  call.alpha = p.alpha;
  call.beta = 0.0f;
  if (p.op == Op::scaled_mm) {
    // out = (a @ b) * scale_a * scale_b (+ bias): alpha 1 (GemmProblem's alpha belongs to addmm).
    call.alpha = 1.0f;
    call.scaled = true;
    // Each scale goes with its operand: swapped, cuBLAS's A is our b. Rowwise, cuBLAS's A scale runs along D's rows
    // (our N when swapped) and its B scale along D's columns, which is the same assignment.
    call.a_scale = call.swapped ? p.scale_b : p.scale_a;
    call.b_scale = call.swapped ? p.scale_a : p.scale_b;
#if CUBLAS_VERSION >= 120900
    call.scale_mode = p.scale_kind == ScaleKind::rowwise ? CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F
                                                         : CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
#else
    call.scale_mode = 0;  // SCALAR_32F; rowwise is refused (cublaslt_scale_mode_reason)
#endif
    call.fast_accum = p.fast_accum;
    call.epilogue = cublaslt_epilogue(p);
    if (is_bias_epilogue(call.epilogue)) {
      call.bias = p.bias.data;
      call.bias_dtype = p.bias.dtype;
      call.bias_alignment = alignment_of(reinterpret_cast<std::uintptr_t>(p.bias.data));
    }
    return call;
  }
  if (p.op != Op::addmm) return call;
  call.epilogue = cublaslt_epilogue(p);
  if (p.beta != 0.0f && p.bias_kind == BiasKind::full) {  // C = bias, read with beta
    call.c_in = stored("bias", p.bias, out_col, p.batch);
    call.beta = p.beta;
  }
  if (is_bias_epilogue(call.epilogue)) {  // beta == 1: the epilogue adds the vector unscaled
    call.bias = p.bias.data;
    call.bias_dtype = p.bias.dtype;
    call.bias_alignment = alignment_of(reinterpret_cast<std::uintptr_t>(p.bias.data));
  }
  return call;
}

uint32_t cublaslt_reduction_mask(DType out, bool allow_reduced) {
  // NOTE: with CUBLAS_COMPUTE_32F, COMPUTE_TYPE reduces in fp32; INPLACE and OUTPUT_TYPE reduce in the output type.
  if (allow_reduced || !is_16bit_float(out)) return CUBLASLT_REDUCTION_SCHEME_MASK;
  return CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
}

bool cublaslt_reduction_allowed(uint32_t scheme, uint32_t mask) { return (scheme & ~mask) == 0; }

int cublaslt_top_k() {
  constexpr const char* kVar = "TMAGEMM_CUBLASLT_TOP_K";
  const char* raw = std::getenv(kVar);
  if (raw == nullptr) return kCublasLtDefaultTopK;
  std::string_view v(raw);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
  if (v.empty()) return kCublasLtDefaultTopK;
  int k = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), k);
  if (ec != std::errc() || end != v.data() + v.size() || k < 1 || k > kCublasLtMaxTopK)
    throw Error(ErrorCode::invalid_argument, fmt::format("{}='{}' is not valid: expected an integer from 1 to {}",
                                                         kVar, std::string(v), kCublasLtMaxTopK));
  return k;
}

namespace {

// cublasLt.h's tile table (generated at configure time by cmake/cublaslt_tiles.cmake).
constexpr CublasLtTile kTileTable[] = {
#include "cublaslt_tiles.inc"
};

}  // namespace

const CublasLtTile* cublaslt_tile(uint32_t id) {
  for (const CublasLtTile& t : kTileTable)
    if (t.id == id) return &t;
  return nullptr;
}

std::vector<int64_t> cublaslt_search_model_ms(int64_t m) {
  if (m <= 64) return {};
  // The octave (2^e, 2^(e+1)] holding m, in four steps (tune/buckets.hpp m_bucket; tests/cpu/choices check they agree).
  const int e = std::bit_width(static_cast<uint64_t>(m - 1)) - 1;
  const int64_t step = int64_t{1} << (e - 2);
  const int64_t hi = (m + step - 1) / step * step, lo = hi - step + 1;
  return {lo, lo - 1 + step / 2, hi};
}

std::vector<CublasLtTile> cublaslt_search_tiles(uint64_t m, uint64_t n, int64_t batch, int sm_count,
                                                const std::vector<uint32_t>& offered, int count) {
  struct Scored {
    CublasLtTile tile;
    double cost;
  };
  std::vector<Scored> scored;
  const double sms = std::max(1, sm_count);
  for (uint32_t id : offered) {
    const CublasLtTile* t = cublaslt_tile(id);
    if (t == nullptr || t->rows != 128 || t->cols < 64 || t->cols > 512) continue;
    if (std::any_of(scored.begin(), scored.end(), [&](const Scored& x) { return x.tile.id == id; })) continue;
    const double tiles = std::ceil(static_cast<double>(m) / t->rows) * std::ceil(static_cast<double>(n) / t->cols) *
                         static_cast<double>(std::max<int64_t>(1, batch));
    const double rounds = std::ceil(tiles / sms);
    const double area = static_cast<double>(t->rows) * t->cols;
    scored.push_back({*t, rounds * area * (1.0 + 24.0 * (1.0 / t->rows + 1.0 / t->cols))});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& x, const Scored& y) { return x.cost < y.cost; });
  std::vector<CublasLtTile> out;
  for (const Scored& x : scored) {
    if (static_cast<int>(out.size()) >= count) break;
    out.push_back(x.tile);
  }
  return out;
}

std::vector<CublasLtSearchConfig> cublaslt_search_configs(int64_t m, uint64_t other, bool rows_along_n, int64_t batch,
                                                          int sm_count, const std::vector<uint32_t>& offered) {
  auto best_at = [&](int64_t rows) {
    const uint64_t cm = rows_along_n ? other : static_cast<uint64_t>(rows);
    const uint64_t cn = rows_along_n ? static_cast<uint64_t>(rows) : other;
    return cublaslt_search_tiles(cm, cn, batch, sm_count, offered, kCublasLtSearchTilesPerM);
  };
  auto has = [](const std::vector<CublasLtTile>& ts, const CublasLtTile& t) {
    return std::any_of(ts.begin(), ts.end(), [&](const CublasLtTile& x) { return x.id == t.id; });
  };
  std::vector<CublasLtTile> bucket;
  for (const int64_t model_m : cublaslt_search_model_ms(m))
    for (const CublasLtTile& t : best_at(model_m))
      if (!has(bucket, t)) bucket.push_back(t);
  const std::vector<CublasLtTile> fitted = m > 64 ? best_at(m) : std::vector<CublasLtTile>();
  std::vector<CublasLtSearchConfig> out;
  for (const CublasLtTile& t : bucket)
    for (const CublasLtSearchVariant& v : kCublasLtSearchVariants) out.push_back({t, v, true, has(fitted, t)});
  for (const CublasLtTile& t : fitted) {
    if (!has(bucket, t))
      for (const CublasLtSearchVariant& v : kCublasLtSearchVariants) out.push_back({t, v, false, true});
    for (const CublasLtSearchVariant& v : kCublasLtFittedVariants) out.push_back({t, v, false, true});
  }
  return out;
}

bool cublaslt_search_enabled() {
  const char* v = std::getenv("TMAGEMM_CUBLASLT_SEARCH");
  return v == nullptr || std::string_view(v) != "0";
}

namespace {

const char* status_name(cublasStatus_t s) { return cublasLtGetStatusName(s); }
// A failed launch's code: out_of_memory where cuBLASLt could not allocate (a failure of the moment), else cuda_error.
ErrorCode error_code(cublasStatus_t s) {
  return s == CUBLAS_STATUS_ALLOC_FAILED ? ErrorCode::out_of_memory : ErrorCode::cuda_error;
}

cudaDataType_t cuda_type(DType d) {
  switch (d) {
    case DType::f16: return CUDA_R_16F;
    case DType::f32: return CUDA_R_32F;
    case DType::e4m3: return CUDA_R_8F_E4M3;
    case DType::e5m2: return CUDA_R_8F_E5M2;
    case DType::bf16:
    default: return CUDA_R_16BF;  // never reached for other types: cublaslt_reason_unsupported refuses them
  }
}

// Makes `device` current for its lifetime (only when it is not already) and restores the previous one.
class DeviceGuard {
 public:
  DeviceGuard() = default;
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() {
    if (restore_) cudaSetDevice(previous_);
  }
  cudaError_t set(int device) {
    cudaError_t st = cudaGetDevice(&previous_);
    if (st != cudaSuccess) return st;
    if (previous_ == device) return cudaSuccess;
    st = cudaSetDevice(device);
    restore_ = st == cudaSuccess;
    return st;
  }

 private:
  int previous_ = 0;
  bool restore_ = false;
};

// One handle per device, created (with that device current) on first use and never destroyed.
cublasStatus_t handle_for(int device, cublasLtHandle_t* handle) {
  static std::mutex mutex;
  static std::map<int, cublasLtHandle_t> handles;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = handles.find(device); it != handles.end()) {
    *handle = it->second;
    return CUBLAS_STATUS_SUCCESS;
  }
  DeviceGuard guard;
  if (guard.set(device) != cudaSuccess) {
    cudaGetLastError();
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  cublasLtHandle_t h = nullptr;
  const cublasStatus_t st = cublasLtCreate(&h);
  if (st != CUBLAS_STATUS_SUCCESS) return st;  // not cached: a later call tries again
  handles.emplace(device, h);
  *handle = h;
  return st;
}

// The matmul and layout descriptors of one call (host objects only).
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // c: D's layout, and C's unless c_in is set
  cublasLtMatrixLayout_t c_in = nullptr;  // C's layout when it differs from D's (a full bias with its own ld)

  Descriptors() = default;
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  cublasLtMatrixLayout_t c_layout() const { return c_in ? c_in : c; }
  ~Descriptors() {
    if (c_in) cublasLtMatrixLayoutDestroy(c_in);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

cublasStatus_t make_layout(const CublasLtMatrix& x, int64_t batch, cublasLtMatrixLayout_t* out) {
  cublasStatus_t st = cublasLtMatrixLayoutCreate(out, cuda_type(x.dtype), x.rows, x.cols, x.ld);
  if (st != CUBLAS_STATUS_SUCCESS || batch <= 1) return st;
  const int32_t count = static_cast<int32_t>(batch);
  const int64_t offset = x.batch_stride;
  st = cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &offset, sizeof offset);
  return st;
}

bool same_matrix(const CublasLtMatrix& x, const CublasLtMatrix& y, int64_t batch) {
  return x.dtype == y.dtype && x.rows == y.rows && x.cols == y.cols && x.ld == y.ld && x.transpose == y.transpose &&
         (batch <= 1 || x.batch_stride == y.batch_stride);
}

// Sets the attributes of matmul descriptor `op` (created or initialised with CUBLAS_COMPUTE_32F, CUDA_R_32F) for
// `call`: transposes, SM target, epilogue, for the BIAS epilogues the bias type and call.bias as the bias pointer,
// and for scaled_mm the scale pointers, their scale mode and fast accumulation. On failure returns the status and
// the attribute that failed in `what`.
cublasStatus_t configure_matmul_desc(const CublasLtCall& call, int32_t sm_target, cublasLtMatmulDesc_t op,
                                     std::string& what) {
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* value, std::size_t size, const char* name) {
    const cublasStatus_t st = cublasLtMatmulDescSetAttribute(op, attr, value, size);
    if (st != CUBLAS_STATUS_SUCCESS) what = fmt::format("cublasLtMatmulDescSetAttribute({})", name);
    return st;
  };
  const int32_t trans_a = call.a.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t trans_b = call.b.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasStatus_t st = set(CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a, "TRANSA");
  if (st == CUBLAS_STATUS_SUCCESS) st = set(CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b, "TRANSB");
  if (st == CUBLAS_STATUS_SUCCESS && sm_target > 0)
    st = set(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm_target, sizeof sm_target, "SM_COUNT_TARGET");
  const uint32_t epilogue = static_cast<uint32_t>(call.epilogue);
  if (st == CUBLAS_STATUS_SUCCESS && epilogue != CUBLASLT_EPILOGUE_DEFAULT)
    st = set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue, "EPILOGUE");
  if (st == CUBLAS_STATUS_SUCCESS && is_bias_epilogue(call.epilogue)) {
    // The bias type is out's (cublaslt_epilogue_reason refuses any other), set explicitly all the same.
    const int32_t bias_type = cuda_type(call.bias_dtype);
    st = set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type, "BIAS_DATA_TYPE");
    // NOTE: the heuristic does not read the bias but takes the alignment its algorithms may assume from this
    // pointer's value (cublasLt.h, CUBLASLT_MATMUL_DESC_BIAS_POINTER), so it is set before the query too.
    if (st == CUBLAS_STATUS_SUCCESS)
      st = set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &call.bias, sizeof call.bias, "BIAS_POINTER");
  }
  if (st == CUBLAS_STATUS_SUCCESS && call.scaled) {
    // NOTE: FP8 needs CUBLAS_COMPUTE_32F with scale type CUDA_R_32F (the cuBLAS documentation of cublasLtMatmul()),
    // which every descriptor here is created with; the scale factors have the compute type (cublasLt.h,
    // CUBLASLT_MATMUL_DESC_A_SCALE_POINTER: "The scaling factor value must have the same type as the compute type").
    st = set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &call.a_scale, sizeof call.a_scale, "A_SCALE_POINTER");
    if (st == CUBLAS_STATUS_SUCCESS)
      st = set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &call.b_scale, sizeof call.b_scale, "B_SCALE_POINTER");
#if CUBLAS_VERSION >= 120900
    // NOTE: outer-vector scaling needs A_SCALE_MODE and B_SCALE_MODE both OUTER_VEC_32F, every other scale mode left
    // at its default (the cuBLAS documentation, "Outer Vector Scaling for FP8 Data Types"); the modes are int32_t
    // (cublasLt.h, CUBLASLT_MATMUL_DESC_A_SCALE_MODE). SCALAR_32F is the default and is not written.
    const int32_t mode = call.scale_mode;
    if (st == CUBLAS_STATUS_SUCCESS && mode != CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F) {
      st = set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode, "A_SCALE_MODE");
      if (st == CUBLAS_STATUS_SUCCESS) st = set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode, "B_SCALE_MODE");
    }
#endif
    // NOTE: CUBLASLT_MATMUL_DESC_FAST_ACCUM is an int8_t, 0 by default (cublasLt.h): 0 promotes the tensor cores'
    // partial sums to fp32 periodically, 1 does not.
    const int8_t fast = call.fast_accum ? 1 : 0;
    if (st == CUBLAS_STATUS_SUCCESS) st = set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast, "FAST_ACCUM");
  }
  return st;
}

// Fills `d` for `call`; `sm_target` > 0 asks cuBLASLt to plan for that many SMs (Options::sm_carveout).
// On failure returns the status and the step that failed in `what`.
cublasStatus_t build_descriptors(const CublasLtCall& call, int32_t sm_target, Descriptors& d, std::string& what) {
  auto fail = [&what](std::string step, cublasStatus_t status) {
    what = std::move(step);
    return status;
  };
  cublasStatus_t st = cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  if (st != CUBLAS_STATUS_SUCCESS) return fail("cublasLtMatmulDescCreate", st);
  if ((st = configure_matmul_desc(call, sm_target, d.op, what)) != CUBLAS_STATUS_SUCCESS) return st;
  if ((st = make_layout(call.a, call.batch, &d.a)) != CUBLAS_STATUS_SUCCESS)
    return fail(fmt::format("cublasLtMatrixLayout(A = {})", call.a.name), st);
  if ((st = make_layout(call.b, call.batch, &d.b)) != CUBLAS_STATUS_SUCCESS)
    return fail(fmt::format("cublasLtMatrixLayout(B = {})", call.b.name), st);
  if ((st = make_layout(call.c, call.batch, &d.c)) != CUBLAS_STATUS_SUCCESS)
    return fail("cublasLtMatrixLayout(D = out)", st);
  // NOTE: in place (C == D, a full bias that is out itself) cuBLASLt needs C's layout to be D's; one layout object
  // is then passed for both (seen right on an H200 with cuBLASLt 13.1, bf16 and f32, beta 0.5). A C laid out like D
  // but elsewhere in memory shares it too.
  if (!same_matrix(call.c_in, call.c, call.batch) &&
      (st = make_layout(call.c_in, call.batch, &d.c_in)) != CUBLAS_STATUS_SUCCESS)
    return fail(fmt::format("cublasLtMatrixLayout(C = {})", call.c_in.name), st);
  return CUBLAS_STATUS_SUCCESS;
}

// SMs cuBLASLt should plan for: 0 (the whole device) unless some are carved out.
int32_t sm_target(int sm_count, int carveout) {
  if (carveout <= 0 || sm_count <= 0) return 0;
  return std::max(1, sm_count - carveout);
}

// Descriptors for one call shape and what the heuristic was told (alignments, SM target, reduction-scheme mask):
// shared by the choices of one enumeration, immutable once built.
struct Plan {
  int device = 0;
  int sm_count = 0;
  int32_t sm_target = 0;
  uint32_t reduction_mask = CUBLASLT_REDUCTION_SCHEME_MASK;  // cublaslt_reduction_mask of the options
  cublasLtHandle_t handle = nullptr;
  // Data pointers are those of the problem it was built for: unused afterwards, except that a launch with the same
  // bias pointer runs the plan's descriptor as it is (see CublasLtChoice::launch).
  CublasLtCall call;
  Descriptors desc;

  // True when this plan's descriptors describe `c` and algorithms chosen for it can run `c` under the SM target and
  // reduction mask asked for: same extents, lds, batch strides, types and transposes, the same epilogue signature
  // (epilogue, bias type, whether C is read, scale mode, fast accumulation), and every matrix and the bias vector at
  // least as aligned as the heuristic was told. A plan for mm thus never serves an addmm whose epilogue differs (the
  // heuristic's algorithms depend on it).
  bool fits(const CublasLtCall& c, int32_t target, uint32_t mask) const {
    const bool bias = is_bias_epilogue(c.epilogue);
    return target == sm_target && mask == reduction_mask && c.swapped == call.swapped && c.m == call.m &&
           c.n == call.n && c.k == call.k && c.batch == call.batch && same_matrix(c.a, call.a, c.batch) &&
           same_matrix(c.b, call.b, c.batch) && same_matrix(c.c, call.c, c.batch) &&
           same_matrix(c.c_in, call.c_in, c.batch) && c.a.alignment >= call.a.alignment &&
           c.b.alignment >= call.b.alignment && c.c.alignment >= call.c.alignment &&
           c.c_in.alignment >= call.c_in.alignment && c.epilogue == call.epilogue &&
           (c.beta != 0.0f) == (call.beta != 0.0f) && c.scaled == call.scaled && c.scale_mode == call.scale_mode &&
           c.fast_accum == call.fast_accum &&
           (!bias || (c.bias_dtype == call.bias_dtype && c.bias_alignment >= call.bias_alignment));
  }
};

// The reduction scheme an algorithm is configured with; false when cuBLASLt cannot say.
bool reduction_scheme_of(const cublasLtMatmulAlgo_t& algo, uint32_t& scheme) {
  std::size_t written = 0;
  scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
  return cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof scheme,
                                              &written) == CUBLAS_STATUS_SUCCESS &&
         written == sizeof scheme;
}

// For a problem cuBLASLt can express, on a device that exists: builds a plan (handle, descriptors) and asks the
// heuristic for up to `count` algorithms whose reduction scheme is in `mask` (cublaslt_reduction_mask); `results`
// keeps the usable ones, best first. Returns the reason on failure. Makes the problem's device current while it
// works.
std::string make_plan(const GemmProblem& p, int sm_count, int32_t target, uint32_t mask, int count,
                      std::shared_ptr<Plan>& plan, std::vector<cublasLtMatmulHeuristicResult_t>& results) {
  // NOTE: cuBLASLt may call cudaFree(nullptr) on a thread it has not seen (a context check): in global capture mode
  // that call fails and invalidates another thread's global-mode capture (lab/probes/capture_culprit.cpp caught it on
  // the H200). Its calls run in thread-local mode, which still forbids them inside this thread's own capture.
  const runtime::ThreadLocalCaptureMode capture_mode;
  DeviceGuard guard;
  if (cudaError_t e = guard.set(p.device); e != cudaSuccess) {
    cudaGetLastError();
    return fmt::format("cudaSetDevice({}): {}", p.device, cudaGetErrorName(e));
  }
  plan = std::make_shared<Plan>();
  plan->device = p.device;
  plan->sm_count = sm_count;
  plan->sm_target = target;
  plan->reduction_mask = mask;
  if (cublasStatus_t st = handle_for(p.device, &plan->handle); st != CUBLAS_STATUS_SUCCESS)
    return fmt::format("cublasLtCreate: {}", status_name(st));
  plan->call = cublaslt_call(p);
  std::string what;
  if (cublasStatus_t st = build_descriptors(plan->call, target, plan->desc, what); st != CUBLAS_STATUS_SUCCESS)
    return fmt::format("{}: {}", what, status_name(st));

  cublasLtMatmulPreference_t pref = nullptr;
  cublasStatus_t st = cublasLtMatmulPreferenceCreate(&pref);
  if (st != CUBLAS_STATUS_SUCCESS) return fmt::format("cublasLtMatmulPreferenceCreate: {}", status_name(st));
  const uint64_t max_workspace = kCublasLtWorkspaceBytes;
  st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
                                            sizeof max_workspace);
  // NOTE: the default minimum alignment is 256 bytes; algorithms picked under it fail on less aligned operands.
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, plan->call.a.alignment},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, plan->call.b.alignment},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, plan->call.c_in.alignment},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, plan->call.c.alignment}};
  for (const auto& [attr, bytes] : alignments)
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulPreferenceSetAttribute(pref, attr, &bytes, sizeof bytes);
  // NOTE: the default mask admits every scheme, including those that add split-K partial sums in a 16-bit output
  // type (INPLACE, OUTPUT_TYPE); only a narrower mask is set.
  const bool restricted = mask != CUBLASLT_REDUCTION_SCHEME_MASK;
  if (st == CUBLAS_STATUS_SUCCESS && restricted)
    st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask);
  if (st != CUBLAS_STATUS_SUCCESS) {
    cublasLtMatmulPreferenceDestroy(pref);
    return fmt::format("cublasLtMatmulPreferenceSetAttribute: {}", status_name(st));
  }
  count = std::clamp(count, 1, kCublasLtMaxTopK);
  cublasLtMatmulHeuristicResult_t found[kCublasLtMaxTopK] = {};
  int returned = 0;
  // The descriptor carries the epilogue (and the bias pointer's alignment): which algorithms exist depends on them.
  st = cublasLtMatmulAlgoGetHeuristic(plan->handle, plan->desc.op, plan->desc.a, plan->desc.b,
                                      plan->desc.c_layout(), plan->desc.c, pref, count, found, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  constexpr const char* kNoFp32Reduction =
      "no cuBLASLt algorithm reduces in fp32 for this problem (Options::allow_reduced_precision_reduction is false)";
  if (st != CUBLAS_STATUS_SUCCESS) {
    if (restricted) return fmt::format("{}: the heuristic says {}", kNoFp32Reduction, status_name(st));
    return fmt::format("cuBLASLt has no algorithm for this problem: {}", status_name(st));
  }
  results.clear();
  int reduces_narrow = 0;  // algorithms dropped for a reduction scheme outside the mask
  for (int i = 0; i < std::min(returned, count); ++i) {
    if (found[i].state != CUBLAS_STATUS_SUCCESS || found[i].workspaceSize > kCublasLtWorkspaceBytes) continue;
    // Belt and braces: the heuristic was asked with the mask, and each algorithm's own scheme must agree. One whose
    // scheme cannot be read is dropped too, since nothing then shows that it adds its partial sums in fp32.
    uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
    if (restricted && (!reduction_scheme_of(found[i].algo, scheme) || !cublaslt_reduction_allowed(scheme, mask))) {
      ++reduces_narrow;
      continue;
    }
    results.push_back(found[i]);
  }
  if (results.empty()) {
    if (restricted) return kNoFp32Reduction;
    return "cuBLASLt has no algorithm for this problem: the heuristic returned none";
  }
  if (reduces_narrow > 0 && runtime::log_enabled("autotune"))
    fmt::print(stderr,
               "tmagemm autotune: cublaslt dropped {} heuristic algorithm(s) that reduce split-K partial sums in {}\n",
               reduces_narrow, to_string(p.out.dtype));
  return {};
}

// The single choice offered when the heuristic cannot be asked; can_implement says why.
class CublasLtUnavailable final : public Choice {
 public:
  explicit CublasLtUnavailable(std::string reason) : reason_(std::move(reason)) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "cublaslt"; }
  TiePolicy tie_policy() const override { return TiePolicy::library_rank; }
  const char* library() const override { return "cuBLASLt"; }
  std::string can_implement(const GemmProblem&, const runtime::DeviceInfo&) const override { return reason_; }
  void precompile(const GemmProblem&, int) const override {
    throw Error(ErrorCode::unsupported, "cublaslt: " + reason_);
  }
  void launch(const GemmProblem&, cudaStream_t, const Options&, void*) const override {
    throw Error(ErrorCode::unsupported, "cublaslt: " + reason_);
  }

 private:
  std::string name_ = "cublaslt";
  std::string reason_;
};

// One algorithm configuration of the configuration search (cublaslt.hpp): algorithm id, tile, custom option and
// cluster shape, no split-K, automatic stage count of 64-element K blocks.
struct LtConfig {
  int algo = 0;
  CublasLtTile tile;
  CublasLtSearchVariant variant{};
};

std::string config_name(const LtConfig& c) {
  return fmt::format("cublaslt_a{}_t{}x{}_o{}_c{}x{}", c.algo, c.tile.rows, c.tile.cols, c.variant.custom,
                     c.variant.cx, c.variant.cy);
}

// The algorithm of `cfg` for `plan`'s descriptors and its workspace; the reason when cuBLASLt refuses it
// (cublasLtMatmulAlgoCheck: the tile, option or cluster shape does not exist for this problem).
std::string config_algo(const Plan& plan, const LtConfig& cfg, cublasLtMatmulAlgo_t& algo, std::size_t& workspace) {
  const CublasLtCall& c = plan.call;
  cublasStatus_t st =
      cublasLtMatmulAlgoInit(plan.handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, cuda_type(c.a.dtype), cuda_type(c.b.dtype),
                             cuda_type(c.c_in.dtype), cuda_type(c.c.dtype), cfg.algo, &algo);
  if (st != CUBLAS_STATUS_SUCCESS) return fmt::format("cublasLtMatmulAlgoInit(algo {}): {}", cfg.algo, status_name(st));
  const uint32_t tile = cfg.tile.id, stages = CUBLASLT_MATMUL_STAGES_64xAUTO, custom = cfg.variant.custom,
                 scheme = CUBLASLT_REDUCTION_SCHEME_NONE, swizzle = 0;
  const int32_t split = 1;
  const uint16_t cluster = cfg.variant.cluster;
  const auto set = [&](cublasLtMatmulAlgoConfigAttributes_t attr, const void* v, std::size_t bytes) {
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, v, bytes);
  };
  set(CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile);
  set(CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages);
  set(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof split);
  set(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof scheme);
  set(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle);
  set(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom);
  set(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster);
  if (st != CUBLAS_STATUS_SUCCESS) return fmt::format("cublasLtMatmulAlgoConfigSetAttribute: {}", status_name(st));
  cublasLtMatmulHeuristicResult_t r{};
  st = cublasLtMatmulAlgoCheck(plan.handle, plan.desc.op, plan.desc.a, plan.desc.b, plan.desc.c_layout(), plan.desc.c,
                               &algo, &r);
  if (st != CUBLAS_STATUS_SUCCESS)
    return fmt::format("cuBLASLt has no {} for this problem (cublasLtMatmulAlgoCheck: {})", config_name(cfg),
                       status_name(st));
  if (r.workspaceSize > kCublasLtWorkspaceBytes)
    return fmt::format("{} needs {} bytes of workspace (more than {})", config_name(cfg), r.workspaceSize,
                       kCublasLtWorkspaceBytes);
  workspace = r.workspaceSize;
  return {};
}

// Heuristic algorithm number `rank` (0 = cuBLASLt's first pick) for a problem. The tuner keeps a winning choice
// for every problem with the same tuning key, which does not fix M (shape buckets), lds, batch strides or exact
// alignment; for such a problem the choice asks the heuristic again (per distinct layout; the last kKeptLayouts
// layouts are kept) and runs the algorithm of the same rank, so the name always means "the heuristic's pick number
// <rank> for this problem". (Running the algorithm timed on the bucket's largest M at every M of the bucket instead
// measured 1.034 of exact per-M tuning against 1.020 this way on the H200: cuBLASLt's heuristic adapts its pick to M,
// docs/perf-notes.md.)
class CublasLtChoice final : public Choice {
 public:
  struct Variant {
    std::shared_ptr<const Plan> plan;
    cublasLtMatmulAlgo_t algo{};
    std::size_t workspace = 0;
  };

  using VariantPtr = std::shared_ptr<const Variant>;

  CublasLtChoice(int rank, Variant primary)
      : name_(fmt::format("cublaslt_algo{}", rank)),
        rank_(rank),
        primary_(std::make_shared<const Variant>(std::move(primary))) {}
  // A configuration of the search: the same algorithm configuration at every problem (checked per layout).
  CublasLtChoice(const LtConfig& config, bool fitted, bool m_only, Variant primary)
      : name_(config_name(config)),
        rank_(-1),
        config_(config),
        fitted_(fitted),
        m_only_(m_only),
        primary_(std::make_shared<const Variant>(std::move(primary))) {}

  const std::string& name() const override { return name_; }
  const char* backend() const override { return "cublaslt"; }

  std::string can_implement(const GemmProblem& p, const runtime::DeviceInfo& device) const override {
    if (auto r = cublaslt_reason_unsupported(p); !r.empty()) return r;
    if (device.cc_major > 0)
      if (auto r = cublaslt_device_reason(p, device.cc_major, device.cc_minor); !r.empty()) return r;
    if (p.device != primary_->plan->device)
      return fmt::format("the algorithm was chosen on device {}; the problem is on device {}", primary_->plan->device,
                         p.device);
    if (config_) {  // a configuration cuBLASLt may not have for this layout (host work, kept per layout)
      try {
        variant_for(p, cublaslt_call(p), primary_->plan->sm_target, primary_->plan->reduction_mask);
      } catch (const Error& e) {
        return e.what();
      }
    }
    return {};
  }

  // The descriptors of the enumerated problem were built with the heuristic query; a problem with another layout
  // gets its own here (host work only: descriptors and a heuristic query).
  void precompile(const GemmProblem& p, int /*device*/) const override {
    if (auto r = can_implement(p, runtime::DeviceInfo{}); !r.empty())
      throw Error(ErrorCode::unsupported, fmt::format("{}: {}", name_, r));
    variant_for(p, cublaslt_call(p), primary_->plan->sm_target, primary_->plan->reduction_mask);
  }

  void launch(const GemmProblem& p, cudaStream_t stream, const Options& options, void* workspace) const override {
    if (auto r = can_implement(p, runtime::DeviceInfo{}); !r.empty())
      throw Error(ErrorCode::unsupported, fmt::format("{}: {}", name_, r));
    const CublasLtCall call = cublaslt_call(p);
    const VariantPtr held = variant_for(p, call, sm_target(primary_->plan->sm_count, options.sm_carveout),
                                        cublaslt_reduction_mask(p.out.dtype, options.allow_reduced_precision_reduction));
    const Variant& v = *held;
    if (v.workspace > 0 && workspace == nullptr)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: needs {} bytes of workspace but none was passed", name_, v.workspace));
    const runtime::ThreadLocalCaptureMode capture_mode;  // as in make_plan: cuBLASLt's own context checks
    DeviceGuard guard;
    runtime::check_cuda(guard.set(p.device), "cudaSetDevice");
    if (runtime::log_enabled("launch"))
      fmt::print(stderr,
                 "tmagemm launch {} m={} n={} k={} batch={} ops={}{} swapped={} epilogue={} beta={}{} workspace={}{}\n",
                 name_, call.m, call.n, call.k, call.batch, call.a.transpose ? 'T' : 'N', call.b.transpose ? 'T' : 'N',
                 call.swapped, call.epilogue, call.beta,
                 call.scaled ? fmt::format(" scale_mode={} fast_accum={}", call.scale_mode, call.fast_accum) : "",
                 v.workspace, held == primary_ ? "" : " (re-planned layout)");
    const float alpha = call.alpha, beta = call.beta;
    const Plan& plan = *v.plan;
    // The bias and scale pointers are per-call data, but the plan's matmul descriptor is shared by every launch of the
    // choices of one enumeration, possibly from several threads at once, so it is never written after it is built. A
    // call whose bias or scales are not the plan's gets its own copy of the descriptor, initialised in place on this
    // stack frame (cublasLtMatmulDescInit: host only, no allocation, a few attribute writes) with the same attributes,
    // which plan.fits has checked, and this call's pointers. A mutex around "set the pointers, enqueue" would be as
    // correct but would serialise every launch of the choice; the copy costs microseconds and no contention.
    cublasLtMatmulDescOpaque_t own_op_storage;
    cublasLtMatmulDesc_t op = plan.desc.op;
    const bool own_bias = is_bias_epilogue(call.epilogue) && call.bias != plan.call.bias;
    const bool own_scales =
        call.scaled && (call.a_scale != plan.call.a_scale || call.b_scale != plan.call.b_scale);
    if (own_bias || own_scales) {
      op = &own_op_storage;
      std::string what;
      cublasStatus_t st = cublasLtMatmulDescInit(op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
      if (st != CUBLAS_STATUS_SUCCESS) what = "cublasLtMatmulDescInit";
      if (st == CUBLAS_STATUS_SUCCESS) st = configure_matmul_desc(call, plan.sm_target, op, what);
      if (st != CUBLAS_STATUS_SUCCESS)
        throw Error(error_code(st), fmt::format("{}: {}: {}", name_, what, status_name(st)));
    }
    void* out = const_cast<void*>(call.c.data);
    // D = out. C is out (beta = 0: never read) or a full bias read with beta (it may be out itself, in place; the
    // plan then has one layout for both, see build_descriptors).
    const cublasStatus_t st =
        cublasLtMatmul(plan.handle, op, &alpha, call.a.data, plan.desc.a, call.b.data, plan.desc.b, &beta,
                       call.c_in.data, plan.desc.c_layout(), out, plan.desc.c, &v.algo, workspace,
                       workspace ? kCublasLtWorkspaceBytes : 0, stream);
    if (st != CUBLAS_STATUS_SUCCESS)
      throw Error(error_code(st), fmt::format("cublasLtMatmul({}): {}", name_, status_name(st)));
  }

  std::size_t workspace_bytes(const GemmProblem&) const override { return kCublasLtWorkspaceBytes; }
  int library_rank() const override { return rank_; }
  // Near-ties go to cuBLASLt's own ranking (tune/benchmark.hpp, tie_margin: why); a configuration of the search is
  // one fixed algorithm, timed as our kernels are (it must beat the heuristic's picks beyond the margin).
  TiePolicy tie_policy() const override { return config_ ? TiePolicy::fastest : TiePolicy::library_rank; }
  const char* library() const override { return config_ ? "" : "cuBLASLt"; }
  bool fitted_to_m() const override { return fitted_; }
  bool m_only() const override { return m_only_; }

 private:
  // The plan and algorithm that run `call` (= cublaslt_call(p)) with `target` SMs and reduction-scheme mask `mask`:
  // the enumerated one when it fits, else one planned for this layout and mask (kept). Throws Error(unsupported)
  // when the heuristic has nothing for it, Error(out_of_memory) when cuBLASLt could not allocate.
  VariantPtr variant_for(const GemmProblem& p, const CublasLtCall& call, int32_t target, uint32_t mask) const {
    if (primary_->plan->fits(call, target, mask)) return primary_;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = others_.rbegin(); it != others_.rend(); ++it)
      if ((*it)->plan->fits(call, target, mask)) return *it;
    std::shared_ptr<Plan> plan;
    std::vector<cublasLtMatmulHeuristicResult_t> results;
    const std::string reason =
        make_plan(p, primary_->plan->sm_count, target, mask, config_ ? 1 : rank_ + 1, plan, results);
    if (!reason.empty()) {
      // cuBLASLt could not allocate (its handle, descriptors): a failure of the moment, not of the choice.
      const bool alloc = reason.find(status_name(CUBLAS_STATUS_ALLOC_FAILED)) != std::string::npos;
      throw Error(alloc ? ErrorCode::out_of_memory : ErrorCode::unsupported, fmt::format("{}: {}", name_, reason));
    }
    Variant v{nullptr, {}, 0};
    if (config_) {
      if (auto why = config_algo(*plan, *config_, v.algo, v.workspace); !why.empty())
        throw Error(ErrorCode::unsupported, fmt::format("{}: {}", name_, why));
    } else {
      // NOTE: fewer algorithms may exist for a less aligned layout; the last one stands in for a missing rank.
      const auto& r = results[std::min<std::size_t>(static_cast<std::size_t>(rank_), results.size() - 1)];
      v.algo = r.algo;
      v.workspace = r.workspaceSize;
    }
    v.plan = std::move(plan);
    // A serving process meets every M of a bucket: the oldest layouts are dropped (a launch in flight holds its own).
    if (others_.size() >= kKeptLayouts) others_.erase(others_.begin());
    others_.push_back(std::make_shared<const Variant>(std::move(v)));
    return others_.back();
  }

  static constexpr std::size_t kKeptLayouts = 64;
  std::string name_;
  int rank_;
  std::optional<LtConfig> config_;  // set for a configuration of the search (rank_ -1)
  bool fitted_ = false;             // a configuration of the search fitted to the enumerated problem's M
  bool m_only_ = false;             // ... and of that M only (not of its bucket's list)
  VariantPtr primary_;
  mutable std::mutex mutex_;
  mutable std::vector<VariantPtr> others_;
};

// The configuration search's candidates (cublaslt.hpp) for `p`, appended to `choices`: cublaslt_search_configs of the
// heuristic's first algorithm (the bucket's, the same at every M of it so that a stored winner is found again, then
// those fitted to p's own M), each where cuBLASLt accepts it for `plan`.
void search_configs(const GemmProblem& p, const std::shared_ptr<const Plan>& plan, const cublasLtMatmulAlgo_t& first,
                    std::vector<ChoicePtr>& choices) {
  if (!cublaslt_search_enabled() || p.op == Op::scaled_mm || p.op == Op::grouped_mm) return;
  int32_t algo_id = 0;
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&first, CUBLASLT_ALGO_CONFIG_ID, &algo_id, sizeof algo_id, &written) !=
      CUBLAS_STATUS_SUCCESS)
    return;
  std::vector<uint32_t> offered(1024);
  if (cublasLtMatmulAlgoCapGetAttribute(&first, CUBLASLT_ALGO_CAP_TILE_IDS, offered.data(),
                                        offered.size() * sizeof(uint32_t), &written) != CUBLAS_STATUS_SUCCESS)
    return;
  offered.resize(std::min(offered.size(), written / sizeof(uint32_t)));
  const CublasLtCall& c = plan->call;
  const uint64_t other = c.swapped ? c.m : c.n;
  for (const CublasLtSearchConfig& sc :
       cublaslt_search_configs(p.m, other, c.swapped, c.batch, plan->sm_count, offered)) {
    const LtConfig cfg{algo_id, sc.tile, sc.variant};
    CublasLtChoice::Variant var{plan, {}, 0};
    if (!config_algo(*plan, cfg, var.algo, var.workspace).empty()) continue;
    choices.push_back(std::make_shared<const CublasLtChoice>(cfg, sc.fitted, !sc.bucket, std::move(var)));
  }
}

std::vector<ChoicePtr> unavailable(std::string reason) {
  return {std::make_shared<const CublasLtUnavailable>(std::move(reason))};
}

std::vector<ChoicePtr> enumerate(const GemmProblem& p, const runtime::DeviceInfo& device, const Options& options) {
  if (auto r = cublaslt_reason_unsupported(p); !r.empty()) return unavailable(std::move(r));
  const int top_k = cublaslt_top_k();
  try {
    const int count = runtime::device_count();
    if (count == 0) return unavailable("no CUDA device");
    if (p.device < 0 || p.device >= count)
      return unavailable(fmt::format("device {} does not exist ({} CUDA devices)", p.device, count));
    const runtime::DeviceInfo& info =
        device.index == p.device && device.sm_count > 0 ? device : runtime::device_info(p.device);
    const int sm_count = info.sm_count;
    if (auto r = cublaslt_device_reason(p, info.cc_major, info.cc_minor); !r.empty()) return unavailable(std::move(r));
    std::shared_ptr<Plan> plan;
    std::vector<cublasLtMatmulHeuristicResult_t> results;
    const uint32_t mask = cublaslt_reduction_mask(p.out.dtype, options.allow_reduced_precision_reduction);
    if (auto r = make_plan(p, sm_count, sm_target(sm_count, options.sm_carveout), mask, top_k, plan, results);
        !r.empty())
      return unavailable(std::move(r));
    std::shared_ptr<const Plan> shared = std::move(plan);
    std::vector<ChoicePtr> choices;
    for (std::size_t i = 0; i < results.size(); ++i)
      choices.push_back(std::make_shared<const CublasLtChoice>(
          static_cast<int>(i), CublasLtChoice::Variant{shared, results[i].algo, results[i].workspaceSize}));
    search_configs(p, shared, results.front().algo, choices);
    return choices;
  } catch (const std::exception& e) {
    return unavailable(e.what());
  }
}

}  // namespace

std::vector<std::size_t> cublaslt_distinct_first_picks(const std::vector<GemmProblem>& problems,
                                                       const Options& options) {
  std::vector<std::size_t> firsts;
  std::vector<cublasLtMatmulAlgo_t> seen;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const GemmProblem& p = problems[i];
    if (!cublaslt_reason_unsupported(p).empty()) continue;
    try {
      if (p.device < 0 || p.device >= runtime::device_count()) continue;
      const runtime::DeviceInfo& info = runtime::device_info(p.device);
      std::shared_ptr<Plan> plan;
      std::vector<cublasLtMatmulHeuristicResult_t> results;
      const uint32_t mask = cublaslt_reduction_mask(p.out.dtype, options.allow_reduced_precision_reduction);
      if (!make_plan(p, info.sm_count, sm_target(info.sm_count, options.sm_carveout), mask, 1, plan, results).empty())
        continue;
      const cublasLtMatmulAlgo_t& a = results.front().algo;
      if (std::none_of(seen.begin(), seen.end(), [&](const cublasLtMatmulAlgo_t& x) {
            return std::memcmp(&x, &a, sizeof a) == 0;
          })) {
        seen.push_back(a);
        firsts.push_back(i);
      }
    } catch (const std::exception&) {
      continue;
    }
  }
  return firsts;
}

Backend cublaslt_backend() {
  return Backend{.name = "cublaslt",
                 .enumerate = &enumerate,
                 // The configuration search widens the choices of 16-bit mm / addmm / bmm: a tuning without it never
                 // answers for a process with it, nor the other way round.
                 .key_tag = [](const GemmProblem& p) {
                   const bool searched = p.op == Op::mm || p.op == Op::addmm || p.op == Op::bmm;
                   return std::string(searched && !cublaslt_search_enabled() ? "-nosearch" : "");
                 },
                 .costly_enumeration = true};
}

}  // namespace tmagemm::choices
