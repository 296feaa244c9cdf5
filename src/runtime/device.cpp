// device.cpp — device properties (cached) and driver entry points (resolved once, no libcuda link).
#include "runtime/device.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/cuda_check.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::runtime {

std::string DeviceInfo::arch() const {
  std::string a = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  if (cc_major == 9 && cc_minor == 0) a += "a";  // NOTE: wgmma/setmaxnreg exist only on the sm_90a target.
  return a;
}

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" status
    return 0;
  }
  return n;
}

int current_device() {
  int d = 0;
  check_cuda(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}

const DeviceInfo& device_info(int device) {
  // Read on every call: a device already described is found without the lock or a device count (the count of
  // devices does not change in a process, so a device that existed once still does).
  constexpr int kLockFree = 64;
  static std::atomic<const DeviceInfo*> described[kLockFree] = {};
  if (device >= 0 && device < kLockFree)
    if (const DeviceInfo* known = described[device].load(std::memory_order_acquire)) return *known;

  static std::mutex mutex;
  static std::vector<std::unique_ptr<DeviceInfo>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (device < 0 || device >= device_count())
    throw Error(ErrorCode::cuda_error, "device " + std::to_string(device) + " does not exist (" +
                                           std::to_string(device_count()) + " CUDA devices)");
  if (cache.size() <= static_cast<std::size_t>(device)) cache.resize(device + 1);
  if (!cache[device]) {
    auto info = std::make_unique<DeviceInfo>();
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    info->index = device;
    info->name = prop.name;
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sm_count = prop.multiProcessorCount;
    info->smem_per_block_optin = prop.sharedMemPerBlockOptin;
    info->smem_per_sm = prop.sharedMemPerMultiprocessor;
    info->l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
    check_cuda(cudaDriverGetVersion(&info->driver_version), "cudaDriverGetVersion");
    check_cuda(cudaRuntimeGetVersion(&info->runtime_version), "cudaRuntimeGetVersion");
    cache[device] = std::move(info);
    if (device < kLockFree) described[device].store(cache[device].get(), std::memory_order_release);
  }
  return *cache[device];
}

namespace {
template <class Fn>
void resolve(const char* symbol, int version, Fn& out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  cudaError_t st = cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &q);
  if (st != cudaSuccess || q != cudaDriverEntryPointSuccess || fn == nullptr) {
    cudaGetLastError();
    throw Error(ErrorCode::cuda_error, std::string("driver entry point ") + symbol + " (version " +
                                           std::to_string(version) + ") is not available: " +
                                           (st != cudaSuccess ? cudaGetErrorString(st) : "symbol not found"));
  }
  out = reinterpret_cast<Fn>(fn);
}
}  // namespace

const DriverApi& driver() {
  static DriverApi api;
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    try {
      resolve("cuGetErrorName", 6000, api.get_error_name);
      resolve("cuGetErrorString", 6000, api.get_error_string);
      resolve("cuTensorMapEncodeTiled", 12000, api.tensor_map_encode_tiled);
      resolve("cuModuleLoadData", 2000, api.module_load_data);
      resolve("cuModuleUnload", 2000, api.module_unload);
      resolve("cuModuleGetFunction", 2000, api.module_get_function);
      resolve("cuFuncSetAttribute", 9000, api.func_set_attribute);
      resolve("cuFuncGetAttribute", 2020, api.func_get_attribute);
      resolve("cuLaunchKernelEx", 11060, api.launch_kernel_ex);
      resolve("cuOccupancyMaxActiveClusters", 11070, api.occupancy_max_active_clusters);
      resolve("cuPointerGetAttributes", 7000, api.pointer_get_attributes);
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw Error(ErrorCode::cuda_error, failure);
  return api;
}

bool driver_pointer_location(const void* p, bool& is_device, int& device) noexcept {
  const DriverApi* api = nullptr;
  try {
    api = &driver();
  } catch (const std::exception&) {
    return false;
  }
  unsigned int memory_type = 0, managed = 0;  // 0 = not a CUDA pointer (the driver leaves unknown pointers at 0)
  int ordinal = -1;
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* data[] = {&memory_type, &managed, &ordinal};
  if (api->pointer_get_attributes(3, attrs, data, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return false;
  const bool on_device = memory_type == CU_MEMORYTYPE_DEVICE || managed != 0;
  if (on_device && ordinal < 0) return false;  // no device to report: let the runtime answer
  is_device = on_device;
  device = on_device ? ordinal : -1;
  return true;
}

bool stream_capturing(cudaStream_t stream) noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamIsCapturing(stream, &status);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return e == cudaErrorStreamCaptureImplicit;
  }
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace tmagemm::runtime
