// preload.cpp — tmagemm::preload_model (tmagemm/tuning.hpp): a model's buckets resolved and readied by the tuner
// (tune::preload), then the warm-up runs on scratch operands through the one dispatch point.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <vector>

#include "dispatch/dispatch.hpp"
#include "runtime/cuda_check.hpp"
#include "tmagemm/error.hpp"
#include "tmagemm/tuning.hpp"
#include "tune/model.hpp"

namespace tmagemm {

namespace {

// Bytes from an operand's base to one past its last element (strides in elements, never negative here).
std::size_t span_bytes(const Operand& o, int64_t batch) {
  if (o.data == nullptr) return 0;
  const int64_t last = (batch - 1) * o.batch_stride + (o.rows - 1) * o.row_stride + (o.cols - 1) * o.col_stride;
  return static_cast<std::size_t>(last + 1) * itemsize(o.dtype);
}

constexpr std::size_t kAlign = 256;
std::size_t round_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

PreloadStats preload(const tune::Model& model, int device, const Options& options, bool warm) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<GemmProblem> runs;
  PreloadStats stats = tune::preload(model, device, options, warm ? &runs : nullptr);
  if (!runs.empty()) {
    // One scratch block holding the largest operands of any run, each 256-byte aligned (the stand-ins' alignment),
    // zeroed: grouped_mm's offsets are then all 0 (every group empty), so its kernel loads and writes nothing.
    enum Slot { kA, kB, kOut, kBias, kScaleA, kScaleB, kOffs, kSlots };
    std::size_t bytes[kSlots] = {};
    for (const GemmProblem& p : runs) {
      bytes[kA] = std::max(bytes[kA], span_bytes(p.a, p.batch));
      bytes[kB] = std::max(bytes[kB], span_bytes(p.b, p.batch));
      bytes[kOut] = std::max(bytes[kOut], span_bytes(p.out, p.batch));
      bytes[kBias] = std::max(bytes[kBias], span_bytes(p.bias, 1));
      bytes[kScaleA] = std::max(bytes[kScaleA], static_cast<std::size_t>(p.m) * sizeof(float));
      bytes[kScaleB] = std::max(bytes[kScaleB], static_cast<std::size_t>(p.n) * sizeof(float));
      if (p.group_ends) bytes[kOffs] = std::max(bytes[kOffs], static_cast<std::size_t>(p.batch) * sizeof(int32_t));
    }
    std::size_t offsets[kSlots + 1] = {};
    for (int i = 0; i < kSlots; ++i) offsets[i + 1] = offsets[i] + round_up(bytes[i]);
    const std::size_t total = offsets[kSlots];
    runtime::check_cuda(cudaSetDevice(device), "cudaSetDevice");
    const runtime::DeviceMem scratch(total, "cudaMalloc(preload scratch)");
    char* base = static_cast<char*>(scratch.ptr);
    runtime::check_cuda(cudaMemsetAsync(base, 0, total, options.stream), "cudaMemsetAsync(preload scratch)");
    Options o = options;
    o.tuning = Tuning::cached_only;
    for (GemmProblem p : runs) {
      p.a.data = base + offsets[kA];
      p.b.data = base + offsets[kB];
      p.out.data = base + offsets[kOut];
      if (p.bias.data) p.bias.data = base + offsets[kBias];
      if (p.scale_a) p.scale_a = reinterpret_cast<const float*>(base + offsets[kScaleA]);
      if (p.scale_b) p.scale_b = reinterpret_cast<const float*>(base + offsets[kScaleB]);
      if (p.group_ends) p.group_ends = reinterpret_cast<const int32_t*>(base + offsets[kOffs]);
      dispatch::run(p, o);
      ++stats.warm_runs;
    }
    runtime::check_cuda(cudaStreamSynchronize(options.stream), "cudaStreamSynchronize(preload)");
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace

PreloadStats preload_model_json(const std::string& model_json, const std::string& origin, int device,
                                const Options& options, bool warm) {
  return preload(tune::parse_model(model_json, origin), device, options, warm);
}

PreloadStats preload_model(const std::string& model_path, int device, const Options& options, bool warm) {
  std::ifstream file(model_path, std::ios::binary);
  if (!file)
    throw Error(ErrorCode::invalid_argument, fmt::format("preload_model: cannot read the model file {}", model_path));
  std::ostringstream text;
  text << file.rdbuf();
  return preload_model_json(text.str(), model_path, device, options, warm);
}

}  // namespace tmagemm
