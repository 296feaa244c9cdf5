// wgmma_rate.cu — the tensor cores' rate on wgmma.mma_async m64nNk16 (bf16 in, f32 accumulators, both operands from
// shared memory through the project's own wrappers and descriptors), by
//   N (the tile's columns per instruction: 64 .. 256),
//   the number of consumer warpgroups issuing at once (1, 2, 3: a tile's consumers, each on its own 64 rows of A and
//   all of B),
//   m-blocks per warpgroup (1, or 2 independent accumulator sets per K step, as a ping-pong consumer owning a whole
//   128-row tile issues them),
//   B's layout (K-major: an `rc` problem; N-major: `rr`),
//   and whether one more warp keeps bulk copies (global -> shared, 4 x 16 KiB in flight) writing shared memory the
//   whole time, as a producer's TMA loads do;
//   and, for four of the tiles, A from registers (the RS form, lab/probes/wgmma_rs.cuh): the same tensor work without
//   A's shared-memory reads, which separates a shared-memory-bandwidth limit from the tensor cores' own.
// Why: narrow and three-consumer tiles (192x96, 128x160, 64x144 — cuBLASLt's wave-fitting picks) ran 0.64-0.89 of
// cuBLASLt in the thirty-eighth session, although 192x96 moves the same L2 bytes per FLOP as 128x128. Whether a
// consumer's wgmma stream itself is slower at N = 96 / 160, or with three warpgroups sharing B, or when TMA writes
// compete for shared memory, is a fact to measure, not to guess.
//
// Each variant: one CTA per SM (132 CTAs; also 1 CTA, the SM alone), inputs random bf16 (the tensor cores' power
// depends on the data), every warpgroup timing `iters` K blocks of 64 (4 wgmma K steps each, committed as one group,
// wgmma.wait_group 1 as the persistent kernel's consumers do) with clock64; a CTA's time is its slowest warpgroup's,
// and each CTA has an SM to itself (at least 117 KiB of shared memory a CTA; %smid checked). Printed: SM cycles a K
// block, dense FLOP per SM clock (the H100/H200 tensor peak is 4096 for bf16), the fraction of that peak, TFLOP/s from
// the wall time of the 132-CTA launch (so it folds in the clock the SMs ran at), the writer's bytes per SM cycle, and
// the largest slowest/fastest warpgroup ratio in a CTA. Each launch is named on stderr first (a fault names its
// variant).
//
// Build (this machine; lab/prepare-39.sh does it):
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Ikernels \
//     -o .carry/bin/wgmma_rate lab/probes/wgmma_rate.cu
// Run (the H200): .carry/bin/wgmma_rate [iters]   (default 4096 K blocks a warpgroup)
//   .carry/bin/wgmma_rate ITERS SECONDS: the sustained mode only (run_sustained: SS against RS at the power cap; its
//   launches are 32768 K blocks each, ITERS is not used)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda/ptx>
#include <cuda/std/cstdint>
#include <vector>

#include "operand.cuh"
#include "ptx/sync.cuh"
#include "ptx/wgmma.cuh"
#include "ptx/wgmma_ops.cuh"
#include "wgmma_rs.cuh"

using tmagemm::kernels::Sw128Operand;
namespace ptx = tmagemm::ptx;
using cuda::std::uint32_t;
using cuda::std::uint64_t;

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

constexpr int kBK = 64;                 // K of one block: one 128-byte swizzled row of bf16
constexpr int kSteps = kBK / 16;        // wgmma K steps a block
constexpr int kABlockBytes = 64 * 128;  // one 64-row K-major block of A
constexpr int kCopyBytes = 16384;       // one bulk copy of the writer
constexpr int kCopies = 4;              // bulk copies in flight

// m64n48k16 (bf16, both operands from shared memory, B K-major): not in the project's generated set (N a multiple of
// 32), needed here for a 192x96 tile split by columns over two consumers (each 192x48: three m-blocks of n48).
__device__ inline void mma_n48(float (&d)[24], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %26, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n48k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, "
      "%24, %25, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

template <int N, bool KMajorB>
constexpr int b_bytes() {
  // K-major: N rows of 128 bytes; N-major: 64-column chunks of [kBK][128 B] (whole chunks, as the kernel loads them).
  return KMajorB ? N * 128 : (N + 63) / 64 * kBK * 128;
}

template <int N, int WGS, int MB, bool KMajorB, bool Writer, bool SplitN>
constexpr int smem_bytes() {
  return 1024 + (SplitN ? 1 : WGS) * MB * kABlockBytes + b_bytes<N*(SplitN ? WGS : 1), KMajorB>() +
         (Writer ? kCopies * kCopyBytes : 0) + 64;
}

__device__ inline uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Random bf16 in [-1, 1) (never a NaN or an infinity: the exponent stays below 127).
__device__ inline unsigned short random_bf16(uint32_t i) {
  const float f = static_cast<float>(hash32(i) & 0xFFFFFF) / static_cast<float>(1 << 23) - 1.0f;
  return static_cast<unsigned short>(__float_as_uint(f) >> 16);
}

struct Result {
  unsigned long long* cycles;   // [grid * WGS]: each warpgroup's clock64 span
  unsigned long long* written;  // [grid]: the writer's bytes
  unsigned long long* wcycles;  // [grid]: the writer's clock64 span
  unsigned* smid;               // [grid]: the SM each CTA ran on (one CTA an SM is checked on the host)
  float* sink;                  // written only when iters < 0 (never): keeps the accumulators live
};

template <int N, int WGS, int MB, bool KMajorB, bool Writer, bool SplitN, bool RS>
__global__ void __launch_bounds__(128 * (WGS + (Writer ? 1 : 0)), 1)
    rate_kernel(int iters, Result res, const uint4* src, uint32_t src_chunks) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* base =
      reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  unsigned char* a_smem = base;
  static_assert((N != 48 && !SplitN) || KMajorB,
                "n48 only with a K-major B (an N-major 48-column slice is not whole atoms)");
  constexpr int kAWgs = SplitN ? 1 : WGS;       // split by columns: the warpgroups share A's rows
  constexpr int kBCols = SplitN ? WGS * N : N;  // ... and each reads its own N columns of B
  unsigned char* b_smem = a_smem + kAWgs * MB * kABlockBytes;
  unsigned char* w_smem = b_smem + b_bytes<kBCols, KMajorB>();
  uint64_t* bars = reinterpret_cast<uint64_t*>(w_smem + (Writer ? kCopies * kCopyBytes : 0));
  volatile int* done = reinterpret_cast<volatile int*>(bars + kCopies);

  // Random operands (the layout's contents do not matter to the rate, their values do to the power).
  const int operand_bytes = kAWgs * MB * kABlockBytes + b_bytes<kBCols, KMajorB>();
  unsigned short* ops = reinterpret_cast<unsigned short*>(a_smem);
  for (int i = threadIdx.x; i < operand_bytes / 2; i += blockDim.x) ops[i] = random_bf16(i + 7919u * blockIdx.x);
  if (threadIdx.x == 0) {
    for (int c = 0; c < kCopies; ++c) cuda::ptx::mbarrier_init(&bars[c], 1u);
    *done = 0;
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  // NOTE: generic-proxy writes of wgmma operands must be fenced to the async proxy before wgmma reads them.
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  __syncthreads();

  const int wg = threadIdx.x / 128;
  if (wg < WGS) {
    float acc[MB][N / 2];
#pragma unroll
    for (int m = 0; m < MB; ++m)
#pragma unroll
      for (int i = 0; i < N / 2; ++i) acc[m][i] = 0.0f;
    uint64_t da[MB][kSteps], db[kSteps];
    const uint32_t a_addr = ptx::smem_u32(a_smem) + (SplitN ? 0 : wg) * MB * kABlockBytes;
    const uint32_t b_addr = ptx::smem_u32(b_smem) + (SplitN ? wg * N * 128 : 0);  // split: K-major rows wg * N ..
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
#pragma unroll
      for (int m = 0; m < MB; ++m)
        da[m][s] = Sw128Operand<2>::desc_kmajor(a_addr + m * kABlockBytes + Sw128Operand<2>::kmajor_step(64, 0, s));
      db[s] = KMajorB ? Sw128Operand<2>::desc_kmajor(b_addr + Sw128Operand<2>::kmajor_step(kBCols, 0, s))
                      : Sw128Operand<2>::desc_mnmajor(b_addr + Sw128Operand<2>::mnmajor_step(kBK, 0, s), kBK);
    }
    // RS: A's fragments in registers (random bf16 pairs; the values matter to the power only), never rewritten.
    uint32_t areg[RS ? MB : 1][kSteps][4];
#pragma unroll
    for (int m = 0; m < (RS ? MB : 1); ++m)
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const uint32_t i = ((threadIdx.x * MB + m) * kSteps + s) * 4 + j;
          areg[m][s][j] = random_bf16(2 * i) | static_cast<uint32_t>(random_bf16(2 * i + 1)) << 16;
        }
    auto block = [&]() {
      ptx::wgmma_fence();
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
#pragma unroll
        for (int m = 0; m < MB; ++m) {
          if constexpr (RS) {
            MmaRs<N, KMajorB ? 0 : 1>::run(acc[m], areg[m][s], db[s]);
          } else if constexpr (N == 48) {
            mma_n48(acc[m], da[m][s], db[s]);
          } else {
            ptx::Mma16<N, 0, KMajorB ? 0 : 1, false>::run(acc[m], da[m][s], db[s], 1);
          }
        }
      ptx::wgmma_commit();
      ptx::wgmma_wait<1>();
    };
    for (int i = 0; i < 8; ++i) block();  // warm-up
    ptx::wgmma_wait<0>();
    ptx::named_barrier_sync(1, 128 * WGS);  // the warpgroups start together
    const long long t0 = clock64();
    for (int i = 0; i < iters; ++i) block();
    ptx::wgmma_wait<0>();
#pragma unroll
    for (int m = 0; m < MB; ++m) ptx::fence_accumulators(acc[m]);
    const long long t1 = clock64();
    if (threadIdx.x % 128 == 0) res.cycles[blockIdx.x * WGS + wg] = static_cast<unsigned long long>(t1 - t0);
    if (threadIdx.x == 0) {
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      res.smid[blockIdx.x] = sm;
    }
    if (iters < 0) {
      float s = 0.0f;
#pragma unroll
      for (int m = 0; m < MB; ++m)
#pragma unroll
        for (int i = 0; i < N / 2; ++i) s += acc[m][i];
      res.sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
    }
    ptx::named_barrier_sync(1, 128 * WGS);
    if (threadIdx.x == 0) *done = 1;
  } else if constexpr (Writer) {
    if (threadIdx.x % 128 == 0) {
      uint32_t phase[kCopies] = {};
      bool busy[kCopies] = {};
      unsigned long long copies = 0;
      auto issue = [&](int c) {
        const uint32_t chunk = (blockIdx.x * 7919u + static_cast<uint32_t>(copies) * 131u) % src_chunks;
        (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                                   cuda::ptx::space_shared, &bars[c], uint32_t(kCopyBytes));
        cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, w_smem + c * kCopyBytes,
                                 src + static_cast<size_t>(chunk) * (kCopyBytes / 16), uint32_t(kCopyBytes), &bars[c]);
        busy[c] = true;
        ++copies;
      };
      auto wait = [&](int c) {
        while (!cuda::ptx::mbarrier_try_wait_parity(&bars[c], phase[c])) {
        }
        phase[c] ^= 1u;
        busy[c] = false;
      };
      const long long t0 = clock64();
      for (int c = 0; c < kCopies; ++c) issue(c);
      while (!*done) {
        for (int c = 0; c < kCopies; ++c) {
          wait(c);
          if (!*done) issue(c);
        }
      }
      // NOTE: the CTA must not exit with bulk copies still writing its shared memory: wait for the ones in flight.
      for (int c = 0; c < kCopies; ++c)
        if (busy[c]) wait(c);
      const long long t1 = clock64();
      res.written[blockIdx.x] = copies * kCopyBytes;
      res.wcycles[blockIdx.x] = static_cast<unsigned long long>(t1 - t0);
    }
  }
}

template <int N, int WGS, int MB, bool KMajorB, bool Writer, bool SplitN = false, bool RS = false>
void run_variant(int iters, int sms, const uint4* src, uint32_t src_chunks, Result res) {
  auto kernel = rate_kernel<N, WGS, MB, KMajorB, Writer, SplitN, RS>;
  // NOTE: __launch_bounds__(.., 1) is a minimum; more than 114 KiB of shared memory a CTA is what keeps a second CTA
  // off an SM (228 KiB an SM), so that each of the 132 CTAs has its SM to itself (checked below by %smid).
  constexpr int smem = smem_bytes<N, WGS, MB, KMajorB, Writer, SplitN>() > 117 * 1024
                           ? smem_bytes<N, WGS, MB, KMajorB, Writer, SplitN>()
                           : 117 * 1024;
  const char* tag_rs = RS ? "RS" : "SS";
  std::fprintf(stderr, "launching %s n%d wg%d mb%d%s B %s %s\n", tag_rs, N, WGS, MB, SplitN ? " split-n" : "",
               KMajorB ? "kmaj" : "nmaj", Writer ? "writer" : "-");
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int threads = 128 * (WGS + (Writer ? 1 : 0));
  double flop_per_clk[2] = {}, cyc_per_block[2] = {}, wg_spread[2] = {}, tflops = 0, w_bpc = 0;
  for (int pass = 0; pass < 2; ++pass) {  // pass 0: one CTA alone; pass 1: one CTA per SM
    const int grid = pass == 0 ? 1 : sms;
    kernel<<<grid, threads, smem>>>(iters / 4, res, src, src_chunks);  // warm the clocks
    CK(cudaGetLastError());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    kernel<<<grid, threads, smem>>>(iters, res, src, src_chunks);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    std::vector<unsigned long long> cyc(grid * WGS), wr(grid), wc(grid);
    CK(cudaMemcpy(cyc.data(), res.cycles, cyc.size() * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(wr.data(), res.written, wr.size() * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(wc.data(), res.wcycles, wc.size() * 8, cudaMemcpyDeviceToHost));
    // A CTA's time is its slowest warpgroup's (the tensor cores may serve one first); the mean over CTAs of that.
    double span_sum = 0, spread = 0;
    for (int b = 0; b < grid; ++b) {
      double lo = 1e300, hi = 0;
      for (int w = 0; w < WGS; ++w) {
        const double c = static_cast<double>(cyc[b * WGS + w]);
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
      }
      span_sum += hi;
      spread = spread > hi / lo ? spread : hi / lo;
    }
    const double flop_cta = double(WGS) * MB * iters * kSteps * 64.0 * N * 16 * 2;
    cyc_per_block[pass] = span_sum / grid / iters;
    flop_per_clk[pass] = flop_cta / (span_sum / grid);
    wg_spread[pass] = spread;
    std::vector<unsigned> smid(grid);
    CK(cudaMemcpy(smid.data(), res.smid, smid.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    std::sort(smid.begin(), smid.end());
    if (std::adjacent_find(smid.begin(), smid.end()) != smid.end())
      std::fprintf(stderr, "  WARNING: two CTAs shared an SM (pass %d): the per-SM figures are not one CTA's\n", pass);
    if (pass == 1) {
      tflops = flop_cta * grid / (ms * 1e-3) / 1e12;
      if (Writer) {
        double b = 0, c = 0;
        for (int i = 0; i < grid; ++i) {
          b += static_cast<double>(wr[i]);
          c += static_cast<double>(wc[i]);
        }
        w_bpc = b / c;
      }
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
  }
  std::printf(
      "%s n%-3d wg%d mb%d%s B %s %-6s | 1 CTA: %7.1f cyc/blk %6.0f FLOP/clk %5.3f | %d CTAs: %7.1f cyc/blk %6.0f "
      "FLOP/clk %5.3f %6.1f TFLOP/s | writer %5.1f B/clk | warpgroups' slowest/fastest %.3f\n",
      tag_rs, N, WGS, MB, SplitN ? " split-n" : "", KMajorB ? "kmaj" : "nmaj", Writer ? "writer" : "-",
      cyc_per_block[0], flop_per_clk[0], flop_per_clk[0] / 4096.0, sms, cyc_per_block[1], flop_per_clk[1],
      flop_per_clk[1] / 4096.0, tflops, w_bpc, wg_spread[1]);
  std::fflush(stdout);
}

// Sustained mode: one CTA per SM launched back to back for `seconds`, as a long GEMM runs at the card's 700 W cap,
// where the clock follows the energy a FLOP costs (docs/perf-notes.md, "Energy per FLOP"): the TFLOP/s and SM clock
// (clock64 cycles over event time) of the launches in the last half of the window, median. SS against RS on the same
// tile says whether A's shared-memory reads cost energy enough to matter at the cap.
template <int N, int WGS, int MB, bool KMajorB, bool RS>
void run_sustained(double seconds, int sms, const uint4* src, uint32_t src_chunks, Result res) {
  auto kernel = rate_kernel<N, WGS, MB, KMajorB, false, false, RS>;
  constexpr int raw = smem_bytes<N, WGS, MB, KMajorB, false, false>();
  constexpr int smem = raw > 117 * 1024 ? raw : 117 * 1024;
  std::fprintf(stderr, "sustained %s n%d wg%d mb%d B %s\n", RS ? "RS" : "SS", N, WGS, MB, KMajorB ? "kmaj" : "nmaj");
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int threads = 128 * WGS;
  const int iters = 32768;  // ~8-20 ms a launch (the command line's iters is not used here)
  const double flop_cta = double(WGS) * MB * iters * kSteps * 64.0 * N * 16 * 2;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<double> tflops, mhz;
  std::vector<unsigned long long> cyc(sms * WGS);
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    CK(cudaEventRecord(e0));
    kernel<<<sms, threads, smem>>>(iters, res, src, src_chunks);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaMemcpy(cyc.data(), res.cycles, cyc.size() * 8, cudaMemcpyDeviceToHost));
    const double hi = static_cast<double>(*std::max_element(cyc.begin(), cyc.end()));
    tflops.push_back(flop_cta * sms / (ms * 1e-3) / 1e12);
    mhz.push_back(hi / (ms * 1e-3) / 1e6);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  const auto median_late = [](std::vector<double> v) {
    v.erase(v.begin(), v.begin() + static_cast<long>(v.size() / 2));
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  std::printf("sustained %s n%-3d wg%d mb%d B %s | %3zu launches in %.1f s | last half: %6.1f TFLOP/s, SM clock ~%4.0f "
              "MHz (slowest CTA's cycles over event time)\n",
              RS ? "RS" : "SS", N, WGS, MB, KMajorB ? "kmaj" : "nmaj", tflops.size(), seconds, median_late(tflops),
              median_late(mhz));
  std::fflush(stdout);
}

template <int N, int WGS, int MB>
void run_layouts(int iters, int sms, const uint4* src, uint32_t chunks, Result res) {
  run_variant<N, WGS, MB, true, false>(iters, sms, src, chunks, res);
  run_variant<N, WGS, MB, false, false>(iters, sms, src, chunks, res);
  run_variant<N, WGS, MB, true, true>(iters, sms, src, chunks, res);
  run_variant<N, WGS, MB, false, true>(iters, sms, src, chunks, res);
}

// RS variants; with the writer only where the registers allow (with its warpgroup n256 x 2 and n192 x 3 get 168 and 128
// registers a thread, and ptxas serialises their wgmmas: C7512).
template <int N, int WGS, bool WithWriter>
void run_rs(int iters, int sms, const uint4* src, uint32_t chunks, Result res) {
  run_variant<N, WGS, 1, true, false, false, true>(iters, sms, src, chunks, res);
  run_variant<N, WGS, 1, false, false, false, true>(iters, sms, src, chunks, res);
  if constexpr (WithWriter) {
    run_variant<N, WGS, 1, true, true, false, true>(iters, sms, src, chunks, res);
    run_variant<N, WGS, 1, false, true, false, true>(iters, sms, src, chunks, res);
  }
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 4096;
  const double sustained_s = argc > 2 ? std::atof(argv[2]) : 0.0;  // > 0: the sustained mode only
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  Result res{};
  CK(cudaMalloc(&res.cycles, sizeof(unsigned long long) * sms * 4));
  CK(cudaMalloc(&res.written, sizeof(unsigned long long) * sms));
  CK(cudaMalloc(&res.wcycles, sizeof(unsigned long long) * sms));
  CK(cudaMalloc(&res.smid, sizeof(unsigned) * sms));
  CK(cudaMalloc(&res.sink, sizeof(float) * sms * 512));
  CK(cudaMemset(res.written, 0, sizeof(unsigned long long) * sms));
  CK(cudaMemset(res.wcycles, 0, sizeof(unsigned long long) * sms));
  // The writer's source: 24 MiB, so that its copies come from L2 (50 MiB) once warm, as a tile's operands mostly do.
  const size_t src_bytes = size_t(24) << 20;
  uint4* src = nullptr;
  CK(cudaMalloc(&src, src_bytes));
  CK(cudaMemset(src, 0x3c, src_bytes));
  const uint32_t chunks = static_cast<uint32_t>(src_bytes / kCopyBytes);
  if (sustained_s > 0) {
    std::printf("wgmma sustained rate, %.1f s a variant, one CTA per SM on %d SMs\n", sustained_s, sms);
    // The tiles of the square and llm suites' winners (128x256, 128x128), SS against RS, B N-major and K-major.
    run_sustained<256, 2, 1, false, false>(sustained_s, sms, src, chunks, res);
    run_sustained<256, 2, 1, false, true>(sustained_s, sms, src, chunks, res);
    run_sustained<256, 2, 1, true, false>(sustained_s, sms, src, chunks, res);
    run_sustained<256, 2, 1, true, true>(sustained_s, sms, src, chunks, res);
    run_sustained<128, 2, 1, false, false>(sustained_s, sms, src, chunks, res);
    run_sustained<128, 2, 1, false, true>(sustained_s, sms, src, chunks, res);
    run_sustained<256, 2, 1, false, false>(sustained_s, sms, src, chunks, res);  // the first again: drift
    return 0;
  }
  std::printf(
      "wgmma m64nNk16 bf16 SS rate, %d K blocks of 64 a warpgroup, %d SMs (peak 4096 dense FLOP a clock an SM)\n",
      iters, sms);
  // The tiles in the table and cuBLASLt's: 128x256 (n256 wg2), 128x128 (n128 wg2), 128x192 (n192 wg2),
  // 192x192 (n192 wg3), 192x96 (n96 wg3), 128x160 (n160 wg2), 64x256 / 64x128 (wg1), ping-pong 128x128 (n128 wg1
  // mb2 and wg2 mb2: two consumers each on a whole tile), a 192x96 ping-pong consumer's first two m-blocks (n96 mb2).
  run_layouts<256, 2, 1>(iters, sms, src, chunks, res);
  run_layouts<256, 1, 1>(iters, sms, src, chunks, res);
  run_layouts<192, 2, 1>(iters, sms, src, chunks, res);
  run_layouts<192, 3, 1>(iters, sms, src, chunks, res);
  run_layouts<160, 2, 1>(iters, sms, src, chunks, res);
  run_layouts<128, 2, 1>(iters, sms, src, chunks, res);
  run_layouts<128, 1, 1>(iters, sms, src, chunks, res);
  run_layouts<128, 2, 2>(iters, sms, src, chunks, res);
  run_layouts<96, 3, 1>(iters, sms, src, chunks, res);
  run_layouts<96, 2, 1>(iters, sms, src, chunks, res);
  run_layouts<96, 2, 2>(iters, sms, src, chunks, res);
  run_layouts<64, 2, 1>(iters, sms, src, chunks, res);
  run_layouts<64, 2, 2>(iters, sms, src, chunks, res);
  // 192x96 as two consumers on 48 columns each (three m-blocks of n48, A shared), and one consumer on all of it.
  run_variant<48, 2, 3, true, false, true>(iters, sms, src, chunks, res);
  // (No writer variant: with it ptxas serialises every n48 wgmma, C7520 "WG.AR in divergent path".)
  run_layouts<96, 1, 3>(iters, sms, src, chunks, res);
  // Two such consumers at once (two 192x96 tiles, 144 accumulator registers each); no writer variant: with its
  // warpgroup the 384 threads get 168 registers and the accumulators spill.
  run_variant<96, 2, 3, true, false>(iters, sms, src, chunks, res);
  run_variant<96, 2, 3, false, false>(iters, sms, src, chunks, res);
  // A from registers (RS): the same tiles without A's shared-memory reads.
  run_rs<256, 2, false>(iters, sms, src, chunks, res);
  run_rs<192, 3, false>(iters, sms, src, chunks, res);
  run_rs<128, 2, true>(iters, sms, src, chunks, res);
  run_rs<96, 3, true>(iters, sms, src, chunks, res);
  return 0;
}
