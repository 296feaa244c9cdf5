// repitch.cuh — the pad path's copies (src/choices/pad_tma.cpp): `rows` rows of `cols` 16-bit elements from a source
// with row pitch src_ld into a destination with row pitch dst_ld, either side at any 2-byte alignment (the operands TMA
// refuses: odd K or N, a padded ld, a base off 16 bytes; and the copy of a re-pitched out back into the caller's rows).
//
// Contract: every destination element (r, c), r < rows, c < cols, is written once with the source element (r, c);
// nothing else of the destination is written, and no source byte outside the rows' cols elements is read except
// inside a 32-byte aligned window that also holds one of them and ends within the row (reads never reach past a row's
// last element, so past the end of an allocation).
//
// Each destination row is cut into 16-byte aligned blocks; a block lying wholly inside the row is stored with one
// 16-byte store, its 16 source bytes read with the two aligned 16-byte loads that cover them and shifted into place
// (the shift is the row's source-minus-destination misalignment, the same for every block of a row). The partial
// blocks at the ends of a row, and a block whose second source load would read past the source row's end, are
// copied element by element. One CTA per row at a time (grid-stride over rows), its threads over the row's blocks:
// consecutive threads store consecutive 16-byte blocks.
#pragma once
#include <cuda/std/cstdint>

#include "window.cuh"

namespace tmagemm::kernels {

__global__ void __launch_bounds__(256) repitch16(void* dst, long long dst_ld, const void* src, long long src_ld,
                                                 long long rows, long long cols) {
  using cuda::std::uintptr_t;
  const long long row_bytes = cols * 2;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    char* d0 = static_cast<char*>(dst) + r * dst_ld * 2;
    const char* s0 = static_cast<const char*>(src) + r * src_ld * 2;
    const uintptr_t dstart = reinterpret_cast<uintptr_t>(d0), dend = dstart + row_bytes;
    const uintptr_t sstart = reinterpret_cast<uintptr_t>(s0), send = sstart + row_bytes;
    const uintptr_t first = (dstart + 15) & ~uintptr_t{15}, last = dend & ~uintptr_t{15};  // whole blocks [first, last)
    const unsigned shift = static_cast<unsigned>((sstart - dstart) & 15);  // source misalignment of every block
    auto copy_elems = [&](uintptr_t from, uintptr_t to) {  // destination bytes [from, to), element by element
      for (uintptr_t x = from; x < to; x += 2)
        *reinterpret_cast<unsigned short*>(x) = *reinterpret_cast<const unsigned short*>(sstart + (x - dstart));
    };
    if (first >= last) {  // no whole block: a short row
      if (threadIdx.x == 0) copy_elems(dstart, dend);
      continue;
    }
    if (threadIdx.x == 0) copy_elems(dstart, first);
    if (threadIdx.x == 1) copy_elems(last, dend);
    for (uintptr_t x = first + 16 * threadIdx.x; x < last; x += 16 * blockDim.x) {
      const uintptr_t s = sstart + (x - dstart);
      const uintptr_t a = s & ~uintptr_t{15};
      uint4 v;
      if (shift == 0) {
        v = __ldg(reinterpret_cast<const uint4*>(a));
      } else if (a + 32 <= send) {
        v = shift_window(__ldg(reinterpret_cast<const uint4*>(a)), __ldg(reinterpret_cast<const uint4*>(a + 16)),
                         static_cast<unsigned>(s - a));
      } else {  // the second load would read past the row's last element
        unsigned short e[8];
        for (int i = 0; i < 8; ++i) e[i] = *reinterpret_cast<const unsigned short*>(s + 2 * i);
        v = make_uint4(e[0] | unsigned(e[1]) << 16, e[2] | unsigned(e[3]) << 16, e[4] | unsigned(e[5]) << 16,
                       e[6] | unsigned(e[7]) << 16);
      }
      *reinterpret_cast<uint4*>(x) = v;
    }
  }
}

}  // namespace tmagemm::kernels
