// operand.cuh — where a WGMMA operand tile lives in shared memory, by element size (2 bytes: bf16/f16; 1: fp8):
// the 128-byte-swizzled layouts that the TMA loads write, the byte offset of each wgmma K step inside them, and
// their matrix descriptors.
//
// Contract:
//   K-major tile  (rows x BK, K contiguous): BK / kRowElems slabs of [rows][128 B]; a TMA box {kRowElems, rows}
//                 fills one slab.
//   MN-major tile (M or N contiguous): chunks of kRowElems rows, each [BK][128 B]; a TMA box {kRowElems, BK}
//                 fills one chunk.
//   A wgmma K step reads 32 bytes of K: kStepK = 16 16-bit or 32 8-bit elements.
//   NOTE: every swizzle atom (8 rows of 128 B) must start 1024-byte aligned (descriptor base offset 0): tiles and
//   slabs are whole atoms, and the shared-memory base is rounded up to 1024.
#pragma once
#include <cuda/std/cstdint>

#include "ptx/wgmma.cuh"

namespace tmagemm::kernels {

template <int ElemBytes>
struct Sw128Operand {
  static_assert(ElemBytes == 1 || ElemBytes == 2, "16-bit or 8-bit elements");
  static constexpr int kRowElems = 128 / ElemBytes;          // elements in one 128-byte swizzled row
  static constexpr int kStepK = 32 / ElemBytes;              // K of one wgmma instruction
  static constexpr int kStepsPerRow = kRowElems / kStepK;    // wgmma K steps per swizzled row (4)

  static constexpr int tile_bytes(int rows, int k) { return rows * k * ElemBytes; }
  // K-major: the slab holding K elements [kRowElems * sl, kRowElems * (sl + 1)) of a tile of `rows` rows.
  static constexpr cuda::std::uint32_t kmajor_slab(int rows, int sl) { return sl * rows * 128; }
  // K-major: K step ks of the 64-row block from row `row` of a tile of `rows` rows.
  static constexpr cuda::std::uint32_t kmajor_step(int rows, int row, int ks) {
    return (ks / kStepsPerRow) * rows * 128 + row * 128 + (ks % kStepsPerRow) * 32;
  }
  // MN-major: chunk `chunk` of a tile with `bk` K rows.
  static constexpr cuda::std::uint32_t mnmajor_chunk(int bk, int chunk) { return chunk * bk * 128; }
  // MN-major: K step ks of chunk `chunk`.
  static constexpr cuda::std::uint32_t mnmajor_step(int bk, int chunk, int ks) {
    return chunk * bk * 128 + ks * kStepK * 128;
  }
  // Descriptors of a tile at shared address `addr` (the K-major leading offset is unused with 128-byte swizzle;
  // the stride between 8-row groups is one atom, 1024 bytes; MN-major chunks lie bk * 128 bytes apart).
  __device__ __forceinline__ static cuda::std::uint64_t desc_kmajor(cuda::std::uint32_t addr) {
    return ptx::smem_desc_sw128(addr, 16, 1024);
  }
  __device__ __forceinline__ static cuda::std::uint64_t desc_mnmajor(cuda::std::uint32_t addr, int bk) {
    return ptx::smem_desc_sw128(addr, static_cast<cuda::std::uint32_t>(bk) * 128, 1024);
  }
};

}  // namespace tmagemm::kernels
