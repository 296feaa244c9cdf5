// dispatch_test.cpp (GPU) — mm() end to end on inputs the TMA template cannot take: the tuner must find a
// choice (never no_valid_choice while the fallback is on), the result must be right, and empty problems
// (M, N or K = 0) must behave with only the fallback enabled.
#include <gtest/gtest.h>

#include <random>

#include "gpu/gpu_util.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

class Dispatch : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
  }
  void TearDown() override { tune::forget_in_memory(); }
  std::mt19937 rng{515};

  static Options fallback_only() {
    Options o = Options::defaults_only();
    o.persistent_tma = false;
    o.cublaslt = false;
    o.skinny = false;
    o.pad_tma = false;
    return o;
  }

  void run_and_check(DType in, DType out_t, int64_t M, int64_t N, int64_t K, bool a_col, bool b_col,
                     const Options& o, const char* expect_backend) {
    SCOPED_TRACE(fmt::format("{}x{}x{} a_col={} b_col={}", M, N, K, a_col, b_col));
    Matrix a = make_matrix(in, M, K, a_col, 1, rng, true);
    Matrix b = make_matrix(in, K, N, b_col, 1, rng, true);
    Matrix out = make_matrix(out_t, M, N, false, 1, rng, false);
    mm(a.view(), b.view(), out.view(), o);
    cuda_ok(cudaDeviceSynchronize(), "mm");
    const Check chk = compare(out, reference_gemm(a, b, M, N, K));
    EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
    EXPECT_EQ(chk.padding_touched, 0);
    EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
    if (expect_backend) {
      const Explanation e = explain_mm(a.view(), b.view(), out.view(), o);
      int selected = 0;
      for (const auto& c : e.choices)
        if (c.selected) {
          ++selected;
          EXPECT_EQ(c.backend, expect_backend) << e.to_string();
        }
      EXPECT_EQ(selected, 1) << e.to_string();
    }
  }
};

TEST_F(Dispatch, Case21x11x31F16EveryLayoutWithEveryBackend) {
  Options o = Options::defaults_only();
  o.tuning = Tuning::benchmark;
  for (int layout = 0; layout < 4; ++layout) run_and_check(DType::f16, DType::f16, 21, 31, 11, layout & 1, layout & 2, o, nullptr);
}

TEST_F(Dispatch, Case21x11x31F16EveryLayoutFallbackOnly) {
  for (Tuning t : {Tuning::benchmark, Tuning::heuristic}) {
    Options o = fallback_only();
    o.tuning = t;
    for (int layout = 0; layout < 4; ++layout)
      run_and_check(DType::f16, DType::f16, 21, 31, 11, layout & 1, layout & 2, o, "fallback");
    tune::forget_in_memory();
  }
}

TEST_F(Dispatch, OddShapeF32OutputFallbackOnly) {
  run_and_check(DType::bf16, DType::f32, 301, 257, 129, false, true, fallback_only(), "fallback");
}

TEST_F(Dispatch, EmptyProblemsFallbackOnly) {
  const Options o = fallback_only();
  // K = 0: out = 0 everywhere inside the view, padding untouched.
  {
    Matrix a = make_matrix(DType::bf16, 13, 0, false, 1, rng, true);
    Matrix b = make_matrix(DType::bf16, 0, 7, false, 1, rng, true);
    Matrix out = make_matrix(DType::bf16, 13, 7, false, 8, rng, false);
    mm(a.view(), b.view(), out.view(), o);
    cuda_ok(cudaDeviceSynchronize(), "mm K=0");
    const Check chk = compare(out, std::vector<float>(13 * 7, 0.0f));
    EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
    EXPECT_EQ(chk.padding_touched, 0);
    EXPECT_EQ(chk.rel_err, 0.0) << chk.first_bad;
  }
  // M = 0 and N = 0: nothing to do, nothing written.
  for (auto [M, N] : {std::pair<int64_t, int64_t>{0, 9}, {9, 0}}) {
    Matrix a = make_matrix(DType::f16, M, 5, false, 1, rng, true);
    Matrix b = make_matrix(DType::f16, 5, N, false, 1, rng, true);
    Matrix out = make_matrix(DType::f16, M, N, false, 8, rng, false);
    mm(a.view(), b.view(), out.view(), o);
    cuda_ok(cudaDeviceSynchronize(), "mm empty");
    const Check chk = compare(out, {});
    EXPECT_EQ(chk.padding_touched, 0);
  }
}

}  // namespace
}  // namespace tmagemm::testing
