// cuda_check.hpp — the one place CUDA runtime/driver status codes become tmagemm::Error(cuda_error).
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

namespace tmagemm::runtime {

// Throws Error(cuda_error, "<what>: <cudaGetErrorName>: <cudaGetErrorString>") unless status is success.
void check_cuda(cudaError_t status, const char* what);
// Same for driver-API results obtained through driver entry points.
void check_cu(CUresult status, const char* what);

}  // namespace tmagemm::runtime
