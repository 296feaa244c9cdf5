// pipeline.cuh — the stage ring of the TMA kernels (gemm_persistent_tma.cuh, gemm_skinny.cuh): full/empty mbarrier
// pairs that a TMA producer fills and WGMMA consumers drain, and the ring position both walk. (gemm_fallback.cuh has
// no barriers to share: its two register-staged buffers alternate on kt & 1 with one __syncthreads per slab; a
// RingPos<2> there changed its SASS, so it was left as it is.)
//
// Contract:
//   RingPos<S>  (stage, phase) of the next stage; advance() wraps the stage and flips the phase. The producer and
//               each consumer keep their own and walk the same sequence of stages.
//   Ring<S>     S full then S empty mbarriers at one shared-memory address (kBytes). init() by one thread: a full
//               barrier expects one arrival (the producer's expect_tx) plus the stage's transaction bytes, an empty
//               barrier `empty_arrivals` (one per consumer warp of every CTA whose producer writes the stage);
//               the kernel then publishes the initialisation (__syncthreads, or a cluster barrier when peers
//               multicast into this CTA and arrive on its barriers).
//   producer    wait_empty(pos) (a stage never filled passes at once), expect(stage, bytes), then the TMA loads that
//               complete on full[stage]. NOTE: TMA credits the full box bytes even for zero-filled parts.
//   consumers   wait_full(pos); once the wgmmas reading a stage have retired, lane 0 of each warp releases it on
//               this CTA's empty barrier or on the same barrier of the cluster CTAs whose producers write into it.
//   drain       a producer whose peers still arrive on its barriers waits for every stage to be released once more
//               before the CTA may exit.
//   never       synchronises anything but these barriers (no __syncthreads inside).
#pragma once
#include <cuda/ptx>
#include <cuda/std/cstdint>

#include "ptx/sync.cuh"

namespace tmagemm::kernels {

__device__ __forceinline__ void mbar_wait(cuda::std::uint64_t* bar, cuda::std::uint32_t parity) {
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
}

template <int S>
struct RingPos {
  int stage = 0;
  cuda::std::uint32_t phase = 0;

  // The position after the first n <= S stages of a fresh ring.
  __device__ __forceinline__ static RingPos fresh_after(int n) {
    RingPos p;
    p.stage = n % S;
    p.phase = n == S ? 1 : 0;
    return p;
  }
  __device__ __forceinline__ void advance() {
    if (++stage == S) {
      stage = 0;
      phase ^= 1;
    }
  }
};

template <int S>
struct Ring {
  static constexpr int kBytes = 2 * S * 8;
  cuda::std::uint64_t* full;
  cuda::std::uint64_t* empty;

  __device__ __forceinline__ explicit Ring(unsigned char* at)
      : full(reinterpret_cast<cuda::std::uint64_t*>(at)), empty(reinterpret_cast<cuda::std::uint64_t*>(at) + S) {}

  // One thread. Releases the initialisation to the cluster (enough for a relaxed cluster arrival after it).
  __device__ __forceinline__ void init(cuda::std::uint32_t empty_arrivals) const {
    for (int s = 0; s < S; ++s) {
      cuda::ptx::mbarrier_init(&full[s], 1);
      cuda::ptx::mbarrier_init(&empty[s], empty_arrivals);
    }
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __device__ __forceinline__ void wait_full(const RingPos<S>& p) const { mbar_wait(&full[p.stage], p.phase); }
  __device__ __forceinline__ void wait_empty(const RingPos<S>& p) const { mbar_wait(&empty[p.stage], p.phase ^ 1); }
  // The producer's arrival on full[stage], announcing `bytes` of TMA transactions.
  __device__ __forceinline__ void expect(int stage, cuda::std::uint32_t bytes) const {
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                         &full[stage], bytes);
  }
  // Frees `stage` in this CTA (Count = 1) or in CTAs 0 .. Count - 1 of the cluster.
  // NOTE: call only after wgmma.wait_group has retired the wgmmas that read the stage.
  template <int Count>
  __device__ __forceinline__ void release(int stage) const {
    if constexpr (Count > 1) {
#pragma unroll
      for (int r = 0; r < Count; ++r) ptx::mbarrier_arrive_cluster(&empty[stage], r);
    } else {
      cuda::ptx::mbarrier_arrive(&empty[stage]);
    }
  }
  // Frees `stage` in cluster CTAs first .. first + count - 1 (count known at run time; 1: this CTA alone).
  __device__ __forceinline__ void release(int stage, int first, int count) const {
    if (count > 1) {
      for (int j = 0; j < count; ++j) ptx::mbarrier_arrive_cluster(&empty[stage], first + j);
    } else {
      cuda::ptx::mbarrier_arrive(&empty[stage]);
    }
  }
  // Waits until every stage has been released once more after `pos` (the producer's position past its last load).
  __device__ __forceinline__ void drain(RingPos<S> pos) const {
    for (int i = 0; i < S; ++i) {
      wait_empty(pos);
      pos.advance();
    }
  }
};

}  // namespace tmagemm::kernels
