// tile_store.cuh — a wgmma kernel's finished m64nN fragment to the output tensor: direct stores, or packed to 16-bit
// pairs and staged in shared memory for a TMA store (or, where TMA cannot address the output, for plain realigned
// stores).
//
// Contract:
//   takes   one warpgroup's m64nN fragment after the epilogue stage (epilogue.cuh apply_epilogue), in the wgmma layout
//           (epilogue.cuh), the fragment's origin and extents, EpilogueParams;
//   store_fragment: the epilogue stage and bounds-checked direct stores of every in-bounds element (epilogue_pair);
//   pack_fragment + store_packed_chunk: the same fragment, first packed to 16-bit pairs in registers (so that the
//           kernel can start the next tile's MMAs into the accumulators), then one 64-column chunk at a time through
//           a staging block and a TMA store (16-bit outputs whose tensor TMA can address); the kernel interleaves
//           the chunks with its next tile's K blocks. The staging buffer holds Slots [64 rows][64 cols]
//           128B-swizzled blocks used in turn; before refilling one the issuing thread waits until the store
//           issued from it has READ it (not until it is written). A 224-column fragment's last 32 columns go
//           through store_packed (a 64-wide TMA box would write the next tile's columns). The TMA store clips
//           rows >= M and columns >= N.
//           An output TMA cannot address (a row pitch or base off 16 bytes: odd N, a padded ld, an offset view) takes
//           the same staging blocks with plain stores instead of the TMA box (store_packed_chunk's Plain,
//           window.cuh store_block_realigned): each row's 16-byte aligned blocks, realigned from two staged pieces;
//   writes  exactly the in-bounds elements (row < M, col < N) and nothing else.
#pragma once
#include <cuda/ptx>
#include <cuda/std/cstdint>

#include "epilogue.cuh"
#include "ptx/sync.cuh"
#include "window.cuh"

namespace tmagemm::kernels {

// One staging block: [64 rows][64 columns] of 16-bit elements, 128B-swizzled (a consumer holds kStagingChunks).
inline constexpr int kStagingBlockBytes = 64 * 64 * 2;

// Applies Epi to one m64nN fragment and stores it (top-left element (row0, col0) of batch `batch`).
template <int N, int Out, class Epi>
__device__ __forceinline__ void store_fragment(const EpilogueParams& p, const float (&d)[N / 2], int batch, int row0,
                                               int col0, int M, int N_total) {
  for_each_fragment_pair<N>(row0, col0, [&](int i, int r, int c) {
    if (r < M) epilogue_pair<Out, Epi>(p, d[i], d[i + 1], batch, r, c, N_total);
  });
}

// Converts one m64nN fragment to 16-bit pairs: p[i] holds columns 2i and 2i + 1 of d's layout (d[2i], d[2i + 1]),
// the register image stmatrix and 4-byte stores take. The kernel packs a finished tile so that its accumulators
// are free for the next tile while the output waits in these N / 4 registers.
template <int N, int Out>
__device__ inline void pack_fragment(const float (&d)[N / 2], cuda::std::uint32_t (&p)[N / 4]) {
  static_assert(Out != kOutF32, "packing is for 16-bit outputs");
#pragma unroll
  for (int i = 0; i < N / 4; ++i)
    p[i] = Out == kOutBf16 ? ptx::pack_bf16x2(d[2 * i], d[2 * i + 1]) : ptx::pack_f16x2(d[2 * i], d[2 * i + 1]);
}

// Packs 64-column chunk g of an m64nN fragment: p[16 g .. 16 g + 15], the pairs store_packed_chunk reads for chunk g
// (the rest of p is left alone).
template <int N, int Out>
__device__ __forceinline__ void pack_chunk(const float (&d)[N / 2], int g, cuda::std::uint32_t (&p)[N / 4]) {
  static_assert(Out != kOutF32, "packing is for 16-bit outputs");
#pragma unroll
  for (int i = 16 * g; i < 16 * g + 16; ++i)
    p[i] = Out == kOutBf16 ? ptx::pack_bf16x2(d[2 * i], d[2 * i + 1]) : ptx::pack_f16x2(d[2 * i], d[2 * i + 1]);
}

// Stores the columns from 8 * Q0 on of a packed m64nN fragment (16-bit output) with plain stores: the part of a
// 224-column fragment that whole 64-column TMA boxes do not cover.
template <int N, int Q0>
__device__ inline void store_packed(const EpilogueParams& p, const cuda::std::uint32_t (&v)[N / 4], int batch,
                                    int row0, int col0, int M, int N_total) {
  auto* base = static_cast<cuda::std::uint16_t*>(p.out);
  const long long batch_off = static_cast<long long>(batch) * p.batch_stride;
  for_each_fragment_pair<N, Q0>(row0, col0, [&](int i, int r, int c) {
    if (r >= M || c >= N_total) return;
    const cuda::std::uint32_t pair = v[i / 2];
    const long long off = batch_off + r * p.row_stride + c * p.col_stride;
    if (p.vec2 && c + 1 < N_total) {
      *reinterpret_cast<cuda::std::uint32_t*>(base + off) = pair;
      return;
    }
    base[off] = static_cast<cuda::std::uint16_t>(pair & 0xFFFF);
    if (c + 1 < N_total) base[off + p.col_stride] = static_cast<cuda::std::uint16_t>(pair >> 16);
  });
}

// Stores 64-column chunk g of a packed m64nN fragment with a TMA store at (col0 + 64 g, row0, batch), staged in
// block `slot` of `staging` (1024-aligned, Slots x 8 KiB). Chunks go out one at a time, each through the next
// slot, so that the kernel can interleave them with its MMAs; a 224-column fragment's last 32 columns go through
// store_packed instead (a 64-wide TMA box would write the next tile's columns). All 128 threads of the warpgroup
// call this with the same g and slot (after unrolling, constants: v stays in registers); `bar_id` is their
// named barrier.
// rows < 64 (grouped_mm: the fragment holds its group's last rows, and a 64-row box would write the next group's):
// the warpgroup copies the chunk's first `rows` rows out of the staging block with 16-byte stores through `p`
// instead (16-byte pieces from column N_total on are left out, as the TMA store clips them), and an empty bulk group
// is committed in the TMA store's place, so that the slots' wait above still counts one group per chunk.
// Plain (an output TMA cannot address, row-major 16-bit): the chunk is only staged; the caller then stores it with
// store_staged_realigned (below) instead of the TMA box.
template <int N, int Slots, bool Plain = false>
__device__ inline void store_packed_chunk(const cuda::std::uint32_t (&v)[N / 4], int g, int slot,
                                          unsigned char* staging, const void* tma_out, int batch, int row0, int col0,
                                          int bar_id, const EpilogueParams* p = nullptr, int rows = 64,
                                          int N_total = 0) {
  static_assert(N % 32 == 0, "TMA-store epilogue works in 64-column chunks (and a 32-column tail)");
  const int t = threadIdx.x % 128;
  const int warp = t / 32, lane = t % 32;
  const int r = 16 * warp + (lane % 8) + 8 * ((lane / 8) % 2);  // row this lane addresses in stmatrix
  const cuda::std::uint32_t base = ptx::smem_u32(staging) + slot * kStagingBlockBytes;
  // NOTE: a slot may be rewritten only after the TMA store issued from it (Slots chunks ago) has read it.
  if (t == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<Slots - 1>{});
  ptx::named_barrier_sync(bar_id, 128);
#pragma unroll
  for (int jj = 0; jj < 4; ++jj) {
    const int j = g * 8 + jj * 2;  // 8-column block index inside the fragment
    const int c = 16 * jj + 8 * (lane / 16);
    // NOTE: 128B swizzle: 16-byte chunk index XOR (row % 8).
    const cuda::std::uint32_t addr = base + r * 128 + (((c / 8) ^ (r % 8)) * 16);
    ptx::stmatrix_x4(addr, v[2 * j], v[2 * j + 1], v[2 * j + 2], v[2 * j + 3]);
  }
  if constexpr (Plain) {  // the caller copies it out: store_staged_realigned
    ptx::named_barrier_sync(bar_id, 128);
    return;
  }
  // NOTE: generic-proxy writes must be fenced before the async proxy (TMA) reads them.
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  ptx::named_barrier_sync(bar_id, 128);
  if (rows < 64) {
    const int c0 = col0 + 64 * g;
    auto* dst = static_cast<char*>(p->out) + (static_cast<long long>(batch) * p->batch_stride +
                                              static_cast<long long>(row0) * p->row_stride + c0) * 2;
    const unsigned char* src = staging + slot * kStagingBlockBytes;
    for (int idx = t; idx < rows * 8; idx += 128) {
      const int rr = idx / 8, piece = idx % 8;  // row of the chunk, 16-byte piece of the row (8 columns)
      if (c0 + 8 * piece >= N_total) continue;
      // NOTE: 128B swizzle: 16-byte chunk index XOR (row % 8), as stmatrix wrote it above.
      const uint4 val = *reinterpret_cast<const uint4*>(src + rr * 128 + ((piece ^ (rr % 8)) * 16));
      *reinterpret_cast<uint4*>(dst + (static_cast<long long>(rr) * p->row_stride + 8 * piece) * 2) = val;
    }
    if (t == 0) cuda::ptx::cp_async_bulk_commit_group();
    return;
  }
  if (t == 0) {
    const cuda::std::int32_t coords[3] = {col0 + 64 * g, row0, batch};
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, tma_out, coords,
                                    staging + slot * kStagingBlockBytes);
    cuda::ptx::cp_async_bulk_commit_group();
  }
}

// After store_packed_chunk<Plain> staged chunk (row0, c0) in `block` (a staging slot): its first `rows` rows (rows
// past M left out; columns from N_total on too) go to the output through p with realigned plain stores
// (window.cuh store_block_realigned), and an empty bulk group is committed in the TMA store's place, so that the
// slots' wait still counts one group per chunk. Apart from store_packed_chunk so that a kernel whose pieces are
// unrolled (one call site per piece) holds one copy of the loop: with one per piece, the deferred 128x256 kernel had
// 3,608 instructions.
__device__ inline void store_staged_realigned(const unsigned char* block, const EpilogueParams& p, int batch, int row0,
                                              int c0, int rows, int N_total) {
  const int t = threadIdx.x % 128;
  const char* dst = static_cast<const char*>(p.out) + (static_cast<long long>(batch) * p.batch_stride +
                                                       static_cast<long long>(row0) * p.row_stride + c0) * 2;
  store_block_realigned(block, const_cast<char*>(dst), p.row_stride * 2, rows, 2 * min(64, N_total - c0), t);
  if (t == 0) cuda::ptx::cp_async_bulk_commit_group();
}

}  // namespace tmagemm::kernels
