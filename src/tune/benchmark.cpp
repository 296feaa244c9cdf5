// benchmark.cpp — the tuner's measuring step (see benchmark.hpp).
#include "tune/benchmark.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "jit/jit.hpp"
#include "jit/support_kernels.hpp"
#include "choices/epilogue_params.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "runtime/fault.hpp"
#include "runtime/sustained.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::tune {

namespace {

// The tuner's scratch (freed when its tuning ends).
struct DeviceMem : runtime::DeviceMem {
  explicit DeviceMem(std::size_t bytes) : runtime::DeviceMem(bytes, "cudaMalloc(tuning scratch)") {}
};

void launch_simple(CUfunction fn, void** params, int64_t n, cudaStream_t stream, int64_t max_blocks = INT32_MAX) {
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>(std::clamp<int64_t>((n + 127) / 128, 1, max_blocks));
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = reinterpret_cast<CUstream>(stream);
  runtime::check_cu(runtime::driver().launch_kernel_ex(&cfg, fn, params, nullptr), "launch(tuning check)");
}

// Byte extent of an operand (from its strides), for the scratch copies.
std::size_t extent_bytes(const Operand& o, int64_t batch) {
  const int64_t last = (batch - 1) * o.batch_stride + (o.rows - 1) * o.row_stride + (o.cols - 1) * o.col_stride;
  return static_cast<std::size_t>(last + 1) * itemsize(o.dtype);
}

// A scratch copy of an operand's memory layout: the same strides and the same offset from a 256-byte boundary as
// the user's pointer (so alignment classes, TMA compatibility and the choices' speed are the same), filled with
// finite random values. The tuner never reads the user's inputs: their values (Inf, NaN, zeros) must not decide
// which choice wins or whether one is "wrong".
struct ScratchInput {
  std::unique_ptr<DeviceMem> mem;
  Operand operand;
};
ScratchInput scratch_input(const Operand& o, int64_t batch, int device, uint64_t seed, cudaStream_t stream) {
  ScratchInput s;
  const std::size_t offset = reinterpret_cast<std::uintptr_t>(o.data) % 256;
  const std::size_t bytes = extent_bytes(o, batch) + 256;
  s.mem = std::make_unique<DeviceMem>(bytes);
  s.operand = o;
  s.operand.data = static_cast<char*>(s.mem->ptr) + offset;
  CUfunction fn = jit::load(jit::fill_random_spec(o.dtype), device, 0);
  void* base = s.mem->ptr;
  long long count = static_cast<long long>(bytes / itemsize(o.dtype));
  unsigned long long seed_arg = seed;
  void* params[] = {&base, &count, &seed_arg};
  launch_simple(fn, params, count, stream, 4096);
  return s;
}

// The reference kernel for a problem: its epilogue stage (addmm) applied to the reference values too.
jit::KernelSpec check_reference_spec(const GemmProblem& p) {
  const choices::EpilogueSpec epi = choices::epilogue_spec(p);
  return jit::reference_samples_spec(p.a.dtype, p.b.dtype, p.out.dtype, epi.render(), epi.suffix());
}

// Positions sampled for the accuracy check, the fp64 reference there, and the floor: what an fp32-accumulated GEMM
// rounded once to the output type gets (its relative error against the reference is floor_error).
struct Samples {
  int n = 0;
  std::unique_ptr<DeviceMem> idx;  // batches | rows | cols, n ints each
  std::unique_ptr<DeviceMem> values;
  std::vector<double> exact;
  double floor_error = 0;
};

// Relative Frobenius error of `got` against the sampled reference (a non-finite value anywhere: infinity).
template <class T>
double relative_error(const std::vector<T>& got, const std::vector<double>& exact) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    if (!std::isfinite(static_cast<double>(got[i]))) return INFINITY;
    const double d = static_cast<double>(got[i]) - exact[i];
    num += d * d;
    den += exact[i] * exact[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

Samples make_samples(const GemmProblem& p, cudaStream_t stream, const std::vector<int32_t>& group_ends = {}) {
  Samples s;
  // grouped_mm: samples (row, column) of the one output matrix; the "batch" of a sample is its row's group (the
  // matrix of B it multiplies; A and out have batch stride 0) under `group_ends`, the routing p.group_ends holds.
  const bool grouped = p.op == Op::grouped_mm;
  const std::vector<int32_t>& ends = group_ends;
  const int64_t total = p.m * p.n * (grouped ? 1 : p.batch);
  s.n = static_cast<int>(std::min<int64_t>(kCheckSamples, total));
  std::vector<int> host(3 * static_cast<std::size_t>(s.n));
  std::mt19937_64 rng(0x7a6d);
  for (int i = 0; i < s.n; ++i) {
    int64_t lin = i < 4 ? std::vector<int64_t>{0, total - 1, (p.m - 1) * p.n, p.n - 1}[i] % total
                        : static_cast<int64_t>(rng() % static_cast<uint64_t>(total));
    if (s.n == total) lin = i;
    const int64_t b = lin / (p.m * p.n), r = (lin / p.n) % p.m, c = lin % p.n;
    host[i] = static_cast<int>(grouped ? std::upper_bound(ends.begin(), ends.end(), r) - ends.begin() : b);
    host[s.n + i] = static_cast<int>(r);
    host[2 * s.n + i] = static_cast<int>(c);
  }
  s.idx = std::make_unique<DeviceMem>(host.size() * sizeof(int));
  s.values = std::make_unique<DeviceMem>(static_cast<std::size_t>(s.n) * (sizeof(double) + sizeof(float)));
  runtime::check_cuda(cudaMemcpyAsync(s.idx->ptr, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice,
                                      stream),
                      "cudaMemcpyAsync(samples)");
  CUfunction fn = jit::load(check_reference_spec(p), p.device, 0);
  const void* a = p.a.data;
  const void* b = p.b.data;
  int k = static_cast<int>(p.k), n = s.n;
  long long ars = p.a.row_stride, acs = p.a.col_stride, abs_ = p.a.batch_stride;
  long long brs = p.b.row_stride, bcs = p.b.col_stride, bbs = p.b.batch_stride;
  const int* bat = static_cast<const int*>(s.idx->ptr);
  const int* rows = bat + s.n;
  const int* cols = rows + s.n;
  double* exact = static_cast<double*>(s.values->ptr);
  float* floor = reinterpret_cast<float*>(exact + s.n);
  choices::EpilogueParamsHost ep = choices::epilogue_params(p);
  void* params[] = {&a, &b, &k, &ars, &acs, &abs_, &brs, &bcs, &bbs, &bat, &rows, &cols, &n, &exact, &floor, &ep};
  launch_simple(fn, params, s.n, stream);
  s.exact.resize(static_cast<std::size_t>(s.n));
  std::vector<float> floor_values(static_cast<std::size_t>(s.n));
  runtime::check_cuda(cudaMemcpyAsync(s.exact.data(), exact, s.exact.size() * sizeof(double), cudaMemcpyDeviceToHost,
                                      stream),
                      "cudaMemcpyAsync(reference samples)");
  runtime::check_cuda(cudaMemcpyAsync(floor_values.data(), floor, floor_values.size() * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream),
                      "cudaMemcpyAsync(floor samples)");
  runtime::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(reference samples)");
  s.floor_error = relative_error(floor_values, s.exact);
  return s;
}

// Relative error of the output at the sampled positions against the fp64 reference.
double sampled_error(const GemmProblem& p, const Samples& s, cudaStream_t stream) {
  CUfunction fn = jit::load(jit::gather_samples_spec(p.out.dtype), p.device, 0);
  const void* base = p.out.data;
  long long rs = p.out.row_stride, cs = p.out.col_stride, bs = p.out.batch_stride;
  const int* bat = static_cast<const int*>(s.idx->ptr);
  const int* rows = bat + s.n;
  const int* cols = rows + s.n;
  int n = s.n;
  float* out = reinterpret_cast<float*>(static_cast<double*>(s.values->ptr) + s.n);
  void* params[] = {&base, &rs, &cs, &bs, &bat, &rows, &cols, &n, &out};
  launch_simple(fn, params, s.n, stream);
  std::vector<float> got(static_cast<std::size_t>(s.n));
  runtime::check_cuda(cudaMemcpyAsync(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost, stream),
                      "cudaMemcpyAsync(gathered samples)");
  runtime::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(gathered samples)");
  return relative_error(got, s.exact);
}

// The modules each candidate's launches used, pinned until the tuning ends (jit/modules.hpp); the winner's are kept.
using CandidateModules = std::map<const choices::Choice*, jit::ModuleUses>;

// Enqueues a choice (the one place the tuner launches one; the test-only launch fault is injected here).
void launch_choice(const choices::Choice& c, const GemmProblem& p, cudaStream_t stream, const Options& o,
                   void* workspace, CandidateModules& modules) {
  jit::RecordModuleUses record(modules[&c]);
  runtime::inject_launch_fault(c.name());
  c.launch(p, stream, o, workspace);
}

}  // namespace

Tuned benchmark(const GemmProblem& p, const Options& o, const std::vector<choices::ChoicePtr>& cands,
                BenchmarkRun run) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  // Allocations, module loads and unloads, synchronisations: none may break another thread's graph capture
  // (cuda_check.hpp). Declared first, so that it outlives every scope below.
  const runtime::ThreadLocalCaptureMode capture_mode;
  Tuned result;
  // Once the tuning is over (errors included) and its candidates' modules are unpinned (`modules` goes first), the
  // modules nobody won with are idle: the registry unloads those beyond its cap, after the stream has finished what
  // the tuning enqueued (an error path may leave work in flight). Every scratch buffer below is freed on the way out
  // too (DeviceMem).
  struct TrimAfter {
    cudaStream_t stream;
    ~TrimAfter() {
      if (cudaStreamSynchronize(stream) != cudaSuccess) cudaGetLastError();
      jit::trim_idle_modules();
    }
  } trim_after{o.stream};
  CandidateModules modules;

  // 1. Precompile every candidate in parallel (and the quick check's two kernels with them); a failure drops
  //    that candidate.
  std::vector<std::string> failure(cands.size());
  std::vector<char> failure_oom(cands.size());  // the failure was device memory running out
  {
    const std::string arch = runtime::device_info(p.device).arch();
    const std::size_t jobs = cands.size() + 5;
    std::atomic<std::size_t> next{0};
    const unsigned threads =
        std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), static_cast<unsigned>(jobs)));
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (std::size_t i = next++; i < jobs; i = next++) {
          try {
            if (i == cands.size())
              jit::compile(jit::fill_random_spec(p.a.dtype), arch);
            else if (i == cands.size() + 1)
              jit::compile(jit::fill_random_spec(p.b.dtype), arch);
            else if (i == cands.size() + 2)
              jit::compile(check_reference_spec(p), arch);
            else if (i == cands.size() + 3)
              jit::compile(jit::gather_samples_spec(p.out.dtype), arch);
            else if (i == cands.size() + 4) {
              if (memory_bound(p)) jit::compile(jit::l2_flush_read_spec(), arch);
            }
            else
              cands[i]->precompile(p, p.device);
          } catch (const std::exception& e) {
            if (i < cands.size()) {  // a check-kernel failure resurfaces at its load
              failure[i] = e.what();
              failure_oom[i] = runtime::is_out_of_memory(e);
            }
          }
        }
      });
    for (auto& t : pool) t.join();
  }
  const auto t1 = clock::now();
  result.precompile_s = std::chrono::duration<double>(t1 - t0).count();

  // 2. Scratch inputs and output with the user's strides and the same alignment (never the user's memory: the
  //    inputs' values must not decide anything, and the output is not written before the winner runs).
  cudaStream_t stream = o.stream;
  runtime::inject_allocation_fault("tuner:scratch");
  const ScratchInput scratch_a = scratch_input(p.a, p.batch, p.device, 0x61, stream);
  const ScratchInput scratch_b = scratch_input(p.b, p.batch, p.device, 0x62, stream);
  const std::size_t bytes = extent_bytes(p.out, p.batch);
  const auto user_off = reinterpret_cast<std::uintptr_t>(p.out.data) % 256;
  DeviceMem scratch(bytes + 256);
  GemmProblem sp = p;
  sp.a = scratch_a.operand;
  sp.b = scratch_b.operand;
  // addmm, scaled_mm: the bias too (its values may be NaN; out may alias it).
  std::optional<ScratchInput> scratch_bias;
  if ((p.op == Op::addmm || p.op == Op::scaled_mm) && p.bias_kind != BiasKind::none) {
    scratch_bias.emplace(scratch_input(p.bias, 1, p.device, 0x63, stream));
    sp.bias = scratch_bias->operand;
  }
  // scaled_mm: scratch scales (1 value each, or M and N), random values like the inputs.
  std::optional<ScratchInput> scratch_scale_a, scratch_scale_b;
  if (p.op == Op::scaled_mm) {
    const bool rowwise = p.scale_kind == ScaleKind::rowwise;
    auto vector = [](const float* data, int64_t n) {
      Operand o;
      o.data = data;
      o.dtype = DType::f32;
      o.rows = 1;
      o.cols = n;
      o.row_stride = n;
      o.col_stride = 1;
      return o;
    };
    scratch_scale_a.emplace(scratch_input(vector(p.scale_a, rowwise ? p.m : 1), 1, p.device, 0x64, stream));
    scratch_scale_b.emplace(scratch_input(vector(p.scale_b, rowwise ? p.n : 1), 1, p.device, 0x65, stream));
    sp.scale_a = static_cast<const float*>(scratch_scale_a->operand.data);
    sp.scale_b = static_cast<const float*>(scratch_scale_b->operand.data);
  }
  // grouped_mm: scratch group ends, the routings of the class (tuning_group_routings): the representative one, which
  // the check and every single run use, and for a sparse class more draws, over which each timed run is averaged.
  std::deque<DeviceMem> scratch_ends;  // (DeviceMem does not move: a deque keeps its elements in place)
  std::vector<const int32_t*> routing_ends;
  const std::vector<std::vector<int32_t>> routings =
      p.op == Op::grouped_mm ? tuning_group_routings(p.m, p.batch) : std::vector<std::vector<int32_t>>();
  if (p.op == Op::grouped_mm) {
    for (const std::vector<int32_t>& ends : routings) {
      DeviceMem& d = scratch_ends.emplace_back(ends.size() * sizeof(int32_t));
      if (!ends.empty())
        runtime::check_cuda(cudaMemcpyAsync(d.ptr, ends.data(), ends.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                                            stream),
                            "cudaMemcpyAsync(tuning group ends)");
      routing_ends.push_back(static_cast<const int32_t*>(d.ptr));
    }
    sp.group_ends = routing_ends.front();
  }
  sp.out.data = static_cast<char*>(scratch.ptr) + user_off;
  std::size_t ws_bytes = 0;
  for (const auto& c : cands) ws_bytes = std::max(ws_bytes, c->workspace_bytes(p));
  DeviceMem workspace(ws_bytes);
  const runtime::DeviceInfo& dev = runtime::device_info(p.device);
  // L2 flush before every timed run, as `tmagemm bench` does it: at least 4 x L2 and 256 MiB, a different non-zero
  // byte each time (the flush's own DRAM traffic is part of the load the card is measured under). Measured on H200
  // (docs/perf-notes.md): with the earlier 2 x L2 flush of zeros, the tuner timed mid-size GEMMs up to ~12 % faster
  // than the bench did, our kernels more so than cuBLASLt's, and so ranked them wrongly.
  const std::size_t flush_bytes = std::max<std::size_t>(4 * dev.l2_bytes, std::size_t{256} << 20);
  DeviceMem flush_mem(flush_bytes);
  void* flush = flush_mem.ptr;
  unsigned flush_value = 0;
  // Memory-bound problems are timed after a read flush too (benchmark.hpp): a kernel reads the (initialised) buffer.
  const bool both_flushes = memory_bound(p);
  result.both_flushes = both_flushes;
  CUfunction flush_reader = nullptr;
  std::optional<DeviceMem> flush_sink;
  if (both_flushes) {
    flush_reader = jit::load(jit::l2_flush_read_spec(), p.device, 0);
    flush_sink.emplace(16);
    runtime::check_cuda(cudaMemsetAsync(flush, 0x5a, flush_bytes, stream), "cudaMemsetAsync(flush buffer)");
  }
  auto flush_l2 = [&](bool read = false) {
    if (read) {
      const void* base = flush;
      unsigned long long n16 = flush_bytes / 16;
      void* sink = flush_sink->ptr;
      void* params[] = {&base, &n16, &sink};
      launch_simple(flush_reader, params, static_cast<int64_t>(n16), stream, int64_t{dev.sm_count} * 8);
      return;
    }
    flush_value = flush_value % 255 + 1;
    runtime::check_cuda(cudaMemsetAsync(flush, static_cast<int>(flush_value), flush_bytes, stream),
                        "cudaMemsetAsync(L2 flush)");
  };
  const Samples samples = make_samples(sp, stream, routings.empty() ? std::vector<int32_t>() : routings.front());
  result.floor_error = samples.floor_error;
  result.error_bound = accuracy_bound(p, samples.floor_error, o.allow_reduced_precision_reduction, samples.n);
  result.routings = std::max<int>(1, static_cast<int>(routing_ends.size()));
  // A class timed over several routings is checked on each of them too (each tile count its own schedule): the
  // reference samples of the other draws, each with its own floor and bound.
  std::vector<Samples> more_samples;
  for (std::size_t r = 1; r < routing_ends.size(); ++r) {
    sp.group_ends = routing_ends[r];
    more_samples.push_back(make_samples(sp, stream, routings[r]));
  }
  sp.group_ends = routing_ends.empty() ? sp.group_ends : routing_ends.front();
  struct Event {  // destroyed on every path out, errors included
    cudaEvent_t e = nullptr;
    Event() { runtime::check_cuda(cudaEventCreate(&e), "cudaEventCreate"); }
    ~Event() { cudaEventDestroy(e); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
  } start_event, stop_event;
  cudaEvent_t start = start_event.e, stop = stop_event.e;

  // One timed run of candidate i: flush L2 (outside the timed region), launch between two events.
  auto time_once = [&](const choices::ChoicePtr& c, bool read_flush) {
    flush_l2(read_flush);
    runtime::check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
    launch_choice(*c, sp, stream, o, workspace.ptr, modules);
    runtime::check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
    runtime::check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    runtime::check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return ms;
  };
  // One timed run of a candidate over the class's routings (grouped_mm, a sparse class): the mean of one run on each,
  // each after its own flush; every other problem: time_once.
  auto time_run = [&](const choices::ChoicePtr& c, bool read_flush) {
    if (routing_ends.size() <= 1) return time_once(c, read_flush);
    float sum = 0;
    for (const int32_t* ends : routing_ends) {
      sp.group_ends = ends;
      try {
        sum += time_once(c, read_flush);
      } catch (...) {
        sp.group_ends = routing_ends.front();
        throw;
      }
    }
    sp.group_ends = routing_ends.front();
    return sum / static_cast<float>(routing_ends.size());
  };
  auto median = [](std::vector<float> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };

  // 3. Quick check of every candidate; the survivors are measured below.
  struct Measured {
    choices::ChoicePtr choice;
    std::vector<float> times, times_read;  // after a write flush; after a read flush (both_flushes only)
    bool failed = false;  // failed during the timed runs: dropped like a failed check
  };
  // A candidate's time: its median, or with both flushes the geometric mean of the two medians.
  auto score = [&](const Measured& m) {
    const double w = median(m.times);
    return both_flushes ? std::sqrt(w * median(m.times_read)) : w;
  };
  std::vector<Measured> measured;
  bool rejected = false;  // a candidate failed the accuracy check (it must never run the call)
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const auto& c = cands[i];
    if (!failure[i].empty()) {
      fmt::print(stderr, "tmagemm autotune: dropped {} (precompile failed): {}\n", c->name(), failure[i]);
      if (failure_oom[i]) result.out_of_memory.push_back(c->name());
      continue;
    }
    try {
      // The representative routing first, then the class's other draws (grouped_mm, a sparse class); the first
      // routing that fails drops the candidate. p.group_ends points at the representative routing on every path out.
      bool passed = true;
      for (std::size_t r = 0; r < std::max<std::size_t>(1, routing_ends.size()) && passed; ++r) {
        const Samples& sr = r == 0 ? samples : more_samples[r - 1];
        const double bound =
            r == 0 ? result.error_bound
                   : accuracy_bound(p, sr.floor_error, o.allow_reduced_precision_reduction, sr.n);
        if (!routing_ends.empty()) sp.group_ends = routing_ends[r];
        double err = INFINITY;
        try {
          runtime::check_cuda(cudaMemsetAsync(scratch.ptr, 0xff, bytes + 256, stream), "cudaMemsetAsync(scratch)");
          launch_choice(*c, sp, stream, o, workspace.ptr, modules);
          runtime::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(check)");
          err = sampled_error(sp, sr, stream);
        } catch (...) {
          if (!routing_ends.empty()) sp.group_ends = routing_ends.front();
          throw;
        }
        if (!routing_ends.empty()) sp.group_ends = routing_ends.front();
        if (r == 0) result.errors.push_back({c->name(), err});
        else result.errors.back().second = std::max(result.errors.back().second, err / bound * result.error_bound);
        if (!(err <= bound)) {
          fmt::print(stderr,
                     "tmagemm autotune: dropped {} ({}: sampled relative error {:.3g}, floor {:.3g}, bound {:.3g}{})\n",
                     c->name(), std::isfinite(err) ? "less accurate than the accuracy floor" : "non-finite output",
                     err, sr.floor_error, bound,
                     r == 0 ? "" : fmt::format(", on the class's routing {} of {}", r + 1, routing_ends.size()));
          passed = false;
        }
      }
      if (!passed) {
        rejected = true;
        continue;
      }
      measured.push_back(Measured{c, {}, {}});
    } catch (const Error& e) {
      cudaGetLastError();  // a non-sticky launch error; a sticky one fails the next CUDA call anyway
      fmt::print(stderr, "tmagemm autotune: dropped {} (failed to run): {}\n", c->name(), e.what());
      if (e.code() == ErrorCode::out_of_memory) result.out_of_memory.push_back(c->name());
    }
  }

  // Interleaved rounds over the first `count` entries of `measured`: one run of each per round, the first to run
  // rotating, so that clock and power drift hit them alike. Runs `min_rounds`, then more while the
  // rounds take under `budget_s` in all (at most `max_rounds`).
  auto rounds = [&](std::size_t count, int min_rounds, int max_rounds, double budget_s) {
    const auto rounds_start = clock::now();
    for (int round = 0; round < max_rounds; ++round) {
      if (round >= min_rounds && std::chrono::duration<double>(clock::now() - rounds_start).count() > budget_s) break;
      for (std::size_t f = 0; f < count; ++f) {
        Measured& m = measured[(f + static_cast<std::size_t>(round)) % count];
        if (m.failed) continue;
        try {
          if (both_flushes) {
            const bool read_first = round % 2 == 1;
            const float first = time_run(m.choice, read_first);
            const float second = time_run(m.choice, !read_first);
            m.times.push_back(read_first ? second : first);
            m.times_read.push_back(read_first ? first : second);
          } else {
            m.times.push_back(time_run(m.choice, false));
          }
        } catch (const Error& e) {
          cudaGetLastError();
          m.failed = true;
          fmt::print(stderr, "tmagemm autotune: dropped {} (failed to run): {}\n", m.choice->name(), e.what());
          if (e.code() == ErrorCode::out_of_memory) result.out_of_memory.push_back(m.choice->name());
        }
      }
    }
  };

  // 4. Heat: run the first candidate back to back for 400 ms, so that every timed run below (the screen included)
  //    sees the card in its sustained, power-limited state: the state a loop of GEMMs, and `tmagemm bench`, runs
  //    in. Measured on H200 (docs/perf-notes.md): a 4096x4096x14336 GEMM slows from 0.59 to ~0.665 ms over the first
  //    ~350 ms of load, and not every kernel by the same amount. With the heat after a screen at near-idle clocks,
  //    the screen kept clustered tiles and dropped the unclustered 128x256, which the bench then measured 1-3 %
  //    faster than the tuner's pick on the large llm shapes.
  if (measured.size() > 1 && !run.card_warm) {
    constexpr double heat_s = 0.4;
    const auto heat_start = clock::now();
    try {
      while (std::chrono::duration<double>(clock::now() - heat_start).count() < heat_s) {
        for (int r = 0; r < 4; ++r) {
          flush_l2();
          launch_choice(*measured.front().choice, sp, stream, o, workspace.ptr, modules);
        }
        runtime::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(heat)");
      }
    } catch (const Error&) {
      cudaGetLastError();  // the screen times it again and drops it if it keeps failing
    }
  }

  // 5. Screen: five interleaved rounds of every survivor (median of 5; our tiles sit within 1-2 % of each other on
  //    large shapes, and a median of 3 can leave the best out of the final).
  rounds(measured.size(), 5, 5, 0.0);
  std::erase_if(measured, [](const Measured& m) { return m.failed || m.times.empty(); });

  // 6. The finalists (at most 4, within 10 % of the best screen) are timed again in interleaved rounds for at least
  //    150 ms and 20 rounds. A finalist's time is the median of all its runs. (With 10 rounds / 60 ms the pick
  //    among cuBLASLt algorithms 1-2 % apart was wrong on 3 of 33 shapes.)
  std::sort(measured.begin(), measured.end(), [&](const Measured& x, const Measured& y) { return score(x) < score(y); });
  std::size_t finalists = 0;
  if (!measured.empty()) {
    const double best = score(measured.front());
    while (finalists < measured.size() && finalists < 4 && score(measured[finalists]) <= 1.10 * best) ++finalists;
  }
  if (finalists > 1) rounds(finalists, 20, 100000, 0.15);
  std::erase_if(measured, [](const Measured& m) { return m.failed; });
  std::sort(measured.begin(), measured.end(), [&](const Measured& x, const Measured& y) { return score(x) < score(y); });

  // 7. The sustained final (benchmark.hpp; Options::sustained_tuning): where a loop of the problem runs at the card's
  //    power cap with operands L2 cannot hold, the finalists within kSustainedSpread of the best (at most
  //    kSustainedFinalists) run alone back to back without a flush in blocks of kSustainedBlockS, in the order
  //    A B ... B A; a finalist's sustained time is the mean of its two blocks' second halves. Their times become the
  //    best interleaved time scaled by their sustained times (the fastest sustained gets the best time), so that
  //    what follows (the tie rule, a bucket's other Ms, the record) sees one scale, ordered by the sustained final.
  std::vector<double> sustained(measured.size(), 0);
  // (It times the representative routing alone, so a class timed over several routings, whose scores are means over
  // them, never takes it; none does today: a sparse class reads at most 2 M / (G x itemsize(B)) <= 32 FLOP a byte,
  // memory-bound, which sustained_eligible refuses.)
  if (o.sustained_tuning && run.sustained_final && sustained_eligible(p, dev.l2_bytes) && !measured.empty() &&
      routing_ends.size() <= 1) {
    const double best = score(measured.front());
    std::size_t n = 0;
    while (n < measured.size() && n < kSustainedFinalists && score(measured[n]) <= (1.0 + kSustainedSpread) * best) ++n;
    if (n > 1) {
      // One block of candidate i (runtime/sustained.hpp): batches of ~2 ms of runs, at most two batches queued.
      auto block = [&](std::size_t i) {
        const auto run = [&] { launch_choice(*measured[i].choice, sp, stream, o, workspace.ptr, modules); };
        return runtime::time_sustained(stream, run, score(measured[i]), kSustainedBlockS, 2.0, 4096).ms_per_run;
      };
      std::vector<std::size_t> order;
      for (std::size_t i = 0; i < n; ++i) order.push_back(i);
      for (std::size_t i = n; i-- > 0;) order.push_back(i);
      for (std::size_t i : order) {
        if (measured[i].failed) continue;
        try {
          sustained[i] += block(i) / 2;
        } catch (const Error& e) {
          cudaGetLastError();
          measured[i].failed = true;
          fmt::print(stderr, "tmagemm autotune: dropped {} (failed to run): {}\n", measured[i].choice->name(), e.what());
          if (e.code() == ErrorCode::out_of_memory) result.out_of_memory.push_back(measured[i].choice->name());
        }
      }
      double fastest = INFINITY;
      for (std::size_t i = 0; i < n; ++i)
        if (!measured[i].failed) fastest = std::min(fastest, sustained[i]);
      for (std::size_t i = 0; i < n; ++i)
        if (!measured[i].failed) result.sustained_ms.push_back({measured[i].choice->name(), sustained[i]});
      for (std::size_t i = 0; i < n; ++i)
        if (measured[i].failed || !std::isfinite(fastest)) sustained[i] = 0;
        else sustained[i] = best * sustained[i] / fastest;  // on the interleaved scale
    }
  }
  // Both flushes: the ranking times of the flush-hold rule (flush_ranked_ms; benchmark.hpp, kFlushHold).
  std::vector<double> ranked(measured.size(), 0);
  std::vector<FlushTimes> ft;  // (each choice's two medians, also kept for the AUTOTUNE log)
  if (both_flushes) {
    for (const Measured& m : measured)
      ft.push_back({m.failed ? INFINITY : median(m.times), m.failed ? INFINITY : median(m.times_read),
                    m.choice->tie_policy() == choices::TiePolicy::library_rank});
    ranked = flush_ranked_ms(ft, tie_margin(p));
  }
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const Measured& m = measured[i];
    if (m.failed) continue;
    result.timings.push_back(
        {m.choice->name(), sustained[i] > 0 ? sustained[i] : both_flushes ? ranked[i] : score(m)});
    if (both_flushes) result.flush_ms.push_back({m.choice->name(), {ft[i].write_ms, ft[i].read_ms}});
    ++result.benchmarked;
  }
  std::erase_if(measured, [](const Measured& m) { return m.failed; });
  std::sort(result.timings.begin(), result.timings.end(),
            [](const Timing& x, const Timing& y) { return x.ms < y.ms; });
  result.total_s = std::chrono::duration<double>(clock::now() - t0).count();
  if (result.timings.empty()) {
    std::string msg = fmt::format("every candidate failed precompile or its check for {}", p.describe());
    for (std::size_t i = 0; i < cands.size(); ++i)
      if (!failure[i].empty()) msg += fmt::format("\n  {}: {}", cands[i]->name(), failure[i]);
    // Where device memory ran out for some and no candidate failed the accuracy check, the tuning is what failed,
    // not every choice (the tuner then runs the heuristic choice untimed; it never runs a rejected choice).
    if (!result.out_of_memory.empty() && !rejected)
      throw Error(ErrorCode::out_of_memory, msg + "\n  (device memory ran out for " +
                                                fmt::format("{}", fmt::join(result.out_of_memory, ", ")) + ")");
    throw Error(ErrorCode::no_valid_choice, msg);
  }
  std::vector<Entry> entries;
  std::vector<choices::ChoicePtr> in_order;
  for (const Timing& t : result.timings)
    for (const Measured& m : measured)
      if (m.choice->name() == t.choice) {
        entries.push_back(entry_of(*m.choice, t.ms));
        in_order.push_back(m.choice);
      }
  result.margin = tie_margin(p);
  result.winner = in_order[pick_winner(entries, result.margin)];
  if (run.keep_winner) modules[result.winner.get()].keep();  // it will run outside the tuning: its modules stay loaded
  return result;
}

double accuracy_bound(const GemmProblem& p, double floor_error, bool allow_reduced_precision_reduction, int samples) {
  const double unit = p.out.dtype == DType::bf16 ? 0x1p-8 : p.out.dtype == DType::f16 ? 0x1p-11 : 0x1p-24;
  const double floor_term = kFloorFactor * floor_error;
  // fp8: the tensor core keeps fewer bits than fp32 across its K steps, over the whole K range with use_fast_accum,
  // over one two-level run (at most 8 steps of 32) without (benchmark.hpp, kFastAccumSlack).
  const double accumulation = p.op != Op::scaled_mm ? kAccumulationSlack * 0x1p-24 * static_cast<double>(p.k)
                              : p.fast_accum        ? kFastAccumSlack * static_cast<double>(p.k) / 32.0
                                                    : kFastAccumSlack * 8.0;
  const double few_samples = unit * std::sqrt(2.0 / std::max(samples, 1));
  const double bound = std::sqrt(floor_term * floor_term + accumulation * accumulation + few_samples * few_samples);
  return allow_reduced_precision_reduction ? kReducedPrecisionFactor * bound : bound;
}

double tie_margin(const GemmProblem& p) { return memory_bound(p) ? kTieMarginMemoryBound : kTieMarginComputeBound; }

bool sustained_eligible(const GemmProblem& p, std::size_t l2_bytes) {
  if (memory_bound(p)) return false;
  return traffic(p).bytes > kSustainedFootprintL2 * static_cast<double>(l2_bytes);
}

std::vector<double> flush_ranked_ms(const std::vector<FlushTimes>& t, double margin) {
  std::vector<double> ms;
  double lib_w = INFINITY, lib_r = INFINITY, lib_geo = INFINITY;
  for (const FlushTimes& f : t) {
    ms.push_back(std::sqrt(f.write_ms * f.read_ms));
    if (!f.library_ranked) continue;
    lib_w = std::min(lib_w, f.write_ms);
    lib_r = std::min(lib_r, f.read_ms);
    lib_geo = std::min(lib_geo, ms.back());
  }
  if (!std::isfinite(lib_geo)) return ms;
  std::vector<std::size_t> clear;  // choices that hold and are beyond the margin ahead under one flush
  double clear_geo = INFINITY;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].library_ranked) continue;
    if (t[i].write_ms > (1.0 + kFlushHold) * lib_w || t[i].read_ms > (1.0 + kFlushHold) * lib_r) {
      ms[i] = std::max(ms[i], lib_geo * (1.0 + 2.0 * margin));
    } else if (t[i].write_ms * (1.0 + margin) < lib_w || t[i].read_ms * (1.0 + margin) < lib_r) {
      clear.push_back(i);
      clear_geo = std::min(clear_geo, ms[i]);
    }
  }
  // The clear choices scaled alike (their order kept), the fastest to just beyond the near-tie band.
  const double scale = lib_geo / ((1.0 + 2.0 * margin) * clear_geo);
  if (scale < 1.0)
    for (std::size_t i : clear) ms[i] *= scale;
  return ms;
}

std::size_t pick_winner(const std::vector<Entry>& e, double margin) {
  std::size_t fastest_lt = e.size();
  for (std::size_t i = 0; i < e.size() && fastest_lt == e.size(); ++i)
    if (e[i].library_ranked && std::isfinite(e[i].ms)) fastest_lt = i;
  if (fastest_lt == e.size()) return 0;                              // no library-ranked choice to prefer
  if (e[fastest_lt].ms > e[0].ms * (1.0 + margin)) return 0;       // another backend is clearly faster
  // NOTE: the near-tie is judged against the fastest choice of all, so that the pick is never more than the margin
  // slower than it (judged against the fastest cuBLASLt choice, two margins chained: bmm 64x2048x128x2048 ran
  // cuBLASLt rank 0 3.3 % behind the fastest, thirty-fourth session).
  std::size_t pick = fastest_lt;
  for (std::size_t i = fastest_lt + 1; i < e.size(); ++i)
    if (e[i].library_ranked && e[i].ms <= e[0].ms * (1.0 + margin) && e[i].library_rank >= 0 &&
        (e[pick].library_rank < 0 || e[i].library_rank < e[pick].library_rank))
      pick = i;
  return pick;
}

void print_autotune(const GemmProblem& p, const Tuned& t, std::size_t candidates) {
  std::string s = fmt::format("AUTOTUNE {}\n", p.describe());
  s += fmt::format("  strides a ({}, {}) b ({}, {}) out ({}, {})\n", p.a.row_stride, p.a.col_stride, p.b.row_stride,
                   p.b.col_stride, p.out.row_stride, p.out.col_stride);
  s += fmt::format("  accuracy: floor (fp32 accumulation, one rounding) {:.3g}, bound {:.3g}\n", t.floor_error,
                   t.error_bound);
  const double best = t.timings.front().ms;
  for (std::size_t i = 0; i < t.timings.size() && i < 10; ++i) {
    const bool picked = t.winner && t.winner->name() == t.timings[i].choice;
    double err = NAN;
    for (const auto& [name, e] : t.errors)
      if (name == t.timings[i].choice) err = e;
    std::string flushes;
    for (const auto& [name, wr] : t.flush_ms)
      if (name == t.timings[i].choice)
        flushes = fmt::format(" (write {:.4f}, read {:.4f}{})", wr.first, wr.second,
                              t.timings[i].ms > 1.0001 * std::sqrt(wr.first * wr.second)
                                  ? "; behind cuBLASLt under one flush: ranked after it"
                              : t.timings[i].ms < 0.9999 * std::sqrt(wr.first * wr.second)
                                  ? "; clearly ahead of cuBLASLt under one flush: ranked ahead of its near-ties"
                                  : "");
    for (const auto& [name, ms] : t.sustained_ms)
      if (name == t.timings[i].choice) flushes = fmt::format(" (sustained {:.4f})", ms);
    s += fmt::format("  {:<48} {:8.4f} ms{} {:5.1f}%  err {:.3g}{}\n", t.timings[i].choice, t.timings[i].ms, flushes,
                     100.0 * best / t.timings[i].ms, err,
                     !picked || i == 0 ? std::string()
                     : t.bucket_pick   ? std::string("  <- picked (the best across the bucket's Ms)")
                                       : fmt::format("  <- picked (near-ties, within {:.1f} %, go to {}'s ranking)",
                                                     100 * t.margin, t.winner->library()));
  }
  s += fmt::format("benchmarked {} of {} choices{} in {:.2f} s (precompile {:.2f} s)\n", t.benchmarked, candidates,
                   t.routings > 1 ? fmt::format(", each checked and timed on {} routings of the class", t.routings)
                                  : std::string(),
                   t.total_s, t.precompile_s);
  fmt::print(stderr, "{}", s);
}

}  // namespace tmagemm::tune
