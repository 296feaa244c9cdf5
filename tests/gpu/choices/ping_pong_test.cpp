// ping_pong_test.cpp — the persistent TMA kernel's ping-pong configs on a GPU (kernels/gemm_persistent_tma.cuh
// kPingPong: the two consumers take the CTA's tiles in turn, their K loops ordered by named barriers): a CTA with one
// tile (the second consumer never runs), two, and an odd count of several; ragged M and N, K tails, every operand
// layout, f16, 2x1 clusters, batches — against an fp32-accumulated reference (relative Frobenius error <= 1e-2,
// poisoned outputs, padding untouched).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "gpu/gpu_util.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

const char* kConfigs[] = {"^persistent_tma_128x128x64_s6_c2_g8_tmastore_pp$",
                          "^persistent_tma_128x128x64_s6_c2_g8_cm2_tmastore_pp$",
                          "^persistent_tma_64x256x64_s4_c2_g8_cm2_tmastore_pp$"};

class PingPong : public ::testing::Test {
 protected:
  void SetUp() override { TMAGEMM_REQUIRE_GPU(); }
  std::mt19937 rng{57};

  void check(const char* regex, DType in, int64_t m, int64_t n, int64_t k, bool a_col, bool b_col,
             int64_t batch = 1) {
    SCOPED_TRACE(fmt::format("{}x{}x{} batch {} {} a:{} b:{} {}", m, n, k, batch, to_string(in), a_col ? "col" : "row",
                             b_col ? "col" : "row", regex));
    Options o = backend_only("persistent_tma");
    o.choice_regex = regex;
    Matrix a = make_matrix(in, m, k, a_col, 8, rng, true, batch, batch > 1);
    Matrix b = make_matrix(in, k, n, b_col, 8, rng, true, batch, batch > 1);
    Matrix out = make_matrix(in, m, n, false, 8, rng, false, batch, batch > 1);
    if (batch > 1) {
      bmm(a.view(), b.view(), out.view(), o);
    } else {
      const std::string name(regex + 1, std::strlen(regex) - 2);
      ASSERT_EQ(tune::choose(make_mm_problem(a.view(), b.view(), out.view()), o)->name(), name);
      mm(a.view(), b.view(), out.view(), o);
    }
    cuda_ok(cudaDeviceSynchronize(), "mm");
    const Check chk = compare(out, reference_gemm(a, b, m, n, k, batch), batch);
    EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
    EXPECT_EQ(chk.padding_touched, 0);
    EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
  }
};

TEST_F(PingPong, EveryLayoutAndTileCount) {
  // (M, N, K): one tile in all (one CTA, consumer 1 idle), fewer tiles than SMs (one each), about two tiles a CTA
  // with ragged edges and a K tail, three or more a CTA (an odd count: consumer 0 takes the last), a single K block.
  const int64_t shapes[][3] = {{100, 120, 200}, {1000, 1000, 1000}, {2000, 2056, 1032}, {3000, 5000, 520},
                               {1536, 1536, 64}};
  for (const char* regex : kConfigs)
    for (const auto& s : shapes)
      for (int layout = 0; layout < 4; ++layout) {
        check(regex, DType::bf16, s[0], s[1], s[2], (layout & 1) != 0, (layout & 2) != 0);
        if (HasFailure()) return;
      }
}

TEST_F(PingPong, F16AndBatches) {
  for (const char* regex : kConfigs) {
    check(regex, DType::f16, 1000, 1024, 3000, false, true);
    if (HasFailure()) return;
    check(regex, DType::bf16, 500, 704, 2000, false, true, 5);  // tiles numbered across the batch
    if (HasFailure()) return;
  }
}

// addmm through a ping-pong config: the epilogue (bias, activation) peels each tile's first K block.
TEST_F(PingPong, AddmmBiasAndActivation) {
  const int64_t M = 2000, N = 2056, K = 1032;
  for (const char* regex : kConfigs) {
    SCOPED_TRACE(regex);
    Options o = backend_only("persistent_tma");
    o.choice_regex = regex;
    Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng, true);
    Matrix b = make_matrix(DType::bf16, K, N, true, 8, rng, true);
    Matrix bias = make_matrix(DType::bf16, 1, N, false, 8, rng, true);
    Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng, false);
    TensorView bias_row = TensorView::contiguous(bias.dev->ptr, DType::bf16, {N});
    addmm(bias_row, a.view(), b.view(), out.view(), 1.0f, 1.0f, Activation::relu, o);
    cuda_ok(cudaDeviceSynchronize(), "addmm");
    std::vector<float> ref = reference_gemm(a, b, M, N, K);
    for (int64_t r = 0; r < M; ++r)
      for (int64_t c = 0; c < N; ++c) {
        float& v = ref[r * N + c];
        v = std::max(0.0f, v + bias.get(0, 0, c));
      }
    const Check chk = compare(out, ref);
    EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
    EXPECT_EQ(chk.padding_touched, 0);
    EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
  }
}

}  // namespace
}  // namespace tmagemm::testing
