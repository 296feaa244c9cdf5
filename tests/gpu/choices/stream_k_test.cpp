// stream_k_test.cpp — the persistent TMA kernel's stream-K configs on a GPU (kernels/scheduler.cuh, StreamKSchedule):
// problems whose last waves are shared out by K blocks — one wave and a part, fewer tiles than SMs (each split over all
// of them), K tails, every operand layout, bf16 and f16, f32 output, batches — against an fp32-accumulated reference
// (relative Frobenius error <= 1e-2, poisoned outputs, padding untouched); and determinism: the same call twice gives
// the same bits (the split tiles' partial sums are added in a fixed order, whichever unit finishes last); two streams
// launching stream-K grids at once (no unit may wait for a CTA that another kernel keeps from running); and threads
// sharing one stream handle, the null stream's workspace or the per-thread default stream (each call's counters and
// sums its own); the stream's clean counter buffer (TMAGEMM_STREAM_K_CLEAN_COUNTERS=1) left at zero by every kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <thread>

#include "choices/persistent_tma.hpp"
#include "cpu/test_support.hpp"
#include "gpu/gpu_util.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

// The stream-K configs only, heuristic mode (no tuning): the regex leaves one config, which then runs.
Options stream_k_options(const std::string& config_regex) {
  Options o = backend_only("persistent_tma");
  o.choice_regex = config_regex;
  return o;
}

const char* kConfigs[] = {"^persistent_tma_128x256x64_s4_c2_g8_tmastore_sk$",
                          "^persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk$",
                          "^persistent_tma_128x128x64_s6_c2_g8_tmastore_sk$",
                          "^persistent_tma_64x256x64_s5_c1_g8_tmastore_sk$",
                          "^persistent_tma_64x128x64_s8_c1_g8_tmastore_sk$"};

class StreamK : public ::testing::Test {
 protected:
  void SetUp() override { TMAGEMM_REQUIRE_GPU(); }
  std::mt19937 rng{77};

  // Every stream-K config on one problem: the operands and the reference are made once (a decode weight is 58 M
  // random values: generating it per config dominated the test's time), the output poisoned again before each run.
  void check(DType in, DType out_t, int64_t m, int64_t n, int64_t k, bool a_col, bool b_col) {
    SCOPED_TRACE(fmt::format("{}x{}x{} {} a:{} b:{} out {}", m, n, k, to_string(in), a_col ? "col" : "row",
                             b_col ? "col" : "row", to_string(out_t)));
    Matrix a = make_matrix(in, m, k, a_col, 8, rng, true);
    Matrix b = make_matrix(in, k, n, b_col, 8, rng, true);
    const std::vector<float> ref = reference_gemm(a, b, m, n, k);
    for (const char* regex_c : kConfigs) {
      const std::string regex = regex_c;
      SCOPED_TRACE(regex);
      Matrix out = make_matrix(out_t, m, n, false, 8, rng, false);
      const Options o = stream_k_options(regex);
      ASSERT_EQ(tune::choose(make_mm_problem(a.view(), b.view(), out.view()), o)->name(),
                regex.substr(1, regex.size() - 2));
      mm(a.view(), b.view(), out.view(), o);
      cuda_ok(cudaDeviceSynchronize(), "mm");
      const Check chk = compare(out, ref);
      EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
      EXPECT_EQ(chk.padding_touched, 0);
      EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
      if (HasFailure()) return;
    }
  }
};

TEST_F(StreamK, SplitTilesEveryLayoutAndShape) {
  // (M, N, K): fewer tiles than SMs (each tile split over all of them), one wave and a part, a K tail, a tile
  // count just past a multiple of the SMs, and a single K block per tile (nothing to split). N x 2 bytes is a whole
  // number of 16-byte chunks (the TMA-store epilogue's rule). Then decode's few rows (every tile split: 1 x 7168 is
  // 28 tiles of 64x256 over 132 SMs) with a K tail, and 16 rows. Each (shape, layout) runs every stream-K config.
  const int64_t shapes[][3] = {{1000, 1000, 1000}, {2000, 3000, 1000}, {700, 5000, 4104}, {4224, 4224, 512},
                               {296, 304, 64},     {1, 7168, 8200},    {16, 14336, 4096}};
  for (const auto& s : shapes)
    for (int layout = 0; layout < 4; ++layout) {
      check(DType::bf16, DType::bf16, s[0], s[1], s[2], (layout & 1) != 0, (layout & 2) != 0);
      if (HasFailure()) return;
    }
}

TEST_F(StreamK, F16AndF32Outputs) {
  check(DType::f16, DType::f16, 1000, 1000, 3000, false, true);
}

TEST_F(StreamK, BatchedProblemSharesItsLastWave) {
  // bmm through the same schedule: tiles numbered across the batch, split tiles in the last batch.
  const int64_t B = 3, M = 500, N = 704, K = 2000;
  Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng, true, B, true);
  Matrix b = make_matrix(DType::bf16, K, N, true, 8, rng, true, B, true);
  Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng, false, B, true);
  bmm(a.view(), b.view(), out.view(), stream_k_options(kConfigs[0]));
  cuda_ok(cudaDeviceSynchronize(), "bmm");
  const Check chk = compare(out, reference_gemm(a, b, M, N, K, B), B);
  EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
  EXPECT_EQ(chk.padding_touched, 0);
  EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
}

TEST_F(StreamK, TwoRunsGiveTheSameBits) {
  // 1200 x 4000 x 8192: 160 tiles of 128x256 on 132 SMs, the last 28 split into 4-5 units each.
  for (const char* regex : kConfigs) {
    Matrix a = make_matrix(DType::bf16, 1200, 8192, false, 8, rng, true);
    Matrix b = make_matrix(DType::bf16, 8192, 4000, true, 8, rng, true);
    Matrix out = make_matrix(DType::bf16, 1200, 4000, false, 8, rng, false);
    const Options o = stream_k_options(regex);
    const auto runs = outputs_of_runs(out, 3, [&] { mm(a.view(), b.view(), out.view(), o); });
    EXPECT_EQ(runs[0], runs[1]) << regex;
    EXPECT_EQ(runs[0], runs[2]) << regex;
    const Check chk = compare(out, reference_gemm(a, b, 1200, 4000, 8192));
    EXPECT_LE(chk.rel_err, 1e-2) << regex << ": " << chk.first_bad;
  }
}

// A unit of a split tile never waits for another CTA (the one that arrives last finishes the tile): a wait would hang
// where another kernel holds the SMs the awaited CTA needs. Two streams launching stream-K grids at once (each alone
// fills the GPU) must both finish, with the right results.
TEST_F(StreamK, ConcurrentLaunchesOnTwoStreamsFinish) {
  const int64_t M = 1200, N = 4000, K = 8192;  // 160 tiles of 128x256: the last 28 split between 4-5 units
  Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng, true);
  Matrix b = make_matrix(DType::bf16, K, N, true, 8, rng, true);
  Matrix out0 = make_matrix(DType::bf16, M, N, false, 8, rng, false);
  Matrix out1 = make_matrix(DType::bf16, M, N, false, 8, rng, false);
  cudaStream_t s0 = nullptr, s1 = nullptr;
  cuda_ok(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking), "cudaStreamCreate");
  cuda_ok(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), "cudaStreamCreate");
  Options o0 = stream_k_options(kConfigs[0]), o1 = stream_k_options(kConfigs[2]);
  o0.stream = s0;
  o1.stream = s1;
  for (int r = 0; r < 20; ++r) {
    mm(a.view(), b.view(), out0.view(), o0);
    mm(a.view(), b.view(), out1.view(), o1);
  }
  cuda_ok(cudaStreamSynchronize(s0), "stream 0");
  cuda_ok(cudaStreamSynchronize(s1), "stream 1");
  const std::vector<float> ref = reference_gemm(a, b, M, N, K);
  for (Matrix* out : {&out0, &out1}) {
    const Check chk = compare(*out, ref);
    EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
    EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
  }
  cudaStreamDestroy(s0);
  cudaStreamDestroy(s1);
}

// Calls from several threads on one stream share the stream's workspace (dispatch.cpp): each call's counter memset,
// kernel and partial sums must not interleave with another call's, and a buffer must not be grown (freed) under a
// call that holds it. Six threads, each with its own operands, four problems of different workspace sizes in a
// different order per thread, three rounds; every output against the reference. `stream`: the handle every thread
// passes (the null stream: one stream for all; cudaStreamPerThread: one handle, a stream per thread).
void threads_on_one_stream_handle(cudaStream_t stream, std::mt19937& rng) {
  const int64_t shapes[][3] = {{1200, 4000, 1000}, {2000, 3000, 2000}, {1200, 4000, 4096}, {2304, 2304, 3072}};
  constexpr int kThreads = 6, kShapes = 4;
  struct Job {
    Matrix a, b, out;
    int64_t m, n, k;
    std::vector<float> ref;
  };
  std::vector<std::vector<Job>> jobs(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (int j = 0; j < kShapes; ++j) {
      const auto& s = shapes[(j + t) % kShapes];
      Matrix a = make_matrix(DType::bf16, s[0], s[2], false, 8, rng, true);
      Matrix b = make_matrix(DType::bf16, s[2], s[1], t % 2 == 1, 8, rng, true);
      Matrix out = make_matrix(DType::bf16, s[0], s[1], false, 8, rng, false);
      std::vector<float> ref = reference_gemm(a, b, s[0], s[1], s[2]);
      jobs[t].push_back(Job{std::move(a), std::move(b), std::move(out), s[0], s[1], s[2], std::move(ref)});
    }
  const char* regex[kThreads] = {kConfigs[0], kConfigs[1], kConfigs[2], kConfigs[0], kConfigs[2], kConfigs[1]};
  for (int round = 0; round < 3; ++round) {
    for (auto& thread_jobs : jobs)
      for (Job& job : thread_jobs) job.out.upload();  // poison again
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
      pool.emplace_back([&, t] {
        try {
          Options o = stream_k_options(regex[t]);
          o.stream = stream;
          for (Job& job : jobs[t]) mm(job.a.view(), job.b.view(), job.out.view(), o);
          cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        } catch (const std::exception& e) {
          errors[t] = e.what();
        }
      });
    for (auto& th : pool) th.join();
    cuda_ok(cudaDeviceSynchronize(), "mm");
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(errors[t], "") << "round " << round << ", thread " << t;
      for (Job& job : jobs[t]) {
        const Check chk = compare(job.out, job.ref);
        EXPECT_EQ(chk.nan_count, 0) << "round " << round << ", thread " << t << ", " << job.m << "x" << job.n << "x"
                                     << job.k << ": " << chk.first_bad;
        EXPECT_LE(chk.rel_err, 1e-2) << "round " << round << ", thread " << t << ", " << job.m << "x" << job.n << "x"
                                     << job.k << ": " << chk.first_bad;
      }
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST_F(StreamK, ThreadsSharingAStreamKeepTheirOwnSums) { threads_on_one_stream_handle(nullptr, rng); }

TEST_F(StreamK, ThreadsSharingAStreamWithCleanCounters) {
  // The same with TMAGEMM_STREAM_K_CLEAN_COUNTERS=1: the six threads' kernels take turns on the stream's one counter
  // buffer (stream order; no memset between them).
  test_support::EnvGuard clean("TMAGEMM_STREAM_K_CLEAN_COUNTERS", std::string("1"));
  threads_on_one_stream_handle(nullptr, rng);
}

// TMAGEMM_STREAM_K_CLEAN_COUNTERS=1: the arrival counters come from the stream's buffer, zeroed once, with no memset
// before a launch, so every stream-K kernel must leave the buffer at zero. Each config on problems of other split
// layouts one after another (each splits tiles for every config on 132 SMs: 28-60, 15-30, 56-120 of them), on a
// created and on the null stream: the clean path taken (its launch count), the buffer all zeros after every launch,
// each output right and bitwise that of the memset path (the switch off) on the same inputs.
TEST_F(StreamK, CleanCountersStayZeroWithoutAMemset) {
  const int64_t shapes[][3] = {{1200, 4000, 8192}, {1200, 4000, 1000}, {2000, 3000, 1000}, {2304, 2304, 3072}};
  int device = 0;
  cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
  cudaStream_t created = nullptr;
  cuda_ok(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "cudaStreamCreate");
  std::vector<unsigned> counters(choices::kCleanCounterBytes / sizeof(unsigned));
  for (cudaStream_t stream : {created, static_cast<cudaStream_t>(nullptr)})
    for (const char* regex : kConfigs)
      for (const auto& s : shapes) {
        SCOPED_TRACE(fmt::format("{}x{}x{} {} stream {}", s[0], s[1], s[2], regex, stream ? "created" : "null"));
        Matrix a = make_matrix(DType::bf16, s[0], s[2], false, 8, rng, true);
        Matrix b = make_matrix(DType::bf16, s[2], s[1], true, 8, rng, true);
        Matrix out = make_matrix(DType::bf16, s[0], s[1], false, 8, rng, false);
        Options o = stream_k_options(regex);
        o.stream = stream;
        const auto run = [&](bool clean) {
          test_support::EnvGuard sw("TMAGEMM_STREAM_K_CLEAN_COUNTERS",
                                    clean ? std::optional<std::string>("1") : std::nullopt);
          out.upload();  // poison again
          cuda_ok(cudaDeviceSynchronize(), "upload");  // (a pageable copy; the stream may not be ordered with it)
          const std::uint64_t before = choices::stream_k_clean_launches();
          mm(a.view(), b.view(), out.view(), o);
          cuda_ok(cudaStreamSynchronize(stream), "mm");
          EXPECT_EQ(choices::stream_k_clean_launches() - before, clean ? 1u : 0u) << "the clean path (not) taken";
          return out.device_bytes();
        };
        const std::vector<uint8_t> first = run(true);
        unsigned* buffer = choices::stream_k_clean_counters(device, stream);
        ASSERT_NE(buffer, nullptr);
        cuda_ok(cudaMemcpy(counters.data(), buffer, choices::kCleanCounterBytes, cudaMemcpyDeviceToHost),
                "download counters");
        EXPECT_EQ(std::count(counters.begin(), counters.end(), 0u), static_cast<std::ptrdiff_t>(counters.size()))
            << "a stream-K kernel left a counter that is not zero";
        EXPECT_EQ(run(true), first);
        EXPECT_EQ(run(false), first) << "the memset path gives other bits";
        const Check chk = compare(out, reference_gemm(a, b, s[0], s[1], s[2]));
        EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
        EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
        if (HasFailure()) break;
      }
  cudaStreamDestroy(created);
}

// Each thread's own stream behind the one handle: calls allocate their workspace on their stream (stream-ordered), as
// in a graph capture, since one buffer would be used by several streams' kernels at once.
TEST_F(StreamK, ThreadsOnThePerThreadDefaultStreamKeepTheirOwnSums) {
  threads_on_one_stream_handle(cudaStreamPerThread, rng);
}

}  // namespace
}  // namespace tmagemm::testing
