// scaled_mm_test.cpp (GPU) — FP8 scaled_mm with torch._scaled_mm's semantics, out = (a @ b) * scale_a * scale_b
// (+ bias), through each backend that takes it: persistent TMA, skinny (M <= 64), cuBLASLt where it applies, and the
// tuned call. a is (M,K) row-major, b (K,N) column-major, e4m3 or e5m2 (never both e5m2); scales tensorwise (1x1
// each) or rowwise ((M,1) and (1,N)); bias bf16/f16 (N). Inputs are random normal values rounded to the fp8 grid
// (never zeros); outputs are poisoned (NaN) before each call; the reference is computed in double on the host from
// the decoded fp8 values, then the scales, then the bias. Also: torch's own cases, fast against two-level
// accumulation at K = 16384 against the fp64 reference, the error cases (nothing written), and K = 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "choices/persistent_tma.hpp"
#include "choices/skinny.hpp"
#include "gpu/gpu_util.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

// fp8 byte -> float, exactly (e4m3: bias 7, no infinities, 0x7f/0xff NaN; e5m2: bias 15, IEEE-like).
float fp8_to_float(uint8_t v, DType t) {
  const int sign = v >> 7;
  const int ebits = t == DType::e4m3 ? 4 : 5, mbits = 7 - ebits, bias = t == DType::e4m3 ? 7 : 15;
  const int e = (v >> mbits) & ((1 << ebits) - 1), m = v & ((1 << mbits) - 1);
  float f;
  if (t == DType::e4m3 && e == 15 && m == 7) return NAN;
  if (t == DType::e5m2 && e == 31) return m ? NAN : (sign ? -INFINITY : INFINITY);
  if (e == 0)
    f = std::ldexp(static_cast<float>(m), 1 - bias - mbits);
  else
    f = std::ldexp(static_cast<float>((1 << mbits) + m), e - bias - mbits);
  return sign ? -f : f;
}

// float -> the nearest finite fp8 value (ties to the even code), saturating: a search over the sorted finite values.
struct Fp8Grid {
  std::vector<std::pair<float, uint8_t>> values;  // finite, sorted by value
  explicit Fp8Grid(DType t) {
    for (int v = 0; v < 256; ++v) {
      const float f = fp8_to_float(static_cast<uint8_t>(v), t);
      if (std::isfinite(f) && !(f == 0.0f && v == 0x80)) values.push_back({f, static_cast<uint8_t>(v)});
    }
    std::sort(values.begin(), values.end());
  }
  uint8_t encode(float x) const {
    auto it = std::lower_bound(values.begin(), values.end(), std::make_pair(x, uint8_t{0}));
    if (it == values.end()) return values.back().second;
    if (it == values.begin()) return it->second;
    auto lo = it - 1;
    const float dl = x - lo->first, dh = it->first - x;
    if (dl < dh) return lo->second;
    if (dh < dl) return it->second;
    return (lo->second & 1) == 0 ? lo->second : it->second;
  }
};

const Fp8Grid& grid_of(DType t) {
  static const Fp8Grid e4m3(DType::e4m3), e5m2(DType::e5m2);
  return t == DType::e4m3 ? e4m3 : e5m2;
}

// A dense fp8 matrix: a (M,K) row-major or b (K,N) column-major, both stored as rows x K bytes.
struct Fp8Matrix {
  DType dtype;
  int64_t rows, k;
  std::vector<uint8_t> host;
  std::vector<float> value;  // decoded
  std::unique_ptr<DeviceBuffer> dev;
};

Fp8Matrix make_fp8(DType t, int64_t rows, int64_t k, std::mt19937& rng) {
  Fp8Matrix x{t, rows, k, {}, {}, nullptr};
  std::normal_distribution<float> dist(0.0f, 1.0f);
  x.host.resize(static_cast<std::size_t>(std::max<int64_t>(rows * k, 1)));
  x.value.resize(x.host.size());
  for (std::size_t i = 0; i < x.host.size(); ++i) {
    x.host[i] = grid_of(t).encode(dist(rng));
    x.value[i] = fp8_to_float(x.host[i], t);
  }
  x.dev = std::make_unique<DeviceBuffer>(x.host.size());
  cuda_ok(cudaMemcpy(x.dev->ptr, x.host.data(), x.host.size(), cudaMemcpyHostToDevice), "upload fp8");
  return x;
}

struct FloatVec {
  std::vector<float> host;
  std::unique_ptr<DeviceBuffer> dev;
};
FloatVec make_scales(int64_t n, std::mt19937& rng) {
  FloatVec v;
  std::uniform_real_distribution<float> dist(0.5f, 2.0f);
  v.host.resize(static_cast<std::size_t>(n));
  for (auto& s : v.host) s = dist(rng);
  v.dev = std::make_unique<DeviceBuffer>(v.host.size() * 4);
  cuda_ok(cudaMemcpy(v.dev->ptr, v.host.data(), v.host.size() * 4, cudaMemcpyHostToDevice), "upload scales");
  return v;
}

struct Case {
  std::string backend;  // expected to run it ("" for the tuned call: any)
  Options options;
  int64_t m = 0, n = 0, k = 0;
  DType a_t = DType::e4m3, b_t = DType::e4m3, out = DType::bf16;
  bool rowwise = false, fast = false;
  int bias = -1;  // -1 none, else bf16 (0) or f16 (1)
  double bound() const {
    // The output type's rounding with margin; f32: the fp8 tensor core's accumulation (fast: over all of K).
    if (out == DType::bf16) return 8e-3;
    if (out == DType::f16) return 2e-3;
    return fast ? 2e-2 : 2e-3;
  }
  std::string label() const {
    return fmt::format("{} {}x{}x{} {}x{} -> {} {}{}{}", backend.empty() ? "tuned" : backend, m, n, k,
                       to_string(a_t), to_string(b_t), to_string(out), rowwise ? "rowwise" : "tensorwise",
                       fast ? " fast" : " two-level", bias < 0 ? "" : bias == 0 ? " bias bf16" : " bias f16");
  }
};

struct Outcome {
  std::string error, selected;
  Check check;
};

Outcome run_case(const Case& c, uint32_t seed) {
  Outcome res;
  try {
    std::mt19937 rng(seed);
    Fp8Matrix a = make_fp8(c.a_t, c.m, c.k, rng);
    Fp8Matrix b = make_fp8(c.b_t, c.n, c.k, rng);  // b^T stored N x K: b is (K,N) column-major
    FloatVec sa = make_scales(c.rowwise ? c.m : 1, rng), sb = make_scales(c.rowwise ? c.n : 1, rng);
    const DType bias_t = c.bias == 1 ? DType::f16 : DType::bf16;
    Matrix bias = make_matrix(bias_t, 1, c.n, false, 8, rng, true);
    Matrix out = make_matrix(c.out, c.m, c.n, false, 8, rng, false);  // poisoned
    const TensorView av = TensorView::contiguous(a.dev->ptr, c.a_t, {c.m, c.k});
    const TensorView bv = TensorView::contiguous(b.dev->ptr, c.b_t, {c.n, c.k}).t();
    const TensorView sav = TensorView::contiguous(sa.dev->ptr, DType::f32, {c.rowwise ? c.m : 1, 1});
    const TensorView sbv = TensorView::contiguous(sb.dev->ptr, DType::f32, {1, c.rowwise ? c.n : 1});
    const TensorView biasv = bias.view();
    const TensorView* bias_arg = c.bias >= 0 ? &biasv : nullptr;
    for (const auto& ch : explain_scaled_mm(av, bv, sav, sbv, bias_arg, out.view(), c.fast, c.options).choices)
      if (ch.selected) res.selected = ch.backend;
    scaled_mm(av, bv, sav, sbv, bias_arg, out.view(), c.fast, c.options);
    cuda_ok(cudaDeviceSynchronize(), "scaled_mm sync");
    std::vector<float> ref(static_cast<std::size_t>(c.m * c.n));
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < c.k; ++kk)
          acc += static_cast<double>(a.value[i * c.k + kk]) * static_cast<double>(b.value[j * c.k + kk]);
        acc *= static_cast<double>(sa.host[c.rowwise ? i : 0]) * static_cast<double>(sb.host[c.rowwise ? j : 0]);
        if (c.bias >= 0) acc += bias.get(0, 0, j);
        ref[i * c.n + j] = static_cast<float>(acc);
      }
    res.check = compare(out, ref);
  } catch (const std::exception& e) {
    res.error = e.what();
  }
  return res;
}

// Runs the cases on `threads` host threads (each has its own inputs; the kernel variants then compile in parallel)
// and checks each.
void run_and_check(const std::vector<Case>& cases, unsigned threads = 8) {
  std::vector<Outcome> outcomes(cases.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<std::size_t>(threads, cases.size()); ++t)
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < cases.size(); i = next++) outcomes[i] = run_case(cases[i], 1000 + i);
    });
  for (auto& t : pool) t.join();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const Outcome& o = outcomes[i];
    SCOPED_TRACE(c.label());
    ASSERT_EQ(o.error, "");
    if (!c.backend.empty()) EXPECT_EQ(o.selected, c.backend);
    EXPECT_EQ(o.check.nan_count, 0) << o.check.first_bad;
    EXPECT_EQ(o.check.padding_touched, 0);
    EXPECT_LE(o.check.rel_err, c.bound()) << o.check.first_bad;
  }
}

class ScaledMm : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
  }
  void TearDown() override { tune::forget_in_memory(); }
};

// torch's test cases: (M,K,N) in {(16,16,32), (16,32,32), (1024,1024,512)} x bias / none x fast / two-level x out bf16 /
// f32 (no bias with f32), tensorwise and rowwise; on each backend that takes the shape.
TEST_F(ScaledMm, TorchCasesOnEveryBackend) {
  std::vector<Case> cases;
  // cuBLASLt's FP8 choice too: every one of these cases is inside its rules (K-major, 16-byte rows, a bias of the
  // output's type, rowwise on CUDA >= 12.9).
  for (const char* backend : {"persistent_tma", "skinny", "cublaslt"})
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{16, 16, 32}, {16, 32, 32}, {1024, 1024, 512}}) {
      if (std::string(backend) == "skinny" && m > 64) continue;
      for (bool rowwise : {false, true})
        for (bool fast : {true, false})
          for (DType out : {DType::bf16, DType::f32})
            for (int bias : {-1, 0}) {
              if (bias >= 0 && out == DType::f32) continue;
              Case c;
              c.backend = backend;
              c.options = backend_only(backend);
              c.m = m, c.n = n, c.k = k, c.rowwise = rowwise, c.fast = fast, c.out = out, c.bias = bias;
              cases.push_back(c);
            }
    }
  run_and_check(cases);
}

// Sizes around the tiles' edges: M in {1, 3, 33, 257, 1024} x K in {16, 32, 1024} x N in {16, 2048}; mixed fp8 types,
// f16 outputs and f16 bias on some.
TEST_F(ScaledMm, RaggedSizesTypesAndOutputs) {
  std::vector<Case> cases;
  int i = 0;
  for (int64_t m : {1, 3, 33, 257, 1024})
    for (int64_t k : {16, 32, 1024})
      for (int64_t n : {16, 2048}) {
        for (const char* backend : {"persistent_tma", "skinny"}) {
          if (std::string(backend) == "skinny" && m > 64) continue;
          Case c;
          c.backend = backend;
          c.options = backend_only(backend);
          c.m = m, c.n = n, c.k = k;
          c.rowwise = i % 2 == 0;
          c.fast = i % 3 != 0;
          c.out = i % 5 == 0 ? DType::f32 : i % 5 == 1 ? DType::f16 : DType::bf16;
          c.bias = c.out == DType::f32 ? -1 : i % 4 == 0 ? 1 : i % 4 == 1 ? 0 : -1;
          if (i % 7 == 3) c.a_t = DType::e5m2;
          if (i % 7 == 5) c.b_t = DType::e5m2;
          cases.push_back(c);
          ++i;
        }
      }
  run_and_check(cases);
}

// Every fp8 config of persistent TMA (clusters, direct and TMA stores, two-level) and every fp8 skinny config with
// split and multicast, each by its name (Options::choice_regex), on ragged shapes: a cluster CTA's tile past M, K
// tails, N tails.
TEST_F(ScaledMm, EveryFp8Choice) {
  std::vector<Case> cases;
  for (const auto& cfg : choices::persistent_tma_configs()) {
    if (cfg.in_bytes != 1) continue;
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{300, 528, 1008}, {1, 80, 144}, {2200, 3008, 272}})
      for (bool fast : {true, false}) {
        if (fast == false && cfg.promote == 0) continue;
        Case c;
        c.backend = "persistent_tma";
        c.options = Options::defaults_only();
        c.options.tuning = Tuning::heuristic;
        c.options.choice_regex = "^" + cfg.name() + "$";
        c.m = m, c.n = n, c.k = k, c.fast = fast, c.rowwise = m % 2 == 0;
        c.out = cfg.store_tma ? DType::bf16 : DType::f32;
        c.bias = cfg.store_tma && k != 144 ? 0 : -1;
        cases.push_back(c);
      }
  }
  for (const auto& cfg : choices::skinny_configs()) {
    if (cfg.in_bytes != 1) continue;
    for (int split : {1, 2})
      for (int cast : {1, 2})
        for (bool fast : {true, false}) {
          Case c;
          c.backend = "skinny";
          c.options = Options::defaults_only();
          c.options.tuning = Tuning::heuristic;
          c.options.choice_regex = "^" + choices::skinny_choice_name(cfg, split, cast) + "$";
          c.m = fast ? 24 : 40, c.n = 2 * cfg.bn * cast - 16, c.k = 2064, c.fast = fast, c.rowwise = split == 2;
          c.bias = cast == 2 ? 1 : -1;
          if (!fast && cfg.bn / 64 * 64 > 128) c.m = 24;  // two-level fits 32 padded rows only on wide tiles
          cases.push_back(c);
        }
  }
  run_and_check(cases);
}

// The tuned call (benchmark mode): every candidate checked against the accuracy floor, the winner correct.
TEST_F(ScaledMm, TunedCallPicksACorrectChoice) {
  FreshTuningDb db;
  std::vector<Case> cases;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{512, 1024, 512}, {48, 2048, 1024}, {2048, 2048, 2048}})
    for (bool fast : {true, false}) {
      Case c;
      c.options = Options::defaults_only();
      c.options.tuning = Tuning::benchmark;
      c.m = m, c.n = n, c.k = k, c.fast = fast, c.rowwise = !fast, c.bias = fast ? 0 : -1;
      cases.push_back(c);
    }
  run_and_check(cases, 1);  // one thread: each tuning times its candidates with the GPU to itself
}

// Two-level accumulation is measurably more accurate than fast accumulation at K = 16384 (f32 out, fp64 reference).
TEST_F(ScaledMm, TwoLevelAccumulationIsMoreAccurateAtLongK) {
  for (const char* backend : {"persistent_tma", "skinny"}) {
    double err[2] = {0, 0};
    for (bool fast : {true, false}) {
      Case c;
      c.backend = backend;
      c.options = backend_only(backend);
      c.m = std::string(backend) == "skinny" ? 32 : 256, c.n = 256, c.k = 16384, c.fast = fast, c.out = DType::f32;
      const Outcome o = run_case(c, 77);
      ASSERT_EQ(o.error, "") << c.label();
      EXPECT_EQ(o.selected, backend);
      EXPECT_EQ(o.check.nan_count, 0);
      err[fast ? 0 : 1] = o.check.rel_err;
    }
    std::printf("scaled_mm accuracy %s K=16384 f32 out: fast %.3e, two-level %.3e\n", backend, err[0], err[1]);
    RecordProperty(std::string(backend) + "_fast", fmt::format("{:.3e}", err[0]));
    RecordProperty(std::string(backend) + "_two_level", fmt::format("{:.3e}", err[1]));
    EXPECT_LT(err[1], err[0] / 2) << backend << ": fast " << err[0] << ", two-level " << err[1];
  }
}

// Bad input: nothing is written (out stays poisoned); K = 0: out = bias (or zeros).
TEST_F(ScaledMm, ErrorsWriteNothingAndKZeroGivesTheBias) {
  std::mt19937 rng(5);
  {  // K = 15
    Fp8Matrix a = make_fp8(DType::e4m3, 16, 15, rng), b = make_fp8(DType::e4m3, 32, 15, rng);
    FloatVec s = make_scales(1, rng);
    Matrix out = make_matrix(DType::bf16, 16, 32, false, 8, rng, false);
    const auto sv = TensorView::contiguous(s.dev->ptr, DType::f32, {1, 1});
    try {
      scaled_mm(TensorView::contiguous(a.dev->ptr, DType::e4m3, {16, 15}),
                TensorView::contiguous(b.dev->ptr, DType::e4m3, {32, 15}).t(), sv, sv, nullptr, out.view(), true,
                backend_only("persistent_tma"));
      ADD_FAILURE() << "K = 15 was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("divisible by 16"), std::string::npos) << e.what();
    }
    const Check c = compare(out, std::vector<float>(16 * 32, 0.0f));
    EXPECT_EQ(c.nan_count, 16 * 32);  // untouched poison
  }
  {  // rowwise scales swapped on (M,K,N) = (233,32,128): scale_a (1,N), scale_b (M,1)
    Fp8Matrix a = make_fp8(DType::e4m3, 233, 32, rng), b = make_fp8(DType::e4m3, 128, 32, rng);
    FloatVec sa = make_scales(128, rng), sb = make_scales(233, rng);
    Matrix out = make_matrix(DType::bf16, 233, 128, false, 8, rng, false);
    try {
      scaled_mm(TensorView::contiguous(a.dev->ptr, DType::e4m3, {233, 32}),
                TensorView::contiguous(b.dev->ptr, DType::e4m3, {128, 32}).t(),
                TensorView::contiguous(sa.dev->ptr, DType::f32, {1, 128}),
                TensorView::contiguous(sb.dev->ptr, DType::f32, {233, 1}), nullptr, out.view(), true);
      ADD_FAILURE() << "swapped rowwise scales were accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("Invalid scaling configuration"), std::string::npos) << e.what();
    }
    const Check c = compare(out, std::vector<float>(233 * 128, 0.0f));
    EXPECT_EQ(c.nan_count, 233 * 128);
  }
  {  // K = 0 with a bias: out = bias; without: zeros
    Fp8Matrix a = make_fp8(DType::e4m3, 40, 0, rng), b = make_fp8(DType::e4m3, 64, 0, rng);
    FloatVec s = make_scales(1, rng);
    const auto sv = TensorView::contiguous(s.dev->ptr, DType::f32, {1, 1});
    Matrix bias = make_matrix(DType::bf16, 1, 64, false, 8, rng, true);
    for (bool with_bias : {true, false}) {
      Matrix out = make_matrix(DType::bf16, 40, 64, false, 8, rng, false);
      const TensorView bv = bias.view();
      scaled_mm(TensorView::contiguous(a.dev->ptr, DType::e4m3, {40, 0}),
                TensorView::contiguous(b.dev->ptr, DType::e4m3, {64, 0}).t(), sv, sv, with_bias ? &bv : nullptr,
                out.view(), false);
      cuda_ok(cudaDeviceSynchronize(), "K = 0 sync");
      std::vector<float> ref(40 * 64, 0.0f);
      if (with_bias)
        for (int r = 0; r < 40; ++r)
          for (int j = 0; j < 64; ++j) ref[r * 64 + j] = bias.get(0, 0, j);
      const Check c = compare(out, ref);
      EXPECT_EQ(c.nan_count, 0) << c.first_bad;
      EXPECT_EQ(c.rel_err, 0.0) << c.first_bad;
    }
  }
}

}  // namespace
}  // namespace tmagemm::testing
