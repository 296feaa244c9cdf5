// reference.cuh — a deliberately simple GEMM used to check the real kernels (GPU tests, `tmagemm bench`).
// One thread per output element, fp32 accumulation in K order, any strides (elements), 16-bit or fp8 inputs,
// fp32 output (dense, row-major, batch-major). Correct by inspection; speed is not a goal.
#pragma once
#include <cuda/std/cstdint>

namespace tmagemm::kernels {

// InType: 0 bf16, 1 f16, 2 e4m3, 3 e5m2.
template <int InType>
__device__ inline float load_as_float(const void* base, long long offset) {
  if constexpr (InType == 0) {
    const cuda::std::uint32_t bits = static_cast<const cuda::std::uint16_t*>(base)[offset];
    return __uint_as_float(bits << 16);
  } else if constexpr (InType == 1) {
    const unsigned short h = static_cast<const unsigned short*>(base)[offset];
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
  } else {
    const unsigned short byte = static_cast<const unsigned char*>(base)[offset];
    unsigned int pair;  // cvt converts a packed pair of fp8 values to f16x2
    if constexpr (InType == 2)
      asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(pair) : "h"(byte));
    else
      asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(pair) : "h"(byte));
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<unsigned short>(pair & 0xFFFF)));
    return f;
  }
}

template <int InType>
__global__ void reference_gemm(const void* a, const void* b, float* out, int M, int N, int K, int batch,
                               long long a_rs, long long a_cs, long long a_bs, long long b_rs, long long b_cs,
                               long long b_bs) {
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long total = static_cast<long long>(M) * N * batch;
  if (idx >= total) return;
  const int n = static_cast<int>(idx % N);
  const int m = static_cast<int>((idx / N) % M);
  const int bt = static_cast<int>(idx / (static_cast<long long>(M) * N));
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    const float x = load_as_float<InType>(a, bt * a_bs + m * a_rs + k * a_cs);
    const float y = load_as_float<InType>(b, bt * b_bs + k * b_rs + n * b_cs);
    acc = fmaf(x, y, acc);
  }
  out[idx] = acc;
}

}  // namespace tmagemm::kernels
