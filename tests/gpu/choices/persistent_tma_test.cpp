// persistent_tma_test.cpp — correctness of mm through the persistent TMA + WGMMA backend on a GPU: every
// layout, bf16/f16, ragged and large sizes, K tails with block K 64 and 128, strided (padded) operands and
// outputs, f32/f16 outputs, TMA-store configs on outputs TMA cannot address. Inputs random, outputs poisoned with
// NaN, padding checked untouched, relative Frobenius error against an fp32-accumulated reference <= 1e-2. These
// tests exercise the kernel, so they run with the heuristic pick (or a regex naming one config) and only
// persistent-TMA choices; the tuner's own tests are in tests/gpu/tune.
#include <gtest/gtest.h>

#include <random>

#include "choices/persistent_tma.hpp"
#include "gpu/gpu_util.hpp"

namespace tmagemm::testing {
namespace {

// Options for kernel tests: persistent TMA only, no benchmarking.
Options kernel_options() { return backend_only("persistent_tma"); }

struct Case {
  DType in = DType::bf16, out = DType::bf16;
  int64_t m, n, k;
  bool a_col = false, b_col = false, out_col = false;
  int64_t ld_multiple = 8;   // elements; 8 x 2 bytes keeps every operand TMA-compatible
  int64_t out_ld_multiple = 8;
  std::string regex;
};

std::string describe(const Case& c) {
  return fmt::format("{}x{}x{} {} a:{} b:{} out:{}({}) ld%{} regex '{}'", c.m, c.n, c.k, to_string(c.in),
                     c.a_col ? "col" : "row", c.b_col ? "col" : "row", c.out_col ? "col" : "row",
                     to_string(c.out), c.ld_multiple, c.regex);
}

void run_case(const Case& c, std::mt19937& rng) {
  SCOPED_TRACE(describe(c));
  Matrix a = make_matrix(c.in, c.m, c.k, c.a_col, c.ld_multiple, rng, true);
  Matrix b = make_matrix(c.in, c.k, c.n, c.b_col, c.ld_multiple, rng, true);
  Matrix out = make_matrix(c.out, c.m, c.n, c.out_col, c.out_ld_multiple, rng, false);
  Options opt = kernel_options();
  opt.choice_regex = c.regex;
  mm(a.view(), b.view(), out.view(), opt);
  cuda_ok(cudaDeviceSynchronize(), "mm");
  const auto ref = reference_gemm(a, b, c.m, c.n, c.k);
  const Check chk = compare(out, ref);
  EXPECT_EQ(chk.nan_count, 0) << "first bad: " << chk.first_bad;
  EXPECT_EQ(chk.padding_touched, 0);
  EXPECT_LE(chk.rel_err, 1e-2) << "first bad: " << chk.first_bad;
}

class PersistentTma : public ::testing::Test {
 protected:
  void SetUp() override { TMAGEMM_REQUIRE_GPU(); }
  std::mt19937 rng{1234};
};

TEST_F(PersistentTma, AllLayoutsRaggedSizes) {
  const int64_t sizes[] = {1, 8, 64, 127, 168, 248, 1000};
  for (DType in : {DType::bf16, DType::f16})
    for (int layout = 0; layout < 4; ++layout)
      for (int64_t m : sizes)
        for (int64_t n : sizes)
          for (int64_t k : sizes) {
            Case c{in, in, m, n, k, (layout & 1) != 0, (layout & 2) != 0};
            run_case(c, rng);
            if (HasFailure()) return;  // one clear failure beats hundreds of copies
          }
}

TEST_F(PersistentTma, AllLayoutsLarge) {
  const int64_t shapes[][3] = {{4096, 4096, 4096}, {4096, 1, 4096}, {1, 4096, 4096}, {4096, 4096, 1},
                               {127, 4096, 1000},  {4096, 168, 88}, {1000, 1000, 4096}};
  for (int layout = 0; layout < 4; ++layout)
    for (const auto& s : shapes) {
      Case c{DType::bf16, DType::bf16, s[0], s[1], s[2], (layout & 1) != 0, (layout & 2) != 0};
      run_case(c, rng);
      if (HasFailure()) return;
    }
  Case f16{DType::f16, DType::f16, 4096, 4096, 4096, false, true};
  run_case(f16, rng);
}

TEST_F(PersistentTma, KTail88WithBlockK64And128) {
  for (const char* regex : {"x64_s", "x128_s"})
    for (int layout = 0; layout < 4; ++layout) {
      Case c{DType::bf16, DType::bf16, 300, 520, 88, (layout & 1) != 0, (layout & 2) != 0};
      c.regex = regex;
      run_case(c, rng);
      Options opt = kernel_options();
      opt.choice_regex = regex;
      Matrix a = make_matrix(DType::bf16, 300, 88, false, 8, rng, true);
      Matrix b = make_matrix(DType::bf16, 88, 520, false, 8, rng, true);
      Matrix o = make_matrix(DType::bf16, 300, 520, false, 8, rng, false);
      const Explanation e = explain_mm(a.view(), b.view(), o.view(), opt);
      bool selected_matches = false;
      for (const auto& ch : e.choices)
        if (ch.selected) selected_matches = ch.name.find(regex) != std::string::npos;
      EXPECT_TRUE(selected_matches) << e.to_string();
    }
}

TEST_F(PersistentTma, EachOperandTransposed168x88x248) {
  for (int layout = 0; layout < 4; ++layout)
    for (bool out_col : {false, true}) {
      Case c{DType::bf16, DType::bf16, 168, 248, 88, (layout & 1) != 0, (layout & 2) != 0, out_col};
      run_case(c, rng);
    }
}

// Every config of the table (clusters included) on shapes with ragged edges in every dimension, including
// an odd number of M blocks so that a cluster's second CTA gets a tile entirely past M.
TEST_F(PersistentTma, EveryConfigEveryLayout) {
  const int64_t shapes[][3] = {{300, 520, 1000}, {127, 256, 64}, {1, 72, 136}, {640, 384, 200}};
  for (const auto& cfg : choices::persistent_tma_configs())
    if (cfg.in_bytes == 2)  // (the fp8 configs: ScaledMm.EveryFp8Choice)
    for (int layout = 0; layout < 4; ++layout)
      for (const auto& s : shapes) {
        // (Cluster split-K refuses K of one block, each CTA of its pair needing one: a CPU test checks the rule.)
        if (cfg.split_k > 1 && s[2] <= cfg.bk) continue;
        Case c{DType::bf16, DType::bf16, s[0], s[1], s[2], (layout & 1) != 0, (layout & 2) != 0};
        c.regex = "^" + cfg.name() + "$";
        run_case(c, rng);
        if (HasFailure()) return;
      }
}

// Every config with more tiles than SMs, so that each CTA loops and stores a finished tile while it computes
// the next (K = 72: two K blocks, fewer than a tile's store pieces, and a K tail); ragged edges.
TEST_F(PersistentTma, EveryConfigLoopsOverTiles) {
  for (const auto& cfg : choices::persistent_tma_configs())
    if (cfg.in_bytes == 2)  // (the fp8 configs: ScaledMm.EveryFp8Choice)
    for (int layout = 0; layout < 4; ++layout)
      for (int64_t k : {72, 200}) {
        Case c{DType::bf16, DType::bf16, 2200, 3000, k, (layout & 1) != 0, (layout & 2) != 0};
        c.regex = "^" + cfg.name() + "$";
        run_case(c, rng);
        if (HasFailure()) return;
      }
}

TEST_F(PersistentTma, StridedViewsPaddedTo16) {
  for (int layout = 0; layout < 4; ++layout)
    for (int64_t s : {127, 168, 1000}) {
      Case c{DType::bf16, DType::bf16, s, s + 3, s - 5, (layout & 1) != 0, (layout & 2) != 0};
      c.ld_multiple = 16;
      c.out_ld_multiple = 16;
      run_case(c, rng);
    }
}

TEST_F(PersistentTma, OutputTypes) {
  for (DType in : {DType::bf16, DType::f16})
    for (DType out : {DType::bf16, DType::f16, DType::f32})
      for (int layout = 0; layout < 4; ++layout) {
        Case c{in, out, 333, 777, 1000, (layout & 1) != 0, (layout & 2) != 0};
        run_case(c, rng);
        Case odd{in, out, 65, 63, 127, (layout & 1) != 0, (layout & 2) != 0, true};
        odd.out_ld_multiple = 1;  // column-major output with an odd leading dimension: masked scalar stores
        run_case(odd, rng);
      }
}

// TMA-store configs on outputs TMA cannot address (kOutPlain: each staged chunk stored with plain realigned stores):
// out's ld N + 3, N odd (an odd row pitch), its base one element off, ragged M and N, f16; every TMA-store config that
// takes them, launched directly. Nothing outside the output view may change (check_choices_on_views).
TEST_F(PersistentTma, TmaStoreConfigsOnOutputsTmaCannotAddress) {
  struct Shape {
    int64_t m, n, k, out_ld, out_off;
    DType dt;
  };
  const Shape shapes[] = {{257, 384, 192, 387, 0, DType::bf16},
                          {200, 391, 128, 391, 0, DType::bf16},
                          {130, 520, 256, 528, 1, DType::bf16},
                          {129, 333, 64, 338, 3, DType::f16}};
  const auto& dev = runtime::device_info(0);
  for (const Shape& s : shapes) {
    SCOPED_TRACE(fmt::format("{}x{}x{} out ld {} offset {}", s.m, s.n, s.k, s.out_ld, s.out_off));
    const int64_t b_ld = (s.n + 7) / 8 * 8;  // A and B TMA-aligned
    Matrix sa = make_matrix(s.dt, s.m, s.k, false, 8, rng, true), sb = make_matrix(s.dt, s.k, b_ld, false, 8, rng, true);
    Matrix so = make_matrix(s.dt, s.m + 1, s.out_ld, false, 1, rng, false);
    const TensorView a = view_of(sa, 0, s.m, s.k, s.k, 1), b = view_of(sb, 0, s.k, s.n, b_ld, 1);
    const TensorView out = view_of(so, s.out_off, s.m, s.n, s.out_ld, 1);
    const GemmProblem p = make_mm_problem(a, b, out);
    std::vector<choices::ChoicePtr> tma_store;
    for (const auto& c : choices::persistent_tma_backend().enumerate(p, dev, Options::defaults_only()))
      // f16: the first config only (the kernel cache holds the other configs' plain variants for bf16)
      if (c->name().find("_tmastore") != std::string::npos &&
          (s.dt == DType::bf16 || c->name() == "persistent_tma_128x256x64_s4_c2_g8_tmastore"))
        tma_store.push_back(c);
    EXPECT_GE(check_choices_on_views(tma_store, a, b, so, out, false), s.dt == DType::bf16 ? 10 : 1);
  }
}

TEST_F(PersistentTma, KZeroWritesZerosAndEmptyIsNoop) {
  Matrix a = make_matrix(DType::bf16, 64, 0, false, 8, rng, true);
  Matrix b = make_matrix(DType::bf16, 0, 72, false, 8, rng, true);
  Matrix out = make_matrix(DType::bf16, 64, 72, false, 8, rng, false);
  mm(a.view(), b.view(), out.view(), kernel_options());
  cuda_ok(cudaDeviceSynchronize(), "mm");
  const Check chk = compare(out, std::vector<float>(64 * 72, 0.0f));
  EXPECT_EQ(chk.nan_count, 0);
  EXPECT_EQ(chk.rel_err, 0.0);
  EXPECT_EQ(chk.padding_touched, 0);

  Matrix a0 = make_matrix(DType::bf16, 0, 32, false, 8, rng, true);
  Matrix b0 = make_matrix(DType::bf16, 32, 40, false, 8, rng, true);
  Matrix o0 = make_matrix(DType::bf16, 0, 40, false, 8, rng, false);
  EXPECT_NO_THROW(mm(a0.view(), b0.view(), o0.view(), kernel_options()));
}

TEST_F(PersistentTma, MisalignedOperandHasNoValidChoiceWithReason) {
  // (21x11)@(11x31) f16: row strides of 22 and 62 bytes break TMA's 16-byte rule.
  Matrix a = make_matrix(DType::f16, 21, 11, false, 1, rng, true);
  Matrix b = make_matrix(DType::f16, 11, 31, false, 1, rng, true);
  Matrix out = make_matrix(DType::f16, 21, 31, false, 8, rng, false);
  Options opt = kernel_options();
  opt.fallback = false;
  opt.cublaslt = false;
  try {
    mm(a.view(), b.view(), out.view(), opt);
    FAIL() << "expected no_valid_choice";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::no_valid_choice);
    EXPECT_NE(std::string(e.what()).find("a: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("16"), std::string::npos) << e.what();
  }
  out.download();
  const Check untouched = compare(out, std::vector<float>(21 * 31, 0.0f));
  EXPECT_EQ(untouched.nan_count, 21 * 31) << "nothing may be written on an error path";
}

TEST_F(PersistentTma, BatchedThroughRank3Descriptors) {
  const int64_t B = 3, M = 200, N = 136, K = 72;
  for (int layout = 0; layout < 4; ++layout) {
    Matrix a = make_matrix(DType::bf16, M, K, (layout & 1) != 0, 8, rng, true, B, true);
    Matrix b = make_matrix(DType::bf16, K, N, (layout & 2) != 0, 8, rng, true, B, true);
    Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng, false, B, true);
    try {
      bmm(a.view(), b.view(), out.view(), kernel_options());
    } catch (const Error& e) {
      if (e.code() == ErrorCode::unsupported) GTEST_SKIP() << "bmm validation not available: " << e.what();
      throw;
    }
    cuda_ok(cudaDeviceSynchronize(), "bmm");
    const auto ref = reference_gemm(a, b, M, N, K, B);
    const Check chk = compare(out, ref, B);
    EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
    EXPECT_EQ(chk.padding_touched, 0);
    EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
  }
}

}  // namespace
}  // namespace tmagemm::testing
