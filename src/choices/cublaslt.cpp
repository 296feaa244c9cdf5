// cublaslt.cpp — the cuBLASLt backend (see cublaslt.hpp): problem -> column-major cuBLASLt call, per-device
// handles, descriptors and heuristic query (with the reduction-scheme accuracy floor) at enumeration, one Choice per
// heuristic algorithm, launch.
#include "choices/cublaslt.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::choices {

namespace {

bool is_16bit_float(DType d) { return d == DType::bf16 || d == DType::f16; }

// Largest power of two <= 256 dividing `bytes` (256 for 0).
uint32_t alignment_of(uint64_t bytes) {
  if (bytes == 0) return 256;
  return static_cast<uint32_t>(std::min<uint64_t>(bytes & (~bytes + 1), 256));
}

CublasLtMatrix stored(const char* name, const Operand& o, bool out_col, int64_t batch) {
  CublasLtMatrix x;
  x.name = name;
  x.data = o.data;
  x.dtype = o.dtype;
  const bool col = o.major() == Major::col;
  x.rows = static_cast<uint64_t>(col ? o.rows : o.cols);
  x.cols = static_cast<uint64_t>(col ? o.cols : o.rows);
  x.ld = o.ld();
  x.batch_stride = o.batch_stride;
  x.transpose = col != out_col;
  const uint64_t elem = itemsize(o.dtype);
  uint32_t align = alignment_of(reinterpret_cast<std::uintptr_t>(o.data));
  // NOTE: cuBLASLt's alignment requirement covers the buffer pointer, the leading dimension and the batch stride.
  align = std::min(align, alignment_of(static_cast<uint64_t>(x.ld) * elem));
  if (batch > 1) align = std::min(align, alignment_of(static_cast<uint64_t>(x.batch_stride) * elem));
  x.alignment = align;
  return x;
}

}  // namespace

std::string cublaslt_reason_unsupported(const GemmProblem& p) {
  if (p.op != Op::mm && p.op != Op::bmm)
    return fmt::format("op {} not handled by the cuBLASLt backend yet", to_string(p.op));
  if (!is_16bit_float(p.a.dtype) || p.a.dtype != p.b.dtype)
    return fmt::format("inputs must be both bf16 or both f16 (got {} and {})", to_string(p.a.dtype),
                       to_string(p.b.dtype));
  // NOTE: with CUBLAS_COMPUTE_32F and 16-bit A/B, cuBLASLt's C/D type is the input type or f32 (no bf16 <-> f16).
  if (p.out.dtype != p.a.dtype && p.out.dtype != DType::f32)
    return fmt::format("output dtype {} with {} inputs is not a cuBLASLt type combination (out must be {} or f32)",
                       to_string(p.out.dtype), to_string(p.a.dtype), to_string(p.a.dtype));
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.batch <= 0)
    return "empty problem (M, N, K or batch is 0) needs no GEMM kernel";
  if (p.batch > std::numeric_limits<int32_t>::max())
    return fmt::format("batch {} exceeds cuBLASLt's 32-bit batch count", p.batch);
  const std::pair<const char*, const Operand*> operands[] = {{"a", &p.a}, {"b", &p.b}, {"out", &p.out}};
  for (const auto& [name, o] : operands) {
    const Major major = o->major();
    if (major == Major::strided)
      return fmt::format("{} has no unit stride (cuBLASLt needs column- or row-major operands; strides {}, {})", name,
                         o->row_stride, o->col_stride);
    // NOTE: cuBLASLt needs ld >= rows of the column-major matrix (no overlapping or broadcast rows/columns).
    const int64_t contiguous = major == Major::col ? o->rows : o->cols;
    if (o->ld() < std::max<int64_t>(1, contiguous))
      return fmt::format(
          "{} is {}-major with {} stride {}, less than its {} {} (cuBLASLt needs a leading dimension of at least "
          "the contiguous extent)",
          name, to_string(major), major == Major::col ? "col" : "row", o->ld(), contiguous,
          major == Major::col ? "rows" : "columns");
    if (p.batch > 1 && o->batch_stride < 0) return fmt::format("{} has a negative batch stride", name);
  }
  if (p.batch > 1 && p.out.batch_stride == 0)
    return "out has batch stride 0 with batch > 1 (every batch would write the same matrix)";
  return {};
}

CublasLtCall cublaslt_call(const GemmProblem& p) {
  CublasLtCall call;
  const bool out_col = p.out.major() == Major::col;
  call.swapped = !out_col;
  call.k = static_cast<uint64_t>(p.k);
  call.batch = p.batch;
  if (out_col) {  // D = C = A @ B
    call.m = static_cast<uint64_t>(p.m);
    call.n = static_cast<uint64_t>(p.n);
    call.a = stored("a", p.a, out_col, p.batch);
    call.b = stored("b", p.b, out_col, p.batch);
  } else {  // D = C^T = B^T @ A^T
    call.m = static_cast<uint64_t>(p.n);
    call.n = static_cast<uint64_t>(p.m);
    call.a = stored("b", p.b, out_col, p.batch);
    call.b = stored("a", p.a, out_col, p.batch);
  }
  call.c = stored("out", p.out, out_col, p.batch);
  return call;
}

uint32_t cublaslt_reduction_mask(DType out, bool allow_reduced) {
  // NOTE: with CUBLAS_COMPUTE_32F, COMPUTE_TYPE reduces in fp32; INPLACE and OUTPUT_TYPE reduce in the output type.
  if (allow_reduced || !is_16bit_float(out)) return CUBLASLT_REDUCTION_SCHEME_MASK;
  return CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
}

bool cublaslt_reduction_allowed(uint32_t scheme, uint32_t mask) { return (scheme & ~mask) == 0; }

int cublaslt_top_k() {
  constexpr const char* kVar = "TMAGEMM_CUBLASLT_TOP_K";
  const char* raw = std::getenv(kVar);
  if (raw == nullptr) return kCublasLtDefaultTopK;
  std::string_view v(raw);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
  if (v.empty()) return kCublasLtDefaultTopK;
  int k = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), k);
  if (ec != std::errc() || end != v.data() + v.size() || k < 1 || k > kCublasLtMaxTopK)
    throw Error(ErrorCode::invalid_argument, fmt::format("{}='{}' is not valid: expected an integer from 1 to {}",
                                                         kVar, std::string(v), kCublasLtMaxTopK));
  return k;
}

namespace {

const char* status_name(cublasStatus_t s) { return cublasLtGetStatusName(s); }

cudaDataType_t cuda_type(DType d) {
  switch (d) {
    case DType::f16: return CUDA_R_16F;
    case DType::f32: return CUDA_R_32F;
    case DType::bf16:
    default: return CUDA_R_16BF;  // never reached for other types: cublaslt_reason_unsupported refuses them
  }
}

// Makes `device` current for its lifetime (only when it is not already) and restores the previous one.
class DeviceGuard {
 public:
  DeviceGuard() = default;
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() {
    if (restore_) cudaSetDevice(previous_);
  }
  cudaError_t set(int device) {
    cudaError_t st = cudaGetDevice(&previous_);
    if (st != cudaSuccess) return st;
    if (previous_ == device) return cudaSuccess;
    st = cudaSetDevice(device);
    restore_ = st == cudaSuccess;
    return st;
  }

 private:
  int previous_ = 0;
  bool restore_ = false;
};

// One handle per device, created (with that device current) on first use and never destroyed.
cublasStatus_t handle_for(int device, cublasLtHandle_t* handle) {
  static std::mutex mutex;
  static std::map<int, cublasLtHandle_t> handles;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = handles.find(device); it != handles.end()) {
    *handle = it->second;
    return CUBLAS_STATUS_SUCCESS;
  }
  DeviceGuard guard;
  if (guard.set(device) != cudaSuccess) {
    cudaGetLastError();
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  cublasLtHandle_t h = nullptr;
  const cublasStatus_t st = cublasLtCreate(&h);
  if (st != CUBLAS_STATUS_SUCCESS) return st;  // not cached: a later call tries again
  handles.emplace(device, h);
  *handle = h;
  return st;
}

// The matmul and layout descriptors of one call (host objects only).
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;

  Descriptors() = default;
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

cublasStatus_t make_layout(const CublasLtMatrix& x, int64_t batch, cublasLtMatrixLayout_t* out) {
  cublasStatus_t st = cublasLtMatrixLayoutCreate(out, cuda_type(x.dtype), x.rows, x.cols, x.ld);
  if (st != CUBLAS_STATUS_SUCCESS || batch <= 1) return st;
  const int32_t count = static_cast<int32_t>(batch);
  const int64_t offset = x.batch_stride;
  st = cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &offset, sizeof offset);
  return st;
}

// Fills `d` for `call`; `sm_target` > 0 asks cuBLASLt to plan for that many SMs (Options::sm_carveout).
// On failure returns the status and the step that failed in `what`.
cublasStatus_t build_descriptors(const CublasLtCall& call, int32_t sm_target, Descriptors& d, std::string& what) {
  auto fail = [&what](std::string step, cublasStatus_t status) {
    what = std::move(step);
    return status;
  };
  cublasStatus_t st = cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  if (st != CUBLAS_STATUS_SUCCESS) return fail("cublasLtMatmulDescCreate", st);
  const int32_t trans_a = call.a.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t trans_b = call.b.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  st = cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a);
  if (st != CUBLAS_STATUS_SUCCESS) return fail("cublasLtMatmulDescSetAttribute(TRANSA)", st);
  st = cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b);
  if (st != CUBLAS_STATUS_SUCCESS) return fail("cublasLtMatmulDescSetAttribute(TRANSB)", st);
  if (sm_target > 0) {
    st = cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm_target, sizeof sm_target);
    if (st != CUBLAS_STATUS_SUCCESS) return fail("cublasLtMatmulDescSetAttribute(SM_COUNT_TARGET)", st);
  }
  if ((st = make_layout(call.a, call.batch, &d.a)) != CUBLAS_STATUS_SUCCESS)
    return fail(fmt::format("cublasLtMatrixLayout(A = {})", call.a.name), st);
  if ((st = make_layout(call.b, call.batch, &d.b)) != CUBLAS_STATUS_SUCCESS)
    return fail(fmt::format("cublasLtMatrixLayout(B = {})", call.b.name), st);
  if ((st = make_layout(call.c, call.batch, &d.c)) != CUBLAS_STATUS_SUCCESS)
    return fail("cublasLtMatrixLayout(C = out)", st);
  return CUBLAS_STATUS_SUCCESS;
}

bool same_matrix(const CublasLtMatrix& x, const CublasLtMatrix& y, int64_t batch) {
  return x.dtype == y.dtype && x.rows == y.rows && x.cols == y.cols && x.ld == y.ld && x.transpose == y.transpose &&
         (batch <= 1 || x.batch_stride == y.batch_stride);
}

// SMs cuBLASLt should plan for: 0 (the whole device) unless some are carved out.
int32_t sm_target(int sm_count, int carveout) {
  if (carveout <= 0 || sm_count <= 0) return 0;
  return std::max(1, sm_count - carveout);
}

// Descriptors for one call shape and what the heuristic was told (alignments, SM target, reduction-scheme mask):
// shared by the choices of one enumeration, immutable once built.
struct Plan {
  int device = 0;
  int sm_count = 0;
  int32_t sm_target = 0;
  uint32_t reduction_mask = CUBLASLT_REDUCTION_SCHEME_MASK;  // cublaslt_reduction_mask of the options
  cublasLtHandle_t handle = nullptr;
  CublasLtCall call;  // data pointers are those of the problem it was built for (unused afterwards)
  Descriptors desc;

  // True when this plan's descriptors describe `c` and algorithms chosen for it can run `c` under the SM target and
  // reduction mask asked for: same extents, lds, batch strides and transposes, and every matrix at least as aligned
  // as the heuristic was told.
  bool fits(const CublasLtCall& c, int32_t target, uint32_t mask) const {
    return target == sm_target && mask == reduction_mask && c.swapped == call.swapped && c.m == call.m &&
           c.n == call.n && c.k == call.k && c.batch == call.batch && same_matrix(c.a, call.a, c.batch) &&
           same_matrix(c.b, call.b, c.batch) && same_matrix(c.c, call.c, c.batch) &&
           c.a.alignment >= call.a.alignment && c.b.alignment >= call.b.alignment &&
           c.c.alignment >= call.c.alignment;
  }
};

// The reduction scheme an algorithm is configured with; false when cuBLASLt cannot say.
bool reduction_scheme_of(const cublasLtMatmulAlgo_t& algo, uint32_t& scheme) {
  std::size_t written = 0;
  scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
  return cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof scheme,
                                              &written) == CUBLAS_STATUS_SUCCESS &&
         written == sizeof scheme;
}

// For a problem cuBLASLt can express, on a device that exists: builds a plan (handle, descriptors) and asks the
// heuristic for up to `count` algorithms whose reduction scheme is in `mask` (cublaslt_reduction_mask); `results`
// keeps the usable ones, best first. Returns the reason on failure. Makes the problem's device current while it
// works.
std::string make_plan(const GemmProblem& p, int sm_count, int32_t target, uint32_t mask, int count,
                      std::shared_ptr<Plan>& plan, std::vector<cublasLtMatmulHeuristicResult_t>& results) {
  DeviceGuard guard;
  if (cudaError_t e = guard.set(p.device); e != cudaSuccess) {
    cudaGetLastError();
    return fmt::format("cudaSetDevice({}): {}", p.device, cudaGetErrorName(e));
  }
  plan = std::make_shared<Plan>();
  plan->device = p.device;
  plan->sm_count = sm_count;
  plan->sm_target = target;
  plan->reduction_mask = mask;
  if (cublasStatus_t st = handle_for(p.device, &plan->handle); st != CUBLAS_STATUS_SUCCESS)
    return fmt::format("cublasLtCreate: {}", status_name(st));
  plan->call = cublaslt_call(p);
  std::string what;
  if (cublasStatus_t st = build_descriptors(plan->call, target, plan->desc, what); st != CUBLAS_STATUS_SUCCESS)
    return fmt::format("{}: {}", what, status_name(st));

  cublasLtMatmulPreference_t pref = nullptr;
  cublasStatus_t st = cublasLtMatmulPreferenceCreate(&pref);
  if (st != CUBLAS_STATUS_SUCCESS) return fmt::format("cublasLtMatmulPreferenceCreate: {}", status_name(st));
  const uint64_t max_workspace = kCublasLtWorkspaceBytes;
  st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
                                            sizeof max_workspace);
  // NOTE: the default minimum alignment is 256 bytes; algorithms picked under it fail on less aligned operands.
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, plan->call.a.alignment},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, plan->call.b.alignment},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, plan->call.c.alignment},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, plan->call.c.alignment}};
  for (const auto& [attr, bytes] : alignments)
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulPreferenceSetAttribute(pref, attr, &bytes, sizeof bytes);
  // NOTE: the default mask admits every scheme, including those that add split-K partial sums in a 16-bit output
  // type (INPLACE, OUTPUT_TYPE); only a narrower mask is set.
  const bool restricted = mask != CUBLASLT_REDUCTION_SCHEME_MASK;
  if (st == CUBLAS_STATUS_SUCCESS && restricted)
    st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask);
  if (st != CUBLAS_STATUS_SUCCESS) {
    cublasLtMatmulPreferenceDestroy(pref);
    return fmt::format("cublasLtMatmulPreferenceSetAttribute: {}", status_name(st));
  }
  count = std::clamp(count, 1, kCublasLtMaxTopK);
  cublasLtMatmulHeuristicResult_t found[kCublasLtMaxTopK] = {};
  int returned = 0;
  st = cublasLtMatmulAlgoGetHeuristic(plan->handle, plan->desc.op, plan->desc.a, plan->desc.b, plan->desc.c,
                                      plan->desc.c, pref, count, found, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  constexpr const char* kNoFp32Reduction =
      "no cuBLASLt algorithm reduces in fp32 for this problem (Options::allow_reduced_precision_reduction is false)";
  if (st != CUBLAS_STATUS_SUCCESS) {
    if (restricted) return fmt::format("{}: the heuristic says {}", kNoFp32Reduction, status_name(st));
    return fmt::format("cuBLASLt has no algorithm for this problem: {}", status_name(st));
  }
  results.clear();
  int reduces_narrow = 0;  // algorithms dropped for a reduction scheme outside the mask
  for (int i = 0; i < std::min(returned, count); ++i) {
    if (found[i].state != CUBLAS_STATUS_SUCCESS || found[i].workspaceSize > kCublasLtWorkspaceBytes) continue;
    // Belt and braces: the heuristic was asked with the mask, and each algorithm's own scheme must agree. One whose
    // scheme cannot be read is dropped too, since nothing then shows that it adds its partial sums in fp32.
    uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
    if (restricted && (!reduction_scheme_of(found[i].algo, scheme) || !cublaslt_reduction_allowed(scheme, mask))) {
      ++reduces_narrow;
      continue;
    }
    results.push_back(found[i]);
  }
  if (results.empty()) {
    if (restricted) return kNoFp32Reduction;
    return "cuBLASLt has no algorithm for this problem: the heuristic returned none";
  }
  if (reduces_narrow > 0 && runtime::log_enabled("autotune"))
    fmt::print(stderr,
               "tmagemm autotune: cublaslt dropped {} heuristic algorithm(s) that reduce split-K partial sums in {}\n",
               reduces_narrow, to_string(p.out.dtype));
  return {};
}

// The single choice offered when the heuristic cannot be asked; can_implement says why.
class CublasLtUnavailable final : public Choice {
 public:
  explicit CublasLtUnavailable(std::string reason) : reason_(std::move(reason)) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "cublaslt"; }
  std::string can_implement(const GemmProblem&, const runtime::DeviceInfo&) const override { return reason_; }
  void precompile(const GemmProblem&, int) const override {
    throw Error(ErrorCode::unsupported, "cublaslt: " + reason_);
  }
  void launch(const GemmProblem&, cudaStream_t, const Options&, void*) const override {
    throw Error(ErrorCode::unsupported, "cublaslt: " + reason_);
  }

 private:
  std::string name_ = "cublaslt";
  std::string reason_;
};

// Heuristic algorithm number `rank` (0 = cuBLASLt's first pick) for a problem. The tuner keeps a winning choice
// for every problem with the same tuning key, which does not fix lds, batch strides or exact alignment; for such
// a problem the choice asks the heuristic again (once per distinct layout, kept) and runs the algorithm of the
// same rank, so the name always means "the heuristic's pick number <rank> for this problem".
class CublasLtChoice final : public Choice {
 public:
  struct Variant {
    std::shared_ptr<const Plan> plan;
    cublasLtMatmulAlgo_t algo{};
    std::size_t workspace = 0;
  };

  CublasLtChoice(int rank, Variant primary)
      : name_(fmt::format("cublaslt_algo{}", rank)), rank_(rank), primary_(std::move(primary)) {}

  const std::string& name() const override { return name_; }
  const char* backend() const override { return "cublaslt"; }

  std::string can_implement(const GemmProblem& p, const runtime::DeviceInfo&) const override {
    if (auto r = cublaslt_reason_unsupported(p); !r.empty()) return r;
    if (p.device != primary_.plan->device)
      return fmt::format("the algorithm was chosen on device {}; the problem is on device {}", primary_.plan->device,
                         p.device);
    return {};
  }

  // The descriptors of the enumerated problem were built with the heuristic query; a problem with another layout
  // gets its own here (host work only: descriptors and a heuristic query).
  void precompile(const GemmProblem& p, int /*device*/) const override {
    if (auto r = can_implement(p, runtime::DeviceInfo{}); !r.empty())
      throw Error(ErrorCode::unsupported, fmt::format("{}: {}", name_, r));
    variant_for(p, cublaslt_call(p), primary_.plan->sm_target, primary_.plan->reduction_mask);
  }

  void launch(const GemmProblem& p, cudaStream_t stream, const Options& options, void* workspace) const override {
    if (auto r = can_implement(p, runtime::DeviceInfo{}); !r.empty())
      throw Error(ErrorCode::unsupported, fmt::format("{}: {}", name_, r));
    const CublasLtCall call = cublaslt_call(p);
    const Variant& v = variant_for(p, call, sm_target(primary_.plan->sm_count, options.sm_carveout),
                                   cublaslt_reduction_mask(p.out.dtype, options.allow_reduced_precision_reduction));
    if (v.workspace > 0 && workspace == nullptr)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: needs {} bytes of workspace but none was passed", name_, v.workspace));
    DeviceGuard guard;
    runtime::check_cuda(guard.set(p.device), "cudaSetDevice");
    if (runtime::log_enabled("launch"))
      fmt::print(stderr, "tmagemm launch {} m={} n={} k={} batch={} ops={}{} swapped={} workspace={}{}\n", name_,
                 call.m, call.n, call.k, call.batch, call.a.transpose ? 'T' : 'N', call.b.transpose ? 'T' : 'N',
                 call.swapped, v.workspace, v.plan == primary_.plan ? "" : " (re-planned layout)");
    const float alpha = p.alpha, beta = 0.0f;
    const Plan& plan = *v.plan;
    void* out = const_cast<void*>(call.c.data);
    // C = D = out; beta = 0, so C is never read.
    const cublasStatus_t st =
        cublasLtMatmul(plan.handle, plan.desc.op, &alpha, call.a.data, plan.desc.a, call.b.data, plan.desc.b, &beta,
                       out, plan.desc.c, out, plan.desc.c, &v.algo, workspace,
                       workspace ? kCublasLtWorkspaceBytes : 0, stream);
    if (st != CUBLAS_STATUS_SUCCESS)
      throw Error(ErrorCode::cuda_error, fmt::format("cublasLtMatmul({}): {}", name_, status_name(st)));
  }

  std::size_t workspace_bytes(const GemmProblem&) const override { return kCublasLtWorkspaceBytes; }
  int library_rank() const override { return rank_; }

 private:
  // The plan and algorithm that run `call` (= cublaslt_call(p)) with `target` SMs and reduction-scheme mask `mask`:
  // the enumerated one when it fits, else one planned for this layout and mask (kept). Throws Error(unsupported)
  // when the heuristic has nothing for it.
  const Variant& variant_for(const GemmProblem& p, const CublasLtCall& call, int32_t target, uint32_t mask) const {
    if (primary_.plan->fits(call, target, mask)) return primary_;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& v : others_)
      if (v->plan->fits(call, target, mask)) return *v;
    std::shared_ptr<Plan> plan;
    std::vector<cublasLtMatmulHeuristicResult_t> results;
    const std::string reason = make_plan(p, primary_.plan->sm_count, target, mask, rank_ + 1, plan, results);
    if (!reason.empty()) throw Error(ErrorCode::unsupported, fmt::format("{}: {}", name_, reason));
    // NOTE: fewer algorithms may exist for a less aligned layout; the last one stands in for a missing rank.
    const auto& r = results[std::min<std::size_t>(static_cast<std::size_t>(rank_), results.size() - 1)];
    // Variants live as long as the choice (references to them are handed out), so the list only grows; distinct
    // layouts per tuning key are few.
    others_.push_back(std::make_unique<const Variant>(Variant{std::move(plan), r.algo, r.workspaceSize}));
    return *others_.back();
  }

  std::string name_;
  int rank_;
  Variant primary_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<const Variant>> others_;
};

std::vector<ChoicePtr> unavailable(std::string reason) {
  return {std::make_shared<const CublasLtUnavailable>(std::move(reason))};
}

std::vector<ChoicePtr> enumerate(const GemmProblem& p, const runtime::DeviceInfo& device, const Options& options) {
  if (auto r = cublaslt_reason_unsupported(p); !r.empty()) return unavailable(std::move(r));
  const int top_k = cublaslt_top_k();
  try {
    const int count = runtime::device_count();
    if (count == 0) return unavailable("no CUDA device");
    if (p.device < 0 || p.device >= count)
      return unavailable(fmt::format("device {} does not exist ({} CUDA devices)", p.device, count));
    const int sm_count = device.index == p.device && device.sm_count > 0 ? device.sm_count
                                                                         : runtime::device_info(p.device).sm_count;
    std::shared_ptr<Plan> plan;
    std::vector<cublasLtMatmulHeuristicResult_t> results;
    const uint32_t mask = cublaslt_reduction_mask(p.out.dtype, options.allow_reduced_precision_reduction);
    if (auto r = make_plan(p, sm_count, sm_target(sm_count, options.sm_carveout), mask, top_k, plan, results);
        !r.empty())
      return unavailable(std::move(r));
    std::shared_ptr<const Plan> shared = std::move(plan);
    std::vector<ChoicePtr> choices;
    for (std::size_t i = 0; i < results.size(); ++i)
      choices.push_back(std::make_shared<const CublasLtChoice>(
          static_cast<int>(i), CublasLtChoice::Variant{shared, results[i].algo, results[i].workspaceSize}));
    return choices;
  } catch (const std::exception& e) {
    return unavailable(e.what());
  }
}

}  // namespace

Backend cublaslt_backend() {
  return {"cublaslt", [](const Options& options) { return options.cublaslt; }, &enumerate};
}

}  // namespace tmagemm::choices
