// sync.cuh — register reallocation, named barriers and small fences used by the warp-specialised kernels.
#pragma once
#include <cuda/std/cstdint>

namespace tmagemm::ptx {

// NOTE: setmaxnreg must be executed by all warps of a warpgroup; needs __launch_bounds__(threads, 1).
template <int Regs>
__device__ inline void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Regs));
}
template <int Regs>
__device__ inline void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Regs));
}

// Named barrier over `threads` threads (a multiple of 32); id 0 is __syncthreads.
__device__ inline void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Arrival on a named barrier without waiting (the threads that bar.sync on it wait for `threads` in all).
__device__ inline void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ inline cuda::std::uint32_t smem_u32(const void* p) {
  return static_cast<cuda::std::uint32_t>(__cvta_generic_to_shared(p));
}

// Programmatic dependent launch (PDL). A kernel launched with programmatic stream serialization may start while the
// kernel before it in the stream still runs: grid_dependency_wait blocks the calling thread until that kernel has
// completed and its memory is visible (at once without such a predecessor). NOTE: every global read of data another
// kernel may have written must come after it. launch_dependents lets the next kernel (if launched the same way)
// start its own prologue; that kernel still waits for this one to complete before reading what it writes.
__device__ inline void grid_dependency_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ inline void launch_dependents() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

// Arrives on the mbarrier at the same shared-memory offset in CTA `rank` of the cluster (default semantics:
// release at CTA scope, as CUTLASS's ClusterBarrier::arrive(cta_id)).
// NOTE: measured on H200 (docs/perf-notes.md): `.release.cluster` here made ncu report 9 of 22 cycles per issue
// stalled on a memory barrier and ran the 2-CTA kernel at about half speed. The consumers call it only after
// wgmma.wait_group has retired the reads of the stage, and the peer's refill is ordered by this barrier.
__device__ inline void mbarrier_arrive_cluster(const void* local_bar, cuda::std::uint32_t rank) {
  cuda::std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_u32(local_bar)), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}

// Reads 4 floats at the same shared-memory offset as `local` in CTA `rank` of the cluster (distributed shared
// memory). NOTE: the peer's writes must be ordered before this read by a cluster barrier (release / acquire), and
// the peer must not exit before the read completes.
__device__ inline float4 ld_shared_cluster_f32x4(const void* local, cuda::std::uint32_t rank) {
  cuda::std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_u32(local)), "r"(rank));
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(remote)
               : "memory");
  return v;
}

// The shared::cluster address of `local`'s offset in CTA `rank` of the cluster (distributed shared memory).
__device__ inline cuda::std::uint32_t cluster_addr(const void* local, cuda::std::uint32_t rank) {
  cuda::std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_u32(local)), "r"(rank));
  return remote;
}

// Stores 4 floats at a shared::cluster address of another CTA without waiting; the store completes on the mbarrier at
// `remote_bar` (in the same CTA as the data) as 16 transaction bytes. NOTE: the receiver's full barrier must expect
// the bytes of every such store (expect_tx) before its phase can complete; no fence is needed beside it.
__device__ inline void st_async_f32x4(cuda::std::uint32_t remote, float a, float b, float c, float d,
                                      cuda::std::uint32_t remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(
                   remote),
               "r"(__float_as_uint(a)), "r"(__float_as_uint(b)), "r"(__float_as_uint(c)), "r"(__float_as_uint(d)),
               "r"(remote_bar)
               : "memory");
}

// Arrives on an mbarrier of another CTA (a shared::cluster address) with release at cluster scope: this thread's
// earlier memory accesses, and those ordered before them (e.g. by a named barrier), happen before whatever the peer
// does after its acquire wait on the barrier's phase. (The stage ring's releases use the default semantics instead,
// for speed: docs/perf-notes.md.)
__device__ inline void mbarrier_arrive_remote_release(cuda::std::uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar) : "memory");
}

__device__ inline cuda::std::uint32_t cluster_ctarank() {
  cuda::std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Whole-cluster barrier (all non-exited threads of every CTA), release/acquire; split in two halves so that a thread
// can do independent work between its arrival and its wait.
__device__ inline void cluster_arrive() { asm volatile("barrier.cluster.arrive.release;\n" ::: "memory"); }
// Arrival that orders nothing by itself (no memory fence in the SASS). Enough after fence.mbarrier_init, which already
// releases the barrier initialisation to the cluster.
__device__ inline void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed;\n" ::: "memory"); }
__device__ inline void cluster_wait() { asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory"); }
__device__ inline void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// Warms the descriptor cache for a __grid_constant__ tensor map (generic address of the parameter).
__device__ inline void prefetch_tensormap(const void* tmap) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<cuda::std::uint64_t>(tmap)) : "memory");
}

// Stores four 8x8 b16 matrices to shared memory; lane l gives the row address for matrix l/8.
__device__ inline void stmatrix_x4(cuda::std::uint32_t smem_addr, cuda::std::uint32_t r0, cuda::std::uint32_t r1,
                                   cuda::std::uint32_t r2, cuda::std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

// Packs two floats into bf16x2 / f16x2 (lo in the low half).
// NOTE: cvt.rn.bf16x2.f32 d, a, b puts a in the UPPER half.
__device__ inline cuda::std::uint32_t pack_bf16x2(float lo, float hi) {
  cuda::std::uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ inline cuda::std::uint32_t pack_f16x2(float lo, float hi) {
  cuda::std::uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

}  // namespace tmagemm::ptx
