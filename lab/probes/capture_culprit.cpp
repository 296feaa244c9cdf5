// capture_culprit.cpp — which CUDA call of a tuning on one thread invalidates another thread's global-mode capture?
// GraphCaptureThreads failed on the second of twelve repetitions in every mode (TMAGEMM_PDL=0/1, eager loading):
// this probe repeats the test's steps (a fresh tuning DB, in-memory tuning forgotten, a new problem tuned on a
// second thread while the first captures in global mode) and watches every runtime and driver API call the tuning
// thread makes through CUPTI callbacks: after each call it asks for the capture's status and prints the first call
// after which it is no longer active, and every call that returned a capture error.
// Build (from the repository root, after the library's build in build/):
//   c++ -O1 -std=c++20 -Iinclude -Isrc -I/usr/local/cuda/include lab/probes/capture_culprit.cpp -o capture_culprit \
//     build/libtmagemm.a <the GPU tests' link line> -lcupti -rdynamic
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <execinfo.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "tmagemm/tmagemm.hpp"
#include "tune/tuner.hpp"

namespace {

std::atomic<CUstream> g_watched{nullptr};
std::atomic<bool> g_reported{false};
thread_local bool t_watching = false;
thread_local bool t_inside = false;
thread_local bool t_printed = false;
thread_local int t_calls = 0;
// The tuning thread's last calls (name, domain, return value), printed when the capture is found inactive.
struct Recent {
  const char* name;
  bool driver;
  int result;
};
thread_local Recent t_recent[48];

void CUPTIAPI on_api(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (!t_watching || t_inside || info->callbackSite != CUPTI_API_EXIT) return;
  t_inside = true;
  ++t_calls;
  int result = 0;
  if (info->functionReturnValue)
    result = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? static_cast<int>(*static_cast<const cudaError_t*>(info->functionReturnValue))
                                                   : static_cast<int>(*static_cast<const CUresult*>(info->functionReturnValue));
  t_recent[t_calls % 48] = {info->functionName, domain == CUPTI_CB_DOMAIN_DRIVER_API, result};
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && info->functionReturnValue) {
    const cudaError_t e = *static_cast<const cudaError_t*>(info->functionReturnValue);
    if (e == cudaErrorStreamCaptureUnsupported || e == cudaErrorStreamCaptureInvalidated ||
        e == cudaErrorStreamCaptureImplicit || e == cudaErrorStreamCaptureWrongThread)
    {
      std::printf("  call %d: runtime %s returned %s, from:\n", t_calls, info->functionName, cudaGetErrorName(e));
      std::fflush(stdout);
      void* frames[24];
      backtrace_symbols_fd(frames, backtrace(frames, 24), 1);
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && info->functionReturnValue) {
    const CUresult r = *static_cast<const CUresult*>(info->functionReturnValue);
    if (r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ||
        r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
      std::printf("  call %d: driver %s returned %d\n", t_calls, info->functionName, static_cast<int>(r));
  }
  if (CUstream s = g_watched.load()) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuStreamIsCapturing(s, &status);
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE && !g_reported.exchange(true))
      std::printf("  capture no longer active (status %d) after call %d: %s %s\n", static_cast<int>(status), t_calls,
                  domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver", info->functionName);
    if (g_reported.load() && status != CU_STREAM_CAPTURE_STATUS_ACTIVE && !t_printed) {
      t_printed = true;
      for (int i = t_calls - 47; i <= t_calls; ++i)
        if (i > 0) {
          const Recent& r = t_recent[i % 48];
          std::printf("    %d %s %s -> %d\n", i, r.driver ? "driver " : "runtime", r.name, r.result);
        }
    }
  }
  t_inside = false;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::printf("%s: %s\n", what, cudaGetErrorName(e));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 4;
  CUpti_SubscriberHandle sub;
  if (cuptiSubscribe(&sub, reinterpret_cast<CUpti_CallbackFunc>(on_api), nullptr) != CUPTI_SUCCESS) return 2;
  cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
  const std::string base = std::getenv("TMAGEMM_CACHE_DIR") ? std::getenv("TMAGEMM_CACHE_DIR") : "/tmp/tmagemm-probe";
  for (int it = 1; it <= repeats; ++it) {
    // As FreshTuningDb: a new DB directory beside a link to the kernel cache.
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("capture-culprit-" + std::to_string(it));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::error_code ec;
    std::filesystem::create_directory_symlink(std::filesystem::path(base) / "kernels", dir / "kernels", ec);
    ::setenv("TMAGEMM_CACHE_DIR", dir.c_str(), 1);
    tmagemm::tune::forget_in_memory();
    const int M = 328, N = 264, K = 200;
    void *a, *b, *out, *captured;
    check(cudaMalloc(&a, M * K * 2), "cudaMalloc");
    check(cudaMalloc(&b, K * N * 2), "cudaMalloc");
    check(cudaMalloc(&out, M * N * 2), "cudaMalloc");
    check(cudaMalloc(&captured, 64 * 64 * 2), "cudaMalloc");
    check(cudaMemset(a, 0x3c, M * K * 2), "cudaMemset");
    check(cudaMemset(b, 0x3b, K * N * 2), "cudaMemset");
    cudaStream_t capturing, tuning;
    check(cudaStreamCreateWithFlags(&capturing, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaStreamCreateWithFlags(&tuning, cudaStreamNonBlocking), "cudaStreamCreate");
    tmagemm::Options o;
    o.tuning = tmagemm::Tuning::benchmark;
    o.stream = tuning;
    const auto av = tmagemm::TensorView::contiguous(a, tmagemm::DType::bf16, {M, K});
    const auto bv = tmagemm::TensorView::contiguous(b, tmagemm::DType::bf16, {N, K}).t();  // column-major K x N
    const auto ov = tmagemm::TensorView::contiguous(out, tmagemm::DType::bf16, {M, N});
    std::printf("iteration %d\n", it);
    g_reported = false;
    check(cudaStreamBeginCapture(capturing, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    check(cudaMemsetAsync(captured, 0x3c, 64 * 64 * 2, capturing), "captured memset");
    g_watched = reinterpret_cast<CUstream>(capturing);
    std::thread tuner([&] {
      t_watching = true;
      t_printed = false;
      try {
        tmagemm::mm(av, bv, ov, o);
      } catch (const std::exception& e) {
        std::printf("  mm threw: %s\n", e.what());
      }
      std::printf("  tuning thread made %d API calls\n", t_calls);
      t_watching = false;
    });
    tuner.join();
    g_watched = nullptr;
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(capturing, &graph);
    std::printf("  end capture: %s\n", cudaGetErrorName(ended));
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    check(cudaStreamSynchronize(tuning), "tuned call");
    cudaStreamDestroy(capturing);
    cudaStreamDestroy(tuning);
    cudaFree(a);
    cudaFree(b);
    cudaFree(out);
    cudaFree(captured);
    tmagemm::tune::forget_in_memory();
    std::filesystem::remove_all(dir);
  }
  cuptiUnsubscribe(sub);
  return 0;
}
