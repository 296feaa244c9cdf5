// addmm_test.cpp (GPU) — addmm with torch's semantics, out = act(beta * bias + alpha * (a @ b)), through every
// backend that takes it: every bias shape ((1,N), (M,1), (M,N), and (M,N) views with a stride-0 dimension) x every
// activation x output dtype, on ragged sizes; in place (out is bias); beta = 0 with NaN in bias; K = 0; a misaligned
// problem through the fallback; M <= 64 through skinny. Reference: the fp32 GEMM, then bias and activation in double.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "gpu/gpu_util.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

double activation(Activation act, double x) {
  switch (act) {
    case Activation::relu: return x < 0 ? 0 : x;
    case Activation::gelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::gelu_tanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::silu: return x / (1 + std::exp(-x));
    case Activation::sigmoid: return 1 / (1 + std::exp(-x));
    default: return x;
  }
}

enum class BiasShape { row, col, full, row_broadcast };  // (1,N), (M,1), (M,N), (M,N) with row stride 0

struct Backend {
  const char* name;
  Options options;
};

Backend only(const char* name) {
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  o.persistent_tma = std::string(name) == "persistent_tma";
  o.skinny = std::string(name) == "skinny";
  o.fallback = std::string(name) == "fallback";
  o.cublaslt = std::string(name) == "cublaslt";
  return {name, o};
}

class Addmm : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
  }
  void TearDown() override { tune::forget_in_memory(); }

  // Runs one addmm and compares with the reference; returns the selected backend.
  std::string run(const Options& o, DType out_t, int64_t M, int64_t N, int64_t K, BiasShape shape, Activation act,
                  float alpha, float beta, int64_t a_ld_multiple = 8, bool in_place = false, bool nan_bias = false) {
    SCOPED_TRACE(fmt::format("{}x{}x{} out {} bias {} act {} alpha {} beta {}{}", M, N, K, to_string(out_t),
                             static_cast<int>(shape), to_string(act), alpha, beta, in_place ? " in place" : ""));
    Matrix a = make_matrix(DType::bf16, M, K, false, a_ld_multiple, rng_, true);
    Matrix b = make_matrix(DType::bf16, K, N, false, 8, rng_, true);
    Matrix out = make_matrix(out_t, M, N, false, 8, rng_, false);
    const int64_t br = shape == BiasShape::row ? 1 : M, bc = shape == BiasShape::col ? 1 : N;
    Matrix bias = make_matrix(in_place ? out_t : DType::bf16, br, bc, false, 8, rng_, true);
    if (nan_bias) {
      const uint16_t nan = 0x7fc1;
      for (std::size_t i = 0; i + 1 < bias.host.size(); i += 2) std::memcpy(bias.host.data() + i, &nan, 2);
      bias.upload();
    }
    TensorView bias_view = bias.view();
    if (shape == BiasShape::row_broadcast) {  // an (M,N) view of one row
      bias_view.sizes[0] = M;
      bias_view.strides[0] = 0;
    }
    if (in_place) bias_view = out.view();
    std::vector<float> ref = K > 0 ? reference_gemm(a, b, M, N, K) : std::vector<float>(M * N, 0.0f);
    if (in_place) {  // out holds the bias values
      bias = make_matrix(out_t, M, N, false, 8, rng_, true);
      out.host = bias.host;
      out.upload();
    }
    for (int64_t r = 0; r < M; ++r)
      for (int64_t c = 0; c < N; ++c) {
        double bv = 0;
        if (beta != 0) {
          const int64_t rr = shape == BiasShape::row || shape == BiasShape::row_broadcast ? 0 : r;
          const int64_t cc = shape == BiasShape::col ? 0 : c;
          bv = bias.get(0, in_place ? r : rr, in_place ? c : cc);
        }
        ref[r * N + c] = static_cast<float>(activation(act, beta * bv + alpha * static_cast<double>(ref[r * N + c])));
      }
    addmm(bias_view, a.view(), b.view(), out.view(), beta, alpha, act, o);
    cuda_ok(cudaDeviceSynchronize(), "addmm");
    const Check chk = compare(out, ref);
    EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
    EXPECT_EQ(chk.padding_touched, 0);
    EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
    EXPECT_TRUE(chk.first_bad.empty()) << chk.first_bad;
    std::string selected;
    for (const auto& c : explain_addmm(bias_view, a.view(), b.view(), out.view(), beta, alpha, act, o).choices)
      if (c.selected) selected = c.backend;
    return selected;
  }
  std::mt19937 rng_{1717};
};

constexpr Activation kActs[] = {Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh,
                                Activation::silu, Activation::sigmoid};

TEST_F(Addmm, EveryBiasShapeActivationAndOutputThroughOurBackends) {
  struct Size {
    const char* backend;
    int64_t m, n, k, a_ld;
  };
  for (const Size s : {Size{"persistent_tma", 200, 136, 264, 8}, Size{"skinny", 24, 264, 512, 8},
                       Size{"fallback", 88, 72, 37, 1}})
    for (const DType out_t : {DType::bf16, DType::f32})
      for (const Activation act : kActs)
        for (const BiasShape shape : {BiasShape::row, BiasShape::col, BiasShape::full, BiasShape::row_broadcast}) {
          const Backend be = only(s.backend);
          EXPECT_EQ(run(be.options, out_t, s.m, s.n, s.k, shape, act, 1.0f, 1.0f, s.a_ld), s.backend);
          if (HasFailure()) return;
        }
}

TEST_F(Addmm, AlphaBetaInPlaceNanBiasAndKZero) {
  for (const char* name : {"persistent_tma", "skinny", "fallback"}) {
    const Backend be = only(name);
    const int64_t M = std::string(name) == "skinny" ? 40 : 168;
    run(be.options, DType::bf16, M, 248, 136, BiasShape::row, Activation::gelu_tanh, 0.5f, 2.0f);
    run(be.options, DType::bf16, M, 248, 136, BiasShape::full, Activation::relu, 1.0f, 0.75f, 8, /*in_place=*/true);
    run(be.options, DType::bf16, M, 248, 136, BiasShape::full, Activation::silu, 1.5f, 0.0f, 8, false,
        /*nan_bias=*/true);
    if (HasFailure()) return;
  }
  const Backend be = only("persistent_tma");
  run(be.options, DType::bf16, 64, 96, 0, BiasShape::row, Activation::gelu, 1.0f, 0.5f);  // act(beta * bias)
  run(be.options, DType::f32, 64, 96, 0, BiasShape::full, Activation::sigmoid, 1.0f, 1.0f);
}

TEST_F(Addmm, TunedCallPicksACorrectChoiceAndCublasLtWhereItsEpilogueMatches) {
  FreshTuningDb db;
  Options o = Options::defaults_only();
  o.tuning = Tuning::benchmark;
  for (const Activation act : {Activation::none, Activation::relu, Activation::gelu_tanh, Activation::silu})
    run(o, DType::bf16, 512, 1024, 512, BiasShape::row, act, 1.0f, 1.0f);
  // cuBLASLt alone: its BIAS / RELU_BIAS / GELU_BIAS epilogues (gelu_tanh), and beta = 0 without bias.
  const Backend lt = only("cublaslt");
  for (const Activation act : {Activation::none, Activation::relu, Activation::gelu_tanh})
    EXPECT_EQ(run(lt.options, DType::bf16, 264, 392, 136, BiasShape::row, act, 1.0f, 1.0f), "cublaslt");
  EXPECT_EQ(run(lt.options, DType::bf16, 264, 392, 136, BiasShape::row, Activation::relu, 2.0f, 0.0f, 8, false, true),
            "cublaslt");
  // silu has no cuBLASLt epilogue: explain says why.
  Matrix a = make_matrix(DType::bf16, 64, 64, false, 8, rng_, true);
  Matrix b = make_matrix(DType::bf16, 64, 64, false, 8, rng_, true);
  Matrix bias = make_matrix(DType::bf16, 1, 64, false, 8, rng_, true);
  Matrix out = make_matrix(DType::bf16, 64, 64, false, 8, rng_, false);
  bool said = false;
  for (const auto& c :
       explain_addmm(bias.view(), a.view(), b.view(), out.view(), 1.0f, 1.0f, Activation::silu, lt.options).choices)
    said = said || (c.backend == "cublaslt" && !c.applicable && c.reason.find("silu") != std::string::npos);
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace tmagemm::testing
