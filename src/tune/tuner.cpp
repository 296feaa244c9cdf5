// tuner.cpp — enumeration, filters, heuristic, parallel precompile, benchmarking with a quick correctness
// check, the in-memory map and the tuning database (see tuner.hpp).
#include "tune/tuner.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <regex>
#include <thread>
#include <unordered_map>

#include "choices/persistent_tma.hpp"
#include "jit/jit.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "tmagemm/error.hpp"
#include "tmagemm/version.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm::tune {

namespace {

std::mutex g_extra_mutex;
std::vector<choices::ChoicePtr> g_extra;

// The in-memory map: everything the choice depends on, as plain values (no string building on a hit).
struct MemoKey {
  int op, device, sm_count;
  std::size_t smem;
  int a_dtype, b_dtype, out_dtype, a_major, b_major, out_major;
  unsigned align_bits;
  int64_t m, n, k, batch;
  int tuning, carveout;
  bool persistent_tma, fallback, cublaslt;
  int bias_kind, act, scale_kind;
  bool fast_accum;
  std::string regex;
  bool operator==(const MemoKey&) const = default;
};

struct MemoKeyHash {
  std::size_t operator()(const MemoKey& k) const noexcept {
    std::size_t h = std::hash<std::string>()(k.regex);
    auto mix = [&h](uint64_t v) { h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(static_cast<uint64_t>(k.op) | static_cast<uint64_t>(k.a_dtype) << 8 | static_cast<uint64_t>(k.b_dtype) << 16 |
        static_cast<uint64_t>(k.out_dtype) << 24 | static_cast<uint64_t>(k.a_major) << 32 |
        static_cast<uint64_t>(k.b_major) << 36 | static_cast<uint64_t>(k.out_major) << 40 |
        static_cast<uint64_t>(k.align_bits) << 44 | static_cast<uint64_t>(k.tuning) << 52 |
        static_cast<uint64_t>(k.persistent_tma) << 56 | static_cast<uint64_t>(k.fallback) << 57 |
        static_cast<uint64_t>(k.cublaslt) << 58 | static_cast<uint64_t>(k.fast_accum) << 59);
    mix(static_cast<uint64_t>(k.device) | static_cast<uint64_t>(k.sm_count) << 16 |
        static_cast<uint64_t>(k.carveout) << 32 | static_cast<uint64_t>(k.bias_kind) << 48 |
        static_cast<uint64_t>(k.act) << 52 | static_cast<uint64_t>(k.scale_kind) << 56);
    mix(k.smem);
    mix(static_cast<uint64_t>(k.m));
    mix(static_cast<uint64_t>(k.n));
    mix(static_cast<uint64_t>(k.k));
    mix(static_cast<uint64_t>(k.batch));
    return h;
  }
};

std::mutex g_memo_mutex;
std::unordered_map<MemoKey, choices::ChoicePtr, MemoKeyHash> g_memo;

// Two bits per operand: TMA-compatible, rows on 128-byte boundaries (the alignment class of the DB key).
unsigned align_bits(const Operand& o) {
  const auto base = reinterpret_cast<std::uintptr_t>(o.data);
  const bool rows128 = (o.ld() * static_cast<int64_t>(itemsize(o.dtype))) % 128 == 0 && base % 128 == 0;
  return (can_use_tma(o).ok ? 1u : 0u) | (rows128 ? 2u : 0u);
}

MemoKey memo_key(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& d) {
  return MemoKey{static_cast<int>(p.op),         p.device,
                 d.sm_count,                     d.smem_per_block_optin,
                 static_cast<int>(p.a.dtype),    static_cast<int>(p.b.dtype),
                 static_cast<int>(p.out.dtype),  static_cast<int>(p.a.major()),
                 static_cast<int>(p.b.major()),  static_cast<int>(p.out.major()),
                 align_bits(p.a) | align_bits(p.b) << 2 | align_bits(p.out) << 4,
                 p.m,                            p.n,
                 p.k,                            p.batch,
                 static_cast<int>(o.tuning),     o.sm_carveout,
                 o.persistent_tma,               o.fallback,
                 o.cublaslt,                     static_cast<int>(p.bias_kind),
                 static_cast<int>(p.act),        static_cast<int>(p.scale_kind),
                 p.fast_accum,                   o.choice_regex};
}

bool regex_allows(const std::string& pattern, const std::string& name) {
  if (pattern.empty()) return true;
  static std::mutex mutex;
  static std::map<std::string, std::regex> compiled;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = compiled.find(pattern);
  if (it == compiled.end()) it = compiled.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
  return std::regex_search(name, it->second);
}

// Operand alignment class: TMA-compatible or not, rows on 128-byte boundaries or not.
std::string align_class(const Operand& o) {
  const bool tma = can_use_tma(o).ok;
  const auto base = reinterpret_cast<std::uintptr_t>(o.data);
  const bool rows128 = (o.ld() * static_cast<int64_t>(itemsize(o.dtype))) % 128 == 0 && base % 128 == 0;
  return std::string(tma ? "t" : "n") + (rows128 ? "1" : "0");
}

// Options that change which choices may run; part of the keys when not default.
std::string filter_signature(const Options& o) {
  std::string s;
  if (!o.persistent_tma) s += "-tma";
  if (!o.fallback) s += "-fallback";
  if (!o.cublaslt) s += "-cublaslt";
  if (o.sm_carveout) s += fmt::format("-carve{}", o.sm_carveout);
  if (!o.choice_regex.empty()) s += "-re:" + o.choice_regex;
  return s;
}

std::shared_ptr<TuningDb> database() {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<TuningDb>> open;
  const std::string path = TuningDb::default_path();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = open.find(path);
  if (it != open.end()) return it->second;
  std::shared_ptr<TuningDb> db;
  try {
    db = std::make_shared<TuningDb>(path);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tmagemm: tuning database unavailable ({}); tuning results are kept in memory only\n",
               e.what());
  }
  open.emplace(path, db);
  return db;
}

const char* out_kernel_code(DType d) { return d == DType::bf16 ? "0" : d == DType::f16 ? "1" : "4"; }

// The quick check's kernels (kernels/reference.cuh): reference values at sampled positions, and a gather of the
// same positions from an output.
jit::KernelSpec reference_samples_spec(DType in_dtype) {
  const int in = in_dtype == DType::bf16 ? 0 : 1;
  jit::KernelSpec spec;
  spec.name = fmt::format("reference_samples_{}", in);
  spec.header = "reference.cuh";
  spec.kernel = fmt::format("tmagemm::kernels::reference_samples<{}>", in);
  return spec;
}

jit::KernelSpec gather_samples_spec(DType out_dtype) {
  jit::KernelSpec spec;
  spec.name = fmt::format("gather_samples_{}", out_kernel_code(out_dtype));
  spec.header = "reference.cuh";
  spec.kernel = fmt::format("tmagemm::kernels::gather_samples<{}>", out_kernel_code(out_dtype));
  return spec;
}

// Device scratch kept for the life of the process (per device): L2 flush buffer.
void* flush_buffer(int device, std::size_t bytes) {
  static std::mutex mutex;
  static std::map<int, void*> buffers;
  std::lock_guard<std::mutex> lock(mutex);
  auto& p = buffers[device];
  if (!p) runtime::check_cuda(cudaMalloc(&p, bytes), "cudaMalloc(L2 flush buffer)");
  return p;
}

struct DeviceMem {
  void* ptr = nullptr;
  explicit DeviceMem(std::size_t bytes) {
    if (bytes) runtime::check_cuda(cudaMalloc(&ptr, bytes), "cudaMalloc(tuning scratch)");
  }
  ~DeviceMem() {
    if (ptr) cudaFree(ptr);
  }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
};

void launch_simple(CUfunction fn, void** params, int n, cudaStream_t stream) {
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>((n + 127) / 128);
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = reinterpret_cast<CUstream>(stream);
  runtime::check_cu(runtime::driver().launch_kernel_ex(&cfg, fn, params, nullptr), "launch(tuning check)");
}

// Positions sampled for the quick check, and the reference values there (fp32 accumulation).
struct Samples {
  int n = 0;
  std::unique_ptr<DeviceMem> idx;  // batches | rows | cols, n ints each
  std::unique_ptr<DeviceMem> values;
  std::vector<float> reference;
};

Samples make_samples(const GemmProblem& p, cudaStream_t stream) {
  Samples s;
  const int64_t total = p.m * p.n * p.batch;
  s.n = static_cast<int>(std::min<int64_t>(256, total));
  std::vector<int> host(3 * static_cast<std::size_t>(s.n));
  std::mt19937_64 rng(0x7a6d);
  for (int i = 0; i < s.n; ++i) {
    int64_t lin = i < 4 ? std::vector<int64_t>{0, total - 1, (p.m - 1) * p.n, p.n - 1}[i] % total
                        : static_cast<int64_t>(rng() % static_cast<uint64_t>(total));
    if (s.n == total) lin = i;
    const int64_t b = lin / (p.m * p.n), r = (lin / p.n) % p.m, c = lin % p.n;
    host[i] = static_cast<int>(b);
    host[s.n + i] = static_cast<int>(r);
    host[2 * s.n + i] = static_cast<int>(c);
  }
  s.idx = std::make_unique<DeviceMem>(host.size() * sizeof(int));
  s.values = std::make_unique<DeviceMem>(static_cast<std::size_t>(s.n) * sizeof(float));
  runtime::check_cuda(cudaMemcpyAsync(s.idx->ptr, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice,
                                      stream),
                      "cudaMemcpyAsync(samples)");
  CUfunction fn = jit::load(reference_samples_spec(p.a.dtype), p.device, 0);
  const void* a = p.a.data;
  const void* b = p.b.data;
  int k = static_cast<int>(p.k), n = s.n;
  long long ars = p.a.row_stride, acs = p.a.col_stride, abs_ = p.a.batch_stride;
  long long brs = p.b.row_stride, bcs = p.b.col_stride, bbs = p.b.batch_stride;
  const int* bat = static_cast<const int*>(s.idx->ptr);
  const int* rows = bat + s.n;
  const int* cols = rows + s.n;
  float* out = static_cast<float*>(s.values->ptr);
  void* params[] = {&a, &b, &k, &ars, &acs, &abs_, &brs, &bcs, &bbs, &bat, &rows, &cols, &n, &out};
  launch_simple(fn, params, s.n, stream);
  s.reference.resize(static_cast<std::size_t>(s.n));
  runtime::check_cuda(cudaMemcpyAsync(s.reference.data(), out, s.reference.size() * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream),
                      "cudaMemcpyAsync(reference samples)");
  runtime::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(reference samples)");
  return s;
}

// Relative error of the output at the sampled positions (NaN/inf anywhere -> infinity).
double sampled_error(const GemmProblem& p, const Samples& s, cudaStream_t stream) {
  CUfunction fn = jit::load(gather_samples_spec(p.out.dtype), p.device, 0);
  const void* base = p.out.data;
  long long rs = p.out.row_stride, cs = p.out.col_stride, bs = p.out.batch_stride;
  const int* bat = static_cast<const int*>(s.idx->ptr);
  const int* rows = bat + s.n;
  const int* cols = rows + s.n;
  int n = s.n;
  float* out = static_cast<float*>(s.values->ptr);
  void* params[] = {&base, &rs, &cs, &bs, &bat, &rows, &cols, &n, &out};
  launch_simple(fn, params, s.n, stream);
  std::vector<float> got(static_cast<std::size_t>(s.n));
  runtime::check_cuda(cudaMemcpyAsync(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost, stream),
                      "cudaMemcpyAsync(gathered samples)");
  runtime::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(gathered samples)");
  double num = 0, den = 0;
  for (int i = 0; i < s.n; ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    const double d = double(got[i]) - s.reference[i];
    num += d * d;
    den += double(s.reference[i]) * s.reference[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// Byte extent of an operand (from its strides), for the scratch output.
std::size_t extent_bytes(const Operand& o, int64_t batch) {
  const int64_t last = (batch - 1) * o.batch_stride + (o.rows - 1) * o.row_stride + (o.cols - 1) * o.col_stride;
  return static_cast<std::size_t>(last + 1) * itemsize(o.dtype);
}

struct Tuned {
  choices::ChoicePtr winner;
  std::vector<Timing> timings;  // fastest first
  double precompile_s = 0, total_s = 0;
  int benchmarked = 0;
};

Tuned benchmark(const GemmProblem& p, const Options& o, const std::vector<choices::ChoicePtr>& cands) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  Tuned result;

  // 1. Precompile every candidate in parallel (and the quick check's two kernels with them); a failure drops
  //    that candidate.
  std::vector<std::string> failure(cands.size());
  {
    const std::string arch = runtime::device_info(p.device).arch();
    const std::size_t jobs = cands.size() + 2;
    std::atomic<std::size_t> next{0};
    const unsigned threads =
        std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), static_cast<unsigned>(jobs)));
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (std::size_t i = next++; i < jobs; i = next++) {
          try {
            if (i == cands.size())
              jit::compile(reference_samples_spec(p.a.dtype), arch);
            else if (i == cands.size() + 1)
              jit::compile(gather_samples_spec(p.out.dtype), arch);
            else
              cands[i]->precompile(p, p.device);
          } catch (const std::exception& e) {
            if (i < cands.size()) failure[i] = e.what();  // a check-kernel failure resurfaces at its load
          }
        }
      });
    for (auto& t : pool) t.join();
  }
  const auto t1 = clock::now();
  result.precompile_s = std::chrono::duration<double>(t1 - t0).count();

  // 2. Scratch output with the user's strides and the same alignment (never the user's memory).
  cudaStream_t stream = o.stream;
  const std::size_t bytes = extent_bytes(p.out, p.batch);
  const auto user_off = reinterpret_cast<std::uintptr_t>(p.out.data) % 256;
  DeviceMem scratch(bytes + 256);
  GemmProblem sp = p;
  sp.out.data = static_cast<char*>(scratch.ptr) + user_off;
  std::size_t ws_bytes = 0;
  for (const auto& c : cands) ws_bytes = std::max(ws_bytes, c->workspace_bytes(p));
  DeviceMem workspace(ws_bytes);
  const runtime::DeviceInfo& dev = runtime::device_info(p.device);
  const std::size_t flush_bytes = std::max<std::size_t>(2 * dev.l2_bytes, 64u << 20);
  void* flush = flush_buffer(p.device, flush_bytes);
  const Samples samples = make_samples(p, stream);
  cudaEvent_t start, stop;
  runtime::check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  runtime::check_cuda(cudaEventCreate(&stop), "cudaEventCreate");

  // 3. Quick check, then time each survivor: flush L2, launch, median of the runs.
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const auto& c = cands[i];
    if (!failure[i].empty()) {
      fmt::print(stderr, "tmagemm autotune: dropped {} (precompile failed): {}\n", c->name(), failure[i]);
      continue;
    }
    try {
      runtime::check_cuda(cudaMemsetAsync(scratch.ptr, 0xff, bytes + 256, stream), "cudaMemsetAsync(scratch)");
      c->launch(sp, stream, o, workspace.ptr);
      runtime::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(check)");
      const double err = sampled_error(sp, samples, stream);
      if (!(err <= 1e-2)) {
        fmt::print(stderr, "tmagemm autotune: dropped {} (wrong result: sampled relative error {:.3g})\n", c->name(),
                   err);
        continue;
      }
      std::vector<float> times;
      const auto bench_start = clock::now();
      while (times.size() < 5 ||
             (times.size() < 25 && std::chrono::duration<double>(clock::now() - bench_start).count() < 0.05)) {
        runtime::check_cuda(cudaMemsetAsync(flush, 0, flush_bytes, stream), "cudaMemsetAsync(L2 flush)");
        runtime::check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
        c->launch(sp, stream, o, workspace.ptr);
        runtime::check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
        runtime::check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        runtime::check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        times.push_back(ms);
      }
      std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
      result.timings.push_back({c->name(), times[times.size() / 2]});
      ++result.benchmarked;
    } catch (const Error& e) {
      cudaGetLastError();  // a non-sticky launch error; a sticky one fails the next CUDA call anyway
      fmt::print(stderr, "tmagemm autotune: dropped {} (failed to run): {}\n", c->name(), e.what());
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(result.timings.begin(), result.timings.end(),
            [](const Timing& x, const Timing& y) { return x.ms < y.ms; });
  result.total_s = std::chrono::duration<double>(clock::now() - t0).count();
  if (result.timings.empty()) {
    std::string msg = fmt::format("every candidate failed precompile or its check for {}", p.describe());
    for (std::size_t i = 0; i < cands.size(); ++i)
      if (!failure[i].empty()) msg += fmt::format("\n  {}: {}", cands[i]->name(), failure[i]);
    throw Error(ErrorCode::no_valid_choice, msg);
  }
  for (const auto& c : cands)
    if (c->name() == result.timings.front().choice) result.winner = c;
  return result;
}

void print_autotune(const GemmProblem& p, const Tuned& t, std::size_t candidates) {
  std::string s = fmt::format("AUTOTUNE {}\n", p.describe());
  s += fmt::format("  strides a ({}, {}) b ({}, {}) out ({}, {})\n", p.a.row_stride, p.a.col_stride, p.b.row_stride,
                   p.b.col_stride, p.out.row_stride, p.out.col_stride);
  const double best = t.timings.front().ms;
  for (std::size_t i = 0; i < t.timings.size() && i < 10; ++i)
    s += fmt::format("  {:<48} {:8.4f} ms {:5.1f}%\n", t.timings[i].choice, t.timings[i].ms, 100.0 * best / t.timings[i].ms);
  s += fmt::format("benchmarked {} of {} choices in {:.2f} s (precompile {:.2f} s)\n", t.benchmarked, candidates,
                   t.total_s, t.precompile_s);
  fmt::print(stderr, "{}", s);
}

std::string iso_now() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

}  // namespace

std::vector<Candidate> enumerate(const GemmProblem& p, const Options& o) {
  return enumerate(p, o, runtime::device_info(p.device));
}

std::vector<Candidate> enumerate(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev) {
  std::vector<Candidate> out;
  auto consider = [&](const choices::ChoicePtr& c, const char* disabled_by) {
    Candidate cand{c, {}};
    if (disabled_by)
      cand.reason = fmt::format("backend {} disabled (Options::{} / TMAGEMM_{})", c->backend(), disabled_by,
                                disabled_by == std::string("persistent_tma") ? "PERSISTENT_TMA"
                                : disabled_by == std::string("cublaslt")     ? "CUBLASLT"
                                                                             : "FALLBACK");
    else if (auto r = c->can_implement(p, dev); !r.empty())
      cand.reason = std::move(r);
    else if (!regex_allows(o.choice_regex, c->name()))
      cand.reason = fmt::format("name does not match choice_regex '{}'", o.choice_regex);
    out.push_back(std::move(cand));
  };
  for (const auto& backend : choices::backends()) {
    const bool on = backend.enabled(o);
    for (const auto& c : backend.enumerate(p, dev, o)) consider(c, on ? nullptr : backend.name);
  }
  // A direct-store persistent-TMA config whose TMA-store twin (same tile, stages, cluster) also applies is
  // dominated: the twin measured 2-30 % faster on every shape (docs/perf-notes.md, v2). Dropping it halves the
  // persistent-TMA candidates to compile and time. A regex that excludes the twin keeps the direct config.
  for (auto& c : out) {
    const auto* cfg = choices::persistent_tma_config_of(*c.choice);
    if (!c.reason.empty() || !cfg || cfg->store_tma) continue;
    for (const auto& twin : out) {
      const auto* t = choices::persistent_tma_config_of(*twin.choice);
      if (twin.reason.empty() && t && t->store_tma && t->bm == cfg->bm && t->bn == cfg->bn && t->bk == cfg->bk &&
          t->consumers == cfg->consumers && t->cluster_m == cfg->cluster_m) {
        c.reason = fmt::format("dominated by {} (TMA-store epilogue, measured faster)", twin.choice->name());
        break;
      }
    }
  }
  std::lock_guard<std::mutex> lock(g_extra_mutex);
  for (const auto& c : g_extra) consider(c, nullptr);
  return out;
}

std::string tuning_key(const GemmProblem& p) { return tuning_key(p, runtime::device_info(p.device)); }

std::string tuning_key(const GemmProblem& p, const runtime::DeviceInfo& d) {
  std::string epilogue = "none";
  if (p.op == Op::addmm || p.op == Op::scaled_mm)
    epilogue = fmt::format("bias{}-act{}-scale{}-fast{}", static_cast<int>(p.bias_kind), to_string(p.act),
                           static_cast<int>(p.scale_kind), p.fast_accum ? 1 : 0);
  return fmt::format("{}|{}sm|cc{}{}|drv{}|v{}|{}|{}.{}->{}|{}{}{}|{}x{}x{}x{}|{}{}{}|{}", d.name, d.sm_count,
                     d.cc_major, d.cc_minor, d.driver_version, version(), to_string(p.op), to_string(p.a.dtype),
                     to_string(p.b.dtype), to_string(p.out.dtype), to_string(p.a.major())[0],
                     to_string(p.b.major())[0], to_string(p.out.major())[0], p.m, p.n, p.k, p.batch,
                     align_class(p.a), align_class(p.b), align_class(p.out), epilogue);
}

choices::ChoicePtr heuristic_choice(const GemmProblem& p, const std::vector<Candidate>& cands,
                                    const runtime::DeviceInfo& dev) {
  // Documented rule: the persistent-TMA config with the best predicted time (waves x tile area / measured
  // tile throughput, penalised for misaligned rows; persistent_tma_score); if no persistent-TMA choice
  // applies — or the rows of both A and B start off 128-byte boundaries, where every TMA tile shape loses
  // ~1/3 to TMA request throughput (docs/perf-notes.md) — the first applicable choice of the other backends
  // (cuBLASLt's first heuristic algorithm).
  const auto off128 = [](const Operand& o) {
    return (o.ld() * static_cast<int64_t>(itemsize(o.dtype))) % 128 != 0 ||
           reinterpret_cast<std::uintptr_t>(o.data) % 128 != 0;
  };
  if (off128(p.a) && off128(p.b))
    for (const auto& c : cands)
      if (c.reason.empty() && !choices::persistent_tma_config_of(*c.choice)) return c.choice;
  choices::ChoicePtr best;
  double best_score = -1;
  for (const auto& c : cands) {
    if (!c.reason.empty()) continue;
    if (const auto* cfg = choices::persistent_tma_config_of(*c.choice)) {
      const double s = choices::persistent_tma_score(p, *cfg, dev, 0);
      if (s > best_score) {
        best_score = s;
        best = c.choice;
      }
    }
  }
  if (best) return best;
  for (const auto& c : cands)
    if (c.reason.empty()) return c.choice;
  return nullptr;
}

choices::ChoicePtr choose(const GemmProblem& p, const Options& o) {
  return choose(p, o, runtime::device_info(p.device));
}

choices::ChoicePtr choose(const GemmProblem& p, const Options& o, const runtime::DeviceInfo& dev) {
  MemoKey mkey = memo_key(p, o, dev);
  {
    std::lock_guard<std::mutex> lock(g_memo_mutex);
    if (auto it = g_memo.find(mkey); it != g_memo.end()) return it->second;
  }
  const std::string filters = filter_signature(o);
  const std::string key = tuning_key(p, dev) + (filters.empty() ? "" : "|" + filters);
  const auto cands = enumerate(p, o, dev);
  std::vector<choices::ChoicePtr> usable;
  for (const auto& c : cands)
    if (c.reason.empty()) usable.push_back(c.choice);
  if (usable.empty()) {
    std::string msg = fmt::format("no choice can run {}:", p.describe());
    for (const auto& c : cands) msg += fmt::format("\n  {}: {}", c.choice->name(), c.reason);
    throw Error(ErrorCode::no_valid_choice, msg);
  }
  choices::ChoicePtr chosen;
  auto db = o.tuning == Tuning::heuristic ? nullptr : database();
  if (db) {
    try {
      if (auto rec = db->get(key))
        for (const auto& c : usable)
          if (c->name() == rec->winner) chosen = c;
    } catch (const std::exception& e) {
      fmt::print(stderr, "tmagemm: tuning database read failed: {}\n", e.what());
    }
  }
  if (!chosen && o.tuning == Tuning::benchmark) {
    const Tuned t = benchmark(p, o, usable);
    chosen = t.winner;
    if (runtime::log_enabled("autotune")) print_autotune(p, t, usable.size());
    if (db) {
      try {
        db->put(key, TuningRecord{t.winner->name(), t.timings, iso_now()});
      } catch (const std::exception& e) {
        fmt::print(stderr, "tmagemm: tuning database write failed: {}\n", e.what());
      }
    }
  }
  if (!chosen) chosen = heuristic_choice(p, cands, dev);
  std::lock_guard<std::mutex> lock(g_memo_mutex);
  g_memo.emplace(std::move(mkey), chosen);
  return chosen;
}

Known known(const GemmProblem& p) {
  Known k;
  if (auto db = database()) {
    try {
      if (auto rec = db->get(tuning_key(p))) {
        k.winner = rec->winner;
        for (const auto& t : rec->timings) k.timings_ms.emplace_back(t.choice, t.ms);
      }
    } catch (const std::exception&) {
    }
  }
  return k;
}

void set_extra_choices_for_testing(std::vector<choices::ChoicePtr> extra) {
  std::lock_guard<std::mutex> lock(g_extra_mutex);
  g_extra = std::move(extra);
}

void forget_in_memory() {
  std::lock_guard<std::mutex> lock(g_memo_mutex);
  g_memo.clear();
}

}  // namespace tmagemm::tune
