// tune_sweep.cpp — the measurements of shape buckets (issue 22): `tmagemm tune --sweep` (for each weight and M of a
// list: the bucketed winner, tuned on its bucket's largest M, against the winner of an exact tuning of that M; both
// timed at M like `tmagemm bench` times, interleaved with L2 flushed, where they differ; geomean of bucketed / exact
// time) and `tmagemm tune --serve` (a cached_only serving loop over M values drawn from a list: host time of every
// call in a process that meets them for the first time, then the loop's GPU time with bucketed and with exact keys).
// Both run real calls (tmagemm::mm on random bf16/f16 data) through the tuning database of the cache dir.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "jit/jit.hpp"
#include "jit/support_kernels.hpp"
#include "problem/problem.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "tmagemm/ops.hpp"
#include "tmagemm/options.hpp"
#include "tmagemm/tuning.hpp"
#include "tune/buckets.hpp"
#include "tune/tuner.hpp"
#include "tune_modes.hpp"

namespace tmagemm::cli {

std::string WeightPair::name() const { return fmt::format("{}x{}:{}", n, k, b_col ? "rc" : "rr"); }

std::vector<WeightPair> parse_pairs(const std::string& text, const char* option) {
  std::vector<WeightPair> pairs;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    WeightPair p;
    std::string shape = item, layout = "rc";
    if (const auto colon = item.find(':'); colon != std::string::npos) {
      shape = item.substr(0, colon);
      layout = item.substr(colon + 1);
    }
    char x = 0;
    std::istringstream s(shape);
    if (!(s >> p.n >> x >> p.k) || x != 'x' || !s.eof() || p.n < 1 || p.k < 1 || p.n >= (int64_t{1} << 31) ||
        p.k >= (int64_t{1} << 31))
      throw std::invalid_argument(fmt::format("{}: '{}' is not NxK with 1 <= N, K < 2^31", option, item));
    if (layout != "rc" && layout != "rr")
      throw std::invalid_argument(
          fmt::format("{}: layout '{}' of '{}' is not rc or rr (a row-major: a column-major a keeps M exact)", option,
                      layout, item));
    p.b_col = layout == "rc";
    pairs.push_back(p);
  }
  if (pairs.empty()) throw std::invalid_argument(fmt::format("{}: give weights as \"NxK[:rr|rc],...\"", option));
  return pairs;
}

std::vector<int64_t> parse_m_list(const std::string& text, const char* option) {
  std::vector<int64_t> ms;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int64_t m = 0;
    std::istringstream s(item);
    if (!(s >> m) || !s.eof() || m < 1 || m > (int64_t{1} << 20))
      throw std::invalid_argument(fmt::format("{}: '{}' is not an M with 1 <= M <= 2^20", option, item));
    ms.push_back(m);
  }
  if (ms.empty()) throw std::invalid_argument(fmt::format("{}: give M values as \"M,M,...\"", option));
  return ms;
}

namespace {

using clock = std::chrono::steady_clock;

// Random values in [-1, 1) through the library's fill kernel (the tuner's scratch fill).
void fill_random(void* data, DType dtype, std::size_t elements, unsigned long long seed, int device) {
  CUfunction fn = jit::load(jit::fill_random_spec(dtype), device, 0);
  void* base = data;
  long long count = static_cast<long long>(elements);
  void* params[] = {&base, &count, &seed};
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>(std::clamp<long long>((count + 127) / 128, 1, 4096));
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  runtime::check_cu(runtime::driver().launch_kernel_ex(&cfg, fn, params, nullptr), "launch(fill_random)");
}

// One weight's buffers, large enough for the largest M of the list.
struct Buffers {
  DeviceBuffer a, b, out;
  DType dtype;
  WeightPair pair;
  int device;
  Buffers(const WeightPair& p, int64_t max_m, DType t, int dev)
      : a(static_cast<std::size_t>(max_m * p.k) * itemsize(t)),
        b(static_cast<std::size_t>(p.k * p.n) * itemsize(t)),
        out(static_cast<std::size_t>(max_m * p.n) * itemsize(t)),
        dtype(t),
        pair(p),
        device(dev) {
    fill_random(a.get(), t, static_cast<std::size_t>(max_m * p.k), 0x5eed1, dev);
    fill_random(b.get(), t, static_cast<std::size_t>(p.k * p.n), 0x5eed2, dev);
    cuda_check(cudaDeviceSynchronize(), "fill (synchronize)");
  }
  TensorView va(int64_t m) const { return TensorView::contiguous(a.get(), dtype, {m, pair.k}, device); }
  TensorView vb() const { return matrix_view(b.get(), dtype, pair.k, pair.n, pair.b_col, device); }
  TensorView vo(int64_t m) const { return TensorView::contiguous(out.get(), dtype, {m, pair.n}, device); }
  void mm(int64_t m, const Options& o) const { tmagemm::mm(va(m), vb(), vo(m), o); }
  // The choice a call of M rows runs under `o` (tuning it first in benchmark mode). One name is one algorithm at one
  // M (a cuBLASLt choice is the heuristic's pick of its rank for the problem).
  std::string choice(int64_t m, const Options& o) const {
    return tune::choose(make_mm_problem(va(m), vb(), vo(m)), o)->name();
  }
};

// L2 flush between timed runs, as `tmagemm bench` does (256 MiB written, a new byte each time).
struct Flush {
  DeviceBuffer buffer{std::size_t{256} << 20};
  unsigned value = 0;
  void operator()(cudaStream_t s) {
    cuda_check(cudaMemsetAsync(buffer.get(), static_cast<int>(++value & 0xff), buffer.bytes(), s), "L2 flush");
  }
};

struct Events {
  cudaEvent_t e[4] = {};
  Events() {
    for (auto& x : e) cuda_check(cudaEventCreate(&x), "cudaEventCreate");
  }
  ~Events() {
    for (auto& x : e) cudaEventDestroy(x);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}

double geomean(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

// Times calls of M rows under `x` and `y` interleaved (L2 flushed before each), after 200 ms of the first (the card's
// sustained state): medians in ms over at least 10 rounds and 100 ms of each.
std::pair<double, double> time_pair(const Buffers& buf, int64_t m, const Options& x, const Options& y, Flush& flush) {
  Events ev;
  const auto heat_end = clock::now() + std::chrono::milliseconds(200);
  while (clock::now() < heat_end) {
    for (int i = 0; i < 4; ++i) buf.mm(m, x);
    cuda_check(cudaDeviceSynchronize(), "heat");
  }
  std::vector<double> tx, ty;
  double sx = 0, sy = 0;
  for (int round = 0; round < 2000 && (round < 10 || sx < 100 || sy < 100); ++round) {
    flush(nullptr);
    cuda_check(cudaEventRecord(ev.e[0]), "cudaEventRecord");
    buf.mm(m, x);
    cuda_check(cudaEventRecord(ev.e[1]), "cudaEventRecord");
    flush(nullptr);
    cuda_check(cudaEventRecord(ev.e[2]), "cudaEventRecord");
    buf.mm(m, y);
    cuda_check(cudaEventRecord(ev.e[3]), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(ev.e[3]), "cudaEventSynchronize");
    float a = 0, b = 0;
    cuda_check(cudaEventElapsedTime(&a, ev.e[0], ev.e[1]), "cudaEventElapsedTime");
    cuda_check(cudaEventElapsedTime(&b, ev.e[2], ev.e[3]), "cudaEventElapsedTime");
    tx.push_back(a);
    ty.push_back(b);
    sx += a;
    sy += b;
  }
  return {median(tx), median(ty)};
}

DType dtype_of(const std::string& s) { return parse_dtype16(s); }

void write_json(const std::string& path, const nlohmann::json& doc) {
  if (path.empty()) return;
  std::ofstream f(path, std::ios::trunc);
  f << doc.dump(2) << "\n";
  if (!f) throw std::runtime_error(fmt::format("--json: cannot write {}", path));
}

nlohmann::json gpu_json(int device) {
  const runtime::DeviceInfo& d = runtime::device_info(device);
  return {{"name", d.name}, {"sm_count", d.sm_count}, {"driver", d.driver_version}};
}

}  // namespace

int run_sweep(const SweepRun& run) {
  const std::vector<WeightPair> pairs = parse_pairs(run.pairs, "--sweep");
  const std::vector<int64_t> ms = parse_m_list(run.m_list.empty() ? kDefaultSweep : run.m_list, "--m");
  const DType dtype = dtype_of(run.dtype);
  if (runtime::device_count() == 0) {
    fmt::print(stderr, "tmagemm tune --sweep: no CUDA device found\n");
    return 1;
  }
  cuda_check(cudaSetDevice(run.device), "cudaSetDevice");
  Options bucketed;
  bucketed.tuning = Tuning::benchmark;
  bucketed.m_buckets = true;
  Options exact = bucketed;
  exact.m_buckets = false;
  Flush flush;
  nlohmann::json rows = nlohmann::json::array();
  std::vector<double> all, above16;
  const auto t0 = clock::now();
  fmt::print("{:<16} {:>5} {:>12} {:<48} {:<48} {:>9} {:>9} {:>7}\n", "weight", "M", "bucket", "bucketed winner",
             "exact winner", "bkt ms", "exact ms", "ratio");
  for (const WeightPair& pair : pairs) {
    const Buffers buf(pair, *std::max_element(ms.begin(), ms.end()) + 0, dtype, run.device);
    std::vector<double> ratios;
    for (int64_t m : ms) {
      // The bucket's tuning runs on its largest M: buffers hold the list's largest M, and the tuner times on scratch.
      const tune::MBucket b = tune::m_bucket(Op::mm, m);
      fmt::print(stderr, "[{} M {}] tuning bucket {} and exact M\n", pair.name(), m, tune::m_key(b));
      const std::string wb = buf.choice(m, bucketed), we = buf.choice(m, exact);
      double tb = NAN, te = NAN, ratio = 1.0;
      if (wb != we) {
        std::tie(tb, te) = time_pair(buf, m, bucketed, exact, flush);
        ratio = tb / te;
      }
      ratios.push_back(ratio);
      all.push_back(ratio);
      if (m > 16) above16.push_back(ratio);
      fmt::print("{:<16} {:>5} {:>12} {:<48} {:<48} {:>9} {:>9} {:>7.4f}\n", pair.name(), m, tune::m_key(b), wb,
                 wb == we ? "(same)" : we, std::isnan(tb) ? "-" : fmt::format("{:.4f}", tb),
                 std::isnan(te) ? "-" : fmt::format("{:.4f}", te), ratio);
      std::fflush(stdout);
      rows.push_back({{"n", pair.n},
                      {"k", pair.k},
                      {"layout", pair.b_col ? "rc" : "rr"},
                      {"m", m},
                      {"bucket", tune::m_key(b)},
                      {"bucketed_winner", wb},
                      {"exact_winner", we},
                      {"bucketed_ms", std::isnan(tb) ? nlohmann::json() : nlohmann::json(tb)},
                      {"exact_ms", std::isnan(te) ? nlohmann::json() : nlohmann::json(te)},
                      {"ratio", ratio}});
    }
    fmt::print("{:<16} geomean bucketed/exact time {:.4f} over {} M values\n", pair.name(), geomean(ratios),
               ratios.size());
  }
  const double g = geomean(all), g16 = geomean(above16);
  fmt::print("geomean bucketed/exact time: {:.4f} over {} (weight, M) pairs ({:.4f} over M > 16, where buckets are "
             "not exact); target <= 1.02; {:.0f} s\n",
             g, all.size(), g16, std::chrono::duration<double>(clock::now() - t0).count());
  write_json(run.json, {{"gpu", gpu_json(run.device)},
                        {"dtype", run.dtype},
                        {"rows", rows},
                        {"geomean", g},
                        {"geomean_m_above_16", g16}});
  return 0;
}

int run_serve(const ServeRun& run) {
  const std::vector<WeightPair> pairs = parse_pairs(run.pairs, "--serve");
  const std::vector<int64_t> pool = parse_m_list(run.m_list.empty() ? kDefaultSweep : run.m_list, "--m");
  const DType dtype = dtype_of(run.dtype);
  if (runtime::device_count() == 0) {
    fmt::print(stderr, "tmagemm tune --serve: no CUDA device found\n");
    return 1;
  }
  cuda_check(cudaSetDevice(run.device), "cudaSetDevice");
  Options bucketed;
  bucketed.tuning = Tuning::cached_only;
  bucketed.m_buckets = true;
  Options exact = bucketed;
  exact.m_buckets = false;
  std::mt19937 rng(run.seed);
  std::vector<int64_t> sequence(static_cast<std::size_t>(run.calls));
  for (auto& m : sequence) m = pool[rng() % pool.size()];
  nlohmann::json results = nlohmann::json::array();
  bool over = false;
  double worst_ratio = INFINITY;
  // 0. Start-up, as a server would (tmagemm::preload_model): every bucket of the weights over the pool's M range.
  nlohmann::json preload_json;
  if (run.preload) {
    nlohmann::json model = {{"m", {*std::min_element(pool.begin(), pool.end()), *std::max_element(pool.begin(), pool.end())}},
                            {"weights", nlohmann::json::array()}};
    for (const WeightPair& pair : pairs)
      model["weights"].push_back({{"op", "mm"},
                                  {"n", pair.n},
                                  {"k", pair.k},
                                  {"dtype", run.dtype},
                                  {"layout", pair.b_col ? "rc" : "rr"}});
    const PreloadStats ps = preload_model_json(model.dump(), "--serve weights", run.device, bucketed);
    fmt::print("preload (M {}..{}): {} buckets, {} winners from the tuning database, {} not tuned, {} warm-up runs; "
               "{:.3f} s\n",
               model["m"][0].get<int64_t>(), model["m"][1].get<int64_t>(), ps.buckets, ps.winners, ps.misses,
               ps.warm_runs, ps.seconds);
    preload_json = {{"buckets", ps.buckets}, {"winners", ps.winners}, {"misses", ps.misses},
                    {"warm_runs", ps.warm_runs}, {"seconds", ps.seconds}};
  }
  for (const WeightPair& pair : pairs) {
    const Buffers buf(pair, *std::max_element(pool.begin(), pool.end()), dtype, run.device);
    // 1. The serving loop in a process that has not met these shapes (cached_only, bucketed keys): host time of
    //    every call, enqueue only (no synchronisation between calls).
    std::vector<double> host_ms, first_ms, again_ms, loading_ms, no_loading_ms, choose_ms;
    const TuningStats s0 = tuning_stats();
    for (int64_t m : sequence) {
      const TuningStats before = tuning_stats();
      const auto t = clock::now();
      // The call's choice first (what the call itself does first), so that its share of the host time shows; the
      // call then finds it in the in-memory map.
      tune::choose(make_mm_problem(buf.va(m), buf.vb(), buf.vo(m)), bucketed);
      const auto t_chosen = clock::now();
      buf.mm(m, bucketed);
      const double ms = std::chrono::duration<double, std::milli>(clock::now() - t).count();
      const TuningStats after = tuning_stats();
      host_ms.push_back(ms);
      choose_ms.push_back(std::chrono::duration<double, std::milli>(t_chosen - t).count());
      (after.memo_hits > before.memo_hits + 1 ? again_ms : first_ms).push_back(ms);
      (after.modules_loaded > before.modules_loaded ? loading_ms : no_loading_ms).push_back(ms);
    }
    cuda_check(cudaDeviceSynchronize(), "serving loop (synchronize)");
    const TuningStats s1 = tuning_stats();
    // The exact keys' first pass (their misses, and their first calls out of the timed loops below).
    for (int64_t m : sequence) buf.mm(m, exact);
    cuda_check(cudaDeviceSynchronize(), "exact loop (synchronize)");
    const TuningStats s2 = tuning_stats();
    // 2. Throughput: the same sequence, bucketed and exact keys alternately, 5 loops each; GPU time of a loop.
    Events ev;
    std::vector<double> loop_b, loop_e;
    for (int r = 0; r < 5; ++r)
      for (int which = 0; which < 2; ++which) {
        const Options& o = which == 0 ? bucketed : exact;
        cuda_check(cudaEventRecord(ev.e[0]), "cudaEventRecord");
        for (int64_t m : sequence) buf.mm(m, o);
        cuda_check(cudaEventRecord(ev.e[1]), "cudaEventRecord");
        cuda_check(cudaEventSynchronize(ev.e[1]), "cudaEventSynchronize");
        float ms = 0;
        cuda_check(cudaEventElapsedTime(&ms, ev.e[0], ev.e[1]), "cudaEventElapsedTime");
        (which == 0 ? loop_b : loop_e).push_back(ms);
      }
    const auto max_of = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
    std::vector<double> sorted = host_ms;
    std::sort(sorted.begin(), sorted.end());
    const double p50 = sorted[sorted.size() / 2], p99 = sorted[std::min(sorted.size() - 1, sorted.size() * 99 / 100)];
    const std::size_t over_1ms = static_cast<std::size_t>(std::count_if(host_ms.begin(), host_ms.end(), [](double x) { return x > 1.0; }));
    const double throughput = median(loop_e) / median(loop_b);  // > 1: bucketed keys faster
    over = over || over_1ms > 0;
    worst_ratio = std::min(worst_ratio, throughput);
    fmt::print("{} serving {} calls (M from {} values, cached_only):\n", pair.name(), sequence.size(), pool.size());
    fmt::print("  host time per call: max {:.3f} ms, p99 {:.3f}, median {:.3f}; {} call(s) over 1 ms (target: none)\n",
               max_of(host_ms), p99, p50, over_1ms);
    fmt::print("  first calls of an M: {} calls, max {:.3f} ms ({} answered by the bucket's winner held in memory, "
               "{} by the database); repeated M: max {:.3f} ms; choosing: max {:.3f} ms\n",
               first_ms.size(), max_of(first_ms), s1.bucket_hits - s0.bucket_hits, s1.db_hits - s0.db_hits,
               max_of(again_ms), max_of(choose_ms));
    fmt::print("  calls that loaded a kernel (the process's first use of it): {}, max {:.3f} ms; the others: max "
               "{:.3f} ms\n",
               loading_ms.size(), max_of(loading_ms), max_of(no_loading_ms));
    fmt::print("  tuning DB: bucketed keys {} hits, {} misses (heuristic); exact keys {} hits, {} misses; tuned {}\n",
               s1.db_hits - s0.db_hits, s1.cached_only_misses - s0.cached_only_misses, s2.db_hits - s1.db_hits,
               s2.cached_only_misses - s1.cached_only_misses, s2.tuned - s0.tuned);
    fmt::print("  loop GPU time: bucketed {:.3f} ms, exact {:.3f} ms (medians of 5); throughput bucketed/exact {:.4f} "
               "(target >= 0.98)\n",
               median(loop_b), median(loop_e), throughput);
    results.push_back({{"weight", pair.name()},
                       {"calls", sequence.size()},
                       {"host_ms_max", max_of(host_ms)},
                       {"host_ms_p99", p99},
                       {"host_ms_median", p50},
                       {"calls_over_1ms", over_1ms},
                       {"first_call_ms_max", max_of(first_ms)},
                       {"choose_ms_max", max_of(choose_ms)},
                       {"bucket_hits", s1.bucket_hits - s0.bucket_hits},
                       {"repeat_call_ms_max", max_of(again_ms)},
                       {"kernel_loading_calls", loading_ms.size()},
                       {"kernel_loading_call_ms_max", max_of(loading_ms)},
                       {"other_call_ms_max", max_of(no_loading_ms)},
                       {"bucketed_db_hits", s1.db_hits - s0.db_hits},
                       {"bucketed_misses", s1.cached_only_misses - s0.cached_only_misses},
                       {"exact_db_hits", s2.db_hits - s1.db_hits},
                       {"exact_misses", s2.cached_only_misses - s1.cached_only_misses},
                       {"loop_ms_bucketed", median(loop_b)},
                       {"loop_ms_exact", median(loop_e)},
                       {"throughput_bucketed_over_exact", throughput}});
  }
  fmt::print("serving: {}; worst throughput bucketed/exact {:.4f}\n",
             over ? "some calls took over 1 ms of host time" : "no call over 1 ms of host time", worst_ratio);
  write_json(run.json, {{"gpu", gpu_json(run.device)},
                        {"dtype", run.dtype},
                        {"seed", run.seed},
                        {"preload", preload_json},
                        {"weights", results}});
  return 0;
}

}  // namespace tmagemm::cli
