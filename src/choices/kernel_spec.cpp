// kernel_spec.cpp — the config-struct renderer, the kernel launch and the profiling builds' timeline shared by the
// kernel backends (see kernel_spec.hpp).
#include "choices/kernel_spec.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <tuple>
#include <vector>

#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"

namespace tmagemm::choices {

std::string render_config(const KernelConfig& c, const EpilogueSpec& epi, const SmemCheck* smem) {
  std::string s = fmt::format("struct {} {{\n", c.struct_name);
  for (const auto& line : c.lines) {
    if (line.empty()) continue;
    s += fmt::format("  static constexpr {} ", line.front().boolean ? "bool" : "int");
    for (std::size_t i = 0; i < line.size(); ++i) {
      const ConfigField& f = line[i];
      s += fmt::format("{}{} = {}", i ? ", " : "", f.name,
                       f.boolean ? std::string(f.value ? "true" : "false") : std::to_string(f.value));
    }
    s += ";\n";
  }
  s += epi.render();
  s += "};\n";
  if (smem)
    s += fmt::format(
        "// The host launches with {}; the kernel's own count must agree.\n"
        "static_assert({}<{}>() == {}, \"smem size drift\");\n",
        smem->host, smem->device, c.struct_name, smem->bytes);
  return s;
}

jit::KernelSpec config_kernel_spec(std::string name, const char* header, const char* kernel_template,
                                   const KernelConfig& config, const EpilogueSpec& epi, const SmemCheck* smem) {
  jit::KernelSpec s;
  s.name = std::move(name);
  s.header = header;
  s.extra_source = render_config(config, epi, smem);
  s.kernel = fmt::format("{}<{}>", kernel_template, config.struct_name);
  return s;
}

KernelLaunch::KernelLaunch(CUfunction fn, cudaStream_t stream, unsigned threads, std::size_t smem_bytes,
                           unsigned cluster)
    : fn_(fn) {
  cfg_.gridDimX = cfg_.gridDimY = cfg_.gridDimZ = 1;
  cfg_.blockDimX = threads;
  cfg_.blockDimY = cfg_.blockDimZ = 1;
  cfg_.sharedMemBytes = static_cast<unsigned>(smem_bytes);
  cfg_.hStream = reinterpret_cast<CUstream>(stream);
  if (cluster > 1) {
    attr_[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr_[0].value.clusterDim.x = cluster;
    attr_[0].value.clusterDim.y = 1;
    attr_[0].value.clusterDim.z = 1;
    cfg_.attrs = attr_;
    cfg_.numAttrs = 1;
  } else {
    cfg_.attrs = nullptr;
    cfg_.numAttrs = 0;
  }
}

void KernelLaunch::set_grid(int64_t x, int64_t y, int64_t z) {
  cfg_.gridDimX = static_cast<unsigned>(x);
  cfg_.gridDimY = static_cast<unsigned>(y);
  cfg_.gridDimZ = static_cast<unsigned>(z);
}

void KernelLaunch::set_programmatic() {
  if (!runtime::programmatic_launch()) return;
  for (unsigned i = 0; i < cfg_.numAttrs; ++i)
    if (attr_[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) return;  // set already
  CUlaunchAttribute& a = attr_[cfg_.numAttrs];
  a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  a.value.programmaticStreamSerializationAllowed = 1;
  cfg_.attrs = attr_;
  ++cfg_.numAttrs;
}

int KernelLaunch::max_active_clusters(const char* what) const {
  const unsigned cluster =
      cfg_.numAttrs && attr_[0].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION ? attr_[0].value.clusterDim.x : 1;
  using Key = std::tuple<CUfunction, unsigned, unsigned, unsigned, unsigned>;
  thread_local std::map<Key, int> known;
  thread_local uint64_t epoch = 0;
  if (const uint64_t now = jit::unload_epoch(); now != epoch) {  // an unloaded kernel's handle value may be reused
    known.clear();
    epoch = now;
  }
  const Key key{fn_, cfg_.gridDimX, cfg_.blockDimX, cfg_.sharedMemBytes, cluster};
  if (auto it = known.find(key); it != known.end()) return it->second;
  int fit = 0;
  runtime::check_cu(runtime::driver().occupancy_max_active_clusters(&fit, fn_, &cfg_), what);
  known.emplace(key, fit);
  return fit;
}

void KernelLaunch::launch(void** params, const char* what) const { runtime::launch_kernel(cfg_, fn_, params, what); }

const std::string& trace_path() {
  static const std::string path = [] {
    const char* v = std::getenv("TMAGEMM_TRACE");
    return std::string(v ? v : "");
  }();
  return path;
}

void launch_traced(const KernelLaunch& launch, void** params, unsigned long long** trace, int slots, int columns_used,
                   const std::string& title, const std::string& columns, const char* what) {
  const CUlaunchConfig& cfg = launch.config();
  const std::size_t ctas = std::size_t{cfg.gridDimX} * cfg.gridDimY * cfg.gridDimZ;
  const std::size_t bytes = ctas * static_cast<std::size_t>(slots) * sizeof(unsigned long long);
  const auto stream = reinterpret_cast<cudaStream_t>(cfg.hStream);
  runtime::DeviceMem buffer(bytes, "cudaMalloc(trace)");
  *trace = static_cast<unsigned long long*>(buffer.ptr);
  runtime::check_cuda(cudaMemsetAsync(*trace, 0, bytes, stream), "cudaMemsetAsync(trace)");
  launch.launch(params, what);
  std::vector<unsigned long long> host(ctas * static_cast<std::size_t>(slots));
  runtime::check_cuda(cudaMemcpyAsync(host.data(), *trace, bytes, cudaMemcpyDeviceToHost, stream), "trace copy");
  runtime::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(trace)");
  std::ofstream f(trace_path(), std::ios::trunc);
  f << "# " << title << "\ncta," << columns << "\n";
  for (std::size_t i = 0; i < ctas; ++i) {
    f << i;
    for (int s = 0; s < columns_used; ++s) f << ',' << host[i * static_cast<std::size_t>(slots) + s];
    f << '\n';
  }
}

}  // namespace tmagemm::choices
