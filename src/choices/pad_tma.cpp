// pad_tma.cpp — the pad path: persistent TMA for problems whose A or B TMA refuses only for alignment (a row
// pitch that is not a multiple of 16 bytes — odd K or N, a padded ld —, or a base address off 16 bytes).
//
// Each such operand is copied, row by row (kernels/repitch.cuh on the call's stream), into scratch with a 128-byte
// row pitch and a 256-byte aligned base; the persistent TMA kernel then runs on the copies. The problem's extents
// are kept: TMA zero-fills the K columns past the real K in every box, so the pitch's padding is never read as data
// and needs no clearing. The output is never copied: a direct-store config writes it in place (masked stores), a
// TMA-store config whose output TMA cannot address stores it from its staging blocks with plain realigned stores
// (kOutPlain, kernels/window.cuh), so nothing reaches the caller's memory but the GEMM's own stores. The scratch is
// the choice's workspace (dispatch's per-stream buffer, stream-ordered memory inside a graph capture), so the copies'
// cost is in the tuner's timing and the choice wins only where it pays.
// Choices: one per 16-bit persistent-TMA config but stream-K ("pad_" + its name); the backend's prune keeps the
// configs the persistent-TMA prescreen would keep on the padded problem. With cuBLASLt enabled too, cuBLASLt's
// algorithms for the padded problem ("pad_cublaslt_algo<rank>", its heuristic asked again for each problem, like
// cuBLASLt's own choices): on shapes where cuBLASLt leads tmagemm's kernels when aligned, the copies then run before
// cuBLASLt's kernel instead.
#include "choices/pad_tma.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "choices/choice.hpp"
#include "choices/cublaslt.hpp"
#include "choices/persistent_tma.hpp"
#include "choices/kernel_spec.hpp"
#include "jit/support_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"

namespace tmagemm::choices {

namespace {

constexpr int64_t kPitchBytes = 128;   // copies' row pitch granularity: rows start on whole 128-byte lines
constexpr std::size_t kBaseAlign = 256;

// How one operand is copied: `outer` rows of `inner` contiguous elements, `src_ld` apart in the source and
// `dst_ld` apart in the copy.
struct Repitch {
  bool needed = false;
  int64_t inner = 0, outer = 0, src_ld = 0, dst_ld = 0;
  std::size_t offset = 0;  // in the workspace
};

std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

// Why an operand cannot be re-pitched (empty: it can, or needs nothing).
std::string repitch_of(const Operand& o, const char* name, Repitch& r) {
  r = {};
  if (can_use_tma(o).ok) return {};
  if (o.major() == Major::strided) return fmt::format("{} has no unit stride (the pad path copies whole rows)", name);
  const int64_t es = itemsize(o.dtype);
  const bool row = o.major() == Major::row;
  r.needed = true;
  r.inner = row ? o.cols : o.rows;
  r.outer = row ? o.rows : o.cols;
  r.src_ld = o.ld();
  r.dst_ld = static_cast<int64_t>(round_up(static_cast<std::size_t>(r.inner * es), kPitchBytes)) / es;
  return {};
}

struct PadPlan {
  Repitch a, b;
  std::size_t bytes = 0;
  std::string reason;  // non-empty: the pad path cannot take the problem
};

// The copies for `p`: A's and B's, where TMA refuses them only for alignment (an output TMA cannot address needs no
// copy: persistent TMA stores it in place, kOutPlain).
PadPlan plan_of(const GemmProblem& p) {
  PadPlan plan;
  if (p.op != Op::mm && p.op != Op::addmm) {
    plan.reason = fmt::format("the pad path takes mm and addmm (not {})", to_string(p.op));
    return plan;
  }
  if (p.batch != 1) {
    plan.reason = "the pad path takes unbatched problems";
    return plan;
  }
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) {
    plan.reason = "empty problem (M, N or K is 0) needs no GEMM kernel";
    return plan;
  }
  if (auto why = repitch_of(p.a, "a", plan.a); !why.empty()) plan.reason = why;
  if (auto why = repitch_of(p.b, "b", plan.b); !why.empty()) plan.reason = why;
  if (!plan.reason.empty()) return plan;
  if (!plan.a.needed && !plan.b.needed) {
    plan.reason = "a and b are TMA-aligned already (persistent TMA takes the problem as it is)";
    return plan;
  }
  for (Repitch* r : {&plan.a, &plan.b})
    if (r->needed) {
      const std::size_t es = static_cast<std::size_t>(itemsize(p.a.dtype));
      r->offset = plan.bytes;
      plan.bytes += round_up(static_cast<std::size_t>(r->outer) * r->dst_ld * es, kBaseAlign);
    }
  return plan;
}

// The problem the kernel runs: the re-pitched operands at `workspace` (any 256-byte aligned address when only the
// rules are asked).
GemmProblem padded(const GemmProblem& p, const PadPlan& plan, const void* workspace) {
  GemmProblem q = p;
  auto move = [&](Operand& o, const Repitch& r) {
    if (!r.needed) return;
    o.data = static_cast<const char*>(workspace) + r.offset;
    if (o.major() == Major::row)
      o.row_stride = r.dst_ld;
    else
      o.col_stride = r.dst_ld;
  };
  move(q.a, plan.a);
  move(q.b, plan.b);
  return q;
}

const void* placeholder() { return reinterpret_cast<const void*>(std::uintptr_t{1} << 20); }

// Enqueues the plan's copies into the workspace `ws` on `stream` (kernel nodes inside a graph capture; no host
// synchronisation): 16-bit rows through kernels/repitch.cuh (aligned 16-byte stores, realigned 16-byte loads;
// cudaMemcpy2DAsync moved these rows at ~2-2.8 TB/s, docs/perf-notes.md), anything else through cudaMemcpy2DAsync.
void copy_operands(const GemmProblem& p, const PadPlan& plan, char* ws, cudaStream_t stream) {
  auto copy = [&](void* dst, int64_t dst_ld, const void* src, int64_t src_ld, const Repitch& r, DType t,
                  const char* what) {
    const std::size_t es = static_cast<std::size_t>(itemsize(t));
    if (es != 2) {
      runtime::check_cuda(cudaMemcpy2DAsync(dst, dst_ld * es, src, src_ld * es, r.inner * es, r.outer,
                                            cudaMemcpyDeviceToDevice, stream),
                          what);
      return;
    }
    static jit::LoadedKernels<int> kernels;
    CUfunction fn = kernels.get(p.device, p.device, 0, [] { return jit::repitch16_spec(); });
    void* d = dst;
    const void* sp = src;
    long long dld = dst_ld, sld = src_ld, rows = r.outer, cols = r.inner;
    void* params[] = {&d, &dld, &sp, &sld, &rows, &cols};
    CUlaunchConfig cfg{};
    const int sms = runtime::device_info(p.device).sm_count;
    cfg.gridDimX = static_cast<unsigned>(std::clamp<int64_t>(rows, 1, int64_t{8} * std::max(sms, 1)));
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 256;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = reinterpret_cast<CUstream>(stream);
    runtime::check_cu(runtime::driver().launch_kernel_ex(&cfg, fn, params, nullptr), what);
  };
  if (plan.a.needed) copy(ws + plan.a.offset, plan.a.dst_ld, p.a.data, plan.a.src_ld, plan.a, p.a.dtype, "copy (pad a)");
  if (plan.b.needed) copy(ws + plan.b.offset, plan.b.dst_ld, p.b.data, plan.b.src_ld, plan.b, p.b.dtype, "copy (pad b)");
}

class PadChoice final : public Choice {
 public:
  explicit PadChoice(const TmaConfig& config) : config_(config), name_("pad_" + config.name()) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "pad_tma"; }
  std::string can_implement(const GemmProblem& p, const runtime::DeviceInfo& d) const override {
    const PadPlan plan = plan_of(p);
    if (!plan.reason.empty()) return plan.reason;
    if (auto why = persistent_tma_can_implement(padded(p, plan, placeholder()), config_, d); !why.empty())
      return "after padding: " + why;
    return {};
  }
  void precompile(const GemmProblem& p, int device) const override {
    const PadPlan plan = plan_of(p);
    jit::compile(persistent_tma_spec(padded(p, plan, placeholder()), config_), runtime::device_info(device).arch());
  }
  std::vector<jit::KernelSpec> kernel_specs(const GemmProblem& p) const override {
    return {persistent_tma_spec(padded(p, plan_of(p), placeholder()), config_)};
  }
  void launch(const GemmProblem& p, cudaStream_t stream, const Options& o, void* workspace) const override {
    const PadPlan plan = plan_of(p);
    copy_operands(p, plan, static_cast<char*>(workspace), stream);
    persistent_tma_launch(padded(p, plan, workspace), config_, stream, o.sm_carveout);
  }
  std::size_t workspace_bytes(const GemmProblem& p) const override { return plan_of(p).bytes; }
  const TmaConfig& config() const { return config_; }

 private:
  const TmaConfig& config_;
  std::string name_;
};

// A cuBLASLt algorithm (cuBLASLt's own choice for the padded problem, `inner`) run on the copies: the workspace holds
// the copies, then cuBLASLt's workspace.
class PadLibraryChoice final : public Choice {
 public:
  explicit PadLibraryChoice(ChoicePtr inner) : inner_(std::move(inner)), name_("pad_" + inner_->name()) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "pad_tma"; }
  std::string can_implement(const GemmProblem& p, const runtime::DeviceInfo& d) const override {
    const PadPlan plan = plan_of(p);
    if (!plan.reason.empty()) return plan.reason;
    // NOTE: measured on the H200 (docs/perf-notes.md, thirty-fifth session): with out's rows off 16 bytes (not
    // copied) cuBLASLt ran 4096x4095x14336 in 3.7 ms on the copies, against ~0.7 ms for the pad path's kernels.
    if (!can_use_tma(p.out).ok) return "out's rows are off 16 bytes: cuBLASLt runs at its misaligned speed on it";
    if (auto why = inner_->can_implement(padded(p, plan, placeholder()), d); !why.empty())
      return "after padding: " + why;
    return {};
  }
  void precompile(const GemmProblem& p, int device) const override {
    inner_->precompile(padded(p, plan_of(p), placeholder()), device);
  }
  void launch(const GemmProblem& p, cudaStream_t stream, const Options& o, void* workspace) const override {
    const PadPlan plan = plan_of(p);
    char* ws = static_cast<char*>(workspace);
    copy_operands(p, plan, ws, stream);
    const GemmProblem q = padded(p, plan, workspace);
    inner_->launch(q, stream, o, inner_->workspace_bytes(q) > 0 ? ws + copies_bytes(plan) : nullptr);
  }
  std::size_t workspace_bytes(const GemmProblem& p) const override {
    const PadPlan plan = plan_of(p);
    return copies_bytes(plan) + inner_->workspace_bytes(padded(p, plan, placeholder()));
  }

 private:
  static std::size_t copies_bytes(const PadPlan& plan) { return round_up(plan.bytes, kBaseAlign); }
  ChoicePtr inner_;
  std::string name_;
};

// The backend's prune: on the padded problem, the persistent-TMA rules — a direct-store config whose TMA-store twin
// applies is dominated, and configs predicted slower than 1 / kPrescreenRatio of the best are set aside.
void prune(const GemmProblem& p, const runtime::DeviceInfo& dev, const Options& o, std::vector<Candidate>& out) {
  const PadPlan plan = plan_of(p);
  if (!plan.reason.empty()) return;
  const GemmProblem q = padded(p, plan, placeholder());
  auto config_of = [](const Candidate& c) -> const TmaConfig* {
    const auto* pc = dynamic_cast<const PadChoice*>(c.choice.get());
    return pc ? &pc->config() : nullptr;
  };
  double best = 0;
  for (const auto& c : out)
    if (const TmaConfig* cfg = config_of(c); cfg && c.reason.empty())
      best = std::max(best, persistent_tma_score(q, *cfg, dev, o.sm_carveout));
  for (auto& c : out) {
    const TmaConfig* cfg = config_of(c);
    if (!cfg || !c.reason.empty()) continue;
    const double s = persistent_tma_score(q, *cfg, dev, o.sm_carveout);
    if (cfg->only_when_best ? s < best : s < kPrescreenRatio * best) {
      c.reason = fmt::format("set aside: predicted {:.2f}x the time of the best pad-path config",
                             best / std::max(s, 1e-12));
      continue;
    }
    if (cfg->store_tma) continue;
    for (const auto& twin : out) {
      const TmaConfig* t = config_of(twin);
      if (twin.reason.empty() && t && t->store_tma && t->bm == cfg->bm && t->bn == cfg->bn && t->bk == cfg->bk &&
          t->consumers == cfg->consumers && t->cluster_m == cfg->cluster_m && t->cluster_n == cfg->cluster_n &&
          t->split_n == cfg->split_n) {
        c.reason = fmt::format("dominated by {} (TMA-store epilogue, measured faster)", twin.choice->name());
        break;
      }
    }
  }
  // Out's rows off 16 bytes: the ping-pong configs rather than the deferred TMA-store ones (persistent_tma.hpp).
  set_aside_deferred_plain(p, out, config_of);
}

}  // namespace

std::string pad_tma_plan(const GemmProblem& p, std::size_t* scratch_bytes) {
  const PadPlan plan = plan_of(p);
  if (scratch_bytes) *scratch_bytes = plan.bytes;
  return plan.reason;
}

Backend pad_tma_backend() {
  return Backend{.name = "pad_tma",
                 .enumerate = [](const GemmProblem& p, const runtime::DeviceInfo& d, const Options& o) {
                   static const std::vector<ChoicePtr> all = [] {
                     std::vector<ChoicePtr> v;
                     for (const auto& c : persistent_tma_configs())
                       // (stream-K configs need a workspace of their own beside the copies: not offered here;
                       // cluster split-K is for the aligned shapes that leave SMs idle, not measured on copies)
                       if (c.in_bytes == 2 && !c.stream_k && c.split_k == 1) v.push_back(std::make_shared<PadChoice>(c));
                     return v;
                   }();
                   std::vector<ChoicePtr> v = all;
                   // cuBLASLt on the copies: asked only for a problem the pad path takes, with both switches on
                   // (a library's query per problem); its "unavailable" entry is not wrapped.
                   const PadPlan plan = plan_of(p);
                   if (plan.reason.empty() && o.pad_tma && o.cublaslt)
                     for (auto& c : cublaslt_backend().enumerate(padded(p, plan, placeholder()), d, o))
                       if (c->library_rank() >= 0) v.push_back(std::make_shared<PadLibraryChoice>(std::move(c)));
                   return v;
                 },
                 .prune = &prune};
}

}  // namespace tmagemm::choices
