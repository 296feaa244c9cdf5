// validate_test.cpp — CPU tests of the make_*_problem validators: every rule (rank, sizes, strides, shapes,
// dtypes, scaled_mm layout/scales, null data, pointer location/device, extent overflow, overlap) throws the
// right ErrorCode with a message naming the argument and the rule; valid input gives the canonical problem; and
// validate_options (choice_regex must compile, sm_carveout >= 0).
// Device memory is faked with set_pointer_query: no GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "problem/problem.hpp"
#include "runtime/device.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm {
namespace {

constexpr uintptr_t kDev0 = 0x7f0000000000;  // fake device 0 memory: [kDev0, kDev0 + 1 TB)
constexpr uintptr_t kDev1 = 0x7d0000000000;  // fake device 1 memory: [kDev1, kDev1 + 1 TB)
constexpr uintptr_t kSpan = uintptr_t{1} << 40;

PointerInfo fake_query(const void* p) {
  const auto x = reinterpret_cast<uintptr_t>(p);
  if (x >= kDev0 && x < kDev0 + kSpan) return {true, 0};
  if (x >= kDev1 && x < kDev1 + kSpan) return {true, 1};
  return {false, -1};
}

void* dev0(uintptr_t offset) { return reinterpret_cast<void*>(kDev0 + offset); }
void* dev1(uintptr_t offset) { return reinterpret_cast<void*>(kDev1 + offset); }
void* host() { return reinterpret_cast<void*>(uintptr_t{0x1000}); }

constexpr uintptr_t MB = uintptr_t{1} << 20;

#define EXPECT_TMAGEMM_ERROR(statement, expected_code, substring)                                          \
  do {                                                                                                     \
    try {                                                                                                  \
      statement;                                                                                           \
      ADD_FAILURE() << "expected Error(" << to_string(expected_code) << ") containing '" << (substring)     \
                    << "'";                                                                                \
    } catch (const Error& e) {                                                                             \
      EXPECT_EQ(e.code(), expected_code) << e.what();                                                      \
      EXPECT_NE(std::string(e.what()).find(substring), std::string::npos)                                  \
          << "message: " << e.what() << "\nexpected to contain: " << (substring);                          \
    }                                                                                                      \
  } while (0)

class ProblemValidate : public ::testing::Test {
 protected:
  void SetUp() override { set_pointer_query(fake_query); }
  void TearDown() override { set_pointer_query({}); }

  // mm operands M=64, K=32, N=48 in bf16: a row-major, b col-major, out row-major, disjoint.
  TensorView a = TensorView::contiguous(dev0(0), DType::bf16, {64, 32});
  TensorView b = TensorView::contiguous(dev0(1 * MB), DType::bf16, {48, 32}).t();
  TensorView out = TensorView::contiguous(dev0(2 * MB), DType::bf16, {64, 48});
};

// ---- valid problems and canonical form ------------------------------------------------------------------

TEST_F(ProblemValidate, MmValid) {
  GemmProblem p = make_mm_problem(a, b, out);
  EXPECT_EQ(p.op, Op::mm);
  EXPECT_EQ(p.m, 64);
  EXPECT_EQ(p.n, 48);
  EXPECT_EQ(p.k, 32);
  EXPECT_EQ(p.batch, 1);
  EXPECT_EQ(p.device, 0);
  EXPECT_EQ(p.a.major(), Major::row);
  EXPECT_EQ(p.a.ld(), 32);
  EXPECT_EQ(p.b.major(), Major::col);
  EXPECT_EQ(p.b.ld(), 32);
  EXPECT_EQ(p.b.rows, 32);
  EXPECT_EQ(p.b.cols, 48);
  EXPECT_EQ(p.out.major(), Major::row);
  EXPECT_EQ(p.out.data, out.data);
  EXPECT_EQ(p.bias_kind, BiasKind::none);
  EXPECT_EQ(p.scale_kind, ScaleKind::none);
  EXPECT_EQ(p.describe(), "mm(64x32 row, 32x48 col) bf16->bf16");
}

TEST_F(ProblemValidate, OutDtypesAccepted) {
  for (DType in : {DType::bf16, DType::f16})
    for (DType o : {DType::bf16, DType::f16, DType::f32}) {
      a.dtype = b.dtype = in;
      out.dtype = o;
      EXPECT_NO_THROW(make_mm_problem(a, b, out)) << to_string(in) << "->" << to_string(o);
    }
}

TEST_F(ProblemValidate, ZeroSizesAreValid) {
  // M = 0
  EXPECT_NO_THROW(make_mm_problem(TensorView::contiguous(dev0(0), DType::bf16, {0, 32}), b,
                                  TensorView::contiguous(dev0(2 * MB), DType::bf16, {0, 48})));
  // N = 0
  EXPECT_NO_THROW(make_mm_problem(a, TensorView::contiguous(dev0(MB), DType::bf16, {32, 0}),
                                  TensorView::contiguous(dev0(2 * MB), DType::bf16, {64, 0})));
  // K = 0, with null data for the empty a and b
  GemmProblem p = make_mm_problem(TensorView::contiguous(nullptr, DType::bf16, {64, 0}),
                                  TensorView::contiguous(nullptr, DType::bf16, {0, 48}), out);
  EXPECT_EQ(p.k, 0);
  EXPECT_TRUE(p.a.empty());
  EXPECT_FALSE(p.out.empty());
}

TEST_F(ProblemValidate, EmptyTensorsAreNotQueried) {
  set_pointer_query([](const void*) -> PointerInfo { throw Error(ErrorCode::cuda_error, "queried"); });
  EXPECT_NO_THROW(make_mm_problem(TensorView::contiguous(nullptr, DType::bf16, {0, 0}),
                                  TensorView::contiguous(nullptr, DType::bf16, {0, 0}),
                                  TensorView::contiguous(nullptr, DType::bf16, {0, 0})));
}

TEST_F(ProblemValidate, CanonicalColumnVectorIsColMajor) {
  // (M,1) with strides (1,1): col-major with ld = M rounded up to 16 bytes.
  TensorView col = TensorView::strided(dev0(0), DType::bf16, {100, 1}, {1, 1});
  TensorView row = TensorView::strided(dev0(MB), DType::bf16, {1, 48}, {1, 1});
  GemmProblem p = make_mm_problem(col, row, TensorView::contiguous(dev0(2 * MB), DType::bf16, {100, 48}));
  EXPECT_EQ(p.a.major(), Major::col);
  EXPECT_EQ(p.a.col_stride, 104);
  EXPECT_EQ(p.a.ld(), 104);
  EXPECT_EQ(p.b.major(), Major::row);  // (1,N) with col stride 1: row-major, ld = round16(N)
  EXPECT_EQ(p.b.row_stride, 48);
}

TEST_F(ProblemValidate, CanonicalExtentOneFreeStride) {
  // (M,1) column slice of a row-major matrix: strides (32, 5) -> row-major with ld 32.
  TensorView slice = TensorView::strided(dev0(0), DType::bf16, {64, 1}, {32, 5});
  // (1,N) with non-unit col stride: col-major with ld = col stride.
  TensorView row3 = TensorView::strided(dev0(MB), DType::bf16, {1, 48}, {7, 3});
  GemmProblem p = make_mm_problem(slice, row3, out);
  EXPECT_EQ(p.a.major(), Major::row);
  EXPECT_EQ(p.a.col_stride, 1);
  EXPECT_EQ(p.a.ld(), 32);
  EXPECT_EQ(p.b.major(), Major::col);
  EXPECT_EQ(p.b.row_stride, 1);
  EXPECT_EQ(p.b.ld(), 3);
}

TEST_F(ProblemValidate, CanonicalOneByOneIsRow) {
  for (auto [dt, ld] : {std::pair{DType::bf16, 8}, std::pair{DType::f32, 4}}) {
    TensorView one = TensorView::strided(dev0(0), dt, {1, 1}, {5, 9});
    TensorView x = TensorView::contiguous(dev0(MB), DType::bf16, {1, 1});
    TensorView y = TensorView::contiguous(dev0(2 * MB), DType::bf16, {1, 1});
    GemmProblem p = make_mm_problem(x, y, one);
    EXPECT_EQ(p.out.major(), Major::row);
    EXPECT_EQ(p.out.col_stride, 1);
    EXPECT_EQ(p.out.row_stride, ld) << to_string(dt);
  }
}

TEST_F(ProblemValidate, StridedOperandKeepsStrides) {
  TensorView s = TensorView::strided(dev0(0), DType::bf16, {64, 32}, {80, 2});
  GemmProblem p = make_mm_problem(s, b, out);
  EXPECT_EQ(p.a.major(), Major::strided);
  EXPECT_EQ(p.a.ld(), 80);
  EXPECT_EQ(p.a.row_stride, 80);
  EXPECT_EQ(p.a.col_stride, 2);
  EXPECT_NE(p.describe().find("strides=(80, 2)"), std::string::npos) << p.describe();
}

TEST(ProblemOperand, MajorAndLd) {
  Operand o;
  o.rows = 4;
  o.cols = 4;
  o.row_stride = 8;
  o.col_stride = 1;
  EXPECT_EQ(o.major(), Major::row);
  EXPECT_EQ(o.ld(), 8);
  o.row_stride = 1;
  o.col_stride = 16;
  EXPECT_EQ(o.major(), Major::col);
  EXPECT_EQ(o.ld(), 16);
  o.row_stride = 24;
  o.col_stride = 3;
  EXPECT_EQ(o.major(), Major::strided);
  EXPECT_EQ(o.ld(), 24);
  EXPECT_FALSE(o.empty());
  o.rows = 0;
  EXPECT_TRUE(o.empty());
}

TEST(ProblemNames, OpAndMajor) {
  EXPECT_STREQ(to_string(Op::mm), "mm");
  EXPECT_STREQ(to_string(Op::addmm), "addmm");
  EXPECT_STREQ(to_string(Op::scaled_mm), "scaled_mm");
  EXPECT_STREQ(to_string(Op::bmm), "bmm");
  EXPECT_STREQ(to_string(Major::row), "row");
  EXPECT_STREQ(to_string(Major::col), "col");
  EXPECT_STREQ(to_string(Major::strided), "strided");
}

// ---- rank, sizes, strides -------------------------------------------------------------------------------

TEST_F(ProblemValidate, RankOfMmOperands) {
  EXPECT_TMAGEMM_ERROR(make_mm_problem(TensorView::contiguous(dev0(0), DType::bf16, {2, 64, 32}), b, out),
                       ErrorCode::invalid_argument, "mm: a must have rank 2 (use bmm for batches), got rank 3");
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, TensorView::contiguous(dev0(2 * MB), DType::bf16, {1, 64, 48})),
                       ErrorCode::invalid_argument, "mm: out must have rank 2");
  TensorView garbage = a;
  garbage.rank = 7;
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, garbage, out), ErrorCode::invalid_argument, "b must have rank 2");
}

TEST_F(ProblemValidate, RankOfBmmOperands) {
  TensorView a3 = TensorView::contiguous(dev0(0), DType::bf16, {2, 64, 32});
  TensorView o3 = TensorView::contiguous(dev0(2 * MB), DType::bf16, {2, 64, 48});
  EXPECT_TMAGEMM_ERROR(make_bmm_problem(a3, b, o3), ErrorCode::invalid_argument, "bmm: b must have rank 3");
}

TEST_F(ProblemValidate, RankOfBiasAndScales) {
  TensorView bias3 = TensorView::contiguous(dev0(3 * MB), DType::bf16, {1, 1, 48});
  EXPECT_TMAGEMM_ERROR(make_addmm_problem(bias3, a, b, out, 1, 1, Activation::none), ErrorCode::invalid_argument,
                       "addmm: bias must have rank 2 or 1 ((N), (1,N), (M,1), (M,N), (1) or (1,1))");
  TensorView fa = TensorView::contiguous(dev0(0), DType::e4m3, {64, 32});
  TensorView fb = TensorView::contiguous(dev0(MB), DType::e4m3, {48, 32}).t();
  TensorView s3 = TensorView::contiguous(dev0(3 * MB), DType::f32, {1, 1, 1});
  TensorView s = TensorView::contiguous(dev0(4 * MB), DType::f32, {1, 1});
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, s3, s, nullptr, out, false), ErrorCode::invalid_argument,
                       "scaled_mm: scale_a must have rank 2");
}

TEST_F(ProblemValidate, NegativeSize) {
  TensorView bad = TensorView::strided(dev0(MB), DType::bf16, {32, -4}, {1, 32});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, bad, out), ErrorCode::invalid_argument, "mm: b has negative size -4 in dim 1");
}

TEST_F(ProblemValidate, NegativeStride) {
  TensorView bad = TensorView::strided(dev0(0), DType::bf16, {64, 32}, {32, -1});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(bad, b, out), ErrorCode::invalid_argument,
                       "mm: a: negative strides are not supported (stride -1 in dim 1");
  TensorView bad_out = TensorView::strided(dev0(2 * MB), DType::bf16, {64, 48}, {-48, 1});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, bad_out), ErrorCode::invalid_argument,
                       "out: negative strides are not supported");
}

// ---- shapes ---------------------------------------------------------------------------------------------

TEST_F(ProblemValidate, InnerDimensionsDiffer) {
  TensorView a35 = TensorView::contiguous(dev0(0), DType::bf16, {3, 5});
  TensorView b67 = TensorView::contiguous(dev0(MB), DType::bf16, {6, 7});
  TensorView o37 = TensorView::contiguous(dev0(2 * MB), DType::bf16, {3, 7});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a35, b67, o37), ErrorCode::invalid_argument,
                       "mm: a is MxK = 3x5 but b is 6x7: inner dimensions differ (5 vs 6)");
}

TEST_F(ProblemValidate, OutShape) {
  TensorView a35 = TensorView::contiguous(dev0(0), DType::bf16, {3, 5});
  TensorView b57 = TensorView::contiguous(dev0(MB), DType::bf16, {5, 7});
  TensorView o38 = TensorView::contiguous(dev0(2 * MB), DType::bf16, {3, 8});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a35, b57, o38), ErrorCode::invalid_argument,
                       "mm: out is 3x8 but must be MxN = 3x7");
}

TEST_F(ProblemValidate, BmmValidWithBroadcastBatch) {
  // a broadcasts its single matrix over 4 batches through a batch stride of 0.
  TensorView a3 = TensorView::strided(dev0(0), DType::bf16, {4, 64, 32}, {0, 32, 1});
  TensorView b3 = TensorView::contiguous(dev0(MB), DType::bf16, {4, 32, 48});
  TensorView o3 = TensorView::contiguous(dev0(2 * MB), DType::bf16, {4, 64, 48});
  GemmProblem p = make_bmm_problem(a3, b3, o3);
  EXPECT_EQ(p.op, Op::bmm);
  EXPECT_EQ(p.batch, 4);
  EXPECT_EQ(p.m, 64);
  EXPECT_EQ(p.n, 48);
  EXPECT_EQ(p.k, 32);
  EXPECT_EQ(p.a.batch_stride, 0);
  EXPECT_EQ(p.b.batch_stride, 32 * 48);
  EXPECT_EQ(p.out.batch_stride, 64 * 48);
  EXPECT_EQ(p.describe(), "bmm(4x64x32 row bcast, 4x32x48 row) bf16->bf16");
}

TEST_F(ProblemValidate, BmmBatchOfOneHasNoBatchStride) {
  TensorView a3 = TensorView::strided(dev0(0), DType::bf16, {1, 64, 32}, {12345, 32, 1});
  TensorView b3 = TensorView::contiguous(dev0(MB), DType::bf16, {1, 32, 48});
  TensorView o3 = TensorView::contiguous(dev0(2 * MB), DType::bf16, {1, 64, 48});
  GemmProblem p = make_bmm_problem(a3, b3, o3);
  EXPECT_EQ(p.a.batch_stride, 0);
  EXPECT_EQ(p.out.batch_stride, 0);
}

TEST_F(ProblemValidate, BmmBatchSizesDiffer) {
  // A batch of size 1 does not broadcast by size: the stride must be 0 and the size must equal B.
  TensorView a3 = TensorView::strided(dev0(0), DType::bf16, {1, 64, 32}, {0, 32, 1});
  TensorView b3 = TensorView::contiguous(dev0(MB), DType::bf16, {4, 32, 48});
  TensorView o3 = TensorView::contiguous(dev0(2 * MB), DType::bf16, {4, 64, 48});
  EXPECT_TMAGEMM_ERROR(make_bmm_problem(a3, b3, o3), ErrorCode::invalid_argument,
                       "bmm: batch sizes differ (a 1, b 4, out 4)");
}

TEST_F(ProblemValidate, BmmInnerAndOutShape) {
  TensorView a3 = TensorView::contiguous(dev0(0), DType::bf16, {2, 3, 5});
  TensorView b3 = TensorView::contiguous(dev0(MB), DType::bf16, {2, 6, 7});
  TensorView o3 = TensorView::contiguous(dev0(2 * MB), DType::bf16, {2, 3, 7});
  EXPECT_TMAGEMM_ERROR(make_bmm_problem(a3, b3, o3), ErrorCode::invalid_argument,
                       "bmm: a is BxMxK = 2x3x5 but b is 2x6x7: inner dimensions differ (5 vs 6)");
  TensorView b57 = TensorView::contiguous(dev0(MB), DType::bf16, {2, 5, 7});
  TensorView o38 = TensorView::contiguous(dev0(2 * MB), DType::bf16, {2, 3, 8});
  EXPECT_TMAGEMM_ERROR(make_bmm_problem(a3, b57, o38), ErrorCode::invalid_argument,
                       "bmm: out is 2x3x8 but must be BxMxN = 2x3x7");
}

// ---- addmm bias -----------------------------------------------------------------------------------------

TEST_F(ProblemValidate, BiasOfRankOneIsTheRowVector) {
  // torch's addmm and _scaled_mm take a bias of shape (N): the same problem as the (1,N) view.
  TensorView bias = TensorView::contiguous(dev0(3 * MB), DType::bf16, {48});
  GemmProblem p = make_addmm_problem(bias, a, b, out, 1, 1, Activation::none);
  EXPECT_EQ(p.bias_kind, BiasKind::row_vector);
  EXPECT_EQ(p.bias.cols, 48);
  EXPECT_EQ(p.bias.col_stride, 1);
  EXPECT_EQ(p.bias.data, bias.data);
  TensorView wrong = TensorView::contiguous(dev0(3 * MB), DType::bf16, {47});
  EXPECT_TMAGEMM_ERROR(make_addmm_problem(wrong, a, b, out, 1, 1, Activation::none), ErrorCode::invalid_argument,
                       "addmm: bias is 1x47 but must broadcast to out MxN = 64x48");
}

TEST_F(ProblemValidate, BiasRowVector) {
  TensorView bias = TensorView::contiguous(dev0(3 * MB), DType::bf16, {1, 48});
  GemmProblem p = make_addmm_problem(bias, a, b, out, 0.5f, 2.0f, Activation::relu);
  EXPECT_EQ(p.op, Op::addmm);
  EXPECT_EQ(p.bias_kind, BiasKind::row_vector);
  EXPECT_EQ(p.bias.rows, 1);
  EXPECT_EQ(p.bias.cols, 48);
  EXPECT_EQ(p.bias.row_stride, 0);
  EXPECT_EQ(p.bias.col_stride, 1);
  EXPECT_EQ(p.bias.major(), Major::row);
  EXPECT_EQ(p.beta, 0.5f);
  EXPECT_EQ(p.alpha, 2.0f);
  EXPECT_EQ(p.act, Activation::relu);
  const std::string d = p.describe();
  EXPECT_NE(d.find("addmm("), std::string::npos) << d;
  EXPECT_NE(d.find("bias=row_vector bf16"), std::string::npos) << d;
  EXPECT_NE(d.find("act=relu"), std::string::npos) << d;
}

TEST_F(ProblemValidate, BiasColVector) {
  TensorView bias = TensorView::contiguous(dev0(3 * MB), DType::f32, {64, 1});
  GemmProblem p = make_addmm_problem(bias, a, b, out, 1, 1, Activation::none);
  EXPECT_EQ(p.bias_kind, BiasKind::col_vector);
  EXPECT_EQ(p.bias.rows, 64);
  EXPECT_EQ(p.bias.cols, 1);
  EXPECT_EQ(p.bias.col_stride, 0);
  EXPECT_EQ(p.bias.row_stride, 1);
  EXPECT_EQ(p.bias.dtype, DType::f32);
}

TEST_F(ProblemValidate, BiasFull) {
  TensorView bias = TensorView::contiguous(dev0(3 * MB), DType::bf16, {64, 48});
  GemmProblem p = make_addmm_problem(bias, a, b, out, 1, 1, Activation::none);
  EXPECT_EQ(p.bias_kind, BiasKind::full);
  EXPECT_EQ(p.bias.rows, 64);
  EXPECT_EQ(p.bias.cols, 48);
  EXPECT_EQ(p.bias.major(), Major::row);
  EXPECT_EQ(p.bias.ld(), 48);
}

TEST_F(ProblemValidate, BiasBroadcastByStrideZero) {
  TensorView rows = TensorView::strided(dev0(3 * MB), DType::bf16, {64, 48}, {0, 1});
  GemmProblem p = make_addmm_problem(rows, a, b, out, 1, 1, Activation::none);
  EXPECT_EQ(p.bias_kind, BiasKind::row_vector);
  EXPECT_EQ(p.bias.rows, 1);
  EXPECT_EQ(p.bias.row_stride, 0);
  TensorView cols = TensorView::strided(dev0(3 * MB), DType::bf16, {64, 48}, {1, 0});
  p = make_addmm_problem(cols, a, b, out, 1, 1, Activation::none);
  EXPECT_EQ(p.bias_kind, BiasKind::col_vector);
  EXPECT_EQ(p.bias.cols, 1);
  EXPECT_EQ(p.bias.col_stride, 0);
}

TEST_F(ProblemValidate, BiasOfOneElementBroadcastsToEveryElement) {
  // torch.addmm broadcasts a one-element bias ((1), (1,1); a 0-dim tensor in Python) to every element: a row
  // vector whose columns all read that element.
  for (TensorView bias : {TensorView::contiguous(dev0(3 * MB), DType::bf16, {1}),
                          TensorView::contiguous(dev0(3 * MB), DType::f32, {1, 1})}) {
    GemmProblem p = make_addmm_problem(bias, a, b, out, 1, 1, Activation::none);
    EXPECT_EQ(p.bias_kind, BiasKind::row_vector);
    EXPECT_EQ(p.bias.rows, 1);
    EXPECT_EQ(p.bias.cols, 48);
    EXPECT_EQ(p.bias.row_stride, 0);
    EXPECT_EQ(p.bias.col_stride, 0);
    EXPECT_EQ(p.bias.data, bias.data);
  }
  TensorView two = TensorView::contiguous(dev0(3 * MB), DType::bf16, {2});
  EXPECT_TMAGEMM_ERROR(make_addmm_problem(two, a, b, out, 1, 1, Activation::none), ErrorCode::invalid_argument,
                       "addmm: bias is 1x2 but must broadcast to out MxN = 64x48");
}

TEST_F(ProblemValidate, BiasShapeNotBroadcastable) {
  TensorView bias = TensorView::contiguous(dev0(3 * MB), DType::bf16, {2, 48});
  EXPECT_TMAGEMM_ERROR(make_addmm_problem(bias, a, b, out, 1, 1, Activation::none), ErrorCode::invalid_argument,
                       "addmm: bias is 2x48 but must broadcast to out MxN = 64x48");
}

TEST_F(ProblemValidate, BiasDtype) {
  TensorView f32 = TensorView::contiguous(dev0(3 * MB), DType::f32, {1, 48});
  EXPECT_NO_THROW(make_addmm_problem(f32, a, b, out, 1, 1, Activation::none));
  TensorView f16 = TensorView::contiguous(dev0(3 * MB), DType::f16, {1, 48});
  EXPECT_TMAGEMM_ERROR(make_addmm_problem(f16, a, b, out, 1, 1, Activation::none), ErrorCode::unsupported,
                       "addmm: bias dtype f16 is not supported with inputs bf16 and out bf16 (bias must be bf16 or f32)");
}

// ---- dtypes ---------------------------------------------------------------------------------------------

TEST_F(ProblemValidate, MixedInputDtypes) {
  b.dtype = DType::f16;
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, out), ErrorCode::unsupported,
                       "mm: dtypes a bf16 x b f16 -> out bf16 are not supported");
}

TEST_F(ProblemValidate, F32InputsUnsupported) {
  a.dtype = b.dtype = DType::f32;
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, out), ErrorCode::unsupported, "a f32 x b f32 -> out bf16");
}

TEST_F(ProblemValidate, Fp8InMmPointsToScaledMm) {
  a.dtype = b.dtype = DType::e4m3;
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, out), ErrorCode::unsupported, "fp8 inputs go through scaled_mm");
}

TEST_F(ProblemValidate, OutDtypeUnsupported) {
  out.dtype = DType::e4m3;
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, out), ErrorCode::unsupported, "-> out e4m3 are not supported");
  TensorView a3 = TensorView::contiguous(dev0(0), DType::bf16, {2, 64, 32});
  TensorView b3 = TensorView::contiguous(dev0(MB), DType::f16, {2, 32, 48});
  TensorView o3 = TensorView::contiguous(dev0(2 * MB), DType::bf16, {2, 64, 48});
  EXPECT_TMAGEMM_ERROR(make_bmm_problem(a3, b3, o3), ErrorCode::unsupported, "bmm: dtypes a bf16 x b f16");
}

// ---- scaled_mm ------------------------------------------------------------------------------------------

class ProblemScaledMm : public ProblemValidate {
 protected:
  TensorView fa = TensorView::contiguous(dev0(0), DType::e4m3, {64, 32});
  TensorView fb = TensorView::contiguous(dev0(MB), DType::e4m3, {48, 32}).t();  // (K,N) column-major
  TensorView sa = TensorView::contiguous(dev0(3 * MB), DType::f32, {1, 1});
  TensorView sb = TensorView::contiguous(dev0(4 * MB), DType::f32, {1, 1});
};

TEST_F(ProblemScaledMm, TensorwiseValid) {
  TensorView bias = TensorView::contiguous(dev0(5 * MB), DType::bf16, {1, 48});
  fb.dtype = DType::e5m2;
  GemmProblem p = make_scaled_mm_problem(fa, fb, sa, sb, &bias, out, true);
  EXPECT_EQ(p.op, Op::scaled_mm);
  EXPECT_EQ(p.scale_kind, ScaleKind::tensorwise);
  EXPECT_EQ(p.scale_a, sa.data);
  EXPECT_EQ(p.scale_b, sb.data);
  EXPECT_EQ(p.bias_kind, BiasKind::row_vector);
  EXPECT_TRUE(p.fast_accum);
  EXPECT_EQ(p.a.major(), Major::row);
  EXPECT_EQ(p.b.major(), Major::col);
  const std::string d = p.describe();
  EXPECT_NE(d.find("scaled_mm(64x32 row, 32x48 col) e4m3xe5m2->bf16"), std::string::npos) << d;
  EXPECT_NE(d.find("scales=tensorwise"), std::string::npos) << d;
  EXPECT_NE(d.find("fast_accum"), std::string::npos) << d;
}

TEST_F(ProblemScaledMm, RowwiseValid) {
  TensorView ra = TensorView::contiguous(dev0(3 * MB), DType::f32, {64, 1});
  TensorView rb = TensorView::contiguous(dev0(4 * MB), DType::f32, {1, 48});
  GemmProblem p = make_scaled_mm_problem(fa, fb, ra, rb, nullptr, out, false);
  EXPECT_EQ(p.scale_kind, ScaleKind::rowwise);
  EXPECT_EQ(p.bias_kind, BiasKind::none);
  EXPECT_FALSE(p.fast_accum);
}

TEST_F(ProblemScaledMm, NoBiasIsNone) {
  GemmProblem p = make_scaled_mm_problem(fa, fb, sa, sb, nullptr, out, false);
  EXPECT_EQ(p.bias_kind, BiasKind::none);
}

TEST_F(ProblemScaledMm, E5m2TimesE5m2Invalid) {
  // A rule of torch._scaled_mm, not a missing feature: invalid_argument, whatever the output type.
  fa.dtype = fb.dtype = DType::e5m2;
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, sa, sb, nullptr, out, false), ErrorCode::invalid_argument,
                       "scaled_mm: a and b cannot both be e5m2 (torch._scaled_mm's rule");
  out.dtype = DType::f32;
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, sa, sb, nullptr, out, false), ErrorCode::invalid_argument,
                       "a and b cannot both be e5m2");
}

TEST_F(ProblemScaledMm, E5m2WithE4m3Valid) {
  fa.dtype = DType::e5m2;
  EXPECT_NO_THROW(make_scaled_mm_problem(fa, fb, sa, sb, nullptr, out, false));
  fa.dtype = DType::e4m3;
  fb.dtype = DType::e5m2;
  EXPECT_NO_THROW(make_scaled_mm_problem(fa, fb, sa, sb, nullptr, out, false));
}

TEST_F(ProblemScaledMm, NonFp8InputsUnsupported) {
  fa.dtype = DType::bf16;
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, sa, sb, nullptr, out, false), ErrorCode::unsupported,
                       "a bf16 x b e4m3");
}

TEST_F(ProblemScaledMm, Fp8OutUnsupported) {
  TensorView o8 = TensorView::contiguous(dev0(2 * MB), DType::e4m3, {64, 48});
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, sa, sb, nullptr, o8, false), ErrorCode::unsupported,
                       "-> out e4m3 are not supported");
}

TEST_F(ProblemScaledMm, ScaleDtype) {
  sb.dtype = DType::bf16;
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, sa, sb, nullptr, out, false), ErrorCode::unsupported,
                       "scaled_mm: scale_b must be f32, got bf16");
}

TEST_F(ProblemScaledMm, BiasDtype) {
  TensorView bias = TensorView::contiguous(dev0(5 * MB), DType::f32, {1, 48});
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, sa, sb, &bias, out, false), ErrorCode::unsupported,
                       "scaled_mm: bias dtype f32 is not supported (bias must be bf16 or f16)");
}

TEST_F(ProblemScaledMm, BiasMustBeVectorOfN) {
  TensorView bias = TensorView::contiguous(dev0(5 * MB), DType::bf16, {64, 1});
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, sa, sb, &bias, out, false), ErrorCode::invalid_argument,
                       "scaled_mm: bias is 64x1 but must be a vector of N = 48 elements");
}

TEST_F(ProblemScaledMm, AMustBeRowMajor) {
  TensorView col = TensorView::contiguous(dev0(0), DType::e4m3, {32, 64}).t();
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(col, fb, sa, sb, nullptr, out, false), ErrorCode::invalid_argument,
                       "scaled_mm: a must be row-major (K contiguous");
}

TEST_F(ProblemScaledMm, BMustBeColumnMajor) {
  TensorView row = TensorView::contiguous(dev0(MB), DType::e4m3, {32, 48});
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, row, sa, sb, nullptr, out, false), ErrorCode::invalid_argument,
                       "scaled_mm: b must be column-major (K contiguous");
}

TEST_F(ProblemScaledMm, KMultipleOf16) {
  TensorView a24 = TensorView::contiguous(dev0(0), DType::e4m3, {64, 24});
  TensorView b24 = TensorView::contiguous(dev0(MB), DType::e4m3, {48, 24}).t();
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(a24, b24, sa, sb, nullptr, out, false), ErrorCode::invalid_argument,
                       "scaled_mm: K = 24 must be divisible by 16");
}

TEST_F(ProblemScaledMm, NMultipleOf16) {
  TensorView b40 = TensorView::contiguous(dev0(MB), DType::e4m3, {40, 32}).t();
  TensorView out40 = TensorView::contiguous(dev0(2 * MB), DType::bf16, {64, 40});
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, b40, sa, sb, nullptr, out40, false), ErrorCode::invalid_argument,
                       "scaled_mm: N = 40 must be divisible by 16");
}

TEST_F(ProblemScaledMm, NoBiasWithF32Output) {
  TensorView bias = TensorView::contiguous(dev0(5 * MB), DType::bf16, {1, 48});
  TensorView o32 = TensorView::contiguous(dev0(2 * MB), DType::f32, {64, 48});
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, sa, sb, &bias, o32, false), ErrorCode::invalid_argument,
                       "scaled_mm: bias is not supported with an f32 output");
  EXPECT_NO_THROW(make_scaled_mm_problem(fa, fb, sa, sb, nullptr, o32, false));
}

TEST_F(ProblemScaledMm, InvalidScalingConfiguration) {
  TensorView ra = TensorView::contiguous(dev0(3 * MB), DType::f32, {64, 1});
  // rowwise a with tensorwise b
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, ra, sb, nullptr, out, false), ErrorCode::invalid_argument,
                       "Invalid scaling configuration");
  // scale_b with the wrong orientation
  TensorView rb_wrong = TensorView::contiguous(dev0(4 * MB), DType::f32, {48, 1});
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, ra, rb_wrong, nullptr, out, false),
                       ErrorCode::invalid_argument, "scale_a is 64x1 and scale_b is 48x1");
}

TEST_F(ProblemScaledMm, RowwiseScalesMustBeContiguous) {
  TensorView ra = TensorView::strided(dev0(3 * MB), DType::f32, {64, 1}, {2, 1});
  TensorView rb = TensorView::contiguous(dev0(4 * MB), DType::f32, {1, 48});
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, ra, rb, nullptr, out, false), ErrorCode::invalid_argument,
                       "scale_a (rowwise, Mx1) must be contiguous: stride along M is 2");
}

TEST_F(ProblemScaledMm, OutOverlapsScale) {
  TensorView sb_in_out = TensorView::contiguous(dev0(2 * MB + 64), DType::f32, {1, 1});
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, sa, sb_in_out, nullptr, out, false),
                       ErrorCode::invalid_argument, "scaled_mm: out overlaps scale_b");
}

TEST_F(ProblemScaledMm, NullScale) {
  sa.data = nullptr;
  EXPECT_TMAGEMM_ERROR(make_scaled_mm_problem(fa, fb, sa, sb, nullptr, out, false), ErrorCode::invalid_argument,
                       "scaled_mm: scale_a data is null");
}

// ---- null data, pointer location, devices ---------------------------------------------------------------

TEST_F(ProblemValidate, NullDataWithElements) {
  a.data = nullptr;
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, out), ErrorCode::invalid_argument,
                       "mm: a data is null but it has sizes 64x32");
}

TEST_F(ProblemValidate, HostMemory) {
  b.data = host();
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, out), ErrorCode::invalid_argument,
                       "mm: b data 0x1000 is host memory; tmagemm needs device memory");
  TensorView bias = TensorView::contiguous(host(), DType::bf16, {1, 48});
  EXPECT_TMAGEMM_ERROR(make_addmm_problem(bias, a, TensorView::contiguous(dev0(MB), DType::bf16, {32, 48}), out, 1,
                                          1, Activation::none),
                       ErrorCode::invalid_argument, "addmm: bias data 0x1000 is host memory");
}

TEST_F(ProblemValidate, DeviceFieldDisagreesWithPointer) {
  a.data = dev1(0);  // lives on device 1, but the view says device 0
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, out), ErrorCode::invalid_argument,
                       "mm: a says device 0 (TensorView.device) but its data lives on device 1");
}

TEST_F(ProblemValidate, TensorsOnDifferentDevices) {
  b.data = dev1(MB);
  b.device = 1;
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, out), ErrorCode::invalid_argument,
                       "tensors on different devices (a on 0, b on 1)");
}

TEST_F(ProblemValidate, AllOnDeviceOne) {
  TensorView a1 = TensorView::contiguous(dev1(0), DType::bf16, {64, 32}, 1);
  TensorView b1 = TensorView::contiguous(dev1(MB), DType::bf16, {32, 48}, 1);
  TensorView o1 = TensorView::contiguous(dev1(2 * MB), DType::bf16, {64, 48}, 1);
  EXPECT_EQ(make_mm_problem(a1, b1, o1).device, 1);
}

TEST_F(ProblemValidate, DefaultQueryWithoutDevice) {
  set_pointer_query({});  // the CUDA runtime's answer
  static char buffer[64 * 48 * 2 * 3];
  TensorView ha = TensorView::contiguous(buffer, DType::bf16, {8, 8});
  TensorView hb = TensorView::contiguous(buffer + 256, DType::bf16, {8, 8});
  TensorView ho = TensorView::contiguous(buffer + 512, DType::bf16, {8, 8});
  if (runtime::device_count() == 0) {
    EXPECT_TMAGEMM_ERROR(make_mm_problem(ha, hb, ho), ErrorCode::cuda_error,
                         "no CUDA device: cannot check where a lives");
    EXPECT_TMAGEMM_ERROR(query_pointer(buffer), ErrorCode::cuda_error, "no CUDA device: cannot check where pointer");
  } else {
    EXPECT_TMAGEMM_ERROR(make_mm_problem(ha, hb, ho), ErrorCode::invalid_argument, "a data");
    EXPECT_FALSE(query_pointer(buffer).is_device);
  }
  // Nothing to check: no pointer query, no error even without a device.
  EXPECT_NO_THROW(make_mm_problem(TensorView::contiguous(nullptr, DType::bf16, {0, 8}),
                                  TensorView::contiguous(nullptr, DType::bf16, {8, 0}),
                                  TensorView::contiguous(nullptr, DType::bf16, {0, 0})));
}

TEST_F(ProblemValidate, QueryPointerUsesInstalledHook) {
  EXPECT_TRUE(query_pointer(dev1(16)).is_device);
  EXPECT_EQ(query_pointer(dev1(16)).device, 1);
  EXPECT_FALSE(query_pointer(host()).is_device);
}

// ---- byte extent overflow -------------------------------------------------------------------------------

TEST_F(ProblemValidate, ExtentOverflowInElements) {
  const int64_t big = int64_t{1} << 40;
  TensorView huge = TensorView::strided(dev0(0), DType::bf16, {big, 32}, {big, 1});
  TensorView o = TensorView::strided(dev0(2 * MB), DType::bf16, {big, 48}, {48, 1});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(huge, b, o), ErrorCode::invalid_argument, "mm: a byte extent overflows");
}

TEST_F(ProblemValidate, ExtentOverflowInBytes) {
  // The last element's offset fits int64 but times the item size it does not.
  const int64_t half = int64_t{1} << 31;
  TensorView x = TensorView::strided(dev0(0), DType::bf16, {half, 1}, {1, 1});
  TensorView y = TensorView::strided(dev0(MB), DType::bf16, {1, half}, {1, 1});
  TensorView o = TensorView::strided(dev0(2 * MB), DType::f32, {half, half}, {half * 2, 1});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(x, y, o), ErrorCode::invalid_argument, "mm: out byte extent overflows");
}

// ---- overlap --------------------------------------------------------------------------------------------

TEST_F(ProblemValidate, OutEqualsInput) {
  TensorView sq_a = TensorView::contiguous(dev0(0), DType::bf16, {32, 32});
  TensorView sq_b = TensorView::contiguous(dev0(MB), DType::bf16, {32, 32});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(sq_a, sq_b, sq_a), ErrorCode::invalid_argument, "mm: out overlaps a");
  // a == b is fine: inputs may alias each other.
  EXPECT_NO_THROW(make_mm_problem(sq_a, sq_a, sq_b));
}

TEST_F(ProblemValidate, OutPartiallyOverlapsB) {
  // b spans [dev0(1 MB), dev0(1 MB) + 32*48*2) = 3072 bytes; out starts inside it.
  TensorView o = TensorView::contiguous(dev0(MB + 3000), DType::bf16, {64, 48});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, o), ErrorCode::invalid_argument, "mm: out overlaps b");
  // Starting right at b's end is fine.
  TensorView adjacent = TensorView::contiguous(dev0(MB + 3072), DType::bf16, {64, 48});
  EXPECT_NO_THROW(make_mm_problem(a, b, adjacent));
}

TEST_F(ProblemValidate, OutEqualsBiasIsInPlaceAnyOtherOverlapIsAnError) {
  TensorView bias = out;  // exactly out: addmm in place (torch's addmm_)
  EXPECT_NO_THROW(make_addmm_problem(bias, a, b, out, 1, 1, Activation::none));
  TensorView shifted = TensorView::contiguous(out.data, DType::bf16, {1, 48});  // a row of out's memory as the bias
  EXPECT_TMAGEMM_ERROR(make_addmm_problem(shifted, a, b, out, 1, 1, Activation::none), ErrorCode::invalid_argument,
                       "addmm: out overlaps bias");
}

TEST_F(ProblemValidate, OutWithStrideZero) {
  TensorView o = TensorView::strided(dev0(2 * MB), DType::bf16, {64, 48}, {0, 1});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(a, b, o), ErrorCode::invalid_argument,
                       "mm: out has stride 0 in dim 0 (extent 64)");
  TensorView a3 = TensorView::contiguous(dev0(0), DType::bf16, {4, 64, 32});
  TensorView b3 = TensorView::contiguous(dev0(MB), DType::bf16, {4, 32, 48});
  TensorView o3 = TensorView::strided(dev0(2 * MB), DType::bf16, {4, 64, 48}, {0, 48, 1});
  EXPECT_TMAGEMM_ERROR(make_bmm_problem(a3, b3, o3), ErrorCode::invalid_argument,
                       "bmm: out has stride 0 in dim 0 (extent 4)");
}

TEST_F(ProblemValidate, CheckOrderRankBeforeDtypeBeforePointer) {
  // A host pointer, a bad dtype and a bad rank at once: the rank error comes first, then dtype, then pointer.
  TensorView bad = TensorView::contiguous(host(), DType::f32, {2, 64, 32});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(bad, b, out), ErrorCode::invalid_argument, "a must have rank 2");
  bad = TensorView::contiguous(host(), DType::f32, {64, 32});
  EXPECT_TMAGEMM_ERROR(make_mm_problem(bad, b, out), ErrorCode::unsupported, "a f32 x b bf16");
}

// ---- options ---------------------------------------------------------------------------------------------

TEST(ProblemOptions, DefaultsAreValid) {
  EXPECT_NO_THROW(validate_options(Options::defaults_only()));
  Options o = Options::defaults_only();
  o.choice_regex = "persistent_tma_.*|cublaslt_algo[01]";
  o.sm_carveout = 8;
  EXPECT_NO_THROW(validate_options(o));
  EXPECT_NO_THROW(validate_options(o));  // the remembered pattern
}

TEST(ProblemOptions, ChoiceRegexSyntaxError) {
  for (const char* bad : {"(", "[a-", "cublaslt_algo{2", "*"}) {
    Options o = Options::defaults_only();
    o.choice_regex = bad;
    EXPECT_TMAGEMM_ERROR(validate_options(o), ErrorCode::invalid_argument,
                         std::string("Options::choice_regex = '") + bad + "'");
    EXPECT_TMAGEMM_ERROR(validate_options(o), ErrorCode::invalid_argument,
                         "is not a valid ECMAScript regular expression");
  }
  // A valid pattern in between does not make a bad one pass later.
  Options o = Options::defaults_only();
  o.choice_regex = "skinny";
  EXPECT_NO_THROW(validate_options(o));
  o.choice_regex = "(";
  EXPECT_TMAGEMM_ERROR(validate_options(o), ErrorCode::invalid_argument, "choice_regex");
}

TEST(ProblemOptions, NegativeSmCarveout) {
  Options o = Options::defaults_only();
  o.sm_carveout = -1;
  EXPECT_TMAGEMM_ERROR(validate_options(o), ErrorCode::invalid_argument, "Options::sm_carveout = -1");
  EXPECT_TMAGEMM_ERROR(validate_options(o), ErrorCode::invalid_argument, "must be >= 0");
}

}  // namespace
}  // namespace tmagemm

namespace tmagemm {
namespace {

// grouped_mm: a (1000, 64), b (8, 64, 96) row-major, offs (8) int32, out (1000, 96).
class GroupedValidate : public ::testing::Test {
 protected:
  void SetUp() override { set_pointer_query(fake_query); }
  void TearDown() override { set_pointer_query({}); }
  TensorView a = TensorView::contiguous(dev0(0), DType::bf16, {1000, 64});
  TensorView b = TensorView::contiguous(dev0(1 * MB), DType::bf16, {8, 64, 96});
  TensorView offs = TensorView::contiguous(dev0(3 * MB), DType::i32, {8});
  TensorView out = TensorView::contiguous(dev0(4 * MB), DType::bf16, {1000, 96});
};

TEST_F(GroupedValidate, CanonicalProblem) {
  const GemmProblem p = make_grouped_mm_problem(a, b, offs, out);
  EXPECT_EQ(p.op, Op::grouped_mm);
  EXPECT_EQ(p.batch, 8);
  EXPECT_EQ(p.m, 1000);
  EXPECT_EQ(p.n, 96);
  EXPECT_EQ(p.k, 64);
  EXPECT_EQ(p.a.batch_stride, 0);
  EXPECT_EQ(p.out.batch_stride, 0);
  EXPECT_EQ(p.b.batch_stride, 64 * 96);
  EXPECT_EQ(p.group_ends, offs.data);
  EXPECT_NE(p.describe().find("grouped_mm(1000x64 row, 8x64x96 row)"), std::string::npos) << p.describe();
}

TEST_F(GroupedValidate, RulesNameTheArgument) {
  TensorView f = offs;
  f.dtype = DType::f32;
  EXPECT_TMAGEMM_ERROR(make_grouped_mm_problem(a, b, f, out), ErrorCode::invalid_argument, "offs must be int32");
  TensorView short_offs = TensorView::contiguous(dev0(3 * MB), DType::i32, {7});
  EXPECT_TMAGEMM_ERROR(make_grouped_mm_problem(a, b, short_offs, out), ErrorCode::invalid_argument,
                       "offs has 7 elements but b has G = 8 groups");
  TensorView strided = TensorView::strided(dev0(3 * MB), DType::i32, {8}, {2});
  EXPECT_TMAGEMM_ERROR(make_grouped_mm_problem(a, b, strided, out), ErrorCode::invalid_argument,
                       "offs must be contiguous");
  TensorView offs2 = TensorView::contiguous(dev0(3 * MB), DType::i32, {8, 1});
  EXPECT_TMAGEMM_ERROR(make_grouped_mm_problem(a, b, offs2, out), ErrorCode::invalid_argument, "offs must have rank 1");
  TensorView b2 = TensorView::contiguous(dev0(1 * MB), DType::bf16, {64, 96});
  EXPECT_TMAGEMM_ERROR(make_grouped_mm_problem(a, b2, offs, out), ErrorCode::invalid_argument, "b must have rank 3");
  TensorView bk = TensorView::contiguous(dev0(1 * MB), DType::bf16, {8, 32, 96});
  EXPECT_TMAGEMM_ERROR(make_grouped_mm_problem(a, bk, offs, out), ErrorCode::invalid_argument,
                       "inner dimensions differ");
  TensorView out2 = TensorView::contiguous(dev0(4 * MB), DType::bf16, {999, 96});
  EXPECT_TMAGEMM_ERROR(make_grouped_mm_problem(a, b, offs, out2), ErrorCode::invalid_argument,
                       "out is 999x96 but must be total_MxN = 1000x96");
  TensorView host_offs = TensorView::contiguous(host(), DType::i32, {8});
  EXPECT_TMAGEMM_ERROR(make_grouped_mm_problem(a, b, host_offs, out), ErrorCode::invalid_argument,
                       "offs data");
  TensorView over = TensorView::contiguous(dev0(4 * MB), DType::i32, {8});  // inside out's bytes
  EXPECT_TMAGEMM_ERROR(make_grouped_mm_problem(a, b, over, out), ErrorCode::invalid_argument, "out overlaps offs");
}

// grouped_mm's representative routing (tuning_group_ends), which the tuner times and the heuristic scores: end rows
// non-decreasing up to M, the same on every call; a sparse class (64 tokens over 64 groups, MoE decode) leaves groups
// empty as a random router does (~40 of 64 reached, the proportional split reached 59), a class of more tokens
// reaches every group.
TEST(TuningRouting, EndsAreARoutingOfMAndSparseClassesLeaveGroupsEmpty) {
  const std::vector<std::pair<int64_t, int64_t>> classes = {{64, 64},    {512, 64}, {4096, 8}, {32768, 64},
                                                            {1, 1},      {0, 4},    {5, 256},  {1024, 64},
                                                            {1025, 64}, {1 << 20, 256}};
  for (const auto& [m, g] : classes) {
    SCOPED_TRACE(testing::Message() << "M " << m << ", G " << g);
    const std::vector<int32_t> ends = tuning_group_ends(m, g);
    ASSERT_EQ(static_cast<int64_t>(ends.size()), g);
    EXPECT_EQ(ends.back(), m);
    EXPECT_GE(ends.front(), 0);
    for (std::size_t i = 1; i < ends.size(); ++i) EXPECT_LE(ends[i - 1], ends[i]);
    EXPECT_EQ(ends, tuning_group_ends(m, g));
  }
  const auto reached = [](int64_t m, int64_t g) {
    const std::vector<int32_t> ends = tuning_group_ends(m, g);
    int n = ends.front() > 0 ? 1 : 0;
    for (std::size_t i = 1; i < ends.size(); ++i) n += ends[i] > ends[i - 1] ? 1 : 0;
    return n;
  };
  EXPECT_GE(reached(64, 64), 30);
  EXPECT_LE(reached(64, 64), 50);
  EXPECT_GE(reached(512, 64), 60);
  EXPECT_EQ(reached(4096, 8), 8);
  EXPECT_EQ(reached(32768, 64), 64);
}

// The routings the tuner times a class under (tuning_group_routings): the representative one first; a sparse class
// (M <= 16 G) has kTuningRoutings draws, each a routing of M, all different, the same on every call; a dense class,
// and a class with one routing only (one group, no rows), has the representative one alone.
TEST(TuningRouting, SparseClassesAreTimedOverSeveralDrawsDenseOnesOverOne) {
  const std::vector<std::pair<int64_t, int64_t>> sparse = {{64, 64}, {512, 64}, {1024, 64}, {5, 256}, {16, 8}};
  for (const auto& [m, g] : sparse) {
    SCOPED_TRACE(testing::Message() << "M " << m << ", G " << g);
    const std::vector<std::vector<int32_t>> draws = tuning_group_routings(m, g);
    ASSERT_EQ(static_cast<int>(draws.size()), kTuningRoutings);
    EXPECT_EQ(draws.front(), tuning_group_ends(m, g));
    for (const std::vector<int32_t>& ends : draws) {
      ASSERT_EQ(static_cast<int64_t>(ends.size()), g);
      EXPECT_EQ(ends.back(), m);
      EXPECT_GE(ends.front(), 0);
      for (std::size_t i = 1; i < ends.size(); ++i) EXPECT_LE(ends[i - 1], ends[i]);
    }
    for (std::size_t a = 0; a < draws.size(); ++a)
      for (std::size_t b = a + 1; b < draws.size(); ++b) EXPECT_NE(draws[a], draws[b]) << "draws " << a << ", " << b;
    EXPECT_EQ(draws, tuning_group_routings(m, g));
  }
  for (const auto& [m, g] : std::vector<std::pair<int64_t, int64_t>>{{1025, 64}, {4096, 8}, {32768, 64}, {1, 1},
                                                                      {16, 1}, {0, 4}}) {
    SCOPED_TRACE(testing::Message() << "M " << m << ", G " << g);
    const std::vector<std::vector<int32_t>> draws = tuning_group_routings(m, g);
    ASSERT_EQ(draws.size(), 1u);
    EXPECT_EQ(draws.front(), tuning_group_ends(m, g));
  }
}

}  // namespace
}  // namespace tmagemm
