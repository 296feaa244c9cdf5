// fallback_test.cpp — the fallback template on inputs TMA cannot take: (21x11)@(11x31) f16 in every layout,
// bases offset by one element, leading dimensions that are not multiples of 8, views with no unit stride,
// K = 1, a 1..67 size sweep, f32 output, and strided outputs whose padding must stay untouched. Each test runs
// every fallback config directly through its Choice (tests/gpu/dispatch covers the way through mm()).
#include <gtest/gtest.h>

#include <random>

#include "choices/fallback.hpp"
#include "gpu/gpu_util.hpp"

namespace tmagemm::testing {
namespace {

// Runs every fallback config on the views (check_choices_on_views: values, NaNs, nothing outside `out` changed).
void check_all_configs(const TensorView& a, const TensorView& b, Matrix& out_storage, const TensorView& out) {
  const GemmProblem p = make_mm_problem(a, b, out);
  const auto choices = choices::fallback_backend().enumerate(p, runtime::device_info(0), Options::defaults_only());
  EXPECT_EQ(check_choices_on_views(choices, a, b, out_storage, out, true), static_cast<int>(choices.size()));
}

class Fallback : public ::testing::Test {
 protected:
  void SetUp() override { TMAGEMM_REQUIRE_GPU(); }
  std::mt19937 rng{2026};
  // Dense storage (rows x cols, row-major, exact ld) with random values or the NaN poison.
  Matrix storage(DType d, int64_t rows, int64_t cols, bool random) {
    return make_matrix(d, rows, cols, false, 1, rng, random);
  }
};

TEST_F(Fallback, Case21x11x31F16AllLayouts) {
  for (int layout = 0; layout < 4; ++layout) {
    const bool a_col = layout & 1, b_col = layout & 2;
    Matrix sa = storage(DType::f16, a_col ? 11 : 21, a_col ? 21 : 11, true);
    Matrix sb = storage(DType::f16, b_col ? 31 : 11, b_col ? 11 : 31, true);
    Matrix so = storage(DType::f16, 21, 31, false);
    const TensorView a = a_col ? view_of(sa, 0, 21, 11, 1, 21) : view_of(sa, 0, 21, 11, 11, 1);
    const TensorView b = b_col ? view_of(sb, 0, 11, 31, 1, 11) : view_of(sb, 0, 11, 31, 31, 1);
    check_all_configs(a, b, so, view_of(so, 0, 21, 31, 31, 1));
  }
}

TEST_F(Fallback, BasesOffsetByOneElementAndOddLeadingDimensions) {
  const int64_t M = 77, N = 45, K = 53;
  Matrix sa = storage(DType::bf16, M + 1, K + 3, true);
  Matrix sb = storage(DType::bf16, K + 1, N + 5, true);
  Matrix so = storage(DType::bf16, M + 1, N + 7, false);
  check_all_configs(view_of(sa, 1, M, K, K + 3, 1), view_of(sb, 1, K, N, N + 5, 1), so,
                    view_of(so, 1, M, N, N + 7, 1));
}

TEST_F(Fallback, NoUnitStrideViews) {
  // Every other column of a bigger matrix, and a transposed slice: neither operand has a unit stride.
  const int64_t M = 40, N = 36, K = 29;
  Matrix sa = storage(DType::bf16, M, 2 * K + 1, true);
  Matrix sb = storage(DType::bf16, 2 * N, 3 * K, true);
  Matrix so = storage(DType::f32, 2 * M, 2 * N, false);
  const TensorView a = view_of(sa, 1, M, K, 2 * K + 1, 2);
  const TensorView b = view_of(sb, 0, K, N, 3, 2 * 3 * K);  // (k, n) at 3k + 6K n
  check_all_configs(a, b, so, view_of(so, 0, M, N, 2 * 2 * N, 2));
}

TEST_F(Fallback, KOneAndOutputTypes) {
  for (DType out_t : {DType::bf16, DType::f16, DType::f32}) {
    const DType in = out_t == DType::f16 ? DType::f16 : DType::bf16;
    Matrix sa = storage(in, 33, 1, true);
    Matrix sb = storage(in, 1, 65, true);
    Matrix so = storage(out_t, 33, 67, false);
    check_all_configs(view_of(sa, 0, 33, 1, 1, 1), view_of(sb, 0, 1, 65, 65, 1), so, view_of(so, 0, 33, 65, 67, 1));
  }
}

TEST_F(Fallback, SizeSweep1To67) {
  for (int64_t s = 1; s <= 67; ++s) {
    const int64_t M = s, N = 68 - s, K = s % 13 + 1;
    Matrix sa = storage(DType::bf16, K, M, true);  // A column-major (M contiguous)
    Matrix sb = storage(DType::bf16, K, N, true);  // B row-major
    Matrix so = storage(DType::bf16, M, N + 1, false);
    check_all_configs(view_of(sa, 0, M, K, 1, M), view_of(sb, 0, K, N, N, 1), so, view_of(so, 0, M, N, N + 1, 1));
    if (HasFailure()) return;
  }
}

TEST_F(Fallback, LargerRaggedShapeAgainstReference) {
  const int64_t M = 1000, N = 997, K = 1023;  // odd leading dimensions everywhere
  Matrix sa = storage(DType::bf16, M, K, true);
  Matrix sb = storage(DType::bf16, N, K, true);  // B column-major (K contiguous), ld K
  Matrix so = storage(DType::bf16, M, N, false);
  check_all_configs(view_of(sa, 0, M, K, K, 1), view_of(sb, 0, K, N, 1, K), so, view_of(so, 0, M, N, N, 1));
}

}  // namespace
}  // namespace tmagemm::testing
