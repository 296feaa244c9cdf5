// load.cpp — compiled kernel -> CUfunction on a device's primary context, through driver entry points
// (no libcuda link). Every loaded kernel is one module in the process's module registry (modules.hpp): jit::load
// keeps its module for the life of the process (its caller holds a raw CUfunction); jit::acquire hands out a
// LoadedFunction whose module a tuning may leave idle and the registry may unload (callers ask jit::use first).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <utility>

#include "jit/jit.hpp"
#include "jit/modules.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"

namespace tmagemm::jit {

namespace {

constexpr std::size_t kDefaultDynamicSmemLimit = 48 * 1024;

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

void raise_smem_limit(ModuleEntry& entry, std::size_t dynamic_smem_bytes) {
  if (dynamic_smem_bytes <= kDefaultDynamicSmemLimit) return;
  std::lock_guard<std::mutex> lock(entry.smem_mutex);
  if (dynamic_smem_bytes <= entry.max_dynamic_smem) return;
  runtime::check_cu(runtime::driver().func_set_attribute(entry.function,
                                                          CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                          static_cast<int>(dynamic_smem_bytes)),
                    "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  entry.max_dynamic_smem = dynamic_smem_bytes;
}

// The registry's unload: on the module's device (errors are ignored: the module is gone from the registry either way).
void unload_module(CUmodule module, int device) {
  const runtime::ThreadLocalCaptureMode mode;  // another thread may be capturing (cuda_check.hpp)
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
  if (cudaSetDevice(device) == cudaSuccess) (void)runtime::driver().module_unload(module);
  if (previous >= 0) (void)cudaSetDevice(previous);
  cudaGetLastError();
}

}  // namespace

ModuleRegistry& module_registry() {
  static auto* registry = new ModuleRegistry(&unload_module);  // leaked: outlives static destructors
  return *registry;
}

LoadedFunction acquire(const KernelSpec& spec, int device, std::size_t dynamic_smem_bytes) {
  const std::string arch = runtime::device_info(device).arch();  // throws Error(cuda_error) for a bad device
  LoadedFunction f = module_registry().acquire(cache_key(spec, arch), device, [&] {
    DeviceScope scope(device);
    const runtime::ThreadLocalCaptureMode mode;  // another thread may be capturing (cuda_check.hpp)
    const Cubin cubin = compile(spec, arch);
    const runtime::DriverApi& api = runtime::driver();
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    runtime::check_cu(api.module_load_data(&module, cubin.image.data()), "cuModuleLoadData");
    const CUresult got = api.module_get_function(&function, module, cubin.lowered_name.c_str());
    if (got != CUDA_SUCCESS) {
      api.module_unload(module);
      runtime::check_cu(got, ("cuModuleGetFunction(" + cubin.lowered_name + ")").c_str());
    }
    return std::pair<CUmodule, CUfunction>(module, function);
  });
  raise_smem_limit(*f.module, dynamic_smem_bytes);
  return f;
}

CUfunction load(const KernelSpec& spec, int device, std::size_t dynamic_smem_bytes) {
  const LoadedFunction f = acquire(spec, device, dynamic_smem_bytes);
  module_registry().keep(f);  // the caller holds a raw CUfunction: never unloaded
  return f.function;
}

}  // namespace tmagemm::jit
