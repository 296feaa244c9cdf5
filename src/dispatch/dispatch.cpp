// dispatch.cpp — the one dispatch point: empty problems, K = 0, then the tuner's choice and its launch.
#include "dispatch/dispatch.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <tuple>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "choices/epilogue_params.hpp"
#include "jit/jit.hpp"
#include "jit/support_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/fault.hpp"
#include "runtime/log.hpp"
#include "runtime/device.hpp"
#include "tmagemm/error.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::dispatch {

namespace {

// Makes the problem's device current for the call and gives the caller back its own current device afterwards.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    runtime::check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) {
      runtime::check_cuda(cudaSetDevice(device), "cudaSetDevice");
      restore_ = true;
    }
  }
  ~DeviceGuard() {
    if (restore_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

// out = 0 for K = 0 (torch semantics): cudaMemset2D for row- or column-major outputs, else a strided kernel.
void write_zeros(const GemmProblem& p, cudaStream_t stream) {
  const std::size_t elem = itemsize(p.out.dtype);
  const Operand& o = p.out;
  if (o.col_stride != 1 && o.row_stride != 1) {
    static jit::LoadedKernels<std::pair<std::size_t, int>> kernels;
    CUfunction fn = kernels.get({elem, p.device}, p.device, 0, [&] { return jit::zero_strided_spec(elem); });
    void* base = const_cast<void*>(o.data);
    long long batch = p.batch, rows = o.rows, cols = o.cols, bs = o.batch_stride, rs = o.row_stride,
              cs = o.col_stride;
    void* params[] = {&base, &batch, &rows, &cols, &bs, &rs, &cs};
    CUlaunchConfig cfg{};
    cfg.gridDimX = static_cast<unsigned>(std::clamp<int64_t>((batch * rows * cols + 255) / 256, 1, 4096));
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 256;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = reinterpret_cast<CUstream>(stream);
    runtime::check_cu(runtime::driver().launch_kernel_ex(&cfg, fn, params, nullptr), "launch(zero_strided)");
    return;
  }
  for (int64_t b = 0; b < p.batch; ++b) {
    char* base = static_cast<char*>(const_cast<void*>(o.data)) + b * o.batch_stride * static_cast<int64_t>(elem);
    if (o.col_stride == 1)
      runtime::check_cuda(cudaMemset2DAsync(base, o.row_stride * elem, 0, o.cols * elem, o.rows, stream),
                          "cudaMemset2DAsync(out)");
    else
      runtime::check_cuda(cudaMemset2DAsync(base, o.col_stride * elem, 0, o.rows * elem, o.cols, stream),
                          "cudaMemset2DAsync(out)");
  }
}

// addmm with K = 0: out = act(beta * bias) (torch: the product of an empty K is zero), through the epilogue stage.
void write_epilogue_of_zero(const GemmProblem& p, cudaStream_t stream) {
  const choices::EpilogueSpec epi = choices::epilogue_spec(p);
  const int out = p.out.dtype == DType::bf16 ? 0 : p.out.dtype == DType::f16 ? 1 : 2;
  static jit::LoadedKernels<std::tuple<int, int, int>> kernels;
  CUfunction fn = kernels.get({out, epi.code(), p.device}, p.device, 0,
                              [&] { return jit::epilogue_only_spec(out, epi.render(), epi.suffix()); });
  choices::EpilogueParamsHost ep = choices::epilogue_params(p);
  long long batch = p.batch;
  int rows = static_cast<int>(p.m), cols = static_cast<int>(p.n);
  void* params[] = {&ep, &batch, &rows, &cols};
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>(std::clamp<int64_t>((p.batch * p.m * p.n + 255) / 256, 1, 4096));
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 256;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = reinterpret_cast<CUstream>(stream);
  runtime::check_cu(runtime::driver().launch_kernel_ex(&cfg, fn, params, nullptr), "launch(epilogue_only)");
}

// A launch's workspace (cuBLASLt's, stream-K's partial sums and counters, the pad path's copies). Outside a capture: one
// buffer per (device, stream), kept and grown. Inside a capture: stream-ordered memory from the device's default pool,
// allocated and freed around the launch on the stream, so that a graph holds its own allocation nodes and nothing is
// allocated outside the capture's order. On the per-thread default stream (one handle, a stream per thread):
// stream-ordered memory of the call's own from a pool of tmagemm's that keeps what is freed. (Measured on the H200,
// lab/probes/per_thread_stream_probe.cpp: from the default pool, a cuBLASLt call with a synchronisation cost 170 us of
// host time there against 32 us on a created stream: that pool hands its memory back at each synchronisation.)
// A call holds its stream's buffer until its work is enqueued: calls from several threads on one stream then enqueue
// their work one call at a time (a stream-K counter memset and its kernel, the pad path's copies and its GEMM,
// cuBLASLt's kernels: interleaved, one call's kernel would read another's counters or copies), and a buffer is grown
// (freed and allocated again) only while no other call holds it. Stream order does the rest.
// NOTE: cudaMalloc/cudaFree are not allowed while a stream is captured (they would invalidate the capture).
class Workspace {
 public:
  Workspace(int device, cudaStream_t stream, std::size_t bytes) : stream_(stream) {
    if (bytes == 0) return;
    if (runtime::stream_capturing(stream)) {
      runtime::check_cuda(cudaMallocAsync(&ptr_, bytes, stream), "cudaMallocAsync(workspace)");
      owned_ = true;
      return;
    }
    // The per-thread default stream is one handle for many streams (one a thread): a buffer keyed by the handle would
    // be used by several threads' kernels at once. Stream order keeps a thread's own calls apart.
    if (stream == cudaStreamPerThread) {
      allocate_from_pool(device, bytes);
      return;
    }
    // (cudaStreamLegacy is the null stream: one buffer, one turn.)
    Buffer& buffer = buffer_of(device, stream == cudaStreamLegacy ? nullptr : stream);
    hold_ = std::unique_lock<std::mutex>(buffer.mutex);
    ptr_ = grown(buffer, bytes);
  }
  ~Workspace() {
    if (owned_) cudaFreeAsync(ptr_, stream_);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  void* get() const { return ptr_; }

 private:
  struct Buffer {
    std::mutex mutex;  // held by the call using the buffer, from its allocation to its work enqueued
    void* ptr = nullptr;
    std::size_t bytes = 0;
  };
  // The buffer's memory, grown to at least `bytes` (by the one call that holds it).
  static void* grown(Buffer& buffer, std::size_t bytes) {
    if (buffer.bytes < bytes) {
      const runtime::ThreadLocalCaptureMode mode;  // another thread may be capturing (cuda_check.hpp)
      if (buffer.ptr) runtime::check_cuda(cudaFree(buffer.ptr), "cudaFree(workspace)");
      buffer.ptr = nullptr;
      buffer.bytes = 0;
      runtime::check_cuda(cudaMalloc(&buffer.ptr, bytes), "cudaMalloc(workspace)");
      buffer.bytes = bytes;
    }
    return buffer.ptr;
  }
  // The per-thread default stream's workspace: from the device's workspace pool, freed after the call's work in
  // stream order. Where device memory runs short the pool's idle memory is handed back and the allocation tried once
  // more (other threads' idle blocks may be what is missing).
  void allocate_from_pool(int device, std::size_t bytes) {
    const cudaMemPool_t pool = workspace_pool(device);
    cudaError_t status = cudaMallocFromPoolAsync(&ptr_, bytes, pool, stream_);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      const runtime::ThreadLocalCaptureMode mode;  // another thread may be capturing (cuda_check.hpp)
      cudaMemPoolTrimTo(pool, 0);
      status = cudaMallocFromPoolAsync(&ptr_, bytes, pool, stream_);
    }
    runtime::check_cuda(status, "cudaMallocFromPoolAsync(workspace)");
    owned_ = true;
  }
  // One pool a device, created on first use and kept for the life of the process (calls may come until it ends).
  // NOTE: a pool's release threshold is the memory it keeps across synchronisations (the default pool's is 0: every
  // synchronisation hands its memory back and the next allocation maps it again). Without internal dependencies a
  // block freed by one thread's stream is reused by another's only once that work is done: threads never wait on
  // each other for memory.
  static cudaMemPool_t workspace_pool(int device) {
    static std::mutex mutex;
    static std::map<int, cudaMemPool_t> pools;
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = pools.find(device); it != pools.end()) return it->second;
    const runtime::ThreadLocalCaptureMode mode;
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    runtime::check_cuda(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate(workspace)");
    std::uint64_t keep = UINT64_MAX;
    int no = 0;
    cudaError_t status = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    if (status == cudaSuccess) status = cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &no);
    if (status != cudaSuccess) {
      cudaMemPoolDestroy(pool);
      runtime::check_cuda(status, "cudaMemPoolSetAttribute(workspace)");
    }
    pools.emplace(device, pool);
    return pool;
  }
  // The stream's buffer (entries are never removed: a reference stays valid).
  static Buffer& buffer_of(int device, cudaStream_t stream) {
    static std::mutex mutex;
    static std::map<std::pair<int, cudaStream_t>, Buffer> buffers;
    std::lock_guard<std::mutex> lock(mutex);
    return buffers[{device, stream}];
  }

  cudaStream_t stream_;
  void* ptr_ = nullptr;
  bool owned_ = false;
  std::unique_lock<std::mutex> hold_;
};

}  // namespace

void run(const GemmProblem& p, const Options& o) {
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
  DeviceGuard device(p.device);
  if (p.k == 0) {
    if (choices::epilogue_spec(p).identity())
      write_zeros(p, o.stream);
    else
      write_epilogue_of_zero(p, o.stream);
    return;
  }
  // A choice that fails to compile or launch is reported and skipped, and the next one runs; choose() throws
  // Error(no_valid_choice) with every reason when none is left. Nothing is written to out by a failed launch.
  // A choice that runs out of device memory (Error(out_of_memory): its workspace, a module load, cuBLASLt's own) is
  // passed over for this call only: the next runs in its place (tune::choose_instead) and the choice stays the
  // problem's; when none is left the call throws the first out-of-memory error.
  // TMAGEMM_LOG=timing: the call's host time (the clock is read only when the topic is on: this is every call's path).
  const bool timed = runtime::log_enabled("timing");
  using clock = std::chrono::steady_clock;
  std::vector<std::string> out_of_memory;  // choices that ran out of device memory on this call
  std::optional<Error> first_out_of_memory;
  for (;;) {
    const clock::time_point t0 = timed ? clock::now() : clock::time_point{};
    const choices::ChoicePtr choice =
        out_of_memory.empty() ? tune::choose(p, o) : tune::choose_instead(p, o, out_of_memory);
    if (!choice) {  // (choose() itself never answers null: it throws no_valid_choice)
      if (first_out_of_memory) throw *first_out_of_memory;
      throw Error(ErrorCode::no_valid_choice, fmt::format("no choice is left for {}", p.describe()));
    }
    try {
      const clock::time_point t1 = timed ? clock::now() : clock::time_point{};
      Workspace workspace(p.device, o.stream, choice->workspace_bytes(p));
      runtime::inject_launch_fault(choice->name());
      choice->launch(p, o.stream, o, workspace.get());
      if (timed) {
        using ms = std::chrono::duration<double, std::milli>;
        const auto t2 = clock::now();
        fmt::print(stderr, "tmagemm timing call {}: {:.3f} ms host time (choose {:.3f}, launch {:.3f}: {})\n",
                   p.describe(), ms(t2 - t0).count(), ms(t1 - t0).count(), ms(t2 - t1).count(), choice->name());
      }
      return;
    } catch (const Error& e) {
      if (e.code() == ErrorCode::invalid_argument) throw;
      cudaGetLastError();  // a launch error that is not sticky; a sticky one fails every later choice too
      if (e.code() == ErrorCode::out_of_memory) {
        if (!first_out_of_memory) first_out_of_memory.emplace(e);
        out_of_memory.push_back(choice->name());
        tune::report_out_of_memory(p, *choice, e.what());
        continue;
      }
      tune::report_failure(p, o, *choice, e.what());
    }
  }
}

Explanation explain(const GemmProblem& p, const Options& o) {
  Explanation e;
  e.problem = p.describe();
  const auto cands = tune::enumerate(p, o);
  const tune::Known known = tune::known(p, o);
  // What a call would run now without tuning anything: a remembered winner (tuned on the shape bucket's
  // representative M, so it may be set aside by a tuning rule at this M; that M itself runs its own timings' winner),
  // else the heuristic rule.
  choices::ChoicePtr selected;
  if (known.winner && o.tuning != Tuning::heuristic) selected = tune::stored_choice(p, o, cands);
  if (!selected) selected = tune::heuristic_choice(p, cands, runtime::device_info(p.device), o.sm_carveout);
  for (const auto& c : cands) {
    ChoiceReport r;
    r.name = c.choice->name();
    r.backend = c.choice->backend();
    r.applicable = c.reason.empty();
    r.reason = c.reason;
    r.selected = selected && c.choice == selected;
    for (const auto& [name, ms] : known.timings_ms)
      if (name == r.name) r.tuned_ms = ms;
    e.choices.push_back(std::move(r));
  }
  return e;
}

}  // namespace tmagemm::dispatch
