// host_overhead.cpp — Google Benchmark of the host time of a tuned mm call (in-memory hit): validation, the
// tuner's map lookup, TMA descriptor encoding and the launch. Needs a GPU; without one it reports an error.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include "runtime/device.hpp"
#include "tmagemm/tmagemm.hpp"

namespace {

void BM_TunedMmHostTime(benchmark::State& state) {
  if (tmagemm::runtime::device_count() == 0) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const int64_t n = state.range(0);
  void *a, *b, *c;
  cudaMalloc(&a, n * n * 2);
  cudaMalloc(&b, n * n * 2);
  cudaMalloc(&c, n * n * 2);
  cudaMemset(a, 0x3c, n * n * 2);
  cudaMemset(b, 0x3c, n * n * 2);
  using tmagemm::DType;
  using tmagemm::TensorView;
  const TensorView va = TensorView::contiguous(a, DType::bf16, {n, n});
  const TensorView vb = TensorView::contiguous(b, DType::bf16, {n, n});
  const TensorView vc = TensorView::contiguous(c, DType::bf16, {n, n});
  tmagemm::Options o;
  tmagemm::mm(va, vb, vc, o);  // tunes (or reads the DB) once
  cudaDeviceSynchronize();
  int i = 0;
  for (auto _ : state) {
    tmagemm::mm(va, vb, vc, o);
    if (++i % 256 == 0) {  // keep the launch queue short so launches never block on a full queue
      state.PauseTiming();
      cudaDeviceSynchronize();
      state.ResumeTiming();
    }
  }
  cudaDeviceSynchronize();
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}
BENCHMARK(BM_TunedMmHostTime)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
