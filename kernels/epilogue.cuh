// epilogue.cuh — from fp32 accumulators to the output tensor.
//
// Contract:
//   takes   one warpgroup's m64nN accumulator fragment (float d[N/2] per thread, wgmma layout:
//           row = 16*warp + lane/4 + 8*((i/2)%2), col = 8*(i/4) + 2*(lane%4) + i%2), the tile origin, the
//           problem extents and EpilogueParams (output base, strides in elements, batch stride);
//   does    convert to the output type (bf16 / f16 with round-to-nearest-even, or f32) and store;
//   writes  exactly the in-bounds elements (row < M, col < N) and nothing else, for any output strides;
//   store_fragment_tma: the same fragment through shared memory and TMA stores (16-bit outputs whose tensor
//           TMA can address). The staging buffer holds Slots [64 rows][64 cols] 128B-swizzled blocks; the
//           fragment goes out in 64-column chunks, Slots at a time (a 32-column tail, for N = 224, goes through
//           store_fragment: a 64-wide TMA box would write the next tile's columns). Before refilling the buffer
//           the issuing thread waits until the previous stores have READ it (not until they are written), so
//           stores of one tile drain while the next tile's MMAs run; with Slots = N / 64 a fragment never waits
//           on its own stores.
//           The TMA store clips rows >= M and columns >= N.
//   assumes p.vec2 != 0 only when the output is row-major with a 4-byte (16-bit types) or 8-byte (f32)
//           aligned base and even row/batch strides — the host decides (uniform branch in the kernel).
#pragma once
#include <cuda/ptx>
#include <cuda/std/cstdint>

#include "ptx/sync.cuh"

namespace tmagemm::kernels {

enum OutType : int { kOutBf16 = 0, kOutF16 = 1, kOutF32 = 2 };

// Mirrored on the host (src/choices/persistent_tma.cpp); keep the layout identical.
struct EpilogueParams {
  void* out;
  long long row_stride;
  long long col_stride;
  long long batch_stride;
  int vec2;  // adjacent column pairs may be stored as one 4/8-byte access
};

template <int Out>
__device__ inline void store_one(void* base, long long offset, float v) {
  if constexpr (Out == kOutF32) {
    static_cast<float*>(base)[offset] = v;
  } else if constexpr (Out == kOutBf16) {
    const cuda::std::uint32_t p = ptx::pack_bf16x2(v, 0.0f);
    static_cast<cuda::std::uint16_t*>(base)[offset] = static_cast<cuda::std::uint16_t>(p & 0xFFFF);
  } else {
    const cuda::std::uint32_t p = ptx::pack_f16x2(v, 0.0f);
    static_cast<cuda::std::uint16_t*>(base)[offset] = static_cast<cuda::std::uint16_t>(p & 0xFFFF);
  }
}

template <int Out>
__device__ inline void store_two(void* base, long long offset, float v0, float v1) {
  if constexpr (Out == kOutF32) {
    *reinterpret_cast<float2*>(static_cast<float*>(base) + offset) = make_float2(v0, v1);
  } else if constexpr (Out == kOutBf16) {
    *reinterpret_cast<cuda::std::uint32_t*>(static_cast<cuda::std::uint16_t*>(base) + offset) = ptx::pack_bf16x2(v0, v1);
  } else {
    *reinterpret_cast<cuda::std::uint32_t*>(static_cast<cuda::std::uint16_t*>(base) + offset) = ptx::pack_f16x2(v0, v1);
  }
}

// Stores one m64nN fragment whose top-left element is (row0, col0) of batch `batch`; with Q0 > 0 only its columns
// from 8 * Q0 on (the part a TMA store did not cover).
template <int N, int Out, int Q0 = 0>
__device__ inline void store_fragment(const EpilogueParams& p, const float (&d)[N / 2], int batch, int row0, int col0,
                                      int M, int N_total) {
  const int t = threadIdx.x % 128;
  const int warp = t / 32, lane = t % 32;
  const int r_base = row0 + 16 * warp + lane / 4;
  const int c_base = col0 + 2 * (lane % 4);
  void* base = static_cast<char*>(p.out);
  const long long batch_off = static_cast<long long>(batch) * p.batch_stride;
#pragma unroll
  for (int q = Q0; q < N / 8; ++q) {  // 8-column quad q holds registers 4q .. 4q+3
#pragma unroll
    for (int h = 0; h < 2; ++h) {    // h = 0: row r_base, h = 1: row r_base + 8
      const int r = r_base + 8 * h;
      const int c = c_base + 8 * q;
      const float v0 = d[4 * q + 2 * h], v1 = d[4 * q + 2 * h + 1];
      if (r >= M) continue;
      const long long off = batch_off + r * p.row_stride + c * p.col_stride;
      if (p.vec2 && c + 1 < N_total) {
        store_two<Out>(base, off, v0, v1);
        continue;
      }
      if (c < N_total) store_one<Out>(base, off, v0);
      if (c + 1 < N_total) store_one<Out>(base, off + p.col_stride, v1);
    }
  }
}

// Stages the whole 64-column chunks of one m64nN fragment in `staging` (1024-aligned, Slots x 8 KiB) and stores
// them with TMA at (col0, row0, batch); a last half chunk (N % 64 == 32) is left to store_fragment<N, Out, N / 64 * 8>.
// All 128 threads of the warpgroup call this; `bar_id` is their named barrier.
template <int N, int Out, int Slots = 2>
__device__ inline void store_fragment_tma(const float (&d)[N / 2], unsigned char* staging, const void* tma_out,
                                          int batch, int row0, int col0, int bar_id) {
  static_assert(N % 32 == 0, "TMA-store epilogue works in 64-column chunks (and a 32-column tail)");
  static_assert(Out != kOutF32, "TMA-store epilogue is for 16-bit outputs");
  constexpr int kChunks = N / 64;
  const int t = threadIdx.x % 128;
  const int warp = t / 32, lane = t % 32;
  const int r = 16 * warp + (lane % 8) + 8 * ((lane / 8) % 2);  // row this lane addresses in stmatrix
  const cuda::std::uint32_t base = ptx::smem_u32(staging);
#pragma unroll
  for (int g = 0; g < kChunks; g += Slots) {
    // NOTE: the staging buffer may be rewritten only after the TMA stores issued from it have read it.
    if (t == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
    ptx::named_barrier_sync(bar_id, 128);
#pragma unroll
    for (int sub = 0; sub < Slots && g + sub < kChunks; ++sub) {
      const int chunk = g + sub;
#pragma unroll
      for (int jj = 0; jj < 4; ++jj) {
        const int j = chunk * 8 + jj * 2;  // 8-column block index inside the fragment
        const int c = 16 * jj + 8 * (lane / 16);
        // NOTE: 128B swizzle: 16-byte chunk index XOR (row % 8).
        const cuda::std::uint32_t addr = base + sub * 8192 + r * 128 + (((c / 8) ^ (r % 8)) * 16);
        if constexpr (Out == kOutBf16)
          ptx::stmatrix_x4(addr, ptx::pack_bf16x2(d[4 * j], d[4 * j + 1]), ptx::pack_bf16x2(d[4 * j + 2], d[4 * j + 3]),
                           ptx::pack_bf16x2(d[4 * j + 4], d[4 * j + 5]), ptx::pack_bf16x2(d[4 * j + 6], d[4 * j + 7]));
        else
          ptx::stmatrix_x4(addr, ptx::pack_f16x2(d[4 * j], d[4 * j + 1]), ptx::pack_f16x2(d[4 * j + 2], d[4 * j + 3]),
                           ptx::pack_f16x2(d[4 * j + 4], d[4 * j + 5]), ptx::pack_f16x2(d[4 * j + 6], d[4 * j + 7]));
      }
    }
    // NOTE: generic-proxy writes must be fenced before the async proxy (TMA) reads them.
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    ptx::named_barrier_sync(bar_id, 128);
    if (t == 0) {
#pragma unroll
      for (int sub = 0; sub < Slots && g + sub < kChunks; ++sub) {
        const cuda::std::int32_t coords[3] = {col0 + 64 * (g + sub), row0, batch};
        cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, tma_out, coords,
                                        staging + sub * 8192);
      }
      cuda::ptx::cp_async_bulk_commit_group();
    }
  }
}

}  // namespace tmagemm::kernels
