// bmm_test.cpp (GPU) — bmm (out(B,M,N) = a(B,M,K) @ b(B,K,N)) through each backend that takes batches (persistent
// TMA on rank-3 descriptors, skinny for M <= 64, the fallback, cuBLASLt strided-batched) and through the tuned call:
// every layout, B = 1, ragged M/N/K, a batch stride of 0 on either operand (broadcast), a large batch count.
// Outputs are poisoned first; each result is compared with the fp32 reference, padding must stay untouched.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "gpu/gpu_util.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

class Bmm : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
  }
  void TearDown() override { tune::forget_in_memory(); }
  std::mt19937 rng{2026};
};

struct Case {
  int64_t batch, m, n, k;
  bool a_col = false, b_col = false;
  bool broadcast_a = false, broadcast_b = false;  // that operand is one matrix seen with batch stride 0
};

// A rank-3 view of `m` (batch 1 when broadcast: stride 0 over `batch` matrices).
TensorView batched(const Matrix& m, int64_t batch, bool broadcast) {
  TensorView v = m.view();
  if (broadcast) {
    v.sizes[0] = batch;
    v.strides[0] = 0;
  }
  return v;
}

// Runs one case with `options`; returns the choice that ran (from explain_bmm) for the caller's expectations.
std::string run_case(const Case& c, const Options& options, std::mt19937& rng) {
  SCOPED_TRACE(fmt::format("{}x{}x{}x{} a_col={} b_col={} bcast_a={} bcast_b={}", c.batch, c.m, c.n, c.k, c.a_col,
                           c.b_col, c.broadcast_a, c.broadcast_b));
  Matrix a = make_matrix(DType::bf16, c.m, c.k, c.a_col, 8, rng, true, c.broadcast_a ? 1 : c.batch, true);
  Matrix b = make_matrix(DType::bf16, c.k, c.n, c.b_col, 8, rng, true, c.broadcast_b ? 1 : c.batch, true);
  Matrix out = make_matrix(DType::bf16, c.m, c.n, false, 8, rng, false, c.batch, true);
  const TensorView va = batched(a, c.batch, c.broadcast_a), vb = batched(b, c.batch, c.broadcast_b);
  bmm(va, vb, out.view(), options);
  cuda_ok(cudaDeviceSynchronize(), "bmm");
  std::string ran = "?";
  for (const ChoiceReport& r : explain_bmm(va, vb, out.view(), options).choices)
    if (r.selected) ran = r.name;
  const Check chk = compare(out, reference_gemm(a, b, c.m, c.n, c.k, c.batch, c.broadcast_a, c.broadcast_b), c.batch);
  EXPECT_EQ(chk.nan_count, 0) << ran << ": " << chk.first_bad;
  EXPECT_EQ(chk.padding_touched, 0) << ran;
  EXPECT_LE(chk.rel_err, 1e-2) << ran << ": " << chk.first_bad;
  return ran;
}

TEST_F(Bmm, EveryBackendEveryLayout) {
  for (const std::string backend : {"persistent_tma", "fallback", "cublaslt"})
    for (int layout = 0; layout < 4; ++layout) {
      SCOPED_TRACE(backend);
      const std::string ran =
          run_case({3, 200, 136, 72, (layout & 1) != 0, (layout & 2) != 0}, backend_only(backend), rng);
      EXPECT_EQ(ran.rfind(backend, 0), 0u) << ran;
    }
}

TEST_F(Bmm, SkinnyTakesBatches) {
  for (int layout = 0; layout < 4; ++layout) {
    const std::string ran =
        run_case({5, 48, 520, 1000, (layout & 1) != 0, (layout & 2) != 0}, backend_only("skinny"), rng);
    EXPECT_EQ(ran.rfind("skinny", 0), 0u) << ran;
  }
}

TEST_F(Bmm, BatchOfOneAndRaggedExtents) {
  // One backend may refuse a tiny or ragged case, but only with its reason (no_valid_choice); with every backend on
  // each case must run.
  for (const Case& c : {Case{1, 256, 256, 256}, Case{1, 1, 1, 1}, Case{2, 129, 65, 33}, Case{4, 1000, 24, 8},
                        Case{3, 17, 1025, 4100, true, false}, Case{2, 333, 512, 96, false, true}})
    for (const std::string backend : {"persistent_tma", "fallback", "cublaslt", ""}) {
      SCOPED_TRACE(backend.empty() ? "any" : backend);
      try {
        run_case(c, backend_only(backend), rng);
      } catch (const Error& e) {
        if (backend.empty() || e.code() != ErrorCode::no_valid_choice) throw;
        EXPECT_NE(std::string(e.what()).find(backend), std::string::npos) << e.what();
      }
    }
}

TEST_F(Bmm, BroadcastEitherOperand) {
  for (const Case& c :
       {Case{6, 128, 256, 192, false, false, true, false}, Case{6, 128, 256, 192, false, false, false, true},
        Case{4, 40, 300, 512, false, true, true, false}, Case{4, 40, 300, 512, false, false, false, true}})
    for (const std::string backend : {"persistent_tma", "skinny", "fallback", "cublaslt"}) {
      if (backend == "skinny" && c.m > 64) continue;
      SCOPED_TRACE(backend);
      run_case(c, backend_only(backend), rng);
    }
}

TEST_F(Bmm, LargeBatchCount) {
  // 4096 small matrices: the persistent scheduler walks (batch, tile) across the whole batch in one launch.
  for (const std::string backend : {"persistent_tma", "fallback", "cublaslt"}) {
    SCOPED_TRACE(backend);
    run_case({4096, 64, 64, 64}, backend_only(backend), rng);
  }
  run_case({1500, 96, 80, 128, true, false}, backend_only("persistent_tma"), rng);
}

TEST_F(Bmm, TunedCallIsRight) {
  FreshTuningDb db;
  for (const Case& c : {Case{8, 512, 512, 512}, Case{16, 64, 2048, 1024}, Case{4, 1000, 1000, 1000, true, true}})
    run_case(c, backend_only("", Tuning::benchmark), rng);
}

}  // namespace
}  // namespace tmagemm::testing
