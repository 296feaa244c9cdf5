// cluster_split_k.cuh — a tile's K blocks split between the two CTAs of a cluster (persistent TMA's kClusterK = 2
// configs): both CTAs compute the same tile, CTA r over the r-th half of its K blocks, and their fp32 sums meet in
// distributed shared memory, not in a global workspace (no memset, no counter, no L2 round trip).
//
// Contract:
//   roles     with two consumers, consumer r of CTA r (the receiver) finishes the rows of consumer r: its own sums plus
//             those of consumer r of the peer CTA (the sender), which sends them and has nothing to store. So each CTA
//             finishes half of the tile's rows and both store at once.
//   takes     one consumer's accumulators (MI m64 fragments of WN / 2 values per thread, the wgmma's fragment order: the
//             two CTAs' threads of one consumer index hold the same elements), two mbarriers in this CTA's shared
//             memory (bars[0] "full": one arrival, the receiver's expect_tx, and kBytes of st.async transactions;
//             bars[1] "empty": one arrival, from the peer's receiver) initialised before the kernel's first cluster
//             barrier, and kBytes of shared memory for the received sums (buf; the same offset in both CTAs).
//   send      waits until the peer's receiver has read the previous send (none before the first), then stores the
//             accumulators into the peer's buf with st.async (quad q of thread t at float4 q * 128 + t: conflict-free),
//             each completing on the peer's full barrier; returns without waiting for them.
//   receive   arms the full barrier for kBytes, waits for its phase, adds buf into the accumulators (own + peer in that
//             order: two runs give the same bits), then, once the warpgroup has read buf (named barrier `bar_id`),
//             frees it on the peer's empty barrier.
//   finish    a sender waits until its last send has been read: the peer's arrival on this CTA's empty barrier then
//             lies before this CTA exits (a remote arrival on an exited CTA is undefined), and the receiver waits for
//             every send, so neither side touches a CTA that has left.
//   never     waits on anything but these two barriers and the receiver's named barrier (bar_id: the kernel passes
//             4 + consumer, the ids stream_k_fixup.cuh uses; the two never run in one kernel); both CTAs walk the same
//             tiles, so sends and receives pair up.
#pragma once
#include <cuda/ptx>
#include <cuda/std/cstdint>

#include "pipeline.cuh"
#include "ptx/sync.cuh"
#include "ptx/wgmma.cuh"

namespace tmagemm::kernels {

// mbarrier wait with acquire at cluster scope (the arrivals come from the peer CTA).
__device__ __forceinline__ void mbar_wait_cluster(cuda::std::uint64_t* bar, cuda::std::uint32_t parity) {
  while (!cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, cuda::ptx::scope_cluster, bar, parity)) {
  }
}

template <int MI, int WN>
struct ClusterSplitK {
  static_assert(WN % 8 == 0, "a fragment's values go as whole float4s");
  static constexpr int kQuads = MI * WN / 8;  // float4s a thread
  static constexpr int kBytes = kQuads * 128 * 16;

  cuda::std::uint64_t* bars;  // [0] full, [1] empty
  unsigned char* buf;         // kBytes, 16-byte aligned
  cuda::std::uint32_t peer;   // the other CTA's rank in the cluster
  int sent = 0, received = 0;

  __device__ __forceinline__ void send(float (&acc)[MI][WN / 2], int tid) {
    if (sent > 0) mbar_wait_cluster(&bars[1], static_cast<cuda::std::uint32_t>(sent - 1) & 1);
    const cuda::std::uint32_t dst = ptx::cluster_addr(buf, peer) + static_cast<cuda::std::uint32_t>(tid) * 16;
    const cuda::std::uint32_t full = ptx::cluster_addr(&bars[0], peer);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      ptx::fence_accumulators(acc[mi]);
#pragma unroll
      for (int i = 0; i < WN / 2; i += 4) {
        const int q = mi * (WN / 8) + i / 4;
        ptx::st_async_f32x4(dst + q * 2048, acc[mi][i], acc[mi][i + 1], acc[mi][i + 2], acc[mi][i + 3], full);
      }
    }
    ++sent;
  }

  __device__ __forceinline__ void receive(float (&acc)[MI][WN / 2], int tid, int bar_id) {
    if (tid == 0)
      cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                           &bars[0], kBytes);
    mbar_wait_cluster(&bars[0], static_cast<cuda::std::uint32_t>(received) & 1);
    const float4* src = reinterpret_cast<const float4*>(buf) + tid;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      ptx::fence_accumulators(acc[mi]);
#pragma unroll
      for (int i = 0; i < WN / 2; i += 4) {
        const float4 v = src[(mi * (WN / 8) + i / 4) * 128];
        acc[mi][i] += v.x;
        acc[mi][i + 1] += v.y;
        acc[mi][i + 2] += v.z;
        acc[mi][i + 3] += v.w;
      }
    }
    ptx::named_barrier_sync(bar_id, 128);  // every thread's reads of buf before the peer may write it again
    // NOTE: release at cluster scope, against the sender's acquire at cluster scope: the warpgroup's reads of buf
    // (ordered before this thread's arrival by the named barrier) happen before the peer's next st.async into it.
    // (Once a tile, so its fence costs little, unlike the stage ring's releases.)
    if (tid == 0) ptx::mbarrier_arrive_remote_release(ptx::cluster_addr(&bars[1], peer));
    ++received;
  }

  __device__ __forceinline__ void finish() const {
    if (sent > 0) mbar_wait_cluster(&bars[1], static_cast<cuda::std::uint32_t>(sent - 1) & 1);
  }
};

}  // namespace tmagemm::kernels
