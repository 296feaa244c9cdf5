// per_thread_stream_probe.cpp — what a call costs on the per-thread default stream, whose launch workspace is
// stream-ordered memory of the call's own (dispatch.cpp Workspace: from the device's default pool per call until the
// twenty-sixth session, from tmagemm's own pool, which keeps what is freed, since), against
// a created stream, whose workspace is a kept buffer. cuBLASLt's first algorithm (a workspace-using choice), heuristic
// mode, 256x4096x4096 bf16: host wall time per call, (a) each call followed by a stream synchronisation (a server
// step: the default pool may hand its memory back at each synchronisation), (b) 200 calls, then one synchronisation.
// Build (from the repository root, after the library's build in build/):
//   c++ -O2 -std=c++20 -Iinclude -Ibuild/generated/include -Isrc -I/usr/local/cuda/include \
//     lab/probes/per_thread_stream_probe.cpp build/libtmagemm.a -L/usr/local/cuda/lib64 -l:libhiredis.a -lcrypto \
//     -lcudart_static -lnvrtc -lcublasLt -lsqlite3 -ldl -lpthread -lrt -o per_thread_stream_probe
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "tmagemm/tmagemm.hpp"

namespace {

tmagemm::TensorView view(void* p, int64_t rows, int64_t cols) {
  return tmagemm::TensorView::contiguous(p, tmagemm::DType::bf16, {rows, cols});
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  const int64_t M = 256, N = 4096, K = 4096;
  void *a, *b, *out;
  cudaMalloc(&a, M * K * 2);
  cudaMalloc(&b, K * N * 2);
  cudaMalloc(&out, M * N * 2);
  cudaMemset(a, 0x3c, M * K * 2);
  cudaMemset(b, 0x3c, K * N * 2);
  cudaStream_t created;
  cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking);
  tmagemm::Options o = tmagemm::Options::defaults_only();
  o.tuning = tmagemm::Tuning::heuristic;
  o.choice_regex = "cublaslt_algo0$";
  using clock = std::chrono::steady_clock;
  for (int round = 0; round < 3; ++round)
    for (cudaStream_t s : {created, cudaStreamPerThread}) {
      o.stream = s;
      const char* name = s == created ? "created stream" : "cudaStreamPerThread";
      std::vector<double> each;
      for (int i = 0; i < 200; ++i) {
        const auto t0 = clock::now();
        tmagemm::mm(view(a, M, K), view(b, K, N), view(out, M, N), o);
        cudaStreamSynchronize(s);
        each.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
      }
      const auto t0 = clock::now();
      for (int i = 0; i < 200; ++i) tmagemm::mm(view(a, M, K), view(b, K, N), view(out, M, N), o);
      cudaStreamSynchronize(s);
      const double batch = std::chrono::duration<double, std::micro>(clock::now() - t0).count() / 200;
      std::printf("round %d %-20s call+sync median %.1f us (min %.1f)  200 calls then sync: %.1f us a call\n", round,
                  name, median(each), *std::min_element(each.begin(), each.end()), batch);
    }
  std::printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
