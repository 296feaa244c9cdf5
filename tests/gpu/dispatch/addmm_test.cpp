// addmm_test.cpp (GPU) — addmm with torch's semantics, out = act(beta * bias + alpha * (a @ b)), through every
// backend that takes it. The grid tests run, per backend and size class (small, ragged, large), every bias shape
// ((1,N) strided, (M,1) strided, (M,N) row- or column-major, an (M,N) view of one row with row stride 0, one element
// as (1) or (1,1)) x every
// activation x every layout of a, b and out x every output dtype (bias types bf16, f16 and f32 among them); the
// fallback's sizes are misaligned for TMA. Then alpha/beta, in place (out is bias), beta = 0 with NaN in bias, K = 0,
// and the tuned call with cuBLASLt where its epilogue matches. Reference: the fp32 GEMM (kernels/reference.cuh), then
// bias and activation in double on the host; the bound on the relative error is the output type's rounding.
//
// The cases of a grid run on several host threads at once (each case has its own inputs and checks; the GPU work is
// serialised on the legacy stream), so that the many kernel variants compile in parallel on a first run.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

#include "choices/cublaslt.hpp"
#include "choices/persistent_tma.hpp"
#include "gpu/gpu_util.hpp"
#include "runtime/device.hpp"
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

// (1,N), (M,1), (M,N), (M,N) with row stride 0, one element ((1) or (1,1): every element adds it, as torch.addmm)
enum class BiasShape { row, col, full, row_broadcast, scalar };
const char* to_string(BiasShape s) {
  switch (s) {
    case BiasShape::row: return "(1,N)";
    case BiasShape::col: return "(M,1)";
    case BiasShape::full: return "(M,N)";
    case BiasShape::scalar: return "one element";
    default: return "(M,N) row-stride-0";
  }
}

constexpr Activation kActs[] = {Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh,
                                Activation::silu, Activation::sigmoid};
constexpr BiasShape kShapes[] = {BiasShape::row, BiasShape::col, BiasShape::full, BiasShape::row_broadcast,
                                 BiasShape::scalar};

struct Case {
  std::string backend;  // the backend expected to run it ("" when any may)
  Options options;
  DType in = DType::bf16, out = DType::bf16, bias_t = DType::bf16;
  int64_t m = 0, n = 0, k = 0, ld_multiple = 8;
  bool a_col = false, b_col = false, out_col = false, bias_col = false;
  BiasShape shape = BiasShape::row;
  Activation act = Activation::none;
  float alpha = 1.0f, beta = 1.0f;
  bool in_place = false, nan_bias = false;

  std::string label() const {
    return fmt::format("{} {}x{}x{} {}{}{} in {} out {} bias {} {}{} act {} alpha {} beta {}{}{}", backend, m, n, k,
                       a_col ? 'c' : 'r', b_col ? 'c' : 'r', out_col ? 'c' : 'r', to_string(in), to_string(out),
                       to_string(bias_t), to_string(shape), bias_col ? " col-major" : "", to_string(act), alpha,
                       beta, in_place ? " in place" : "", nan_bias ? " NaN bias" : "");
  }
  // RMS relative error allowed: the output type's rounding (half an ulp, RMS about ulp/3.5) with margin; f32: the
  // fp32 accumulation order against the reference's.
  double bound() const { return out == DType::bf16 ? 6e-3 : out == DType::f16 ? 1e-3 : 2e-5; }
};

struct Outcome {
  std::string error;     // an exception from the call or the checks' setup
  std::string selected;  // backend explain_addmm reports as selected
  Check check;
};

void fill_nan(Matrix& x) {
  const std::size_t e = x.elem();
  for (std::size_t i = 0; i + e <= x.host.size(); i += e) {
    if (x.dtype == DType::f32) {
      const uint32_t nan = 0x7fc00001u;
      std::memcpy(x.host.data() + i, &nan, 4);
    } else {
      const uint16_t nan = x.dtype == DType::bf16 ? 0x7fc1 : 0x7e01;
      std::memcpy(x.host.data() + i, &nan, 2);
    }
  }
  x.upload();
}

Outcome run_case(const Case& c, uint32_t seed) {
  Outcome res;
  try {
    std::mt19937 rng(seed);
    Matrix a = make_matrix(c.in, c.m, c.k, c.a_col, c.ld_multiple, rng, true);
    Matrix b = make_matrix(c.in, c.k, c.n, c.b_col, c.ld_multiple, rng, true);
    // In place, out holds the bias values; otherwise it is poisoned.
    Matrix out = make_matrix(c.out, c.m, c.n, c.out_col, c.ld_multiple, rng, c.in_place);
    const bool one = c.shape == BiasShape::scalar;
    const int64_t br = c.shape == BiasShape::row || c.shape == BiasShape::row_broadcast || one ? 1 : c.m;
    const int64_t bc = c.shape == BiasShape::col || one ? 1 : c.n;
    // A (1,N) bias stored column-major, or an (M,1) bias stored row-major, has element stride 8 (ld_multiple 8
    // along its length-1 dimension); the other order packs it.
    Matrix bias = make_matrix(c.bias_t, br, bc, c.bias_col, 8, rng, true);
    if (c.nan_bias) fill_nan(bias);
    TensorView bias_view = c.in_place ? out.view() : bias.view();
    if (c.shape == BiasShape::row_broadcast && !c.in_place) {
      bias_view.sizes[0] = c.m;
      bias_view.strides[0] = 0;
    }
    if (one && c.bias_col && !c.in_place) {  // the rank-1 (1) form (torch's (1,); a 0-dim tensor in Python)
      bias_view.rank = 1;
      bias_view.sizes[0] = 1;
      bias_view.strides[0] = 1;
    }
    std::vector<float> ref = c.k > 0 ? reference_gemm(a, b, c.m, c.n, c.k)
                                     : std::vector<float>(static_cast<std::size_t>(c.m * c.n), 0.0f);
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t col = 0; col < c.n; ++col) {
        double bv = 0;
        if (c.beta != 0)
          bv = c.in_place ? out.get(0, r, col) : bias.get(0, br == 1 ? 0 : r, bc == 1 ? 0 : col);
        float& x = ref[r * c.n + col];
        x = static_cast<float>(activation(c.act, c.beta * bv + c.alpha * static_cast<double>(x)));
      }
    addmm(bias_view, a.view(), b.view(), out.view(), c.beta, c.alpha, c.act, c.options);
    cuda_ok(cudaStreamSynchronize(c.options.stream), "addmm");
    res.check = compare(out, ref);
    // explain after the call: in benchmark mode the call has tuned, and explain reports the winner.
    for (const auto& ch :
         explain_addmm(bias_view, a.view(), b.view(), out.view(), c.beta, c.alpha, c.act, c.options).choices)
      if (ch.selected) res.selected = ch.backend;
  } catch (const std::exception& e) {
    res.error = e.what();
  }
  return res;
}

// Runs the cases on up to `max_threads` host threads, then checks each in order (at most 20 failures are reported).
void run_and_check(const std::vector<Case>& cases, unsigned max_threads = 16) {
  std::vector<Outcome> outcomes(cases.size());
  std::atomic<std::size_t> next{0};
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, max_threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < cases.size(); i = next++) outcomes[i] = run_case(cases[i], 1717 + i);
    });
  for (auto& t : pool) t.join();
  int failures = 0;
  for (std::size_t i = 0; i < cases.size() && failures < 20; ++i) {
    const Case& c = cases[i];
    const Outcome& o = outcomes[i];
    const Check& chk = o.check;
    const bool ok = o.error.empty() && (c.backend.empty() || o.selected == c.backend) && chk.nan_count == 0 &&
                    chk.padding_touched == 0 && chk.rel_err <= c.bound() && chk.first_bad.empty();
    if (ok) continue;
    ++failures;
    ADD_FAILURE() << c.label() << ": " << (o.error.empty() ? "" : "error: " + o.error + "; ") << "selected "
                  << o.selected << ", rel_err " << chk.rel_err << " (bound " << c.bound() << "), non-finite "
                  << chk.nan_count << ", padding touched " << chk.padding_touched << ", first bad " << chk.first_bad;
  }
  EXPECT_LT(failures, 20) << "more failures not shown";
}

// Every bias shape x activation x layout x output dtype on one backend and size. The output types come with their
// input type (f16 out: f16 inputs; bf16 and f32 out: bf16 inputs); the bias has the input type, or f32 for f32 out
// on every other bias shape.
std::vector<Case> grid(const std::string& backend, int64_t m, int64_t n, int64_t k, int64_t ld_multiple) {
  std::vector<Case> cases;
  for (const DType out : {DType::bf16, DType::f16, DType::f32})
    for (int layout = 0; layout < 8; ++layout)
      for (const Activation act : kActs)
        for (std::size_t s = 0; s < std::size(kShapes); ++s) {
          Case c;
          c.backend = backend;
          c.options = backend_only(backend);
          c.in = out == DType::f16 ? DType::f16 : DType::bf16;
          c.out = out;
          c.bias_t = out == DType::f32 && s % 2 == 1 ? DType::f32 : c.in;
          c.m = m, c.n = n, c.k = k, c.ld_multiple = ld_multiple;
          c.a_col = layout & 1, c.b_col = layout & 2, c.out_col = layout & 4;
          c.shape = kShapes[s];
          c.bias_col = (layout + static_cast<int>(act)) % 2 == 1;
          c.act = act;
          cases.push_back(c);
        }
  return cases;
}

struct GridParam {
  const char* backend;
  const char* size;  // small, ragged, large
  int64_t m, n, k, ld_multiple;
};

class AddmmGrid : public ::testing::TestWithParam<GridParam> {
 protected:
  void SetUp() override { TMAGEMM_REQUIRE_GPU(); }
};

TEST_P(AddmmGrid, EveryBiasShapeActivationLayoutAndOutputType) {
  const GridParam& p = GetParam();
  run_and_check(grid(p.backend, p.m, p.n, p.k, p.ld_multiple));
}

// Persistent TMA: K below one K block (TMA zero fill), ragged tiles, several waves. Skinny: M <= 64 with split-K.
// Fallback: odd extents and leading dimensions (no 16-byte row pitch, so no TMA).
INSTANTIATE_TEST_SUITE_P(
    Addmm, AddmmGrid,
    ::testing::Values(GridParam{"persistent_tma", "small", 40, 56, 24, 8},
                      GridParam{"persistent_tma", "ragged", 200, 136, 264, 8},
                      GridParam{"persistent_tma", "large", 1032, 1544, 1096, 8},
                      GridParam{"skinny", "small", 8, 40, 64, 8}, GridParam{"skinny", "ragged", 24, 264, 520, 8},
                      GridParam{"skinny", "large", 64, 2056, 4104, 8}, GridParam{"fallback", "small", 5, 9, 7, 1},
                      GridParam{"fallback", "ragged", 87, 72, 37, 1},
                      GridParam{"fallback", "large", 517, 389, 263, 1}),
    [](const ::testing::TestParamInfo<GridParam>& info) {
      return std::string(info.param.backend) + "_" + info.param.size;
    });

class Addmm : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
  }
  void TearDown() override { tune::forget_in_memory(); }
};

TEST_F(Addmm, AlphaBetaInPlaceNanBiasAndKZero) {
  std::vector<Case> cases;
  for (const char* name : {"persistent_tma", "skinny", "fallback"})
    for (int layout = 0; layout < 8; ++layout) {
      Case c;
      c.backend = name;
      c.options = backend_only(name);
      c.m = std::string(name) == "skinny" ? 40 : 168, c.n = 248, c.k = 136;
      c.a_col = layout & 1, c.b_col = layout & 2, c.out_col = layout & 4;
      Case x = c;  // alpha and beta
      x.act = Activation::gelu_tanh, x.alpha = 0.5f, x.beta = 2.0f;
      cases.push_back(x);
      x = c;  // in place: out is the (M,N) bias, in out's dtype and layout
      x.shape = BiasShape::full, x.act = Activation::relu, x.beta = 0.75f, x.in_place = true;
      cases.push_back(x);
      x.out = x.bias_t = DType::f32;
      cases.push_back(x);
      x = c;  // beta = 0: NaN in bias must not reach out
      x.shape = BiasShape::full, x.act = Activation::silu, x.alpha = 1.5f, x.beta = 0.0f, x.nan_bias = true;
      cases.push_back(x);
      x.shape = BiasShape::row, x.out = DType::f32, x.bias_t = DType::f32;
      cases.push_back(x);
    }
  // K = 0: out = act(beta * bias) on any backend (an epilogue-only kernel).
  for (const Activation act : kActs)
    for (const BiasShape shape : kShapes) {
      Case c;
      c.options = backend_only("persistent_tma");
      c.m = 64, c.n = 96, c.k = 0, c.shape = shape, c.act = act, c.beta = 0.5f;
      c.out = act == Activation::silu || act == Activation::sigmoid ? DType::f32 : DType::bf16;
      c.out_col = static_cast<int>(act) % 2 == 1;
      cases.push_back(c);
    }
  run_and_check(cases);
}

// Stream-K configs: a split tile is finished by the unit that arrives last, from the units' fp32 sums in the
// workspace, and the epilogue then runs on the reduced sums. 2000x3000x1000 and 1200x4000x1000 have partial last
// waves (split tiles) on every config; every bias shape, activations, alpha and beta.
TEST_F(Addmm, StreamKSplitTilesGetTheEpilogue) {
  std::vector<Case> cases;
  const char* configs[] = {"persistent_tma_128x256x64_s4_c2_g8_tmastore_sk",
                           "persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk",
                           "persistent_tma_128x128x64_s6_c2_g8_tmastore_sk"};
  for (std::size_t g = 0; g < std::size(configs); ++g)
    for (std::size_t s = 0; s < std::size(kShapes); ++s) {
      Case c;
      c.backend = "persistent_tma";
      c.options = backend_only("persistent_tma");
      c.options.choice_regex = fmt::format("^{}$", configs[g]);
      const bool wave = s % 2 == 1;
      c.m = wave ? 2000 : 1200, c.n = wave ? 3000 : 4000, c.k = 1000;
      c.b_col = (s / 2) % 2 == 1;
      c.shape = kShapes[s];
      c.act = kActs[(s + 2 * g) % std::size(kActs)];
      c.alpha = 0.75f, c.beta = 1.25f;
      cases.push_back(c);
    }
  run_and_check(cases, 4);
}

// Every 16-bit persistent-TMA config with an epilogue, on 8 SMs (sm_carveout) so that each CTA computes several
// tiles: with an epilogue, a tile's first K block is peeled (the epilogue writes the accumulators in place, and the
// next tile's first wgmma must overwrite them by a compile-time flag). K = 40 (the peeled block alone, a K tail) and
// K = 200; ragged M and N; bias shapes, activations, alpha and beta vary with the config.
TEST_F(Addmm, EveryPersistentTmaConfigLoopsOverTilesWithAnEpilogue) {
  std::vector<Case> cases;
  std::size_t i = 0;
  for (const auto& cfg : choices::persistent_tma_configs()) {
    if (cfg.in_bytes != 2) continue;  // (fp8: ScaledMm.EveryFp8Choice)
    for (const int64_t k : {40, 200}) {
      // (Cluster split-K refuses K of one block, each CTA of its pair needing one: a CPU test checks the rule.)
      if (cfg.split_k > 1 && k <= cfg.bk) continue;
      Case c;
      c.backend = "persistent_tma";
      c.options = backend_only("persistent_tma");
      c.options.choice_regex = fmt::format("^{}$", cfg.name());
      c.options.sm_carveout = runtime::device_info(0).sm_count - 8;
      c.m = 1000, c.n = 1032, c.k = k;
      c.b_col = i % 2 == 1;
      c.shape = kShapes[i % std::size(kShapes)];
      c.act = kActs[(i / 2) % std::size(kActs)];
      c.alpha = 0.75f, c.beta = 1.25f;
      cases.push_back(c);
      ++i;
    }
  }
  run_and_check(cases, 4);
}

// Every configuration of cuBLASLt's configuration search (choices/cublaslt.hpp) with each of cuBLASLt's epilogues it
// offers itself for: a (1,N) bias with none / relu / gelu_tanh (beta 1: cuBLASLt adds its bias unscaled) and a full
// bias as its C (beta 1.25), row-major B; with B column-major, the relu epilogue. Each configuration runs alone
// (its name as the choice regex), enumerated on the very problem it runs.
TEST_F(Addmm, EveryCublasLtSearchConfigurationWithItsEpilogue) {
  if (!choices::cublaslt_search_enabled()) GTEST_SKIP() << "TMAGEMM_CUBLASLT_SEARCH=0 in this environment";
  const int64_t m = 1000, n = 1032, k = 200;
  std::mt19937 rng(48);
  Matrix a = make_matrix(DType::bf16, m, k, false, 8, rng, true);
  Matrix out = make_matrix(DType::bf16, m, n, false, 8, rng, false);
  Matrix row_bias = make_matrix(DType::bf16, 1, n, false, 8, rng, true);
  Matrix full_bias = make_matrix(DType::bf16, m, n, false, 8, rng, true);
  struct Kind {
    bool b_col;
    BiasShape shape;
    Activation act;
  };
  const Kind kinds[] = {{false, BiasShape::row, Activation::none},
                        {false, BiasShape::row, Activation::relu},
                        {false, BiasShape::row, Activation::gelu_tanh},
                        {false, BiasShape::full, Activation::none},
                        {true, BiasShape::row, Activation::relu}};
  std::vector<Case> cases;
  for (const Kind& kind : kinds) {
    Matrix b = make_matrix(DType::bf16, kind.b_col ? n : k, kind.b_col ? k : n, false, 8, rng, true);
    const TensorView vb = kind.b_col ? view_of(b, 0, k, n, 1, k) : view_of(b, 0, k, n, n, 1);
    const bool full = kind.shape == BiasShape::full;
    const float beta = full ? 1.25f : 1.0f;
    std::size_t offered = 0;
    for (const auto& c : choices::cublaslt_backend().enumerate(
             make_addmm_problem(full ? full_bias.view() : row_bias.view(), a.view(), vb, out.view(), beta, 0.75f,
                                kind.act),
             runtime::device_info(0), Options::defaults_only())) {
      if (c->library_rank() >= 0 || c->name().rfind("cublaslt_a", 0) != 0) continue;  // not of the search
      ++offered;
      Case cs;
      cs.backend = "cublaslt";
      cs.options = backend_only("cublaslt");
      cs.options.choice_regex = fmt::format("^{}$", c->name());
      cs.m = m, cs.n = n, cs.k = k;
      cs.b_col = kind.b_col;
      cs.shape = kind.shape;
      cs.act = kind.act;
      cs.alpha = 0.75f, cs.beta = beta;
      cases.push_back(cs);
    }
    EXPECT_GT(offered, 0u) << "the search offered no configuration for " << to_string(kind.shape) << " "
                           << to_string(kind.act) << (kind.b_col ? " rc" : " rr");
  }
  run_and_check(cases, 1);
}

TEST_F(Addmm, TunedCallPicksACorrectChoiceAndCublasLtWhereItsEpilogueMatches) {
  FreshTuningDb db;
  std::vector<Case> cases;
  Case c;
  c.options = Options::defaults_only();
  c.options.tuning = Tuning::benchmark;
  c.m = 512, c.n = 1024, c.k = 512;
  for (const Activation act : {Activation::none, Activation::relu, Activation::gelu_tanh, Activation::silu}) {
    c.act = act;
    cases.push_back(c);
  }
  c.m = 48, c.n = 2048, c.k = 1024;  // M <= 64: skinny among the candidates
  cases.push_back(c);
  // cuBLASLt alone: its BIAS / RELU_BIAS / GELU_BIAS epilogues (gelu_tanh), and beta = 0 without reading bias.
  c.backend = "cublaslt";
  c.options = backend_only("cublaslt");
  c.m = 264, c.n = 392, c.k = 136;
  for (const Activation act : {Activation::none, Activation::relu, Activation::gelu_tanh}) {
    c.act = act;
    cases.push_back(c);
  }
  c.act = Activation::relu, c.alpha = 2.0f, c.beta = 0.0f, c.nan_bias = true;
  cases.push_back(c);
  c.act = Activation::none, c.alpha = 1.0f, c.beta = 0.5f, c.nan_bias = false, c.shape = BiasShape::full;
  cases.push_back(c);  // a full bias as cuBLASLt's C
  // One thread: each tuning times its candidates with the GPU to itself.
  run_and_check(cases, 1);

  // silu has no cuBLASLt epilogue: explain says why.
  std::mt19937 rng(1);
  Matrix a = make_matrix(DType::bf16, 64, 64, false, 8, rng, true);
  Matrix b = make_matrix(DType::bf16, 64, 64, false, 8, rng, true);
  Matrix bias = make_matrix(DType::bf16, 1, 64, false, 8, rng, true);
  Matrix out = make_matrix(DType::bf16, 64, 64, false, 8, rng, false);
  bool said = false;
  for (const auto& ch : explain_addmm(bias.view(), a.view(), b.view(), out.view(), 1.0f, 1.0f, Activation::silu,
                                      backend_only("cublaslt"))
                            .choices)
    said = said || (ch.backend == "cublaslt" && !ch.applicable && ch.reason.find("silu") != std::string::npos);
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace tmagemm::testing
