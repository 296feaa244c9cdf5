// load.cpp — compiled kernel -> CUfunction on a device's primary context, through driver entry points
// (no libcuda link). Memoised per (cache key, device) for the life of the process; modules are never unloaded.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "jit/jit.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"

namespace tmagemm::jit {

namespace {

constexpr std::size_t kDefaultDynamicSmemLimit = 48 * 1024;

struct Loaded {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::size_t max_dynamic_smem = 0;  // the largest value set through CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
};

std::mutex& memo_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::pair<std::string, int>, Loaded>& memo() {
  static auto* m = new std::map<std::pair<std::string, int>, Loaded>();  // leaked: outlives static destructors
  return *m;
}

// Makes `device`'s primary context current on this thread; restores the previous device on exit.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    runtime::check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    // NOTE: since CUDA 12.0 cudaSetDevice initialises the device's primary context. (The cudaFree(0) idiom would
    // invalidate a stream capture in progress: a kernel first loaded during a capture comes through here.)
    runtime::check_cuda(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceScope() {
    if (previous_ >= 0) (void)cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

void raise_smem_limit(Loaded& entry, std::size_t dynamic_smem_bytes) {
  if (dynamic_smem_bytes <= kDefaultDynamicSmemLimit || dynamic_smem_bytes <= entry.max_dynamic_smem) return;
  runtime::check_cu(runtime::driver().func_set_attribute(entry.function,
                                                          CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                          static_cast<int>(dynamic_smem_bytes)),
                    "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  entry.max_dynamic_smem = dynamic_smem_bytes;
}

}  // namespace

CUfunction load(const KernelSpec& spec, int device, std::size_t dynamic_smem_bytes) {
  const std::string arch = runtime::device_info(device).arch();  // throws Error(cuda_error) for a bad device
  const std::pair<std::string, int> memo_key(cache_key(spec, arch), device);
  {
    std::lock_guard<std::mutex> lock(memo_mutex());
    auto it = memo().find(memo_key);
    if (it != memo().end()) {
      raise_smem_limit(it->second, dynamic_smem_bytes);
      return it->second.function;
    }
  }

  // Not loaded yet: compile and load without holding the lock (compiles take seconds; other kernels and
  // devices must not wait). Two threads racing here both load; the loser unloads its module.
  DeviceScope scope(device);
  const Cubin cubin = compile(spec, arch);
  const runtime::DriverApi& api = runtime::driver();
  Loaded fresh;
  runtime::check_cu(api.module_load_data(&fresh.module, cubin.image.data()), "cuModuleLoadData");
  const CUresult got = api.module_get_function(&fresh.function, fresh.module, cubin.lowered_name.c_str());
  if (got != CUDA_SUCCESS) {
    api.module_unload(fresh.module);
    runtime::check_cu(got, ("cuModuleGetFunction(" + cubin.lowered_name + ")").c_str());
  }

  std::lock_guard<std::mutex> lock(memo_mutex());
  auto [it, inserted] = memo().emplace(memo_key, fresh);
  if (!inserted) api.module_unload(fresh.module);
  raise_smem_limit(it->second, dynamic_smem_bytes);
  return it->second.function;
}

}  // namespace tmagemm::jit
