// sustained.cpp — time_sustained (sustained.hpp): a block of back-to-back runs, the second half timed by events.
#include "runtime/sustained.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>

#include "runtime/cuda_check.hpp"

namespace tmagemm::runtime {

namespace {
struct Event {  // destroyed on every path out, errors included
  cudaEvent_t e = nullptr;
  Event() { check_cuda(cudaEventCreate(&e), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};
}  // namespace

SustainedTime time_sustained(cudaStream_t stream, const std::function<void()>& run, double est_ms, double block_s,
                             double batch_ms, int max_batch) {
  using clock = std::chrono::steady_clock;
  const int batch = std::clamp(static_cast<int>(std::ceil(batch_ms / std::max(est_ms, 1e-4))), 1, max_batch);
  std::deque<Event> marks;  // one after each batch
  const auto start = clock::now();
  do {
    for (int r = 0; r < batch; ++r) run();
    check_cuda(cudaEventRecord(marks.emplace_back().e, stream), "cudaEventRecord");
    if (marks.size() >= 2) check_cuda(cudaEventSynchronize(marks[marks.size() - 2].e), "cudaEventSynchronize");
  } while (std::chrono::duration<double>(clock::now() - start).count() < block_s || marks.size() < 5);
  check_cuda(cudaEventSynchronize(marks.back().e), "cudaEventSynchronize");
  const std::size_t first = marks.size() / 2;
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, marks[first].e, marks.back().e), "cudaEventElapsedTime");
  SustainedTime t;
  t.runs = static_cast<int>(marks.size() - 1 - first) * batch;
  t.ms_per_run = static_cast<double>(ms) / t.runs;
  return t;
}

}  // namespace tmagemm::runtime
