// host_overhead.cpp — Google Benchmark of host time on the mm call path.
//   BM_TunedMmHostTime/256/<0|1> : a whole tuned mm call (in-memory hit): validation, the tuner's map lookup, TMA
//                             descriptors (memoised) and the launch; /0 lets the tuner pick any backend, /1
//                             keeps to persistent TMA. The label names the choice that ran. Needs a GPU;
//                             without one it reports an error.
//   BM_ValidateAndChooseCpu : validation (pointer queries faked) + the tuner's in-memory hit on a described
//                             H200 — the library's own share of the call, measurable on any machine.
//   BM_TensorMapCacheHitCpu : one lookup in the per-thread tensor-map memo (what a repeated descriptor costs).
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <memory>

#include "problem/problem.hpp"
#include "runtime/device.hpp"
#include "runtime/tensor_map.hpp"
#include "tmagemm/tmagemm.hpp"
#include "tune/tuner.hpp"

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
  if (state.range(1) == 1) {
    o.cublaslt = false;
    o.fallback = false;
  }
  tmagemm::mm(va, vb, vc, o);  // tunes (or reads the DB) once
  cudaDeviceSynchronize();
  state.SetLabel(tmagemm::tune::choose(tmagemm::make_mm_problem(va, vb, vc), o)->name());
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
BENCHMARK(BM_TunedMmHostTime)->Args({256, 0})->Args({256, 1})->Unit(benchmark::kMicrosecond);

void BM_ValidateAndChooseCpu(benchmark::State& state) {
  using namespace tmagemm;
  set_pointer_query([](const void*) { return PointerInfo{true, 0}; });
  runtime::DeviceInfo dev;
  dev.name = "NVIDIA H200";
  dev.cc_major = 9;
  dev.sm_count = 132;
  dev.smem_per_block_optin = 232448;
  dev.l2_bytes = 62914560;
  const int64_t n = 4096;
  auto* a = reinterpret_cast<void*>(0x7f0000000000);
  auto* b = reinterpret_cast<void*>(0x7f1000000000);
  auto* c = reinterpret_cast<void*>(0x7f2000000000);
  const TensorView va = TensorView::contiguous(a, DType::bf16, {n, n});
  const TensorView vb = TensorView::contiguous(b, DType::bf16, {n, n});
  const TensorView vc = TensorView::contiguous(c, DType::bf16, {n, n});
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  tune::choose(make_mm_problem(va, vb, vc), o, dev);
  for (auto _ : state) {
    const GemmProblem p = make_mm_problem(va, vb, vc);
    benchmark::DoNotOptimize(tune::choose(p, o, dev));
  }
  set_pointer_query({});
}
BENCHMARK(BM_ValidateAndChooseCpu)->Unit(benchmark::kMicrosecond);

void BM_TensorMapCacheHitCpu(benchmark::State& state) {
  using namespace tmagemm::runtime;
  auto cache = std::make_unique<TensorMapCache>();
  TensorMapKey key;
  key.address = reinterpret_cast<const void*>(0x7f0000000000);
  key.dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  key.rank = 3;
  key.dims[0] = key.dims[1] = 4096;
  key.dims[2] = 1;
  key.strides[0] = 4096 * 2;
  key.box[0] = 64;
  key.box[1] = 128;
  key.box[2] = 1;
  key.element_strides[0] = key.element_strides[1] = key.element_strides[2] = 1;
  key.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  cache->insert(key, CUtensorMap{});
  for (auto _ : state) {
    CUtensorMap map = *cache->find(key);
    benchmark::DoNotOptimize(map);
  }
}
BENCHMARK(BM_TensorMapCacheHitCpu)->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
