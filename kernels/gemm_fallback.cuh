// gemm_fallback.cuh — a tiled tensor-core GEMM that takes what TMA cannot: any strides (both non-unit too),
// any 2-byte-aligned base, any M, N, K >= 1. bf16/f16 inputs, bf16/f16/f32 output with any strides.
//
// One CTA computes a BM x BN tile of out (grid: N tiles, M tiles, batch). Each BK step, all threads copy the A
// tile (BM x BK) and B tile (as BN x BK, i.e. transposed) into shared memory with K contiguous, zero-filling
// outside the matrix; warps then run ldmatrix + mma.sync m16n8k16 (f32 accumulators) over their WM x WN part.
// Global reads go in 8-element chunks along whichever dimension of the operand has unit stride: a chunk that
// is in bounds and 16-byte aligned is one 16-byte load, any other chunk is read element by element, so odd
// leading dimensions and offset bases cost speed, never correctness. Operands with no unit stride are read
// element by element along K.
// Epilogue: epilogue.cuh's store_one/store_two (bounds-checked, any output strides).
//
// Config (template argument, rendered by src/choices/fallback.cpp):
//   kBM, kBN, kBK, kWarpsM, kWarpsN, kF16, kOut, kAMode, kBMode
//   kAMode / kBMode: 0 = unit stride along K, 1 = unit stride along M (A) / N (B), 2 = neither.
#pragma once
#include <cuda/std/cstdint>

#include "epilogue.cuh"
#include "ptx/mma.cuh"
#include "ptx/sync.cuh"

namespace tmagemm::kernels {

// Mirrored on the host (src/choices/fallback.cpp); keep the layout identical.
struct FallbackParams {
  const void* a;
  const void* b;
  long long a_rs, a_cs, a_bs;  // A(m, k) at a + m*a_rs + k*a_cs (+ batch*a_bs), elements
  long long b_rs, b_cs, b_bs;  // B(k, n) at b + k*b_rs + n*b_cs
  int M, N, K;
};

// Copies rows [r0, r0 + R) x k [k0, k0 + BK) of an operand seen as R_total x K with element (r, k) at
// g + r*sr + k*sk into s[R][BK + kPad] (k contiguous), zero outside. Mode as in the file comment (0: sk == 1,
// 1: sr == 1, 2: neither).
template <int R, int BK, int kPad, int kThreads, int Mode>
__device__ inline void load_tile(const cuda::std::uint16_t* g, long long sr, long long sk, int r0, int k0,
                                 int R_total, int K, cuda::std::uint16_t* s) {
  using cuda::std::uint16_t;
  constexpr int kLd = BK + kPad;
  if constexpr (Mode == 0) {
    constexpr int kChunks = R * BK / 8;
    for (int c = threadIdx.x; c < kChunks; c += kThreads) {
      const int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
      const int gr = r0 + r, gk = k0 + kc;
      uint16_t* dst = s + r * kLd + kc;
      const uint16_t* p = g + static_cast<long long>(gr) * sr + gk;
      if (gr < R_total && gk + 8 <= K && (reinterpret_cast<cuda::std::uintptr_t>(p) & 15) == 0) {
        *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(p);
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) dst[j] = (gr < R_total && gk + j < K) ? p[j] : uint16_t(0);
      }
    }
  } else if constexpr (Mode == 1) {
    constexpr int kChunks = R * BK / 8;
    for (int c = threadIdx.x; c < kChunks; c += kThreads) {
      const int k = c / (R / 8), rc = (c % (R / 8)) * 8;
      const int gr = r0 + rc, gk = k0 + k;
      const uint16_t* p = g + gr + static_cast<long long>(gk) * sk;
      uint16_t v[8];
      if (gk < K && gr + 8 <= R_total && (reinterpret_cast<cuda::std::uintptr_t>(p) & 15) == 0) {
        const uint4 q = *reinterpret_cast<const uint4*>(p);
        const uint16_t* h = reinterpret_cast<const uint16_t*>(&q);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = h[j];
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = (gk < K && gr + j < R_total) ? p[j] : uint16_t(0);
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) s[(rc + j) * kLd + k] = v[j];
    }
  } else {
    for (int e = threadIdx.x; e < R * BK; e += kThreads) {
      const int r = e / BK, k = e % BK;
      const int gr = r0 + r, gk = k0 + k;
      s[r * kLd + k] = (gr < R_total && gk < K) ? g[static_cast<long long>(gr) * sr + static_cast<long long>(gk) * sk]
                                               : uint16_t(0);
    }
  }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kWarpsM* Cfg::kWarpsN * 32)
    gemm_fallback(const FallbackParams p, const EpilogueParams ep) {
  using cuda::std::uint16_t;
  using cuda::std::uint32_t;
  constexpr int BM = Cfg::kBM, BN = Cfg::kBN, BK = Cfg::kBK;
  constexpr int kThreads = Cfg::kWarpsM * Cfg::kWarpsN * 32;
  constexpr int WM = BM / Cfg::kWarpsM, WN = BN / Cfg::kWarpsN;
  constexpr int MI = WM / 16, NI = WN / 8;
  constexpr int kPad = 8;  // 16 bytes: rows stay 16-byte aligned for ldmatrix and 8 rows hit 8 bank groups
  constexpr int kLd = BK + kPad;
  static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "whole m16 / n16 / k16 steps per warp");
  static_assert(BM % 8 == 0 && BN % 8 == 0, "8-element load chunks");

  __shared__ __align__(16) uint16_t sA[BM * kLd];
  __shared__ __align__(16) uint16_t sB[BN * kLd];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / Cfg::kWarpsN, wn = warp % Cfg::kWarpsN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, batch = blockIdx.z;
  const uint16_t* a = static_cast<const uint16_t*>(p.a) + batch * p.a_bs;
  const uint16_t* b = static_cast<const uint16_t*>(p.b) + batch * p.b_bs;

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  for (int k0 = 0; k0 < p.K; k0 += BK) {
    // A as (m, k); B as its transpose (n, k): element (n, k) = b + k*b_rs + n*b_cs.
    load_tile<BM, BK, kPad, kThreads, Cfg::kAMode>(a, p.a_rs, p.a_cs, m0, k0, p.M, p.K, sA);
    load_tile<BN, BK, kPad, kThreads, Cfg::kBMode>(b, p.b_cs, p.b_rs, n0, k0, p.N, p.K, sB);
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      uint32_t af[MI][4];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        const int r = wm * WM + i * 16 + lane % 16, c = ks * 16 + (lane / 16) * 8;
        ptx::ldmatrix_x4(ptx::smem_u32(sA + r * kLd + c), af[i][0], af[i][1], af[i][2], af[i][3]);
      }
#pragma unroll
      for (int j = 0; j < NI; j += 2) {
        const int r = wn * WN + j * 8 + (lane % 8) + 8 * (lane / 16), c = ks * 16 + 8 * ((lane / 8) % 2);
        uint32_t b0, b1, b2, b3;  // n-block j: (b0, b1); n-block j + 1: (b2, b3)
        ptx::ldmatrix_x4(ptx::smem_u32(sB + r * kLd + c), b0, b1, b2, b3);
#pragma unroll
        for (int i = 0; i < MI; ++i) {
          ptx::mma_m16n8k16<Cfg::kF16>(acc[i][j], af[i], b0, b1);
          ptx::mma_m16n8k16<Cfg::kF16>(acc[i][j + 1], af[i], b2, b3);
        }
      }
    }
    __syncthreads();
  }

  // m16n8 accumulator: c0, c1 at (row g, cols 2t, 2t+1), c2, c3 at row g + 8 (g = lane / 4, t = lane % 4).
  void* base = ep.out;
  const long long batch_off = static_cast<long long>(batch) * ep.batch_stride;
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = m0 + wm * WM + i * 16 + lane / 4 + 8 * h;
        const int c = n0 + wn * WN + j * 8 + 2 * (lane % 4);
        if (r >= p.M) continue;
        const long long off = batch_off + r * ep.row_stride + c * ep.col_stride;
        const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
        if (ep.vec2 && c + 1 < p.N) {
          store_two<Cfg::kOut>(base, off, v0, v1);
        } else {
          if (c < p.N) store_one<Cfg::kOut>(base, off, v0);
          if (c + 1 < p.N) store_one<Cfg::kOut>(base, off + ep.col_stride, v1);
        }
      }
}

}  // namespace tmagemm::kernels
