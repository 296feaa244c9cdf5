// tma_compat.cpp — can the tensor-memory accelerator (cuTensorMapEncodeTiled) address a tensor? The rules:
// 16-byte aligned base; exactly one unit stride among the two matrix dims; the other stride (and the batch
// stride) a multiple of 16 bytes and below 2^40; every extent in [1, 2^32]. Reasons name the rule and numbers.
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "problem/problem.hpp"

namespace tmagemm {

namespace {

constexpr int64_t kMaxExtent = int64_t{1} << 32;       // NOTE: TMA globalDim[i] <= 2^32
constexpr int64_t kMaxStrideBytes = int64_t{1} << 40;  // NOTE: TMA globalStrides[i] < 2^40, multiple of 16

// A matrix (optionally with a batch dim) as TMA sees it. batch < 0: extent unknown (an Operand).
struct Layout {
  const void* data;
  DType dtype;
  int64_t batch;
  int64_t rows, cols;
  int64_t batch_stride, row_stride, col_stride;
  bool has_batch;
};

TmaCompat fail(std::string reason) { return TmaCompat{false, std::move(reason)}; }

// Checks a stride (elements) of a dimension with extent > 1: non-zero, multiple of 16 bytes, below 2^40 bytes.
bool check_stride(const char* what, int64_t stride, DType dtype, TmaCompat& result) {
  const int64_t size = static_cast<int64_t>(itemsize(dtype));
  if (stride == 0) {
    result = fail(fmt::format("{} stride 0 (broadcast) is not addressable by TMA", what));
    return false;
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(stride, size, &bytes) || bytes >= kMaxStrideBytes) {
    result = fail(fmt::format("{} stride {} elements x {} bytes is not below 2^40 bytes", what, stride, size));
    return false;
  }
  if (bytes % 16 != 0) {
    result = fail(fmt::format("{} stride {} elements x {} bytes = {} bytes is not a multiple of 16", what, stride,
                              size, bytes));
    return false;
  }
  return true;
}

TmaCompat check(const Layout& l) {
  if (l.rows == 0 || l.cols == 0 || l.batch == 0) return fail("not TMA: empty");
  if (l.rows < 0 || l.cols < 0 || l.row_stride < 0 || l.col_stride < 0 || l.batch_stride < 0)
    return fail("negative size or stride");
  if (l.rows > kMaxExtent) return fail(fmt::format("{} rows exceed the TMA extent limit 2^32", l.rows));
  if (l.cols > kMaxExtent) return fail(fmt::format("{} cols exceed the TMA extent limit 2^32", l.cols));
  if (l.batch > kMaxExtent) return fail(fmt::format("batch {} exceeds the TMA extent limit 2^32", l.batch));
  const auto address = reinterpret_cast<uintptr_t>(l.data);
  if (address % 16 != 0) return fail(fmt::format("base address {:#x} is not 16-byte aligned", address));

  // A dim of extent 1 may have any stride (validation canonicalises it).
  const bool col_unit = l.col_stride == 1 || l.cols == 1;
  const bool row_unit = l.row_stride == 1 || l.rows == 1;
  if (!col_unit && !row_unit)
    return fail(fmt::format("no unit stride: row stride {}, col stride {} (TMA needs one contiguous dimension)",
                            l.row_stride, l.col_stride));
  if (l.row_stride == 1 && l.col_stride == 1 && l.rows > 1 && l.cols > 1)
    return fail("row and col strides are both 1: exactly one matrix dimension may have unit stride");
  // The contiguous (inner) dim: the one with stride 1 and extent > 1, else whichever is free.
  bool inner_is_col = true;
  if (l.col_stride == 1 && l.cols > 1)
    inner_is_col = true;
  else if (l.row_stride == 1 && l.rows > 1)
    inner_is_col = false;
  else
    inner_is_col = col_unit;
  TmaCompat result;
  if (inner_is_col) {
    if (l.rows > 1 && !check_stride("row", l.row_stride, l.dtype, result)) return result;
  } else {
    if (l.cols > 1 && !check_stride("col", l.col_stride, l.dtype, result)) return result;
  }
  // Batch stride 0 broadcasts (the kernel does not advance); otherwise it is a TMA dimension too.
  if (l.has_batch && l.batch != 1 && l.batch_stride != 0 &&
      !check_stride("batch", l.batch_stride, l.dtype, result))
    return result;
  return result;
}

}  // namespace

TmaCompat can_use_tma(const TensorView& view) {
  if (view.rank != 2 && view.rank != 3) return fail(fmt::format("rank {} (TMA operands have rank 2 or 3)", view.rank));
  const int r = view.rank - 2, c = view.rank - 1;
  Layout l{view.data,
           view.dtype,
           view.rank == 3 ? view.sizes[0] : 1,
           view.sizes[r],
           view.sizes[c],
           view.rank == 3 ? view.strides[0] : 0,
           view.strides[r],
           view.strides[c],
           view.rank == 3};
  return check(l);
}

TmaCompat can_use_tma(const Operand& operand) {
  Layout l{operand.data,       operand.dtype,      -1, operand.rows, operand.cols, operand.batch_stride,
           operand.row_stride, operand.col_stride, true};
  return check(l);
}

int row_alignment_bytes(const Operand& operand) noexcept {
  const auto es = static_cast<uint64_t>(itemsize(operand.dtype));
  uint64_t x = static_cast<uint64_t>(reinterpret_cast<std::uintptr_t>(operand.data)) |
               static_cast<uint64_t>(operand.ld()) * es | static_cast<uint64_t>(operand.batch_stride) * es | 128u;
  return static_cast<int>(x & (~x + 1));  // lowest set bit
}

}  // namespace tmagemm
