// dsmem_reduce.cu — lab probe (issue 21 point 3, forty-fifth session): what the skinny kernel's split reduction
// waits on. Its timelines put 1.25 us (64 x 64 tile, split 2) and 2.4 us (64 x 256, split 4) between the cluster
// barrier that opens the reduction and the last store, and staging the reduced tile for one TMA store (no plain
// stores) did not shorten it (docs/perf-notes.md, "Forty-fifth session"). Candidates: the distributed-shared-memory
// (DSMEM) loads' latency per unit (each thread sums one unit of 4 columns at a time), their bandwidth, the global
// stores, and contention with the other SMs' DRAM stream, which still runs when a cluster reduces.
//
// A cluster of S CTAs (160 threads each, as the skinny kernel) fills red[64][BN + 4] fp32 partials in its shared
// memory, passes a cluster barrier, then each CTA reduces columns [rank * BN / S, (rank + 1) * BN / S) of the S
// partials and stores 64 rows of them (bf16) to global memory; %globaltimer brackets the reduction (after the
// barrier to the last store issued, per thread 0), and a second cluster barrier ends the CTA. Modes:
//   0 loop   : the kernel's loop: a unit's S loads (ld.shared::cluster.v4) back to back, sum, one 8-byte store
//   1 pair   : two units a step: 2 S loads, then both sums and stores
//   2 self   : as 0, the CTA's own partial read with a local load (ld.shared) instead of through the cluster window
//   3 nostore: as 0 without the global stores (the sums kept in a register, one store at the end)
//   4 push   : before the barrier each CTA writes every peer's columns of its partial into that peer's receive
//              area with remote stores (st.shared::cluster.v4); after it, local loads only (the time includes the push)
// Each runs alone, then beside a DRAM stream (stream_timing.cuh's flush_read on another stream, half as many
// 512-thread CTAs as SMs reading a 2 GiB buffer at HBM rate, ~0.5 ms, launched first; the clusters may share SMs with it), as the tail of a
// decode kernel reduces while other clusters still stream.
// Build: nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o dsmem_reduce dsmem_reduce.cu
// Run: ./dsmem_reduce   (a table: S, BN, mode, background, median / max over CTAs of the reduction in ns)
#include <cuda_bf16.h>

#include "stream_timing.cuh"  // CK, flush_read (the background stream)

constexpr int kThreads = 160, kRows = 64, kPad = 4;

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned rank_in_cluster() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ unsigned remote_addr(const void* local, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"((unsigned)__cvta_generic_to_shared(local)),
               "r"(rank));
  return r;
}
__device__ __forceinline__ float4 ld_cluster(const void* local, unsigned rank) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(remote_addr(local, rank))
               : "memory");
  return v;
}
__device__ __forceinline__ void st_cluster(void* local, unsigned rank, float4 v) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(remote_addr(local, rank)), "f"(v.x),
               "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
}
__device__ __forceinline__ void add(float4& s, float4 v) {
  s.x += v.x;
  s.y += v.y;
  s.z += v.z;
  s.w += v.w;
}
__device__ __forceinline__ void store4(__nv_bfloat16* out, long long off, float4 v) {
  __nv_bfloat162 a = __floats2bfloat162_rn(v.x, v.y), b = __floats2bfloat162_rn(v.z, v.w);
  uint2 u;
  u.x = *reinterpret_cast<unsigned*>(&a);
  u.y = *reinterpret_cast<unsigned*>(&b);
  *reinterpret_cast<uint2*>(out + off) = u;
}

template <int S, int BN, int MODE>
__global__ void __launch_bounds__(kThreads) reduce_probe(__nv_bfloat16* out, int N, unsigned long long* times) {
  extern __shared__ float4 smem4[];
  float* red = reinterpret_cast<float*>(smem4);
  constexpr int RP = BN + kPad, cols = BN / S, quads = cols / 4, units = kRows * quads;
  float* recv = red + kRows * RP;  // mode 4: [S][kRows][cols], source s's columns of this CTA's share
  const unsigned rank = rank_in_cluster();
  const int n0 = (blockIdx.x / S) * BN, c0 = rank * cols;
  for (int i = threadIdx.x; i < kRows * RP; i += kThreads) red[i] = 0.001f * (rank + 1) + 1e-6f * i;
  __syncthreads();
  unsigned long long t0 = 0;
  if constexpr (MODE == 4) {
    cluster_sync();  // every peer's receive area is free (the kernel's ring is idle by then)
    t0 = now_ns();
    for (int u = threadIdx.x; u < kRows * (BN / 4); u += kThreads) {
      const int row = u / (BN / 4), col = 4 * (u % (BN / 4)), dest = col / cols;
      const float4 v = *reinterpret_cast<const float4*>(red + row * RP + col);
      st_cluster(recv + (rank * kRows + row) * cols + col % cols, dest, v);
    }
  }
  cluster_sync();
  if constexpr (MODE != 4) t0 = now_ns();
  float4 keep = make_float4(0, 0, 0, 0);
  if constexpr (MODE == 1) {
    for (int u = threadIdx.x; u < units; u += 2 * kThreads) {
      const int u2 = min(u + kThreads, units - 1);
      float4 v[2][S];
#pragma unroll
      for (int s = 0; s < S; ++s) {
        v[0][s] = ld_cluster(red + (u / quads) * RP + c0 + 4 * (u % quads), s);
        v[1][s] = ld_cluster(red + (u2 / quads) * RP + c0 + 4 * (u2 % quads), s);
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float4 sum = make_float4(0, 0, 0, 0);
#pragma unroll
        for (int s = 0; s < S; ++s) add(sum, v[h][s]);
        const int uu = h ? u2 : u;
        if (h == 0 || u + kThreads < units) store4(out, (long long)(uu / quads) * N + n0 + c0 + 4 * (uu % quads), sum);
      }
    }
  } else {
    for (int u = threadIdx.x; u < units; u += kThreads) {
      const int row = u / quads, col = c0 + 4 * (u % quads);
      float4 v[S], sum = make_float4(0, 0, 0, 0);
#pragma unroll
      for (int s = 0; s < S; ++s) {
        if constexpr (MODE == 4)
          v[s] = *reinterpret_cast<const float4*>(recv + (s * kRows + row) * cols + (col - c0));
        else if (MODE == 2 && s == static_cast<int>(rank))
          v[s] = *reinterpret_cast<const float4*>(red + row * RP + col);
        else
          v[s] = ld_cluster(red + row * RP + col, s);
      }
#pragma unroll
      for (int s = 0; s < S; ++s) add(sum, v[s]);
      if constexpr (MODE == 3)
        add(keep, sum);
      else
        store4(out, (long long)row * N + n0 + col, sum);
    }
  }
  if constexpr (MODE == 3) store4(out, (long long)(threadIdx.x % kRows) * N + n0 + c0, keep);
  const unsigned long long t1 = now_ns();
  cluster_sync();
  if (threadIdx.x == 0) times[blockIdx.x] = t1 - t0;
}

template <int S, int BN, int MODE>
void run(int clusters, bool background, const uint4* buf, size_t nbuf, unsigned* sink, int bg_ctas,
         cudaStream_t s_main, cudaStream_t s_bg) {
  const int N = clusters * BN, grid = clusters * S;
  const size_t smem = sizeof(float) * (kRows * (BN + kPad) + (MODE == 4 ? S * kRows * (BN / S) : 0));
  auto kern = reduce_probe<S, BN, MODE>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  __nv_bfloat16* out;
  unsigned long long* times;
  CK(cudaMalloc(&out, sizeof(__nv_bfloat16) * kRows * N));
  CK(cudaMalloc(&times, sizeof(unsigned long long) * grid));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s_main;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = S;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  std::vector<unsigned long long> all;
  for (int rep = 0; rep < 20; ++rep) {
    if (background) {
      flush_read<<<bg_ctas, 512, 0, s_bg>>>(buf, nbuf, sink);
      CK(cudaGetLastError());
    }
    CK(cudaLaunchKernelEx(&cfg, kern, out, N, times));
    CK(cudaDeviceSynchronize());
    std::vector<unsigned long long> t(grid);
    CK(cudaMemcpy(t.data(), times, sizeof(unsigned long long) * grid, cudaMemcpyDeviceToHost));
    if (rep >= 2) all.insert(all.end(), t.begin(), t.end());
  }
  std::sort(all.begin(), all.end());
  std::printf("S %d  BN %3d  mode %d %-7s  %-10s  clusters %3d  median %6llu ns  p90 %6llu  max %6llu\n", S, BN, MODE,
              MODE == 0 ? "loop" : MODE == 1 ? "pair" : MODE == 2 ? "self" : MODE == 3 ? "nostore" : "push",
              background ? "dram-busy" : "alone", clusters, all[all.size() / 2], all[all.size() * 9 / 10], all.back());
  CK(cudaFree(out));
  CK(cudaFree(times));
}

template <int S, int BN>
void all_modes(int clusters, bool bg, const uint4* buf, size_t n, unsigned* sink, int bg_ctas, cudaStream_t a,
               cudaStream_t b) {
  run<S, BN, 0>(clusters, bg, buf, n, sink, bg_ctas, a, b);
  run<S, BN, 1>(clusters, bg, buf, n, sink, bg_ctas, a, b);
  run<S, BN, 2>(clusters, bg, buf, n, sink, bg_ctas, a, b);
  run<S, BN, 3>(clusters, bg, buf, n, sink, bg_ctas, a, b);
  run<S, BN, 4>(clusters, bg, buf, n, sink, bg_ctas, a, b);
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t bytes = size_t(2) << 30, n = bytes / sizeof(uint4);
  uint4* buf;
  unsigned* sink;
  CK(cudaMalloc(&buf, bytes));
  CK(cudaMalloc(&sink, sizeof(unsigned)));
  CK(cudaMemset(buf, 1, bytes));
  cudaStream_t a, b;
  CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  // The decode shapes' grids: 64 x 4096 on 64x64 split 2 (128 CTAs) and on 256x64 split 4 (64 CTAs). Beside the
  // stream the clusters take half the SMs (the stream's CTAs, one a SM by their 512 threads and registers, the rest).
  for (bool bg : {false, true}) {
    const int bg_ctas = sms / 2;
    all_modes<2, 64>(bg ? sms / 4 : 64, bg, buf, n, sink, bg_ctas, a, b);
    all_modes<4, 256>(bg ? sms / 8 : 16, bg, buf, n, sink, bg_ctas, a, b);
  }
  return 0;
}
