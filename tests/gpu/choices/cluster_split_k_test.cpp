// cluster_split_k_test.cpp — the persistent TMA kernel's cluster split-K configs on a GPU (kernels/cluster_split_k.cuh:
// two CTAs of a cluster on each tile, each over half of its K blocks, one consumer's sums sent to the peer through
// distributed shared memory): one tile in all, fewer tiles than clusters, several tiles a cluster (the exchange buffer
// handed back and forth), ragged M and N, K of two and three blocks and K tails, every operand layout, f16, batches,
// addmm's epilogue, outputs TMA cannot address (plain stores) — against an fp32-accumulated reference (relative
// Frobenius error <= 1e-2, poisoned outputs, padding untouched); two runs give the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "gpu/gpu_util.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

const char* kConfigs[] = {"^persistent_tma_128x128x64_s4_c2_g8_tmastore_ks2$"};

class ClusterSplitK : public ::testing::Test {
 protected:
  void SetUp() override { TMAGEMM_REQUIRE_GPU(); }
  std::mt19937 rng{91};

  static Options options(const char* regex) {
    Options o = backend_only("persistent_tma");
    o.choice_regex = regex;
    return o;
  }

  void check(const char* regex, DType in, int64_t m, int64_t n, int64_t k, bool a_col, bool b_col, int64_t batch = 1,
             int64_t out_ld_multiple = 8) {
    SCOPED_TRACE(fmt::format("{}x{}x{} batch {} {} a:{} b:{} out ld multiple {} {}", m, n, k, batch, to_string(in),
                             a_col ? "col" : "row", b_col ? "col" : "row", out_ld_multiple, regex));
    const Options o = options(regex);
    Matrix a = make_matrix(in, m, k, a_col, 8, rng, true, batch, batch > 1);
    Matrix b = make_matrix(in, k, n, b_col, 8, rng, true, batch, batch > 1);
    Matrix out = make_matrix(in, m, n, false, out_ld_multiple, rng, false, batch, batch > 1);
    if (batch > 1) {  // (the regex leaves one choice: a refusal would throw no_valid_choice, not fall back)
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
    EXPECT_TRUE(chk.first_bad.empty()) << chk.first_bad;  // a fragment without the peer's half is far off
  }
};

TEST_F(ClusterSplitK, EveryLayoutAndTileCount) {
  // (M, N, K): one tile in all (one cluster), fewer tiles than clusters (64 tiles of 128x128), several tiles a cluster
  // with ragged edges and a K tail (272 tiles of 128x128 on 66 clusters), K of two blocks (one each) and of three
  // (two and one) with tails, rows past M in the last tile (consumer 1 idle in both CTAs).
  const int64_t shapes[][3] = {{100, 120, 200}, {1000, 1000, 1000}, {2000, 2056, 1032}, {3000, 5000, 520},
                               {1536, 1536, 72}, {700, 1288, 136}, {1000, 3000, 4104}};
  for (const char* regex : kConfigs)
    for (const auto& s : shapes)
      for (int layout = 0; layout < 4; ++layout) {
        check(regex, DType::bf16, s[0], s[1], s[2], (layout & 1) != 0, (layout & 2) != 0);
        if (HasFailure()) return;
      }
}

TEST_F(ClusterSplitK, F16BatchesAndPlainStores) {
  for (const char* regex : kConfigs) {
    check(regex, DType::f16, 1000, 1024, 3000, false, true);
    if (HasFailure()) return;
    check(regex, DType::bf16, 500, 704, 2000, false, true, 5);  // tiles numbered across the batch
    if (HasFailure()) return;
    check(regex, DType::bf16, 1000, 1001, 1000, false, false, 1, 1);  // out's rows 2002 bytes apart: plain stores
    if (HasFailure()) return;
  }
}

// addmm: the receiving consumer applies the epilogue to the summed tile (bias by column and by row, activations).
TEST_F(ClusterSplitK, AddmmBiasAndActivation) {
  const int64_t M = 1000, N = 1000, K = 2056;
  for (const char* regex : kConfigs)
    for (bool row_bias : {false, true}) {
      SCOPED_TRACE(fmt::format("{} bias by {}", regex, row_bias ? "row" : "column"));
      Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng, true);
      Matrix b = make_matrix(DType::bf16, K, N, true, 8, rng, true);
      // (M, 1) stored column-major, (1, N) row-major: both packed.
      Matrix bias = make_matrix(DType::bf16, row_bias ? M : 1, row_bias ? 1 : N, row_bias, 1, rng, true);
      Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng, false);
      const Activation act = row_bias ? Activation::gelu_tanh : Activation::relu;
      addmm(bias.view(), a.view(), b.view(), out.view(), 1.0f, 1.0f, act, options(regex));
      cuda_ok(cudaDeviceSynchronize(), "addmm");
      std::vector<float> ref = reference_gemm(a, b, M, N, K);
      for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) {
          float& v = ref[r * N + c];
          v += row_bias ? bias.get(0, r, 0) : bias.get(0, 0, c);
          v = row_bias ? static_cast<float>(0.5 * v * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))))
                       : std::max(0.0f, v);
        }
      const Check chk = compare(out, ref);
      EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
      EXPECT_EQ(chk.padding_touched, 0);
      EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
      EXPECT_TRUE(chk.first_bad.empty()) << chk.first_bad;
    }
}

TEST_F(ClusterSplitK, TwoRunsGiveTheSameBits) {
  // Several tiles a cluster: each exchange waits for the peer to have read the one before.
  for (const char* regex : kConfigs) {
    Matrix a = make_matrix(DType::bf16, 2000, 8192, false, 8, rng, true);
    Matrix b = make_matrix(DType::bf16, 8192, 2056, true, 8, rng, true);
    Matrix out = make_matrix(DType::bf16, 2000, 2056, false, 8, rng, false);
    const auto runs = outputs_of_runs(out, 3, [&] { mm(a.view(), b.view(), out.view(), options(regex)); });
    EXPECT_EQ(runs[0], runs[1]) << regex;
    EXPECT_EQ(runs[0], runs[2]) << regex;
    const Check chk = compare(out, reference_gemm(a, b, 2000, 2056, 8192));
    EXPECT_LE(chk.rel_err, 1e-2) << regex << ": " << chk.first_bad;
    EXPECT_TRUE(chk.first_bad.empty()) << regex << ": " << chk.first_bad;
  }
}

}  // namespace
}  // namespace tmagemm::testing
