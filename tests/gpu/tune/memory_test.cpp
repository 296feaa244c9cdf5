// memory_test.cpp (GPU) — bounded memory over many tuned shapes (issue 22 point 3): 200 distinct problems (mm, 24
// classes of input dtype x layouts x output dtype, so that many kernels are loaded) tuned by four threads at once on
// their own streams, each tuning restricted by a regex to three persistent-TMA tiles (so that most candidates lose).
// After a warm-up over every class, GPU memory (cudaMemGetInfo) and host memory (VmRSS) may grow only by what new
// winners' modules need, never per shape; the module registry holds at most the kept modules (winners) plus
// jit::kIdleModuleCap idle ones, and has unloaded losers. The numbers are printed for the lab notes. Takes ~1 min on
// an H200 with a warm kernel cache (each tuning heats the card 0.4 s).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <thread>

#include "gpu/gpu_util.hpp"
#include "jit/modules.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

double rss_mib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  return 0;
}

double gpu_used_mib() {
  std::size_t free = 0, total = 0;
  cuda_ok(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return static_cast<double>(total - free) / (1024.0 * 1024.0);
}

// One shape of class `c` (0..23): dtype, a / b layouts, out dtype; extents vary with `i`.
struct Shape {
  DType in, out;
  bool a_col, b_col;
  int64_t m, n, k;
};
Shape shape_of(int c, int i) {
  Shape s;
  s.in = c % 2 ? DType::f16 : DType::bf16;
  s.a_col = (c / 2) % 2;
  s.b_col = (c / 4) % 2;
  const int o = (c / 8) % 3;
  s.out = o == 0 ? s.in : o == 1 ? DType::f32 : (s.in == DType::bf16 ? DType::f16 : DType::bf16);
  // Two shapes of one class with the same n and k are 120 apart in i, so their M (960 rows apart) are in different
  // buckets: every shape is a tuning of its own.
  s.m = 192 + 8 * i;
  s.n = 256 + 64 * (i % 5);
  s.k = 256 + 64 * (i % 3);
  return s;
}

TEST(TuneMemory, GrowthOverManyTunedShapesIsBounded) {
  TMAGEMM_REQUIRE_GPU();
  FreshTuningDb db;
  tune::forget_in_memory();
  Options o = Options::defaults_only();
  o.tuning = Tuning::benchmark;
  o.choice_regex = "^persistent_tma_(128x128x64_s6_c2|64x128x64_s8_c1|128x256x64_s4_c2)_g8(_tmastore)?$";
  constexpr int kClasses = 24, kShapes = 200, kThreads = 4;
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  // Tunes shapes [from, to) over kThreads threads, each on a stream of its own.
  const auto tune_range = [&](int from, int to) {
    std::atomic<int> next{from};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&] {
        cudaStream_t stream = nullptr;
        cuda_ok(cudaSetDevice(0), "cudaSetDevice");
        cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
        Options mine = o;
        mine.stream = stream;
        std::mt19937 rng(7);
        for (int i = next++; i < to; i = next++) {
          const Shape s = shape_of(i % kClasses, i);
          try {
            Matrix a = make_matrix(s.in, s.m, s.k, s.a_col, 8, rng, true);
            Matrix b = make_matrix(s.in, s.k, s.n, s.b_col, 8, rng, true);
            Matrix out = make_matrix(s.out, s.m, s.n, false, 8, rng, false);
            mm(a.view(), b.view(), out.view(), mine);
            cuda_ok(cudaStreamSynchronize(stream), "mm");
          } catch (const std::exception& e) {
            std::lock_guard<std::mutex> lock(failures_mutex);
            failures.push_back(fmt::format("shape {}: {}", i, e.what()));
          }
        }
        cudaStreamDestroy(stream);
      });
    for (auto& th : threads) th.join();
  };

  const TuningStats start = tuning_stats();
  tune_range(0, kClasses);  // warm-up: every class once (its kernels, cuBLASLt handles, the tuner's support kernels)
  cuda_ok(cudaDeviceSynchronize(), "warm-up");
  const TuningStats warm = tuning_stats();
  const double gpu0 = gpu_used_mib(), host0 = rss_mib();
  tune_range(kClasses, kShapes);
  cuda_ok(cudaDeviceSynchronize(), "tunings");
  const TuningStats end = tuning_stats();
  const double gpu1 = gpu_used_mib(), host1 = rss_mib();
  ASSERT_TRUE(failures.empty()) << failures.front();

  const std::size_t new_kept = end.modules_kept - warm.modules_kept;
  fmt::print("TuneMemory: {} shapes tuned ({} after the warm-up): GPU {:.1f} -> {:.1f} MiB (+{:.1f}), host RSS {:.1f} -> "
             "{:.1f} MiB (+{:.1f}); modules loaded {} (kept {}, idle {}), {} unloaded; {} kept since the warm-up\n",
             end.tuned - start.tuned, end.tuned - warm.tuned, gpu0, gpu1, gpu1 - gpu0, host0, host1, host1 - host0,
             end.modules_loaded, end.modules_kept, end.modules_loaded - end.modules_kept, end.modules_unloaded,
             new_kept);
  EXPECT_EQ(end.tuned - start.tuned, static_cast<uint64_t>(kShapes));
  // The registry's bound: kept modules (winners, support kernels) plus at most the cap of idle ones, and losers were
  // unloaded (24 classes x 3 tiles of candidates do not fit in the cap).
  EXPECT_LE(end.modules_loaded, end.modules_kept + jit::kIdleModuleCap);
  EXPECT_GT(end.modules_unloaded, 0u);
  // Memory: what new kept modules may take (a generous 4 MiB of GPU and 8 MiB of host each) plus a fixed allowance;
  // before the registry, 60 tuned shapes grew by ~190 MiB of GPU and ~212 MiB of host memory (~3 MiB a shape).
  EXPECT_LE(gpu1 - gpu0, 32.0 + 4.0 * static_cast<double>(new_kept)) << "GPU memory grew with the shapes";
  EXPECT_LE(host1 - host0, 64.0 + 8.0 * static_cast<double>(new_kept)) << "host memory grew with the shapes";
  tune::forget_in_memory();
}

}  // namespace
}  // namespace tmagemm::testing
