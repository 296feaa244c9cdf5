// consumer_store.cuh — a consumer warpgroup's stores of its finished tiles in the persistent TMA kernel
// (gemm_persistent_tma.cuh): when each piece goes out, and through which path of tile_store.cuh.
//
// Contract:
//   takes   the kernel's store state by reference (packed, pending, next_unit, chunk_seq: the kernel owns them and
//           sets pending = the finished tile, next_unit = 0 once every fragment is through store), the consumer's
//           staging blocks (kStoreTma), the output's tensor map, EpilogueParams, N;
//   store   fragment mi of a finished tile after the epilogue stage (apply_epilogue). Deferred (kDeferred: the
//           TMA-store epilogue, one column group, no ping-pong, not grouped stream-K): packed to 16-bit pairs in
//           registers (pack_fragment); the kernel then calls store_next while next_unit < kUnits, after the next
//           tile's K blocks are issued, so that the stores run under the tensor cores' work, and at the end. A piece
//           ("unit") is one 64-column chunk of one m64 fragment (store_packed_chunk), or a 224-column fragment's
//           32-column tail (store_packed). At once (the other TMA-store kernels: column groups, whose packed copy
//           does not fit beside the totals; ping-pong, which stores under the other consumer's MMAs; grouped
//           stream-K, whose 128x256 kernels spilled 132 bytes holding the packed copy through the next unit's K
//           loop): chunk by chunk through the staging blocks. Without kStoreTma: direct bounds-checked stores
//           (store_fragment);
//   writes  exactly the in-bounds elements of the tile: a fragment wholly outside the output (a cluster CTA's tile at
//           the grid's edge) is skipped; grouped_mm's fragment that holds its group's last rows, and every fragment of
//           an output TMA cannot address (kOutPlain), is copied out of its staging block row by row (a 64-row box
//           would write the next group's rows), kOutPlain's through realigned plain stores (store_staged_realigned).
// NOTE: staging blocks are used in turn across tiles (a tile's chunk count may be odd), so that the block a chunk
// reuses is always the one written kStagingChunks chunks before: its store's read is what each waits for.
#pragma once
#include <cuda/std/cstdint>

#include "epilogue.cuh"
#include "scheduler.cuh"
#include "tile_store.cuh"
#include "tma_desc.cuh"

namespace tmagemm::kernels {

// MI m64 fragments of WN columns; kWholeRows: the consumer holds every row of the tile (kSplitN, ping-pong);
// kColumnGroups: two-level fp8 accumulation in column groups (the packed copy does not fit beside the totals).
template <class Cfg, int MI, int WN, bool kWholeRows, bool kColumnGroups>
struct ConsumerStores {
  static constexpr bool kDeferred =
      Cfg::kStoreTma && !kColumnGroups && !Cfg::kPingPong && !(Cfg::kGrouped && Cfg::kStreamK);
  static_assert(kDeferred || !Cfg::kStoreTma || WN % 64 == 0,
                "a tile stored at once goes out in whole 64-column chunks (no 32-column tail)");
  static constexpr int kStagingBytes = Cfg::kStagingChunks * kStagingBlockBytes;  // per consumer
  static constexpr int kFragChunks = WN / 64, kFragUnits = kFragChunks + (WN % 64 != 0 ? 1 : 0);
  static constexpr int kUnits = MI * kFragUnits;

  using Packed = cuda::std::uint32_t[kDeferred ? MI : 1][kDeferred ? WN / 4 : 1];  // a tile in 16-bit pairs

  // The kernel's own variables, by reference, as a lambda of the kernel takes them, in the order such a lambda first
  // names them. (Held as values the code compiled to other SASS; in another order the phis of the kernel's tile loop
  // came out in another order, and ptxas scheduled some stream-K and grouped K loops differently.)
  int& next_unit;  // the pending tile's next piece; kUnits: nothing pending
  TileCoord& pending;
  const int& cidx;
  const int& N;
  Packed& packed;
  int& chunk_seq;
  unsigned char*& staging;  // every consumer's staging blocks
  const TmaDesc& tma_out;
  const EpilogueParams& ep;

  // The pending tile's next piece (the caller has seen next_unit < kUnits); true where it was the tile's last.
  __device__ __forceinline__ bool store_next() {
    if constexpr (kDeferred) {
      int plain_slot = -1, plain_row0 = 0, plain_c0 = 0, plain_rows = 0;  // kOutPlain: the chunk staged below
#pragma unroll
      for (int u = 0; u < kUnits; ++u) {
        if (u != next_unit) continue;
        const int mi = u / kFragUnits, g = u % kFragUnits;
        const int row0 = pending.m0 + (kWholeRows ? mi : cidx * MI + mi) * 64;
        const int col0 = pending.n0 + (Cfg::kSplitN ? cidx * WN : 0);
        if (row0 >= pending.m_end || col0 >= N) continue;  // a cluster CTA's tile may lie wholly outside the output
        if (g < kFragChunks) {
          const int rows = Cfg::kGrouped || Cfg::kOutPlain ? min(64, pending.m_end - row0) : 64;
          store_packed_chunk<WN, Cfg::kStagingChunks, Cfg::kOutPlain>(packed[mi], g, chunk_seq,
                                                                      staging + cidx * kStagingBytes, &tma_out,
                                                                      pending.ab, row0, col0, 1 + cidx, &ep, rows, N);
          if constexpr (Cfg::kOutPlain) {
            plain_slot = chunk_seq;
            plain_row0 = row0;
            plain_c0 = col0 + 64 * g;
            plain_rows = rows;
          }
          if (++chunk_seq == Cfg::kStagingChunks) chunk_seq = 0;
        } else {  // the last 32 columns (a wave-fitting BN = 224)
          store_packed<WN, kFragChunks * 8>(ep, packed[mi], pending.ab, row0, col0, pending.m_end, N);
        }
      }
      if constexpr (Cfg::kOutPlain)
        if (plain_slot >= 0)
          store_staged_realigned(staging + cidx * kStagingBytes + plain_slot * kStagingBlockBytes, ep, pending.ab,
                                 plain_row0, plain_c0, plain_rows, N);
      return ++next_unit == kUnits;
    } else {
      return false;
    }
  }

  // Fragment mi of tile tc (origin row0, col0), after the epilogue stage: packed (deferred) or stored.
  __device__ __forceinline__ void store(float (&d)[WN / 2], const TileCoord& tc, int mi, int row0, int col0) {
    if constexpr (kDeferred) {
      pack_fragment<WN, Cfg::kOut>(d, packed[mi]);
    } else if constexpr (Cfg::kStoreTma) {
      if (row0 < tc.m_end && col0 < N) {  // a cluster CTA's tile may lie wholly outside the output
#pragma unroll
        for (int g = 0; g < WN / 64; ++g) {
          cuda::std::uint32_t v[WN / 4];  // only chunk g's 16 pairs are written and read
          pack_chunk<WN, Cfg::kOut>(d, g, v);
          store_packed_chunk<WN, Cfg::kStagingChunks, Cfg::kOutPlain>(
              v, g, chunk_seq, staging + cidx * kStagingBytes, &tma_out, tc.ab, row0, col0, 1 + cidx, &ep,
              Cfg::kOutPlain || Cfg::kGrouped ? min(64, tc.m_end - row0) : 64, N);
          if constexpr (Cfg::kOutPlain)
            store_staged_realigned(staging + cidx * kStagingBytes + chunk_seq * kStagingBlockBytes, ep, tc.ab, row0,
                                   col0 + 64 * g, min(64, tc.m_end - row0), N);
          if (++chunk_seq == Cfg::kStagingChunks) chunk_seq = 0;
        }
      }
    } else {
      store_fragment<WN, Cfg::kOut, IdentityEpilogue>(ep, d, tc.ab, row0, col0, tc.m_end, N);
    }
  }
};

}  // namespace tmagemm::kernels
