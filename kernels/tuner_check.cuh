// tuner_check.cuh — the tuner's own inputs and its accuracy check (src/tune/benchmark.cpp).
// Contract:
// - fill_random writes finite pseudo-random values (about normal, mean 0, sd 1; never all zero) into every
//   element of a scratch operand, so that tuning never reads the user's tensors (their values may be Inf/NaN).
// - reference_samples computes, at n sampled output positions, the exact-ish value (fp64 accumulation of the
//   products) and the "floor" value: fp32 accumulation in K order, rounded once to the output type. The tuner
//   drops a choice whose error against the fp64 value exceeds the floor's error by more than its tolerance.
// - gather_samples reads the same positions of an output as floats.
// - l2_flush_read reads every 16 bytes of a buffer larger than L2, so that L2 holds clean lines of it afterwards
//   (the read flush: `tmagemm bench --flush read` and the tuner's second timing of memory-bound problems). The XOR
//   of the loads decides a store that practically never happens, so that the loads are not optimised away.
#pragma once
#include <cuda/std/cstdint>

#include "epilogue.cuh"
#include "reference.cuh"

namespace tmagemm::kernels {

// Type: 0 bf16, 1 f16 (16-bit elements).
template <int Type>
__device__ inline cuda::std::uint16_t to_bits16(float f) {
  if constexpr (Type == 0) {
    const cuda::std::uint32_t u = __float_as_uint(f);
    return static_cast<cuda::std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // round to nearest even
  } else {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
  }
}

__device__ inline cuda::std::uint64_t mix64(cuda::std::uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// count elements of Type (0 bf16, 1 f16, 2 e4m3, 3 e5m2, 4 f32) from `base`; element i depends only on (seed, i).
template <int Type>
__global__ void fill_random(void* base, long long count, unsigned long long seed) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const cuda::std::uint64_t r = mix64(seed ^ mix64(static_cast<cuda::std::uint64_t>(i)));
    // Box-Muller from two 24-bit uniforms in (0, 1].
    const float u1 = (static_cast<float>(r & 0xffffff) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((r >> 24) & 0xffffff) * (1.0f / 16777216.0f);
    const float v = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    if constexpr (Type == 4) {
      static_cast<float*>(base)[i] = v;
    } else if constexpr (Type == 2 || Type == 3) {
      cuda::std::uint16_t pair;  // cvt packs two values; the low byte is the second operand's
      if constexpr (Type == 2)
        asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(v));
      else
        asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(v));
      static_cast<cuda::std::uint8_t*>(base)[i] = static_cast<cuda::std::uint8_t>(pair & 0xFF);
    } else {
      static_cast<cuda::std::uint16_t*>(base)[i] = to_bits16<Type>(v);
    }
  }
}

// OutType: 0 bf16, 1 f16, 4 f32.
template <int OutType>
__device__ inline float round_to_out(float f) {
  if constexpr (OutType == 4) {
    return f;
  } else {
    const cuda::std::uint16_t bits = to_bits16<OutType>(f);
    return load_as_float<OutType>(&bits, 0);
  }
}

// AType, BType: load_as_float's codes (fp8 pairs may differ). Epi: the problem's epilogue stage (epilogue.cuh),
// applied to both values (the tuner's scratch bias and scales are in ep); with an epilogue the exact value is the fp64
// sum rounded to fp32, then the epilogue in fp32.
template <int AType, int BType, int OutType, class Epi>
__global__ void reference_samples(const void* a, const void* b, int K, long long a_rs, long long a_cs, long long a_bs,
                                  long long b_rs, long long b_cs, long long b_bs, const int* batches, const int* rows,
                                  const int* cols, int n, double* exact, float* floor, const EpilogueParams ep) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const long long bt = batches[i], m = rows[i], c = cols[i];
  double acc64 = 0.0;
  float acc32 = 0.0f;
  for (int k = 0; k < K; ++k) {
    const float x = load_as_float<AType>(a, bt * a_bs + m * a_rs + k * a_cs);
    const float y = load_as_float<BType>(b, bt * b_bs + k * b_rs + c * b_cs);
    acc64 = fma(static_cast<double>(x), static_cast<double>(y), acc64);
    acc32 = fmaf(x, y, acc32);
  }
  if constexpr (Epi::kIdentity) {
    exact[i] = acc64;
    floor[i] = round_to_out<OutType>(acc32);
  } else {
    const int ib = static_cast<int>(bt), im = static_cast<int>(m), ic = static_cast<int>(c);
    exact[i] = Epi{}(ep, static_cast<float>(acc64), ib, im, ic);
    floor[i] = round_to_out<OutType>(Epi{}(ep, acc32, ib, im, ic));
  }
}

template <int OutType>
__global__ void gather_samples(const void* base, long long rs, long long cs, long long bs, const int* batches,
                               const int* rows, const int* cols, int n, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const long long off = batches[i] * bs + rows[i] * rs + cols[i] * cs;
  if constexpr (OutType == 4)
    out[i] = static_cast<const float*>(base)[off];
  else
    out[i] = load_as_float<OutType>(base, off);
}

__global__ void l2_flush_read(const uint4* p, unsigned long long n, unsigned* sink) {
  unsigned acc = 0;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    const uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u && threadIdx.x == 0) *sink = acc;
}

}  // namespace tmagemm::kernels
