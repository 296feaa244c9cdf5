// sustained_test.cpp — runtime::time_sustained (src/runtime/sustained.hpp): a block of back-to-back runs reports
// the time of the runs in its second half, which a longer run makes longer, and a failing run's error propagates.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "gpu/gpu_util.hpp"
#include "runtime/sustained.hpp"

namespace tmagemm::testing {
namespace {

TEST(Sustained, TimesTheSecondHalfOfABlock) {
  TMAGEMM_REQUIRE_GPU();
  cudaStream_t stream = nullptr;
  cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
  DeviceBuffer buf(256u << 20);
  int calls = 0;
  // A 16 MiB and a 256 MiB memset: the larger one must read as the slower, by far.
  auto memset_of = [&](std::size_t bytes) {
    return [&, bytes] {
      ++calls;
      cuda_ok(cudaMemsetAsync(buf.ptr, 0x5a, bytes, stream), "cudaMemsetAsync");
    };
  };
  calls = 0;
  const runtime::SustainedTime small = runtime::time_sustained(stream, memset_of(16u << 20), 0.01, 0.05, 0.5, 4096);
  const int small_calls = calls;
  const runtime::SustainedTime large = runtime::time_sustained(stream, memset_of(256u << 20), 0.1, 0.05, 0.5, 4096);
  EXPECT_TRUE(std::isfinite(small.ms_per_run) && small.ms_per_run > 0) << small.ms_per_run;
  EXPECT_GT(large.ms_per_run, 4 * small.ms_per_run) << small.ms_per_run << " ms against " << large.ms_per_run;
  // The timed runs are the second half of the block (whole batches, at least two of the five or more).
  EXPECT_GE(small.runs, 2);
  EXPECT_LT(small.runs, small_calls);
  // A run that throws ends the block with its error.
  EXPECT_THROW(runtime::time_sustained(stream, [] { throw std::runtime_error("run failed"); }, 1.0, 0.05, 2.0, 16),
               std::runtime_error);
  cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace tmagemm::testing
