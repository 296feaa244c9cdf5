// cuda_check.hpp — the one place CUDA runtime/driver status codes become tmagemm::Error(cuda_error).
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace tmagemm::runtime {

// Throws Error(cuda_error, "<what>: <cudaGetErrorName>: <cudaGetErrorString>") unless status is success.
void check_cuda(cudaError_t status, const char* what);
// Same for driver-API results obtained through driver entry points.
void check_cu(CUresult status, const char* what);

// Device memory owned for a scope (the library's own scratch): cudaMalloc of `bytes` (none for 0; a failure throws
// through check_cuda with `what`), cudaFree on every path out.
struct DeviceMem {
  void* ptr = nullptr;
  DeviceMem(std::size_t bytes, const char* what) {
    if (bytes) check_cuda(cudaMalloc(&ptr, bytes), what);
  }
  ~DeviceMem() {
    if (ptr) cudaFree(ptr);
  }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
};

}  // namespace tmagemm::runtime
