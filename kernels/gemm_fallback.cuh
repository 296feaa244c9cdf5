// gemm_fallback.cuh — a tiled tensor-core GEMM that takes what TMA cannot: any strides (both non-unit too),
// any 2-byte-aligned base, any M, N, K >= 1. bf16/f16 inputs, bf16/f16/f32 output with any strides.
//
// One CTA computes a BM x BN tile of out; tiles are rastered in groups of kFallbackGroupM row tiles so that CTAs
// running together share A and B tiles in L2 (grid: tiles, 1, batch). Under Options::sm_carveout the grid is
// smaller (at most SMs - carveout CTAs) and each CTA loops over (batch, tile) items, one tile after another in the
// same shared memory. Main loop, per BK slab of K:
//   1. every thread issues the global loads of its share of the NEXT slab into registers (TileLoader::load),
//   2. the warps run ldmatrix + mma.sync m16n8k16 (f32 accumulators) on the CURRENT slab in shared memory,
//   3. the registers go to the other shared-memory buffer (TileLoader::store), one __syncthreads.
// So global latency hides behind a slab of MMAs, with two shared buffers and one barrier per slab.
//
// Global reads go in 8-element chunks along whichever dimension of the operand has unit stride. A chunk
// that is whole and 16-byte aligned is one 16-byte load; 8- or 4-byte aligned, two or four loads; 2-byte
// aligned (odd leading dimension, base offset by one element), a 2-byte load, three 4-byte loads and a
// 2-byte load, funnel-shifted into place. Partial chunks at the matrix edge are read element by element and
// zero-filled. Operands with no unit stride are read element by element along K.
// Shared layout follows the operand: K-contiguous operands are stored [rows][BK + 8] and read with
// ldmatrix; M/N-contiguous operands are stored [BK][rows + 8] and read with ldmatrix.trans. The 8-element
// pad keeps rows 16-byte aligned and makes the 8 row addresses of an ldmatrix hit 8 distinct bank groups.
// Epilogue: epilogue.cuh's epilogue_pair (the epilogue stage, bounds-checked stores, any output strides).
//
// Config (template argument, rendered by src/choices/fallback.cpp):
//   kBM, kBN, kBK, kWarpsM, kWarpsN, kF16, kOut, kAMode, kBMode
//   kAMode / kBMode: 0 = unit stride along K, 1 = unit stride along M (A) / N (B), 2 = neither.
// Dynamic shared memory: fallback_smem_bytes<Cfg>(); the host's FallbackConfig::smem_bytes must agree (each
// rendered variant static_asserts it).
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
  int batch;                   // matrices in the batch (1 for mm)
};

constexpr int kFallbackPad = 8;     // elements of padding per shared row
constexpr int kFallbackGroupM = 8;  // row tiles per raster group

// Elements of one shared buffer for an operand tile of R rows (M or N) by BK.
template <int R, int BK, int Mode>
constexpr int fallback_tile_elems() {
  return Mode == 1 ? BK * (R + kFallbackPad) : R * (BK + kFallbackPad);
}

template <class Cfg>
constexpr int fallback_smem_bytes() {
  return 2 * 2 * (fallback_tile_elems<Cfg::kBM, Cfg::kBK, Cfg::kAMode>() +
                  fallback_tile_elems<Cfg::kBN, Cfg::kBK, Cfg::kBMode>());
}

// Eight consecutive elements p[0..step*7] (step = element stride), of which the first `valid` are in bounds
// (the rest read as 0), packed into 16 bytes.
__device__ inline uint4 load_chunk(const cuda::std::uint16_t* p, int valid, long long step) {
  using cuda::std::uint16_t;
  using cuda::std::uint32_t;
  const auto addr = reinterpret_cast<cuda::std::uintptr_t>(p);
  if (step == 1 && valid == 8) {
    if ((addr & 15) == 0) return *reinterpret_cast<const uint4*>(p);
    const uint32_t* w = reinterpret_cast<const uint32_t*>(p);
    if ((addr & 7) == 0) {
      const uint2 x = reinterpret_cast<const uint2*>(p)[0], y = reinterpret_cast<const uint2*>(p)[1];
      return make_uint4(x.x, x.y, y.x, y.y);
    }
    if ((addr & 3) == 0) return make_uint4(w[0], w[1], w[2], w[3]);
    // 2-byte aligned: p[1..6] are three aligned words; p[0] and p[7] stand alone.
    const uint32_t* m = reinterpret_cast<const uint32_t*>(p + 1);
    const uint32_t lo = p[0], w1 = m[0], w2 = m[1], w3 = m[2], hi = p[7];
    return make_uint4(lo | (w1 << 16), __funnelshift_r(w1, w2, 16), __funnelshift_r(w2, w3, 16),
                      (w3 >> 16) | (hi << 16));
  }
  uint32_t h[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) h[j] = j < valid ? p[j * step] : 0u;
  return make_uint4(h[0] | (h[1] << 16), h[2] | (h[3] << 16), h[4] | (h[5] << 16), h[6] | (h[7] << 16));
}

// One operand's tile of R rows (M for A, N for B) by BK, seen as X(r, k) at g + r*sr + k*sk: loads the next
// slab into registers, then stores it to a shared buffer laid out for the operand's mode (file comment).
template <int R, int BK, int kThreads, int Mode>
struct TileLoader {
  static constexpr int kChunks = R * BK / 8;
  static constexpr int kPerThread = kChunks / kThreads;
  static_assert(kChunks % kThreads == 0, "whole chunks per thread");
  uint4 reg[kPerThread];

  __device__ inline void load(const cuda::std::uint16_t* g, long long sr, long long sk, int r0, int k0,
                              int R_total, int K) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int c = threadIdx.x + i * kThreads;
      if constexpr (Mode == 1) {  // unit stride along r: chunk = 8 rows at one k
        const int k = c / (R / 8), rc = (c % (R / 8)) * 8;
        const int gr = r0 + rc, gk = k0 + k;
        const int valid = gk < K ? min(max(R_total - gr, 0), 8) : 0;
        reg[i] = load_chunk(g + gr + static_cast<long long>(gk) * sk, valid, 1);
      } else {  // chunk = 8 k at one row; unit stride along k for mode 0, sk for mode 2
        const int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
        const int gr = r0 + r, gk = k0 + kc;
        const int valid = gr < R_total ? min(max(K - gk, 0), 8) : 0;
        reg[i] = load_chunk(g + static_cast<long long>(gr) * sr + static_cast<long long>(gk) * sk, valid,
                            Mode == 0 ? 1 : sk);
      }
    }
  }

  __device__ inline void store(cuda::std::uint16_t* s) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int c = threadIdx.x + i * kThreads;
      if constexpr (Mode == 1) {
        const int k = c / (R / 8), rc = (c % (R / 8)) * 8;
        *reinterpret_cast<uint4*>(s + k * (R + kFallbackPad) + rc) = reg[i];
      } else {
        const int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
        *reinterpret_cast<uint4*>(s + r * (BK + kFallbackPad) + kc) = reg[i];
      }
    }
  }
};

// A fragments (m16 x k16) for rows [row0, row0 + 16), k [k0, k0 + 16) of a shared A buffer.
template <int R, int BK, int Mode>
__device__ inline void load_a_fragment(const cuda::std::uint16_t* s, int row0, int k0, cuda::std::uint32_t (&a)[4]) {
  const int lane = threadIdx.x % 32, q = lane / 8;
  if constexpr (Mode == 1) {  // [k][m]: matrix q covers m half q % 2, k half q / 2
    const int k = k0 + lane % 8 + 8 * (q / 2), m = row0 + 8 * (q % 2);
    ptx::ldmatrix_x4_trans(ptx::smem_u32(s + k * (R + kFallbackPad) + m), a[0], a[1], a[2], a[3]);
  } else {  // [m][k]
    const int m = row0 + lane % 16, k = k0 + 8 * (lane / 16);
    ptx::ldmatrix_x4(ptx::smem_u32(s + m * (BK + kFallbackPad) + k), a[0], a[1], a[2], a[3]);
  }
}

// B fragments for two n8 blocks (n [col0, col0 + 16)) and k [k0, k0 + 16): block 0 in (b[0], b[1]), block 1
// in (b[2], b[3]).
template <int R, int BK, int Mode>
__device__ inline void load_b_fragments(const cuda::std::uint16_t* s, int col0, int k0, cuda::std::uint32_t (&b)[4]) {
  const int lane = threadIdx.x % 32, q = lane / 8;
  if constexpr (Mode == 1) {  // [k][n]: matrix q covers k half q % 2, n block q / 2
    const int k = k0 + lane % 8 + 8 * (q % 2), n = col0 + 8 * (q / 2);
    ptx::ldmatrix_x4_trans(ptx::smem_u32(s + k * (R + kFallbackPad) + n), b[0], b[1], b[2], b[3]);
  } else {  // [n][k]
    const int n = col0 + lane % 8 + 8 * (q / 2), k = k0 + 8 * (q % 2);
    ptx::ldmatrix_x4(ptx::smem_u32(s + n * (BK + kFallbackPad) + k), b[0], b[1], b[2], b[3]);
  }
}

// One BM x BN tile of out (rows from m0, columns from n0) of batch `batch`: the main loop and the epilogue.
// Leaves shared memory free for the next tile: the last slab's __syncthreads comes after every warp's last
// ldmatrix, and the epilogue stores from registers.
template <class Cfg>
__device__ __forceinline__ void fallback_tile(const FallbackParams& p, const EpilogueParams& ep,
                                              cuda::std::uint16_t* smem, int m0, int n0, int batch) {
  using cuda::std::uint16_t;
  using cuda::std::uint32_t;
  constexpr int BM = Cfg::kBM, BN = Cfg::kBN, BK = Cfg::kBK;
  constexpr int kThreads = Cfg::kWarpsM * Cfg::kWarpsN * 32;
  constexpr int WM = BM / Cfg::kWarpsM, WN = BN / Cfg::kWarpsN;
  constexpr int MI = WM / 16, NI = WN / 8;
  constexpr int kTileA = fallback_tile_elems<BM, BK, Cfg::kAMode>();
  constexpr int kTileB = fallback_tile_elems<BN, BK, Cfg::kBMode>();
  static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "whole m16 / n16 / k16 steps per warp");
  static_assert(BM % 8 == 0 && BN % 8 == 0 && BK % 8 == 0, "8-element load chunks");

  uint16_t* sA = smem;               // two buffers of kTileA
  uint16_t* sB = smem + 2 * kTileA;  // two buffers of kTileB

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / Cfg::kWarpsN, wn = warp % Cfg::kWarpsN;
  const uint16_t* a = static_cast<const uint16_t*>(p.a) + batch * p.a_bs;
  const uint16_t* b = static_cast<const uint16_t*>(p.b) + batch * p.b_bs;

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  // A as X(m, k) = a + m*a_rs + k*a_cs; B as its transpose X(n, k) = b + k*b_rs + n*b_cs.
  TileLoader<BM, BK, kThreads, Cfg::kAMode> la;
  TileLoader<BN, BK, kThreads, Cfg::kBMode> lb;
  const int kt_count = (p.K + BK - 1) / BK;  // >= 1: the host never launches K = 0
  la.load(a, p.a_rs, p.a_cs, m0, 0, p.M, p.K);
  lb.load(b, p.b_cs, p.b_rs, n0, 0, p.N, p.K);
  la.store(sA);
  lb.store(sB);
  __syncthreads();

  for (int kt = 0; kt < kt_count; ++kt) {
    const int cur = kt & 1;
    const bool more = kt + 1 < kt_count;
    if (more) {
      la.load(a, p.a_rs, p.a_cs, m0, (kt + 1) * BK, p.M, p.K);
      lb.load(b, p.b_cs, p.b_rs, n0, (kt + 1) * BK, p.N, p.K);
    }
    const uint16_t* cA = sA + cur * kTileA;
    const uint16_t* cB = sB + cur * kTileB;
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      uint32_t af[MI][4];
#pragma unroll
      for (int i = 0; i < MI; ++i) load_a_fragment<BM, BK, Cfg::kAMode>(cA, wm * WM + i * 16, ks * 16, af[i]);
#pragma unroll
      for (int j = 0; j < NI; j += 2) {
        uint32_t bf[4];
        load_b_fragments<BN, BK, Cfg::kBMode>(cB, wn * WN + j * 8, ks * 16, bf);
#pragma unroll
        for (int i = 0; i < MI; ++i) {
          ptx::mma_m16n8k16<Cfg::kF16>(acc[i][j], af[i], bf[0], bf[1]);
          ptx::mma_m16n8k16<Cfg::kF16>(acc[i][j + 1], af[i], bf[2], bf[3]);
        }
      }
    }
    if (more) {
      la.store(sA + (cur ^ 1) * kTileA);
      lb.store(sB + (cur ^ 1) * kTileB);
    }
    // Every thread passes this barrier on every slab, the last included: the next tile's first stores into
    // buffer 0 come after all reads of this one.
    __syncthreads();
  }

  // m16n8 accumulator: c0, c1 at (row g, cols 2t, 2t+1), c2, c3 at row g + 8 (g = lane / 4, t = lane % 4).
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = m0 + wm * WM + i * 16 + lane / 4 + 8 * h;
        const int c = n0 + wn * WN + j * 8 + 2 * (lane % 4);
        if (r < p.M)
          epilogue_pair<Cfg::kOut, typename Cfg::Epi>(ep, acc[i][j][2 * h], acc[i][j][2 * h + 1], batch, r, c, p.N);
      }
}

// Work item w = batch * tiles + tile, for w = blockIdx.z * gridDim.x + blockIdx.x, stepping by the grid's size.
// The host's grid is either (tiles, 1, batch) — every CTA one item, as a grid of one CTA per tile — or, under
// Options::sm_carveout, (at most SMs - carveout, 1, 1), each CTA looping over its items.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kWarpsM* Cfg::kWarpsN * 32)
    gemm_fallback(const FallbackParams p, const EpilogueParams ep) {
  extern __shared__ __align__(16) cuda::std::uint16_t smem[];
  constexpr int BM = Cfg::kBM, BN = Cfg::kBN;
  const int tiles_m = (p.M + BM - 1) / BM, tiles_n = (p.N + BN - 1) / BN;
  const int per_group = kFallbackGroupM * tiles_n;
  // Items < 2^31 (the host refuses more: fallback_can_implement), so w + step never wraps.
  const unsigned tiles = static_cast<unsigned>(tiles_m) * tiles_n, items = tiles * p.batch;
  const unsigned step = gridDim.x * gridDim.z;
  for (unsigned w = blockIdx.z * gridDim.x + blockIdx.x; w < items; w += step) {
    const int batch = static_cast<int>(w / tiles), tile = static_cast<int>(w % tiles);
    // Grouped raster: kFallbackGroupM row tiles walk across the column tiles together.
    const int first_m = (tile / per_group) * kFallbackGroupM;
    const int group_m = min(tiles_m - first_m, kFallbackGroupM);
    const int m0 = (first_m + (tile % per_group) % group_m) * BM;
    const int n0 = ((tile % per_group) / group_m) * BN;
    fallback_tile<Cfg>(p, ep, smem, m0, n0, batch);
  }
}

}  // namespace tmagemm::kernels
