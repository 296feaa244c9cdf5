// accuracy_floor_test.cpp (GPU) — the tuner's accuracy floor: every real choice of every backend passes it across
// output types and K (the measured errors are printed: they calibrate tune/benchmark.hpp's bound), and a
// deliberately less accurate candidate (a split-K whose two partial sums are rounded to the bf16 output before they
// are added, as a cuBLASLt split-K with an output-type reduction does) is dropped unless
// Options::allow_reduced_precision_reduction is set.
#include <gtest/gtest.h>

#include <random>

#include "gpu/gpu_util.hpp"
#include "tune/benchmark.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

// out = bf16(bf16(A[:, :K/2] @ B[:K/2]) + bf16(A[:, K/2:] @ B[K/2:])), the halves run by a real choice.
class SplitKInOutputType final : public choices::Choice {
 public:
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "test_split_k"; }
  std::string can_implement(const GemmProblem& p, const runtime::DeviceInfo&) const override {
    if (p.out.dtype != DType::bf16 || p.a.dtype != DType::bf16 || p.batch != 1 || p.k % 16 != 0)
      return "test choice: bf16 in and out, batch 1, K a multiple of 16";
    return {};
  }
  void precompile(const GemmProblem&, int) const override {}
  std::size_t workspace_bytes(const GemmProblem& p) const override {
    return static_cast<std::size_t>(2 * p.m * p.n) * 2 + (32u << 20);
  }
  void launch(const GemmProblem& p, cudaStream_t stream, const Options&, void* workspace) const override {
    char* ws = static_cast<char*>(workspace);
    void* halves[2] = {ws + (32u << 20), ws + (32u << 20) + p.m * p.n * 2};
    for (int h = 0; h < 2; ++h) {
      GemmProblem sub = p;
      sub.k = p.k / 2;
      sub.a.cols = sub.b.rows = sub.k;
      sub.a.data = static_cast<const char*>(p.a.data) + h * sub.k * p.a.col_stride * 2;
      sub.b.data = static_cast<const char*>(p.b.data) + h * sub.k * p.b.row_stride * 2;
      sub.out.data = halves[h];
      sub.out.row_stride = p.n;
      sub.out.col_stride = 1;
      Options inner = Options::defaults_only();
      inner.cublaslt = false;
      inner.skinny = false;
      inner.fallback = false;
      for (const auto& c : tune::enumerate(sub, inner))
        if (c.reason.empty() && std::string(c.choice->backend()) == "persistent_tma") {
          c.choice->launch(sub, stream, inner, ws);
          break;
        }
    }
    jit::KernelSpec spec;
    spec.name = "test_add_bf16_halves";
    spec.header = "reference.cuh";
    spec.kernel = "add_halves";
    spec.extra_source = R"(
__global__ void add_halves(const unsigned short* x, const unsigned short* y, unsigned short* out, int M, int N,
                           long long rs, long long cs) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= M * N) return;
  const float v = tmagemm::kernels::load_as_float<0>(x, i) + tmagemm::kernels::load_as_float<0>(y, i);
  const unsigned int u = __float_as_uint(v);
  out[(i / N) * rs + (i % N) * cs] = static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
})";
    CUfunction fn = jit::load(spec, p.device, 0);
    const void* x = halves[0];
    const void* y = halves[1];
    void* out = const_cast<void*>(p.out.data);
    int M = static_cast<int>(p.m), N = static_cast<int>(p.n);
    long long rs = p.out.row_stride, cs = p.out.col_stride;
    void* params[] = {&x, &y, &out, &M, &N, &rs, &cs};
    CUlaunchConfig cfg{};
    cfg.gridDimX = static_cast<unsigned>((p.m * p.n + 255) / 256);
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 256;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = reinterpret_cast<CUstream>(stream);
    runtime::check_cu(runtime::driver().launch_kernel_ex(&cfg, fn, params, nullptr), "add_halves");
  }

 private:
  std::string name_ = "test_split_k_bf16_reduction";
};

class AccuracyFloor : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
  }
  void TearDown() override {
    tune::set_extra_choices_for_testing({});
    tune::forget_in_memory();
  }
  std::mt19937 rng_{31337};
};

TEST_F(AccuracyFloor, EveryRealChoicePassesAcrossOutputTypesAndK) {
  struct Shape {
    int64_t m, n;
  };
  for (const Shape s : {Shape{256, 256}, Shape{32, 512}})
    for (const DType out_t : {DType::bf16, DType::f16, DType::f32})
      for (const int64_t K : {64, 704, 16384}) {
        const DType in = out_t == DType::f16 ? DType::f16 : DType::bf16;
        SCOPED_TRACE(fmt::format("{}x{}x{} {}->{}", s.m, s.n, K, to_string(in), to_string(out_t)));
        Matrix a = make_matrix(in, s.m, K, false, 8, rng_, true);
        Matrix b = make_matrix(in, K, s.n, true, 8, rng_, true);
        Matrix out = make_matrix(out_t, s.m, s.n, false, 8, rng_, false);
        const GemmProblem p = make_mm_problem(a.view(), b.view(), out.view());
        Options o = Options::defaults_only();
        std::vector<choices::ChoicePtr> usable;
        for (const auto& c : tune::enumerate(p, o))
          if (c.reason.empty()) usable.push_back(c.choice);
        ASSERT_FALSE(usable.empty());
        const tune::Tuned t = tune::benchmark(p, o, usable);
        std::string report;
        for (const auto& [name, err] : t.errors) {
          report += fmt::format(" {}={:.3g} ({:.2f} of floor)", name, err, err / t.floor_error);
          EXPECT_LE(err, t.error_bound) << name;
        }
        std::printf("[ accuracy ] %lldx%lldx%lld %s->%s floor %.3g bound %.3g (%.2f of floor):%s\n",
                    static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(K),
                    to_string(in), to_string(out_t), t.floor_error, t.error_bound, t.error_bound / t.floor_error,
                    report.c_str());
        EXPECT_EQ(t.errors.size(), usable.size());
      }
}

TEST_F(AccuracyFloor, SplitKWithAnOutputTypeReductionIsDropped) {
  const auto split = std::make_shared<SplitKInOutputType>();
  tune::set_extra_choices_for_testing({split});
  const int64_t M = 256, N = 264, K = 704;
  Matrix a = make_matrix(DType::bf16, M, K, false, 8, rng_, true);
  Matrix b = make_matrix(DType::bf16, K, N, false, 8, rng_, true);
  Matrix out = make_matrix(DType::bf16, M, N, false, 8, rng_, false);
  const GemmProblem p = make_mm_problem(a.view(), b.view(), out.view());
  for (const bool allow : {false, true}) {
    SCOPED_TRACE(fmt::format("allow_reduced_precision_reduction = {}", allow));
    Options o = Options::defaults_only();
    o.allow_reduced_precision_reduction = allow;
    o.choice_regex = "test_split_k|persistent_tma_128x128x64_s6_c2_g8$";
    std::vector<choices::ChoicePtr> usable;
    for (const auto& c : tune::enumerate(p, o))
      if (c.reason.empty()) usable.push_back(c.choice);
    ASSERT_EQ(usable.size(), 2u);
    ::testing::internal::CaptureStderr();
    const tune::Tuned t = tune::benchmark(p, o, usable);
    const std::string log = ::testing::internal::GetCapturedStderr();
    double split_err = -1, tma_err = -1;
    for (const auto& [name, err] : t.errors) (name == split->name() ? split_err : tma_err) = err;
    std::printf("[ accuracy ] split-K in bf16: %.3g (%.2f of floor), persistent TMA %.3g (%.2f), bound %.3g\n",
                split_err, split_err / t.floor_error, tma_err, tma_err / t.floor_error, t.error_bound);
    EXPECT_GT(split_err, 1.3 * t.floor_error);  // the candidate is measurably less accurate
    EXPECT_LE(tma_err, t.error_bound);
    bool timed = false;
    for (const auto& tm : t.timings) timed = timed || tm.choice == split->name();
    if (allow) {
      EXPECT_TRUE(timed) << log;
      EXPECT_EQ(log.find("less accurate than the accuracy floor"), std::string::npos) << log;
    } else {
      EXPECT_FALSE(timed) << log;
      EXPECT_NE(log.find("dropped test_split_k_bf16_reduction (less accurate than the accuracy floor"),
                std::string::npos)
          << log;
      EXPECT_NE(t.winner->name(), split->name());
    }
  }
  // Through the public call: the result is right and the split-K candidate is not the winner.
  Options o = Options::defaults_only();
  o.choice_regex = "test_split_k|persistent_tma_128x128x64_s6_c2_g8$";
  ::testing::internal::CaptureStderr();
  mm(a.view(), b.view(), out.view(), o);
  cuda_ok(cudaDeviceSynchronize(), "mm");
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(tune::choose(p, o)->name(), "persistent_tma_128x128x64_s6_c2_g8");
  const Check chk = compare(out, reference_gemm(a, b, M, N, K));
  EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
}

}  // namespace
}  // namespace tmagemm::testing
