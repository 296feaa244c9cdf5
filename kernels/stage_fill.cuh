// stage_fill.cuh — the producer's part of gemm_persistent_tma.cuh: the layout of one stage of the ring in shared
// memory, and the TMA loads that fill it with one K block of a tile's A and B, multicast within the cluster.
//
// Contract:
//   StageFill<Cfg, Op>  one per producer thread. Its constants are the stage layout the consumers' wgmma descriptors
//               read: a stage is [A: kABytes][B: kBBytes] (kStageBytes), stage s at smem + s * kStageBytes, every part
//               1024-byte aligned (the 128-byte swizzle atom).
//                 K-major operand : BK/64 slabs of [rows][128 B] (Op::kmajor_slab), one box {64 (K), rows} per slab;
//                 MN-major operand: rows/64 chunks of [BK K-rows][128 B] (Op::mnmajor_chunk), one box per chunk; an
//                                   N-major B is loaded in whole 64-column chunks (kBChunks; BN = 224 takes four).
//   fill(tc, kb, stage, first, mark)
//               the caller has seen `stage` empty (or it was never filled): expects the whole stage's bytes on
//               full[stage] (NOTE: TMA credits the full box bytes even for zero-filled, out-of-bounds parts) and issues
//               this CTA's loads of K block kb of tile tc. In a cluster each CTA loads its part of A (1/kClusterN: a
//               K-major A splits its rows, an MN-major A the K rows of each chunk) multicast along its cluster row, and
//               its part of B (1/kClusterM: rows, or 64-column chunks) multicast along its column; a grouped pair whose
//               two tiles need different B (tc.share_b false) loads all of B itself. `first` marks the trace slots
//               of the first fill through `mark(slot, value)` (profiling builds).
//   never       waits on anything: the ring's barriers are the caller's (pipeline.cuh).
#pragma once
#include <cuda/ptx>
#include <cuda/std/cstdint>

#include "operand.cuh"
#include "pipeline.cuh"
#include "ptx/tma.cuh"
#include "scheduler.cuh"
#include "tma_desc.cuh"
#include "trace.cuh"

namespace tmagemm::kernels {

template <class Cfg, class Op>
struct StageFill {
  static constexpr int BM = Cfg::kBM, BN = Cfg::kBN, BK = Cfg::kBK, CM = Cfg::kClusterM, CN = Cfg::kClusterN;
  static constexpr int kRowElems = Op::kRowElems;  // elements per 128-byte swizzled row (64, or 128 fp8)
  static constexpr int kBChunks = (BN + kRowElems - 1) / kRowElems;
  static constexpr int kSlabs = BK / kRowElems;
  static constexpr int kABytes = Op::tile_bytes(BM, BK);
  static constexpr int kBBytes = Op::tile_bytes(Cfg::kBKMajor ? BN : kBChunks * kRowElems, BK);
  static constexpr int kStageBytes = kABytes + kBBytes;
  // grouped_mm in 2x1 clusters: the schedule's tiles are single CTAs' tiles, taken in pairs (scheduler.cuh pair_tile).
  static constexpr bool kPairs = Cfg::kGrouped && CM == 2 && CN == 1;
  static_assert(CM == 1 || (Cfg::kBKMajor ? (BN / 2) % 8 == 0 : kBChunks % 2 == 0),
                "B must split into two multicast halves");
  // NOTE: a part's smem offset must keep the 128B-swizzle atom (8 rows of 128 bytes) whole.
  static_assert(CN == 1 || (Cfg::kAKMajor ? (BM / 2) % 8 == 0 : (BK / 2) % 8 == 0), "A must split into two halves");
  static_assert(BK % kRowElems == 0 && kSlabs <= 4, "BK is whole 128-byte swizzle slabs, at most 512 bytes");
  static_assert(Cfg::kAKMajor || BM % kRowElems == 0, "M-major A is loaded in 64-row chunks");
  static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0, "NOTE: 128B-swizzle atoms must stay 1024-aligned");

  const TmaDesc* map_a;
  const TmaDesc* map_b;
  unsigned char* smem;  // stage 0 (1024-byte aligned)
  Ring<Cfg::kStages> ring;
  int rm, rn;  // this CTA's place in the cluster's tile grid
  // The CTAs that receive this CTA's part of A (same row of the cluster) and of B (same column).
  static constexpr cuda::std::uint32_t kRowMask = CN == 1 ? 1u : (1u | (1u << CM));
  cuda::std::uint16_t mask_a, mask_b;
  // An operand read exactly once (l2_stream: bit 0 A, bit 1 B) is loaded with an L2 evict_first policy, so that its
  // lines leave L2 before the other operand's (re-read by every tile) and before other kernels' data.
  bool stream_a, stream_b;
  cuda::std::uint64_t stream_policy;

  __device__ __forceinline__ StageFill(const TmaDesc* a, const TmaDesc* b, unsigned char* smem0,
                                       const Ring<Cfg::kStages>& r, int rank_m, int rank_n, int l2_stream)
      : map_a(a), map_b(b), smem(smem0), ring(r), rm(rank_m), rn(rank_n),
        mask_a(static_cast<cuda::std::uint16_t>(kRowMask << rank_m)),
        mask_b(static_cast<cuda::std::uint16_t>(((1u << CM) - 1) << (CM * rank_n))), stream_a((l2_stream & 1) != 0),
        stream_b((l2_stream & 2) != 0), stream_policy(ptx::l2_policy_evict_first()) {}

  template <class Mark>
  __device__ __forceinline__ void fill(const TileCoord& tc, int kb, int stage, bool first, Mark&& mark) const {
    auto load = [&](bool shared, const TmaDesc* map, unsigned char* dst, cuda::std::int32_t c0, cuda::std::int32_t c1,
                    int batch_idx, cuda::std::uint16_t mask, bool stream) {
      ptx::tma_load_3d(dst, map, c0, c1, batch_idx, &ring.full[stage], shared, mask, stream, stream_policy);
    };
    // NOTE: out-of-bounds box parts are zero-filled but still counted: expect the full stage bytes.
    ring.expect(stage, kStageBytes);
    if (first) mark(kTrProdExpect, clock64());
    unsigned char* a_dst = smem + stage * kStageBytes;
    unsigned char* b_dst = a_dst + kABytes;
    const int k0 = kb * BK;
    if constexpr (Cfg::kAKMajor) {  // rows of A (= M) split between the CTAs of a cluster row
      constexpr int kRows = BM / CN;
#pragma unroll
      for (int sl = 0; sl < kSlabs; ++sl)
        load(CN > 1, map_a, a_dst + Op::kmajor_slab(BM, sl) + rn * kRows * 128, k0 + kRowElems * sl, tc.m0 + rn * kRows,
             tc.ab, mask_a, stream_a);
    } else {  // K rows of every 64-row chunk of A split between the CTAs of a cluster row
      constexpr int kKRows = BK / CN;
#pragma unroll
      for (int i = 0; i < BM / kRowElems; ++i)
        load(CN > 1, map_a, a_dst + Op::mnmajor_chunk(BK, i) + rn * kKRows * 128, tc.m0 + kRowElems * i,
             k0 + rn * kKRows, tc.ab, mask_a, stream_a);
    }
    if (first) mark(kTrProdA, clock64());
    const bool own_b = kPairs && !tc.share_b;
    if constexpr (Cfg::kBKMajor) {  // rows of B (= N) split between the CTAs of a cluster column
      constexpr int kRows = BN / CM;
#pragma unroll
      for (int part = 0; part < CM; ++part) {
        if (part != rm && !own_b) continue;
#pragma unroll
        for (int sl = 0; sl < kSlabs; ++sl)
          load(CM > 1 && !own_b, map_b, b_dst + Op::kmajor_slab(BN, sl) + part * kRows * 128, k0 + kRowElems * sl,
               tc.n0 + part * kRows, tc.batch, mask_b, stream_b);
      }
    } else {  // 64-column chunks of B split between the CTAs of a cluster column
      constexpr int kChunks = kBChunks / CM;
#pragma unroll
      for (int part = 0; part < CM; ++part) {
        if (part != rm && !own_b) continue;
#pragma unroll
        for (int jj = 0; jj < kChunks; ++jj) {
          const int j = part * kChunks + jj;
          load(CM > 1 && !own_b, map_b, b_dst + Op::mnmajor_chunk(BK, j), tc.n0 + kRowElems * j, k0, tc.batch, mask_b,
               stream_b);
        }
      }
    }
    if (first) mark(kTrFirstLoad, clock64());
  }
};

}  // namespace tmagemm::kernels
