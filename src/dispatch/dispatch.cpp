// dispatch.cpp — the one dispatch point: empty problems, K = 0, then the tuner's choice and its launch.
#include "dispatch/dispatch.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <map>
#include <mutex>

#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "tmagemm/error.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::dispatch {

namespace {

// out = 0 for K = 0 (torch semantics), for row- or column-major outputs.
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

// Library workspace (cuBLASLt) per (device, stream): launches on one stream are ordered, so they may share it.
void* workspace_for(int device, cudaStream_t stream, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, std::pair<void*, std::size_t>> buffers;
  std::lock_guard<std::mutex> lock(mutex);
  auto& entry = buffers[{device, stream}];
  if (entry.second < bytes) {
    if (entry.first) runtime::check_cuda(cudaFree(entry.first), "cudaFree(workspace)");
    entry = {nullptr, 0};
    runtime::check_cuda(cudaMalloc(&entry.first, bytes), "cudaMalloc(workspace)");
    entry.second = bytes;
  }
  return entry.first;
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
  runtime::check_cuda(cudaSetDevice(p.device), "cudaSetDevice");
  const choices::ChoicePtr choice = tune::choose(p, o);
  choice->launch(p, o.stream, o, workspace_for(p.device, o.stream, choice->workspace_bytes(p)));
}

Explanation explain(const GemmProblem& p, const Options& o) {
  Explanation e;
  e.problem = p.describe();
  const auto cands = tune::enumerate(p, o);
  const tune::Known known = tune::known(p, o);
  // What a call would run now without tuning anything: a remembered winner, else the heuristic rule.
  choices::ChoicePtr selected;
  if (known.winner && o.tuning != Tuning::heuristic)
    for (const auto& c : cands)
      if (c.reason.empty() && c.choice->name() == *known.winner) selected = c.choice;
  if (!selected) selected = tune::heuristic_choice(p, cands, runtime::device_info(p.device));
  for (const auto& c : cands) {
    ChoiceReport r;
    r.name = c.choice->name();
    r.backend = c.choice->backend();
    r.applicable = c.reason.empty();
    r.reason = c.reason;
    r.selected = selected && c.choice == selected;
    for (const auto& [name, ms] : known.timings_ms)
      if (name == r.name) r.tuned_ms = ms;
    e.choices.push_back(std::move(r));
  }
  return e;
}

}  // namespace tmagemm::dispatch
