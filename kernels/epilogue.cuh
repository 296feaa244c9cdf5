// epilogue.cuh — from fp32 accumulators to the output tensor.
//
// Contract:
//   takes   one warpgroup's m64nN accumulator fragment (float d[N/2] per thread, wgmma layout:
//           row = 16*warp + lane/4 + 8*((i/2)%2), col = 8*(i/4) + 2*(lane%4) + i%2), the tile origin, the
//           problem extents and EpilogueParams (output base, strides in elements, batch stride);
//   does    the epilogue stage (Epilogue: scaled_mm's scales, alpha, beta * bias, activation), then converts to the
//           output type (bf16 / f16 with round-to-nearest-even, or f32) and stores. Every direct store goes through
//           epilogue_pair (two adjacent columns of one row) or epilogue_quad (four, one wider access where aligned); the wgmma kernels
//           reach it through the fragment visitor for_each_fragment_pair (tile_store.cuh store_fragment), the
//           fallback and skinny kernels from their own layouts;
//   writes  exactly the in-bounds elements (row < M, col < N) and nothing else, for any output strides;
//   the wgmma kernels' stores of a whole fragment (direct, or packed and staged for a TMA store): tile_store.cuh.
//   assumes p.vec2 != 0 only when the output is row-major with a 4-byte (16-bit types) or 8-byte (f32)
//           aligned base and even row/batch strides — the host decides (uniform branch in the kernel).
#pragma once
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>

#include "ptx/sync.cuh"

namespace tmagemm::kernels {

enum OutType : int { kOutBf16 = 0, kOutF16 = 1, kOutF32 = 2 };

// Mirrored on the host (src/choices/epilogue_params.hpp); keep the layout identical.
struct EpilogueParams {
  void* out;
  long long row_stride;
  long long col_stride;
  long long batch_stride;
  int vec2;  // adjacent column pairs may be stored as one 4/8-byte access
  float alpha, beta;
  const void* bias;  // element (b, r, c) at b*bias_bs + r*bias_rs + c*bias_cs (a broadcast dimension has stride 0)
  long long bias_rs, bias_cs, bias_bs;
  int bias_vec2;  // a row-vector bias's column pairs (even c, c + 1) may be read as one 4/8-byte access
  const float* scale_a;  // scaled_mm: 1 value (tensorwise) or one per row (rowwise)
  const float* scale_b;  // scaled_mm: 1 value (tensorwise) or one per column (rowwise)
  const int* group_ends;  // grouped_mm: the int32 end row of each group (device memory); null otherwise
  // Stream-K configs (scheduler.cuh, StreamKSchedule): the split tiles' partial sums, [slot][seg][CTA of the cluster]
  // [BM x BN floats] with sk_seg_stride segments a slot, and one arrival counter per (slot, CTA, consumer), zero at
  // launch. Null otherwise. grouped_mm's kernel ignores sk_seg_stride (it takes StreamKSchedule::max_segments).
  float* sk_partials;
  unsigned* sk_counters;
  int sk_seg_stride;
  // Persistent TMA: operands read exactly once (one block of the other operand's extent), whose loads carry an L2
  // evict_first policy: bit 0 A, bit 1 B (persistent_tma.cpp, l2_stream_bits). 0 for the other kernels.
  int l2_stream;
};

// The epilogue stage: v = act(beta * bias(b, r, c) + alpha * scale(r, c) * acc), composed from the host's EpilogueSpec
// (src/choices/epilogue_params.hpp) as template arguments of the kernel's config (`using Epi = Epilogue<...>`).
//   BiasType: -1 no bias (also beta = 0: bias values are never read), 0 bf16, 1 f16, 2 f32.
//   Act: the Activation enum of include/tmagemm/types.hpp (0 none, 1 relu, 2 gelu (erf), 3 gelu_tanh, 4 silu,
//        5 sigmoid), as torch.nn.functional computes them in fp32.
//   Alpha: multiply by alpha (false: alpha = 1).
//   Bcast: how the bias broadcasts: 0 any (M,N) strides, 1 a row vector (one value per column), 2 a column vector
//        (one value per row). With 1 or 2 a bias value's address depends on the column or the row alone, so a
//        thread loads each once for all the rows (columns) of a fragment it holds.
//   Scale: scaled_mm's dequantisation, applied to the accumulator first (torch._scaled_mm: (a @ b) * scale_a *
//        scale_b + bias): 0 none, 1 tensorwise (scale_a[0] * scale_b[0]), 2 rowwise (scale_a[r] * scale_b[c]).
// kIdentity: plain mm; every store path then compiles exactly as without an epilogue.
template <int BiasType, int Act, bool Alpha, int Bcast = 0, int Scale = 0>
struct Epilogue {
  static constexpr bool kIdentity = BiasType < 0 && Act == 0 && !Alpha && Scale == 0;
  static constexpr int kBiasType = BiasType, kBcast = Bcast, kScale = Scale;

  // The row factor and the column factor of the scales (1 where the mode has none); rowwise reads scale_a[r] and
  // scale_b[c], so the caller passes in-bounds r and c only.
  __device__ __forceinline__ static float row_scale(const EpilogueParams& p, int r) {
    if constexpr (Scale == 1) return p.scale_a[0] * p.scale_b[0];
    if constexpr (Scale == 2) return p.scale_a[r];
    return 1.0f;
  }
  __device__ __forceinline__ static float col_scale(const EpilogueParams& p, int c) {
    if constexpr (Scale == 2) return p.scale_b[c];
    return 1.0f;
  }

  __device__ __forceinline__ static float bias_load(const EpilogueParams& p, long long off) {
    if constexpr (BiasType == 2) {
      return static_cast<const float*>(p.bias)[off];
    } else {
      const cuda::std::uint16_t bits = static_cast<const cuda::std::uint16_t*>(p.bias)[off];
      return bias_bits(bits);
    }
  }
  __device__ __forceinline__ static float bias_bits(cuda::std::uint16_t bits) {
    if constexpr (BiasType == 0) {
      return __uint_as_float(static_cast<cuda::std::uint32_t>(bits) << 16);
    } else {
      float b;
      asm("cvt.f32.f16 %0, %1;" : "=f"(b) : "h"(bits));
      return b;
    }
  }
  __device__ __forceinline__ static float bias_at(const EpilogueParams& p, int batch, int r, int c) {
    long long off = batch * p.bias_bs;
    if constexpr (Bcast != 2) off += c * p.bias_cs;
    if constexpr (Bcast != 1) off += r * p.bias_rs;
    return bias_load(p, off);
  }
  // The two bias values of columns c (even) and c + 1 of a row-vector bias (0 past N_total).
  __device__ __forceinline__ static float2 bias_pair(const EpilogueParams& p, int batch, int c, int N_total) {
    if constexpr (BiasType == 0 || BiasType == 1) {  // 16-bit values: the packed pair, unpacked (0 bits are 0.0f)
      const cuda::std::uint32_t two = c < N_total ? bias_bits_pair(p, batch, c, N_total) : 0u;
      return make_float2(bias_bits(static_cast<cuda::std::uint16_t>(two & 0xFFFF)),
                         bias_bits(static_cast<cuda::std::uint16_t>(two >> 16)));
    } else {
      const long long off = batch * p.bias_bs + c * p.bias_cs;
      if (p.bias_vec2 && c + 1 < N_total)
        return *reinterpret_cast<const float2*>(static_cast<const float*>(p.bias) + off);
      return make_float2(c < N_total ? bias_load(p, off) : 0.0f,
                         c + 1 < N_total ? bias_load(p, off + p.bias_cs) : 0.0f);
    }
  }
  // The raw 16-bit values of columns c (even, < N_total) and c + 1 (0 past N_total) of a row-vector bias, packed
  // (c in the low half): one 4-byte access where p.bias_vec2. For 16-bit bias types.
  __device__ __forceinline__ static cuda::std::uint32_t bias_bits_pair(const EpilogueParams& p, int batch, int c,
                                                                      int N_total) {
    static_assert(BiasType == 0 || BiasType == 1, "16-bit bias values");
    const auto* base = static_cast<const cuda::std::uint16_t*>(p.bias);
    const long long off = batch * p.bias_bs + c * p.bias_cs;
    if (p.bias_vec2 && c + 1 < N_total) return *reinterpret_cast<const cuda::std::uint32_t*>(base + off);
    const cuda::std::uint32_t hi = c + 1 < N_total ? base[off + p.bias_cs] : 0u;
    return base[off] | (hi << 16);
  }
  // act(beta * b + alpha * v) for a bias value b already loaded (ignored without a bias).
  __device__ __forceinline__ static float finish(const EpilogueParams& p, float v, float b) {
    if constexpr (Alpha) v *= p.alpha;
    if constexpr (BiasType >= 0) v = fmaf(p.beta, b, v);
    if constexpr (Act == 1) {
      v = v < 0.0f ? 0.0f : v;  // NaN stays NaN, as torch.relu
    } else if constexpr (Act == 2) {
      v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    } else if constexpr (Act == 3) {
      // 0.5 v (1 + tanh(u)) = v / (1 + exp(-2u)), u = sqrt(2 / pi) (v + 0.044715 v^3): one exp2 and one division
      // (a few ulp of fp32, as tanhf) instead of tanhf's longer sequence, which ran between the tiles' MMAs. v = -inf
      // gives NaN and large negative v gives -0, as torch's formula does.
      const float u = 0.79788456080286536f * (v + 0.044715f * v * v * v);
      v = __fdividef(v, 1.0f + exp2f(-2.8853900817779268f * u));  // -2 / ln 2
    } else if constexpr (Act == 4) {
      v = v / (1.0f + expf(-v));
    } else if constexpr (Act == 5) {
      v = 1.0f / (1.0f + expf(-v));
    }
    return v;
  }
  __device__ __forceinline__ float operator()(const EpilogueParams& p, float v, int batch, int r, int c) const {
    if constexpr (Scale != 0) v *= row_scale(p, r) * col_scale(p, c);
    if constexpr (BiasType >= 0) return finish(p, v, bias_at(p, batch, r, c));
    return finish(p, v, 0.0f);
  }
};
using IdentityEpilogue = Epilogue<-1, 0, false>;

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

// The one store of the epilogue stage, called by every kernel's direct-store path: applies Epi to the pair of
// adjacent columns (c, c + 1) of row r (each only where c < N_total; the caller has checked r < M), converts and
// stores them (one 4- or 8-byte access when p.vec2 and both are in bounds).
template <int Out, class Epi>
__device__ __forceinline__ void epilogue_pair(const EpilogueParams& p, float v0, float v1, int batch, int r, int c,
                                              int N_total) {
  if constexpr (!Epi::kIdentity) {
    if (c < N_total) v0 = Epi()(p, v0, batch, r, c);
    if (c + 1 < N_total) v1 = Epi()(p, v1, batch, r, c + 1);
  }
  void* base = p.out;
  const long long off = static_cast<long long>(batch) * p.batch_stride + r * p.row_stride + c * p.col_stride;
  if (p.vec2 && c + 1 < N_total) {
    store_two<Out>(base, off, v0, v1);
    return;
  }
  if (c < N_total) store_one<Out>(base, off, v0);
  if (c + 1 < N_total) store_one<Out>(base, off + p.col_stride, v1);
}

// Four adjacent columns c .. c + 3 of row r (c a multiple of 4; the caller has checked r < M): Epi applied to each,
// then one 8-byte (16-bit types) or 16-byte (f32) store where p.vec2, all four are in bounds and the address is
// aligned to the access; otherwise two epilogue_pair calls. The skinny kernel's reduction stores through it (fewer
// store instructions in the tail that follows its DRAM stream: docs/perf-notes.md).
template <int Out, class Epi>
__device__ __forceinline__ void epilogue_quad(const EpilogueParams& p, float4 v, int batch, int r, int c, int N_total) {
  constexpr int kElem = Out == kOutF32 ? 4 : 2, kAccess = 4 * kElem;
  const long long off = static_cast<long long>(batch) * p.batch_stride + r * p.row_stride + c * p.col_stride;
  unsigned char* at = static_cast<unsigned char*>(p.out) + off * kElem;
  if (p.vec2 && c + 3 < N_total && reinterpret_cast<cuda::std::uintptr_t>(at) % kAccess == 0) {
    if constexpr (!Epi::kIdentity) {
      v.x = Epi()(p, v.x, batch, r, c);
      v.y = Epi()(p, v.y, batch, r, c + 1);
      v.z = Epi()(p, v.z, batch, r, c + 2);
      v.w = Epi()(p, v.w, batch, r, c + 3);
    }
    if constexpr (Out == kOutF32) {
      *reinterpret_cast<float4*>(at) = v;
    } else if constexpr (Out == kOutBf16) {
      *reinterpret_cast<uint2*>(at) = make_uint2(ptx::pack_bf16x2(v.x, v.y), ptx::pack_bf16x2(v.z, v.w));
    } else {
      *reinterpret_cast<uint2*>(at) = make_uint2(ptx::pack_f16x2(v.x, v.y), ptx::pack_f16x2(v.z, v.w));
    }
    return;
  }
  epilogue_pair<Out, Epi>(p, v.x, v.y, batch, r, c, N_total);
  epilogue_pair<Out, Epi>(p, v.z, v.w, batch, r, c + 2, N_total);
}

// The fragment visitor of the wgmma kernels: calls f(i, r, c) for each register pair (d[i], d[i + 1]) of this
// thread's part of an m64nN accumulator fragment whose top-left element is (row0, col0): row r, columns c and
// c + 1, for i = 4q + 2h, q >= Q0 (8-column quads), h = 0, 1 (rows r and r + 8).
template <int N, int Q0 = 0, class F>
__device__ __forceinline__ void for_each_fragment_pair(int row0, int col0, F&& f) {
  const int t = threadIdx.x % 128;
  const int warp = t / 32, lane = t % 32;
  const int r_base = row0 + 16 * warp + lane / 4;
  const int c_base = col0 + 2 * (lane % 4);
#pragma unroll
  for (int q = Q0; q < N / 8; ++q)
#pragma unroll
    for (int h = 0; h < 2; ++h) f(4 * q + 2 * h, r_base + 8 * h, c_base + 8 * q);
}

// Brings the bias values of a tile's rows [row0, row0 + rows) or columns [col0, col0 + cols) into L1 ahead of the
// epilogue (prefetch.global.L1: nothing is held in registers), so that the epilogue's loads of a row or column
// vector wait ~L1 latency, not L2's. The persistent kernel issues it during a tile's last K block, under the MMAs.
// One 128-byte line per lane of each calling warp; only for a vector with unit stride (other biases: nothing).
template <class Epi>
__device__ __forceinline__ void prefetch_bias(const EpilogueParams& p, int batch, int row0, int rows, int M, int col0,
                                              int cols, int N_total) {
  const int lane = threadIdx.x % 32;
  if constexpr (Epi::kBiasType >= 0 && Epi::kBcast != 0) {
    constexpr int kElem = Epi::kBiasType == 2 ? 4 : 2, kPerLine = 128 / kElem;
    const bool row_vector = Epi::kBcast == 1;
    const int first = (row_vector ? col0 : row0) + lane * kPerLine;
    const int end = row_vector ? min(col0 + cols, N_total) : min(row0 + rows, M);
    const long long stride = row_vector ? p.bias_cs : p.bias_rs;
    if (stride != 1 || first >= end) return;
    const char* addr = static_cast<const char*>(p.bias) + (batch * p.bias_bs + first) * kElem;
    asm volatile("prefetch.global.L1 [%0];" ::"l"(addr));
  }
}

// The epilogue's vectors for one consumer's MI m64nN fragments (top-left (row0 + 64 mi, col0)), loaded into registers
// by load() during the tile's last K block, so that their latency runs under the MMAs, and read by apply_epilogue
// (no global load is left between the tiles' MMAs, where the tensor cores would wait for it):
// - scaled_mm's scale factors. Tensorwise: one product. Rowwise: the thread's two rows of each fragment, and the
//   columns spread over the warp, 2 x N / 64 values a lane (lane 4a + v, slot k: columns col0 + 64k + 8a + 2v and + 1,
//   one coalesced 8-byte load each), handed to the threads that need them by shuffles (col_pair).
// - A row-vector bias (Bcast 1, N a multiple of 64): its columns spread over the warp as the rowwise scales are
//   (bias_pair). A column-vector bias (Bcast 2): the thread's two rows of each fragment. Out-of-bounds entries are 0
//   (their values are not stored). Other biases are read in apply_epilogue (a full (M,N) bias has a value per element).
// NOTE: the bias values once loaded one column pair at a time in apply_epilogue, each load waited for before the next
// (SASS of the 128x256 TMA-store kernel): 32 round trips a fragment while both consumers' tensor cores sat idle.
template <int N, int MI, class Epi>
struct TileVectors {
  static constexpr bool kRowwise = Epi::kScale == 2;
  static constexpr bool kBiasRow = Epi::kBiasType >= 0 && Epi::kBcast == 1 && N % 64 == 0;
  static constexpr bool kBiasCol = Epi::kBiasType >= 0 && Epi::kBcast == 2;
  static constexpr bool kLoads = Epi::kScale != 0 || kBiasRow || kBiasCol;  // load() has something to do
  static_assert(!kRowwise || N % 64 == 0, "rowwise scales spread whole 64-column blocks over a warp");
  float2 col[kRowwise ? N / 64 : 1];
  float row[kRowwise ? MI : 1][2];
  float tensor;
  // 16-bit biases stay packed as loaded (two values a register) until bias_pair: fewer registers held from the last K
  // block on (the fp8 rowwise kernels have the fewest to spare).
  static constexpr bool kPackedBias = Epi::kBiasType != 2;
  using BiasSlot = cuda::std::conditional_t<kPackedBias, cuda::std::uint32_t, float2>;
  BiasSlot bias_col[kBiasRow ? N / 64 : 1];
  float bias_row[kBiasCol ? MI : 1][2];

  __device__ __forceinline__ void load(const EpilogueParams& p, int batch, int row0, int col0, int M, int N_total) {
    const int t = threadIdx.x % 128, lane = t % 32;
    if constexpr (Epi::kScale == 1) tensor = __ldg(p.scale_a) * __ldg(p.scale_b);
    if constexpr (kRowwise) {
      const bool pairs = (reinterpret_cast<cuda::std::uintptr_t>(p.scale_b) & 7) == 0;  // uniform
#pragma unroll
      for (int k = 0; k < N / 64; ++k) {
        const int c = col0 + 64 * k + 8 * (lane / 4) + 2 * (lane % 4);  // even
        if (pairs && c + 1 < N_total) {
          col[k] = __ldg(reinterpret_cast<const float2*>(p.scale_b + c));
        } else {
          col[k].x = c < N_total ? __ldg(p.scale_b + c) : 0.0f;
          col[k].y = c + 1 < N_total ? __ldg(p.scale_b + c + 1) : 0.0f;
        }
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = row0 + 64 * mi + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
          row[mi][h] = r < M ? __ldg(p.scale_a + r) : 0.0f;
        }
    }
    if constexpr (kBiasRow) {
#pragma unroll
      for (int k = 0; k < N / 64; ++k) {
        const int c = col0 + 64 * k + 8 * (lane / 4) + 2 * (lane % 4);  // even
        if constexpr (kPackedBias)
          bias_col[k] = c < N_total ? Epi::bias_bits_pair(p, batch, c, N_total) : 0u;
        else
          bias_col[k] = c < N_total ? Epi::bias_pair(p, batch, c, N_total) : make_float2(0.0f, 0.0f);
      }
    }
    if constexpr (kBiasCol) {
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = row0 + 64 * mi + 16 * (t / 32) + (t % 32) / 4 + 8 * h;
          bias_row[mi][h] = r < M ? Epi::bias_at(p, batch, r, 0) : 0.0f;
        }
    }
  }
  // The source lane of this thread's columns 8q + 2 (lane % 4) and + 1 of the fragment in the warp-spread vectors.
  __device__ __forceinline__ static int pair_lane(int q) { return (q % 8) * 4 + (threadIdx.x % 4); }
  // The scale factors of those columns. All 32 lanes call it together.
  __device__ __forceinline__ float2 col_pair(int q) const {
    const int src = pair_lane(q);
    return make_float2(__shfl_sync(0xffffffffu, col[q / 8].x, src), __shfl_sync(0xffffffffu, col[q / 8].y, src));
  }
  // The row-vector bias values of those columns. All 32 lanes call it together.
  __device__ __forceinline__ float2 bias_pair(int q) const {
    const int src = pair_lane(q);
    if constexpr (kPackedBias) {
      const cuda::std::uint32_t two = __shfl_sync(0xffffffffu, bias_col[q / 8], src);
      return make_float2(Epi::bias_bits(static_cast<cuda::std::uint16_t>(two & 0xFFFF)),
                         Epi::bias_bits(static_cast<cuda::std::uint16_t>(two >> 16)));
    } else {
      return make_float2(__shfl_sync(0xffffffffu, bias_col[q / 8].x, src),
                         __shfl_sync(0xffffffffu, bias_col[q / 8].y, src));
    }
  }
};

// Applies Epi to every in-bounds element of one m64nN fragment in registers (before it is packed for the TMA store),
// fragment mi of the consumer's TileVectors `sc` (loaded beforehand where kLoads). Nothing for IdentityEpilogue.
// Called by all 128 threads of the warpgroup together (the rowwise factors come through shuffles).
template <int N, class Epi, int MI>
__device__ __forceinline__ void apply_epilogue(const EpilogueParams& p, float (&d)[N / 2], int batch, int row0,
                                               int col0, int M, int N_total, const TileVectors<N, MI, Epi>& sc,
                                               int mi) {
  if constexpr (Epi::kScale == 1) {  // tensorwise: one factor for the fragment
#pragma unroll
    for (int i = 0; i < N / 2; ++i) d[i] *= sc.tensor;
  } else if constexpr (Epi::kScale == 2) {
    // Rowwise: out-of-bounds rows and columns got factor 0 (their values are not stored).
#pragma unroll
    for (int q = 0; q < N / 8; ++q) {
      const float2 s = sc.col_pair(q);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        d[4 * q + 2 * h] *= sc.row[mi][h] * s.x;
        d[4 * q + 2 * h + 1] *= sc.row[mi][h] * s.y;
      }
    }
  }
  if constexpr (Epi::kBiasType >= 0 && Epi::kBcast == 1) {
    // A row vector: each column pair's two values serve the thread's two rows of the quad. Loaded beforehand
    // (TileVectors::kBiasRow) or, on a fragment of N % 64 != 0 columns, here, once a pair (one access where
    // p.bias_vec2).
    constexpr bool kLoaded = TileVectors<N, MI, Epi>::kBiasRow;
    const int t = threadIdx.x % 128;
    const int r = row0 + 16 * (t / 32) + (t % 32) / 4;
#pragma unroll
    for (int q = 0; q < N / 8; ++q) {
      float2 b;
      if constexpr (kLoaded) b = sc.bias_pair(q);  // (every lane: a shuffle)
      const int c = col0 + 2 * (t % 4) + 8 * q;
      if (c >= N_total) continue;
      if constexpr (!kLoaded) b = Epi::bias_pair(p, batch, c, N_total);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (r + 8 * h >= M) continue;
        const int i = 4 * q + 2 * h;
        d[i] = Epi::finish(p, d[i], b.x);
        if (c + 1 < N_total) d[i + 1] = Epi::finish(p, d[i + 1], b.y);
      }
    }
  } else if constexpr (Epi::kBiasType >= 0 && Epi::kBcast == 2) {
    // A column vector, loaded beforehand: each of the thread's two rows has one value for all its columns.
    const int t = threadIdx.x % 128;
    const int r_base = row0 + 16 * (t / 32) + (t % 32) / 4, c_base = col0 + 2 * (t % 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = r_base + 8 * h;
      if (r >= M) continue;
      const float b = sc.bias_row[mi][h];
#pragma unroll
      for (int q = 0; q < N / 8; ++q) {
        const int c = c_base + 8 * q, i = 4 * q + 2 * h;
        if (c < N_total) d[i] = Epi::finish(p, d[i], b);
        if (c + 1 < N_total) d[i + 1] = Epi::finish(p, d[i + 1], b);
      }
    }
  } else if constexpr (Epi::kBiasType >= 0) {
    for_each_fragment_pair<N>(row0, col0, [&](int i, int r, int c) {
      if (r >= M) return;
      if (c < N_total) d[i] = Epi::finish(p, d[i], Epi::bias_at(p, batch, r, c));
      if (c + 1 < N_total) d[i + 1] = Epi::finish(p, d[i + 1], Epi::bias_at(p, batch, r, c + 1));
    });
  } else if constexpr (!Epi::kIdentity) {
    for_each_fragment_pair<N>(row0, col0, [&](int i, int r, int c) {
      d[i] = Epi::finish(p, d[i], 0.0f);
      d[i + 1] = Epi::finish(p, d[i + 1], 0.0f);
    });
  }
}

}  // namespace tmagemm::kernels
