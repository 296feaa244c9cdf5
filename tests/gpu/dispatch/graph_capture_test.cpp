// graph_capture_test.cpp (GPU) — a tmagemm call captured in a CUDA graph and replayed with new input values, once
// per backend: for a problem tuned before the capture, and for one never seen (the call then runs the heuristic
// choice without tuning and says so once in the autotune log; the first call outside a capture tunes it). And a
// tuning on one thread while another thread captures in global mode: the capture must survive it.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "gpu/gpu_util.hpp"
#include "runtime/log.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

struct BackendCase {
  const char* backend;
  int64_t m, n, k;  // the untuned problem uses m + 8 rows (a key no other test tunes)
};

class GraphCapture : public ::testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
    cuda_ok(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  void TearDown() override {
    runtime::set_log_topics_for_testing(nullptr);
    if (stream_) cudaStreamDestroy(stream_);
    tune::forget_in_memory();
  }

  // Captures mm(a, b, out) on the test's stream, then replays it twice with new inputs each time.
  void capture_and_replay(Matrix& a, Matrix& b, Matrix& out, Options o) {
    o.stream = stream_;
    cudaGraph_t graph = nullptr;
    cuda_ok(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    try {
      mm(a.view(), b.view(), out.view(), o);
    } catch (...) {
      cudaStreamEndCapture(stream_, &graph);
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    cuda_ok(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    for (int replay = 0; replay < 2; ++replay) {
      SCOPED_TRACE(fmt::format("replay {}", replay));
      Matrix fresh_a = make_matrix(a.dtype, a.rows, a.cols, a.col_major, 8, rng_, true);
      Matrix fresh_b = make_matrix(b.dtype, b.rows, b.cols, b.col_major, 8, rng_, true);
      a.host = fresh_a.host;
      b.host = fresh_b.host;
      a.upload();
      b.upload();
      cuda_ok(cudaMemset(out.dev->ptr, 0xff, out.host.size()), "poison out");
      cuda_ok(cudaGraphLaunch(exec, stream_), "cudaGraphLaunch");
      cuda_ok(cudaStreamSynchronize(stream_), "replay");
      const Check chk = compare(out, reference_gemm(a, b, a.rows, b.cols, a.cols));
      EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
      EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }

  cudaStream_t stream_ = nullptr;
  std::mt19937 rng_{4242};
};

TEST_P(GraphCapture, TunedProblemReplaysWithNewInputs) {
  const BackendCase c = GetParam();
  FreshTuningDb db;
  const Options o = backend_only(c.backend, Tuning::benchmark);
  Matrix a = make_matrix(DType::bf16, c.m, c.k, false, 8, rng_, true);
  Matrix b = make_matrix(DType::bf16, c.k, c.n, true, 8, rng_, true);
  Matrix out = make_matrix(DType::bf16, c.m, c.n, false, 8, rng_, false);
  mm(a.view(), b.view(), out.view(), o);  // tunes, outside the capture
  cuda_ok(cudaDeviceSynchronize(), "tuning call");
  const Explanation e = explain_mm(a.view(), b.view(), out.view(), o);
  for (const auto& ch : e.choices)
    if (ch.selected) EXPECT_EQ(ch.backend, c.backend) << e.to_string();
  capture_and_replay(a, b, out, o);
}

TEST_P(GraphCapture, UntunedProblemRunsTheHeuristicChoiceAndTunesLater) {
  const BackendCase c = GetParam();
  FreshTuningDb db;  // never tuned, not even by an earlier run
  const Options o = backend_only(c.backend, Tuning::benchmark);
  const int64_t m = c.m + 8;
  Matrix a = make_matrix(DType::bf16, m, c.k, false, 8, rng_, true);
  Matrix b = make_matrix(DType::bf16, c.k, c.n, true, 8, rng_, true);
  Matrix out = make_matrix(DType::bf16, m, c.n, false, 8, rng_, false);
  const std::string topics = "autotune";
  runtime::set_log_topics_for_testing(&topics);
  ::testing::internal::CaptureStderr();
  capture_and_replay(a, b, out, o);
  capture_and_replay(a, b, out, o);  // a second capture: the log said it already
  const std::string log = ::testing::internal::GetCapturedStderr();
  std::size_t said = 0;
  for (std::size_t at = log.find("called during a CUDA graph capture"); at != std::string::npos;
       at = log.find("called during a CUDA graph capture", at + 1))
    ++said;
  EXPECT_EQ(said, 1u) << log;
  runtime::set_log_topics_for_testing(nullptr);
  // Outside a capture the problem is tuned now.
  mm(a.view(), b.view(), out.view(), o);
  cuda_ok(cudaDeviceSynchronize(), "call after the capture");
  const Explanation e = explain_mm(a.view(), b.view(), out.view(), o);
  int timed = 0;
  for (const auto& ch : e.choices) timed += ch.tuned_ms.has_value();
  EXPECT_GE(timed, 1) << e.to_string();
}

// The tuner allocates scratch, loads and unloads modules and synchronises. CUDA forbids those calls in global
// capture mode while any thread captures in global mode, and a forbidden call invalidates that capture: the tuner
// makes them in thread-local mode (runtime::ThreadLocalCaptureMode), so another thread's capture survives.
TEST(GraphCaptureThreads, TuningOnAnotherThreadLeavesAGlobalCaptureIntact) {
  TMAGEMM_REQUIRE_GPU();
  FreshTuningDb db;
  tune::forget_in_memory();
  std::mt19937 rng{777};
  // Everything the tuning thread touches is made before the capture begins (uploads are synchronous copies).
  Matrix a = make_matrix(DType::bf16, 328, 200, false, 8, rng, true);
  Matrix b = make_matrix(DType::bf16, 200, 264, true, 8, rng, true);
  Matrix out = make_matrix(DType::bf16, 328, 264, false, 8, rng, false);
  Matrix captured = make_matrix(DType::bf16, 64, 64, false, 8, rng, false);
  cudaStream_t capturing = nullptr, tuning = nullptr;
  cuda_ok(cudaStreamCreateWithFlags(&capturing, cudaStreamNonBlocking), "cudaStreamCreate");
  cuda_ok(cudaStreamCreateWithFlags(&tuning, cudaStreamNonBlocking), "cudaStreamCreate");
  Options o;
  o.tuning = Tuning::benchmark;
  o.stream = tuning;

  cuda_ok(cudaStreamBeginCapture(capturing, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  cuda_ok(cudaMemsetAsync(captured.dev->ptr, 0x3c, captured.host.size(), capturing), "captured memset");
  std::string error;
  std::thread tuner([&] {
    try {
      mm(a.view(), b.view(), out.view(), o);  // a new problem: tuned here, on this thread
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  tuner.join();
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(capturing, &graph);
  EXPECT_EQ(ended, cudaSuccess) << cudaGetErrorName(ended) << ": the other thread's tuning broke the capture";
  EXPECT_EQ(error, "");
  if (ended == cudaSuccess) {
    cudaGraphExec_t exec = nullptr;
    cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    cuda_ok(cudaGraphLaunch(exec, capturing), "cudaGraphLaunch");
    cuda_ok(cudaStreamSynchronize(capturing), "replay");
    std::vector<uint8_t> got(captured.host.size());
    cuda_ok(cudaMemcpy(got.data(), captured.dev->ptr, got.size(), cudaMemcpyDeviceToHost), "download");
    EXPECT_EQ(std::count(got.begin(), got.end(), uint8_t{0x3c}), static_cast<std::ptrdiff_t>(got.size()));
    cudaGraphExecDestroy(exec);
  }
  if (graph) cudaGraphDestroy(graph);
  cudaGetLastError();
  cuda_ok(cudaStreamSynchronize(tuning), "tuned call");
  const Check chk = compare(out, reference_gemm(a, b, a.rows, b.cols, a.cols));
  EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
  EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
  const Explanation e = explain_mm(a.view(), b.view(), out.view(), o);
  int timed = 0;
  for (const auto& ch : e.choices) timed += ch.tuned_ms.has_value();
  EXPECT_GE(timed, 2) << "the call was tuned:\n" << e.to_string();
  cudaStreamDestroy(capturing);
  cudaStreamDestroy(tuning);
  tune::forget_in_memory();
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, GraphCapture,
                         ::testing::Values(BackendCase{"persistent_tma", 392, 264, 200},
                                           BackendCase{"skinny", 16, 1032, 1024},
                                           BackendCase{"fallback", 200, 136, 72},
                                           BackendCase{"cublaslt", 264, 392, 136}),
                         [](const auto& info) { return std::string(info.param.backend); });

}  // namespace
}  // namespace tmagemm::testing
