// fill.cuh — writes zeros into an output of any strides (the K = 0 case of src/dispatch/dispatch.cpp, for outputs
// that cudaMemset2D cannot describe: no unit stride). One thread per element, grid-stride loop.
#pragma once

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

}  // namespace tmagemm::kernels
