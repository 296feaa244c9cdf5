// fault_test.cpp (GPU) — fault injection: a choice that fails to compile, one that fails to launch (in the tuner and
// when a remembered or heuristic choice runs), an unwritable cache directory, a tuning database held locked by
// another process, and device memory running out (for a choice at its launch, for a tuning's candidate, for the
// tuning itself, for every choice). Each call still returns the right result, or throws out_of_memory with out left
// alone, and each fault is reported on stderr once.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "cpu/test_support.hpp"
#include "gpu/gpu_util.hpp"
#include "jit/jit.hpp"
#include "runtime/fault.hpp"
#include "tmagemm/tuning.hpp"
#include "tune/tuner.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm::testing {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
std::size_t lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

class Faults : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
    dir_ = std::filesystem::temp_directory_path() / fmt::format("tmagemm-faults-{}", ::getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    runtime::set_faults_for_testing({});
    tune::set_database_retry_seconds_for_testing(30);
    tune::forget_in_memory();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // mm on fresh random inputs; checks the result against the reference; returns what went to stderr.
  std::string run_checked(int64_t M, int64_t N, int64_t K, const Options& o) {
    Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng_, true);
    Matrix b = make_matrix(DType::bf16, K, N, false, 8, rng_, true);
    Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng_, false);
    ::testing::internal::CaptureStderr();
    try {
      mm(a.view(), b.view(), out.view(), o);
      cuda_ok(cudaDeviceSynchronize(), "mm");
    } catch (...) {
      std::fprintf(stderr, "%s", ::testing::internal::GetCapturedStderr().c_str());
      throw;
    }
    const std::string log = ::testing::internal::GetCapturedStderr();
    const Check chk = compare(out, reference_gemm(a, b, M, N, K));
    EXPECT_EQ(chk.nan_count, 0) << chk.first_bad << "\n" << log;
    EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad << "\n" << log;
    return log;
  }

  // A call that must fail: mm on fresh inputs into a poisoned out, the choices that could run it counted first
  // (explain). Gives the error, what went to stderr, the out-of-memory retries it counted, and whether out was left
  // as it was.
  struct FailedCall {
    std::optional<Error> error;
    std::string log;
    std::size_t applicable = 0;
    uint64_t out_of_memory_retries = 0;
    bool out_untouched = false;
  };
  FailedCall run_failing(int64_t M, int64_t N, int64_t K, const Options& o) {
    Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng_, true);
    Matrix b = make_matrix(DType::bf16, K, N, false, 8, rng_, true);
    Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng_, true);
    const std::vector<uint8_t> before = out.host;
    FailedCall r;
    for (const auto& c : explain_mm(a.view(), b.view(), out.view(), o).choices) r.applicable += c.applicable;
    const TuningStats s0 = tuning_stats();
    ::testing::internal::CaptureStderr();
    try {
      mm(a.view(), b.view(), out.view(), o);
    } catch (const Error& e) {
      r.error.emplace(e);
    }
    r.log = ::testing::internal::GetCapturedStderr();
    r.out_of_memory_retries = tuning_stats().out_of_memory_retries - s0.out_of_memory_retries;
    cuda_ok(cudaDeviceSynchronize(), "mm");
    out.download();
    r.out_untouched = out.host == before;
    return r;
  }

  std::filesystem::path dir_;
  std::mt19937 rng_{2718};
};

constexpr const char* kTma = "persistent_tma_128x128x64_s6_c2_g8";

TEST_F(Faults, ChoiceThatFailsToCompileIsSkipped) {
  FreshTuningDb db;  // the problem must be tuned here, not found in the database of an earlier run
  runtime::set_faults_for_testing({std::string("^") + kTma + "_", ""});
  Options o = Options::defaults_only();
  o.choice_regex = std::string(kTma) + "$|cublaslt_algo0$";
  const std::string log = run_checked(328, 264, 136, o);
  EXPECT_EQ(count(log, std::string("dropped ") + kTma + " (precompile failed)"), 1u) << log;
  EXPECT_EQ(count(log, "injected compile failure"), 1u) << log;
  EXPECT_EQ(lines(log), 1u) << log;
  // Later calls run the winner without a word.
  EXPECT_EQ(run_checked(328, 264, 136, o), "");
}

TEST_F(Faults, ChoiceThatFailsToLaunchIsSkippedWhenTuning) {
  FreshTuningDb db;
  runtime::set_faults_for_testing({"", std::string(kTma) + "$"});
  Options o = Options::defaults_only();
  o.choice_regex = std::string(kTma) + "$|cublaslt_algo0$";
  const std::string log = run_checked(336, 264, 136, o);
  EXPECT_EQ(count(log, std::string("dropped ") + kTma + " (failed to run)"), 1u) << log;
  EXPECT_EQ(count(log, "injected launch failure"), 1u) << log;
  EXPECT_EQ(lines(log), 1u) << log;
}

TEST_F(Faults, HeuristicChoiceThatFailsToLaunchIsReplaced) {
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  o.skinny = false;
  // Which choice the heuristic takes for this problem, then make exactly that one fail.
  Matrix a = make_matrix(DType::bf16, 344, 136, false, 8, rng_, true);
  Matrix b = make_matrix(DType::bf16, 136, 264, false, 8, rng_, true);
  Matrix out = make_matrix(DType::bf16, 344, 264, false, 8, rng_, false);
  std::string picked;
  for (const auto& c : explain_mm(a.view(), b.view(), out.view(), o).choices)
    if (c.selected) picked = c.name;
  ASSERT_FALSE(picked.empty());
  runtime::set_faults_for_testing({"", "^" + picked + "$"});
  const std::string log = run_checked(344, 264, 136, o);
  EXPECT_EQ(count(log, picked + " failed for"), 1u) << log;
  EXPECT_EQ(lines(log), 1u) << log;
  EXPECT_EQ(run_checked(344, 264, 136, o), "");  // the replacement is remembered; no new report
}

TEST_F(Faults, UnwritableCacheDirectory) {
  // A cache directory below a regular file cannot be created, not even by root.
  const std::filesystem::path blocker = dir_ / "not-a-directory";
  std::ofstream(blocker) << "x";
  test_support::EnvGuard env("TMAGEMM_CACHE_DIR", (blocker / "cache").string());
  Options o = Options::defaults_only();
  o.choice_regex = "cublaslt_algo[01]$";
  const std::string first = run_checked(352, 264, 136, o);
  EXPECT_EQ(count(first, "unavailable"), 1u) << first;
  EXPECT_EQ(lines(first), 1u) << first;
  EXPECT_EQ(run_checked(360, 264, 136, o), "");  // bypassed: not tried again (nor reported) for a while
}

TEST_F(Faults, TuningDatabaseLockedByAnotherProcess) {
  // Own cache dir with a database in it; only cuBLASLt choices (no kernel compiles into the fresh cache).
  test_support::EnvGuard env("TMAGEMM_CACHE_DIR", (dir_ / "cache").string());
  Options o = Options::defaults_only();
  o.choice_regex = "cublaslt_algo[01]$";
  o.m_buckets = false;  // each M below its own problem: each call reaches the database
  EXPECT_EQ(run_checked(368, 264, 136, o), "");  // creates the database
  const std::string path = tune::TuningDb::default_path();

  int ready[2], release[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // holds the write lock until the parent closes `release`
    ::close(ready[0]);
    ::close(release[1]);  // else its own copy of the write end keeps the read below from ever seeing EOF
    sqlite3* db = nullptr;
    int code = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
                       sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) == SQLITE_OK
                   ? 0
                   : 1;
    char c = static_cast<char>(code);
    if (::write(ready[1], &c, 1) != 1) code = 1;
    while (::read(release[0], &c, 1) > 0) {
    }
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    ::_exit(code);
  }
  ::close(ready[1]);
  ::close(release[0]);
  char c = 1;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 0) << "the child could not lock the database";

  const std::string locked = run_checked(376, 264, 136, o);
  EXPECT_EQ(count(locked, "unavailable"), 1u) << locked;
  EXPECT_EQ(lines(locked), 1u) << locked;
  EXPECT_EQ(run_checked(384, 264, 136, o), "");  // bypassed meanwhile: no wait, no new report

  ::close(release[1]);  // the other process lets go
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  tune::set_database_retry_seconds_for_testing(0);  // "later" is now
  const int64_t M = 392;
  EXPECT_EQ(run_checked(M, 264, 136, o), "");
  Matrix a = make_matrix(DType::bf16, M, 136, false, 8, rng_, true);
  Matrix b = make_matrix(DType::bf16, 136, 264, false, 8, rng_, true);
  Matrix out = make_matrix(DType::bf16, M, 264, false, 8, rng_, false);
  const GemmProblem p = make_mm_problem(a.view(), b.view(), out.view());
  tune::TuningDb db(path);
  EXPECT_TRUE(db.get(tune::database_key(p, o, runtime::device_info(0))).has_value())
      << "the database was not used again after the lock was released";
}

// ---- device memory running out: a failure of the moment, not of the choice ------------------------------------

// The choice explain_mm selects for an M x N x K bf16 problem under `o`.
std::string selected_choice(int64_t M, int64_t N, int64_t K, const Options& o, std::mt19937& rng) {
  Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng, true);
  Matrix b = make_matrix(DType::bf16, K, N, false, 8, rng, true);
  Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng, false);
  for (const auto& c : explain_mm(a.view(), b.view(), out.view(), o).choices)
    if (c.selected) return c.name;
  return {};
}

// What the tuning database holds for an M x N x K bf16 problem under `o` (the key depends on shape and alignment).
std::optional<std::string> stored_winner(int64_t M, int64_t N, int64_t K, const Options& o, std::mt19937& rng) {
  Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng, true);
  Matrix b = make_matrix(DType::bf16, K, N, false, 8, rng, true);
  Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng, false);
  return tune::known(make_mm_problem(a.view(), b.view(), out.view()), o).winner;
}

TEST_F(Faults, ChoiceThatRunsOutOfMemoryStaysTheChoice) {
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  o.skinny = false;
  const std::string picked = selected_choice(400, 264, 136, o, rng_);
  ASSERT_FALSE(picked.empty());
  runtime::set_faults_for_testing({"", "", "^" + picked + "$"});
  const TuningStats s0 = tuning_stats();
  const std::string log = run_checked(400, 264, 136, o);  // another choice ran the call
  EXPECT_EQ(count(log, picked + " ran out of device memory"), 1u) << log;
  EXPECT_EQ(count(log, "injected out-of-memory failure"), 1u) << log;
  EXPECT_EQ(lines(log), 1u) << log;
  EXPECT_EQ(run_checked(400, 264, 136, o), "");  // the same outage: counted, not reported again
  EXPECT_EQ(tuning_stats().out_of_memory_retries - s0.out_of_memory_retries, 2u);
  // Memory is back: the choice was never given up (not marked failed, still selected), and runs without a word.
  runtime::set_faults_for_testing({});
  EXPECT_EQ(selected_choice(400, 264, 136, o, rng_), picked);
  const TuningStats s1 = tuning_stats();
  EXPECT_EQ(run_checked(400, 264, 136, o), "");
  EXPECT_EQ(tuning_stats().out_of_memory_retries, s1.out_of_memory_retries);
}

TEST_F(Faults, TuningWhoseCandidateRunsOutOfMemoryIsNotStored) {
  FreshTuningDb db;
  Options o = Options::defaults_only();
  o.choice_regex = std::string(kTma) + "$|cublaslt_algo0$";
  o.m_buckets = false;
  runtime::set_faults_for_testing({"", "", std::string(kTma) + "$"});
  const TuningStats s0 = tuning_stats();
  const std::string log = run_checked(416, 264, 136, o);
  EXPECT_EQ(count(log, std::string("dropped ") + kTma + " (failed to run)"), 1u) << log;
  EXPECT_EQ(count(log, "not stored in the tuning database"), 1u) << log;
  EXPECT_FALSE(stored_winner(416, 264, 136, o, rng_).has_value());
  const TuningStats s1 = tuning_stats();
  EXPECT_EQ(s1.tuned - s0.tuned, 1u);
  EXPECT_EQ(s1.tunings_out_of_memory - s0.tunings_out_of_memory, 1u);
  EXPECT_EQ(run_checked(416, 264, 136, o), "");  // this process keeps the incomplete tuning's winner
  EXPECT_EQ(tuning_stats().tuned, s1.tuned);
  // A later process (the memory map forgotten) tunes the problem whole and stores it.
  runtime::set_faults_for_testing({});
  tune::forget_in_memory();
  EXPECT_EQ(run_checked(416, 264, 136, o), "");
  EXPECT_EQ(tuning_stats().tuned - s1.tuned, 1u);
  EXPECT_TRUE(stored_winner(416, 264, 136, o, rng_).has_value());
}

TEST_F(Faults, TuningThatRunsOutOfMemoryRunsTheHeuristicChoiceUntimed) {
  FreshTuningDb db;
  Options o = Options::defaults_only();
  o.choice_regex = std::string(kTma) + "$|cublaslt_algo0$";
  o.m_buckets = false;
  runtime::set_faults_for_testing({"", "", "^tuner:scratch$"});
  const TuningStats s0 = tuning_stats();
  const std::string log = run_checked(432, 264, 136, o);
  EXPECT_EQ(count(log, "device memory ran out while tuning"), 1u) << log;
  EXPECT_EQ(lines(log), 1u) << log;
  const TuningStats s1 = tuning_stats();
  EXPECT_EQ(s1.tuned, s0.tuned);
  EXPECT_EQ(s1.heuristic - s0.heuristic, 1u);
  EXPECT_EQ(s1.tunings_out_of_memory - s0.tunings_out_of_memory, 1u);
  EXPECT_FALSE(stored_winner(432, 264, 136, o, rng_).has_value());
  // For kOutOfMemoryReportSeconds the problem is not tuned again, memory back or not: the heuristic choice runs.
  runtime::set_faults_for_testing({});
  EXPECT_EQ(run_checked(432, 264, 136, o), "");
  const TuningStats s2 = tuning_stats();
  EXPECT_EQ(s2.tuned, s1.tuned);
  EXPECT_EQ(s2.heuristic - s1.heuristic, 1u);
  // Nothing was remembered: after that (forget_in_memory stands for the wait) the next call tunes, and stores.
  tune::forget_in_memory();
  EXPECT_EQ(run_checked(432, 264, 136, o), "");
  EXPECT_EQ(tuning_stats().tuned - s2.tuned, 1u);
  EXPECT_TRUE(stored_winner(432, 264, 136, o, rng_).has_value());
}

TEST_F(Faults, EveryChoiceOutOfMemoryThrowsOutOfMemoryAndLeavesOutAlone) {
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  runtime::set_faults_for_testing({"", "", "."});
  const FailedCall r = run_failing(440, 264, 136, o);
  ASSERT_GE(r.applicable, 2u);
  ASSERT_TRUE(r.error) << "expected out_of_memory\n" << r.log;
  EXPECT_EQ(r.error->code(), ErrorCode::out_of_memory) << r.error->what();
  EXPECT_NE(std::string(r.error->what()).find("injected out-of-memory failure"), std::string::npos) << r.error->what();
  EXPECT_EQ(r.out_of_memory_retries, r.applicable) << r.log;
  EXPECT_EQ(lines(r.log), r.applicable) << r.log;  // one line per choice
  EXPECT_TRUE(r.out_untouched) << "out was written on the error path";
}

TEST_F(Faults, OutOfMemoryThenFailingReplacementsEnds) {
  // The picked choice runs out of memory, every other one fails to launch: each replacement is marked failed and
  // never tried again, and the call ends with the first error (out_of_memory), out left alone. (A shape of its own:
  // failures are kept for the life of the process, and the test before it needs every choice of its shape.)
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  const std::string picked = selected_choice(448, 280, 136, o, rng_);
  ASSERT_FALSE(picked.empty());
  runtime::set_faults_for_testing({"", "^(?!" + picked + "$)", "^" + picked + "$"});
  const FailedCall r = run_failing(448, 280, 136, o);
  ASSERT_TRUE(r.error) << "expected out_of_memory\n" << r.log;
  EXPECT_EQ(r.error->code(), ErrorCode::out_of_memory) << r.error->what();
  EXPECT_EQ(count(r.log, "ran out of device memory"), 1u) << r.log;
  EXPECT_EQ(count(r.log, "injected launch failure"), r.applicable - 1) << r.log;  // each other choice once
  EXPECT_TRUE(r.out_untouched) << "out was written on the error path";
}

}  // namespace
}  // namespace tmagemm::testing
