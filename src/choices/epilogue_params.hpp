// epilogue_params.hpp — the host side of the epilogue stage (kernels/epilogue.cuh), shared by every backend whose
// kernels use it: the EpilogueSpec (what the kernel is compiled with: bias type, activation, alpha, how the bias
// broadcasts, scaled_mm's scale mode) and the per-launch EpilogueParams (output, alpha, beta, bias pointer and
// broadcast strides, scale pointers).
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "problem/problem.hpp"

namespace tmagemm::choices {

// The compile-time part of an epilogue: becomes `using Epi = tmagemm::kernels::Epilogue<bias, act, alpha[, bcast[,
// scale]]>;`
// in a kernel's config (render) and part of its name, its kernel-cache key and the backends' loaded-kernel keys
// (code).
struct EpilogueSpec {
  int bias = -1;     // -1 none (or beta = 0: bias values are never read), 0 bf16, 1 f16, 2 f32
  int act = 0;       // tmagemm::Activation as int
  bool alpha = false;  // alpha != 1
  int bcast = 0;     // with a bias: 0 any (M,N) strides, 1 row vector (1,N), 2 column vector (M,1)
  int scale = 0;     // scaled_mm: 0 none, 1 tensorwise, 2 rowwise

  bool identity() const { return bias < 0 && act == 0 && !alpha && scale == 0; }
  int code() const { return (bias + 1) | act << 2 | (alpha ? 1 : 0) << 5 | bcast << 6 | scale << 8; }
  // "" for the identity (mm kernels keep their names), else "_e<bias><act><alpha>", "r" (row vector) or "c"
  // (column vector), and "_st" (tensorwise) or "_sr" (rowwise scales).
  std::string suffix() const {
    if (identity()) return "";
    return fmt::format("_e{}{}{}{}{}", bias + 1, act, alpha ? 1 : 0, bcast == 1 ? "r" : bcast == 2 ? "c" : "",
                       scale == 1 ? "_st" : scale == 2 ? "_sr" : "");
  }
  // The template's fourth and fifth arguments are left out when 0 (their defaults), so that kernels without a
  // broadcast vector or scales keep their source text and cache keys.
  std::string render() const {
    return fmt::format("  using Epi = tmagemm::kernels::Epilogue<{}, {}, {}{}{}>;\n", bias, act, alpha ? "true" : "false",
                       bcast || scale ? fmt::format(", {}", bcast) : std::string(),
                       scale ? fmt::format(", {}", scale) : std::string());
  }
};

inline int bias_type_code(DType d) { return d == DType::bf16 ? 0 : d == DType::f16 ? 1 : 2; }

inline EpilogueSpec epilogue_spec(const GemmProblem& p) {
  EpilogueSpec e;
  if (p.op == Op::scaled_mm) {  // (a @ b) * scales (+ bias (N), added unscaled)
    e.scale = p.scale_kind == ScaleKind::rowwise ? 2 : 1;
    if (p.bias_kind != BiasKind::none) {
      e.bias = bias_type_code(p.bias.dtype);
      e.bcast = 1;
    }
    return e;
  }
  if (p.op != Op::addmm) return e;
  if (p.bias_kind != BiasKind::none && p.beta != 0.0f) {
    e.bias = bias_type_code(p.bias.dtype);
    e.bcast = p.bias_kind == BiasKind::row_vector ? 1 : p.bias_kind == BiasKind::col_vector ? 2 : 0;
  }
  e.act = static_cast<int>(p.act);
  e.alpha = p.alpha != 1.0f;
  return e;
}

// A few epilogues for `tmagemm compile-check` to compile on one config per backend (every activation, each bias type).
inline std::vector<EpilogueSpec> epilogue_samples() {
  return {{0, 0, false, 1}, {0, 1, false, 1}, {0, 2, false, 0}, {0, 3, false, 1},
          {1, 4, true, 2},  {2, 5, false, 1}, {2, 0, false, 0},  {-1, 3, true}};
}

// scaled_mm's epilogues for compile-check: tensorwise, rowwise, rowwise with a bf16 bias (N), tensorwise with an f16 one.
inline std::vector<EpilogueSpec> scaled_mm_epilogue_samples() {
  return {{.scale = 1}, {.scale = 2}, {.bias = 0, .bcast = 1, .scale = 2}, {.bias = 1, .bcast = 1, .scale = 1}};
}

// Same layout as kernels::EpilogueParams.
struct EpilogueParamsHost {
  void* out;
  long long row_stride;
  long long col_stride;
  long long batch_stride;
  int vec2;  // adjacent columns may be stored as one 4-byte (16-bit) / 8-byte (f32) access
  float alpha, beta;
  const void* bias;
  long long bias_rs, bias_cs, bias_bs;
  int bias_vec2;  // a row-vector bias's pairs (even c, c + 1) may be read as one 4-byte (16-bit) / 8-byte (f32) access
  const float* scale_a;
  const float* scale_b;
  const int* group_ends;  // grouped_mm: the groups' int32 end rows (GemmProblem::group_ends)
  float* sk_partials;      // stream-K configs: partial sums and arrival counters in the workspace (persistent_tma.cpp)
  unsigned* sk_counters;
  int sk_seg_stride;
  int l2_stream;  // persistent TMA: bit 0 A, bit 1 B read once, loaded with an L2 evict_first policy
};

inline EpilogueParamsHost epilogue_params(const GemmProblem& p) {
  EpilogueParamsHost ep{};
  ep.out = const_cast<void*>(p.out.data);
  ep.row_stride = p.out.row_stride;
  ep.col_stride = p.out.col_stride;
  ep.batch_stride = p.out.batch_stride;
  const std::size_t elem = itemsize(p.out.dtype);
  const auto addr = reinterpret_cast<std::uintptr_t>(p.out.data);
  ep.vec2 = p.out.col_stride == 1 && p.out.row_stride % 2 == 0 && p.out.batch_stride % 2 == 0 &&
            addr % (2 * elem) == 0;
  ep.alpha = p.alpha;
  ep.beta = p.beta;
  if ((p.op == Op::addmm || p.op == Op::scaled_mm) && p.bias_kind != BiasKind::none) {
    // The bias operand's broadcast dimensions already have stride 0 (validation: classify_bias).
    ep.bias = p.bias.data;
    ep.bias_rs = p.bias.row_stride;
    ep.bias_cs = p.bias.col_stride;
    ep.bias_bs = p.bias.batch_stride;
    const std::size_t bias_elem = itemsize(p.bias.dtype);
    ep.bias_vec2 = p.bias_kind == BiasKind::row_vector && p.bias.col_stride == 1 && p.bias.batch_stride % 2 == 0 &&
                   reinterpret_cast<std::uintptr_t>(p.bias.data) % (2 * bias_elem) == 0;
  }
  if (p.op == Op::scaled_mm) {
    ep.scale_a = p.scale_a;
    ep.scale_b = p.scale_b;
  }
  return ep;
}

}  // namespace tmagemm::choices
