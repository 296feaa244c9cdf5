// fill.cuh — the K = 0 case of src/dispatch/dispatch.cpp: zeros into an output of any strides (for outputs that
// cudaMemset2D cannot describe: no unit stride), and addmm's out = act(beta * bias) (the epilogue stage applied to a
// zero product). One thread per element, grid-stride loop.
#pragma once
#include "epilogue.cuh"

namespace tmagemm::kernels {

// Elem: the element type's size in bytes (2 or 4). Element (b, r, c) lives at b*bs + r*rs + c*cs elements from base.
template <int ElemBytes>
__global__ void zero_strided(void* base, long long batch, long long rows, long long cols, long long bs, long long rs,
                             long long cs) {
  using T = unsigned int;
  const long long total = batch * rows * cols;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const long long c = i % cols, r = (i / cols) % rows, b = i / (rows * cols);
    const long long off = b * bs + r * rs + c * cs;
    if constexpr (ElemBytes == 4)
      static_cast<T*>(base)[off] = 0u;
    else
      static_cast<unsigned short*>(base)[off] = 0;
  }
}

// out(b, r, c) = Epi(0) for every element: OutType 0 bf16, 1 f16, 2 f32 (epilogue.cuh's OutType).
template <int Out, class Epi>
__global__ void epilogue_only(const EpilogueParams p, long long batch, int rows, int cols) {
  const long long total = batch * rows * cols;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int c = static_cast<int>(i % cols), r = static_cast<int>((i / cols) % rows);
    const int b = static_cast<int>(i / (static_cast<long long>(rows) * cols));
    store_one<Out>(p.out, b * p.batch_stride + r * p.row_stride + c * p.col_stride, Epi{}(p, 0.0f, b, r, c));
  }
}

}  // namespace tmagemm::kernels
