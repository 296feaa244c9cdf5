// nonfinite_test.cpp (GPU) — Inf and NaN in a and b propagate as in torch.mm, on the first call of a problem (which
// tunes it on the tuner's own inputs, never on these values) and on later calls, through every backend.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "gpu/gpu_util.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

struct Case {
  const char* backend;
  int64_t m, n, k;
};

void set(Matrix& x, int64_t r, int64_t c, float v) {
  const int64_t o = x.offset(0, r, c);
  const uint16_t h = x.dtype == DType::bf16 ? float_to_bf16(v) : float_to_f16(v);
  std::memcpy(x.host.data() + o * 2, &h, 2);
}

class NonFinite : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
  }
  void TearDown() override { tune::forget_in_memory(); }
  std::mt19937 rng_{777};
};

TEST_P(NonFinite, PropagateLikeTorchOnFirstAndLaterCalls) {
  const Case c = GetParam();
  FreshTuningDb db;  // the first call must tune (on the tuner's inputs, not these)
  Options o = Options::defaults_only();
  o.tuning = Tuning::benchmark;
  o.persistent_tma = std::string(c.backend) == "persistent_tma";
  o.skinny = std::string(c.backend) == "skinny";
  o.fallback = std::string(c.backend) == "fallback";
  o.pad_tma = std::string(c.backend) == "pad_tma";
  o.cublaslt = std::string(c.backend) == "cublaslt";
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (int call = 0; call < 2; ++call) {
    SCOPED_TRACE(fmt::format("{} call {}", c.backend, call));
    Matrix a = make_matrix(DType::bf16, c.m, c.k, false, 8, rng_, true);
    Matrix b = make_matrix(DType::bf16, c.k, c.n, call == 1, 8, rng_, true);
    // a: +Inf, -Inf and NaN in three rows; b: NaN and +Inf in two columns; a row with +Inf and -Inf (NaN out).
    set(a, 1, 3 + call, inf);
    set(a, 2, 5, -inf);
    set(a, 4, 0, nan);
    set(a, 6, 1, inf);
    set(a, 6, 2, -inf);
    set(b, 7, 3, nan);
    set(b, c.k - 1, 5 + call, inf);
    a.upload();
    b.upload();
    Matrix out = make_matrix(DType::bf16, c.m, c.n, false, 8, rng_, false);
    if (call == 1) {  // a later call: same problem key as call 0 except b's layout, so tune once more, then again
      mm(a.view(), b.view(), out.view(), o);
      cuda_ok(cudaDeviceSynchronize(), "mm");
    }
    mm(a.view(), b.view(), out.view(), o);
    cuda_ok(cudaDeviceSynchronize(), "mm");
    out.download();
    int64_t mismatches = 0;
    std::string first;
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double ref = 0;
        for (int64_t k = 0; k < c.k; ++k) ref += static_cast<double>(a.get(0, i, k)) * b.get(0, k, j);
        const float got = out.get(0, i, j);
        const bool ok = std::isnan(ref)   ? std::isnan(got)
                        : std::isinf(ref) ? got == static_cast<float>(ref)
                                          : std::isfinite(got) && std::fabs(got - ref) <= 0.05 * (1 + std::fabs(ref));
        if (!ok && mismatches++ == 0) first = fmt::format("({}, {}) = {} (torch semantics: {})", i, j, got, ref);
      }
    EXPECT_EQ(mismatches, 0) << first;
    const Explanation e = explain_mm(a.view(), b.view(), out.view(), o);
    for (const auto& ch : e.choices)
      if (ch.selected) EXPECT_EQ(ch.backend, c.backend) << e.to_string();
  }
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, NonFinite,
                         ::testing::Values(Case{"persistent_tma", 136, 200, 264}, Case{"skinny", 24, 520, 392},
                                           Case{"fallback", 72, 104, 56}, Case{"cublaslt", 144, 96, 328}),
                         [](const auto& info) { return std::string(info.param.backend); });

}  // namespace
}  // namespace tmagemm::testing
