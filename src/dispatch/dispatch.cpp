// dispatch.cpp — choice enumeration and selection (a simple rule until the autotuner lands) and launch.
#include "dispatch/dispatch.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <functional>
#include <mutex>
#include <regex>
#include <string_view>
#include <unordered_map>

#include "choices/persistent_tma.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::dispatch {

namespace {

bool regex_allows(const Options& o, const std::string& name) {
  if (o.choice_regex.empty()) return true;
  return std::regex_search(name, std::regex(o.choice_regex, std::regex::ECMAScript));
}

// out = 0 for K = 0 (torch semantics). Works for any strides by writing element rows/columns with
// cudaMemset2DAsync where the layout allows it.
void write_zeros(const GemmProblem& p, cudaStream_t stream) {
  const std::size_t elem = itemsize(p.out.dtype);
  const Operand& o = p.out;
  for (int64_t b = 0; b < p.batch; ++b) {
    char* base = static_cast<char*>(const_cast<void*>(o.data)) + b * o.batch_stride * static_cast<int64_t>(elem);
    if (o.col_stride == 1) {
      runtime::check_cuda(cudaMemset2DAsync(base, o.row_stride * elem, 0, o.cols * elem, o.rows, stream),
                          "cudaMemset2DAsync(out)");
    } else if (o.row_stride == 1) {
      runtime::check_cuda(cudaMemset2DAsync(base, o.col_stride * elem, 0, o.rows * elem, o.cols, stream),
                          "cudaMemset2DAsync(out)");
    } else {
      throw Error(ErrorCode::unsupported, "K = 0 with an output that has no unit stride is not supported yet");
    }
  }
}

struct Candidate {
  std::string name, backend, reason;
  const choices::TmaConfig* tma = nullptr;
};

std::vector<Candidate> enumerate(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev) {
  std::vector<Candidate> out;
  for (const auto& c : choices::persistent_tma_configs()) {
    Candidate cand{c.name(), "persistent_tma", {}, &c};
    if (!o.persistent_tma)
      cand.reason = "persistent TMA backend disabled (Options::persistent_tma / TMAGEMM_PERSISTENT_TMA)";
    else if (auto r = choices::persistent_tma_can_implement(p, c, dev); !r.empty())
      cand.reason = r;
    else if (!regex_allows(o, cand.name))
      cand.reason = fmt::format("name does not match choice_regex '{}'", o.choice_regex);
    out.push_back(std::move(cand));
  }
  return out;
}

const choices::TmaConfig* select(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev,
                                 const std::vector<Candidate>& cands) {
  // Restrict the rule's pick to candidates that survived the filters.
  const choices::TmaConfig* best = nullptr;
  if (const auto* pick = choices::persistent_tma_pick(p, dev, o.sm_carveout)) {
    for (const auto& c : cands)
      if (c.tma == pick && c.reason.empty()) best = pick;
  }
  if (!best)
    for (const auto& c : cands)
      if (c.reason.empty()) return c.tma;
  return best;
}

// Everything the choice depends on. Extents and layouts are part of it; data pointers only through their
// TMA compatibility (alignment).
struct ChoiceKey {
  Op op;
  DType a, b, out;
  Major am, bm, om;
  bool a_tma, b_tma, out_tma;
  int device, carveout;
  bool persistent_tma;
  int64_t m, n, k, batch;
  std::string regex;
  bool operator==(const ChoiceKey&) const = default;
};

struct ChoiceKeyHash {
  std::size_t operator()(const ChoiceKey& k) const noexcept {
    std::size_t h = std::hash<std::string_view>()(k.regex);
    auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(static_cast<std::size_t>(k.op) | static_cast<std::size_t>(k.a) << 4 | static_cast<std::size_t>(k.b) << 8 |
        static_cast<std::size_t>(k.out) << 12 | static_cast<std::size_t>(k.am) << 16 |
        static_cast<std::size_t>(k.bm) << 18 | static_cast<std::size_t>(k.om) << 20 |
        static_cast<std::size_t>(k.a_tma) << 22 | static_cast<std::size_t>(k.b_tma) << 23 |
        static_cast<std::size_t>(k.out_tma) << 24 | static_cast<std::size_t>(k.persistent_tma) << 25);
    mix(static_cast<std::size_t>(k.device) << 32 | static_cast<std::size_t>(k.carveout));
    mix(static_cast<std::size_t>(k.m));
    mix(static_cast<std::size_t>(k.n));
    mix(static_cast<std::size_t>(k.k));
    mix(static_cast<std::size_t>(k.batch));
    return h;
  }
};

// A repeated call skips enumeration: the chosen config per key, kept for the life of the process.
const choices::TmaConfig* remembered_choice(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev) {
  static std::mutex mutex;
  static std::unordered_map<ChoiceKey, const choices::TmaConfig*, ChoiceKeyHash> memo;
  ChoiceKey key{p.op,           p.a.dtype,        p.b.dtype,          p.out.dtype,      p.a.major(),
                p.b.major(),    p.out.major(),    can_use_tma(p.a).ok, can_use_tma(p.b).ok, can_use_tma(p.out).ok,
                p.device,       o.sm_carveout,    o.persistent_tma,   p.m,              p.n,
                p.k,            p.batch,          o.choice_regex};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  const auto cands = enumerate(p, o, dev);
  const choices::TmaConfig* cfg = select(p, o, dev, cands);
  if (!cfg) {
    std::string msg = fmt::format("no choice can run {}:", p.describe());
    for (const auto& c : cands) msg += fmt::format("\n  {}: {}", c.name, c.reason);
    throw Error(ErrorCode::no_valid_choice, msg);
  }
  std::lock_guard<std::mutex> lock(mutex);
  memo.emplace(std::move(key), cfg);
  return cfg;
}

}  // namespace

void run(const GemmProblem& p, const Options& o) {
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
  if (p.op != Op::mm && p.op != Op::bmm)
    throw Error(ErrorCode::unsupported, fmt::format("{} is not implemented yet", to_string(p.op)));
  if (p.k == 0) {
    write_zeros(p, o.stream);
    return;
  }
  const runtime::DeviceInfo& dev = runtime::device_info(p.device);
  const choices::TmaConfig* cfg = remembered_choice(p, o, dev);
  runtime::check_cuda(cudaSetDevice(p.device), "cudaSetDevice");
  choices::persistent_tma_launch(p, *cfg, o.stream, o.sm_carveout);
}

Explanation explain(const GemmProblem& p, const Options& o) {
  Explanation e;
  e.problem = p.describe();
  const runtime::DeviceInfo& dev = runtime::device_info(p.device);
  const auto cands = enumerate(p, o, dev);
  const choices::TmaConfig* cfg = select(p, o, dev, cands);
  for (const auto& c : cands) {
    ChoiceReport r;
    r.name = c.name;
    r.backend = c.backend;
    r.applicable = c.reason.empty();
    r.reason = c.reason;
    r.selected = cfg != nullptr && c.tma == cfg;
    e.choices.push_back(std::move(r));
  }
  return e;
}

}  // namespace tmagemm::dispatch
