// cublaslt_test.cpp — CPU tests of the cuBLASLt backend: which problems cuBLASLt can express (and the reasons
// when not), the row-major -> column-major call mapping (checked by simulating cuBLAS's column-major GEMM on the
// host against the row-major-semantics reference, for every layout, padded ld and bmm), alignment classes,
// addmm's epilogues (which ones cuBLASLt computes exactly, for every bias kind x act x beta x out layout, the reasons
// elsewhere, and the call, simulated on the host against torch's addmm), scaled_mm's FP8 call (types, the TN layout,
// 16-byte alignment, tensorwise and rowwise scales with their roles swapped for a row-major out, fast accumulation,
// the bias, the version and device rules, and the call simulated against torch._scaled_mm), the reduction-scheme
// accuracy floor (Options::allow_reduced_precision_reduction), TMAGEMM_CUBLASLT_TOP_K, the configuration search's
// tile table, modelled rows and wave model, and the backend's behaviour on a machine without a GPU.
#include <cublasLt.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "choices/choice.hpp"
#include "choices/cublaslt.hpp"
#include "problem/problem.hpp"
#include "runtime/device.hpp"
#include "tmagemm/error.hpp"
#include "tmagemm/options.hpp"
#include "tune/buckets.hpp"

namespace tmagemm::choices {
namespace {

constexpr uintptr_t kBase = 0x7f0000000000;  // 256-byte aligned, never dereferenced
const void* at(uintptr_t address) { return reinterpret_cast<const void*>(address); }

// A rows x cols operand, row- or column-major with leading dimension `ld` (0: packed).
Operand matrix(const void* data, DType dtype, int64_t rows, int64_t cols, bool row_major, int64_t ld = 0,
               int64_t batch_stride = 0) {
  Operand o;
  o.data = data;
  o.dtype = dtype;
  o.rows = rows;
  o.cols = cols;
  if (row_major) {
    o.row_stride = ld ? ld : cols;
    o.col_stride = 1;
  } else {
    o.row_stride = 1;
    o.col_stride = ld ? ld : rows;
  }
  o.batch_stride = batch_stride;
  return o;
}

GemmProblem mm_problem(bool a_row, bool b_row, bool out_row, DType in = DType::bf16, DType out = DType::bf16,
                       int64_t m = 64, int64_t n = 48, int64_t k = 32) {
  GemmProblem p;
  p.op = Op::mm;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = matrix(at(kBase), in, m, k, a_row);
  p.b = matrix(at(kBase + 0x100000), in, k, n, b_row);
  p.out = matrix(at(kBase + 0x200000), out, m, n, out_row);
  return p;
}

#define EXPECT_REASON(problem, substring)                                                       \
  do {                                                                                          \
    const std::string r_ = cublaslt_reason_unsupported(problem);                                \
    EXPECT_NE(r_.find(substring), std::string::npos)                                            \
        << "reason: '" << r_ << "'\nexpected to contain: " << (substring);                      \
  } while (0)

TEST(CublasltReason, Bf16MmAllLayoutsOk) {
  for (bool a_row : {true, false})
    for (bool b_row : {true, false})
      for (bool out_row : {true, false}) {
        const GemmProblem p = mm_problem(a_row, b_row, out_row);
        EXPECT_EQ(cublaslt_reason_unsupported(p), "") << a_row << b_row << out_row;
      }
}

TEST(CublasltReason, F16AndF32OutputsOk) {
  EXPECT_EQ(cublaslt_reason_unsupported(mm_problem(true, true, true, DType::f16, DType::f16)), "");
  EXPECT_EQ(cublaslt_reason_unsupported(mm_problem(true, false, true, DType::f16, DType::f32)), "");
  EXPECT_EQ(cublaslt_reason_unsupported(mm_problem(false, true, true, DType::bf16, DType::f32)), "");
}

TEST(CublasltReason, InputAndOutputTypes) {
  EXPECT_REASON(mm_problem(true, true, true, DType::f32, DType::f32), "inputs must be both bf16 or both f16");
  EXPECT_REASON(mm_problem(true, true, true, DType::f32, DType::f32), "got f32 and f32");
  GemmProblem mixed = mm_problem(true, true, true);
  mixed.b.dtype = DType::f16;
  EXPECT_REASON(mixed, "got bf16 and f16");
  EXPECT_REASON(mm_problem(true, true, true, DType::bf16, DType::f16), "output dtype f16 with bf16 inputs");
  EXPECT_REASON(mm_problem(true, true, true, DType::e4m3, DType::bf16), "inputs must be both bf16 or both f16");
}

TEST(CublasltReason, StridedOperandIsNamed) {
  GemmProblem p = mm_problem(true, true, true);
  p.a.row_stride = 2 * p.k;
  p.a.col_stride = 2;
  EXPECT_REASON(p, "a has no unit stride (cuBLASLt needs column- or row-major operands");
  p = mm_problem(true, true, true);
  p.b.row_stride = 3;
  p.b.col_stride = 3 * p.k;
  EXPECT_REASON(p, "b has no unit stride");
  p = mm_problem(true, true, true);
  p.out.row_stride = 2 * p.n;
  p.out.col_stride = 2;
  EXPECT_REASON(p, "out has no unit stride");
}

TEST(CublasltReason, ScaledMmNeedsFp8Inputs) {
  GemmProblem p = mm_problem(true, false, true);
  p.op = Op::scaled_mm;
  EXPECT_REASON(p, "scaled_mm inputs must be e4m3 or e5m2 (got bf16 and bf16)");
}

TEST(CublasltReason, LeadingDimensionBelowContiguousExtent) {
  GemmProblem p = mm_problem(true, true, true);
  p.a.row_stride = p.k - 1;  // overlapping rows
  EXPECT_REASON(p, "a is row-major with row stride 31, less than its 32 columns");
  p = mm_problem(true, false, true);
  p.b.col_stride = 0;  // broadcast columns
  EXPECT_REASON(p, "b is col-major with col stride 0, less than its 32 rows");
  // Padded leading dimensions are fine.
  p = mm_problem(true, false, false);
  p.a.row_stride = p.k + 8;
  p.b.col_stride = p.k + 3;
  p.out.col_stride = p.m + 1;
  EXPECT_EQ(cublaslt_reason_unsupported(p), "");
}

TEST(CublasltReason, EmptyProblem) {
  EXPECT_REASON(mm_problem(true, true, true, DType::bf16, DType::bf16, 64, 48, 0), "empty problem");
  EXPECT_REASON(mm_problem(true, true, true, DType::bf16, DType::bf16, 0, 48, 32), "empty problem");
}

TEST(CublasltReason, Bmm) {
  GemmProblem p = mm_problem(true, false, true);
  p.op = Op::bmm;
  p.batch = 3;
  p.a.batch_stride = p.m * p.k;
  p.b.batch_stride = 0;  // broadcast
  p.out.batch_stride = p.m * p.n;
  EXPECT_EQ(cublaslt_reason_unsupported(p), "");
  p.out.batch_stride = 0;
  EXPECT_REASON(p, "out has batch stride 0 with batch > 1");
}

// ---------------------------------------------------------------------------------------------------------
// The mapping, checked numerically: simulate cuBLAS's column-major D = op(A) @ op(B) over the CublasLtCall and
// compare with C = A @ B computed from the Operands' strides.
// ---------------------------------------------------------------------------------------------------------

float at_stored(const CublasLtMatrix& x, int64_t b, uint64_t i, uint64_t j) {
  const float* base = static_cast<const float*>(x.data);
  return base[b * x.batch_stride + static_cast<int64_t>(i) + static_cast<int64_t>(j) * x.ld];
}
float at_op(const CublasLtMatrix& x, int64_t b, uint64_t i, uint64_t j) {
  return x.transpose ? at_stored(x, b, j, i) : at_stored(x, b, i, j);
}

void simulate_cublas(const CublasLtCall& call) {
  ASSERT_FALSE(call.c.transpose);
  // op(A) is m x k, op(B) is k x n, C is m x n.
  EXPECT_EQ(call.a.transpose ? call.a.cols : call.a.rows, call.m);
  EXPECT_EQ(call.a.transpose ? call.a.rows : call.a.cols, call.k);
  EXPECT_EQ(call.b.transpose ? call.b.cols : call.b.rows, call.k);
  EXPECT_EQ(call.b.transpose ? call.b.rows : call.b.cols, call.n);
  EXPECT_EQ(call.c.rows, call.m);
  EXPECT_EQ(call.c.cols, call.n);
  for (const CublasLtMatrix* x : {&call.a, &call.b, &call.c}) EXPECT_GE(x->ld, static_cast<int64_t>(x->rows));
  float* d = static_cast<float*>(const_cast<void*>(call.c.data));
  for (int64_t b = 0; b < call.batch; ++b)
    for (uint64_t i = 0; i < call.m; ++i)
      for (uint64_t j = 0; j < call.n; ++j) {
        float acc = 0;
        for (uint64_t l = 0; l < call.k; ++l) acc += at_op(call.a, b, i, l) * at_op(call.b, b, l, j);
        d[b * call.c.batch_stride + static_cast<int64_t>(i) + static_cast<int64_t>(j) * call.c.ld] = acc;
      }
}

float at_operand(const Operand& o, int64_t b, int64_t i, int64_t j) {
  return static_cast<const float*>(o.data)[b * o.batch_stride + i * o.row_stride + j * o.col_stride];
}

// Host buffers for one problem: distinct small integers (exact in float), padded ld, optional batch.
struct HostProblem {
  std::vector<float> a, b, out;
  GemmProblem p;
};

HostProblem host_problem(bool a_row, bool b_row, bool out_row, int64_t batch, bool broadcast_b) {
  const int64_t m = 5, n = 3, k = 4, pad = 2;
  HostProblem h;
  auto size = [&](int64_t rows, int64_t cols, bool row, bool bcast) {
    const int64_t mat = row ? rows * (cols + pad) : cols * (rows + pad);
    return mat * (bcast ? 1 : batch);
  };
  h.a.resize(size(m, k, a_row, false));
  h.b.resize(size(k, n, b_row, broadcast_b));
  h.out.assign(size(m, n, out_row, false), -1.0f);
  for (std::size_t i = 0; i < h.a.size(); ++i) h.a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  for (std::size_t i = 0; i < h.b.size(); ++i) h.b[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  GemmProblem& p = h.p;
  p.op = batch > 1 ? Op::bmm : Op::mm;
  p.batch = batch;
  p.m = m;
  p.n = n;
  p.k = k;
  const int64_t lda = (a_row ? k : m) + pad, ldb = (b_row ? n : k) + pad, ldo = (out_row ? n : m) + pad;
  p.a = matrix(h.a.data(), DType::bf16, m, k, a_row, lda, batch > 1 ? lda * (a_row ? m : k) : 0);
  p.b = matrix(h.b.data(), DType::bf16, k, n, b_row, ldb, batch > 1 && !broadcast_b ? ldb * (b_row ? k : n) : 0);
  p.out = matrix(h.out.data(), DType::bf16, m, n, out_row, ldo, batch > 1 ? ldo * (out_row ? m : n) : 0);
  return h;
}

TEST(CublasltMapping, SimulatedColumnMajorGemmMatchesRowMajorReference) {
  for (int64_t batch : {1, 3})
    for (bool broadcast_b : {false, true})
      for (bool a_row : {true, false})
        for (bool b_row : {true, false})
          for (bool out_row : {true, false}) {
            if (batch == 1 && broadcast_b) continue;
            SCOPED_TRACE(testing::Message() << "batch " << batch << (broadcast_b ? " (b broadcast)" : "") << " a "
                                            << (a_row ? "row" : "col") << " b " << (b_row ? "row" : "col")
                                            << " out " << (out_row ? "row" : "col"));
            HostProblem h = host_problem(a_row, b_row, out_row, batch, broadcast_b);
            const GemmProblem& p = h.p;
            ASSERT_EQ(cublaslt_reason_unsupported(p), "");
            const CublasLtCall call = cublaslt_call(p);
            EXPECT_EQ(call.swapped, out_row);
            EXPECT_EQ(std::string(call.a.name), out_row ? "b" : "a");
            EXPECT_EQ(std::string(call.b.name), out_row ? "a" : "b");
            EXPECT_EQ(std::string(call.c.name), "out");
            EXPECT_EQ(call.batch, batch);
            simulate_cublas(call);
            for (int64_t b = 0; b < batch; ++b)
              for (int64_t i = 0; i < p.m; ++i)
                for (int64_t j = 0; j < p.n; ++j) {
                  float ref = 0;
                  for (int64_t l = 0; l < p.k; ++l) ref += at_operand(p.a, b, i, l) * at_operand(p.b, b, l, j);
                  ASSERT_EQ(at_operand(p.out, b, i, j), ref) << "at (" << b << ", " << i << ", " << j << ")";
                }
          }
}

TEST(CublasltMapping, RowMajorOutputSwapsOperands) {
  // row/row -> row: cuBLAS A = b stored N x K (ld N), B = a stored K x M (ld K), no transposes, D = N x M.
  const CublasLtCall call = cublaslt_call(mm_problem(true, true, true));
  EXPECT_TRUE(call.swapped);
  EXPECT_EQ(call.m, 48u);
  EXPECT_EQ(call.n, 64u);
  EXPECT_EQ(call.k, 32u);
  EXPECT_EQ(call.a.data, at(kBase + 0x100000));
  EXPECT_EQ(call.a.rows, 48u);
  EXPECT_EQ(call.a.cols, 32u);
  EXPECT_EQ(call.a.ld, 48);
  EXPECT_FALSE(call.a.transpose);
  EXPECT_EQ(call.b.data, at(kBase));
  EXPECT_EQ(call.b.rows, 32u);
  EXPECT_EQ(call.b.cols, 64u);
  EXPECT_EQ(call.b.ld, 32);
  EXPECT_FALSE(call.b.transpose);
  EXPECT_EQ(call.c.rows, 48u);
  EXPECT_EQ(call.c.cols, 64u);
  EXPECT_EQ(call.c.ld, 48);
}

TEST(CublasltMapping, ColumnMajorOutputCallsDirectly) {
  // row/col -> col: cuBLAS A = a stored K x M (OP_T), B = b stored K x N (OP_N), D = M x N.
  const CublasLtCall call = cublaslt_call(mm_problem(true, false, false));
  EXPECT_FALSE(call.swapped);
  EXPECT_EQ(call.m, 64u);
  EXPECT_EQ(call.n, 48u);
  EXPECT_EQ(call.a.data, at(kBase));
  EXPECT_TRUE(call.a.transpose);
  EXPECT_EQ(call.a.rows, 32u);
  EXPECT_EQ(call.a.cols, 64u);
  EXPECT_FALSE(call.b.transpose);
  EXPECT_EQ(call.b.rows, 32u);
  EXPECT_EQ(call.b.cols, 48u);
  EXPECT_EQ(call.c.ld, 64);
}

TEST(CublasltMapping, AlignmentCoversBaseLdAndBatchStride) {
  GemmProblem p = mm_problem(true, true, true);
  EXPECT_EQ(cublaslt_call(p).b.alignment, 64u);  // a: ld 32 bf16 = 64 bytes
  EXPECT_EQ(cublaslt_call(p).a.alignment, 32u);  // b: ld 48 bf16 = 96 bytes
  p.a.row_stride = 64 + 128;                     // 384 bytes
  EXPECT_EQ(cublaslt_call(p).b.alignment, 128u);
  p.a.row_stride = 128;  // 256 bytes
  EXPECT_EQ(cublaslt_call(p).b.alignment, 256u);
  p.a.data = at(kBase + 2);
  EXPECT_EQ(cublaslt_call(p).b.alignment, 2u);
  p.a.data = at(kBase);
  p.a.row_stride = 90;  // 180 bytes
  EXPECT_EQ(cublaslt_call(p).b.alignment, 4u);
  p.a.row_stride = 128;
  p.op = Op::bmm;
  p.batch = 2;
  p.a.batch_stride = 128 * 64 + 8;  // 16-byte multiple only
  p.b.batch_stride = 0;
  p.out.batch_stride = p.m * p.n;
  EXPECT_EQ(cublaslt_call(p).b.alignment, 16u);
  EXPECT_EQ(cublaslt_call(p).a.alignment, 32u);  // broadcast batch adds no constraint
}

// ---------------------------------------------------------------------------------------------------------
// addmm: which epilogues cuBLASLt computes exactly, the reasons elsewhere, and the call (checked numerically by
// simulating cuBLASLt's epilogue on the host against torch's act(beta * bias + alpha * (a @ b)))
// ---------------------------------------------------------------------------------------------------------

constexpr uintptr_t kBiasAt = kBase + 0x300000;

// A bias operand of `kind` for an m x n out, as validation builds it: a row vector (1 x N, row stride 0), a column
// vector (M x 1, col stride 0) or a full M x N matrix, row- or column-major with leading dimension `ld` (0: packed).
Operand bias_operand(BiasKind kind, const void* data, DType dtype, int64_t m, int64_t n, bool row_major = true,
                     int64_t ld = 0) {
  Operand o;
  switch (kind) {
    case BiasKind::row_vector:
      o.rows = 1;
      o.cols = n;
      o.row_stride = 0;
      o.col_stride = 1;
      break;
    case BiasKind::col_vector:
      o.rows = m;
      o.cols = 1;
      o.row_stride = 1;
      o.col_stride = 0;
      break;
    case BiasKind::full: o = matrix(data, dtype, m, n, row_major, ld); break;
    case BiasKind::none: return o;
  }
  o.data = data;
  o.dtype = dtype;
  return o;
}

GemmProblem addmm_problem(bool out_row, BiasKind kind, Activation act, float beta, DType out = DType::bf16,
                          DType bias_dtype = DType::bf16) {
  GemmProblem p = mm_problem(true, false, out_row, out == DType::f16 ? DType::f16 : DType::bf16, out);
  p.op = Op::addmm;
  p.bias_kind = kind;
  // A full bias comes in out's order unless a test says otherwise.
  p.bias = bias_operand(kind, at(kBiasAt), bias_dtype, p.m, p.n, out_row);
  p.alpha = 1.0f;
  p.beta = beta;
  p.act = act;
  return p;
}

const char* name_of(BiasKind k) {
  switch (k) {
    case BiasKind::none: return "none";
    case BiasKind::row_vector: return "row_vector";
    case BiasKind::col_vector: return "col_vector";
    case BiasKind::full: return "full";
  }
  return "?";
}

#define EXPECT_EPILOGUE_REASON(problem, substring)                                              \
  do {                                                                                          \
    const std::string r_ = cublaslt_epilogue_reason(problem);                                   \
    EXPECT_NE(r_.find(substring), std::string::npos)                                            \
        << "reason: '" << r_ << "'\nexpected to contain: " << (substring);                      \
    EXPECT_EQ(cublaslt_reason_unsupported(problem), r_);                                        \
  } while (0)

TEST(CublasltEpilogue, MmAndBmmUseTheDefaultEpilogue) {
  GemmProblem p = mm_problem(true, true, true);
  EXPECT_EQ(cublaslt_epilogue_reason(p), "");
  EXPECT_EQ(cublaslt_epilogue(p), CUBLASLT_EPILOGUE_DEFAULT);
  // act, bias and beta belong to addmm only: they never change an mm.
  p.act = Activation::silu;
  p.beta = 0.5f;
  EXPECT_EQ(cublaslt_epilogue_reason(p), "");
  EXPECT_EQ(cublaslt_epilogue(p), CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(cublaslt_call(p).epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(cublaslt_call(p).beta, 0.0f);
  EXPECT_EQ(cublaslt_call(p).bias, nullptr);
}

// Every bias kind x act x beta x out layout, against the rules written out independently here.
TEST(CublasltEpilogue, EveryBiasKindActBetaAndOutLayout) {
  const Activation acts[] = {Activation::none,      Activation::relu, Activation::gelu,
                             Activation::gelu_tanh, Activation::silu, Activation::sigmoid};
  for (bool out_row : {true, false})
    for (BiasKind kind : {BiasKind::none, BiasKind::row_vector, BiasKind::col_vector, BiasKind::full})
      for (Activation act : acts)
        for (float beta : {0.0f, 1.0f, 0.5f}) {
          SCOPED_TRACE(testing::Message() << "out " << (out_row ? "row" : "col") << " bias " << name_of(kind)
                                          << " act " << to_string(act) << " beta " << beta);
          const GemmProblem p = addmm_problem(out_row, kind, act, beta);
          const std::string reason = cublaslt_epilogue_reason(p);
          EXPECT_EQ(cublaslt_reason_unsupported(p), reason);
          if (act == Activation::silu || act == Activation::sigmoid) {
            EXPECT_EQ(reason, std::string("cuBLASLt has no epilogue for act=") + to_string(act));
            continue;
          }
          if (act == Activation::gelu) {
            EXPECT_NE(reason.find("cuBLASLt has no epilogue for act=gelu (erf)"), std::string::npos) << reason;
            EXPECT_NE(reason.find("tanh approximation"), std::string::npos) << reason;
            continue;
          }
          const int plain = act == Activation::relu        ? CUBLASLT_EPILOGUE_RELU
                            : act == Activation::gelu_tanh ? CUBLASLT_EPILOGUE_GELU
                                                           : CUBLASLT_EPILOGUE_DEFAULT;
          const int with_bias = act == Activation::relu        ? CUBLASLT_EPILOGUE_RELU_BIAS
                                : act == Activation::gelu_tanh ? CUBLASLT_EPILOGUE_GELU_BIAS
                                                               : CUBLASLT_EPILOGUE_BIAS;
          if (beta == 0.0f || kind == BiasKind::none) {  // bias never read: a plain GEMM with the activation
            EXPECT_EQ(reason, "");
            EXPECT_EQ(cublaslt_epilogue(p), plain);
            const CublasLtCall call = cublaslt_call(p);
            EXPECT_EQ(call.beta, 0.0f);
            EXPECT_EQ(call.bias, nullptr);
            EXPECT_EQ(call.c_in.data, call.c.data);
            continue;
          }
          if (kind == BiasKind::full) {
            if (act == Activation::none) {
              EXPECT_EQ(reason, "");
              EXPECT_EQ(cublaslt_epilogue(p), CUBLASLT_EPILOGUE_DEFAULT);
              EXPECT_EQ(cublaslt_call(p).beta, beta);
              EXPECT_EQ(cublaslt_call(p).c_in.data, at(kBiasAt));
            } else {
              EXPECT_NE(reason.find("cuBLASLt adds a full MxN bias only as its C matrix"), std::string::npos)
                  << reason;
            }
            continue;
          }
          if (beta != 1.0f) {
            EXPECT_NE(reason.find("cuBLASLt's bias epilogue adds the bias unscaled (beta must be 1"),
                      std::string::npos)
                << reason;
            continue;
          }
          // beta == 1: cuBLASLt's bias runs along D's rows, which are out's columns when out is row-major.
          const bool along_d_rows = (kind == BiasKind::row_vector) == out_row;
          if (along_d_rows) {
            EXPECT_EQ(reason, "");
            EXPECT_EQ(cublaslt_epilogue(p), with_bias);
            const CublasLtCall call = cublaslt_call(p);
            EXPECT_EQ(call.epilogue, with_bias);
            EXPECT_EQ(call.bias, at(kBiasAt));
            EXPECT_EQ(call.beta, 0.0f);  // the epilogue adds the vector; C is not read
            EXPECT_EQ(call.c_in.data, call.c.data);
          } else {
            EXPECT_NE(reason.find("cuBLASLt's bias epilogue adds one value per row of its column-major D"),
                      std::string::npos)
                << reason;
          }
        }
}

TEST(CublasltEpilogue, ReasonsNameTheRule) {
  EXPECT_EPILOGUE_REASON(addmm_problem(true, BiasKind::row_vector, Activation::silu, 1.0f),
                         "cuBLASLt has no epilogue for act=silu");
  EXPECT_EPILOGUE_REASON(addmm_problem(true, BiasKind::row_vector, Activation::relu, 2.0f),
                         "cuBLASLt's bias epilogue adds the bias unscaled (beta must be 1; got beta=2");
  EXPECT_EPILOGUE_REASON(addmm_problem(false, BiasKind::row_vector, Activation::none, 1.0f),
                         "bias is a row vector (one value per output column) but out is column-major");
  EXPECT_EPILOGUE_REASON(addmm_problem(true, BiasKind::col_vector, Activation::none, 1.0f),
                         "bias is a column vector (one value per output row) but out is row-major");
  EXPECT_EPILOGUE_REASON(addmm_problem(true, BiasKind::full, Activation::gelu_tanh, 1.0f),
                         "does not say whether the GELU epilogue applies after beta * C");
}

TEST(CublasltEpilogue, VectorBiasMustBePackedOfOutTypeAndNotOut) {
  // Packed row vector with a row-major out, packed column vector with a column-major out: fine.
  EXPECT_EQ(cublaslt_reason_unsupported(addmm_problem(true, BiasKind::row_vector, Activation::none, 1.0f)), "");
  EXPECT_EQ(cublaslt_reason_unsupported(addmm_problem(false, BiasKind::col_vector, Activation::relu, 1.0f)), "");
  GemmProblem p = addmm_problem(true, BiasKind::row_vector, Activation::none, 1.0f);
  p.bias.col_stride = 2;  // every other element of a larger tensor
  EXPECT_EPILOGUE_REASON(p, "has element stride 2: cuBLASLt's bias epilogue needs a packed vector (stride 1)");
  p = addmm_problem(false, BiasKind::col_vector, Activation::none, 1.0f);
  p.bias.row_stride = 3;
  EXPECT_EPILOGUE_REASON(p, "has element stride 3");
  // One element has no stride to speak of.
  p = addmm_problem(true, BiasKind::row_vector, Activation::none, 1.0f);
  p.n = 1;
  p.b = matrix(at(kBase + 0x100000), DType::bf16, p.k, 1, false);
  p.out = matrix(at(kBase + 0x200000), DType::bf16, p.m, 1, true);
  p.bias = bias_operand(BiasKind::row_vector, at(kBiasAt), DType::bf16, p.m, 1);
  p.bias.col_stride = 7;
  EXPECT_EQ(cublaslt_epilogue_reason(p), "");
  // f32 bias with a 16-bit out: not a documented bias type for 16-bit inputs.
  EXPECT_EPILOGUE_REASON(addmm_problem(true, BiasKind::row_vector, Activation::none, 1.0f, DType::bf16, DType::f32),
                         "bias dtype f32 differs from out's bf16");
  EXPECT_EPILOGUE_REASON(addmm_problem(false, BiasKind::col_vector, Activation::none, 1.0f, DType::f16, DType::f32),
                         "bias dtype f32 differs from out's f16");
  // ... but the same f32 bias with beta = 0 is never read, and an f32 out takes an f32 bias.
  EXPECT_EQ(cublaslt_reason_unsupported(
                addmm_problem(true, BiasKind::row_vector, Activation::none, 0.0f, DType::bf16, DType::f32)),
            "");
  p = addmm_problem(true, BiasKind::row_vector, Activation::relu, 1.0f, DType::f32, DType::f32);
  EXPECT_EQ(cublaslt_reason_unsupported(p), "");
  EXPECT_EQ(cublaslt_call(p).bias_dtype, DType::f32);
  // A vector that is out's own memory (M = 1, in place).
  p = addmm_problem(true, BiasKind::row_vector, Activation::none, 1.0f);
  p.bias.data = p.out.data;
  EXPECT_EPILOGUE_REASON(p, "bias is out's own memory (in place)");
}

TEST(CublasltEpilogue, FullBiasIsCWithOutsTypeAndOrder) {
  for (bool out_row : {true, false}) {
    SCOPED_TRACE(out_row ? "out row-major" : "out col-major");
    GemmProblem p = addmm_problem(out_row, BiasKind::full, Activation::none, 0.5f);
    EXPECT_EQ(cublaslt_reason_unsupported(p), "");
    // Another order than out's: C cannot be transposed.
    p.bias = bias_operand(BiasKind::full, at(kBiasAt), DType::bf16, p.m, p.n, !out_row);
    EXPECT_EPILOGUE_REASON(p, out_row ? "full bias is col-major but out is row-major" : "full bias is row-major but "
                                                                                         "out is col-major");
    EXPECT_EPILOGUE_REASON(p, "CUBLASLT_MATMUL_DESC_TRANSC takes only CUBLAS_OP_N");
    // Its own (larger) leading dimension is fine out of place.
    p.bias = bias_operand(BiasKind::full, at(kBiasAt), DType::bf16, p.m, p.n, out_row, out_row ? p.n + 8 : p.m + 8);
    EXPECT_EQ(cublaslt_reason_unsupported(p), "");
    // A smaller one overlaps rows (or columns).
    p.bias = bias_operand(BiasKind::full, at(kBiasAt), DType::bf16, p.m, p.n, out_row, out_row ? p.n - 1 : p.m - 1);
    EXPECT_EPILOGUE_REASON(p, "cuBLASLt needs a leading dimension of at least the contiguous extent");
  }
  GemmProblem p = addmm_problem(true, BiasKind::full, Activation::none, 1.0f, DType::bf16, DType::f32);
  EXPECT_EPILOGUE_REASON(p, "full bias dtype f32 differs from out's bf16");
  p = addmm_problem(true, BiasKind::full, Activation::none, 1.0f);
  p.bias.row_stride = 2 * p.n;
  p.bias.col_stride = 2;
  EXPECT_EPILOGUE_REASON(p, "full bias has no unit stride (strides 96, 2)");
  // In place: out is exactly bias.
  p = addmm_problem(true, BiasKind::full, Activation::none, 0.5f);
  p.bias = p.out;
  EXPECT_EQ(cublaslt_reason_unsupported(p), "");
  const CublasLtCall call = cublaslt_call(p);
  EXPECT_EQ(call.c_in.data, call.c.data);
  EXPECT_EQ(call.c_in.ld, call.c.ld);
  p.bias.row_stride = p.n + 8;  // same memory, another ld: not something validation lets through, refused anyway
  EXPECT_EPILOGUE_REASON(p, "cuBLASLt computes in place (C == D) only with identical C and D layouts");
  // Activations with a full bias are refused; with beta = 0 the bias is not read and they are fine.
  EXPECT_EPILOGUE_REASON(addmm_problem(false, BiasKind::full, Activation::relu, 1.0f),
                         "does not say whether the RELU epilogue applies after beta * C");
  p = addmm_problem(false, BiasKind::full, Activation::relu, 0.0f);
  EXPECT_EQ(cublaslt_reason_unsupported(p), "");
  EXPECT_EQ(cublaslt_epilogue(p), CUBLASLT_EPILOGUE_RELU);
}

TEST(CublasltEpilogue, CallCarriesBiasAlphaBetaAndC) {
  // Row-major out, row vector: cuBLAS's D is N x M, so the bias has call.m = N elements.
  GemmProblem p = addmm_problem(true, BiasKind::row_vector, Activation::gelu_tanh, 1.0f);
  p.alpha = 0.25f;
  CublasLtCall call = cublaslt_call(p);
  EXPECT_TRUE(call.swapped);
  EXPECT_EQ(call.m, static_cast<uint64_t>(p.n));
  EXPECT_EQ(call.epilogue, CUBLASLT_EPILOGUE_GELU_BIAS);
  EXPECT_EQ(call.alpha, 0.25f);
  EXPECT_EQ(call.beta, 0.0f);
  EXPECT_EQ(call.bias, at(kBiasAt));
  EXPECT_EQ(call.bias_dtype, DType::bf16);
  EXPECT_EQ(call.bias_alignment, 256u);
  EXPECT_EQ(std::string(call.c_in.name), "out");
  p.bias.data = at(kBiasAt + 2);
  EXPECT_EQ(cublaslt_call(p).bias_alignment, 2u);
  p.bias.data = at(kBiasAt + 48);
  EXPECT_EQ(cublaslt_call(p).bias_alignment, 16u);
  // Column-major out, column vector: D is out (M x N), the bias has call.m = M elements.
  p = addmm_problem(false, BiasKind::col_vector, Activation::relu, 1.0f);
  call = cublaslt_call(p);
  EXPECT_FALSE(call.swapped);
  EXPECT_EQ(call.m, static_cast<uint64_t>(p.m));
  EXPECT_EQ(call.epilogue, CUBLASLT_EPILOGUE_RELU_BIAS);
  // Full bias: C is the bias as stored, in D's orientation, read with beta.
  p = addmm_problem(true, BiasKind::full, Activation::none, -1.5f);
  p.bias = bias_operand(BiasKind::full, at(kBiasAt + 64), DType::bf16, p.m, p.n, true, p.n + 16);
  call = cublaslt_call(p);
  EXPECT_EQ(call.epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(call.beta, -1.5f);
  EXPECT_EQ(call.bias, nullptr);
  EXPECT_EQ(std::string(call.c_in.name), "bias");
  EXPECT_EQ(call.c_in.data, at(kBiasAt + 64));
  EXPECT_EQ(call.c_in.rows, call.c.rows);
  EXPECT_EQ(call.c_in.cols, call.c.cols);
  EXPECT_EQ(call.c_in.ld, p.n + 16);
  EXPECT_FALSE(call.c_in.transpose);
  EXPECT_EQ(call.c_in.alignment, 64u);  // base 64-byte aligned, ld 64 bf16 = 128 bytes
  // Full bias with beta = 0: C is out again and never read.
  p.beta = 0.0f;
  call = cublaslt_call(p);
  EXPECT_EQ(call.beta, 0.0f);
  EXPECT_EQ(std::string(call.c_in.name), "out");
  EXPECT_EQ(call.c_in.data, call.c.data);
}

float relu_ref(float x) { return x > 0.0f ? x : 0.0f; }
float gelu_tanh_ref(float x) {
  return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

// Simulates cuBLASLt: D(i,j) = epilogue(alpha * (op(A) @ op(B))(i,j) + beta * C(i,j) + bias[i]) on the call's
// column-major matrices, the bias indexed by D's row.
void simulate_cublaslt_addmm(const CublasLtCall& call) {
  float* d = static_cast<float*>(const_cast<void*>(call.c.data));
  const bool bias = call.epilogue == CUBLASLT_EPILOGUE_BIAS || call.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
                    call.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
  std::vector<float> result(call.m * call.n);
  for (uint64_t i = 0; i < call.m; ++i)
    for (uint64_t j = 0; j < call.n; ++j) {
      float acc = 0;
      for (uint64_t l = 0; l < call.k; ++l) acc += at_op(call.a, 0, i, l) * at_op(call.b, 0, l, j);
      float x = call.alpha * acc;
      if (call.beta != 0.0f) x += call.beta * at_stored(call.c_in, 0, i, j);
      if (bias) x += static_cast<const float*>(call.bias)[i];
      if (call.epilogue == CUBLASLT_EPILOGUE_RELU || call.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) x = relu_ref(x);
      if (call.epilogue == CUBLASLT_EPILOGUE_GELU || call.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS) x = gelu_tanh_ref(x);
      result[i * call.n + j] = x;
    }
  // Written after every element is computed, as an in-place C == D must behave.
  for (uint64_t i = 0; i < call.m; ++i)
    for (uint64_t j = 0; j < call.n; ++j)
      d[static_cast<int64_t>(i) + static_cast<int64_t>(j) * call.c.ld] = result[i * call.n + j];
}

TEST(CublasltEpilogue, SimulatedEpilogueMatchesTorchAddmm) {
  // Float data labelled bf16 (cuBLASLt's input type), as in host_problem above.
  const int64_t m = 5, n = 3, k = 4, pad = 2;
  int simulated = 0;
  for (bool out_row : {true, false})
    for (BiasKind kind : {BiasKind::row_vector, BiasKind::col_vector, BiasKind::full})
      for (Activation act : {Activation::none, Activation::relu, Activation::gelu_tanh})
        for (float beta : {0.0f, 1.0f, -0.5f})
          for (bool in_place : {false, true}) {
            if (in_place && kind != BiasKind::full) continue;
            GemmProblem p;
            p.op = Op::addmm;
            p.m = m;
            p.n = n;
            p.k = k;
            p.alpha = 0.5f;
            p.beta = beta;
            p.act = act;
            p.bias_kind = kind;
            std::vector<float> a(m * (k + pad)), b(n * (k + pad)), out((out_row ? m * (n + pad) : n * (m + pad)), 7.0f);
            for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
            for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
            p.a = matrix(a.data(), DType::bf16, m, k, true, k + pad);
            p.b = matrix(b.data(), DType::bf16, k, n, false, k + pad);
            p.out = matrix(out.data(), DType::bf16, m, n, out_row, out_row ? n + pad : m + pad);
            std::vector<float> bias(std::max(m, n) * (std::max(m, n) + pad + 1));
            for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(static_cast<int>(i % 9) - 4);
            if (in_place) {
              for (std::size_t i = 0; i < out.size(); ++i) out[i] = bias[i];
              p.bias = p.out;
            } else {
              p.bias = bias_operand(kind, bias.data(), DType::bf16, m, n, out_row,
                                    kind == BiasKind::full ? (out_row ? n + pad + 1 : m + pad + 1) : 0);
            }
            if (cublaslt_reason_unsupported(p) != "") continue;  // the refusals are tested above
            SCOPED_TRACE(testing::Message() << "out " << (out_row ? "row" : "col") << " bias " << name_of(kind)
                                            << (in_place ? " (in place)" : "") << " act " << to_string(act)
                                            << " beta " << beta);
            // torch's reference, from the Operands' strides (read before the simulated call overwrites out).
            std::vector<float> ref(m * n);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                float acc = 0;
                for (int64_t l = 0; l < k; ++l) acc += at_operand(p.a, 0, i, l) * at_operand(p.b, 0, l, j);
                float x = p.alpha * acc;
                if (beta != 0.0f) x += beta * at_operand(p.bias, 0, i, j);
                if (act == Activation::relu) x = relu_ref(x);
                if (act == Activation::gelu_tanh) x = gelu_tanh_ref(x);
                ref[i * n + j] = x;
              }
            simulate_cublaslt_addmm(cublaslt_call(p));
            ++simulated;
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j)
                ASSERT_NEAR(at_operand(p.out, 0, i, j), ref[i * n + j], 1e-5f) << "at (" << i << ", " << j << ")";
          }
  // Per out layout: beta 0 (3 kinds x 3 acts), beta 1 (the vector along D's rows with 3 acts, full with act none),
  // beta -0.5 (full with act none), in place (beta 0 with 3 acts, beta 1 and -0.5 with act none).
  EXPECT_EQ(simulated, 2 * (9 + (3 + 1) + 1 + (3 + 2)));
}

// ---------------------------------------------------------------------------------------------------------
// scaled_mm (FP8): types, the TN layout, 16-byte alignment, scales (tensorwise and rowwise, their roles swapped with
// the operands for a row-major out), fast accumulation, the bias, the version and device rules, and the call
// simulated on the host against torch._scaled_mm
// ---------------------------------------------------------------------------------------------------------

constexpr uintptr_t kScaleAAt = kBase + 0x400000, kScaleBAt = kBase + 0x500000;

// scaled_mm as validation builds it: a (M,K) row-major, b (K,N) column-major, both packed, out packed in the order
// asked for, the scales at kScaleAAt / kScaleBAt.
GemmProblem fp8_problem(bool out_row, ScaleKind kind, DType out = DType::bf16, DType a = DType::e4m3,
                        DType b = DType::e4m3, int64_t m = 64, int64_t n = 48, int64_t k = 32) {
  GemmProblem p = mm_problem(true, false, out_row, a, out, m, n, k);
  p.op = Op::scaled_mm;
  p.b.dtype = b;
  p.scale_kind = kind;
  p.scale_a = reinterpret_cast<const float*>(kScaleAAt);
  p.scale_b = reinterpret_cast<const float*>(kScaleBAt);
  return p;
}

// Adds scaled_mm's bias: N values of `dtype` passed as 1xN.
GemmProblem with_bias(GemmProblem p, DType dtype) {
  p.bias_kind = BiasKind::row_vector;
  p.bias = bias_operand(BiasKind::row_vector, at(kBiasAt), dtype, p.m, p.n);
  return p;
}

#if CUBLAS_VERSION >= 120900
constexpr int kOuterVec = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
#else
constexpr int kOuterVec = -1;  // the header has no outer-vector mode: rowwise is refused (tested below)
#endif
const bool kRowwiseAvailable = cublaslt_version() >= kCublasLtOuterVectorScaleVersion;

TEST(CublasltFp8, TypeTable) {
  const DType outs[] = {DType::bf16, DType::f16, DType::f32};
  const std::pair<DType, DType> pairs[] = {
      {DType::e4m3, DType::e4m3}, {DType::e4m3, DType::e5m2}, {DType::e5m2, DType::e4m3}};
  for (bool out_row : {true, false})
    for (const auto& [a, b] : pairs)
      for (DType out : outs) {
        SCOPED_TRACE(testing::Message() << to_string(a) << " x " << to_string(b) << " -> " << to_string(out)
                                        << (out_row ? " row" : " col"));
        EXPECT_EQ(cublaslt_reason_unsupported(fp8_problem(out_row, ScaleKind::tensorwise, out, a, b)), "");
      }
  EXPECT_REASON(fp8_problem(true, ScaleKind::tensorwise, DType::bf16, DType::e5m2, DType::e5m2),
                "a and b are both e5m2: cuBLASLt's FP8 type table has no e5m2 x e5m2");
  EXPECT_REASON(fp8_problem(true, ScaleKind::tensorwise, DType::bf16, DType::bf16, DType::e4m3),
                "scaled_mm inputs must be e4m3 or e5m2 (got bf16 and e4m3)");
  EXPECT_REASON(fp8_problem(true, ScaleKind::tensorwise, DType::e4m3), "scaled_mm output dtype e4m3 is not in");
}

TEST(CublasltFp8, OnlyTheTnForm) {
  // Both K-major: cuBLAS's A transposed, B not, whichever way out is laid out.
  for (bool out_row : {true, false}) {
    const CublasLtCall call = cublaslt_call(fp8_problem(out_row, ScaleKind::tensorwise));
    EXPECT_EQ(call.swapped, out_row);
    EXPECT_TRUE(call.a.transpose);
    EXPECT_FALSE(call.b.transpose);
    EXPECT_EQ(std::string(call.a.name), out_row ? "b" : "a");
    EXPECT_EQ(call.a.dtype, DType::e4m3);
  }
  GemmProblem p = fp8_problem(true, ScaleKind::tensorwise);
  p.a = matrix(p.a.data, DType::e4m3, p.m, p.k, false);
  EXPECT_REASON(p, "a is col-major: cuBLASLt's FP8 kernels need it K-major (row-major)");
  p = fp8_problem(false, ScaleKind::tensorwise);
  p.b = matrix(p.b.data, DType::e4m3, p.k, p.n, true);
  EXPECT_REASON(p, "b is row-major: cuBLASLt's FP8 kernels need it K-major (column-major)");
}

TEST(CublasltFp8, SixteenByteAlignedMatrices) {
  GemmProblem p = fp8_problem(true, ScaleKind::tensorwise);
  p.a.row_stride = 40;  // 40 bytes of e4m3: 8-byte aligned rows
  EXPECT_REASON(p, "a (cuBLAS's B) is only 8-byte aligned (base address and leading dimension 40 x 1 bytes)");
  p = fp8_problem(true, ScaleKind::tensorwise);
  p.a.row_stride = 48;  // padded, still 16-byte rows
  EXPECT_EQ(cublaslt_reason_unsupported(p), "");
  p = fp8_problem(true, ScaleKind::tensorwise);
  p.b.data = at(kBase + 0x100000 + 4);
  EXPECT_REASON(p, "b (cuBLAS's A) is only 4-byte aligned");
  p = fp8_problem(true, ScaleKind::tensorwise);
  p.out.row_stride = p.n + 4;  // 52 bf16 = 104 bytes
  EXPECT_REASON(p, "out (cuBLAS's D) is only 8-byte aligned");
  // D's rows: out's columns (N) when out is row-major, its rows (M) when column-major.
  p = fp8_problem(false, ScaleKind::tensorwise, DType::bf16, DType::e4m3, DType::e4m3, 12, 48, 32);
  p.out.col_stride = 16;  // 32-byte columns: only D's 12 rows x 2 bytes are off
  EXPECT_REASON(p, "cuBLASLt's D (out: M) has 12 rows of 2 bytes = 24 bytes per column, not a multiple of 16");
  EXPECT_EQ(cublaslt_reason_unsupported(
                fp8_problem(false, ScaleKind::tensorwise, DType::f32, DType::e4m3, DType::e4m3, 12, 48, 32)),
            "");  // 48 bytes
  EXPECT_EQ(cublaslt_reason_unsupported(
                fp8_problem(true, ScaleKind::tensorwise, DType::bf16, DType::e4m3, DType::e4m3, 3, 48, 32)),
            "");  // M = 3 is D's column count: no constraint
}

TEST(CublasltFp8, TensorwiseScalesGoWithTheirOperand) {
  // Row-major out: cuBLAS's A is our b, so it gets scale_b.
  GemmProblem p = fp8_problem(true, ScaleKind::tensorwise);
  CublasLtCall call = cublaslt_call(p);
  EXPECT_TRUE(call.scaled);
  EXPECT_TRUE(call.swapped);
  EXPECT_EQ(call.a_scale, p.scale_b);
  EXPECT_EQ(call.b_scale, p.scale_a);
  EXPECT_EQ(call.scale_mode, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F);
  EXPECT_EQ(call.epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(call.bias, nullptr);
  EXPECT_EQ(call.alpha, 1.0f);
  EXPECT_EQ(call.beta, 0.0f);
  // Column-major out: the call is direct and so are the scales.
  p = fp8_problem(false, ScaleKind::tensorwise);
  call = cublaslt_call(p);
  EXPECT_FALSE(call.swapped);
  EXPECT_EQ(call.a_scale, p.scale_a);
  EXPECT_EQ(call.b_scale, p.scale_b);
  // A stray addmm alpha never scales an FP8 product.
  p.alpha = 3.0f;
  EXPECT_EQ(cublaslt_call(p).alpha, 1.0f);
  // mm's call carries no scales.
  EXPECT_FALSE(cublaslt_call(mm_problem(true, false, true)).scaled);
}

TEST(CublasltFp8, RowwiseScalesUseTheOuterVectorModeWithSwappedRoles) {
  GemmProblem p = fp8_problem(true, ScaleKind::rowwise);
  CublasLtCall call = cublaslt_call(p);
  // D is out^T (N x M): its rows take scale_b (N values), its columns scale_a (M values).
  EXPECT_EQ(call.m, static_cast<uint64_t>(p.n));
  EXPECT_EQ(call.a_scale, p.scale_b);
  EXPECT_EQ(call.b_scale, p.scale_a);
  EXPECT_EQ(call.scale_mode, kOuterVec);
  p = fp8_problem(false, ScaleKind::rowwise);
  call = cublaslt_call(p);
  EXPECT_EQ(call.m, static_cast<uint64_t>(p.m));
  EXPECT_EQ(call.a_scale, p.scale_a);
  EXPECT_EQ(call.b_scale, p.scale_b);
  EXPECT_EQ(call.scale_mode, kOuterVec);
  // Whether this build and library have the mode decides the reason.
  if (kRowwiseAvailable)
    EXPECT_EQ(cublaslt_reason_unsupported(p), "");
  else
    EXPECT_REASON(p, "rowwise scales need cuBLASLt's outer-vector scale mode");
}

TEST(CublasltFp8, OuterVectorModeNeedsCublasLt129) {
  EXPECT_EQ(cublaslt_scale_mode_reason(ScaleKind::tensorwise, 110800), "");
  EXPECT_EQ(cublaslt_scale_mode_reason(ScaleKind::rowwise, 120900), "");
  EXPECT_EQ(cublaslt_scale_mode_reason(ScaleKind::rowwise, 130100), "");
  const std::string r = cublaslt_scale_mode_reason(ScaleKind::rowwise, 120803);
  EXPECT_NE(r.find("CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, cuBLASLt 12.9 or later); this cuBLASLt is 12.8"),
            std::string::npos)
      << r;
  // The version used is never newer than the header compiled against.
  EXPECT_GT(cublaslt_version(), 0);
  EXPECT_LE(cublaslt_version(), CUBLAS_VERSION);
}

TEST(CublasltFp8, FastAccumulationIsCarried) {
  for (ScaleKind kind : {ScaleKind::tensorwise, ScaleKind::rowwise})
    for (bool fast : {false, true})
      for (bool out_row : {true, false}) {
        GemmProblem p = fp8_problem(out_row, kind);
        p.fast_accum = fast;
        EXPECT_EQ(cublaslt_call(p).fast_accum, fast);
      }
}

TEST(CublasltFp8, BiasIsTheBiasEpilogueAlongDsRows) {
  // Row-major out: D's rows are out's columns, one bias value each.
  for (DType out : {DType::bf16, DType::f16}) {
    const GemmProblem p = with_bias(fp8_problem(true, ScaleKind::rowwise, out), out);
    if (kRowwiseAvailable) EXPECT_EQ(cublaslt_reason_unsupported(p), "") << to_string(out);
    EXPECT_EQ(cublaslt_epilogue_reason(p), "");
    EXPECT_EQ(cublaslt_epilogue(p), CUBLASLT_EPILOGUE_BIAS);
    const CublasLtCall call = cublaslt_call(p);
    EXPECT_EQ(call.epilogue, CUBLASLT_EPILOGUE_BIAS);
    EXPECT_EQ(call.bias, at(kBiasAt));
    EXPECT_EQ(call.bias_dtype, out);
    EXPECT_EQ(call.m, static_cast<uint64_t>(p.n));
    EXPECT_EQ(call.beta, 0.0f);
    EXPECT_EQ(call.c_in.data, call.c.data);
  }
  // cuBLASLt's FP8 table: an f32 out takes a bf16 bias.
  GemmProblem p = with_bias(fp8_problem(true, ScaleKind::tensorwise, DType::f32), DType::bf16);
  EXPECT_EQ(cublaslt_reason_unsupported(p), "");
  EXPECT_EQ(cublaslt_call(p).bias_dtype, DType::bf16);
  EXPECT_EPILOGUE_REASON(with_bias(fp8_problem(true, ScaleKind::tensorwise, DType::f32), DType::f16),
                         "bias dtype f16 with out dtype f32: cuBLASLt's FP8 kernels take a bf16 bias");
  EXPECT_EPILOGUE_REASON(with_bias(fp8_problem(true, ScaleKind::tensorwise, DType::bf16), DType::f16),
                         "bias dtype f16 with out dtype bf16: cuBLASLt's FP8 kernels take a bf16 bias");
  // Column-major out: D's rows are out's rows, so a per-column bias cannot be added.
  EXPECT_EPILOGUE_REASON(with_bias(fp8_problem(false, ScaleKind::tensorwise), DType::bf16),
                         "scaled_mm's bias has one value per output column but out is col-major");
  p = with_bias(fp8_problem(true, ScaleKind::tensorwise), DType::bf16);
  p.bias.col_stride = 2;
  EXPECT_EPILOGUE_REASON(p, "bias has element stride 2: cuBLASLt's bias epilogue needs a packed vector");
  p = fp8_problem(true, ScaleKind::tensorwise);
  p.bias_kind = BiasKind::col_vector;
  p.bias = bias_operand(BiasKind::col_vector, at(kBiasAt), DType::bf16, p.m, p.n);
  EXPECT_EPILOGUE_REASON(p, "scaled_mm's bias must be a row vector of N values");
  // No bias: the default epilogue, whatever stray addmm fields say.
  p = fp8_problem(true, ScaleKind::tensorwise);
  p.act = Activation::relu;
  p.beta = 0.5f;
  EXPECT_EQ(cublaslt_epilogue_reason(p), "");
  EXPECT_EQ(cublaslt_epilogue(p), CUBLASLT_EPILOGUE_DEFAULT);
}

TEST(CublasltFp8, ComputeCapability) {
  const GemmProblem tensorwise = fp8_problem(true, ScaleKind::tensorwise);
  const GemmProblem rowwise = fp8_problem(true, ScaleKind::rowwise);
  EXPECT_EQ(cublaslt_device_reason(tensorwise, 9, 0), "");
  EXPECT_EQ(cublaslt_device_reason(rowwise, 9, 0), "");
  EXPECT_EQ(cublaslt_device_reason(tensorwise, 8, 9), "");
  EXPECT_NE(cublaslt_device_reason(rowwise, 8, 9).find("outer-vector (rowwise) FP8 scales for compute capability 9.0"),
            std::string::npos);
  EXPECT_NE(cublaslt_device_reason(tensorwise, 8, 0).find("FP8 kernels need compute capability 8.9 or later (device "
                                                          "has 8.0)"),
            std::string::npos);
  EXPECT_EQ(cublaslt_device_reason(mm_problem(true, true, true), 7, 0), "");
}

// Simulates cuBLASLt's FP8 matmul on the call's column-major matrices as the cuBLAS documentation defines it:
// tensorwise D = scale_A * scale_B * op(A) @ op(B), outer-vector D(i,j) = scale_A[i] * scale_B[j] *
// (op(A) @ op(B))(i,j), then the BIAS epilogue's bias[i] (one value per row of D).
void simulate_cublaslt_fp8(const CublasLtCall& call) {
  ASSERT_TRUE(call.scaled);
  const bool outer = call.scale_mode == kOuterVec;
  float* d = static_cast<float*>(const_cast<void*>(call.c.data));
  for (uint64_t i = 0; i < call.m; ++i)
    for (uint64_t j = 0; j < call.n; ++j) {
      float acc = 0;
      for (uint64_t l = 0; l < call.k; ++l) acc += at_op(call.a, 0, i, l) * at_op(call.b, 0, l, j);
      float x = call.alpha * call.a_scale[outer ? i : 0] * call.b_scale[outer ? j : 0] * acc;
      if (call.epilogue == CUBLASLT_EPILOGUE_BIAS) x += static_cast<const float*>(call.bias)[i];
      d[static_cast<int64_t>(i) + static_cast<int64_t>(j) * call.c.ld] = x;
    }
}

// Host storage whose data() is 256-byte aligned (the FP8 rules look at the addresses).
struct AlignedFloats {
  explicit AlignedFloats(std::size_t n, float fill = 0.0f) : storage(n + 64, fill) {
    const auto address = reinterpret_cast<uintptr_t>(storage.data());
    offset = ((address + 255) / 256 * 256 - address) / sizeof(float);
  }
  float* data() { return storage.data() + offset; }
  float& operator[](std::size_t i) { return data()[i]; }
  std::vector<float> storage;
  std::size_t offset = 0;
};

TEST(CublasltFp8, SimulatedCallMatchesTorchScaledMm) {
  // Float data labelled e4m3 (the simulation reads floats). Leading dimensions padded but 16-byte multiples for
  // e4m3 and bf16; D's rows (N, or M for a column-major out) 16-byte multiples too.
  const int64_t n = 16, k = 32, pad = 16;
  int simulated = 0;
  for (bool out_row : {true, false})
    for (ScaleKind kind : {ScaleKind::tensorwise, ScaleKind::rowwise})
      for (bool bias : {false, true})
        for (bool fast : {false, true}) {
          SCOPED_TRACE(testing::Message() << "out " << (out_row ? "row" : "col")
                                          << (kind == ScaleKind::rowwise ? " rowwise" : " tensorwise")
                                          << (bias ? " bias" : "") << (fast ? " fast" : ""));
          const int64_t m = out_row ? 5 : 8;
          const int64_t ldo = out_row ? n + 8 : m + 8;
          AlignedFloats a(static_cast<std::size_t>(m * (k + pad))), b(static_cast<std::size_t>(n * (k + pad))),
              out(static_cast<std::size_t>(out_row ? m * ldo : n * ldo), 7.0f), bias_v(static_cast<std::size_t>(n));
          // Scale vectors sized for either role, so that a mapping that swapped them wrongly reads values, not
          // past the end; distinct values per index, so that it reads the wrong ones.
          AlignedFloats sa(static_cast<std::size_t>(std::max(m, n))), sb(static_cast<std::size_t>(std::max(m, n)));
          for (std::size_t i = 0; i < a.storage.size() - a.offset; ++i)
            a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
          for (std::size_t i = 0; i < b.storage.size() - b.offset; ++i)
            b[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
          for (int64_t i = 0; i < std::max(m, n); ++i) {
            sa[static_cast<std::size_t>(i)] = 1.0f + static_cast<float>(i);
            sb[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i + 2);
          }
          if (kind == ScaleKind::tensorwise) {
            sa[0] = 1.5f;
            sb[0] = -2.0f;
          }
          for (int64_t j = 0; j < n; ++j) bias_v[static_cast<std::size_t>(j)] = static_cast<float>(j % 9) - 4.0f;
          GemmProblem p;
          p.op = Op::scaled_mm;
          p.m = m;
          p.n = n;
          p.k = k;
          p.a = matrix(a.data(), DType::e4m3, m, k, true, k + pad);
          p.b = matrix(b.data(), DType::e4m3, k, n, false, k + pad);
          p.out = matrix(out.data(), DType::bf16, m, n, out_row, ldo);
          p.scale_kind = kind;
          p.scale_a = sa.data();
          p.scale_b = sb.data();
          p.fast_accum = fast;
          if (bias) {
            p.bias_kind = BiasKind::row_vector;
            p.bias = bias_operand(BiasKind::row_vector, bias_v.data(), DType::bf16, m, n);
          }
          const std::string reason = cublaslt_reason_unsupported(p);
          if (bias && !out_row) {  // refused: tested above
            EXPECT_NE(reason.find("but out is col-major"), std::string::npos) << reason;
            continue;
          }
          if (kind == ScaleKind::rowwise && !kRowwiseAvailable) {
            EXPECT_NE(reason.find("outer-vector scale mode"), std::string::npos) << reason;
            continue;
          }
          ASSERT_EQ(reason, "");
          // torch._scaled_mm: out(i,j) = scale_a[i or 0] * scale_b[j or 0] * (a @ b)(i,j) + bias[j].
          std::vector<float> ref(static_cast<std::size_t>(m * n));
          const bool rw = kind == ScaleKind::rowwise;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              float acc = 0;
              for (int64_t l = 0; l < k; ++l) acc += at_operand(p.a, 0, i, l) * at_operand(p.b, 0, l, j);
              float x = sa[static_cast<std::size_t>(rw ? i : 0)] * sb[static_cast<std::size_t>(rw ? j : 0)] * acc;
              if (bias) x += bias_v[static_cast<std::size_t>(j)];
              ref[static_cast<std::size_t>(i * n + j)] = x;
            }
          const CublasLtCall call = cublaslt_call(p);
          EXPECT_EQ(call.fast_accum, fast);
          simulate_cublaslt_fp8(call);
          ++simulated;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j)
              ASSERT_FLOAT_EQ(at_operand(p.out, 0, i, j), ref[static_cast<std::size_t>(i * n + j)])
                  << "at (" << i << ", " << j << ")";
        }
  // Row-major out: 2 scale kinds x 2 bias x 2 fast; column-major out: no bias (2 x 2); rowwise only where available.
  EXPECT_EQ(simulated, kRowwiseAvailable ? 8 + 4 : 4 + 2);
}

// ---------------------------------------------------------------------------------------------------------
// Reduction-scheme accuracy floor
// ---------------------------------------------------------------------------------------------------------

TEST(CublasltReduction, SixteenBitOutputWithoutPermissionReducesInFp32Only) {
  const uint32_t fp32_only = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  EXPECT_EQ(cublaslt_reduction_mask(DType::bf16, false), fp32_only);
  EXPECT_EQ(cublaslt_reduction_mask(DType::f16, false), fp32_only);
  // Neither scheme that adds partial sums in the output type is in the mask.
  EXPECT_EQ(cublaslt_reduction_mask(DType::bf16, false) & CUBLASLT_REDUCTION_SCHEME_INPLACE, 0u);
  EXPECT_EQ(cublaslt_reduction_mask(DType::bf16, false) & CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE, 0u);
}

TEST(CublasltReduction, F32OutputOrPermissionAllowsEveryScheme) {
  // With an f32 output every scheme adds in fp32, so nothing is masked.
  EXPECT_EQ(cublaslt_reduction_mask(DType::f32, false), static_cast<uint32_t>(CUBLASLT_REDUCTION_SCHEME_MASK));
  EXPECT_EQ(cublaslt_reduction_mask(DType::f32, true), static_cast<uint32_t>(CUBLASLT_REDUCTION_SCHEME_MASK));
  EXPECT_EQ(cublaslt_reduction_mask(DType::bf16, true), static_cast<uint32_t>(CUBLASLT_REDUCTION_SCHEME_MASK));
  EXPECT_EQ(cublaslt_reduction_mask(DType::f16, true), static_cast<uint32_t>(CUBLASLT_REDUCTION_SCHEME_MASK));
}

TEST(CublasltReduction, AlgorithmSchemeAgainstMask) {
  const uint32_t fp32_only = cublaslt_reduction_mask(DType::bf16, false);
  EXPECT_TRUE(cublaslt_reduction_allowed(CUBLASLT_REDUCTION_SCHEME_NONE, fp32_only));  // no split-K at all
  EXPECT_TRUE(cublaslt_reduction_allowed(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, fp32_only));
  EXPECT_FALSE(cublaslt_reduction_allowed(CUBLASLT_REDUCTION_SCHEME_INPLACE, fp32_only));
  EXPECT_FALSE(cublaslt_reduction_allowed(CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE, fp32_only));
  const uint32_t all = cublaslt_reduction_mask(DType::bf16, true);
  for (uint32_t scheme : {CUBLASLT_REDUCTION_SCHEME_NONE, CUBLASLT_REDUCTION_SCHEME_INPLACE,
                          CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE})
    EXPECT_TRUE(cublaslt_reduction_allowed(scheme, all)) << scheme;
}

// ---------------------------------------------------------------------------------------------------------
// TMAGEMM_CUBLASLT_TOP_K
// ---------------------------------------------------------------------------------------------------------

class CublasltTopK : public ::testing::Test {
 protected:
  static constexpr const char* kVar = "TMAGEMM_CUBLASLT_TOP_K";
  void SetUp() override {
    if (const char* v = std::getenv(kVar)) saved_ = v;
    unsetenv(kVar);
  }
  void TearDown() override {
    if (saved_)
      setenv(kVar, saved_->c_str(), 1);
    else
      unsetenv(kVar);
  }
  std::optional<std::string> saved_;
};

TEST_F(CublasltTopK, DefaultAndValues) {
  EXPECT_EQ(cublaslt_top_k(), 4);
  setenv(kVar, "", 1);
  EXPECT_EQ(cublaslt_top_k(), 4);
  setenv(kVar, "1", 1);
  EXPECT_EQ(cublaslt_top_k(), 1);
  setenv(kVar, " 16 ", 1);
  EXPECT_EQ(cublaslt_top_k(), 16);
}

TEST_F(CublasltTopK, MalformedThrowsNamingTheVariable) {
  for (const char* bad : {"0", "17", "-1", "four", "4x"}) {
    setenv(kVar, bad, 1);
    try {
      cublaslt_top_k();
      ADD_FAILURE() << "no error for " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("TMAGEMM_CUBLASLT_TOP_K"), std::string::npos) << e.what();
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// The backend
// ---------------------------------------------------------------------------------------------------------

TEST(CublasltBackend, NameAndEnabled) {
  const Backend backend = cublaslt_backend();
  EXPECT_STREQ(backend.name, "cublaslt");
  ASSERT_NE(backend.enumerate, nullptr);
  Options o = Options::defaults_only();
  o.cublaslt = true;
  EXPECT_TRUE(backend.enabled(o));
  o.cublaslt = false;
  EXPECT_FALSE(backend.enabled(o));
}

TEST(CublasltBackend, UnexpressibleProblemGivesOneChoiceWithTheReason) {
  GemmProblem p = mm_problem(true, true, true);
  p.op = Op::scaled_mm;
  auto choices = cublaslt_backend().enumerate(p, runtime::DeviceInfo{}, Options::defaults_only());
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_NE(choices[0]->can_implement(p, runtime::DeviceInfo{}).find("scaled_mm inputs must be e4m3 or e5m2"),
            std::string::npos);
  // An addmm epilogue cuBLASLt does not have is refused the same way, before any GPU work.
  p = mm_problem(true, true, true);
  p.op = Op::addmm;
  p.act = Activation::silu;
  choices = cublaslt_backend().enumerate(p, runtime::DeviceInfo{}, Options::defaults_only());
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(choices[0]->name(), "cublaslt");
  EXPECT_STREQ(choices[0]->backend(), "cublaslt");
  EXPECT_NE(choices[0]->can_implement(p, runtime::DeviceInfo{}).find("cuBLASLt has no epilogue for act=silu"),
            std::string::npos);
  EXPECT_EQ(choices[0]->workspace_bytes(p), 0u);
  EXPECT_THROW(choices[0]->launch(p, nullptr, Options::defaults_only(), nullptr), Error);
  // The tuning properties of every cuBLASLt choice: near-ties go to its own ranking; no heuristic score, no TMA tiles.
  EXPECT_EQ(choices[0]->tie_policy(), TiePolicy::library_rank);
  EXPECT_STREQ(choices[0]->library(), "cuBLASLt");
  EXPECT_FALSE(choices[0]->heuristic_score(p, runtime::DeviceInfo{}, 0).has_value());
  EXPECT_FALSE(choices[0]->tma_tiles());
}

TEST(CublasltBackend, NoGpuGivesOneNotApplicableChoice) {
  if (runtime::device_count() > 0) GTEST_SKIP() << "a CUDA device is present; this test is for GPU-less machines";
  const GemmProblem p = mm_problem(true, false, true);
  Options reduced = Options::defaults_only();
  reduced.allow_reduced_precision_reduction = true;
  EXPECT_EQ(cublaslt_backend().enumerate(p, runtime::DeviceInfo{}, reduced).size(), 1u);
  const auto choices = cublaslt_backend().enumerate(p, runtime::DeviceInfo{}, Options::defaults_only());
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(choices[0]->name(), "cublaslt");
  const std::string reason = choices[0]->can_implement(p, runtime::DeviceInfo{});
  EXPECT_FALSE(reason.empty());
  EXPECT_NE(reason.find("no CUDA device"), std::string::npos) << reason;
  try {
    choices[0]->precompile(p, 0);
    ADD_FAILURE() << "precompile of a not-applicable choice did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
  }
}

// The generated table holds cublasLt.h's tiles, with the extents their names give.
TEST(CublasltSearch, TileTableFromTheHeader) {
  const CublasLtTile* t = cublaslt_tile(CUBLASLT_MATMUL_TILE_128x256);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->rows, 128);
  EXPECT_EQ(t->cols, 256);
  t = cublaslt_tile(CUBLASLT_MATMUL_TILE_192x96);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->rows, 192);
  EXPECT_EQ(t->cols, 96);
  EXPECT_EQ(cublaslt_tile(CUBLASLT_MATMUL_TILE_UNDEFINED), nullptr);
  EXPECT_EQ(cublaslt_tile(CUBLASLT_MATMUL_TILE_END), nullptr);
}

// The modelled rows are the first, middle and last M of the tuning key's shape bucket, the same for every M of it,
// and none for decode (M <= 64).
TEST(CublasltSearch, ModelledRowsFollowTheShapeBuckets) {
  EXPECT_TRUE(cublaslt_search_model_ms(1).empty());
  EXPECT_TRUE(cublaslt_search_model_ms(64).empty());
  for (int64_t m = 65; m <= 20000; ++m) {
    const tune::MBucket b = tune::m_bucket(Op::mm, m);
    const std::vector<int64_t> ms = cublaslt_search_model_ms(m);
    ASSERT_EQ(ms.size(), 3u) << m;
    EXPECT_EQ(ms.front(), b.lo) << m;
    EXPECT_EQ(ms.back(), b.hi) << m;
    EXPECT_GT(ms[1], b.lo) << m;
    EXPECT_LT(ms[1], b.hi) << m;
    EXPECT_EQ(ms, cublaslt_search_model_ms(b.lo)) << m;
  }
  const std::vector<int64_t> want = {2049, 2304, 2560};
  EXPECT_EQ(cublaslt_search_model_ms(2304), want);
}

// The wave model prefers a tile that fills the SMs in whole rounds: on 2304 x 2304 (cuBLAS m x n) over 132 SMs,
// 128x336 is one round of 126 tiles, 128x128 three rounds of 324 (2.45 rounds' work), 128x256 two of 162 (1.23).
// Tiles with other
// than 128 rows or outside 64..512 columns, unknown ids and repeats are left out; at most `count`.
TEST(CublasltSearch, WaveModelRanksWholeRounds) {
  const std::vector<uint32_t> offered = {CUBLASLT_MATMUL_TILE_128x128, CUBLASLT_MATMUL_TILE_128x256,
                                         CUBLASLT_MATMUL_TILE_256x128, CUBLASLT_MATMUL_TILE_128x336,
                                         CUBLASLT_MATMUL_TILE_64x64,   CUBLASLT_MATMUL_TILE_256x8,
                                         CUBLASLT_MATMUL_TILE_128x32,  CUBLASLT_MATMUL_TILE_UNDEFINED,
                                         CUBLASLT_MATMUL_TILE_128x336};
  const auto tiles = cublaslt_search_tiles(2304, 2304, 1, 132, offered, 8);
  std::vector<uint32_t> ids;
  for (const auto& t : tiles) ids.push_back(t.id);
  const std::vector<uint32_t> want = {CUBLASLT_MATMUL_TILE_128x336, CUBLASLT_MATMUL_TILE_128x128,
                                      CUBLASLT_MATMUL_TILE_128x256};
  EXPECT_EQ(ids, want);
  EXPECT_EQ(cublaslt_search_tiles(2304, 2304, 1, 132, offered, 2).size(), 2u);
  // A batch of 8: 1008 tiles of 128x336 in 8 rounds against 1296 of 128x256 in 10; the larger tile's lower cost a
  // FLOP decides (128x256 first).
  EXPECT_EQ(cublaslt_search_tiles(2304, 2304, 8, 132, offered, 1).front().id,
            static_cast<uint32_t>(CUBLASLT_MATMUL_TILE_128x256));
}

// The search's configurations: the bucket's list first (flagged `bucket`, the same at every M of the bucket), then
// those of the call's own M only (fitted, not `bucket`): its best tiles' kCublasLtFittedVariants pairs and, where a
// best tile is none of the bucket's, its kCublasLtSearchVariants too. On 2304 x 2304 over 132 SMs 128x336 is one
// round of 126 tiles: fitted at 2304 (the bucket's middle M, so also a bucket tile), not at 2560 (140 tiles, two
// rounds).
TEST(CublasltSearch, BucketConfigurationsThenThoseOfOneM) {
  std::vector<uint32_t> offered;
  for (int id = 0; id < CUBLASLT_MATMUL_TILE_END; ++id)
    if (const CublasLtTile* t = cublaslt_tile(static_cast<uint32_t>(id)); t && t->rows == 128) offered.push_back(id);
  auto name = [](const CublasLtSearchConfig& c) {
    return fmt::format("{}x{}_o{}_c{}x{}", c.tile.rows, c.tile.cols, c.variant.custom, c.variant.cx, c.variant.cy);
  };
  auto is_bucket_variant = [](const CublasLtSearchVariant& v) {
    return std::any_of(std::begin(kCublasLtSearchVariants), std::end(kCublasLtSearchVariants),
                       [&](const CublasLtSearchVariant& x) { return x.custom == v.custom && x.cluster == v.cluster; });
  };
  // Over every M of several buckets, other extents and both orientations: the bucket's configurations are the same
  // list at every M of the bucket and open each M's list; the rest are fitted; somewhere a best tile is none of the
  // bucket's (the branch that adds its bucket variants as configurations of one M).
  int one_m_tiles = 0;
  for (const uint64_t other : {1536u, 2304u, 4608u, 5000u, 14336u})
    for (const bool along_n : {false, true})
      for (const int64_t lo : {int64_t{2049}, int64_t{4097}, int64_t{897}}) {
        const tune::MBucket b = tune::m_bucket(Op::mm, lo);
        std::vector<std::string> first;
        for (int64_t m = b.lo; m <= b.hi; ++m) {
          const auto all = cublaslt_search_configs(m, other, along_n, 1, 132, offered);
          std::vector<std::string> bucket;
          std::size_t i = 0;
          for (; i < all.size() && all[i].bucket; ++i) bucket.push_back(name(all[i]));
          for (std::size_t j = i; j < all.size(); ++j) {
            ASSERT_FALSE(all[j].bucket) << m << " " << other;
            EXPECT_TRUE(all[j].fitted) << m << " " << other;
            if (is_bucket_variant(all[j].variant)) ++one_m_tiles;
          }
          for (const auto& c : all) EXPECT_TRUE(c.bucket || c.fitted);
          EXPECT_LE(all.size(), 28u);
          if (m == b.lo) first = bucket;
          else ASSERT_EQ(bucket, first) << "M " << m << " of " << b.lo << ".." << b.hi << ", other " << other;
        }
      }
  EXPECT_GT(one_m_tiles, 0);
  const auto at_hi = cublaslt_search_configs(2560, 2304, false, 1, 132, offered);
  const auto at_mid = cublaslt_search_configs(2304, 2304, false, 1, 132, offered);
  auto count_336 = [](const std::vector<CublasLtSearchConfig>& cs, bool bucket, bool fitted) {
    return std::count_if(cs.begin(), cs.end(), [&](const CublasLtSearchConfig& c) {
      return c.tile.id == CUBLASLT_MATMUL_TILE_128x336 && c.bucket == bucket && c.fitted == fitted;
    });
  };
  EXPECT_EQ(count_336(at_mid, true, true), 3);    // the bucket's three settings, fitted here
  EXPECT_EQ(count_336(at_mid, false, true), 2);   // and custom option 3 for M = 2304 only
  EXPECT_EQ(count_336(at_hi, true, false), 3);    // a bucket tile, not fitted at 2560
  EXPECT_EQ(count_336(at_hi, false, true), 0);
  // Swapped (the rows along cuBLAS's n) on a square problem: the same fitted configurations (the bucket's differ: a
  // tile's 128 rows lie along cuBLAS's m, the fixed 2304, and its columns along the bucket's Ms).
  auto fitted_names = [&](const std::vector<CublasLtSearchConfig>& cs) {
    std::vector<std::string> n;
    for (const auto& c : cs)
      if (c.fitted) n.push_back(name(c));
    std::sort(n.begin(), n.end());
    return n;
  };
  EXPECT_EQ(fitted_names(cublaslt_search_configs(2304, 2304, true, 1, 132, offered)), fitted_names(at_mid));
  // Decode: none.
  EXPECT_TRUE(cublaslt_search_configs(64, 4096, false, 1, 132, offered).empty());
}

// The search runs unless TMAGEMM_CUBLASLT_SEARCH=0.
TEST(CublasltSearch, EnvironmentSwitch) {
  const char* old = std::getenv("TMAGEMM_CUBLASLT_SEARCH");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  unsetenv("TMAGEMM_CUBLASLT_SEARCH");
  EXPECT_TRUE(cublaslt_search_enabled());
  setenv("TMAGEMM_CUBLASLT_SEARCH", "0", 1);
  EXPECT_FALSE(cublaslt_search_enabled());
  setenv("TMAGEMM_CUBLASLT_SEARCH", "1", 1);
  EXPECT_TRUE(cublaslt_search_enabled());
  // Switched off, the tuning keys of the problems it serves get a tag (a tuning with the search never answers for a
  // process without it, nor the other way round); FP8 has no search, so no tag.
  const Backend lt = cublaslt_backend();
  ASSERT_NE(lt.key_tag, nullptr);
  GemmProblem p = mm_problem(true, true, true);
  EXPECT_EQ(lt.key_tag(p), "");
  setenv("TMAGEMM_CUBLASLT_SEARCH", "0", 1);
  EXPECT_EQ(lt.key_tag(p), "-nosearch");
  p.op = Op::bmm;
  EXPECT_EQ(lt.key_tag(p), "-nosearch");
  p.op = Op::scaled_mm;
  EXPECT_EQ(lt.key_tag(p), "");
  if (saved) setenv("TMAGEMM_CUBLASLT_SEARCH", saved->c_str(), 1);
  else unsetenv("TMAGEMM_CUBLASLT_SEARCH");
}

}  // namespace
}  // namespace tmagemm::choices
