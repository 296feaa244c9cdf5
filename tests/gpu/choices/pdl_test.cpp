// pdl_test.cpp — programmatic dependent launch (runtime::programmatic_launch, KernelLaunch::set_programmatic) on a
// GPU: the persistent TMA and skinny kernels are launched with programmatic stream serialization, so they may start
// while the kernel before them finishes, and they must not read global memory before it has completed
// (ptx::grid_dependency_wait). A chain of calls on one stream, each reading the previous one's output right after
// it (which a poisoned buffer would betray), eagerly and replayed from a captured CUDA graph, checked against the
// fp32 reference of the chain's actual intermediate values; and the launches carry the attribute.
#include <gtest/gtest.h>

#include <mutex>
#include <random>
#include <vector>

#include "gpu/gpu_util.hpp"
#include "runtime/launch.hpp"

namespace tmagemm::testing {
namespace {

class Pdl : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    cuda_ok(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  std::mt19937 rng{2026};
  cudaStream_t stream_ = nullptr;
};

// X = A B (persistent TMA, a long K), then Y = X[:16] W (skinny) and Z = X W (persistent TMA), launched back to back
// on one stream after X is poisoned on that stream. `graph`: the same sequence captured and replayed.
void run_chain(std::mt19937& rng, cudaStream_t stream, bool graph) {
  const int64_t M = 512, K1 = 8192, N1 = 4096, N2 = 2048;
  Matrix a = make_matrix(DType::bf16, M, K1, false, 8, rng, true);
  Matrix b = make_matrix(DType::bf16, K1, N1, false, 8, rng, true);
  Matrix x = make_matrix(DType::bf16, M, N1, false, 8, rng, false);
  Matrix w = make_matrix(DType::bf16, N1, N2, true, 8, rng, true);
  Matrix y = make_matrix(DType::bf16, 16, N2, false, 8, rng, false);
  Matrix z = make_matrix(DType::bf16, M, N2, false, 8, rng, false);
  Options tma = backend_only("persistent_tma"), skinny = backend_only("skinny");
  tma.stream = skinny.stream = stream;
  TensorView x16 = x.view();
  x16.sizes[0] = 16;
  auto chain = [&] {
    cuda_ok(cudaMemsetAsync(x.dev->ptr, 0xff, x.host.size(), stream), "poison x");  // bf16 NaN
    mm(a.view(), b.view(), x.view(), tma);
    mm(x16, w.view(), y.view(), skinny);
    mm(x.view(), w.view(), z.view(), tma);
  };
  // Warm-up outside any capture: the kernels are compiled and loaded before (a capture allows neither).
  chain();
  cuda_ok(cudaStreamSynchronize(stream), "warm-up");
  y.upload();
  z.upload();  // poison again
  if (graph) {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    chain();
    cuda_ok(cudaStreamEndCapture(stream, &g), "cudaStreamEndCapture");
    cuda_ok(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate");
    for (int r = 0; r < 3; ++r) cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    cuda_ok(cudaStreamSynchronize(stream), "replay");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
  } else {
    for (int r = 0; r < 3; ++r) chain();
    cuda_ok(cudaStreamSynchronize(stream), "chain");
  }
  x.download();
  const Check cx = compare(x, reference_gemm(a, b, M, N1, K1));
  EXPECT_EQ(cx.nan_count, 0) << cx.first_bad;
  EXPECT_LE(cx.rel_err, 1e-2) << cx.first_bad;
  // Y and Z against the reference of the X they should have read (X's first 16 rows for Y).
  Matrix x_top = make_matrix(DType::bf16, 16, N1, false, 8, rng, false);
  std::copy(x.host.begin(), x.host.begin() + static_cast<std::ptrdiff_t>(x_top.host.size()), x_top.host.begin());
  x_top.upload();
  const Check cy = compare(y, reference_gemm(x_top, w, 16, N2, N1));
  EXPECT_EQ(cy.nan_count, 0) << "skinny read X before the call that writes it finished: " << cy.first_bad;
  EXPECT_LE(cy.rel_err, 1e-2) << cy.first_bad;
  const Check cz = compare(z, reference_gemm(x, w, M, N2, N1));
  EXPECT_EQ(cz.nan_count, 0) << "persistent TMA read X before the call that writes it finished: " << cz.first_bad;
  EXPECT_LE(cz.rel_err, 1e-2) << cz.first_bad;
}

TEST_F(Pdl, ChainedCallsReadTheirPredecessorsFinishedOutput) {
  // The launches carry the attribute unless TMAGEMM_PDL=0.
  std::mutex mutex;
  int launches = 0, programmatic = 0;
  runtime::set_launch_observer_for_testing([&](const CUlaunchConfig& cfg) {
    std::lock_guard<std::mutex> lock(mutex);
    ++launches;
    for (unsigned i = 0; i < cfg.numAttrs; ++i)
      if (cfg.attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION &&
          cfg.attrs[i].value.programmaticStreamSerializationAllowed != 0)
        ++programmatic;
  });
  run_chain(rng, stream_, false);
  runtime::set_launch_observer_for_testing({});
  EXPECT_GE(launches, 12);
  EXPECT_EQ(programmatic, runtime::programmatic_launch() ? launches : 0);
}

TEST_F(Pdl, ChainReplayedFromACapturedGraph) { run_chain(rng, stream_, true); }

}  // namespace
}  // namespace tmagemm::testing
