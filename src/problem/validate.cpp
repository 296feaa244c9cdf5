// validate.cpp — builds the canonical GemmProblem from the user's TensorViews. Every check of user input
// lives here and runs before any GPU work, in this order: rank, negative sizes/strides, shapes, dtypes (and
// scaled_mm's layout and scaling rules), null data, pointer location and device, byte extent overflow,
// output overlap. Also: the per-call Options check (validate_options), Op/Major names, Operand helpers,
// GemmProblem::describe and the pointer-query hook.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <utility>

#include "problem/problem.hpp"
#include "runtime/device.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm {

const char* to_string(Op op) noexcept {
  switch (op) {
    case Op::mm: return "mm";
    case Op::addmm: return "addmm";
    case Op::scaled_mm: return "scaled_mm";
    case Op::bmm: return "bmm";
    case Op::grouped_mm: return "grouped_mm";
  }
  return "?";
}

const char* to_string(Major major) noexcept {
  switch (major) {
    case Major::row: return "row";
    case Major::col: return "col";
    case Major::strided: return "strided";
  }
  return "?";
}

Major Operand::major() const noexcept {
  if (col_stride == 1) return Major::row;
  if (row_stride == 1) return Major::col;
  return Major::strided;
}

int64_t Operand::ld() const noexcept { return major() == Major::col ? col_stride : row_stride; }

// ---------------------------------------------------------------------------------------------------------
// Pointer query hook
// ---------------------------------------------------------------------------------------------------------
namespace {

std::mutex g_query_mutex;
PointerQuery g_query;                  // empty: the default query (cuda_pointer_info)
std::atomic<bool> g_has_query{false};  // g_query is set; read without the lock on every validation

bool means_no_device(cudaError_t st) {
  switch (st) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorInitializationError: return true;
    default: return false;
  }
}

// The default query; `what` names the pointer in errors ("a", "pointer 0x..."). One driver call answers it on
// the common path (runtime::driver_pointer_location); when the driver cannot, the runtime's
// cudaPointerGetAttributes does, with its errors.
PointerInfo cuda_pointer_info(const void* p, std::string_view what) {
  PointerInfo info;
  if (runtime::driver_pointer_location(p, info.is_device, info.device)) return info;
  cudaPointerAttributes attr{};
  const cudaError_t st = cudaPointerGetAttributes(&attr, p);
  if (st != cudaSuccess) {
    cudaGetLastError();  // clear the sticky status
    if (means_no_device(st))
      throw Error(ErrorCode::cuda_error, fmt::format("no CUDA device: cannot check where {} lives ({}: {})", what,
                                                     cudaGetErrorName(st), cudaGetErrorString(st)));
    throw Error(ErrorCode::cuda_error, fmt::format("cudaPointerGetAttributes({}): {}: {}", what,
                                                   cudaGetErrorName(st), cudaGetErrorString(st)));
  }
  info = PointerInfo{};
  if (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) {
    info.is_device = true;
    info.device = attr.device;
  }
  return info;
}

PointerInfo lookup_pointer(const void* p, std::string_view what) {
  if (g_has_query.load(std::memory_order_acquire)) {
    PointerQuery query;
    {
      std::lock_guard<std::mutex> lock(g_query_mutex);
      query = g_query;
    }
    if (query) return query(p);
  }
  return cuda_pointer_info(p, what);
}

}  // namespace

void set_pointer_query(PointerQuery query) {
  std::lock_guard<std::mutex> lock(g_query_mutex);
  g_query = std::move(query);
  g_has_query.store(static_cast<bool>(g_query), std::memory_order_release);
}

PointerInfo query_pointer(const void* p) { return lookup_pointer(p, fmt::format("pointer {}", p)); }

// ---------------------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------------------
namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorCode::invalid_argument, message); }
[[noreturn]] void unsupported(const std::string& message) { throw Error(ErrorCode::unsupported, message); }

struct Arg {
  const char* name;
  const TensorView* view;
  int rank;          // the rank the op needs
  const char* hint;  // what shapes the op takes, for the rank error
};

// The tensors of one call, in a fixed array (validation runs on every call: no allocation).
struct ArgList {
  static constexpr std::size_t kMax = 6;  // a, b, bias, scale_a, scale_b, out
  Arg items[kMax] = {};
  std::size_t count = 0;

  void push_back(const Arg& arg) { items[count++] = arg; }
  std::size_t size() const { return count; }
  const Arg& operator[](std::size_t i) const { return items[i]; }
  const Arg* begin() const { return items; }
  const Arg* end() const { return items + count; }
};

std::string sizes_str(const TensorView& v) {
  std::string s;
  for (int d = 0; d < v.rank; ++d) s += (d ? "x" : "") + std::to_string(v.sizes[d]);
  return s;
}

std::string strides_str(const TensorView& v) {
  std::string s = "(";
  for (int d = 0; d < v.rank; ++d) s += (d ? ", " : "") + std::to_string(v.strides[d]);
  return s + ")";
}

bool is_empty(const TensorView& v) {
  for (int d = 0; d < v.rank; ++d)
    if (v.sizes[d] == 0) return true;
  return false;
}

// Byte extent [data, data + extent) the view can touch; 0 for an empty view; -1 on int64 overflow.
int64_t byte_extent(const TensorView& v) {
  if (is_empty(v)) return 0;
  int64_t last = 0;  // offset of the last element, in elements
  for (int d = 0; d < v.rank; ++d) {
    int64_t term = 0;
    if (__builtin_mul_overflow(v.sizes[d] - 1, v.strides[d], &term)) return -1;
    if (__builtin_add_overflow(last, term, &last)) return -1;
  }
  int64_t count = 0, bytes = 0;
  if (__builtin_add_overflow(last, int64_t{1}, &count)) return -1;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(itemsize(v.dtype)), &bytes)) return -1;
  return bytes;
}

// The free stride of an extent-1 dimension: the other extent rounded up to 16 bytes, at least 1.
int64_t round16(int64_t extent, DType dtype) {
  const int64_t per = 16 / static_cast<int64_t>(itemsize(dtype));
  int64_t up = 0;
  if (__builtin_add_overflow(extent, per - 1, &up)) return extent;
  return std::max<int64_t>(up / per * per, 1);
}

// The last two dims of a view as a canonical Operand (see problem.hpp); batch stride from dim 0 of rank 3.
Operand canonical_operand(const TensorView& v) {
  Operand o;
  o.data = v.data;
  o.dtype = v.dtype;
  const int r = v.rank - 2, c = v.rank - 1;
  o.rows = v.sizes[r];
  o.cols = v.sizes[c];
  o.row_stride = v.strides[r];
  o.col_stride = v.strides[c];
  o.batch_stride = (v.rank == 3 && v.sizes[0] != 1) ? v.strides[0] : 0;
  if (o.rows == 1 && o.cols == 1) {
    o.col_stride = 1;
    o.row_stride = round16(1, v.dtype);
  } else if (o.rows == 1) {
    if (o.col_stride == 1)
      o.row_stride = round16(o.cols, v.dtype);  // row-major
    else
      o.row_stride = 1;  // col-major with ld = col_stride
  } else if (o.cols == 1) {
    if (o.row_stride == 1)
      o.col_stride = round16(o.rows, v.dtype);  // col-major
    else
      o.col_stride = 1;  // row-major with ld = row_stride
  }
  return o;
}

// Bias broadcast to (M,N): (1,N) or (M,N) with row stride 0 -> row_vector; (M,1) or (M,N) with col stride 0 ->
// col_vector; (M,N) -> full; one element (1,1) -> row_vector with column stride 0. Throws for any other shape.
BiasKind classify_bias(const char* op, const TensorView& bias, int64_t m, int64_t n, Operand& out) {
  const int64_t b0 = bias.sizes[0], b1 = bias.sizes[1];
  const int64_t rs = bias.strides[0], cs = bias.strides[1];
  const bool full_shape = b0 == m && b1 == n;
  auto row_vector = [&] {
    out = Operand{};
    out.data = bias.data;
    out.dtype = bias.dtype;
    out.rows = 1;
    out.cols = n;
    out.row_stride = 0;
    out.col_stride = n == 1 ? 1 : cs;
    return BiasKind::row_vector;
  };
  auto col_vector = [&] {
    out = Operand{};
    out.data = bias.data;
    out.dtype = bias.dtype;
    out.rows = m;
    out.cols = 1;
    out.row_stride = m == 1 ? 1 : rs;
    out.col_stride = 0;
    return BiasKind::col_vector;
  };
  if (full_shape && m > 1 && rs == 0) return row_vector();
  if (full_shape && n > 1 && cs == 0) return col_vector();
  if (full_shape && m == 1) return row_vector();
  if (full_shape && n == 1) return col_vector();
  if (full_shape) {
    out = canonical_operand(bias);
    return BiasKind::full;
  }
  if (b0 == 1 && b1 == n) return row_vector();
  if (b0 == m && b1 == 1) return col_vector();
  if (b0 == 1 && b1 == 1) {
    // One value for every element (torch.addmm broadcasts a one-element bias): a row vector whose columns all
    // read that element (column stride 0; the kernels' epilogue takes any stride, cuBLASLt's refuses it).
    row_vector();
    out.col_stride = 0;
    return BiasKind::row_vector;
  }
  invalid(fmt::format("{}: bias is {} but must broadcast to out MxN = {}x{}: accepted shapes are (N), (1,N), "
                      "(M,1), (M,N) and one element ((1) or (1,1))",
                      op, sizes_str(bias), m, n));
}

bool is_16bit_float(DType t) { return t == DType::bf16 || t == DType::f16; }
bool is_fp8(DType t) { return t == DType::e4m3 || t == DType::e5m2; }
bool is_out_dtype(DType t) { return t == DType::bf16 || t == DType::f16 || t == DType::f32; }

struct Inputs {
  Op op = Op::mm;
  const TensorView* a = nullptr;
  const TensorView* b = nullptr;
  const TensorView* out = nullptr;
  const TensorView* bias = nullptr;
  const TensorView* scale_a = nullptr;
  const TensorView* scale_b = nullptr;
  const TensorView* offs = nullptr;  // grouped_mm
};

GemmProblem build(const Inputs& given) {
  // A rank-1 bias (N) (torch's addmm and _scaled_mm take one) is the row vector (1, N): same data and stride.
  Inputs in = given;
  TensorView bias_row;
  if (in.bias && in.bias->rank == 1) {
    bias_row = *in.bias;
    bias_row.rank = 2;
    bias_row.sizes[0] = 1;
    bias_row.sizes[1] = in.bias->sizes[0];
    bias_row.strides[0] = in.bias->sizes[0];
    bias_row.strides[1] = in.bias->strides[0];
    in.bias = &bias_row;
  }
  const char* op = to_string(in.op);
  const bool batched = in.op == Op::bmm, grouped = in.op == Op::grouped_mm;
  const int mat_rank = batched ? 3 : 2;

  // Every tensor, inputs first, out last.
  const char* mat_hint = batched   ? " (BxMxK, BxKxN, BxMxN)"
                         : grouped ? " (a total_M x K, b G x K x N, out total_M x N)"
                                   : " (use bmm for batches)";
  ArgList args;
  args.push_back({"a", in.a, mat_rank, mat_hint});
  args.push_back({"b", in.b, grouped ? 3 : mat_rank, mat_hint});
  if (in.offs) args.push_back({"offs", in.offs, 1, " ((G) int32: each group's end row)"});
  if (in.bias) args.push_back({"bias", in.bias, 2, " or 1 ((N), (1,N), (M,1), (M,N), (1) or (1,1))"});
  if (in.scale_a) args.push_back({"scale_a", in.scale_a, 2, " ((1,1) or (M,1))"});
  if (in.scale_b) args.push_back({"scale_b", in.scale_b, 2, " ((1,1) or (1,N))"});
  args.push_back({"out", in.out, mat_rank, mat_hint});

  // 1. rank
  for (const Arg& arg : args)
    if (arg.view->rank != arg.rank)
      invalid(fmt::format("{}: {} must have rank {}{}, got rank {}", op, arg.name, arg.rank, arg.hint,
                          arg.view->rank));
  // 2. sizes, 3. strides
  for (const Arg& arg : args)
    for (int d = 0; d < arg.view->rank; ++d)
      if (arg.view->sizes[d] < 0)
        invalid(fmt::format("{}: {} has negative size {} in dim {} (sizes {})", op, arg.name, arg.view->sizes[d],
                            d, sizes_str(*arg.view)));
  for (const Arg& arg : args)
    for (int d = 0; d < arg.view->rank; ++d)
      if (arg.view->strides[d] < 0)
        invalid(fmt::format("{}: {}: negative strides are not supported (stride {} in dim {}, strides {})", op,
                            arg.name, arg.view->strides[d], d, strides_str(*arg.view)));

  // 4. shapes
  const TensorView& a = *in.a;
  const TensorView& b = *in.b;
  const TensorView& out = *in.out;
  const int o = batched ? 1 : 0;  // first matrix dim
  const int ob = batched || grouped ? 1 : 0;
  const int64_t m = a.sizes[o], k = a.sizes[o + 1], kb = b.sizes[ob], n = b.sizes[ob + 1];
  int64_t batch = 1;
  if (grouped) {
    batch = b.sizes[0];
    if (in.offs->sizes[0] != batch)
      invalid(fmt::format("grouped_mm: offs has {} elements but b has G = {} groups (b is GxKxN = {})",
                          in.offs->sizes[0], batch, sizes_str(b)));
    if (k != kb)
      invalid(fmt::format("grouped_mm: a is total_MxK = {} but b is {}: inner dimensions differ ({} vs {})",
                          sizes_str(a), sizes_str(b), k, kb));
    if (out.sizes[0] != m || out.sizes[1] != n)
      invalid(fmt::format("grouped_mm: out is {} but must be total_MxN = {}x{}", sizes_str(out), m, n));
    if (in.offs->dtype != DType::i32)
      invalid(fmt::format("grouped_mm: offs must be int32, got {}", to_string(in.offs->dtype)));
    if (batch > 1 && in.offs->strides[0] != 1)
      invalid(fmt::format("grouped_mm: offs must be contiguous (stride {}, expected 1)", in.offs->strides[0]));
  } else if (batched) {
    batch = out.sizes[0];
    if (a.sizes[0] != batch || b.sizes[0] != batch)
      invalid(fmt::format("bmm: batch sizes differ (a {}, b {}, out {}); a batch stride of 0 broadcasts, but the "
                          "batch size must still equal out's",
                          a.sizes[0], b.sizes[0], batch));
    if (k != kb)
      invalid(fmt::format("bmm: a is BxMxK = {} but b is {}: inner dimensions differ ({} vs {})", sizes_str(a),
                          sizes_str(b), k, kb));
    if (out.sizes[1] != m || out.sizes[2] != n)
      invalid(fmt::format("bmm: out is {} but must be BxMxN = {}x{}x{}", sizes_str(out), batch, m, n));
  } else {
    if (k != kb)
      invalid(fmt::format("{}: a is MxK = {} but b is {}: inner dimensions differ ({} vs {})", op, sizes_str(a),
                          sizes_str(b), k, kb));
    if (out.sizes[0] != m || out.sizes[1] != n)
      invalid(fmt::format("{}: out is {} but must be MxN = {}x{}", op, sizes_str(out), m, n));
  }
  GemmProblem p;
  p.op = in.op;
  p.batch = batch;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = canonical_operand(a);
  p.b = canonical_operand(b);
  p.out = canonical_operand(out);
  if (grouped) p.group_ends = static_cast<const int32_t*>(in.offs->data);
  if (in.bias) p.bias_kind = classify_bias(op, *in.bias, m, n, p.bias);
  if (in.op == Op::scaled_mm && in.bias && p.bias_kind != BiasKind::row_vector)
    invalid(fmt::format("scaled_mm: bias is {} but must be a vector of N = {} elements ((N) or (1,N))",
                        sizes_str(*in.bias), n));

  // 5. dtypes (and scaled_mm's layout and scaling rules)
  if (in.op == Op::scaled_mm) {
    // A rule of the op, not a gap in tmagemm: torch._scaled_mm refuses e5m2 x e5m2 for every backend.
    if (a.dtype == DType::e5m2 && b.dtype == DType::e5m2)
      invalid("scaled_mm: a and b cannot both be e5m2 (torch._scaled_mm's rule: multiplying two e5m2 matrices is "
              "not allowed; make a or b e4m3)");
    if (!is_fp8(a.dtype) || !is_fp8(b.dtype) || !is_out_dtype(out.dtype))
      unsupported(fmt::format("scaled_mm: dtypes a {} x b {} -> out {} are not supported (a and b must be e4m3 or "
                              "e5m2, not both e5m2; out bf16, f16 or f32)",
                              to_string(a.dtype), to_string(b.dtype), to_string(out.dtype)));
    if (in.scale_a->dtype != DType::f32)
      unsupported(fmt::format("scaled_mm: scale_a must be f32, got {}", to_string(in.scale_a->dtype)));
    if (in.scale_b->dtype != DType::f32)
      unsupported(fmt::format("scaled_mm: scale_b must be f32, got {}", to_string(in.scale_b->dtype)));
    if (in.bias && !is_16bit_float(in.bias->dtype))
      unsupported(fmt::format("scaled_mm: bias dtype {} is not supported (bias must be bf16 or f16)",
                              to_string(in.bias->dtype)));
    // NOTE: fp8 WGMMA reads both operands K-major, hence torch's layout rule for _scaled_mm.
    if (!p.a.empty() && p.a.major() != Major::row)
      invalid(fmt::format("scaled_mm: a must be row-major (K contiguous: stride 1 along K), got {} with strides {}",
                          sizes_str(a), strides_str(a)));
    if (!p.b.empty() && p.b.major() != Major::col)
      invalid(fmt::format("scaled_mm: b must be column-major (K contiguous: stride 1 along K), got {} with "
                          "strides {}",
                          sizes_str(b), strides_str(b)));
    // torch._scaled_mm's rule (16-byte rows of fp8 for the TMA/cuBLASLt kernels): K and N divisible by 16.
    if (k % 16 != 0) invalid(fmt::format("scaled_mm: K = {} must be divisible by 16", k));
    if (n % 16 != 0) invalid(fmt::format("scaled_mm: N = {} must be divisible by 16", n));
    if (in.bias && out.dtype == DType::f32)
      invalid("scaled_mm: bias is not supported with an f32 output (torch._scaled_mm's rule)");
    const TensorView& sa = *in.scale_a;
    const TensorView& sb = *in.scale_b;
    const bool single_a = sa.sizes[0] == 1 && sa.sizes[1] == 1, single_b = sb.sizes[0] == 1 && sb.sizes[1] == 1;
    if (single_a && single_b) {
      p.scale_kind = ScaleKind::tensorwise;
    } else if (sa.sizes[0] == m && sa.sizes[1] == 1 && sb.sizes[0] == 1 && sb.sizes[1] == n) {
      p.scale_kind = ScaleKind::rowwise;
      if (m > 1 && sa.strides[0] != 1)
        invalid(fmt::format("scaled_mm: scale_a (rowwise, Mx1) must be contiguous: stride along M is {}, "
                            "expected 1",
                            sa.strides[0]));
      if (n > 1 && sb.strides[1] != 1)
        invalid(fmt::format("scaled_mm: scale_b (rowwise, 1xN) must be contiguous: stride along N is {}, "
                            "expected 1",
                            sb.strides[1]));
    } else {
      invalid(fmt::format("scaled_mm: Invalid scaling configuration: scale_a is {} and scale_b is {}; expected both "
                          "1x1 (tensorwise) or scale_a Mx1 = {}x1 and scale_b 1xN = 1x{} (rowwise)",
                          sizes_str(sa), sizes_str(sb), m, n));
    }
    p.scale_a = static_cast<const float*>(sa.data);
    p.scale_b = static_cast<const float*>(sb.data);
  } else {
    const bool ab_ok = a.dtype == b.dtype && is_16bit_float(a.dtype);
    if (!ab_ok || !is_out_dtype(out.dtype))
      unsupported(fmt::format("{}: dtypes a {} x b {} -> out {} are not supported (a and b must both be bf16 or "
                              "both f16; out bf16, f16 or f32{})",
                              op, to_string(a.dtype), to_string(b.dtype), to_string(out.dtype),
                              is_fp8(a.dtype) || is_fp8(b.dtype) ? "; fp8 inputs go through scaled_mm" : ""));
    // The bias may have the inputs' type (torch's addmm with an out_dtype), out's, or f32.
    if (in.bias && in.bias->dtype != out.dtype && in.bias->dtype != a.dtype && in.bias->dtype != DType::f32)
      unsupported(fmt::format("addmm: bias dtype {} is not supported with inputs {} and out {} (bias must be {}{} or "
                              "f32)",
                              to_string(in.bias->dtype), to_string(a.dtype), to_string(out.dtype),
                              to_string(a.dtype),
                              out.dtype != a.dtype && out.dtype != DType::f32 ? std::string(", ") + to_string(out.dtype) : std::string()));
  }

  // 6. null data
  for (const Arg& arg : args)
    if (arg.view->data == nullptr && !is_empty(*arg.view))
      invalid(fmt::format("{}: {} data is null but it has sizes {}", op, arg.name, sizes_str(*arg.view)));

  // 7. pointer location and device
  for (const Arg& arg : args) {
    const TensorView& v = *arg.view;
    if (is_empty(v)) continue;
    const PointerInfo info = lookup_pointer(v.data, arg.name);
    if (!info.is_device)
      invalid(fmt::format("{}: {} data {} is host memory; tmagemm needs device memory", op, arg.name, v.data));
    if (info.device != v.device)
      invalid(fmt::format("{}: {} says device {} (TensorView.device) but its data lives on device {}", op,
                          arg.name, v.device, info.device));
  }
  for (const Arg& arg : args)
    if (arg.view->device != a.device)
      invalid(fmt::format("{}: tensors on different devices (a on {}, {} on {})", op, a.device, arg.name,
                          arg.view->device));
  p.device = a.device;

  // 8. byte extents
  int64_t extents[ArgList::kMax] = {};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Arg& arg = args[i];
    const int64_t e = byte_extent(*arg.view);
    if (e < 0 || reinterpret_cast<uintptr_t>(arg.view->data) > UINTPTR_MAX - static_cast<uintptr_t>(e))
      invalid(fmt::format("{}: {} byte extent overflows (sizes {}, strides {}, {} bytes per element)", op,
                          arg.name, sizes_str(*arg.view), strides_str(*arg.view), itemsize(arg.view->dtype)));
    extents[i] = e;
  }

  // 9. out must not overlap itself or an input
  for (int d = 0; d < out.rank; ++d)
    if (out.sizes[d] > 1 && out.strides[d] == 0)
      invalid(fmt::format("{}: out has stride 0 in dim {} (extent {}): several elements of out would share memory",
                          op, d, out.sizes[d]));
  const uintptr_t out_begin = reinterpret_cast<uintptr_t>(out.data);
  const int64_t out_extent = extents[args.size() - 1];
  const uintptr_t out_end = out_begin + static_cast<uintptr_t>(out_extent);
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    // addmm in place: out may be exactly bias (same memory, dtype and strides): each element of bias is read
    // before the same thread writes that element of out.
    const TensorView& v = *args[i].view;
    if (in.op == Op::addmm && std::string_view(args[i].name) == "bias" && v.data == out.data &&
        v.dtype == out.dtype && v.rank == out.rank && v.sizes[0] == out.sizes[0] && v.sizes[1] == out.sizes[1] &&
        v.strides[0] == out.strides[0] && v.strides[1] == out.strides[1])
      continue;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(args[i].view->data);
    const uintptr_t end = begin + static_cast<uintptr_t>(extents[i]);
    if (extents[i] > 0 && out_extent > 0 && begin < out_end && out_begin < end)
      invalid(fmt::format("{}: out overlaps {} (out bytes [{:#x}, {:#x}), {} bytes [{:#x}, {:#x}))", op,
                          args[i].name, out_begin, out_end, args[i].name, begin, end));
  }
  return p;
}

// The last pattern that compiled: a call with the same choice_regex (the usual case) is not compiled again.
std::mutex g_regex_mutex;
std::string g_last_valid_regex;

void check_choice_regex(const std::string& pattern) {
  if (pattern.empty()) return;
  {
    std::lock_guard<std::mutex> lock(g_regex_mutex);
    if (pattern == g_last_valid_regex) return;
  }
  try {
    std::regex compiled(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    invalid(fmt::format("Options::choice_regex = '{}' is not a valid ECMAScript regular expression ({})", pattern,
                        e.what()));
  }
  std::lock_guard<std::mutex> lock(g_regex_mutex);
  g_last_valid_regex = pattern;
}

std::string describe_operand(const Operand& o, bool batched, int64_t batch) {
  std::string s;
  if (batched) s += fmt::format("{}x", batch);
  s += fmt::format("{}x{} {}", o.rows, o.cols, to_string(o.major()));
  switch (o.major()) {
    case Major::row:
      if (o.row_stride != o.cols) s += fmt::format(" ld={}", o.row_stride);
      break;
    case Major::col:
      if (o.col_stride != o.rows) s += fmt::format(" ld={}", o.col_stride);
      break;
    case Major::strided: s += fmt::format(" strides=({}, {})", o.row_stride, o.col_stride); break;
  }
  if (batched && batch > 1 && o.batch_stride == 0) s += " bcast";
  return s;
}

const char* to_string(BiasKind kind) {
  switch (kind) {
    case BiasKind::none: return "none";
    case BiasKind::row_vector: return "row_vector";
    case BiasKind::col_vector: return "col_vector";
    case BiasKind::full: return "full";
  }
  return "?";
}

}  // namespace

std::string GemmProblem::describe() const {
  const bool batched = op == Op::bmm;
  std::string in_dtype = a.dtype == b.dtype ? to_string(a.dtype)
                                            : fmt::format("{}x{}", to_string(a.dtype), to_string(b.dtype));
  std::string s = fmt::format("{}({}, {}) {}->{}", to_string(op), describe_operand(a, batched, batch),
                              describe_operand(b, batched || op == Op::grouped_mm, batch), in_dtype,
                              to_string(out.dtype));
  const std::string out_desc = describe_operand(out, batched, batch);
  if (out.major() != Major::row || out_desc.find("ld=") != std::string::npos) s += " out " + out_desc;
  if (bias_kind != BiasKind::none) s += fmt::format(" bias={} {}", to_string(bias_kind), to_string(bias.dtype));
  if (op == Op::addmm) {
    if (beta != 1.0f) s += fmt::format(" beta={}", beta);
    if (alpha != 1.0f) s += fmt::format(" alpha={}", alpha);
    if (act != Activation::none) s += fmt::format(" act={}", to_string(act));
  }
  if (op == Op::scaled_mm) {
    s += scale_kind == ScaleKind::rowwise ? " scales=rowwise" : " scales=tensorwise";
    if (fast_accum) s += " fast_accum";
  }
  return s;
}

void validate_options(const Options& options) {
  if (options.sm_carveout < 0)
    invalid(fmt::format("Options::sm_carveout = {} is not valid: it counts the SMs left free for other work and "
                        "must be >= 0",
                        options.sm_carveout));
  check_choice_regex(options.choice_regex);
}

GemmProblem make_mm_problem(const TensorView& a, const TensorView& b, const TensorView& out) {
  Inputs in;
  in.op = Op::mm;
  in.a = &a;
  in.b = &b;
  in.out = &out;
  return build(in);
}

GemmProblem make_addmm_problem(const TensorView& bias, const TensorView& a, const TensorView& b,
                               const TensorView& out, float beta, float alpha, Activation act) {
  Inputs in;
  in.op = Op::addmm;
  in.a = &a;
  in.b = &b;
  in.out = &out;
  in.bias = &bias;
  GemmProblem p = build(in);
  p.beta = beta;
  p.alpha = alpha;
  p.act = act;
  return p;
}

GemmProblem make_scaled_mm_problem(const TensorView& a, const TensorView& b, const TensorView& scale_a,
                                   const TensorView& scale_b, const TensorView* bias, const TensorView& out,
                                   bool use_fast_accum) {
  Inputs in;
  in.op = Op::scaled_mm;
  in.a = &a;
  in.b = &b;
  in.out = &out;
  in.bias = bias;
  in.scale_a = &scale_a;
  in.scale_b = &scale_b;
  GemmProblem p = build(in);
  p.fast_accum = use_fast_accum;
  return p;
}

GemmProblem make_grouped_mm_problem(const TensorView& a, const TensorView& b, const TensorView& offs,
                                    const TensorView& out) {
  Inputs in;
  in.op = Op::grouped_mm;
  in.a = &a;
  in.b = &b;
  in.offs = &offs;
  in.out = &out;
  return build(in);
}

GemmProblem make_bmm_problem(const TensorView& a, const TensorView& b, const TensorView& out) {
  Inputs in;
  in.op = Op::bmm;
  in.a = &a;
  in.b = &b;
  in.out = &out;
  return build(in);
}

namespace {
// kRoutingSeed: the representative draw (tuning_group_ends); draw r of tuning_group_routings uses kRoutingSeed + r.
constexpr std::uint64_t kRoutingSeed = 0x6d6f65;

std::vector<int32_t> routing_of(int64_t m, int64_t groups, std::uint64_t seed) {
  std::vector<double> w(static_cast<std::size_t>(std::max<int64_t>(groups, 0)));
  double total = 0;
  for (std::size_t g = 0; g < w.size(); ++g) {
    const double x = static_cast<double>(g + 1) * 0.6180339887498949;
    w[g] = 0.5 + (x - std::floor(x));
    total += w[g];
  }
  std::vector<int32_t> ends(w.size());
  if (w.empty()) return ends;
  if (m <= kSampledTokensPerGroup * groups) {
    // A sparse routing: each token goes to one group at random in proportion to the weights (a fixed seed; the
    // generator's raw 64-bit output and an inverse CDF, so every platform draws the same groups).
    std::vector<double> cdf(w.size());
    double sum = 0;
    for (std::size_t g = 0; g < w.size(); ++g) cdf[g] = (sum += w[g]) / total;
    std::vector<int64_t> rows(w.size(), 0);
    std::mt19937_64 rng(seed);
    for (int64_t t = 0; t < m; ++t) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
      const auto g = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
      ++rows[std::min(static_cast<std::size_t>(g), w.size() - 1)];
    }
    int64_t end = 0;
    for (std::size_t g = 0; g < w.size(); ++g) ends[g] = static_cast<int32_t>(end += rows[g]);
    return ends;
  }
  double sum = 0;
  for (std::size_t g = 0; g < w.size(); ++g) {
    sum += w[g];
    ends[g] = g + 1 == w.size() ? static_cast<int32_t>(m) : static_cast<int32_t>(std::llround(sum / total * m));
  }
  return ends;
}
}  // namespace

// The scores of every config call these for the same class (a sparse class draws up to 16 tokens a group, ~60 us at
// 256 groups): each class is routed once per process, into one cache shared by both readers. `use` reads the class's
// draws under the lock.
namespace {
using Routings = std::vector<std::vector<int32_t>>;
struct RoutingCache {
  std::mutex mutex;
  std::map<std::pair<int64_t, int64_t>, Routings> routed;
};
RoutingCache& routing_cache() {
  static RoutingCache cache;
  return cache;
}

template <class Use>
auto with_routings(int64_t m, int64_t groups, Use use) {
  RoutingCache& c = routing_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.routed.find({m, groups});
  if (it == c.routed.end()) {
    if (c.routed.size() >= 256) c.routed.clear();  // bounded: a process meets few grouped shape classes
    Routings draws = {routing_of(m, groups, kRoutingSeed)};
    if (m <= kSampledTokensPerGroup * groups)
      for (int r = 1; r < kTuningRoutings; ++r) {
        std::vector<int32_t> draw = routing_of(m, groups, kRoutingSeed + r);
        // (one group, or no rows: every draw is the same routing, timed once)
        if (std::find(draws.begin(), draws.end(), draw) == draws.end()) draws.push_back(std::move(draw));
      }
    it = c.routed.emplace(std::make_pair(m, groups), std::move(draws)).first;
  }
  return use(it->second);
}
}  // namespace

std::vector<std::vector<int32_t>> tuning_group_routings(int64_t m, int64_t groups) {
  return with_routings(m, groups, [](const std::vector<std::vector<int32_t>>& draws) { return draws; });
}

std::vector<int32_t> tuning_group_ends(int64_t m, int64_t groups) {
  return with_routings(m, groups, [](const std::vector<std::vector<int32_t>>& draws) { return draws.front(); });
}

}  // namespace tmagemm
