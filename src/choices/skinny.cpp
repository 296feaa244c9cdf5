// skinny.cpp — host side of the skinny backend: config table, split counts, can_implement, KernelSpec
// rendering, launch, and the heuristic's pick for few rows (its Backend::heuristic_pick).
#include "choices/skinny.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <future>
#include <map>
#include <mutex>
#include <tuple>

#include "choices/epilogue_params.hpp"
#include "choices/kernel_spec.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "runtime/tensor_map.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::choices {

namespace {

// Mirrors kernels::SkinnyParams (kernels/gemm_skinny.cuh).
struct SkinnyParamsHost {
  int M, N, K;
  int k_split;
  int splits;
  int cast;
};

constexpr int kThreads = 160;  // kernels::kSkinnyThreads
constexpr int kRedPad = 4;     // kernels::kSkinnyRedPad
constexpr int kMaxRows = 64;   // the largest padded M

int out_code(DType d) { return d == DType::bf16 ? 0 : d == DType::f16 ? 1 : d == DType::f32 ? 2 : -1; }

}  // namespace

std::string SkinnyConfig::name() const {
  return fmt::format("skinny_{}{}x{}_st{}", in_bytes == 1 ? "fp8_" : "", bn, bk, stages);
}

std::size_t SkinnyConfig::smem_bytes(int mp, bool a_k_major) const {
  const std::size_t tile_b = static_cast<std::size_t>(bn) * bk * in_bytes;
  const std::size_t tile_a = static_cast<std::size_t>(a_k_major ? mp : 128 / in_bytes) * bk * in_bytes;
  const std::size_t ring = stages * (tile_b + tile_a);
  const std::size_t red = 4 * static_cast<std::size_t>(mp) * (bn + kRedPad);
  return 1024 + std::max(ring, red) + 2 * static_cast<std::size_t>(stages) * 8;
}

// Columns of out per cluster (BN), K block, ring depth. 128 x 64 x 4 (~97 KB at 64 padded rows) puts two CTAs on an
// SM; the others (160-201 KB) one, with 64-160 KB of B in flight. Each was the fastest skinny choice on some decode
// shape in the first tuning (docs/perf-notes.md, skinny v2); 256 x 64 x 5 replaced 256 x 64 x 4 (v4: 1-4 % faster
// on the wide-N decode shapes; deeper rings, 128 x 64 x 11 and 64 x 64 x 18, gained nothing).
const std::vector<SkinnyConfig>& skinny_configs() {
  static const std::vector<SkinnyConfig> table = {
      {128, 64, 4}, {128, 64, 8}, {256, 64, 5}, {64, 64, 12}, {128, 128, 4},
      // FP8 (scaled_mm): the same shapes in bytes (block K 128 fp8 = one 128-byte swizzle slab).
      {128, 128, 4, 1}, {128, 128, 8, 1}, {256, 128, 5, 1}, {64, 128, 12, 1}, {128, 256, 4, 1},
  };
  return table;
}

const std::vector<int>& skinny_splits() {
  static const std::vector<int> splits = {1, 2, 4, 8};
  return splits;
}

const std::vector<int>& skinny_casts() {
  static const std::vector<int> casts = {1, 2, 4};
  return casts;
}

std::string skinny_choice_name(const SkinnyConfig& c, int splits, int cast) {
  return cast > 1 ? fmt::format("{}_split{}_cast{}", c.name(), splits, cast) : fmt::format("{}_split{}", c.name(), splits);
}

int skinny_padded_m(int64_t m) { return m <= 32 ? 32 : 64; }

int64_t skinny_k_split(int64_t k, const SkinnyConfig& c, int splits) {
  const int64_t blocks = (k + c.bk - 1) / c.bk;
  return ((blocks + splits - 1) / splits) * c.bk;
}

std::string skinny_can_implement(const GemmProblem& p, const SkinnyConfig& c, int splits, int cast) {
  if (c.in_bytes == 1) {
    if (p.op != Op::scaled_mm) return "an fp8 config takes scaled_mm only";
    // NOTE: fp8 wgmma reads both operands K-major (validation enforces torch's layout rule for scaled_mm).
    if (p.a.major() != Major::row || p.b.major() != Major::col)
      return "fp8 operands must be K-major (a row-major, b column-major)";
    // Two-level accumulation doubles the fp32 registers: 4 fragments of 64 x 64 would need 256 a thread.
    if (!p.fast_accum && c.bn / 64 * skinny_padded_m(p.m) > 128)
      return fmt::format("two-level accumulation (use_fast_accum = false) of {} columns x {} padded rows needs more "
                         "than 255 registers a thread",
                         c.bn, skinny_padded_m(p.m));
  } else {
    if (p.op != Op::mm && p.op != Op::bmm && p.op != Op::addmm)
      return fmt::format("op {} is not handled by the 16-bit skinny configs", to_string(p.op));
    if ((p.a.dtype != DType::bf16 && p.a.dtype != DType::f16) || p.a.dtype != p.b.dtype)
      return fmt::format("inputs must be both bf16 or both f16 (got {} and {})", to_string(p.a.dtype),
                         to_string(p.b.dtype));
  }
  if (out_code(p.out.dtype) < 0) return fmt::format("output dtype {} is not bf16, f16 or f32", to_string(p.out.dtype));
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return "empty problem (M, N or K is 0) needs no GEMM kernel";
  if (p.m > kMaxRows) return fmt::format("M = {} is above {} (the template is for few rows)", p.m, kMaxRows);
  const int64_t limit = int64_t{1} << 31;
  if (p.n >= limit || p.k >= limit) return "an extent is 2^31 or more";
  if (p.batch > 65535) return "batch above 65535 (grid z limit)";
  // TMA loads both operands: 16-byte aligned bases and strides, one unit stride.
  if (auto t = can_use_tma(p.a); !t.ok) return "A: " + t.reason;
  if (auto t = can_use_tma(p.b); !t.ok) return "B: " + t.reason;
  if (reinterpret_cast<std::uintptr_t>(p.out.data) % itemsize(p.out.dtype) != 0)
    return "the output base address is not aligned to its element size";
  if (splits < 1 || splits > 8 || c.bn % (4 * splits) != 0) return fmt::format("split count {} is not 1..8", splits);
  const int64_t blocks = (p.k + c.bk - 1) / c.bk;
  if (splits > 1 && blocks < 2 * splits)
    return fmt::format("K = {} has {} blocks of {}: too few to split {} ways (2 per CTA at least)", p.k, blocks, c.bk,
                       splits);
  if (cast != 1 && cast != 2 && cast != 4) return fmt::format("multicast group {} is not 1, 2 or 4", cast);
  if (splits * cast > 8) return fmt::format("a cluster of {} x {} CTAs is above 8", splits, cast);
  const int64_t tiles = (p.n + c.bn - 1) / c.bn;
  if (tiles % cast != 0)
    return fmt::format("N = {} has {} tiles of {}: not a multiple of the multicast group {}", p.n, tiles, c.bn, cast);
  if (tiles * splits >= limit) return "2^31 or more CTAs";
  return {};
}

int64_t skinny_grid_ctas(const GemmProblem& p, const SkinnyConfig& c, int splits) {
  return ((p.n + c.bn - 1) / c.bn) * splits * p.batch;
}

namespace {

// The SMs a grid may use: all of them, or those Options::sm_carveout leaves (at least one).
int64_t sms_left(int sm_count, int sm_carveout) {
  return sm_carveout > 0 ? std::max(1, sm_count - sm_carveout) : sm_count;
}

}  // namespace

std::string skinny_carveout_reason(const GemmProblem& p, const SkinnyConfig& c, int splits, int sm_count,
                                   int sm_carveout) {
  if (sm_carveout <= 0) return {};
  const int64_t ctas = skinny_grid_ctas(p, c, splits), left = sms_left(sm_count, sm_carveout);
  if (ctas <= left) return {};
  return fmt::format("grid of {} CTAs exceeds the {} SMs left by sm_carveout = {}", ctas, left, sm_carveout);
}

int skinny_heuristic_splits(const GemmProblem& p, const SkinnyConfig& c, int sm_count, int sm_carveout) {
  const int64_t tiles = ((p.n + c.bn - 1) / c.bn) * p.batch;
  const int64_t blocks = (p.k + c.bk - 1) / c.bk;
  const int64_t sms = sms_left(sm_count, sm_carveout);
  int best = 1;
  for (int s : skinny_splits()) {
    if (s > 1 && blocks < 2 * s) break;
    if (s > 1 && sm_carveout > 0 && tiles * s > sms) break;  // the grid would not fit in the SMs left
    best = s;
    if (5 * tiles * s >= 4 * sms) break;
  }
  return best;
}

std::string skinny_heuristic_choice(const GemmProblem& p, int sm_count, int sm_carveout) {
  if (p.m > 64) return {};
  // fp8 (scaled_mm) takes the configs of the same shapes in bytes: block K twice the elements.
  const int in_bytes = p.op == Op::scaled_mm ? 1 : 2, kx = 2 / in_bytes;
  const auto find = [&](int bn, int bk, int stages) -> const SkinnyConfig* {
    for (const auto& c : skinny_configs())
      if (c.bn == bn && c.bk == bk * kx && c.stages == stages && c.in_bytes == in_bytes) return &c;
    return nullptr;
  };
  const SkinnyConfig *wide = find(256, 64, 5), *mid = find(128, 128, 4), *narrow = find(64, 64, 12);
  if (!wide || !mid || !narrow) return {};  // the table no longer holds the calibrated configs
  const int64_t sms = sms_left(sm_count, sm_carveout);
  // The name, unless the carveout leaves too few SMs for its grid (the choice would refuse).
  const auto name = [&](const SkinnyConfig& c, int splits) {
    return skinny_carveout_reason(p, c, splits, sm_count, sm_carveout).empty() ? skinny_choice_name(c, splits)
                                                                               : std::string();
  };
  // The widest one-CTA-an-SM tile whose N tiles alone cover 4/5 of the SMs.
  for (const SkinnyConfig* c : {wide, mid})
    if (5 * ((p.n + c->bn - 1) / c->bn) * p.batch >= 4 * sms)
      return p.m > 32 ? std::string() : name(*c, 1);  // above 32 rows persistent TMA measured ahead there
  return name(*narrow, skinny_heuristic_splits(p, *narrow, sm_count, sm_carveout));
}

namespace {

// in_a / in_b: 0 bf16, 1 f16 (both the same), 2 e4m3, 3 e5m2 (fp8 configs); promote: two-level accumulation's run
// length in K blocks (fp8 with use_fast_accum = false), else 0.
jit::KernelSpec make_spec(const SkinnyConfig& c, int mp, int in_a, int in_b, int promote, int out, bool a_k_major,
                          bool b_k_major, const EpilogueSpec& epi = {}) {
  static const char* out_names[] = {"bf16", "f16", "f32"};
  static const char* in_names[] = {"bf16", "f16", "e4m3", "e5m2"};
  const bool f16 = in_a == 1;
  const std::string in_name = in_a == in_b ? in_names[in_a] : fmt::format("{}{}", in_names[in_a], in_names[in_b]);
  const KernelConfig config{"TmagemmSkinnyConfig",
                            {{int_field("kBN", c.bn), int_field("kBK", c.bk), int_field("kStages", c.stages),
                              int_field("kMP", mp)},
                             {bool_field("kF16", f16)},
                             {int_field("kFp8A", in_a >= 2 ? in_a - 1 : 0), int_field("kFp8B", in_b >= 2 ? in_b - 1 : 0),
                              int_field("kPromote", promote)},
                             {int_field("kOut", out)},
                             {bool_field("kAKMajor", a_k_major), bool_field("kBKMajor", b_k_major)},
                             {bool_field("kTrace", !trace_path().empty())}}};
  const SmemCheck smem{"SkinnyConfig::smem_bytes", "tmagemm::kernels::skinny_smem_bytes", c.smem_bytes(mp, a_k_major)};
  return config_kernel_spec(fmt::format("{}_m{}_{}_{}{}_{}{}{}{}", c.name(), mp, in_name, a_k_major ? 'r' : 'c',
                                        b_k_major ? 'c' : 'r', out_names[out],
                                        promote > 0 ? fmt::format("_p{}", promote) : std::string(), epi.suffix(),
                                        trace_path().empty() ? "" : "_trace"),
                            "gemm_skinny.cuh", "tmagemm::kernels::gemm_skinny", config, epi, &smem);
}

bool a_k_major(const GemmProblem& p) { return p.a.major() == Major::row; }
bool b_k_major(const GemmProblem& p) { return p.b.major() == Major::col; }
int in_code(DType d) { return d == DType::f16 ? 1 : d == DType::e4m3 ? 2 : d == DType::e5m2 ? 3 : 0; }
// scaled_mm without fast accumulation: the accumulators are added into fp32 totals every K block (128 fp8 elements,
// CUTLASS's and DeepGEMM's interval).
int promote_of(const GemmProblem& p) { return p.op == Op::scaled_mm && !p.fast_accum ? 1 : 0; }

}  // namespace

jit::KernelSpec skinny_spec(const GemmProblem& p, const SkinnyConfig& c) {
  return make_spec(c, skinny_padded_m(p.m), in_code(p.a.dtype), in_code(p.b.dtype), promote_of(p),
                   out_code(p.out.dtype), a_k_major(p), b_k_major(p), epilogue_spec(p));
}

std::vector<jit::KernelSpec> skinny_all_specs() {
  std::vector<jit::KernelSpec> specs;
  for (const auto& c : skinny_configs())
    for (int mp : {32, 64}) {
      if (c.in_bytes == 1) {  // fp8: K-major, e4m3 x e4m3 fast and two-level (where it fits); mixed pairs on bf16
        for (int out : {0, 1, 2})
          for (int promote : {0, 1})
            if (promote == 0 || c.bn / 64 * mp <= 128) specs.push_back(make_spec(c, mp, 2, 2, promote, out, true, true));
        specs.push_back(make_spec(c, mp, 2, 3, 0, 0, true, true));
        specs.push_back(make_spec(c, mp, 3, 2, 0, 0, true, true));
        continue;
      }
      for (int in : {0, 1})
        for (int out : {0, 1, 2})
          for (bool ak : {true, false})
            for (bool bk : {true, false}) specs.push_back(make_spec(c, mp, in, in, 0, out, ak, bk));
    }
  for (const EpilogueSpec& e : epilogue_samples())  // addmm: a sample of epilogues on the first config
    specs.push_back(make_spec(skinny_configs().front(), 32, 0, 0, 0, 0, true, false, e));
  for (const auto& c : skinny_configs())  // scaled_mm's epilogues on the first fp8 config
    if (c.in_bytes == 1) {
      for (const EpilogueSpec& e : scaled_mm_epilogue_samples()) specs.push_back(make_spec(c, 32, 2, 2, 1, 0, true, true, e));
      break;
    }
  return specs;
}

void skinny_launch(const GemmProblem& p, const SkinnyConfig& c, int splits, int cast, cudaStream_t stream,
                   int sm_carveout) {
  if (sm_carveout > 0)
    if (auto r = skinny_carveout_reason(p, c, splits, runtime::device_info(p.device).sm_count, sm_carveout); !r.empty())
      throw Error(ErrorCode::unsupported, fmt::format("{}: {}", skinny_choice_name(c, splits, cast), r));
  static KernelCache<std::tuple<const SkinnyConfig*, int, DType, DType, DType, int, bool, bool, int, int>> loaded;
  const int mp = skinny_padded_m(p.m);
  const bool ak = a_k_major(p), bk = b_k_major(p);
  const std::size_t smem = c.smem_bytes(mp, ak);
  const CUfunction fn = loaded.get({&c, mp, p.a.dtype, p.b.dtype, p.out.dtype, promote_of(p), ak, bk, p.device,
                                    epilogue_spec(p).code()},
                                   p.device, smem,
                                   [&] { return skinny_spec(p, c); });
  // fp8 elements are loaded as bytes (the wgmma instruction names their type).
  const auto type = c.in_bytes == 1          ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                    : p.a.dtype == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                              : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const std::size_t elem = static_cast<std::size_t>(c.in_bytes);
  const uint32_t row_elems = static_cast<uint32_t>(128 / elem);  // one 128-byte swizzled row
  // No L2 promotion: with 256-byte promotion on B's 128-byte box rows the kernel streamed B 8-13 % slower
  // (runtime::l2_promotion; measured with A and B both without it).
  const auto promotion = [](const Operand& o) {
    return runtime::l2_promotion(row_alignment_bytes(o), CU_TENSOR_MAP_L2_PROMOTION_NONE);
  };
  const CUtensorMap map_a =
      ak ? runtime::encode_sw128_3d(p.a.data, type, elem, p.k, p.m, p.batch, p.a.row_stride, p.a.batch_stride,
                                    row_elems, mp / cast, promotion(p.a), "cuTensorMapEncodeTiled(skinny a)")
         : runtime::encode_sw128_3d(p.a.data, type, elem, p.m, p.k, p.batch, p.a.col_stride, p.a.batch_stride,
                                    row_elems, c.bk / cast, promotion(p.a), "cuTensorMapEncodeTiled(skinny a)");
  const CUtensorMap map_b =
      bk ? runtime::encode_sw128_3d(p.b.data, type, elem, p.k, p.n, p.batch, p.b.col_stride, p.b.batch_stride,
                                    row_elems, c.bn, promotion(p.b), "cuTensorMapEncodeTiled(skinny b)")
         : runtime::encode_sw128_3d(p.b.data, type, elem, p.n, p.k, p.batch, p.b.row_stride, p.b.batch_stride,
                                    row_elems, c.bk, promotion(p.b), "cuTensorMapEncodeTiled(skinny b)");
  SkinnyParamsHost sp{static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k),
                      static_cast<int>(skinny_k_split(p.k, c, splits)), splits, cast};
  EpilogueParamsHost ep = epilogue_params(p);
  unsigned long long* trace = nullptr;  // device buffer of a profiling build (TMAGEMM_TRACE)
  void* params[] = {const_cast<CUtensorMap*>(&map_a), const_cast<CUtensorMap*>(&map_b), &sp, &ep, &trace};
  const int csize = splits * cast;
  // NOTE: a launch without clusters runs each CTA as a cluster of one (barrier.cluster and mapa still work).
  KernelLaunch launch(fn, stream, kThreads, smem, static_cast<unsigned>(csize));
  launch.set_grid(((p.n + c.bn - 1) / c.bn) * splits, 1, p.batch);
  launch.set_programmatic();  // the kernel waits for the previous one before any global read (PDL)
  const CUlaunchConfig& cfg = launch.config();
  if (runtime::log_enabled("launch"))
    std::fprintf(stderr, "tmagemm launch: %s grid %u x 1 x %u block %u smem %zu cluster %d\n",
                 skinny_spec(p, c).name.c_str(), cfg.gridDimX, cfg.gridDimZ, kThreads, smem, csize);
  if (trace_path().empty()) {
    launch.launch(params, "cuLaunchKernelEx(skinny)");
    return;
  }
  // kernels/gemm_skinny.cuh's SkinnyTraceSlot.
  launch_traced(launch, params, &trace, 16, 12,
                fmt::format("{} split {} cast {} M={} N={} K={} grid={}", skinny_spec(p, c).name, splits, cast, p.m,
                            p.n, p.k, cfg.gridDimX),
                "entry_ns,started,first_issued,last_issued,first_full,last_full,mma_done,reduce_start,stored,exit,"
                "smid,blocks_plus_1",
                "cuLaunchKernelEx(skinny)");
}

namespace {

class SkinnyChoice final : public Choice {
 public:
  // `sm_carveout`: Options::sm_carveout of the enumeration that made the choice (its grid must fit the SMs left).
  SkinnyChoice(const SkinnyConfig& c, int splits, int cast, int sm_carveout)
      : config_(c),
        splits_(splits),
        cast_(cast),
        sm_carveout_(sm_carveout),
        name_(skinny_choice_name(c, splits, cast)) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "skinny"; }
  std::string can_implement(const GemmProblem& p, const runtime::DeviceInfo& d) const override {
    if (d.cc_major < 9)
      return fmt::format("needs sm_90 or newer (thread block clusters); {} is sm_{}{}", d.name, d.cc_major, d.cc_minor);
    if (auto r = skinny_can_implement(p, config_, splits_, cast_); !r.empty()) return r;
    if (auto r = skinny_carveout_reason(p, config_, splits_, d.sm_count, sm_carveout_); !r.empty()) return r;
    const std::size_t smem = config_.smem_bytes(skinny_padded_m(p.m), p.a.major() == Major::row);
    if (smem > d.smem_per_block_optin)
      return fmt::format("needs {} bytes of shared memory; the device allows {} per block", smem, d.smem_per_block_optin);
    return {};
  }
  // Split count and cast are launch parameters: the choices of a config share one kernel, and the tuner precompiles
  // choices in parallel. The first caller compiles; the others wait for it (and see its failure, if any).
  void precompile(const GemmProblem& p, int device) const override {
    const jit::KernelSpec spec = skinny_spec(p, config_);
    const std::string arch = runtime::device_info(device).arch();
    const std::string key = spec.name + "/" + arch;
    static std::mutex mutex;
    static std::map<std::string, std::shared_future<void>> compiled;
    std::promise<void> done;
    std::shared_future<void> wait_for;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (auto it = compiled.find(key); it != compiled.end())
        wait_for = it->second;
      else
        compiled.emplace(key, done.get_future().share());
    }
    if (wait_for.valid()) return wait_for.get();
    try {
      jit::compile(spec, arch);
      done.set_value();
    } catch (...) {
      done.set_exception(std::current_exception());
      std::lock_guard<std::mutex> lock(mutex);
      compiled.erase(key);  // a later tuning may try again
      throw;
    }
  }
  std::vector<jit::KernelSpec> kernel_specs(const GemmProblem& p) const override { return {skinny_spec(p, config_)}; }
  void launch(const GemmProblem& p, cudaStream_t stream, const Options& o, void*) const override {
    skinny_launch(p, config_, splits_, cast_, stream, o.sm_carveout);
  }
  const SkinnyConfig& config() const { return config_; }
  int splits() const { return splits_; }
  int cast() const { return cast_; }

 private:
  const SkinnyConfig& config_;
  int splits_, cast_;
  int sm_carveout_;
  std::string name_;
};

}  // namespace

const SkinnyConfig* skinny_config_of(const Choice& choice, int* splits, int* cast) {
  const auto* c = dynamic_cast<const SkinnyChoice*>(&choice);
  if (splits) *splits = c ? c->splits() : 0;
  if (cast) *cast = c ? c->cast() : 0;
  return c ? &c->config() : nullptr;
}

Backend skinny_backend() {
  return Backend{.name = "skinny",
                 .enumerate = [](const GemmProblem&, const runtime::DeviceInfo&, const Options& o) {
                   // can_implement has no Options, so each choice carries the carveout it was enumerated under:
                   // one set of choices per carveout value, made once.
                   static std::mutex mutex;
                   static std::map<int, std::vector<ChoicePtr>> by_carveout;
                   const int carveout = std::max(0, o.sm_carveout);
                   std::lock_guard<std::mutex> lock(mutex);
                   std::vector<ChoicePtr>& v = by_carveout[carveout];
                   if (v.empty())
                     for (const auto& c : skinny_configs())
                       for (int s : skinny_splits())
                         for (int k : skinny_casts())
                           if (s * k <= 8) v.push_back(std::make_shared<SkinnyChoice>(c, s, k, carveout));
                   return v;
                 },
                 // For few rows (M <= 64) the heuristic takes the skinny choice named by skinny_heuristic_choice, when
                 // it applies, ahead of its score rule: a persistent grid of M-by-BN tiles leaves most SMs idle on
                 // such problems unless N is wide (docs/perf-notes.md, skinny v2: heuristic decode geomean 0.865 of
                 // cuBLASLt with persistent TMA alone).
                 .heuristic_pick = [](const GemmProblem& p, const runtime::DeviceInfo& d, int sm_carveout) {
                   return skinny_heuristic_choice(p, d.sm_count, sm_carveout);
                 }};
}

}  // namespace tmagemm::choices
