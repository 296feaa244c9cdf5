// skinny_test.cpp — correctness of the skinny (split-K, swap-AB TMA + WGMMA) backend on a GPU: every config, split
// count and multicast group (A shared by 2 or 4 CTAs), every layout of A and B, M from 1 to 64 (both padded widths), ragged N, K tails and K splits that leave a
// cluster rank with no K blocks, f16 inputs, f32 / f16 / column-major / padded outputs, and batches through bmm.
// Inputs random, outputs poisoned with NaN, padding checked untouched, relative Frobenius error against an
// fp32-accumulated reference <= 1e-2. Each case names one choice by regex, so the kernel under test is the one run.
#include <gtest/gtest.h>

#include <random>

#include "choices/skinny.hpp"
#include "gpu/gpu_util.hpp"

namespace tmagemm::testing {
namespace {

Options only(const std::string& choice) {
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  o.choice_regex = "^" + choice + "$";
  return o;
}

std::vector<std::string> all_choices() {
  std::vector<std::string> names;
  for (const auto& c : choices::skinny_configs())
    if (c.in_bytes == 2)  // (the fp8 configs: ScaledMm.EveryFp8Choice)
    for (int s : choices::skinny_splits())
      for (int k : choices::skinny_casts())
        if (s * k <= 8) names.push_back(choices::skinny_choice_name(c, s, k));
  return names;
}

struct Case {
  DType in = DType::bf16, out = DType::bf16;
  int64_t m, n, k;
  bool a_col = false, b_col = false, out_col = false;
  int64_t out_ld_multiple = 8;
  int64_t batch = 1;
};

void run_case(const Case& c, const std::string& choice, std::mt19937& rng) {
  SCOPED_TRACE(fmt::format("{}: {}x{}x{} batch {} {} a:{} b:{} out:{} {} ld%{}", choice, c.m, c.n, c.k, c.batch,
                           to_string(c.in), c.a_col ? "col" : "row", c.b_col ? "col" : "row",
                           c.out_col ? "col" : "row", to_string(c.out), c.out_ld_multiple));
  const bool batched = c.batch > 1;
  Matrix a = make_matrix(c.in, c.m, c.k, c.a_col, 8, rng, true, c.batch, batched);
  Matrix b = make_matrix(c.in, c.k, c.n, c.b_col, 8, rng, true, c.batch, batched);
  Matrix out = make_matrix(c.out, c.m, c.n, c.out_col, c.out_ld_multiple, rng, false, c.batch, batched);
  if (batched)
    bmm(a.view(), b.view(), out.view(), only(choice));
  else
    mm(a.view(), b.view(), out.view(), only(choice));
  cuda_ok(cudaDeviceSynchronize(), "skinny");
  const auto ref = reference_gemm(a, b, c.m, c.n, c.k, c.batch);
  const Check chk = compare(out, ref, c.batch);
  EXPECT_EQ(chk.nan_count, 0) << "first bad: " << chk.first_bad;
  EXPECT_EQ(chk.padding_touched, 0);
  EXPECT_LE(chk.rel_err, 1e-2) << "first bad: " << chk.first_bad;
}

class Skinny : public ::testing::Test {
 protected:
  void SetUp() override { TMAGEMM_REQUIRE_GPU(); }
  std::mt19937 rng{4242};
};

TEST_F(Skinny, EveryChoiceEveryLayout) {
  // K = 2040: 32 blocks of 64 (16 of 128) with a tail, enough for 8 splits of either; N = 1000 is ragged for
  // every tile width and its tiles (16, 8 or 4) split into multicast groups of 4.
  for (const auto& choice : all_choices())
    for (int layout = 0; layout < 4; ++layout) {
      run_case(Case{DType::bf16, DType::bf16, 16, 1000, 2040, (layout & 1) != 0, (layout & 2) != 0}, choice, rng);
      if (HasFailure()) return;
    }
}

TEST_F(Skinny, RowsFrom1To64) {
  for (int64_t m : {1, 7, 31, 32, 33, 50, 64})
    for (const char* choice : {"skinny_128x64_st4_split4", "skinny_64x64_st12_split2", "skinny_128x64_st4_split2_cast4",
                               "skinny_64x64_st12_split1_cast4"}) {
      run_case(Case{DType::bf16, DType::bf16, m, 1000, 2048}, choice, rng);
      run_case(Case{DType::bf16, DType::bf16, m, 488, 1032, true, true}, choice, rng);
      if (HasFailure()) return;
    }
}

TEST_F(Skinny, SplitsWithAnEmptyRank) {
  // 9 K blocks over 4 CTAs take 3 each, and 17 over 8 take 3 each: the last rank gets none and adds zeros.
  for (const char* choice : {"skinny_128x64_st4_split4", "skinny_64x64_st12_split4"})
    run_case(Case{DType::bf16, DType::bf16, 24, 300, 9 * 64 - 8}, choice, rng);
  run_case(Case{DType::bf16, DType::bf16, 24, 300, 17 * 64 - 8}, "skinny_128x64_st4_split8", rng);
  run_case(Case{DType::bf16, DType::bf16, 24, 504, 9 * 64 - 8}, "skinny_128x64_st4_split4_cast2", rng);
  run_case(Case{DType::bf16, DType::bf16, 24, 504, 9 * 64 - 8, true, true}, "skinny_128x64_st4_split4_cast2", rng);
}

TEST_F(Skinny, InputAndOutputTypesAndStrides) {
  for (const char* choice : {"skinny_128x64_st4_split2", "skinny_64x64_st12_split8"}) {
    run_case(Case{DType::f16, DType::f16, 40, 392, 4096}, choice, rng);
    run_case(Case{DType::bf16, DType::f32, 9, 200, 1536, false, true}, choice, rng);
    run_case(Case{DType::f16, DType::f32, 64, 136, 2048, true, false, true}, choice, rng);  // column-major out
    run_case(Case{DType::bf16, DType::bf16, 17, 250, 1088, false, false, false, 64}, choice, rng);  // padded ld
  }
}

TEST_F(Skinny, BatchedThroughBmm) {
  for (const char* choice : {"skinny_128x64_st4_split1", "skinny_64x64_st12_split4", "skinny_64x64_st12_split2_cast4"})
    for (int layout = 0; layout < 4; ++layout)
      run_case(Case{DType::bf16, DType::bf16, 12, 200, 1100, (layout & 1) != 0, (layout & 2) != 0, false, 8, 3},
               choice, rng);
}

TEST_F(Skinny, LargeDecodeShape) {
  run_case(Case{DType::bf16, DType::bf16, 16, 14336, 4096}, "skinny_128x64_st4_split1", rng);
  run_case(Case{DType::bf16, DType::bf16, 64, 4096, 14336}, "skinny_128x64_st4_split8", rng);
}

}  // namespace
}  // namespace tmagemm::testing
