// mma.cuh — warp-level tensor-core instructions used by the fallback template (sm_80+ forms, valid on sm_90a):
// ldmatrix (shared -> fragments) and mma.sync m16n8k16 with f32 accumulators.
#pragma once
#include <cuda/std/cstdint>

namespace tmagemm::ptx {

// Four 8x8 b16 matrices; lane l gives the row address of matrix l / 8.
__device__ inline void ldmatrix_x4(cuda::std::uint32_t smem_addr, cuda::std::uint32_t& r0, cuda::std::uint32_t& r1,
                                   cuda::std::uint32_t& r2, cuda::std::uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_addr));
}

// The same with each 8x8 matrix transposed on the way (rows in shared memory become columns of the fragment):
// loads an operand whose rows in shared memory run along M (A) or N (B) instead of K.
__device__ inline void ldmatrix_x4_trans(cuda::std::uint32_t smem_addr, cuda::std::uint32_t& r0,
                                         cuda::std::uint32_t& r1, cuda::std::uint32_t& r2, cuda::std::uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_addr));
}

// D = A(16x16, row) * B(16x8, col) + D, f32 accumulators; F16 selects f16 inputs, else bf16.
template <bool F16>
__device__ inline void mma_m16n8k16(float (&d)[4], const cuda::std::uint32_t (&a)[4], cuda::std::uint32_t b0,
                                    cuda::std::uint32_t b1) {
  if constexpr (F16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

}  // namespace tmagemm::ptx
