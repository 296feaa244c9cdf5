// cuda_check.hpp — the one place CUDA runtime/driver status codes become tmagemm::Error(cuda_error), or
// Error(out_of_memory) where device memory ran out (cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY): a failure
// of the moment, not of the choice (the dispatcher runs another choice for that call and keeps this one).
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <exception>

namespace tmagemm::runtime {

// Throws Error(cuda_error, "<what>: <cudaGetErrorName>: <cudaGetErrorString>") unless status is success
// (out_of_memory for cudaErrorMemoryAllocation).
void check_cuda(cudaError_t status, const char* what);
// Same for driver-API results obtained through driver entry points (out_of_memory for CUDA_ERROR_OUT_OF_MEMORY).
void check_cu(CUresult status, const char* what);

// True for a tmagemm::Error(out_of_memory).
bool is_out_of_memory(const std::exception& e) noexcept;

// While alive, the calling thread's stream-capture interaction mode is cudaStreamCaptureModeThreadLocal (then the
// previous one again). NOTE: in the default (global) mode, a call CUDA deems unsafe during a capture (cudaMalloc,
// cudaFree, module loads, synchronisations) fails, and invalidates the capture, when any other thread is capturing
// in global mode: a tuning on one thread would break a graph captured on another. Thread-local mode ignores other
// threads' captures (this thread's own capture still forbids them: the tuner never runs inside one).
class ThreadLocalCaptureMode {
 public:
  ThreadLocalCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~ThreadLocalCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ThreadLocalCaptureMode(const ThreadLocalCaptureMode&) = delete;
  ThreadLocalCaptureMode& operator=(const ThreadLocalCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeThreadLocal;
};

// Device memory owned for a scope (the library's own scratch): cudaMalloc of `bytes` (none for 0; a failure throws
// through check_cuda with `what`), cudaFree on every path out; both in thread-local capture mode.
struct DeviceMem {
  void* ptr = nullptr;
  DeviceMem(std::size_t bytes, const char* what) {
    const ThreadLocalCaptureMode mode;
    if (bytes) check_cuda(cudaMalloc(&ptr, bytes), what);
  }
  ~DeviceMem() {
    const ThreadLocalCaptureMode mode;
    if (ptr) cudaFree(ptr);
  }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
};

}  // namespace tmagemm::runtime
