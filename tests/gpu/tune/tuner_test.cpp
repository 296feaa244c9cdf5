// tuner_test.cpp (GPU) — benchmark-mode tuning picks a correct choice; a deliberately broken choice (test-only)
// is dropped by the quick check; explain lists the reasons of inapplicable choices.
#include <gtest/gtest.h>

#include <filesystem>

#include "gpu/gpu_util.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

// Writes a constant pattern instead of computing: fast, and wrong.
class BrokenChoice final : public choices::Choice {
 public:
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "test_broken"; }
  std::string can_implement(const GemmProblem&, const runtime::DeviceInfo&) const override { return {}; }
  void precompile(const GemmProblem&, int) const override {}
  void launch(const GemmProblem& p, cudaStream_t stream, const Options&, void*) const override {
    const std::size_t bytes =
        static_cast<std::size_t>((p.out.rows - 1) * p.out.row_stride + (p.out.cols - 1) * p.out.col_stride + 1) *
        itemsize(p.out.dtype);
    cuda_ok(cudaMemsetAsync(const_cast<void*>(p.out.data), 0x3c, bytes, stream), "broken choice");
  }

 private:
  std::string name_ = "test_broken_memset";
};

class Tuner : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
  }
  void TearDown() override {
    tune::set_extra_choices_for_testing({});
    tune::forget_in_memory();
  }
  std::mt19937 rng{99};
};

TEST_F(Tuner, BenchmarkModePicksACorrectChoice) {
  const int64_t M = 1000, N = 776, K = 264;  // a shape no other test tunes
  Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng, true);
  Matrix b = make_matrix(DType::bf16, K, N, true, 8, rng, true);
  Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng, false);
  Options o = Options::defaults_only();
  o.tuning = Tuning::benchmark;
  mm(a.view(), b.view(), out.view(), o);
  cuda_ok(cudaDeviceSynchronize(), "mm");
  const Check chk = compare(out, reference_gemm(a, b, M, N, K));
  EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
  EXPECT_EQ(chk.padding_touched, 0);
  EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
  const Explanation e = explain_mm(a.view(), b.view(), out.view(), o);
  int selected = 0, timed = 0;
  for (const auto& c : e.choices) {
    selected += c.selected;
    timed += c.tuned_ms.has_value();
  }
  EXPECT_EQ(selected, 1) << e.to_string();
  EXPECT_GT(timed, 1) << e.to_string();
}

TEST_F(Tuner, BrokenChoiceIsDropped) {
  tune::set_extra_choices_for_testing({std::make_shared<BrokenChoice>()});
  const int64_t M = 520, N = 392, K = 136;
  Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng, true);
  Matrix b = make_matrix(DType::bf16, K, N, false, 8, rng, true);
  Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng, false);
  Options o = Options::defaults_only();
  o.tuning = Tuning::benchmark;
  o.choice_regex = "test_broken|persistent_tma_128x128x64_s6_c2_g8$";
  const GemmProblem p = make_mm_problem(a.view(), b.view(), out.view());
  const auto chosen = tune::choose(p, o);
  EXPECT_EQ(chosen->name(), "persistent_tma_128x128x64_s6_c2_g8");
  mm(a.view(), b.view(), out.view(), o);
  cuda_ok(cudaDeviceSynchronize(), "mm");
  const Check chk = compare(out, reference_gemm(a, b, M, N, K));
  EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
}

TEST_F(Tuner, ExplainSaysWhyTmaIsNotApplicable) {
  Matrix a = make_matrix(DType::f16, 21, 11, false, 1, rng, true);  // row stride 22 bytes
  Matrix b = make_matrix(DType::f16, 11, 31, false, 8, rng, true);
  Matrix out = make_matrix(DType::f16, 21, 31, false, 8, rng, false);
  const Explanation e = explain_mm(a.view(), b.view(), out.view(), Options::defaults_only());
  bool tma_reason = false;
  for (const auto& c : e.choices)
    if (c.backend == "persistent_tma") {
      EXPECT_FALSE(c.applicable);
      tma_reason = tma_reason || c.reason.find("a: ") != std::string::npos;
    }
  EXPECT_TRUE(tma_reason) << e.to_string();
}

}  // namespace
}  // namespace tmagemm::testing
