// window.cuh — realigning 16-bit rows: a 16-byte window at any even byte offset of two adjacent aligned 16-byte
// pieces, in registers. Used by the pad path's row copy (repitch.cuh) and by the TMA-store epilogue's plain stores to
// an output TMA cannot address (tile_store.cuh store_packed_chunk's Plain: store_block_realigned).
#pragma once
#include <cuda/std/cstdint>

namespace tmagemm::kernels {

// Bytes [d, d + 16) of the 32 bytes lo | hi (d even, 0 <= d < 16) as four 32-bit words.
__device__ inline uint4 shift_window(const uint4& lo, const uint4& hi, unsigned d) {
  const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  uint4 out;
  // NOTE: a runtime index into w would put it in local memory; one branch per word offset keeps it in registers.
#define TMAGEMM_WINDOW(Q)                                                                             \
  if ((d & 2u) == 0u) {                                                                               \
    out = make_uint4(w[Q], w[Q + 1], w[Q + 2], w[Q + 3]);                                             \
  } else {                                                                                            \
    out = make_uint4(__funnelshift_r(w[Q], w[Q + 1], 16), __funnelshift_r(w[Q + 1], w[Q + 2], 16),    \
                     __funnelshift_r(w[Q + 2], w[Q + 3], 16), __funnelshift_r(w[Q + 3], w[Q + 4], 16)); \
  }
  switch (d >> 2) {
    case 0: TMAGEMM_WINDOW(0) break;
    case 1: TMAGEMM_WINDOW(1) break;
    case 2: TMAGEMM_WINDOW(2) break;
    default: TMAGEMM_WINDOW(3) break;
  }
#undef TMAGEMM_WINDOW
  return out;
}

// Stores bytes [0, n) (n even, 0 < n < 16) of the 16 bytes v at a (2-byte aligned) with 2-byte stores, each
// predicated on its place: no branch, so that lanes with different n do not diverge.
__device__ inline void store_prefix16(char* a, const uint4& v, int n) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int e = 0; e < 7; ++e)
    if (2 * e < n) *reinterpret_cast<unsigned short*>(a + 2 * e) = static_cast<unsigned short>(w[e / 2] >> (16 * (e % 2)));
}

// Copies the first `end` bytes (even, <= 128) of rows [0, rows) of a staged block (src: shared memory, [64][128 bytes]
// 128B-swizzled, as stmatrix writes a 64x64 16-bit chunk) to dst + r * pitch (bytes; rows at any 2-byte alignment,
// pitch even), by the 128 threads t of a warpgroup; no byte outside the rows' `end` bytes is written (a neighbouring
// chunk writes the rest of a shared 16-byte block).
// Each row's destination is cut into the 16-byte aligned blocks it overlaps. Rows r and r + 8 are 8 x pitch apart, a
// multiple of 16 bytes, so they share their misalignment m: a warp takes the rows of one class r % 8 (four at a time,
// eight lanes a row), and m, the window's offset, is the same for all its lanes (no divergence in shift_window's
// switch). A lane stores block b (1..8 where m > 0, 0..7 where m = 0): the window at 16 - m of staged pieces b - 1 and
// b, whole (one 16-byte store) or its first bytes where the row ends inside it (store_prefix16; a piece past 7 only
// supplies bytes that are not stored). Block 0 of a row off 16 bytes (its bytes m..15: the row's first 16 - m bytes)
// goes out afterwards, one thread a row.
// (Measured, ncu on the H200, 4096x4095x4096 with 128x256 tiles: the previous form, consecutive threads on consecutive
// blocks of different rows with a per-lane window and store_bytes16's branches, ran 146 instructions per block, 23 %
// of the kernel's stall samples: lab/2026-12-04-session33.)
__device__ inline void store_block_realigned(const unsigned char* src, char* dst, long long pitch, int rows, int end,
                                             int t) {
  using cuda::std::uintptr_t;
  // NOTE: 128B swizzle: 16-byte chunk index XOR (row % 8), as stmatrix wrote it.
  auto piece = [&](int r, int q) {
    return *reinterpret_cast<const uint4*>(src + r * 128 + (((q < 7 ? q : 7) ^ (r % 8)) * 16));
  };
  const int warp = t / 32, lane = t % 32;
#pragma unroll 1
  for (int it = warp; it < 16; it += 4) {
    const int c = it / 2, r = c + 8 * (4 * (it % 2) + lane / 8);
    const int m = static_cast<int>(reinterpret_cast<uintptr_t>(dst + c * pitch) & 15);  // rows c + 8 k: the same m
    const int b = lane % 8 + (m != 0 ? 1 : 0);
    const int n = min(16, end - 16 * b + m);  // bytes of the block to store (from its start)
    if (r >= rows || n <= 0) continue;
    char* a = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(dst + r * pitch) & ~uintptr_t{15}) + 16 * b);
    const uint4 v = m == 0 ? piece(r, b) : shift_window(piece(r, b - 1), piece(r, b), static_cast<unsigned>(16 - m));
    if (n == 16)
      *reinterpret_cast<uint4*>(a) = v;
    else
      store_prefix16(a, v, n);
  }
  if (t < rows) {
    char* row = dst + t * pitch;
    const int m = static_cast<int>(reinterpret_cast<uintptr_t>(row) & 15);
    if (m != 0) store_prefix16(row, piece(t, 0), min(16 - m, end));
  }
}

}  // namespace tmagemm::kernels
