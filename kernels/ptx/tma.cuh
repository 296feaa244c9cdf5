// tma.cuh — TMA loads with an L2 cache policy, which cuda::ptx's cp_async_bulk_tensor does not offer, and the policy
// itself (createpolicy).
#pragma once
#include <cuda/ptx>
#include <cuda/std/cstdint>

namespace tmagemm::ptx {

// An L2 policy that marks the lines a load brings in as the first to evict: for an operand streamed once, so that
// it does not push out what L2 holds for others (the small operand every CTA re-reads, other kernels' data).
__device__ inline cuda::std::uint64_t l2_policy_evict_first() {
  cuda::std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// A 3-D tiled TMA load into this CTA's shared memory, completing on `bar` (complete_tx), with an L2 cache policy.
// NOTE: the same form as cuda::ptx::cp_async_bulk_tensor(space_cluster, space_global, ...) plus .L2::cache_hint.
__device__ inline void tma_load_3d_hint(void* dst, const void* map, cuda::std::int32_t c0, cuda::std::int32_t c1,
                                        cuda::std::int32_t c2, cuda::std::uint64_t* bar, cuda::std::uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(static_cast<cuda::std::uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(reinterpret_cast<cuda::std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2),
      "r"(static_cast<cuda::std::uint32_t>(__cvta_generic_to_shared(bar))), "l"(policy)
      : "memory");
}

// The same load multicast to the cluster CTAs of `mask` (each receives the box at the same offset and completes on
// its own barrier at `bar`'s offset).
// NOTE: operand order per the PTX ISA: [dst], [map, coords], [mbar], ctaMask, cache-policy.
__device__ inline void tma_load_3d_hint_multicast(void* dst, const void* map, cuda::std::int32_t c0,
                                                  cuda::std::int32_t c1, cuda::std::int32_t c2,
                                                  cuda::std::uint64_t* bar, cuda::std::uint16_t mask,
                                                  cuda::std::uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      ".L2::cache_hint [%0], [%1, {%2, %3, %4}], [%5], %6, %7;\n" ::"r"(
          static_cast<cuda::std::uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(reinterpret_cast<cuda::std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2),
      "r"(static_cast<cuda::std::uint32_t>(__cvta_generic_to_shared(bar))), "h"(mask), "l"(policy)
      : "memory");
}

// One 3-D TMA load of a persistent kernel's operand: multicast to the cluster CTAs of `mask` where `multicast`, and
// with the L2 `policy` where `hinted` (else the default policy).
__device__ __forceinline__ void tma_load_3d(void* dst, const void* map, cuda::std::int32_t c0, cuda::std::int32_t c1,
                                            cuda::std::int32_t c2, cuda::std::uint64_t* bar, bool multicast,
                                            cuda::std::uint16_t mask, bool hinted, cuda::std::uint64_t policy) {
  if (hinted) {
    if (multicast)
      tma_load_3d_hint_multicast(dst, map, c0, c1, c2, bar, mask, policy);
    else
      tma_load_3d_hint(dst, map, c0, c1, c2, bar, policy);
    return;
  }
  const cuda::std::int32_t c[3] = {c0, c1, c2};
  if (multicast)
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, map, c, bar, mask);
  else
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, map, c, bar);
}

}  // namespace tmagemm::ptx
