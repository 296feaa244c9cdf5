// window.cuh — realigning 16-bit rows: a 16-byte window at any even byte offset of two adjacent aligned 16-byte
// pieces, in registers. Used by the pad path's row copy (repitch.cuh) and by the TMA-store epilogue's plain stores to
// an output TMA cannot address (epilogue.cuh store_packed_chunk's Plain: store_block_realigned).
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

// Stores bytes [lo, hi) (even, 0 <= lo < hi <= 16) of the 16 bytes v to the 16-byte aligned address a with naturally
// aligned 2-, 4- and 8-byte stores (at most four); the other bytes of the block are not written.
__device__ inline void store_bytes16(char* a, const uint4& v, int lo, int hi) {
  using u64 = unsigned long long;
  const u64 q0 = static_cast<u64>(v.y) << 32 | v.x, q1 = static_cast<u64>(v.w) << 32 | v.z;
  auto from = [&](int x) { return x < 8 ? q0 >> (8 * x) : q1 >> (8 * (x - 8)); };  // the bytes from x on
  int x = lo;
  if ((x & 2) && x + 2 <= hi) {
    *reinterpret_cast<unsigned short*>(a + x) = static_cast<unsigned short>(from(x));
    x += 2;
  }
  if ((x & 4) && x + 4 <= hi) {
    *reinterpret_cast<unsigned*>(a + x) = static_cast<unsigned>(from(x));
    x += 4;
  }
  if (x + 8 <= hi) {  // x is 0 or 8 here
    *reinterpret_cast<u64*>(a + x) = from(x);
    x += 8;
  }
  if (x + 4 <= hi) {
    *reinterpret_cast<unsigned*>(a + x) = static_cast<unsigned>(from(x));
    x += 4;
  }
  if (x + 2 <= hi) *reinterpret_cast<unsigned short*>(a + x) = static_cast<unsigned short>(from(x));
}

// Bytes [d, d + 16) of the 32 bytes lo | hi for any even d in [0, 16], without a branch: the words are picked with
// selects and joined with a funnel shift of 0 or 16 bits, so that lanes with different d do not diverge (the
// epilogue's rows each have their own misalignment; shift_window's switch serialised them).
__device__ inline uint4 select_window(const uint4& lo, const uint4& hi, unsigned d) {
  const unsigned q = d >> 2, s = (d & 2u) * 8u;  // whole words, then 0 or 16 bits
  const unsigned w[9] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w, 0u};
  unsigned a[5];
#pragma unroll
  for (int i = 0; i < 5; ++i)
    a[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : q == 3 ? w[i + 3] : w[i + 4];
  return make_uint4(__funnelshift_r(a[0], a[1], s), __funnelshift_r(a[1], a[2], s), __funnelshift_r(a[2], a[3], s),
                    __funnelshift_r(a[3], a[4], s));
}

// Copies the first `end` bytes (even, <= 128) of rows [0, rows) of a staged block (src: shared memory, [64][128 bytes]
// 128B-swizzled, as stmatrix writes a 64x64 16-bit chunk) to dst + r * pitch (bytes; rows at any 2-byte alignment),
// by the 128 threads t of a warpgroup. Each row's destination is cut into the 16-byte aligned blocks it overlaps (8,
// or 9 when the row is off 16 bytes): a whole block is one 16-byte store of the window of its two staged pieces, a
// partial one (a row's ends, the N edge) goes through store_bytes16, so that no byte outside the rows' `end` bytes is
// written (a neighbouring chunk writes the rest of a shared block). Consecutive threads take consecutive blocks.
__device__ inline void store_block_realigned(const unsigned char* src, char* dst, long long pitch, int rows, int end,
                                             int t) {
  using cuda::std::uintptr_t;
  for (int idx = t; idx < rows * 9; idx += 128) {
    const int r = idx / 9, blk = idx % 9;
    const uintptr_t row = reinterpret_cast<uintptr_t>(dst + r * pitch);
    const int m = static_cast<int>(row & 15);
    // Destination block blk holds staged bytes [16 blk - m, 16 blk - m + 16) of the row: the window at 16 - m of
    // pieces blk - 1 and blk (a piece outside 0..7 only supplies bytes that are not stored: any piece will do).
    const int lo = max(0, m - 16 * blk), hi = min(16, end - 16 * blk + m);
    if (lo >= hi) continue;
    auto piece = [&](int q) {
      q = min(max(q, 0), 7);
      // NOTE: 128B swizzle: 16-byte chunk index XOR (row % 8), as stmatrix wrote it.
      return *reinterpret_cast<const uint4*>(src + r * 128 + ((q ^ (r % 8)) * 16));
    };
    const uint4 v = select_window(piece(blk - 1), piece(blk), static_cast<unsigned>(16 - m));
    char* a = reinterpret_cast<char*>((row & ~uintptr_t{15}) + 16 * blk);
    if (lo == 0 && hi == 16)
      *reinterpret_cast<uint4*>(a) = v;
    else
      store_bytes16(a, v, lo, hi);
  }
}

}  // namespace tmagemm::kernels
