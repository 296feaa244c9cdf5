// carveout_test.cpp — Options::sm_carveout on a GPU: with 12 and 100 SMs carved out (and, for the fallback, all of
// them), no kernel of ours (persistent TMA, skinny, fallback: every launch through runtime::launch_kernel) runs a
// grid of more CTAs than the SMs left, under benchmark-mode tuning (every candidate timed) and the heuristic, and
// the result is still right. Problems that go through each backend, forced by choice_regex and unrestricted:
// 2048x2048x512 (persistent TMA), 16x4096x4096 and 16x14336x4096 (skinny; where no skinny choice fits, the call
// fails with each choice's carveout reason), an odd K that TMA refuses and a batch (fallback). cuBLASLt plans for
// its SM-count target and launches through its own library: this test does not see its grids.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpu/gpu_util.hpp"
#include "runtime/launch.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

// Records gridDimX * gridDimY * gridDimZ of every launch made through runtime::launch_kernel while it lives.
class GridRecorder {
 public:
  GridRecorder() {
    runtime::set_launch_observer_for_testing([this](const CUlaunchConfig& cfg) {
      std::lock_guard<std::mutex> lock(mutex_);
      grids_.push_back(int64_t{cfg.gridDimX} * cfg.gridDimY * cfg.gridDimZ);
    });
  }
  ~GridRecorder() { runtime::set_launch_observer_for_testing({}); }
  GridRecorder(const GridRecorder&) = delete;
  GridRecorder& operator=(const GridRecorder&) = delete;
  std::vector<int64_t> grids() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return grids_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<int64_t> grids_;
};

struct Case {
  int64_t m, n, k;
  int64_t batch = 1;
  bool b_col = false;
  int64_t ld_multiple = 8;  // 1 keeps an odd K an odd leading dimension of A (TMA refuses it)
};

class Carveout : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
    db_.emplace();
  }
  void TearDown() override {
    tune::forget_in_memory();
    db_.reset();
  }

  // Runs `c` with `carveout` SMs carved out, in both tuning modes, restricted to `regex` (empty: every backend):
  // every recorded grid fits in the SMs left, the result matches the reference, and `expect_ours` (the regex names
  // one of our backends) means at least one launch was seen. Where no choice is left, mm fails with no_valid_choice
  // and the reasons name the carveout.
  void run(const Case& c, int carveout, const std::string& regex, bool expect_ours) {
    const int sms = runtime::device_info(0).sm_count;
    const int64_t left = std::max(1, sms - carveout);
    const bool batched = c.batch > 1;
    Matrix a = make_matrix(DType::bf16, c.m, c.k, false, c.ld_multiple, rng_, true, c.batch, batched);
    Matrix b = make_matrix(DType::bf16, c.k, c.n, c.b_col, c.ld_multiple, rng_, true, c.batch, batched);
    const auto ref = reference_gemm(a, b, c.m, c.n, c.k, c.batch);
    for (Tuning tuning : {Tuning::benchmark, Tuning::heuristic}) {
      SCOPED_TRACE(fmt::format("{}x{}x{} batch {}, sm_carveout {} of {} SMs, regex '{}', {}", c.m, c.n, c.k, c.batch,
                               carveout, sms, regex, tuning == Tuning::benchmark ? "benchmark" : "heuristic"));
      Matrix out = make_matrix(DType::bf16, c.m, c.n, false, 8, rng_, false, c.batch, batched);
      Options o = Options::defaults_only();
      o.tuning = tuning;
      o.sm_carveout = carveout;
      o.choice_regex = regex;
      const GemmProblem p = batched ? make_bmm_problem(a.view(), b.view(), out.view())
                                    : make_mm_problem(a.view(), b.view(), out.view());
      bool usable = false;
      for (const auto& cand : tune::enumerate(p, o)) usable = usable || cand.reason.empty();
      GridRecorder recorder;
      if (!usable) {
        try {
          mm_or_bmm(a, b, out, o, batched);
          ADD_FAILURE() << "no choice applies, yet the call did not fail";
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ErrorCode::no_valid_choice) << e.what();
          EXPECT_NE(std::string(e.what()).find(fmt::format("SMs left by sm_carveout = {}", carveout)),
                    std::string::npos)
              << e.what();
        }
        EXPECT_TRUE(recorder.grids().empty());
        continue;
      }
      mm_or_bmm(a, b, out, o, batched);
      cuda_ok(cudaDeviceSynchronize(), "mm");
      const std::vector<int64_t> grids = recorder.grids();
      for (int64_t g : grids) EXPECT_LE(g, left) << "a grid of " << g << " CTAs";
      const auto chosen = tune::choose(p, o);  // the memoised pick of the call above
      if (expect_ours || std::string(chosen->backend()) != "cublaslt")
        EXPECT_FALSE(grids.empty()) << chosen->name() << " launched nothing through runtime::launch_kernel";
      const Check chk = compare(out, ref, c.batch);
      EXPECT_EQ(chk.nan_count, 0) << chosen->name() << ", first bad: " << chk.first_bad;
      EXPECT_EQ(chk.padding_touched, 0) << chosen->name();
      EXPECT_LE(chk.rel_err, 1e-2) << chosen->name() << ", first bad: " << chk.first_bad;
      if (HasFailure()) return;
    }
  }

  static void mm_or_bmm(const Matrix& a, const Matrix& b, const Matrix& out, const Options& o, bool batched) {
    if (batched)
      bmm(a.view(), b.view(), out.view(), o);
    else
      mm(a.view(), b.view(), out.view(), o);
  }

  std::mt19937 rng_{1212};
  std::optional<FreshTuningDb> db_;
};

TEST_F(Carveout, PersistentTma) {
  for (int carveout : {12, 100}) {
    run(Case{2048, 2048, 512}, carveout, "^persistent_tma", true);
    run(Case{2048, 2048, 512, 1, true}, carveout, "", false);
  }
}

TEST_F(Carveout, Skinny) {
  // 16 x 4096: narrow tiles split 2 are 128 CTAs (refused at 12 carved out); 14336: 224 narrow tiles, 56 wide ones
  // (no skinny choice fits 32 SMs).
  for (int carveout : {12, 100})
    for (int64_t n : {4096, 14336}) {
      run(Case{16, n, 4096}, carveout, "^skinny", true);
      run(Case{16, n, 4096}, carveout, "", false);
    }
}

TEST_F(Carveout, Fallback) {
  // K = 263 with A's leading dimension 263: TMA refuses A. 64x64 tiles: 16 x 13 = 208, more than the SMs left.
  for (int carveout : {12, 100}) {
    run(Case{1000, 776, 263, 1, false, 1}, carveout, "^fallback", true);
    run(Case{1000, 776, 263, 1, false, 1}, carveout, "", false);
    run(Case{300, 200, 75, 3, true, 1}, carveout, "^fallback", true);  // (batch, tile) items over three matrices
  }
}

TEST_F(Carveout, FallbackOnOneSm) {
  // Every SM carved out: the fallback still runs, one CTA looping over every tile of every matrix.
  const int sms = runtime::device_info(0).sm_count;
  run(Case{300, 200, 75, 3, true, 1}, sms, "^fallback", true);
  run(Case{257, 129, 33, 1, false, 1}, sms + 5, "^fallback_64x64", true);
}

}  // namespace
}  // namespace tmagemm::testing
