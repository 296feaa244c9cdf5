// host_overhead.cpp — Google Benchmark of host time on the mm call path.
//   BM_TunedMmHostTime/256/<0|1> : a whole tuned mm call (in-memory hit): validation, the tuner's map lookup, TMA
//                             descriptors (memoised) and the launch; /0 lets the tuner pick any backend, /1
//                             keeps to persistent TMA. The label names the choice that ran. Needs a GPU;
//                             without one it reports an error.
//   BM_RawCublasLtHostTime/256 : cublasLtMatmul alone on the same problem (heuristic's first algorithm, a
//                             workspace): the floor of a tuned call whose winner is a cuBLASLt algorithm.
//   BM_ValidateAndChooseCpu : validation (pointer queries faked) + the tuner's in-memory hit on a described
//                             H200 — the library's own share of the call, measurable on any machine.
//   BM_TensorMapCacheHitCpu : one lookup in the per-thread tensor-map memo (what a repeated descriptor costs).
// The parts of a tuned call, each alone on the GPU's host (their sum is about BM_TunedMmHostTime):
//   BM_PointerQueryHost      : where one device pointer lives (one driver call; a call makes one per tensor).
//   BM_SetDeviceHost         : dispatch's cudaSetDevice.
//   BM_MakeProblemHost       : make_mm_problem with the real pointer queries (validation).
//   BM_LaunchOnlyHost/<0|1>  : the tuned choice's launch() alone (descriptors, grid, cuLaunchKernelEx).
//   BM_EmptyLaunchHost       : cuLaunchKernelEx of an empty kernel: the driver's floor for any launch.
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>

#include "jit/jit.hpp"

#include "problem/problem.hpp"
#include "runtime/device.hpp"
#include "runtime/tensor_map.hpp"
#include "tmagemm/tmagemm.hpp"
#include "tune/tuner.hpp"

namespace {

// Launches before the timed runs of each GPU benchmark: the first benchmark of a process otherwise read 30-50 %
// slower than the same one run later (11.7 against 8.2 us; perf notes, host time).
constexpr double kWarmUpSeconds = 0.5;

// Device buffers and views of one n x n x n bf16 problem, for the host benchmarks below.
struct HostProblem {
  void *a = nullptr, *b = nullptr, *c = nullptr;
  tmagemm::TensorView va, vb, vc;
  explicit HostProblem(int64_t n) {
    cudaMalloc(&a, n * n * 2);
    cudaMalloc(&b, n * n * 2);
    cudaMalloc(&c, n * n * 2);
    cudaMemset(a, 0x3c, n * n * 2);
    cudaMemset(b, 0x3c, n * n * 2);
    va = tmagemm::TensorView::contiguous(a, tmagemm::DType::bf16, {n, n});
    vb = tmagemm::TensorView::contiguous(b, tmagemm::DType::bf16, {n, n});
    vc = tmagemm::TensorView::contiguous(c, tmagemm::DType::bf16, {n, n});
  }
  ~HostProblem() {
    cudaDeviceSynchronize();
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
};

// Runs `fn` per iteration, draining the launch queue every 256 (outside the timing).
template <class Fn>
void host_loop(benchmark::State& state, Fn&& fn) {
  int i = 0;
  for (auto _ : state) {
    fn();
    if (++i % 256 == 0) {
      state.PauseTiming();
      cudaDeviceSynchronize();
      state.ResumeTiming();
    }
  }
  cudaDeviceSynchronize();
}

// Options of the /<0|1> variants: 0 lets the tuner pick any backend, 1 keeps to persistent TMA.
tmagemm::Options options_for(const benchmark::State& state) {
  tmagemm::Options o;
  if (state.range(1) == 1) {
    o.cublaslt = false;
    o.fallback = false;
  }
  return o;
}

void BM_TunedMmHostTime(benchmark::State& state) {
  if (tmagemm::runtime::device_count() == 0) return state.SkipWithError("no CUDA device");
  HostProblem hp(state.range(0));
  const tmagemm::Options o = options_for(state);
  tmagemm::mm(hp.va, hp.vb, hp.vc, o);  // tunes (or reads the DB) once
  cudaDeviceSynchronize();
  state.SetLabel(tmagemm::tune::choose(tmagemm::make_mm_problem(hp.va, hp.vb, hp.vc), o)->name());
  host_loop(state, [&] { tmagemm::mm(hp.va, hp.vb, hp.vc, o); });
}
BENCHMARK(BM_TunedMmHostTime)->Args({256, 0})->Args({256, 1})->MinWarmUpTime(kWarmUpSeconds)->Unit(benchmark::kMicrosecond);

void BM_RawCublasLtHostTime(benchmark::State& state) {
  if (tmagemm::runtime::device_count() == 0) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  const std::size_t ws_bytes = std::size_t{32} << 20;
  void *a, *b, *c, *ws;
  cudaMalloc(&a, n * n * 2);
  cudaMalloc(&b, n * n * 2);
  cudaMalloc(&c, n * n * 2);
  cudaMalloc(&ws, ws_bytes);
  cudaMemset(a, 0x3c, n * n * 2);
  cudaMemset(b, 0x3c, n * n * 2);
  cublasLtHandle_t h;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulHeuristicResult_t algo{};
  int found = 0;
  bool ok = cublasLtCreate(&h) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, n, n, static_cast<int64_t>(n)) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, n, n, static_cast<int64_t>(n)) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, n, static_cast<int64_t>(n)) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS;
  const uint64_t ws64 = ws_bytes;
  ok = ok && cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws64,
                                                   sizeof ws64) == CUBLAS_STATUS_SUCCESS;
  ok = ok && cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, lc, lc, pref, 1, &algo, &found) == CUBLAS_STATUS_SUCCESS &&
       found == 1;
  if (!ok) {
    state.SkipWithError("cuBLASLt setup failed");
    return;
  }
  const float alpha = 1.0f, beta = 0.0f;
  host_loop(state, [&] {
    cublasLtMatmul(h, desc, &alpha, b, la, a, lb, &beta, c, lc, c, lc, &algo.algo, ws, ws_bytes, nullptr);
  });
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(h);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(ws);
}
BENCHMARK(BM_RawCublasLtHostTime)->Arg(256)->MinWarmUpTime(kWarmUpSeconds)->Unit(benchmark::kMicrosecond);

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

void BM_PointerQueryHost(benchmark::State& state) {
  if (tmagemm::runtime::device_count() == 0) return state.SkipWithError("no CUDA device");
  HostProblem hp(256);
  bool on_device = false;
  int device = -1;
  for (auto _ : state) benchmark::DoNotOptimize(tmagemm::runtime::driver_pointer_location(hp.a, on_device, device));
}
BENCHMARK(BM_PointerQueryHost)->Unit(benchmark::kMicrosecond);

void BM_SetDeviceHost(benchmark::State& state) {
  if (tmagemm::runtime::device_count() == 0) return state.SkipWithError("no CUDA device");
  cudaSetDevice(0);
  for (auto _ : state) benchmark::DoNotOptimize(cudaSetDevice(0));
}
BENCHMARK(BM_SetDeviceHost)->Unit(benchmark::kMicrosecond);

void BM_MakeProblemHost(benchmark::State& state) {
  if (tmagemm::runtime::device_count() == 0) return state.SkipWithError("no CUDA device");
  HostProblem hp(256);
  for (auto _ : state) benchmark::DoNotOptimize(tmagemm::make_mm_problem(hp.va, hp.vb, hp.vc));
}
BENCHMARK(BM_MakeProblemHost)->Unit(benchmark::kMicrosecond);

void BM_LaunchOnlyHost(benchmark::State& state) {
  if (tmagemm::runtime::device_count() == 0) return state.SkipWithError("no CUDA device");
  HostProblem hp(state.range(0));
  const tmagemm::Options o = options_for(state);
  const tmagemm::GemmProblem p = tmagemm::make_mm_problem(hp.va, hp.vb, hp.vc);
  tmagemm::mm(hp.va, hp.vb, hp.vc, o);  // tunes (or reads the DB) once; allocates any workspace
  cudaDeviceSynchronize();
  const auto choice = tmagemm::tune::choose(p, o);
  state.SetLabel(choice->name());
  void* ws = nullptr;
  if (const std::size_t bytes = choice->workspace_bytes(p)) cudaMalloc(&ws, bytes);
  host_loop(state, [&] { choice->launch(p, nullptr, o, ws); });
  cudaFree(ws);
}
BENCHMARK(BM_LaunchOnlyHost)->Args({256, 0})->Args({256, 1})->MinWarmUpTime(kWarmUpSeconds)->Unit(benchmark::kMicrosecond);

void BM_EmptyLaunchHost(benchmark::State& state) {
  if (tmagemm::runtime::device_count() == 0) return state.SkipWithError("no CUDA device");
  tmagemm::jit::KernelSpec s;
  s.name = "host_bench_empty";
  s.extra_source = "namespace tmagemm::bench { __global__ void empty_kernel() {} }\n";
  s.kernel = "tmagemm::bench::empty_kernel";
  CUfunction fn = tmagemm::jit::load(s, 0, 0);
  CUlaunchConfig cfg{};
  cfg.gridDimX = 132;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  host_loop(state, [&] { tmagemm::runtime::driver().launch_kernel_ex(&cfg, fn, nullptr, nullptr); });
}
BENCHMARK(BM_EmptyLaunchHost)->MinWarmUpTime(kWarmUpSeconds)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
