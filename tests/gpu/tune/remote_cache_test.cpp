// remote_cache_test.cpp (GPU) — the fleet-wide cache on Redis, end to end: process 1 tunes a small mm with
// TMAGEMM_REMOTE_CACHE and a key (publishing the winner and its cubin), process 2 with an empty local cache makes its
// first call of the same mm without tuning or compiling, and prints that call's host time (the target: under
// 100 ms). Needs a GPU and redis-server (skipped with the reason without either; lab/device-remote-cache.sh runs it).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <tuple>

#include "cpu/test_support.hpp"
#include "gpu/gpu_util.hpp"
#include "remote_test_support.hpp"
#include "runtime/remote_store.hpp"
#include "tune/tuner.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm::testing {
namespace {

namespace fs = std::filesystem;
namespace remote = runtime::remote;
using test_support::EnvGuard;
using test_support::TempDir;

constexpr const char* kHelperEnv = "TMAGEMM_REMOTE_GPU_TEST_HELPER";
constexpr int64_t M = 1536, N = 1024, K = 768;

// cuBLASLt off, so that the winner is one of tmagemm's kernels and its cubin has to come from somewhere.
Options tuned_options() {
  Options o = backend_only("", Tuning::benchmark);
  o.cublaslt = false;
  return o;
}

// mm on random inputs, checked against the reference; the host time of the call itself in `call_ms`, and the NVRTC
// compiles during the call in `call_compiles` (the reference kernel this check compiles afterwards is the test's, not
// the call's: a process with an empty local cache compiles it).
void run_checked_mm(double& call_ms, uint64_t& call_compiles) {
  std::mt19937 rng(2222);
  Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng, true);
  Matrix b = make_matrix(DType::bf16, K, N, true, 8, rng, true);
  Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng, false);
  const Options o = tuned_options();
  const uint64_t compiles_before = jit::nvrtc_compile_count();
  const auto t0 = std::chrono::steady_clock::now();
  mm(a.view(), b.view(), out.view(), o);
  call_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  call_compiles = jit::nvrtc_compile_count() - compiles_before;
  cuda_ok(cudaDeviceSynchronize(), "mm");
  const double done_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("mm %lldx%lldx%lld: call %.2f ms host time, %.2f ms to completion\n", static_cast<long long>(M),
              static_cast<long long>(N), static_cast<long long>(K), call_ms, done_ms);
  const Check chk = compare(out, reference_gemm(a, b, M, N, K));
  EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
  EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
}

// Process 1: tunes the mm (benchmark mode) and so publishes its winner and the winner's cubin.
TEST(RemoteCacheGpuHelper, TuneAndPublish) {
  if (std::getenv(kHelperEnv) == nullptr) GTEST_SKIP() << "helper of RemoteCacheGpu.* (needs " << kHelperEnv << ")";
  TMAGEMM_REQUIRE_GPU();
  double call_ms = 0;
  uint64_t call_compiles = 0;
  run_checked_mm(call_ms, call_compiles);
  const remote::Stats s = remote::stats();
  EXPECT_GE(s.published, 2u) << "the winner and at least one cubin";
  EXPECT_EQ(s.failures, 0u);
}

// Process 2: an empty local cache; the first call runs the published winner.
TEST(RemoteCacheGpuHelper, FirstTunedCall) {
  if (std::getenv(kHelperEnv) == nullptr) GTEST_SKIP() << "helper of RemoteCacheGpu.* (needs " << kHelperEnv << ")";
  TMAGEMM_REQUIRE_GPU();
  ASSERT_FALSE(fs::exists(tune::TuningDb::default_path())) << "the local cache is not empty";
  double call_ms = 0;
  uint64_t call_compiles = 0;
  // The CUDA context exists already (make_matrix allocates); the call is what is timed.
  run_checked_mm(call_ms, call_compiles);
  const remote::Stats s = remote::stats();
  std::printf("first tuned call with an empty local cache and the remote cache: %.2f ms host time (target < 100 ms); "
              "remote hits %llu, NVRTC compiles during the call %llu (in all, with the check's reference kernel, "
              "%llu)\n",
              call_ms, static_cast<unsigned long long>(s.hits), static_cast<unsigned long long>(call_compiles),
              static_cast<unsigned long long>(jit::nvrtc_compile_count()));
  EXPECT_EQ(call_compiles, 0u) << "the call compiled a kernel";
  EXPECT_GE(s.hits, 2u) << "the winner and its cubin";
  EXPECT_EQ(s.rejected, 0u);
  EXPECT_LT(call_ms, 100.0) << "the issue's target for the first tuned call";
}

TEST(RemoteCacheGpu, SecondProcessRunsTheWinnerWithoutTuningOrCompiling) {
  TMAGEMM_REQUIRE_GPU();
  if (!remote::built_in()) GTEST_SKIP() << "built without the remote cache (hiredis, libcrypto)";
  const std::string binary = remote_test::find_redis_server();
  if (binary.empty()) GTEST_SKIP() << remote_test::kNoRedisMessage;
  TempDir dir("tmagemm-remote-gpu-test");
  fs::create_directories(dir.path() / "redis");
  remote_test::RedisServer server(binary, dir.path() / "redis");
  ASSERT_TRUE(server.running()) << "redis-server did not start:\n" << server.log();

  // Process 1 tunes with the usual kernel cache (so that tuning does not compile every candidate); process 2 starts
  // from an empty one.
  const fs::path a = dir.path() / "process1", b = dir.path() / "process2";
  fs::create_directories(a);
  std::error_code ec;
  fs::create_directory_symlink(fs::path(jit::cache_dir()) / "kernels", a / "kernels", ec);
  EnvGuard url("TMAGEMM_REMOTE_CACHE", server.url());
  EnvGuard key("TMAGEMM_REMOTE_CACHE_KEY", std::string("remote-gpu-test-key-0123456789"));
  EnvGuard helper(kHelperEnv, std::string("1"));
  std::string second_log;
  int process = 0;
  for (const auto& [filter, cache, log_topics] :
       {std::tuple{"RemoteCacheGpuHelper.TuneAndPublish", a, ""},
        std::tuple{"RemoteCacheGpuHelper.FirstTunedCall", b, "autotune,remote,timing"}}) {
    ++process;
    EnvGuard cache_dir("TMAGEMM_CACHE_DIR", cache.string());
    EnvGuard log("TMAGEMM_LOG", std::string(log_topics));
    const fs::path log_file = dir.path() / (std::string(filter) + ".log");
    const int status = remote_test::run_helper(TMAGEMM_GPU_TEST_HELPER, filter, log_file.string());
    const std::string out = remote_test::read_file(log_file);
    EXPECT_TRUE(remote_test::exited_ok(status)) << filter << " failed:\n" << out;
    EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << filter << ":\n" << out;
    EXPECT_EQ(out.find("SKIPPED"), std::string::npos) << filter << ":\n" << out;
    second_log = out;
    for (std::size_t at = 0; at < out.size();) {  // the child's own report lines
      const std::size_t end = std::min(out.find('\n', at), out.size());
      const std::string line = out.substr(at, end - at);
      if (line.rfind("mm ", 0) == 0 || line.rfind("first tuned call", 0) == 0 || line.rfind("tmagemm timing", 0) == 0)
        std::printf("process %d: %s\n", process, line.c_str());
      at = end + 1;
    }
  }
  EXPECT_EQ(second_log.find("AUTOTUNE"), std::string::npos) << "process 2 tuned:\n" << second_log;

  // Process 2's tuning DB holds process 1's record as it was measured there (copied, not measured again).
  tune::TuningDb first((a / "tuning.sqlite").string()), second((b / "tuning.sqlite").string());
  const auto tuned = first.list(), copied = second.list();
  ASSERT_EQ(tuned.size(), 1u);
  ASSERT_EQ(copied.size(), 1u);
  EXPECT_EQ(copied[0].first, tuned[0].first);
  EXPECT_EQ(copied[0].second.winner, tuned[0].second.winner);
  EXPECT_EQ(copied[0].second.tuned_at, tuned[0].second.tuned_at);
  ASSERT_EQ(copied[0].second.timings.size(), tuned[0].second.timings.size());
  for (std::size_t i = 0; i < tuned[0].second.timings.size(); ++i)
    EXPECT_EQ(copied[0].second.timings[i].ms, tuned[0].second.timings[i].ms);
  std::printf("winner %s (tuned by process 1, run by process 2)\n", tuned[0].second.winner.c_str());
}

}  // namespace
}  // namespace tmagemm::testing
