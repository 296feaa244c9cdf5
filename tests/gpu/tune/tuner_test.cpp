// tuner_test.cpp (GPU) — benchmark-mode tuning picks a correct choice; the sustained final orders near-tied finalists
// of a problem larger than L2; a deliberately broken choice (test-only) is dropped by the quick check; explain lists
// the reasons of inapplicable choices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "gpu/gpu_util.hpp"
#include "runtime/device.hpp"
#include "tune/benchmark.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

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

// The sustained final (benchmark.hpp): on a compute-bound problem larger than L2 the near-tied finalists are timed alone
// back to back; their timings are then the best interleaved time scaled by their sustained times, the fastest of them
// first. Off (Options::sustained_tuning) or on a problem L2 holds, nothing is timed that way.
TEST_F(Tuner, SustainedFinalOrdersTheNearTiedFinalists) {
  const runtime::DeviceInfo& dev = runtime::device_info(0);
  auto tuned = [&](int64_t M, int64_t N, int64_t K, bool sustained) {
    Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng, true);
    Matrix b = make_matrix(DType::bf16, K, N, false, 8, rng, true);
    Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng, false);
    const GemmProblem p = make_mm_problem(a.view(), b.view(), out.view());
    Options o = Options::defaults_only();
    o.sustained_tuning = sustained;
    std::vector<choices::ChoicePtr> usable;  // three tiles within ~1 % of each other in interleaved rounds
    for (const auto& c : tune::enumerate(p, o))  // (the prune may set some aside: benchmark() times what it is given)
      if (c.choice->can_implement(p, dev).empty() &&
          (c.choice->name() == "persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore" ||
           c.choice->name() == "persistent_tma_256x128x64_s4_c2_g8_tmastore" ||
           c.choice->name() == "persistent_tma_128x128x64_s6_c2_g8_tmastore_pp"))
        usable.push_back(c.choice);
    EXPECT_EQ(usable.size(), 3u) << M << "x" << N << "x" << K;
    return std::pair{tune::benchmark(p, o, usable), tune::sustained_eligible(p, dev.l2_bytes)};
  };
  auto [t, eligible] = tuned(4096, 8192, 4096, true);  // 160 MB
  ASSERT_TRUE(eligible);
  ASSERT_GE(t.sustained_ms.size(), 2u);
  double fastest = INFINITY;
  for (const auto& [name, ms] : t.sustained_ms) {
    EXPECT_TRUE(std::isfinite(ms) && ms > 0) << name;
    fastest = std::min(fastest, ms);
  }
  for (const auto& [name, ms] : t.sustained_ms) {
    const auto it = std::find_if(t.timings.begin(), t.timings.end(), [&](const tune::Timing& x) { return x.choice == name; });
    ASSERT_NE(it, t.timings.end()) << name;
    EXPECT_NEAR(it->ms / t.timings.front().ms, ms / fastest, 1e-9) << name;
    if (ms == fastest) EXPECT_EQ(it, t.timings.begin()) << name;
  }
  EXPECT_EQ(t.winner->name(), t.timings.front().choice);
  EXPECT_TRUE(tuned(4096, 8192, 4096, false).first.sustained_ms.empty());
  auto [small, small_eligible] = tuned(1024, 1024, 1024, true);  // 6 MB: L2 holds it
  EXPECT_FALSE(small_eligible);
  EXPECT_TRUE(small.sustained_ms.empty());
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
