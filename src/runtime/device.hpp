// device.hpp — cached device properties and the driver entry points tmagemm uses (no libcuda link).
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace tmagemm::runtime {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t smem_per_block_optin = 0;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
  std::size_t smem_per_sm = 0;
  std::size_t l2_bytes = 0;
  int driver_version = 0, runtime_version = 0;
  std::string arch() const;  // NVRTC target: "sm_90a" for cc 9.0, else "sm_<major><minor>"
};

// Number of CUDA devices; 0 when there is no device or no driver (never throws).
int device_count() noexcept;
// The calling thread's current device (throws Error(cuda_error) when there is none).
int current_device();
// True when `stream` is being captured into a CUDA graph, or a query on it reports that it would join another
// stream's capture (the legacy stream during a capture): then nothing may allocate, free or synchronise.
bool stream_capturing(cudaStream_t stream) noexcept;
// Properties of a device, read once per process and cached (thread-safe).
const DeviceInfo& device_info(int device);

// Driver API functions resolved with cudaGetDriverEntryPointByVersion on first use.
struct DriverApi {
  PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encode_tiled = nullptr;
  PFN_cuModuleLoadData_v2000 module_load_data = nullptr;
  PFN_cuModuleUnload_v2000 module_unload = nullptr;
  PFN_cuModuleGetFunction_v2000 module_get_function = nullptr;
  PFN_cuFuncSetAttribute_v9000 func_set_attribute = nullptr;
  PFN_cuFuncGetAttribute_v2020 func_get_attribute = nullptr;
  PFN_cuLaunchKernelEx_v11060 launch_kernel_ex = nullptr;
  PFN_cuOccupancyMaxActiveClusters_v11070 occupancy_max_active_clusters = nullptr;
  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuGetErrorString_v6000 get_error_string = nullptr;
  PFN_cuPointerGetAttributes_v7000 pointer_get_attributes = nullptr;
};
// Throws Error(cuda_error) naming the entry point that could not be resolved.
const DriverApi& driver();

// Where `p` lives, from one cuPointerGetAttributes call (memory type, managed flag, device ordinal): what
// cudaPointerGetAttributes reports, without the runtime's extra work per call. `is_device` is true for device or
// managed memory, and `device` is then its device. Returns false, setting nothing, when the driver cannot answer
// (no driver or entry points, driver not initialised, any error): the caller then asks the runtime.
bool driver_pointer_location(const void* p, bool& is_device, int& device) noexcept;

}  // namespace tmagemm::runtime
