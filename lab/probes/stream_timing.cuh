// stream_timing.cuh — what the lab's stream probes (decode_floor.cu, tile_stream.cu) share: timing a launch as
// `tmagemm bench` times a run (L2 flushed by a 256 MiB write or read outside the timed region, CUDA events around one
// launch, median after 5 warm-ups), the read flush's kernel, mbarrier waits, and the 1-D bulk-copy stream (one lane a
// CTA streams its contiguous share through a ring of S stages of C bytes with cp.async.bulk, nothing consumed).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

__global__ void flush_read(const uint4* p, unsigned long long n, unsigned* sink) {
  unsigned x = 0;
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint4 v = p[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x12345678u) *sink = x;
}

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void wait_parity(uint64_t* bar, uint32_t parity) {
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra W; }" ::"r"(
                   smem_u32(bar)),
               "r"(parity)
               : "memory");
}

template <int S, int C>
__global__ void bulk_stream(const unsigned char* src_all, unsigned long long share, unsigned* sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t full[S];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < S; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&full[s])));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const unsigned char* src = src_all + blockIdx.x * share;
  const unsigned long long chunks = share / C;
  for (unsigned long long i = 0; i < chunks; ++i) {
    const int s = static_cast<int>(i % S);
    if (i >= S) wait_parity(&full[s], static_cast<uint32_t>((i / S - 1) & 1));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(&full[s])), "r"(C)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_u32(smem + s * C)),
                 "l"(src + i * C), "r"(C), "r"(smem_u32(&full[s]))
                 : "memory");
  }
  for (unsigned long long i = chunks > S ? chunks - S : 0; i < chunks; ++i)
    wait_parity(&full[i % S], static_cast<uint32_t>((i / S) & 1));
  if (smem[0] == 0x7f && smem[1] == 0x7e) *sink = 1;
}

struct Ctx {
  cudaStream_t st;
  cudaEvent_t a, b;
  unsigned char* flush;
  size_t flush_bytes;
  unsigned* sink;
  int counter = 0;
};

inline void do_flush(Ctx& c, bool read) {
  if (read)
    flush_read<<<132 * 8, 512, 0, c.st>>>(reinterpret_cast<const uint4*>(c.flush), c.flush_bytes / 16, c.sink);
  else
    CK(cudaMemsetAsync(c.flush, ++c.counter & 0xff, c.flush_bytes, c.st));
}

template <class F>
float time_med(Ctx& c, bool read, int reps, F launch) {
  std::vector<float> t;
  for (int r = 0; r < reps + 5; ++r) {
    do_flush(c, read);
    CK(cudaEventRecord(c.a, c.st));
    launch();
    CK(cudaEventRecord(c.b, c.st));
    CK(cudaEventSynchronize(c.b));
    float ms;
    CK(cudaEventElapsedTime(&ms, c.a, c.b));
    if (r >= 5) t.push_back(ms * 1000.f);
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

// A non-blocking stream, its events, a 256 MiB flush buffer and the read flush's sink.
inline Ctx make_ctx() {
  Ctx c;
  CK(cudaStreamCreateWithFlags(&c.st, cudaStreamNonBlocking));
  CK(cudaEventCreate(&c.a));
  CK(cudaEventCreate(&c.b));
  c.flush_bytes = size_t{256} << 20;
  CK(cudaMalloc(&c.flush, c.flush_bytes));
  CK(cudaMemset(c.flush, 0x5a, c.flush_bytes));
  CK(cudaMalloc(&c.sink, 16));
  return c;
}

// The weight a probe streams (its bytes are constant: a stream's rate does not depend on them).
inline unsigned char* make_weight(size_t bytes) {
  unsigned char* w = nullptr;
  CK(cudaMalloc(&w, bytes));
  CK(cudaMemset(w, 0x11, bytes));
  CK(cudaDeviceSynchronize());
  return w;
}
