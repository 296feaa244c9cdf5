// tma_compat_test.cpp — CPU tests of can_use_tma: base alignment, one unit stride, 16-byte strides below 2^40,
// batch strides (0 = broadcast), extents, and that each refusal's reason names the rule and the numbers.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "problem/problem.hpp"

namespace tmagemm {
namespace {

void* at(uintptr_t address) { return reinterpret_cast<void*>(address); }
constexpr uintptr_t kBase = 0x7f0000000000;  // 16-byte aligned

#define EXPECT_TMA_OK(x)                           \
  do {                                             \
    const TmaCompat r_ = can_use_tma(x);           \
    EXPECT_TRUE(r_.ok) << r_.reason;               \
    EXPECT_TRUE(r_.reason.empty()) << r_.reason;   \
  } while (0)

#define EXPECT_TMA_FAIL(x, substring)                                                      \
  do {                                                                                     \
    const TmaCompat r_ = can_use_tma(x);                                                   \
    EXPECT_FALSE(r_.ok);                                                                   \
    EXPECT_NE(r_.reason.find(substring), std::string::npos)                                \
        << "reason: " << r_.reason << "\nexpected to contain: " << (substring);            \
  } while (0)

TEST(TmaCompatView, ContiguousAligned) {
  EXPECT_TMA_OK(TensorView::contiguous(at(kBase), DType::bf16, {64, 88}));
  EXPECT_TMA_OK(TensorView::contiguous(at(kBase + 16), DType::f32, {7, 4}));
  EXPECT_TMA_OK(TensorView::contiguous(at(kBase), DType::e4m3, {5, 16}));
}

TEST(TmaCompatView, MisalignedBase) {
  EXPECT_TMA_FAIL(TensorView::contiguous(at(kBase + 2), DType::bf16, {64, 88}),
                  "base address 0x7f0000000002 is not 16-byte aligned");
  EXPECT_TMA_FAIL(TensorView::contiguous(at(kBase + 8), DType::bf16, {64, 88}), "not 16-byte aligned");
}

TEST(TmaCompatView, LeadingDimension88Versus90) {
  EXPECT_TMA_OK(TensorView::strided(at(kBase), DType::bf16, {64, 80}, {88, 1}));
  EXPECT_TMA_FAIL(TensorView::strided(at(kBase), DType::bf16, {64, 80}, {90, 1}),
                  "row stride 90 elements x 2 bytes = 180 bytes is not a multiple of 16");
}

TEST(TmaCompatView, LeadingDimensionPerDtype) {
  EXPECT_TMA_OK(TensorView::strided(at(kBase), DType::e4m3, {8, 8}, {16, 1}));
  EXPECT_TMA_FAIL(TensorView::strided(at(kBase), DType::e4m3, {8, 8}, {24, 1}),
                  "row stride 24 elements x 1 bytes = 24 bytes is not a multiple of 16");
  EXPECT_TMA_OK(TensorView::strided(at(kBase), DType::f32, {8, 3}, {4, 1}));
  EXPECT_TMA_FAIL(TensorView::strided(at(kBase), DType::f32, {8, 3}, {6, 1}), "= 24 bytes is not a multiple of 16");
}

TEST(TmaCompatView, TransposedViews) {
  // (N,K) row-major transposed: a (K,N) column-major view; the col stride is the leading dimension.
  EXPECT_TMA_OK(TensorView::contiguous(at(kBase), DType::bf16, {48, 88}).t());
  EXPECT_TMA_FAIL(TensorView::contiguous(at(kBase), DType::bf16, {48, 90}).t(),
                  "col stride 90 elements x 2 bytes = 180 bytes is not a multiple of 16");
}

TEST(TmaCompatView, NeedsOneUnitStride) {
  EXPECT_TMA_FAIL(TensorView::strided(at(kBase), DType::bf16, {8, 8}, {96, 2}), "no unit stride: row stride 96, col stride 2");
  EXPECT_TMA_FAIL(TensorView::strided(at(kBase), DType::bf16, {8, 8}, {1, 1}), "row and col strides are both 1");
}

TEST(TmaCompatView, ExtentOneDimensionHasAnyStride) {
  EXPECT_TMA_OK(TensorView::strided(at(kBase), DType::bf16, {1, 64}, {3, 1}));
  EXPECT_TMA_OK(TensorView::strided(at(kBase), DType::bf16, {64, 1}, {88, 7}));  // row stride 88: row-major
  EXPECT_TMA_OK(TensorView::strided(at(kBase), DType::bf16, {64, 1}, {1, 5}));   // col-major column
  EXPECT_TMA_OK(TensorView::strided(at(kBase), DType::bf16, {1, 1}, {5, 9}));
}

TEST(TmaCompatView, BroadcastMatrixDimension) {
  EXPECT_TMA_FAIL(TensorView::strided(at(kBase), DType::bf16, {64, 48}, {0, 1}), "row stride 0 (broadcast)");
}

TEST(TmaCompatView, StrideLimit) {
  const int64_t big = int64_t{1} << 39;  // x 2 bytes = 2^40
  EXPECT_TMA_FAIL(TensorView::strided(at(kBase), DType::bf16, {2, 8}, {big, 1}), "not below 2^40 bytes");
  EXPECT_TMA_OK(TensorView::strided(at(kBase), DType::bf16, {2, 8}, {big - 8, 1}));
}

TEST(TmaCompatView, ExtentLimit) {
  const int64_t too_many = (int64_t{1} << 32) + 1;
  EXPECT_TMA_FAIL(TensorView::strided(at(kBase), DType::bf16, {1, too_many}, {0, 1}),
                  "4294967297 cols exceed the TMA extent limit 2^32");
  EXPECT_TMA_OK(TensorView::strided(at(kBase), DType::bf16, {1, int64_t{1} << 32}, {0, 1}));
}

TEST(TmaCompatView, Empty) {
  EXPECT_TMA_FAIL(TensorView::contiguous(at(kBase), DType::bf16, {0, 64}), "not TMA: empty");
  EXPECT_TMA_FAIL(TensorView::contiguous(at(kBase), DType::bf16, {3, 64, 0}), "not TMA: empty");
  EXPECT_TMA_FAIL(TensorView::contiguous(at(kBase), DType::bf16, {0, 64, 64}), "not TMA: empty");
}

TEST(TmaCompatView, Rank3BatchStrides) {
  EXPECT_TMA_OK(TensorView::contiguous(at(kBase), DType::bf16, {4, 64, 88}));
  EXPECT_TMA_OK(TensorView::strided(at(kBase), DType::bf16, {4, 64, 88}, {0, 88, 1}));  // broadcast batch
  EXPECT_TMA_OK(TensorView::strided(at(kBase), DType::bf16, {1, 64, 88}, {3, 88, 1}));  // one batch: any stride
  EXPECT_TMA_FAIL(TensorView::strided(at(kBase), DType::bf16, {4, 7, 8}, {60, 8, 1}),
                  "batch stride 60 elements x 2 bytes = 120 bytes is not a multiple of 16");
}

TEST(TmaCompatView, BadRank) {
  TensorView v = TensorView::contiguous(at(kBase), DType::bf16, {8, 8});
  v.rank = 4;
  EXPECT_TMA_FAIL(v, "rank 4");
}

Operand operand(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, DType dtype = DType::bf16,
                uintptr_t address = kBase) {
  Operand o;
  o.data = at(address);
  o.dtype = dtype;
  o.rows = rows;
  o.cols = cols;
  o.row_stride = row_stride;
  o.col_stride = col_stride;
  return o;
}

TEST(TmaCompatOperand, RowAndColMajor) {
  EXPECT_TMA_OK(operand(64, 80, 88, 1));
  EXPECT_TMA_OK(operand(64, 80, 1, 64));
  EXPECT_TMA_FAIL(operand(64, 80, 11, 1), "row stride 11 elements x 2 bytes = 22 bytes is not a multiple of 16");
  EXPECT_TMA_FAIL(operand(64, 80, 1, 90), "col stride 90 elements x 2 bytes = 180 bytes");
}

TEST(TmaCompatOperand, CanonicalColumnVector) {
  // (100,1) as validation canonicalises it: col-major with ld = round16(100) = 104.
  EXPECT_TMA_OK(operand(100, 1, 1, 104));
  // bias vectors: row_vector (1,N) with row stride 0, col_vector (M,1) with col stride 0.
  EXPECT_TMA_OK(operand(1, 48, 0, 1));
  EXPECT_TMA_OK(operand(64, 1, 1, 0));
}

TEST(TmaCompatOperand, StridedAndMisaligned) {
  EXPECT_TMA_FAIL(operand(8, 8, 80, 2), "no unit stride");
  EXPECT_TMA_FAIL(operand(8, 8, 8, 1, DType::bf16, kBase + 4), "base address 0x7f0000000004 is not 16-byte aligned");
}

TEST(TmaCompatOperand, BatchStride) {
  Operand o = operand(64, 88, 88, 1);
  o.batch_stride = 0;
  EXPECT_TMA_OK(o);
  o.batch_stride = 64 * 88;
  EXPECT_TMA_OK(o);
  o.batch_stride = 3;
  EXPECT_TMA_FAIL(o, "batch stride 3 elements x 2 bytes = 6 bytes is not a multiple of 16");
}

TEST(TmaCompatOperand, Empty) { EXPECT_TMA_FAIL(operand(0, 8, 8, 1), "not TMA: empty"); }

}  // namespace
}  // namespace tmagemm

namespace tmagemm {
namespace {

Operand rows_of(std::uintptr_t base, int64_t ld, int64_t batch_stride = 0) {
  Operand o;
  o.data = reinterpret_cast<const void*>(base);
  o.dtype = DType::bf16;
  o.rows = 4;
  o.cols = 8;
  o.row_stride = ld;
  o.col_stride = 1;
  o.batch_stride = batch_stride;
  return o;
}

TEST(RowAlignment, LowestOfBasePitchAndBatchStrideCappedAt128) {
  EXPECT_EQ(row_alignment_bytes(rows_of(0x10000, 64)), 128);   // 128-byte rows
  EXPECT_EQ(row_alignment_bytes(rows_of(0x10000, 1008)), 32);  // 2016-byte rows
  EXPECT_EQ(row_alignment_bytes(rows_of(0x10000, 1000)), 16);  // 2000-byte rows
  EXPECT_EQ(row_alignment_bytes(rows_of(0x10002, 64)), 2);     // base one element off
  EXPECT_EQ(row_alignment_bytes(rows_of(0x10000, 64, 64 * 4 + 8)), 16);  // batch stride 528 bytes
}

}  // namespace
}  // namespace tmagemm
