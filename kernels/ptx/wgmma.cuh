// wgmma.cuh — wgmma ordering instructions and the shared-memory matrix descriptor (Hopper, sm_90a).
// The mma_async shapes themselves are in wgmma_ops.cuh (generated).
#pragma once
#include <cuda/std/cstdint>

#include "ptx/wgmma_ops.cuh"

namespace tmagemm::ptx {

// NOTE: wgmma.fence is required before the first wgmma and after any other access to the accumulators.
__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int Pending>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// Accumulator registers are "+f" operands of the asm; this keeps the compiler from moving reads of them
// across a wgmma.wait (it sees a use/def of every register).
template <int R>
__device__ inline void fence_accumulators(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// 64-bit shared-memory matrix descriptor with 128-byte swizzle.
// NOTE: address, LBO and SBO are stored >> 4 in 14-bit fields; swizzle code 1 = 128B (not the TMA enum's 3);
// base offset 0 requires every swizzle atom (8 rows x 128 B) to start 1024-byte aligned.
__device__ inline cuda::std::uint64_t smem_desc_sw128(cuda::std::uint32_t smem_addr, cuda::std::uint32_t lbo_bytes,
                                                      cuda::std::uint32_t sbo_bytes) {
  cuda::std::uint64_t d = 0;
  d |= static_cast<cuda::std::uint64_t>((smem_addr & 0x3FFFF) >> 4);
  d |= static_cast<cuda::std::uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16;
  d |= static_cast<cuda::std::uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32;
  d |= static_cast<cuda::std::uint64_t>(1) << 62;
  return d;
}

// The descriptor of the matrix `bytes` further on: adds bytes >> 4 to the address field (low word only).
// NOTE: valid while the shifted address stays inside its 14-bit field (shared memory < 256 KiB: always).
__device__ inline cuda::std::uint64_t smem_desc_add(cuda::std::uint64_t desc, cuda::std::uint32_t bytes) {
  const cuda::std::uint32_t lo = static_cast<cuda::std::uint32_t>(desc) + (bytes >> 4);
  return (desc & 0xFFFFFFFF00000000ull) | lo;
}

}  // namespace tmagemm::ptx
