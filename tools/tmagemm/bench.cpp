// bench.cpp — `tmagemm bench`: runs the benchmark suites of suites.cpp the way docs BENCHMARKS.md says
// (random normal inputs, outputs checked first, CUDA-event timing with L2 flushed between runs, median of
// >= --reps runs and >= 100 ms, tmagemm interleaved with the cuBLASLt baseline in the same process; the baseline
// algorithm chosen by an interleaved trial on a card heated first), prints
// a table with the geometric mean of tmagemm/cuBLASLt per suite, and writes
// <out>/<gpu-slug>-<yyyy-mm-dd>-<suite>.json. Exits 1 when there is no CUDA device or any row is not ok.
// addmm rows compare tmagemm::addmm with cuBLASLt's fused epilogue (bias, bias + GELU, bias + ReLU), and also time
// the unfused pair: the same cuBLASLt mm without an epilogue, then one elementwise bias + activation kernel.
// bmm rows compare tmagemm::bmm on B dense matrices per operand with cuBLASLt's strided-batched matmul.
// grouped rows compare tmagemm::grouped_mm (MoE routing of the suite) with the better of cublasGemmGroupedBatchedEx
// and one cuBLASLt call per group (grouped_baseline.hpp).
// --sustained replaces the flushed, interleaved runs by blocks of each side alone, back to back without a flush
// (a loop of one GEMM, as a training step runs its large GEMMs): at the card's power cap, what a side reads there is
// its energy per FLOP, which interleaved runs share out (the clock is set by the mix).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <numbers>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "cublaslt_baseline.hpp"
#include "grouped_baseline.hpp"
#include "jit/jit.hpp"
#include "jit/support_kernels.hpp"
#include "runtime/device.hpp"
#include "runtime/sustained.hpp"
#include "suites.hpp"
#include "tmagemm/error.hpp"
#include "tune/benchmark.hpp"
#include "tmagemm/ops.hpp"
#include "tmagemm/options.hpp"
#include "tmagemm/version.hpp"

namespace tmagemm::cli {

namespace {

constexpr std::size_t kFlushBytes = std::size_t{256} << 20;     // written before every timed run (L2 flush)
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // cuBLASLt workspace
constexpr double kMinTimedMs = 100.0;                           // keep timing until this much per side...
constexpr int kMaxRuns = 2000;                                  // ...or this many runs
constexpr int kWarmupRuns = 5;
constexpr double kHeatMs = 300.0;                               // load before the baseline's trial
constexpr int kTrialRounds = 10;                                // the trial: at least this many rounds...
constexpr double kTrialMs = 150.0;                              // ...and this much wall time...
constexpr int kMaxTrialRounds = 200;                            // ...and at most this many rounds
constexpr int kBaselineAlgos = 4;                               // top-k heuristic algorithms tried
constexpr int kReferenceSamples = 256;                          // output elements checked on the CPU
constexpr double kTolerance = 1e-2;                             // relative Frobenius error allowed
constexpr std::size_t kPoolSize = 1000003;                      // random values (a prime: no short period)
constexpr double kSustainedBlockMs = 800.0;  // --sustained: each side alone for this long, four blocks (ABBA)...
constexpr double kSustainedBatchMs = 2.0;    // ...launched in batches of about this much work, <= 2 batches queued

struct BenchOptions {
  std::string suite = "default";
  std::string out = "bench/results";
  int reps = 50;
  std::string dtype = "bf16";
  int device = 0;
  bool interleave = true;
  std::string flush = "write";
  bool back_to_back = false;  // --back-to-back: each run timed as the kernel right after the flush kernel
  bool sustained = false;     // --sustained: each side alone back to back in blocks, no flush (see the top)
  std::string routing = "moe";  // --routing: the grouped rows' routing (suites.hpp grouped_routing)
};

struct Row {
  std::string op, dtype, layout, epilogue, note;
  std::string flush = "write";  // how L2 was flushed before each timed run (--flush)
  bool back_to_back = false;    // timed right after the flush, less the flush's own time (--back-to-back)
  bool sustained = false;       // timed in blocks of back-to-back runs without a flush (--sustained)
  bool m_buckets = true;        // the tuning key held M by bucket (Options::m_buckets, TMAGEMM_M_BUCKETS)
  int64_t batch = 1, m = 0, n = 0, k = 0;
  std::string status = "ok";  // ok | FAIL | error
  std::string error;
  std::optional<double> ours_ms, base_ms, rel_err;
  std::string choice = "?";
  int baseline_algo = -1;
  std::vector<double> baseline_trials_ms;  // median of the short trial of each cuBLASLt algorithm (-1: did not run)
  int runs = 0;
  bool bandwidth = false;
  std::size_t itemsize = 2;
  std::size_t out_itemsize = 0;  // the output's element size when it differs from the inputs' (scaled_mm: 2)
  bool unfused = false;  // addmm: the row also times the unfused pair (cuBLASLt mm, then bias + activation kernel)
  bool show_epilogue = false;  // the table has an epilogue column (suites with per-row epilogues: addmm, fp8)
  std::optional<double> unfused_ms;
  int unfused_algo = -1;
  std::vector<double> unfused_trials_ms;  // as baseline_trials_ms, for the pair with each mm algorithm
  bool aligned = false;  // misaligned suite: also timed tmagemm on the same shape with 16-byte aligned operands
  std::optional<double> aligned_ms;
  std::optional<double> misaligned_paired_ms;  // the row's tmagemm call timed interleaved with the aligned twin
  std::string aligned_choice;
  std::string baseline_name = "cublaslt";  // grouped rows: which cuBLAS way won the trial (grouped_baseline.hpp)
  // grouped rows: batch = G experts, m = total rows, group_rows = the rows of each expert (A and out are one matrix
  // of m rows; only the experts with rows are read).
  bool grouped = false;
  std::vector<int64_t> group_rows;
  std::string routing;  // grouped rows: --routing

  double flops() const { return 2.0 * (grouped ? 1 : batch) * m * n * k; }
  double bytes() const {
    const double out = static_cast<double>(out_itemsize ? out_itemsize : itemsize);
    if (grouped) {
      const auto read = std::count_if(group_rows.begin(), group_rows.end(), [](int64_t r) { return r > 0; });
      return static_cast<double>(itemsize) * (m * k + static_cast<double>(read) * k * n) + out * m * n;
    }
    return static_cast<double>(batch) * (static_cast<double>(itemsize) * (m * k + k * n) + out * m * n);
  }
  static std::optional<double> per_s(std::optional<double> ms, double amount, double unit) {
    if (!ms || *ms <= 0) return std::nullopt;
    return amount / (*ms * 1e-3) / unit;
  }
  std::optional<double> ours_tflops() const { return per_s(ours_ms, flops(), 1e12); }
  std::optional<double> base_tflops() const { return per_s(base_ms, flops(), 1e12); }
  std::optional<double> ours_tbps() const { return per_s(ours_ms, bytes(), 1e12); }
  std::optional<double> base_tbps() const { return per_s(base_ms, bytes(), 1e12); }
  std::optional<double> unfused_tflops() const { return per_s(unfused_ms, flops(), 1e12); }
  std::optional<double> ratio() const {
    auto o = ours_tflops(), b = base_tflops();
    if (!o || !b) return std::nullopt;
    return *o / *b;
  }
  std::optional<double> aligned_tflops() const { return per_s(aligned_ms, flops(), 1e12); }
  // tmagemm on the misaligned operands over tmagemm on aligned ones (same M, N, K), the two timed interleaved.
  std::optional<double> vs_aligned() const {
    if (!misaligned_paired_ms || !aligned_ms) return std::nullopt;
    return *aligned_ms / *misaligned_paired_ms;
  }
  std::optional<double> ratio_unfused() const {
    auto o = ours_tflops(), u = unfused_tflops();
    if (!o || !u) return std::nullopt;
    return *o / *u;
  }
};

// What every shape of a run shares: stream, events, flush buffer, cuBLASLt workspace, random values.
struct Context {
  int device = 0;
  int reps = 50;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  DeviceBuffer flush, workspace;
  std::vector<std::uint16_t> pool;  // random normal values in the bench dtype
  DType pool_dtype = DType::bf16;
  Options options;
  unsigned flush_counter = 0;
  bool interleave = true;  // false: all of tmagemm's timed runs, then all of cuBLASLt's
  CUfunction flush_read = nullptr;  // --flush read: a kernel that reads the flush buffer (null: memset flush)
  // --back-to-back: the events enclose the flush and the run, and the flush's own median time (flush_ms, measured
  // for each row) is taken off, so that a launch that may start while its predecessor finishes (programmatic
  // dependent launch) does, as in a sequence of kernels; the default encloses the run alone.
  bool back_to_back = false;
  double flush_ms = 0;
  bool sustained = false;  // --sustained (see the top of this file)
};

// Fixed-seed normal values, never zero, converted to `dtype`. Inputs are filled by cycling through them.
std::vector<std::uint16_t> make_pool(DType dtype) {
  std::mt19937_64 rng(20261129);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::uint16_t> pool(kPoolSize);
  for (auto& v : pool) {
    std::uint16_t h = float_to_16bit(dtype, normal(rng));
    if ((h & 0x7fffu) == 0) h = float_to_16bit(dtype, 1.0f);
    v = h;
  }
  return pool;
}

void fill_cycled(std::vector<std::uint16_t>& dst, const std::vector<std::uint16_t>& pool, std::size_t offset) {
  std::size_t done = 0;
  offset %= pool.size();
  while (done < dst.size()) {
    const std::size_t n = std::min(dst.size() - done, pool.size() - offset);
    std::memcpy(dst.data() + done, pool.data() + offset, n * sizeof(std::uint16_t));
    done += n;
    offset = 0;
  }
}

// Writes the flush buffer (a different byte each time): L2 holds none of a GEMM's operands afterwards, but up to
// its size of dirty lines, which the timed GEMM's reads then evict (a write-back per line read).
// With --flush read, a kernel reads the buffer instead: L2 ends up holding clean lines of it.
void flush_l2(Context& ctx) {
  if (ctx.flush_read) {
    const void* p = ctx.flush.get();
    unsigned long long n = ctx.flush.bytes() / 16;
    void* sink = ctx.workspace.get();
    void* params[] = {&p, &n, &sink};
    CUlaunchConfig cfg{};
    cfg.gridDimX = static_cast<unsigned>(runtime::device_info(ctx.device).sm_count * 4);
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 512;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = reinterpret_cast<CUstream>(ctx.stream);
    if (runtime::driver().launch_kernel_ex(&cfg, ctx.flush_read, params, nullptr) != CUDA_SUCCESS)
      throw std::runtime_error("L2 flush (read) launch failed");
    return;
  }
  cuda_check(cudaMemsetAsync(ctx.flush.get(), static_cast<int>(++ctx.flush_counter & 0xff), ctx.flush.bytes(),
                             ctx.stream),
             "cudaMemsetAsync(L2 flush)");
}

// An addmm row's epilogue as written in the suite ("none", "bias", "bias+gelu_tanh", "relu", ...): a bias (N)
// or not, then an activation named as tmagemm's to_string(Activation) writes it.
struct RowEpilogue {
  bool bias = false;
  Activation act = Activation::none;
};

RowEpilogue parse_epilogue(const std::string& text) {
  RowEpilogue e;
  std::string rest = text == "none" ? std::string() : text;
  if (rest == "bias" || rest.rfind("bias+", 0) == 0) {
    e.bias = true;
    rest = rest.size() > 4 ? rest.substr(5) : std::string();
  }
  if (rest.empty()) return e;
  for (Activation a : {Activation::relu, Activation::gelu, Activation::gelu_tanh, Activation::silu,
                       Activation::sigmoid})
    if (rest == to_string(a)) {
      e.act = a;
      return e;
    }
  throw std::invalid_argument("unknown epilogue '" + text + "'");
}

// The activations as torch defines them, in double: the CPU reference of addmm rows.
double activate(Activation act, double x) {
  switch (act) {
    case Activation::relu: return x < 0 ? 0.0 : x;
    case Activation::gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::gelu_tanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
    case Activation::silu: return x / (1.0 + std::exp(-x));
    case Activation::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    default: return x;
  }
}

// The second half of the unfused pair: out(M,N) = act(out + bias(N)) in place, row-major 16-bit out and bias of
// the same dtype, fp32 math, round to nearest even. Vec adjacent elements a thread (8: 16-byte accesses when N
// % 8 == 0; else 2 or 1, the host picks), one thread per Vec elements: a bandwidth-bound pass over out. GELU's tanh
// is the hardware tanh.approx.f32 (relative error ~2^-11, below a bf16 rounding step), so that the pass does not
// become compute-bound at H200's bandwidth.
jit::KernelSpec bias_act_spec(DType dtype, Activation act, int vec) {
  const int type = dtype == DType::bf16 ? 0 : 1;
  jit::KernelSpec s;
  s.name = fmt::format("bench_bias_act_{}_{}_v{}", to_string(dtype), to_string(act), vec);
  s.extra_source =
      "namespace tmagemm::bench {\n"
      "template <int Vec>\n"
      "struct alignas(2 * Vec) Pack {\n"
      "  unsigned short h[Vec];\n"
      "};\n"
      "// Type: 0 bf16, 1 f16.\n"
      "template <int Type>\n"
      "__device__ inline float to_float(unsigned short h) {\n"
      "  if constexpr (Type == 0) return __uint_as_float(static_cast<unsigned>(h) << 16);\n"
      "  float f;\n"
      "  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n"
      "  return f;\n"
      "}\n"
      "template <int Type>\n"
      "__device__ inline unsigned short to_16bit(float v) {\n"
      "  unsigned short h;\n"
      "  if constexpr (Type == 0)\n"
      "    asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(v));\n"
      "  else\n"
      "    asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(v));\n"
      "  return h;\n"
      "}\n"
      "// Act: tmagemm::Activation (0 none, 1 relu, 2 gelu, 3 gelu_tanh, 4 silu, 5 sigmoid).\n"
      "template <int Act>\n"
      "__device__ inline float activate(float v) {\n"
      "  if constexpr (Act == 1) {\n"
      "    return v < 0.0f ? 0.0f : v;\n"
      "  } else if constexpr (Act == 2) {\n"
      "    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));\n"
      "  } else if constexpr (Act == 3) {\n"
      "    const float inner = 0.79788456080286536f * (v + 0.044715f * v * v * v);\n"
      "    float t;\n"
      "    asm(\"tanh.approx.f32 %0, %1;\" : \"=f\"(t) : \"f\"(inner));\n"
      "    return 0.5f * v * (1.0f + t);\n"
      "  } else if constexpr (Act == 4) {\n"
      "    return v / (1.0f + expf(-v));\n"
      "  } else if constexpr (Act == 5) {\n"
      "    return 1.0f / (1.0f + expf(-v));\n"
      "  } else {\n"
      "    return v;\n"
      "  }\n"
      "}\n"
      "template <int Type, int Act, int Vec>\n"
      "__global__ void bias_act(unsigned short* out, const unsigned short* bias, long long total, long long n) {\n"
      "  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * Vec;\n"
      "  if (i >= total) return;\n"
      "  Pack<Vec> v = *reinterpret_cast<const Pack<Vec>*>(out + i);\n"
      "  const Pack<Vec> b = *reinterpret_cast<const Pack<Vec>*>(bias + i % n);\n"
      "#pragma unroll\n"
      "  for (int j = 0; j < Vec; ++j)\n"
      "    v.h[j] = to_16bit<Type>(activate<Act>(to_float<Type>(v.h[j]) + to_float<Type>(b.h[j])));\n"
      "  *reinterpret_cast<Pack<Vec>*>(out + i) = v;\n"
      "}\n"
      "}  // namespace tmagemm::bench\n";
  s.kernel = fmt::format("tmagemm::bench::bias_act<{}, {}, {}>", type, static_cast<int>(act), vec);
  return s;
}

// One timed run of `fn` with L2 flushed before it (the flush is outside the timed region). Milliseconds.
float timed_run(Context& ctx, const std::function<void()>& fn) {
  if (ctx.back_to_back) cuda_check(cudaEventRecord(ctx.start, ctx.stream), "cudaEventRecord");
  flush_l2(ctx);
  if (!ctx.back_to_back) cuda_check(cudaEventRecord(ctx.start, ctx.stream), "cudaEventRecord");
  if (fn) fn();
  cuda_check(cudaEventRecord(ctx.stop, ctx.stream), "cudaEventRecord");
  cuda_check(cudaEventSynchronize(ctx.stop), "cudaEventSynchronize");
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, ctx.start, ctx.stop), "cudaEventElapsedTime");
  return ctx.back_to_back ? static_cast<float>(ms - ctx.flush_ms) : ms;
}

double median(std::vector<float> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double rel_frobenius(const std::vector<double>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = got[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

double rel_frobenius(DType dtype, const std::vector<std::uint16_t>& got, const std::vector<std::uint16_t>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = from_16bit(dtype, got[i]), r = from_16bit(dtype, ref[i]);
    num += (g - r) * (g - r);
    den += r * r;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// The start of an error message for the table: its first line, and the next one too when the first ends
// with ':' (e.g. no_valid_choice lists each choice's reason on its own line). The JSON keeps all of it.
std::string short_message(const std::string& s, std::size_t max = 300) {
  std::size_t end = s.find('\n');
  if (end != std::string::npos && end > 0 && s[end - 1] == ':') end = s.find('\n', end + 1);
  std::string text = s.substr(0, end);
  if (text.size() > max) text = text.substr(0, max) + "...";
  if (end != std::string::npos) text += " [...]";
  return text;
}

// Suites whose rows each name their own epilogue (a table column, and the geomean names its lowest row).
bool per_row_epilogues(const Suite& suite) { return suite.report_unfused || suite.op == "scaled_mm"; }

// The identifying fields of a result row (shape, layout, op, epilogue), before anything is measured.
Row row_for(const Suite& suite, const BenchShape& shape, DType dtype) {
  Row row;
  row.op = suite.op;
  row.dtype = to_string(dtype);
  row.layout = shape.layout;
  row.epilogue = shape.epilogue.empty() ? suite.epilogue : shape.epilogue;
  row.unfused = suite.report_unfused;
  row.show_epilogue = per_row_epilogues(suite);
  row.note = shape.note;
  row.batch = shape.batch;
  row.m = shape.m;
  row.n = shape.n;
  row.k = shape.k;
  row.bandwidth = suite.report_bandwidth;
  row.grouped = suite.op == "grouped_mm";
  row.group_rows = shape.group_rows;
  row.routing = shape.routing;
  return row;
}

// Launches the unfused pair's elementwise kernel (bias_act_spec) over out(M,N) on ctx.stream.
void launch_bias_act(Context& ctx, CUfunction fn, int vec, void* out, const void* bias, int64_t m, int64_t n) {
  long long total = static_cast<long long>(m) * n, cols = n;
  void* params[] = {&out, &bias, &total, &cols};
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>((total / vec + 255) / 256);
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 256;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = reinterpret_cast<CUstream>(ctx.stream);
  if (total > 0 && runtime::driver().launch_kernel_ex(&cfg, fn, params, nullptr) != CUDA_SUCCESS)
    throw std::runtime_error("bias + activation kernel launch failed");
}

// tmagemm's first call of a row (it also tunes, under TMAGEMM_TUNING=benchmark), then the choice it runs, from
// `explain`. A call that throws marks the row as an error and clears `ours` (the row is not timed); an explain that
// throws leaves the choice "?".
void first_call(Context& ctx, Row& row, std::function<void()>& ours, const std::string& what,
                const std::function<Explanation()>& explain) {
  try {
    ours();
    cuda_check(cudaStreamSynchronize(ctx.stream), (what + " (synchronize)").c_str());
  } catch (const std::exception& e) {
    row.status = "error";
    row.error = e.what();
    ours = nullptr;
    return;
  }
  try {
    for (const ChoiceReport& c : explain().choices)
      if (c.selected) row.choice = c.name;
  } catch (const std::exception&) {
    row.choice = "?";
  }
}

// The baseline algorithms (indices 0..count-1) that run: each is launched once with `run` and awaited; one that
// throws is left out. Throws when none runs.
std::vector<int> runnable_algos(Context& ctx, int count, const std::function<void(int)>& run) {
  std::vector<int> ran;
  for (int i = 0; i < count; ++i) {
    try {
      run(i);
      cuda_check(cudaStreamSynchronize(ctx.stream), "cuBLASLt (synchronize)");
      ran.push_back(i);
    } catch (const std::exception&) {
      // this algorithm does not run; try the next
    }
  }
  if (ran.empty()) throw std::runtime_error("no cuBLASLt heuristic algorithm ran");
  return ran;
}

using Sampler = std::function<std::vector<double>(const std::vector<std::uint16_t>&)>;

// The sampler of a 16-bit output with row pitch `ld`: the values at `samples` (row, column) of a downloaded copy.
Sampler sampler_of(const std::vector<std::pair<int64_t, int64_t>>& samples, DType dtype, int64_t ld) {
  return [&samples, dtype, ld](const std::vector<std::uint16_t>& h) {
    std::vector<double> got;
    for (auto [i, j] : samples) got.push_back(from_16bit(dtype, h[static_cast<std::size_t>(i * ld + j)]));
    return got;
  };
}

// The algorithms of `algos` whose output (into `out`, poisoned first; downloaded into `scratch`) agrees with the CPU
// reference `ref` at the sampled elements. `first_good` (when set) receives the first good algorithm's output;
// `problem` says why the last bad one was left out (prefixed), and is cleared when one is good.
std::vector<int> checked_algos(Context& ctx, const std::vector<int>& algos, const std::function<void(int)>& run,
                               const DeviceBuffer& out, const Sampler& sampled, const std::vector<double>& ref,
                               std::vector<std::uint16_t>& scratch, std::vector<std::uint16_t>* first_good,
                               std::string& problem, const char* prefix) {
  std::vector<int> good;
  for (int i : algos) {
    cuda_check(cudaMemsetAsync(out.get(), 0xff, out.bytes(), ctx.stream), "cudaMemsetAsync(out)");
    run(i);
    cuda_check(cudaStreamSynchronize(ctx.stream), "baseline (synchronize)");
    cuda_check(cudaMemcpy(scratch.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy(out)");
    const double e = rel_frobenius(sampled(scratch), ref);
    if (!(e <= kTolerance)) {
      problem = fmt::format("{}cuBLASLt algorithm {} disagrees with the CPU reference (rel err {:.3g})", prefix, i, e);
      continue;
    }
    good.push_back(i);
    if (first_good && first_good->empty()) *first_good = scratch;
  }
  if (!good.empty()) problem.clear();  // the baseline is the best of the algorithms that are right
  return good;
}

// tmagemm's output (`out`, 16-bit) against the baseline's (`base`; empty: the CPU samples). Sets the row's rel_err;
// false (the row marked FAIL) when it is wrong.
// A padded output (row pitch ld > cols) is compared on its matrix elements only.
bool check_ours(Row& row, DType dtype, const DeviceBuffer& out, const std::vector<std::uint16_t>& base,
                const Sampler& sampled, const std::vector<double>& ref, int64_t cols = 0, int64_t ld = 0) {
  std::vector<std::uint16_t> ours(out.bytes() / 2);
  cuda_check(cudaMemcpy(ours.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy(out)");
  auto dense = [&](const std::vector<std::uint16_t>& h) {
    if (ld <= cols) return h;
    std::vector<std::uint16_t> d;
    for (std::size_t r = 0; r < h.size() / static_cast<std::size_t>(ld); ++r)
      d.insert(d.end(), h.begin() + static_cast<std::ptrdiff_t>(r * ld),
               h.begin() + static_cast<std::ptrdiff_t>(r * ld + cols));
    return d;
  };
  row.rel_err = !base.empty() ? rel_frobenius(dtype, dense(ours), dense(base)) : rel_frobenius(sampled(ours), ref);
  if (*row.rel_err <= kTolerance) return true;
  row.status = "FAIL";
  row.error = fmt::format("tmagemm result is wrong: rel err {:.3g} vs {} (tolerance {:g})", *row.rel_err,
                          !base.empty() ? "cuBLASLt" : "CPU reference on sampled elements", kTolerance);
  return false;
}

// The measuring half of a row, shared by every op: heat, the baseline's trial (and the unfused pair's), then the
// interleaved timing of tmagemm (`ours`, null when it failed), the chosen baseline algorithm and the unfused pair.
// `good_algos` are the baseline algorithms that passed the check (indices for `run_algo`, of `algo_count`);
// `base_problem` / `unfused_problem`, when not empty, mark the row as an error. Fills the row's times.
// The calls `runs`, each after an L2 flush, in turn and back to back for kHeatMs: a card in the sustained, power-capped
// state of a loop of GEMMs for the timing that follows (nothing when `runs` is empty).
void heat(Context& ctx, const std::vector<std::function<void()>>& runs) {
  const auto start = std::chrono::steady_clock::now();
  while (!runs.empty() &&
         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() < kHeatMs) {
    for (int r = 0; r < 4; ++r)
      for (const auto& run : runs) {
        flush_l2(ctx);
        run();
      }
    cuda_check(cudaStreamSynchronize(ctx.stream), "heat (synchronize)");
  }
}

void measure(Context& ctx, Row& row, const std::function<void()>& ours, const std::vector<int>& good_algos,
             const std::function<void(int)>& run_algo, int algo_count, const std::string& base_problem,
             const std::vector<int>& good_unfused = {}, const std::function<void(int)>& run_unfused = {},
             int unfused_count = 0, const std::string& unfused_problem = {}) {
  // Heat: tmagemm and cuBLASLt (and the unfused pair) back to back for kHeatMs, so that the trial and the timing
  // below both run on a card in the sustained, power-capped state of a loop of GEMMs. (Measured on H200,
  // docs/perf-notes.md: the SM clock drops from 1980 to ~1450 MHz within 50 ms of load and dips further ~0.8 s in;
  // the CPU checks above leave it idle long enough to recover. A trial on the recovered card timed the first
  // algorithm up to 10 % fast and chose it.)
  std::vector<std::function<void()>> heat_runs;
  if (ours) heat_runs.push_back(ours);
  if (!good_algos.empty()) heat_runs.push_back([&] { run_algo(good_algos.front()); });
  if (!good_unfused.empty()) heat_runs.push_back([&] { run_unfused(good_unfused.front()); });
  heat(ctx, heat_runs);
  if (ctx.back_to_back) {  // the flush's own time on the card as it is now (heated)
    ctx.flush_ms = 0;
    std::vector<float> t;
    for (int r = 0; r < 31; ++r) t.push_back(timed_run(ctx, {}));
    ctx.flush_ms = median(t);
  }
  // The trial: interleaved rounds over the algorithms (the first to run rotating), >= kTrialRounds rounds and
  // >= kTrialMs of wall time; the lowest median wins. Fills `trials_ms` (one entry per heuristic algorithm, -1: did
  // not run) and returns the winner.
  auto trial = [&](const std::vector<int>& good, const std::function<void(int)>& run, int algo_count,
                   std::vector<double>& trials_ms) {
    std::vector<std::vector<float>> t(good.size());
    const auto trial_start = std::chrono::steady_clock::now();
    for (int r = 0; r < kMaxTrialRounds; ++r) {
      if (r >= kTrialRounds &&
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - trial_start).count() >= kTrialMs)
        break;
      for (std::size_t f = 0; f < good.size(); ++f) {
        const std::size_t j = (f + static_cast<std::size_t>(r)) % good.size();
        t[j].push_back(timed_run(ctx, [&] { run(good[j]); }));
      }
    }
    double best = INFINITY;
    int winner = -1;
    trials_ms.assign(static_cast<std::size_t>(algo_count), -1.0);
    for (std::size_t j = 0; j < good.size(); ++j) {
      trials_ms[static_cast<std::size_t>(good[j])] = median(t[j]);
      if (median(t[j]) < best) {
        best = median(t[j]);
        winner = good[j];
      }
    }
    return winner;
  };
  std::function<void()> base, unfused;
  if (!good_algos.empty()) {
    row.baseline_algo = trial(good_algos, run_algo, algo_count, row.baseline_trials_ms);
    base = [&, algo = row.baseline_algo] { run_algo(algo); };
  }
  if (!good_unfused.empty()) {
    row.unfused_algo = trial(good_unfused, run_unfused, unfused_count, row.unfused_trials_ms);
    unfused = [&, algo = row.unfused_algo] { run_unfused(algo); };
  }
  for (const std::string& problem : {base_problem, unfused_problem}) {
    if (problem.empty()) continue;
    if (row.status == "ok") row.status = "error";
    row.error = row.error.empty() ? problem : row.error + "; " + problem;
  }

  // The timed sides: tmagemm, the cuBLASLt baseline, and for addmm rows the unfused pair (both of its launches
  // between the events).
  struct Side {
    std::function<void()> fn;
    std::vector<float> t;
    double sum = 0;
  };
  std::vector<Side> sides = {{ours, {}, 0}, {base, {}, 0}};
  if (row.unfused) sides.push_back({unfused, {}, 0});
  if (std::none_of(sides.begin(), sides.end(), [](const Side& s) { return static_cast<bool>(s.fn); })) return;

  // Warm-up, then interleaved timing (rotating which side goes first: with two sides, alternating).
  for (int w = 0; w < kWarmupRuns; ++w)
    for (Side& side : sides)
      if (side.fn) side.fn();
  cuda_check(cudaStreamSynchronize(ctx.stream), "warm-up (synchronize)");
  if (ctx.sustained) {
    // Blocks in the order A B B A (for a third side, A B C C B A): a drift of the card over the blocks weighs on
    // every side alike. Each side's time: the mean of its blocks.
    std::vector<double> est(sides.size(), 0), sum(sides.size(), 0);
    for (std::size_t q = 0; q < sides.size(); ++q)
      if (sides[q].fn) {
        std::vector<float> t;
        for (int r = 0; r < 3; ++r) t.push_back(timed_run(ctx, sides[q].fn));
        est[q] = median(t);
      }
    std::vector<std::size_t> order;
    for (std::size_t q = 0; q < sides.size(); ++q) order.push_back(q);
    for (std::size_t q = sides.size(); q-- > 0;) order.push_back(q);
    for (std::size_t q : order) {
      if (!sides[q].fn) continue;
      // runtime/sustained.hpp: the block's first half lets the clock settle to this side's power.
      const runtime::SustainedTime t =
          runtime::time_sustained(ctx.stream, sides[q].fn, est[q], kSustainedBlockMs / 1e3, kSustainedBatchMs, 100000);
      sum[q] += t.ms_per_run;
      if (q == 0) row.runs += t.runs;
    }
    if (sides[0].fn) row.ours_ms = sum[0] / 2;
    if (sides[1].fn) row.base_ms = sum[1] / 2;
    if (row.unfused && sides[2].fn) row.unfused_ms = sum[2] / 2;
    return;
  }
  if (ctx.interleave) {
    for (int r = 0; r < kMaxRuns; ++r) {
      const bool enough_runs = r >= ctx.reps;
      const bool enough_time =
          std::all_of(sides.begin(), sides.end(), [](const Side& s) { return !s.fn || s.sum >= kMinTimedMs; });
      if (enough_runs && enough_time) break;
      for (std::size_t q = 0; q < sides.size(); ++q) {
        Side& side = sides[(q + static_cast<std::size_t>(r)) % sides.size()];
        if (side.fn) side.sum += side.t.emplace_back(timed_run(ctx, side.fn));
      }
      row.runs = r + 1;
    }
  } else {
    for (Side& side : sides) {
      int r = 0;
      for (; side.fn && r < kMaxRuns && (r < ctx.reps || side.sum < kMinTimedMs); ++r)
        side.sum += side.t.emplace_back(timed_run(ctx, side.fn));
      row.runs = std::max(row.runs, r);
    }
  }
  if (sides[0].fn) row.ours_ms = median(sides[0].t);
  if (sides[1].fn) row.base_ms = median(sides[1].t);
  if (row.unfused && sides[2].fn) row.unfused_ms = median(sides[2].t);
}

// sum_k A(i, k) B(k, j) in fp64 over host copies of 16-bit operands; a_at(k) and b_at(k) are the elements' indices.
template <class AAt, class BAt>
double dot16(DType dtype, const std::vector<std::uint16_t>& ha, const std::vector<std::uint16_t>& hb, int64_t K,
             AAt a_at, BAt b_at) {
  double acc = 0;
  for (int64_t kk = 0; kk < K; ++kk)
    acc += static_cast<double>(from_16bit(dtype, ha[static_cast<std::size_t>(a_at(kk))])) *
           from_16bit(dtype, hb[static_cast<std::size_t>(b_at(kk))]);
  return acc;
}

// The output elements a row checks on the CPU, as (row, column) of a row-major output seen as batch * M rows of N
// (row b * M + i is row i of matrix b; mm rows have batch 1): the four corners of the first and of the last matrix,
// then random elements, sample s in matrix s % batch (so that the samples cover every matrix, up to 248 of them).
// Fixed seed per shape.
std::vector<std::pair<int64_t, int64_t>> output_samples(int64_t batch, int64_t M, int64_t N, int64_t K) {
  std::vector<std::pair<int64_t, int64_t>> samples;
  const std::vector<int64_t> ends = batch > 1 ? std::vector<int64_t>{0, batch - 1} : std::vector<int64_t>{0};
  for (int64_t b : ends)
    for (auto [i, j] : {std::pair<int64_t, int64_t>{0, 0}, {M - 1, N - 1}, {M - 1, 0}, {0, N - 1}})
      samples.emplace_back(b * M + i, j);
  std::mt19937_64 rng(static_cast<std::uint64_t>(M * 1000003 + N * 1009 + K));
  std::uniform_int_distribution<int64_t> ri(0, M - 1), rj(0, N - 1);
  while (samples.size() < static_cast<std::size_t>(kReferenceSamples)) {
    const int64_t b = static_cast<int64_t>(samples.size()) % batch;
    samples.emplace_back(ri(rng), rj(rng));  // (i, j) of matrix b
    samples.back().first += b * M;
  }
  return samples;
}

// A (rows x cols) operand at `data`, row- or column-major with leading dimension `ld`. `batched` (bmm rows): a
// rank-3 view of `batch` such matrices one after another (batch stride: the matrix's size, (rows or cols) * ld).
TensorView operand_view(void* data, DType dtype, bool batched, int64_t batch, int64_t rows, int64_t cols,
                        bool col_major, int64_t ld, int device) {
  const int64_t row_stride = col_major ? 1 : ld, col_stride = col_major ? ld : 1;
  if (!batched) return TensorView::strided(data, dtype, {rows, cols}, {row_stride, col_stride}, device);
  return TensorView::strided(data, dtype, {batch, rows, cols}, {(col_major ? cols : rows) * ld, row_stride, col_stride},
                             device);
}

// The misaligned suite's reference point: tmagemm on the same M x N x K with every operand 16-byte aligned (leading
// dimensions rounded up to 8 elements, bases 256-byte aligned), tuned like the row, its result checked against the
// CPU reference on sampled elements, then timed interleaved with the row's own tmagemm call (`misaligned`) after the
// two ran back to back for kHeatMs: L2 flushed before each run, the row's run count of each, vs_aligned the ratio of
// the two medians. (Timed alone after the CPU checks, the twin ran on a card that had recovered its top clock:
// 4096x14336x4096 read 797-801 TFLOP/s, against ~700-735 for the same kernel in any interleaved row; 2026-12-04.)
void bench_aligned_twin(Context& ctx, Row& row, DType dtype, const Layout& layout,
                        const std::function<void()>& misaligned) {
  row.aligned = true;
  const int64_t M = row.m, N = row.n, K = row.k;
  const int64_t lda = layout.a_col ? (M + 7) / 8 * 8 : (K + 7) / 8 * 8;
  const int64_t ldb = layout.b_col ? (K + 7) / 8 * 8 : (N + 7) / 8 * 8, ldc = (N + 7) / 8 * 8;
  const std::size_t es = itemsize(dtype);
  std::vector<std::uint16_t> ha(static_cast<std::size_t>(layout.a_col ? K * lda : M * lda)),
      hb(static_cast<std::size_t>(layout.b_col ? N * ldb : K * ldb));
  fill_cycled(ha, ctx.pool, 0);
  fill_cycled(hb, ctx.pool, kPoolSize / 2);
  DeviceBuffer da(ha.size() * es), db(hb.size() * es), dc(static_cast<std::size_t>(M * ldc) * es);
  cuda_check(cudaMemcpy(da.get(), ha.data(), da.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(aligned A)");
  cuda_check(cudaMemcpy(db.get(), hb.data(), db.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(aligned B)");
  cuda_check(cudaMemset(dc.get(), 0xff, dc.bytes()), "cudaMemset(aligned out)");
  const TensorView a = layout.a_col ? TensorView::strided(da.get(), dtype, {M, K}, {1, lda}, ctx.device)
                                    : TensorView::strided(da.get(), dtype, {M, K}, {lda, 1}, ctx.device);
  const TensorView b = layout.b_col ? TensorView::strided(db.get(), dtype, {K, N}, {1, ldb}, ctx.device)
                                    : TensorView::strided(db.get(), dtype, {K, N}, {ldb, 1}, ctx.device);
  const TensorView out = TensorView::strided(dc.get(), dtype, {M, N}, {ldc, 1}, ctx.device);
  const auto ours = [&] { tmagemm::mm(a, b, out, ctx.options); };
  try {
    ours();
    cuda_check(cudaStreamSynchronize(ctx.stream), "tmagemm::mm (aligned twin)");
    for (const ChoiceReport& c : tmagemm::explain_mm(a, b, out, ctx.options).choices)
      if (c.selected) row.aligned_choice = c.name;
  } catch (const std::exception& e) {
    row.error += std::string(row.error.empty() ? "" : "; ") + "aligned twin: " + e.what();
    return;
  }
  std::vector<std::uint16_t> hc(static_cast<std::size_t>(M * ldc));
  cuda_check(cudaMemcpy(hc.data(), dc.get(), dc.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy(aligned out)");
  std::mt19937_64 rng(static_cast<std::uint64_t>(M * 7 + N * 11 + K));
  std::uniform_int_distribution<int64_t> ri(0, M - 1), rj(0, N - 1);
  std::vector<double> got, ref;
  for (int s = 0; s < kReferenceSamples; ++s) {
    const int64_t i = ri(rng), j = rj(rng);
    ref.push_back(dot16(
        dtype, ha, hb, K, [&](int64_t kk) { return layout.a_col ? i + kk * lda : i * lda + kk; },
        [&](int64_t kk) { return layout.b_col ? kk + j * ldb : kk * ldb + j; }));
    got.push_back(from_16bit(dtype, hc[static_cast<std::size_t>(i * ldc + j)]));
  }
  if (const double e = rel_frobenius(got, ref); !(e <= kTolerance)) {
    row.error += fmt::format("{}aligned twin: wrong result (rel err {:.3g})", row.error.empty() ? "" : "; ", e);
    return;
  }
  for (int w = 0; w < kWarmupRuns; ++w) ours();
  heat(ctx, {misaligned, ours});
  std::vector<float> t, t_mis;
  for (int r = 0; r < std::max(row.runs, ctx.reps); ++r) {
    t_mis.push_back(timed_run(ctx, misaligned));
    t.push_back(timed_run(ctx, ours));
  }
  row.aligned_ms = median(t);
  row.misaligned_paired_ms = median(t_mis);
}

// Benchmarks one mm, addmm or bmm row. Throws only for failures that leave nothing to record (e.g. out of memory).
// A bmm row is `batch` products: each operand (and out) is that many matrices one after another, with no padding.
Row bench_mm(Context& ctx, const Suite& suite, const BenchShape& shape, DType dtype) {
  Row row = row_for(suite, shape, dtype);
  const bool is_addmm = suite.op == "addmm", is_bmm = suite.op == "bmm";
  const RowEpilogue epi = is_addmm ? parse_epilogue(row.epilogue) : RowEpilogue{};
  if (row.unfused && !epi.bias) throw std::invalid_argument("the unfused pair needs an epilogue with a bias");
  if (!is_bmm && shape.batch != 1) throw std::invalid_argument("only bmm rows have a batch");
  if (is_bmm && (shape.batch < 1 || shape.a_pad || shape.a_offset || shape.b_pad || shape.out_pad || row.unfused ||
                 suite.report_aligned))
    throw std::invalid_argument("bmm rows take batch >= 1 dense operands, without an unfused pair or aligned twin");
  row.itemsize = itemsize(dtype);
  row.flush = ctx.sustained ? "none" : ctx.flush_read ? "read" : "write";
  row.back_to_back = ctx.back_to_back;
  row.sustained = ctx.sustained;
  row.m_buckets = ctx.options.m_buckets;
  const Layout layout = parse_layout(shape.layout);
  const int64_t M = shape.m, N = shape.n, K = shape.k, batch = shape.batch;
  const std::size_t es = itemsize(dtype);

  // Inputs: random normal values on the host, copied to the device. A may be a column slice of a wider
  // row-major buffer (lda = K + a_pad, base a_offset elements in): the misaligned suite.
  if (shape.a_pad < 0 || shape.a_offset < 0 || shape.a_offset > shape.a_pad ||
      ((shape.a_pad != 0 || shape.a_offset != 0) && layout.a_col))
    throw std::invalid_argument("a sliced A must be row-major and fit in its buffer (0 <= a_offset <= a_pad)");
  const int64_t lda = layout.a_col ? M : K + shape.a_pad;
  // B (row-major only) and out may have padded rows: ld N + b_pad, N + out_pad.
  if (shape.b_pad < 0 || shape.out_pad < 0 || (shape.b_pad != 0 && layout.b_col))
    throw std::invalid_argument("a padded B must be row-major (0 <= b_pad), and 0 <= out_pad");
  const int64_t ldb = layout.b_col ? K : N + shape.b_pad, ldc = N + shape.out_pad;
  // The size of one matrix of each operand, which is also its batch stride (bmm rows; batch 1 otherwise).
  const int64_t a_stride = (layout.a_col ? K : M) * lda, b_stride = (layout.b_col ? N : K) * ldb, c_stride = M * ldc;
  std::vector<std::uint16_t> ha(static_cast<std::size_t>(batch * a_stride)),
      hb(static_cast<std::size_t>(batch * b_stride));
  fill_cycled(ha, ctx.pool, 0);
  fill_cycled(hb, ctx.pool, kPoolSize / 2);
  DeviceBuffer da(ha.size() * es), db(hb.size() * es);
  DeviceBuffer dc_ours(static_cast<std::size_t>(batch * c_stride) * es),
      dc_base(static_cast<std::size_t>(batch * c_stride) * es);
  cuda_check(cudaMemcpy(da.get(), ha.data(), da.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(A)");
  cuda_check(cudaMemcpy(db.get(), hb.data(), db.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(B)");
  // addmm: bias (N) random normal like the inputs, in the output dtype; the unfused pair writes its own output.
  std::vector<std::uint16_t> hbias(static_cast<std::size_t>(epi.bias ? N : 0));
  fill_cycled(hbias, ctx.pool, kPoolSize / 3);
  DeviceBuffer dbias(hbias.size() * es), dc_unfused(row.unfused ? static_cast<std::size_t>(M * N) * es : 0);
  if (!hbias.empty())
    cuda_check(cudaMemcpy(dbias.get(), hbias.data(), dbias.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(bias)");
  // NaN in both 16-bit types: an output element the kernel did not write cannot pass the check.
  cuda_check(cudaMemset(dc_ours.get(), 0xff, dc_ours.bytes()), "cudaMemset(out)");
  cuda_check(cudaMemset(dc_base.get(), 0xff, dc_base.bytes()), "cudaMemset(out)");
  if (row.unfused) cuda_check(cudaMemset(dc_unfused.get(), 0xff, dc_unfused.bytes()), "cudaMemset(out)");

  void* a_base = static_cast<char*>(da.get()) + shape.a_offset * static_cast<int64_t>(es);
  const TensorView a = operand_view(a_base, dtype, is_bmm, batch, M, K, layout.a_col, lda, ctx.device);
  const TensorView b = operand_view(db.get(), dtype, is_bmm, batch, K, N, layout.b_col, ldb, ctx.device);
  const TensorView out = operand_view(dc_ours.get(), dtype, is_bmm, batch, M, N, false, ldc, ctx.device);
  // addmm: bias (N) passed as a 1xN view; beta = alpha = 1.
  const TensorView bias = TensorView::contiguous(dbias.get(), dtype, {1, N}, ctx.device);

  // tmagemm: the first call also tunes (when TMAGEMM_TUNING=benchmark); then ask which choice it runs.
  std::function<void()> ours = [&] {
    if (is_addmm)
      tmagemm::addmm(bias, a, b, out, 1.0f, 1.0f, epi.act, ctx.options);
    else if (is_bmm)
      tmagemm::bmm(a, b, out, ctx.options);
    else
      tmagemm::mm(a, b, out, ctx.options);
  };
  first_call(ctx, row, ours, "tmagemm::" + suite.op, [&] {
    return is_addmm ? tmagemm::explain_addmm(bias, a, b, out, 1.0f, 1.0f, epi.act, ctx.options)
           : is_bmm ? tmagemm::explain_bmm(a, b, out, ctx.options)
                    : tmagemm::explain_mm(a, b, out, ctx.options);
  });

  // cuBLASLt: its top heuristic algorithms, each run once (one that fails is left out). The best of them is
  // chosen further down by a timed trial on a hot card; each is checked against the CPU reference first.
  // addmm: with cuBLASLt's own fused epilogue (BIAS, GELU_BIAS, RELU_BIAS). bmm: strided-batched, the same batch
  // strides as tmagemm's views (batch 1: one matmul).
  std::unique_ptr<CublasLtMatmul> lt;
  std::vector<int> algos;
  std::string base_problem;
  try {
    lt = std::make_unique<CublasLtMatmul>(dtype, M, N, K, layout, ctx.workspace.get(), ctx.workspace.bytes(),
                                          kBaselineAlgos, lda, a_base, db.get(), dc_base.get(),
                                          epi.bias ? dbias.get() : nullptr, epi.act, nullptr, ldb, ldc,
                                          StridedBatch{batch, a_stride, b_stride, c_stride});
    algos = runnable_algos(ctx, lt->algo_count(),
                           [&](int i) { lt->run(i, a_base, db.get(), dc_base.get(), ctx.stream); });
  } catch (const std::exception& e) {
    algos.clear();
    base_problem = std::string("cuBLASLt: ") + e.what();
  }
  auto run_algo = [&](int i) { lt->run(i, a_base, db.get(), dc_base.get(), ctx.stream); };

  // The unfused pair (addmm rows): the same cuBLASLt mm without an epilogue (its top heuristic algorithms, the best
  // chosen by the same kind of trial), then the elementwise bias + activation kernel in place; one unit.
  std::unique_ptr<CublasLtMatmul> lt_mm;
  std::vector<int> unfused_algos;
  std::string unfused_problem;
  CUfunction bias_act = nullptr;
  const int vec = N % 8 == 0 ? 8 : N % 2 == 0 ? 2 : 1;
  if (row.unfused) {
    try {
      bias_act = jit::load(bias_act_spec(dtype, epi.act, vec), ctx.device, 0);
      lt_mm = std::make_unique<CublasLtMatmul>(dtype, M, N, K, layout, ctx.workspace.get(), ctx.workspace.bytes(),
                                               kBaselineAlgos, lda, a_base, db.get(), dc_unfused.get());
      unfused_algos = runnable_algos(ctx, lt_mm->algo_count(),
                                     [&](int i) { lt_mm->run(i, a_base, db.get(), dc_unfused.get(), ctx.stream); });
    } catch (const std::exception& e) {
      unfused_algos.clear();
      unfused_problem = std::string("unfused pair: ") + e.what();
    }
  }
  auto run_unfused = [&](int i) {
    lt_mm->run(i, a_base, db.get(), dc_unfused.get(), ctx.stream);
    launch_bias_act(ctx, bias_act, vec, dc_unfused.get(), dbias.get(), M, N);
  };

  // Correctness first. Each cuBLASLt algorithm against a CPU fp32/fp64 reference on sampled elements (one that
  // disagrees is left out); tmagemm against the first good algorithm's whole output (or against the CPU samples
  // when there is no baseline). bmm rows: the samples are spread over the matrices (output_samples); out is then
  // batch * M rows of ldc.
  const std::vector<std::pair<int64_t, int64_t>> samples = output_samples(batch, M, N, K);
  std::vector<double> ref;
  for (auto [r, j] : samples) {
    const int64_t mat = r / M, i = r % M;  // row i of matrix `mat`
    double acc = dot16(
        dtype, ha, hb, K,
        [&](int64_t kk) { return mat * a_stride + (layout.a_col ? i + kk * M : i * lda + shape.a_offset + kk); },
        [&](int64_t kk) { return mat * b_stride + (layout.b_col ? kk + j * K : kk * ldb + j); });
    if (epi.bias) acc += from_16bit(dtype, hbias[static_cast<std::size_t>(j)]);
    ref.push_back(activate(epi.act, acc));
  }
  const Sampler sampled = sampler_of(samples, dtype, ldc);
  std::vector<std::uint16_t> h_base, h_algo(static_cast<std::size_t>(batch * c_stride));
  const std::vector<int> good_algos =
      checked_algos(ctx, algos, run_algo, dc_base, sampled, ref, h_algo, &h_base, base_problem, "");
  const std::vector<int> good_unfused = checked_algos(ctx, unfused_algos, run_unfused, dc_unfused, sampled, ref, h_algo,
                                                     nullptr, unfused_problem, "unfused pair: ");
  if (ours && !check_ours(row, dtype, dc_ours, h_base, sampled, ref, N, ldc)) return row;  // wrong: a failure

  measure(ctx, row, ours, good_algos, run_algo, lt ? lt->algo_count() : 0, base_problem, good_unfused, run_unfused,
          lt_mm ? lt_mm->algo_count() : 0, unfused_problem);
  if (suite.report_aligned && ours && !is_addmm) bench_aligned_twin(ctx, row, dtype, layout, ours);
  return row;
}

// Benchmarks one grouped_mm row: a (total M, K) row-major, b (G, K, N) with each expert's matrix row-major ("rr") or
// column-major ("rc"), offs the cumulative ends of the shape's group_rows (int32 on the device), out (total M, N).
// Baseline: GroupedBaseline's algorithms (cublasGemmGroupedBatchedEx, one cuBLASLt call per group), the fastest
// that is right. Experts' weights are filled expert by expert from one host buffer.
Row bench_grouped(Context& ctx, const Suite& suite, const BenchShape& shape, DType dtype) {
  Row row = row_for(suite, shape, dtype);
  row.itemsize = itemsize(dtype);
  row.flush = ctx.sustained ? "none" : ctx.flush_read ? "read" : "write";
  row.back_to_back = ctx.back_to_back;
  row.sustained = ctx.sustained;
  row.m_buckets = ctx.options.m_buckets;
  const Layout layout = parse_layout(shape.layout);
  const int64_t G = shape.batch, M = shape.m, N = shape.n, K = shape.k;
  if (layout.a_col || G < 1 || static_cast<int64_t>(shape.group_rows.size()) != G)
    throw std::invalid_argument("grouped rows take a row-major a and one row count per expert");
  std::vector<int64_t> ends;
  std::vector<int32_t> offs;
  for (int64_t r : shape.group_rows) {
    ends.push_back((ends.empty() ? 0 : ends.back()) + r);
    offs.push_back(static_cast<int32_t>(ends.back()));
  }
  if (ends.back() != M) throw std::invalid_argument("grouped row counts must add up to M");
  const std::size_t es = itemsize(dtype);
  std::vector<std::uint16_t> ha(static_cast<std::size_t>(M * K)), hb(static_cast<std::size_t>(G * K * N));
  fill_cycled(ha, ctx.pool, 0);
  fill_cycled(hb, ctx.pool, kPoolSize / 2);
  DeviceBuffer da(ha.size() * es), db(hb.size() * es), doffs(offs.size() * sizeof(int32_t));
  DeviceBuffer dc_ours(static_cast<std::size_t>(M * N) * es), dc_base(static_cast<std::size_t>(M * N) * es);
  cuda_check(cudaMemcpy(da.get(), ha.data(), da.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(A)");
  cuda_check(cudaMemcpy(db.get(), hb.data(), db.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(B)");
  cuda_check(cudaMemcpy(doffs.get(), offs.data(), doffs.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(offs)");
  cuda_check(cudaMemset(dc_ours.get(), 0xff, dc_ours.bytes()), "cudaMemset(out)");
  cuda_check(cudaMemset(dc_base.get(), 0xff, dc_base.bytes()), "cudaMemset(out)");

  const TensorView a = TensorView::contiguous(da.get(), dtype, {M, K}, ctx.device);
  const TensorView b = layout.b_col ? TensorView::strided(db.get(), dtype, {G, K, N}, {K * N, 1, K}, ctx.device)
                                    : TensorView::strided(db.get(), dtype, {G, K, N}, {K * N, N, 1}, ctx.device);
  const TensorView offs_view = TensorView::contiguous(doffs.get(), DType::i32, {G}, ctx.device);
  const TensorView out = TensorView::contiguous(dc_ours.get(), dtype, {M, N}, ctx.device);
  std::function<void()> ours = [&] { tmagemm::grouped_mm(a, b, offs_view, out, ctx.options); };
  first_call(ctx, row, ours, "tmagemm::grouped_mm",
             [&] { return tmagemm::explain_grouped_mm(a, b, offs_view, out, ctx.options); });

  std::unique_ptr<GroupedBaseline> base;
  std::vector<int> algos;
  std::string base_problem;
  try {
    base = std::make_unique<GroupedBaseline>(dtype, N, K, layout, shape.group_rows, da.get(), db.get(), dc_base.get(),
                                             ctx.workspace.get(), ctx.workspace.bytes(), kBaselineAlgos);
    algos = runnable_algos(ctx, base->algo_count(), [&](int i) { base->run(i, ctx.stream); });
  } catch (const std::exception& e) {
    algos.clear();
    base_problem = std::string("cuBLAS: ") + e.what();
  }
  auto run_algo = [&](int i) { base->run(i, ctx.stream); };

  // The CPU reference on sampled output elements, each in its row's group.
  const std::vector<std::pair<int64_t, int64_t>> samples = output_samples(1, M, N, K);
  std::vector<double> ref;
  for (auto [i, j] : samples) {
    const int64_t g = std::upper_bound(ends.begin(), ends.end(), i) - ends.begin();
    ref.push_back(dot16(
        dtype, ha, hb, K, [&](int64_t kk) { return i * K + kk; },
        [&](int64_t kk) { return g * K * N + (layout.b_col ? j * K + kk : kk * N + j); }));
  }
  const Sampler sampled = sampler_of(samples, dtype, N);
  std::vector<std::uint16_t> h_base, h_algo(static_cast<std::size_t>(M * N));
  const std::vector<int> good_algos =
      checked_algos(ctx, algos, run_algo, dc_base, sampled, ref, h_algo, &h_base, base_problem, "");
  if (ours && !check_ours(row, dtype, dc_ours, h_base, sampled, ref)) return row;
  measure(ctx, row, ours, good_algos, run_algo, base ? base->algo_count() : 0, base_problem);
  if (base && row.baseline_algo >= 0) row.baseline_name = base->algo_name(row.baseline_algo);
  return row;
}

// fp8 byte -> float, exactly (e4m3: bias 7, 0x7f / 0xff NaN, no infinities; e5m2: bias 15, IEEE-like).
float fp8_to_float(std::uint8_t v, DType t) {
  const bool e4 = t == DType::e4m3;
  const int mbits = e4 ? 3 : 2, bias = e4 ? 7 : 15;
  const int e = (v & 0x7f) >> mbits, m = v & ((1 << mbits) - 1);
  if ((e4 && e == 15 && m == 7) || (!e4 && e == 31)) return NAN;
  const float f = e == 0 ? std::ldexp(static_cast<float>(m), 1 - bias - mbits)
                         : std::ldexp(static_cast<float>((1 << mbits) + m), e - bias - mbits);
  return (v & 0x80) ? -f : f;
}

// Fixed-seed normal values rounded to the nearest finite fp8 value of `t`, never zero: scaled_mm's inputs are filled
// by cycling through them.
std::vector<std::uint8_t> make_fp8_pool(DType t) {
  std::vector<std::pair<float, std::uint8_t>> grid;  // finite non-zero values, sorted
  for (int v = 0; v < 256; ++v) {
    const float f = fp8_to_float(static_cast<std::uint8_t>(v), t);
    if (std::isfinite(f) && f != 0.0f) grid.push_back({f, static_cast<std::uint8_t>(v)});
  }
  std::sort(grid.begin(), grid.end());
  std::mt19937_64 rng(20261201);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::uint8_t> pool(kPoolSize);
  for (auto& v : pool) {
    const float x = normal(rng);
    auto it = std::lower_bound(grid.begin(), grid.end(), std::make_pair(x, std::uint8_t{0}));
    if (it == grid.end()) --it;
    if (it != grid.begin() && x - (it - 1)->first < it->first - x) --it;
    v = it->second;
  }
  return pool;
}

// Benchmarks one scaled_mm row (fp8 suite): e4m3 A (M,K) row-major and B (K,N) column-major, bf16 out, scales
// tensorwise (one value each) or rowwise (M and N values), fast or two-level accumulation as the epilogue names
// ("tensorwise+fast", "rowwise", ...; "+bias" adds a bf16 bias (N)). Baseline: cuBLASLt's FP8 matmul with the same
// scale mode and accumulation, best of its top heuristic algorithms.
Row bench_scaled_mm(Context& ctx, const Suite& suite, const BenchShape& shape) {
  const DType in = DType::e4m3, out_t = DType::bf16;
  Row row = row_for(suite, shape, in);
  row.itemsize = 1;
  row.out_itemsize = itemsize(out_t);
  row.flush = ctx.sustained ? "none" : ctx.flush_read ? "read" : "write";
  row.back_to_back = ctx.back_to_back;
  row.sustained = ctx.sustained;
  row.m_buckets = ctx.options.m_buckets;
  const bool rowwise = row.epilogue.find("rowwise") != std::string::npos;
  const bool fast = row.epilogue.find("+fast") != std::string::npos;
  const bool with_bias = row.epilogue.find("+bias") != std::string::npos;
  if (shape.layout != "rc") throw std::invalid_argument("scaled_mm rows take A row-major and B column-major (rc)");
  const int64_t M = shape.m, N = shape.n, K = shape.k;
  static const std::vector<std::uint8_t> pool = make_fp8_pool(in);
  auto fill = [&](std::vector<std::uint8_t>& dst, std::size_t offset) {
    for (std::size_t done = 0; done < dst.size();) {
      offset %= pool.size();
      const std::size_t n = std::min(dst.size() - done, pool.size() - offset);
      std::memcpy(dst.data() + done, pool.data() + offset, n);
      done += n;
      offset += n;
    }
  };
  std::vector<std::uint8_t> ha(static_cast<std::size_t>(M * K)), hb(static_cast<std::size_t>(N * K));  // B as N x K
  fill(ha, 0);
  fill(hb, kPoolSize / 2);
  std::mt19937 srng(static_cast<std::uint32_t>(M * 31 + N * 7 + K));
  std::uniform_real_distribution<float> scale_dist(0.5f, 2.0f);
  std::vector<float> hsa(static_cast<std::size_t>(rowwise ? M : 1)), hsb(static_cast<std::size_t>(rowwise ? N : 1));
  for (auto& v : hsa) v = scale_dist(srng);
  for (auto& v : hsb) v = scale_dist(srng);
  std::vector<std::uint16_t> hbias(static_cast<std::size_t>(with_bias ? N : 0));
  for (auto& v : hbias) v = float_to_16bit(out_t, scale_dist(srng) - 1.25f);
  DeviceBuffer da(ha.size()), db(hb.size()), dsa(hsa.size() * 4), dsb(hsb.size() * 4), dbias(hbias.size() * 2);
  DeviceBuffer dc_ours(static_cast<std::size_t>(M * N) * 2), dc_base(static_cast<std::size_t>(M * N) * 2);
  cuda_check(cudaMemcpy(da.get(), ha.data(), da.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(A)");
  cuda_check(cudaMemcpy(db.get(), hb.data(), db.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(B)");
  cuda_check(cudaMemcpy(dsa.get(), hsa.data(), dsa.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(scale_a)");
  cuda_check(cudaMemcpy(dsb.get(), hsb.data(), dsb.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(scale_b)");
  if (with_bias)
    cuda_check(cudaMemcpy(dbias.get(), hbias.data(), dbias.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy(bias)");
  cuda_check(cudaMemset(dc_ours.get(), 0xff, dc_ours.bytes()), "cudaMemset(out)");  // NaN: unwritten fails the check
  cuda_check(cudaMemset(dc_base.get(), 0xff, dc_base.bytes()), "cudaMemset(out)");

  const TensorView a = TensorView::contiguous(da.get(), in, {M, K}, ctx.device);
  const TensorView b = TensorView::contiguous(db.get(), in, {N, K}, ctx.device).t();
  const TensorView sa = TensorView::contiguous(dsa.get(), DType::f32, {rowwise ? M : 1, 1}, ctx.device);
  const TensorView sb = TensorView::contiguous(dsb.get(), DType::f32, {1, rowwise ? N : 1}, ctx.device);
  const TensorView bias = TensorView::contiguous(dbias.get(), out_t, {1, N}, ctx.device);
  const TensorView out = TensorView::contiguous(dc_ours.get(), out_t, {M, N}, ctx.device);
  const TensorView* bias_arg = with_bias ? &bias : nullptr;

  std::function<void()> ours = [&] { tmagemm::scaled_mm(a, b, sa, sb, bias_arg, out, fast, ctx.options); };
  first_call(ctx, row, ours, "tmagemm::scaled_mm",
             [&] { return tmagemm::explain_scaled_mm(a, b, sa, sb, bias_arg, out, fast, ctx.options); });

  std::unique_ptr<CublasLtMatmul> lt;
  std::vector<int> algos;
  std::string base_problem;
  Fp8Baseline spec;
  spec.a = spec.b = in;
  spec.out = spec.bias_dtype = out_t;
  spec.scale_a = static_cast<const float*>(dsa.get());
  spec.scale_b = static_cast<const float*>(dsb.get());
  spec.rowwise = rowwise;
  spec.fast_accum = fast;
  try {
    lt = std::make_unique<CublasLtMatmul>(in, M, N, K, parse_layout("rc"), ctx.workspace.get(),
                                          ctx.workspace.bytes(), kBaselineAlgos, 0, da.get(), db.get(),
                                          dc_base.get(), with_bias ? dbias.get() : nullptr, Activation::none, &spec);
    algos = runnable_algos(ctx, lt->algo_count(),
                           [&](int i) { lt->run(i, da.get(), db.get(), dc_base.get(), ctx.stream); });
  } catch (const std::exception& e) {
    algos.clear();
    base_problem = std::string("cuBLASLt FP8: ") + e.what();
  }
  auto run_algo = [&](int i) { lt->run(i, da.get(), db.get(), dc_base.get(), ctx.stream); };

  // Correctness: each algorithm against the CPU reference on sampled elements (fp64 over the decoded fp8 values, then
  // the scales and the bias); tmagemm against the first good algorithm's whole output (or the samples).
  const std::vector<std::pair<int64_t, int64_t>> samples = output_samples(1, M, N, K);
  std::vector<double> ref;
  for (auto [i, j] : samples) {
    double acc = 0;
    for (int64_t kk = 0; kk < K; ++kk)
      acc += static_cast<double>(fp8_to_float(ha[static_cast<std::size_t>(i * K + kk)], in)) *
             fp8_to_float(hb[static_cast<std::size_t>(j * K + kk)], in);
    acc *= static_cast<double>(hsa[rowwise ? i : 0]) * hsb[rowwise ? j : 0];
    if (with_bias) acc += from_16bit(out_t, hbias[static_cast<std::size_t>(j)]);
    ref.push_back(acc);
  }
  const Sampler sampled = sampler_of(samples, out_t, N);
  std::vector<std::uint16_t> h_base, h_algo(static_cast<std::size_t>(M * N));
  const std::vector<int> good_algos =
      checked_algos(ctx, algos, run_algo, dc_base, sampled, ref, h_algo, &h_base, base_problem, "");
  if (ours && !check_ours(row, out_t, dc_ours, h_base, sampled, ref)) return row;
  measure(ctx, row, ours, good_algos, run_algo, lt ? lt->algo_count() : 0, base_problem);
  return row;
}

// -------------------------------------------------------------------------------------------------------
// Output: table and JSON.

std::string num(std::optional<double> v, const char* f = "{:.1f}") {
  return v ? fmt::format(fmt::runtime(f), *v) : std::string("-");
}

void print_header(const Suite& suite) {
  fmt::print("{:<18} {:<6}", suite.op == "bmm"          ? "shape (BxMxNxK)"
                              : suite.op == "grouped_mm" ? "shape (GxMxNxK)"
                                                         : "shape (MxNxK)",
             "layout");
  if (per_row_epilogues(suite)) fmt::print(" {:<15}", "epilogue");
  fmt::print(" {:>10} {:>10} {:>7}", "tmagemm", "cuBLASLt", "ratio");
  if (suite.report_unfused) fmt::print(" {:>10} {:>7}", "unfused", "ratio_u");
  if (suite.report_bandwidth) fmt::print(" {:>8} {:>8}", "tm TB/s", "cu TB/s");
  if (suite.report_aligned) fmt::print(" {:>10} {:>7}", "aligned", "vs_al");
  fmt::print("  {:<9} {:<8} {}\n", "rel_err", "status", "choice");
  fmt::print("{:<18} {:<6}", "", "");
  if (per_row_epilogues(suite)) fmt::print(" {:<15}", "");
  fmt::print(" {:>10} {:>10} {:>7}", "TFLOP/s", "TFLOP/s", "");
  if (suite.report_unfused) fmt::print(" {:>10} {:>7}", "TFLOP/s", "");
  if (suite.report_bandwidth) fmt::print(" {:>8} {:>8}", "", "");
  if (suite.report_aligned) fmt::print(" {:>10} {:>7}", "TFLOP/s", "");
  fmt::print("\n");
}

void print_row(const Row& r) {
  const std::string shape =
      r.batch > 1 ? fmt::format("{}x{}x{}x{}", r.batch, r.m, r.n, r.k) : fmt::format("{}x{}x{}", r.m, r.n, r.k);
  fmt::print("{:<18} {:<6}", shape, r.layout);
  if (r.show_epilogue) fmt::print(" {:<15}", r.epilogue);
  fmt::print(" {:>10} {:>10} {:>7}", num(r.ours_tflops()), num(r.base_tflops()), num(r.ratio(), "{:.3f}"));
  if (r.unfused) fmt::print(" {:>10} {:>7}", num(r.unfused_tflops()), num(r.ratio_unfused(), "{:.3f}"));
  if (r.bandwidth) fmt::print(" {:>8} {:>8}", num(r.ours_tbps(), "{:.2f}"), num(r.base_tbps(), "{:.2f}"));
  if (r.aligned) fmt::print(" {:>10} {:>7}", num(r.aligned_tflops()), num(r.vs_aligned(), "{:.3f}"));
  fmt::print("  {:<9} {:<8} {}{}\n", num(r.rel_err, "{:.2e}"), r.status, r.status == "FAIL" ? "-" : r.choice,
             r.grouped && r.baseline_algo >= 0 ? " (vs " + r.baseline_name + ")" : "");
  if (!r.error.empty()) fmt::print("    {}: {}\n", r.status == "ok" ? "note" : r.status, short_message(r.error));
  std::fflush(stdout);
}

nlohmann::ordered_json to_json(const Row& r) {
  auto opt = [](std::optional<double> v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr); };
  nlohmann::ordered_json j = {
      {"op", r.op},
      {"dtype", r.dtype},
      {"layout", r.layout},
      {"batch", r.batch},
      {"M", r.m},
      {"N", r.n},
      {"K", r.k},
      {"epilogue", r.epilogue},
      {"note", r.note},
      {"tmagemm_tflops", opt(r.ours_tflops())},
      {"baseline_tflops", opt(r.base_tflops())},
      {"ratio", opt(r.ratio())},
      {"choice", r.status == "FAIL" ? std::string("?") : r.choice},
      {"rel_err", opt(r.rel_err)},
      {"status", r.status},
      {"error", r.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.error)},
      {"tmagemm_ms", opt(r.ours_ms)},
      {"baseline_ms", opt(r.base_ms)},
      {"baseline", r.baseline_name},
      {"baseline_algo", r.baseline_algo},
      {"baseline_trials_ms", r.baseline_trials_ms},
      {"runs", r.runs},
      {"l2_flush", r.flush},
      {"timing", r.sustained ? "sustained" : r.back_to_back ? "back_to_back" : "isolated"},
      {"tuning_m", r.m_buckets ? "bucket" : "exact"},
  };
  if (r.grouped) {
    j["group_rows"] = r.group_rows;
    j["routing"] = r.routing;
  }
  if (r.bandwidth) {
    j["tmagemm_tbps"] = opt(r.ours_tbps());
    j["baseline_tbps"] = opt(r.base_tbps());
  }
  if (r.aligned) {  // tmagemm on the same shape with aligned operands (misaligned suite)
    j["aligned_tflops"] = opt(r.aligned_tflops());
    j["vs_aligned"] = opt(r.vs_aligned());
    j["aligned_ms"] = opt(r.aligned_ms);
    j["misaligned_paired_ms"] = opt(r.misaligned_paired_ms);  // the row's call, interleaved with the twin
    j["aligned_choice"] = r.aligned_choice;
  }
  if (r.unfused) {  // the unfused pair: cuBLASLt mm (no epilogue), then the bias + activation kernel
    j["unfused_tflops"] = opt(r.unfused_tflops());
    j["ratio_unfused"] = opt(r.ratio_unfused());
    j["unfused_ms"] = opt(r.unfused_ms);
    j["unfused_algo"] = r.unfused_algo;
    j["unfused_trials_ms"] = r.unfused_trials_ms;
  }
  return j;
}

// -------------------------------------------------------------------------------------------------------

int run_bench(const BenchOptions& opt) {
  if (runtime::device_count() == 0) {
    fmt::print(stderr, "tmagemm bench: no CUDA device found; nothing to benchmark\n");
    return 1;
  }
  if (opt.device < 0 || opt.device >= runtime::device_count()) {
    fmt::print(stderr, "tmagemm bench: --device {} does not exist ({} CUDA devices)\n", opt.device,
               runtime::device_count());
    return 1;
  }
  const DType dtype = parse_dtype16(opt.dtype);
  std::vector<Suite> suites = expand_suite(opt.suite);
  for (Suite& s : suites)
    if (s.op == "grouped_mm")
      for (BenchShape& x : s.shapes) {
        x.group_rows = grouped_routing(opt.routing, x.batch, x.m);
        x.routing = opt.routing;
      }

  Context ctx;
  ctx.device = opt.device;
  ctx.reps = opt.reps;
  ctx.interleave = opt.interleave;
  ctx.options = Options();  // TMAGEMM_* environment variables apply (a malformed one throws: reported by main)
  cuda_check(cudaSetDevice(opt.device), "cudaSetDevice");
  const runtime::DeviceInfo& dev = runtime::device_info(opt.device);
  cuda_check(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  ctx.options.stream = ctx.stream;
  cuda_check(cudaEventCreate(&ctx.start), "cudaEventCreate");
  cuda_check(cudaEventCreate(&ctx.stop), "cudaEventCreate");
  ctx.flush = DeviceBuffer(kFlushBytes);
  ctx.workspace = DeviceBuffer(kWorkspaceBytes);
  if (opt.flush == "read") {
    cuda_check(cudaMemset(ctx.flush.get(), 0x5a, ctx.flush.bytes()), "cudaMemset(flush buffer)");
    ctx.flush_read = jit::load(jit::l2_flush_read_spec(), opt.device, 0);
  }
  ctx.pool_dtype = dtype;
  ctx.pool = make_pool(dtype);
  ctx.back_to_back = opt.back_to_back;
  ctx.sustained = opt.sustained;

  fmt::print("tmagemm {} bench on {} ({}, {} SMs), suite {}, dtype {}\n", tmagemm::version(), dev.name, dev.arch(),
             dev.sm_count, opt.suite, opt.dtype);
  fmt::print("median of >= {} runs and >= {:.0f} ms per side, L2 flushed ({} MiB {}) before each run, "
             "tmagemm and cuBLASLt (best of top-{} heuristic algorithms) {}\n",
             opt.reps, kMinTimedMs, kFlushBytes >> 20, opt.flush == "read" ? "read" : "written", kBaselineAlgos,
             opt.interleave ? "interleaved" : "one after the other (--no-interleave)");
  if (opt.back_to_back)
    fmt::print("each run timed back to back after the flush (events around both, less the flush's median)\n");
  if (opt.sustained)
    fmt::print("--sustained: instead, each side alone back to back without a flush in {:.0f} ms blocks (tmagemm, "
               "cuBLASLt, cuBLASLt, tmagemm), timed over each block's second half\n",
               kSustainedBlockMs);

  const std::string stem = slug(dev.name) + "-" + today();
  bool all_ok = true;
  bool context_broken = false;
  for (const Suite& suite : suites) {
    fmt::print("\n== suite {} ({}, {}) ==\n", suite.name, suite.op, suite.op == "scaled_mm" ? suite.dtype : opt.dtype);
    if (!suite.implemented) {
      fmt::print("skipped: {} is not implemented yet\n", suite.op);
      continue;
    }
    if (context_broken) {
      fmt::print("skipped: the CUDA context is unusable after an earlier error\n");
      all_ok = false;
      continue;
    }
    if (suite.report_unfused)
      fmt::print("bias (N) as 1xN, beta = alpha = 1; cuBLASLt with its fused epilogue (BIAS, GELU_BIAS = gelu_tanh, "
                 "RELU_BIAS); unfused = cuBLASLt mm (best of top-{}) + one bias/activation kernel, timed together\n",
                 kBaselineAlgos);
    if (suite.op == "grouped_mm")
      fmt::print("out rows of group g = a rows of group g @ b[g] (MoE routing, fixed seed{}); baseline: the faster of "
                 "cublasGemmGroupedBatchedEx and one cuBLASLt call per group (best of its top-{}); TB/s counts the "
                 "experts that have rows\n",
                 opt.routing == "moe" ? "" : ", each group's rows rounded: " + opt.routing, kBaselineAlgos);
    if (suite.op == "bmm")
      fmt::print("out(B,M,N) = a(B,M,K) @ b(B,K,N), each operand B dense matrices one after another (batch strides "
                 "M*K, K*N, M*N); cuBLASLt strided-batched (best of top-{})\n",
                 kBaselineAlgos);
    print_header(suite);
    std::vector<Row> rows;
    for (const BenchShape& shape : suite.shapes) {
      Row row;
      try {
        row = suite.op == "scaled_mm"    ? bench_scaled_mm(ctx, suite, shape)
              : suite.op == "grouped_mm" ? bench_grouped(ctx, suite, shape, dtype)
                                         : bench_mm(ctx, suite, shape, dtype);
      } catch (const std::exception& e) {
        row = row_for(suite, shape, dtype);
        row.status = "error";
        row.error = e.what();
        cudaGetLastError();
        if (cudaDeviceSynchronize() != cudaSuccess) context_broken = true;  // sticky error: stop here
      }
      print_row(row);
      if (row.status != "ok") all_ok = false;
      rows.push_back(std::move(row));
      if (context_broken) {
        fmt::print("stopping: the CUDA context is unusable after this error\n");
        break;
      }
    }

    // The geometric mean of a ratio over the rows that have it; suites with the unfused pair (per-row epilogues)
    // also name their lowest row.
    // `only` (when set) restricts it to the rows whose epilogue it accepts, named `subset` in the line.
    auto geomean_line = [&](const char* against, std::optional<double> (Row::*ratio)() const,
                            const std::function<bool(const Row&)>& only = {}, const std::string& subset = {}) {
      const bool per_row = per_row_epilogues(suite);
      const char* what = per_row ? "rows" : "shapes";
      double log_sum = 0;
      int counted = 0;
      std::size_t considered = 0;
      const Row* lowest = nullptr;
      for (const Row& r : rows) {
        if (only && !only(r)) continue;
        ++considered;
        if (auto q = (r.*ratio)()) {
          log_sum += std::log(*q);
          ++counted;
          if (!lowest || *q < *(lowest->*ratio)()) lowest = &r;
        }
      }
      const std::string name = subset.empty() ? suite.name : suite.name + ", " + subset;
      if (counted == 0) {
        fmt::print("geomean ratio tmagemm/{} ({}): - (no {} has both numbers)\n", against, name,
                   per_row ? "row" : "shape");
        return;
      }
      fmt::print("geomean ratio tmagemm/{} ({}): {:.3f} over {} of {} {}", against, name,
                 std::exp(log_sum / counted), counted, considered, what);
      if (per_row)
        fmt::print("; lowest {:.3f} ({}x{}x{} {} {})", *(lowest->*ratio)(), lowest->m, lowest->n, lowest->k,
                   lowest->layout, lowest->epilogue);
      fmt::print("\n");
    };
    geomean_line("cuBLASLt", &Row::ratio);
    if (opt.sustained)  // the rows a loop runs at the power cap; a smaller or memory-bound one reads L2-resident data
      geomean_line("cuBLASLt", &Row::ratio, [&](const Row& r) {
        return r.flops() >= kMemoryBoundIntensity * r.bytes() &&
               r.bytes() > tune::kSustainedFootprintL2 * static_cast<double>(dev.l2_bytes);
      }, "compute-bound rows larger than L2");
    if (suite.report_unfused) geomean_line("unfused", &Row::ratio_unfused);
    if (suite.report_aligned) geomean_line("aligned operands", &Row::vs_aligned);
    if (suite.op == "scaled_mm") {  // the targets are per accumulation mode
      const auto fast = [](const Row& r) { return r.epilogue.find("+fast") != std::string::npos; };
      geomean_line("cuBLASLt", &Row::ratio, fast, "fast accumulation");
      geomean_line("cuBLASLt", &Row::ratio, [&](const Row& r) { return !fast(r); }, "two-level accumulation");
      geomean_line("cuBLASLt", &Row::ratio, [](const Row& r) { return r.m <= 64; }, "decode rows");
    }
    if (suite.op == "grouped_mm")  // the MoE decode target
      geomean_line("cuBLAS", &Row::ratio, [](const Row& r) { return r.m <= 512; }, "MoE decode rows");

    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const Row& r : rows) j.push_back(to_json(r));
    try {
      std::filesystem::create_directories(opt.out);
      // One name per timing method and flush, so that runs of one suite into one --out keep each other's JSON.
      const std::string variant = opt.sustained ? "-sustained"
                                  : std::string(opt.back_to_back ? "-b2b" : "") + (opt.flush == "read" ? "-flush_read" : "");
      const std::filesystem::path path = std::filesystem::path(opt.out) / (stem + "-" + suite.name + variant + ".json");
      std::ofstream f(path);
      f << j.dump(2) << "\n";
      if (!f) throw std::runtime_error("write failed");
      fmt::print("wrote {}\n", path.string());
    } catch (const std::exception& e) {
      fmt::print(stderr, "tmagemm bench: cannot write results into {}: {}\n", opt.out, e.what());
      all_ok = false;
    }
  }

  cudaEventDestroy(ctx.start);
  cudaEventDestroy(ctx.stop);
  cudaStreamDestroy(ctx.stream);
  if (!all_ok) fmt::print("\ntmagemm bench: some rows are not ok (FAIL or error above)\n");
  return all_ok ? 0 : 1;
}

}  // namespace

void add_bench(CLI::App& app, Action& action) {
  CLI::App* sub = app.add_subcommand("bench", "Benchmark tmagemm against cuBLASLt on the built-in suites");
  auto opt = std::make_shared<BenchOptions>();
  sub->add_option("--suite", opt->suite, "Suite to run (default = square + llm + fp8; all = every suite; or shapes \"MxNxK[:layout],...\")")
      ->check(
          [](const std::string& v) {
            try {
              expand_suite(v);
              return std::string();
            } catch (const std::exception& e) {
              return std::string(e.what()) + " (suites: " + fmt::format("{}", fmt::join(suite_names(), ", ")) + ")";
            }
          },
          "SUITE|MxNxK[:layout],...")
      ->capture_default_str();
  sub->add_option("--out", opt->out, "Directory for the JSON results")->capture_default_str();
  sub->add_option("--reps", opt->reps, "Minimum number of timed runs per side (timing also lasts >= 100 ms)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--dtype", opt->dtype, "Input/output dtype of the mm, addmm and bmm suites")
      ->check(CLI::IsMember({"bf16", "f16"}))
      ->capture_default_str();
  sub->add_option("--device", opt->device, "CUDA device index")->capture_default_str();
  sub->add_flag("--interleave,!--no-interleave", opt->interleave,
                "Alternate tmagemm's and cuBLASLt's timed runs (default); --no-interleave times all of one, then the other");
  sub->add_option("--flush", opt->flush,
                  "How L2 is flushed before each timed run: write (a memset of 256 MiB, leaving dirty lines the run "
                  "writes back) or read (a kernel reads 256 MiB, leaving clean lines; JSON <suite>-flush_read.json)")
      ->check(CLI::IsMember({"write", "read"}))
      ->capture_default_str();
  sub->add_flag("--back-to-back", opt->back_to_back,
                "Time each run as the kernel right after the flush (events around both, less the flush's own median "
                "time): launches that may overlap their predecessor (programmatic dependent launch) do, as in a "
                "sequence of kernels. The JSON's `timing` says which; JSON <suite>-b2b[-flush_read].json");
  sub->add_flag("--sustained", opt->sustained,
                "Time each side alone back to back without a flush, in blocks of 0.8 s (tmagemm, cuBLASLt, cuBLASLt, "
                "tmagemm; each block's second half timed): a loop of one GEMM, where a card at its power cap runs "
                "each side at the clock its own energy per FLOP allows. For compute-bound shapes (a memory-bound "
                "one reads whatever of its operands stays in L2). JSON <suite>-sustained.json, `timing` sustained")
      ->excludes("--back-to-back");
  sub->add_option("--routing", opt->routing,
                  "The grouped suite's routing of rows to experts: moe (uneven, fixed seed) or aligned:Q (the same "
                  "routing with each expert's rows rounded to a multiple of Q, the total kept: what ragged group "
                  "ends cost)")
      ->check(
          [](const std::string& v) {
            try {
              grouped_routing(v, 1, 1);
              return std::string();
            } catch (const std::exception& e) {
              return std::string(e.what());
            }
          },
          "moe|aligned:Q")
      ->capture_default_str();
  sub->callback([&action, opt] { action = [opt] { return run_bench(*opt); }; });
}

}  // namespace tmagemm::cli
