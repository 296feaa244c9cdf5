// epilogue_params.hpp — the host mirror of kernels::EpilogueParams (kernels/epilogue.cuh), filled from a
// problem's output operand. Shared by every backend whose kernels use epilogue.cuh.
#pragma once
#include <cstdint>

#include "problem/problem.hpp"

namespace tmagemm::choices {

// Same layout as kernels::EpilogueParams.
struct EpilogueParamsHost {
  void* out;
  long long row_stride;
  long long col_stride;
  long long batch_stride;
  int vec2;  // adjacent columns may be stored as one 4-byte (16-bit) / 8-byte (f32) access
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
  return ep;
}

}  // namespace tmagemm::choices
