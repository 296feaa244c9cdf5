// cuda_check.cpp — CUDA status → tmagemm::Error(cuda_error), or Error(out_of_memory) for device memory running out.
#include "runtime/cuda_check.hpp"

#include <exception>
#include <string>

#include "runtime/device.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::runtime {

void check_cuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw Error(status == cudaErrorMemoryAllocation ? ErrorCode::out_of_memory : ErrorCode::cuda_error, std::string(what) + ": " + cudaGetErrorName(status) + ": " +
                                         cudaGetErrorString(status));
}

void check_cu(CUresult status, const char* what) {
  if (status == CUDA_SUCCESS) return;
  const char* name = "CUDA_ERROR";
  const char* text = "";
  try {  // the names are a courtesy: without the driver's entry points the status is reported by number
    const DriverApi& api = driver();
    if (api.get_error_name) api.get_error_name(status, &name);
    if (api.get_error_string) api.get_error_string(status, &text);
  } catch (const std::exception&) {
  }
  throw Error(status == CUDA_ERROR_OUT_OF_MEMORY ? ErrorCode::out_of_memory : ErrorCode::cuda_error,
              std::string(what) + ": " + name + " (" + std::to_string(static_cast<int>(status)) + "): " + text);
}

bool is_out_of_memory(const std::exception& e) noexcept {
  const auto* error = dynamic_cast<const Error*>(&e);
  return error && error->code() == ErrorCode::out_of_memory;
}

}  // namespace tmagemm::runtime
