// capture_mode_probe.cu — does a cudaMalloc/cudaFree on one thread break another thread's global-mode capture, and
// does thread-local capture mode on the allocating thread prevent it? (Checks the premise of
// runtime::ThreadLocalCaptureMode.) Prints the allocation's status and the capture's end status for both modes.
#include <cuda_runtime.h>

#include <cstdio>
#include <thread>

int main() {
  for (int local = 0; local < 2; ++local) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    void* buf;
    cudaMalloc(&buf, 1 << 20);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaMemsetAsync(buf, 1, 1 << 20, s);
    cudaError_t alloc = cudaSuccess, freed = cudaSuccess;
    std::thread t([&] {
      cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal;
      if (local) cudaThreadExchangeStreamCaptureMode(&mode);
      void* p = nullptr;
      alloc = cudaMalloc(&p, 4 << 20);
      freed = p ? cudaFree(p) : cudaSuccess;
      if (local) cudaThreadExchangeStreamCaptureMode(&mode);
    });
    t.join();
    cudaGraph_t g = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(s, &g);
    std::printf("%s mode on the allocating thread: cudaMalloc %s, cudaFree %s, capture end %s\n",
                local ? "thread-local" : "global (default)", cudaGetErrorName(alloc), cudaGetErrorName(freed),
                cudaGetErrorName(ended));
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
    cudaFree(buf);
    cudaStreamDestroy(s);
  }
  return 0;
}
