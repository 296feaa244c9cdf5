// fallback.cpp — host side of the fallback backend: config table, can_implement, KernelSpec rendering, launch, and
// the backend's tuning rule (set aside on large problems that persistent TMA takes: its Backend::prune).
#include "choices/fallback.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "choices/epilogue_params.hpp"
#include "choices/kernel_spec.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"

namespace tmagemm::choices {

namespace {

// Mirrors kernels::FallbackParams (kernels/gemm_fallback.cuh).
struct FallbackParamsHost {
  const void* a;
  const void* b;
  long long a_rs, a_cs, a_bs;
  long long b_rs, b_cs, b_bs;
  int M, N, K;
  int batch;
};

int out_code(DType d) { return d == DType::bf16 ? 0 : d == DType::f16 ? 1 : d == DType::f32 ? 2 : -1; }

}  // namespace

std::string FallbackConfig::name() const {
  return fmt::format("fallback_{}x{}x{}_w{}x{}", bm, bn, bk, warps_m, warps_n);
}

std::size_t FallbackConfig::smem_bytes(int a_mode, int b_mode) const {
  constexpr int kPad = 8;  // kernels/gemm_fallback.cuh kFallbackPad
  auto tile = [&](int rows, int mode) { return static_cast<std::size_t>(mode == 1 ? bk * (rows + kPad) : rows * (bk + kPad)); };
  return 2 * 2 * (tile(bm, a_mode) + tile(bn, b_mode));
}

// Block M/N/K and warps (rows x columns of warps). Warp tiles: 64x32, 64x32 (deeper K slab: more loads in
// flight per barrier), 64x64, 32x64, 32x32.
const std::vector<FallbackConfig>& fallback_configs() {
  static const std::vector<FallbackConfig> table = {
      {128, 128, 32, 2, 4},
      {128, 128, 64, 2, 4},
      {128, 256, 32, 2, 4},
      {64, 128, 32, 2, 2},
      {64, 64, 32, 2, 2},
  };
  return table;
}

int fallback_a_mode(const Operand& a) { return a.col_stride == 1 ? 0 : a.row_stride == 1 ? 1 : 2; }
int fallback_b_mode(const Operand& b) { return b.row_stride == 1 ? 0 : b.col_stride == 1 ? 1 : 2; }

std::string fallback_can_implement(const GemmProblem& p, const FallbackConfig& c) {
  if (p.op != Op::mm && p.op != Op::bmm && p.op != Op::addmm)
    return fmt::format("op {} is not handled by the fallback template yet", to_string(p.op));
  if ((p.a.dtype != DType::bf16 && p.a.dtype != DType::f16) || p.a.dtype != p.b.dtype)
    return fmt::format("inputs must be both bf16 or both f16 (got {} and {})", to_string(p.a.dtype),
                       to_string(p.b.dtype));
  if (out_code(p.out.dtype) < 0) return fmt::format("output dtype {} is not bf16, f16 or f32", to_string(p.out.dtype));
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return "empty problem (M, N or K is 0) needs no GEMM kernel";
  const int64_t limit = int64_t{1} << 31;
  if (p.m >= limit || p.n >= limit || p.k >= limit) return "an extent is 2^31 or more";
  if (((p.m + c.bm - 1) / c.bm) * ((p.n + c.bn - 1) / c.bn) * p.batch >= limit)
    return fmt::format("2^31 or more tiles of {}x{} (all matrices of the batch)", c.bm, c.bn);
  if (p.batch > 65535) return "batch above 65535 (grid z limit)";
  for (const auto* o : {&p.a, &p.b})
    if (reinterpret_cast<std::uintptr_t>(o->data) % 2 != 0) return "an input base address is not 2-byte aligned";
  if (reinterpret_cast<std::uintptr_t>(p.out.data) % itemsize(p.out.dtype) != 0)
    return "the output base address is not aligned to its element size";
  return {};
}

namespace {

jit::KernelSpec make_spec(const FallbackConfig& c, bool f16, int out, int amode, int bmode,
                          const EpilogueSpec& epi = {}) {
  static const char* out_names[] = {"bf16", "f16", "f32"};
  const KernelConfig config{"TmagemmFallbackConfig",
                            {{int_field("kBM", c.bm), int_field("kBN", c.bn), int_field("kBK", c.bk),
                              int_field("kWarpsM", c.warps_m), int_field("kWarpsN", c.warps_n)},
                             {bool_field("kF16", f16)},
                             {int_field("kOut", out), int_field("kAMode", amode), int_field("kBMode", bmode)}}};
  const SmemCheck smem{"FallbackConfig::smem_bytes", "tmagemm::kernels::fallback_smem_bytes",
                       c.smem_bytes(amode, bmode)};
  return config_kernel_spec(
      fmt::format("{}_{}_a{}b{}_{}{}", c.name(), f16 ? "f16" : "bf16", amode, bmode, out_names[out], epi.suffix()),
      "gemm_fallback.cuh", "tmagemm::kernels::gemm_fallback", config, epi, &smem);
}

}  // namespace

jit::KernelSpec fallback_spec(const GemmProblem& p, const FallbackConfig& c) {
  return make_spec(c, p.a.dtype == DType::f16, out_code(p.out.dtype), fallback_a_mode(p.a), fallback_b_mode(p.b),
                   epilogue_spec(p));
}

std::vector<jit::KernelSpec> fallback_all_specs() {
  std::vector<jit::KernelSpec> specs;
  for (const auto& c : fallback_configs())
    for (bool f16 : {false, true})
      for (int out : {0, 1, 2})
        for (int am : {0, 1, 2})
          for (int bm : {0, 1, 2}) specs.push_back(make_spec(c, f16, out, am, bm));
  for (const EpilogueSpec& e : epilogue_samples())  // addmm: a sample of epilogues on the first config
    specs.push_back(make_spec(fallback_configs().front(), false, 0, 0, 0, e));
  return specs;
}

FallbackGrid fallback_grid(const GemmProblem& p, const FallbackConfig& c, int sm_count, int sm_carveout) {
  const int64_t tiles = ((p.n + c.bn - 1) / c.bn) * ((p.m + c.bm - 1) / c.bm);
  if (sm_carveout <= 0) return {tiles, p.batch};
  const int64_t sms = std::max(1, sm_count - sm_carveout);
  return {std::min(tiles * p.batch, sms), 1};
}

void fallback_launch(const GemmProblem& p, const FallbackConfig& c, cudaStream_t stream, int sm_carveout) {
  static KernelCache<std::tuple<const FallbackConfig*, DType, DType, int, int, int, int>> loaded;
  const int am = fallback_a_mode(p.a), bm = fallback_b_mode(p.b);
  const std::size_t smem = c.smem_bytes(am, bm);
  const CUfunction fn = loaded.get({&c, p.a.dtype, p.out.dtype, am, bm, p.device, epilogue_spec(p).code()}, p.device, smem,
                                   [&] { return fallback_spec(p, c); });
  FallbackParamsHost fp{p.a.data,          p.b.data,         p.a.row_stride,         p.a.col_stride,
                        p.a.batch_stride,  p.b.row_stride,   p.b.col_stride,         p.b.batch_stride,
                        static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k),
                        static_cast<int>(p.batch)};
  EpilogueParamsHost ep = epilogue_params(p);
  void* params[] = {&fp, &ep};
  const int sm_count = sm_carveout > 0 ? runtime::device_info(p.device).sm_count : 0;
  const FallbackGrid grid = fallback_grid(p, c, sm_count, sm_carveout);
  KernelLaunch launch(fn, stream, static_cast<unsigned>(c.threads()), smem);
  launch.set_grid(grid.x, 1, grid.z);  // grouped raster
  const CUlaunchConfig& cfg = launch.config();
  if (runtime::log_enabled("launch"))
    fmt::print(stderr, "tmagemm launch: {} grid {} x 1 x {} block {} smem {}\n", fallback_spec(p, c).name, cfg.gridDimX,
               cfg.gridDimZ, cfg.blockDimX, smem);
  launch.launch(params, "cuLaunchKernelEx(fallback)");
}

namespace {

class FallbackChoice final : public Choice {
 public:
  explicit FallbackChoice(const FallbackConfig& c) : config_(c), name_(c.name()) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "fallback"; }
  std::string can_implement(const GemmProblem& p, const runtime::DeviceInfo& d) const override {
    if (d.cc_major < 8) return fmt::format("needs sm_80 or newer (mma.sync bf16); {} is sm_{}{}", d.name, d.cc_major, d.cc_minor);
    if (auto r = fallback_can_implement(p, config_); !r.empty()) return r;
    const std::size_t smem = config_.smem_bytes(fallback_a_mode(p.a), fallback_b_mode(p.b));
    if (smem > d.smem_per_block_optin)
      return fmt::format("needs {} bytes of shared memory; the device allows {} per block", smem, d.smem_per_block_optin);
    return {};
  }
  void precompile(const GemmProblem& p, int device) const override {
    jit::compile(fallback_spec(p, config_), runtime::device_info(device).arch());
  }
  std::vector<jit::KernelSpec> kernel_specs(const GemmProblem& p) const override { return {fallback_spec(p, config_)}; }
  void launch(const GemmProblem& p, cudaStream_t stream, const Options& o, void*) const override {
    fallback_launch(p, config_, stream, o.sm_carveout);
  }

 private:
  const FallbackConfig& config_;
  std::string name_;
};

// The backend's prune (Backend::prune). The fallback template (mma.sync, no TMA) measured 0.22-0.32 of cuBLASLt on
// every aligned `llm` shape (docs/perf-notes.md, fallback v2): where a persistent-TMA choice (Choice::tma_tiles)
// applies and the problem is not tiny, it cannot win, and compiling and timing it costs ~2 s of a cold tune. It stays
// for what TMA refuses and for small problems, where launch overheads decide.
void prune(const GemmProblem& p, const runtime::DeviceInfo&, const Options&, std::vector<Candidate>& out) {
  bool tma_applies = false;
  for (const auto& c : out) tma_applies = tma_applies || (c.reason.empty() && c.choice->tma_tiles());
  const double volume = static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) * p.batch;
  if (tma_applies && volume > kFallbackMaxVolumeBesideTma)
    for (auto& c : out)
      if (c.reason.empty() && dynamic_cast<const FallbackChoice*>(c.choice.get()))
        c.reason = fmt::format("set aside: persistent TMA applies and M*N*K*batch = {:.3g} > {:.3g}, where the "
                               "fallback measured under 1/3 of cuBLASLt",
                               volume, kFallbackMaxVolumeBesideTma);
}

}  // namespace

Backend fallback_backend() {
  return Backend{.name = "fallback",
                 .enumerate = [](const GemmProblem&, const runtime::DeviceInfo&, const Options&) {
                   static const std::vector<ChoicePtr> all = [] {
                     std::vector<ChoicePtr> v;
                     for (const auto& c : fallback_configs()) v.push_back(std::make_shared<FallbackChoice>(c));
                     return v;
                   }();
                   return all;
                 },
                 .prune = &prune};
}

}  // namespace tmagemm::choices
