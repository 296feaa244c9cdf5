// cuda_check.cpp — CUDA status → tmagemm::Error(cuda_error).
#include "runtime/cuda_check.hpp"

#include <string>

#include "runtime/device.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::runtime {

void check_cuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw Error(ErrorCode::cuda_error, std::string(what) + ": " + cudaGetErrorName(status) + ": " +
                                         cudaGetErrorString(status));
}

void check_cu(CUresult status, const char* what) {
  if (status == CUDA_SUCCESS) return;
  const char* name = "CUDA_ERROR";
  const char* text = "";
  const DriverApi& api = driver();
  if (api.get_error_name) api.get_error_name(status, &name);
  if (api.get_error_string) api.get_error_string(status, &text);
  throw Error(ErrorCode::cuda_error,
              std::string(what) + ": " + name + " (" + std::to_string(static_cast<int>(status)) + "): " + text);
}

}  // namespace tmagemm::runtime
