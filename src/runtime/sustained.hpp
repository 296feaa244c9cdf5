// sustained.hpp — one way of timing a GEMM as a loop of it runs: back to back on one stream, no flush, for a block of
// wall time, so that the card reaches the clock its power cap allows for that kernel (at the 700 W cap a GEMM's clock
// follows its energy per FLOP, which interleaved or flushed runs hide; docs/perf-notes.md "energy per FLOP").
// Shared by the tuner's sustained final (tune/benchmark.cpp) and `tmagemm bench --sustained`.
#pragma once
#include <cuda_runtime_api.h>

#include <functional>

namespace tmagemm::runtime {

struct SustainedTime {
  double ms_per_run = 0;  // mean time of one run over the block's second half
  int runs = 0;           // the runs that mean is over
};

// Runs `run` (which enqueues one run on `stream`) back to back for `block_s` seconds of wall time, in batches of about
// `batch_ms` of work (sized from `est_ms`, a run's rough time; at most `max_batch` runs) with an event after each
// batch; the host keeps at most two batches queued, so the card never idles, and the block takes at least five
// batches. The first half of the block lets the clock settle to this kernel's power; the second half is timed.
// Errors of `run` or of CUDA propagate (tmagemm::Error); the events are released on every path.
SustainedTime time_sustained(cudaStream_t stream, const std::function<void()>& run, double est_ms, double block_s,
                             double batch_ms, int max_batch);

}  // namespace tmagemm::runtime
