// repitch_probe.cu — bandwidth of the pad path's row copy (kernels/repitch.cuh) on the misaligned suite's copies,
// against cudaMemcpyAsync of the same bytes and against variants with more bytes in flight per thread.
// Build: nvcc -O3 -std=c++17 -arch=sm_90a -I. lab/2026-12-04-session32/repitch_probe.cu -o repitch_probe
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "kernels/repitch.cuh"

using namespace tmagemm::kernels;

// Variant: U consecutive 16-byte destination blocks per thread per step, loads issued before any store.
template <int U>
__global__ void __launch_bounds__(256) repitch_u(void* __restrict__ dst, long long dst_ld, const void* __restrict__ src,
                                                 long long src_ld, long long rows, long long cols) {
  using cuda::std::uintptr_t;
  const long long row_bytes = cols * 2;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    char* d0 = static_cast<char*>(dst) + r * dst_ld * 2;
    const char* s0 = static_cast<const char*>(src) + r * src_ld * 2;
    const uintptr_t dstart = reinterpret_cast<uintptr_t>(d0), dend = dstart + row_bytes;
    const uintptr_t sstart = reinterpret_cast<uintptr_t>(s0), send = sstart + row_bytes;
    const uintptr_t first = (dstart + 15) & ~uintptr_t{15}, last = dend & ~uintptr_t{15};
    const unsigned shift = static_cast<unsigned>((sstart - dstart) & 15);
    auto copy_elems = [&](uintptr_t from, uintptr_t to) {
      for (uintptr_t x = from; x < to; x += 2)
        *reinterpret_cast<unsigned short*>(x) = *reinterpret_cast<const unsigned short*>(sstart + (x - dstart));
    };
    if (first >= last) { if (threadIdx.x == 0) copy_elems(dstart, dend); continue; }
    if (threadIdx.x == 0) copy_elems(dstart, first);
    if (threadIdx.x == 1) copy_elems(last, dend);
    // thread t takes blocks t, t + 256, ..., U of them at once
    for (uintptr_t x0 = first + 16 * threadIdx.x; x0 < last; x0 += 16 * blockDim.x * U) {
      uint4 lo[U], hi[U];
      bool full[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const uintptr_t x = x0 + 16 * blockDim.x * u;
        const uintptr_t s = sstart + (x - dstart), a = s & ~uintptr_t{15};
        full[u] = x < last && (shift == 0 || a + 32 <= send);
        if (full[u]) {
          lo[u] = __ldg(reinterpret_cast<const uint4*>(a));
          hi[u] = shift ? __ldg(reinterpret_cast<const uint4*>(a + 16)) : lo[u];
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const uintptr_t x = x0 + 16 * blockDim.x * u;
        if (x >= last) continue;
        const uintptr_t s = sstart + (x - dstart), a = s & ~uintptr_t{15};
        uint4 v;
        if (full[u]) {
          v = shift ? shift_window(lo[u], hi[u], static_cast<unsigned>(s - a)) : lo[u];
        } else {
          unsigned short e[8];
          for (int i = 0; i < 8; ++i) e[i] = *reinterpret_cast<const unsigned short*>(s + 2 * i);
          v = make_uint4(e[0] | unsigned(e[1]) << 16, e[2] | unsigned(e[3]) << 16, e[4] | unsigned(e[5]) << 16,
                         e[6] | unsigned(e[7]) << 16);
        }
        *reinterpret_cast<uint4*>(x) = v;
      }
    }
  }
}


// Variant: the (row, block) pairs flattened, grid-stride, restrict pointers, unrolled: more independent loads in flight.
__global__ void __launch_bounds__(256) repitch_flat(void* __restrict__ dst, long long dst_ld,
                                                    const void* __restrict__ src, long long src_ld, long long rows,
                                                    long long cols) {
  using cuda::std::uintptr_t;
  const long long row_bytes = cols * 2;
  const long long nb = row_bytes / 16 + 2;  // blocks a row's destination can overlap, and then some
  const long long total = rows * nb;
#pragma unroll 4
  for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
       idx += (long long)gridDim.x * blockDim.x) {
    const long long r = idx / nb, j = idx - r * nb;
    const uintptr_t dstart = reinterpret_cast<uintptr_t>(static_cast<char*>(dst) + r * dst_ld * 2), dend = dstart + row_bytes;
    const uintptr_t sstart = reinterpret_cast<uintptr_t>(static_cast<const char*>(src) + r * src_ld * 2), send = sstart + row_bytes;
    const uintptr_t first = (dstart + 15) & ~uintptr_t{15}, last = dend & ~uintptr_t{15};
    if (first >= last) {
      if (j == 0) for (uintptr_t x = dstart; x < dend; x += 2)
        *reinterpret_cast<unsigned short*>(x) = *reinterpret_cast<const unsigned short*>(sstart + (x - dstart));
      continue;
    }
    if (j == nb - 1) {
      for (uintptr_t x = dstart; x < first; x += 2)
        *reinterpret_cast<unsigned short*>(x) = *reinterpret_cast<const unsigned short*>(sstart + (x - dstart));
      for (uintptr_t x = last; x < dend; x += 2)
        *reinterpret_cast<unsigned short*>(x) = *reinterpret_cast<const unsigned short*>(sstart + (x - dstart));
      continue;
    }
    const uintptr_t x = first + 16 * j;
    if (x >= last) continue;
    const unsigned shift = static_cast<unsigned>((sstart - dstart) & 15);
    const uintptr_t s = sstart + (x - dstart), a = s & ~uintptr_t{15};
    uint4 v;
    if (shift == 0) {
      v = __ldg(reinterpret_cast<const uint4*>(a));
    } else if (a + 32 <= send) {
      v = shift_window(__ldg(reinterpret_cast<const uint4*>(a)), __ldg(reinterpret_cast<const uint4*>(a + 16)),
                       static_cast<unsigned>(s - a));
    } else {
      unsigned short e[8];
      for (int i = 0; i < 8; ++i) e[i] = *reinterpret_cast<const unsigned short*>(s + 2 * i);
      v = make_uint4(e[0] | unsigned(e[1]) << 16, e[2] | unsigned(e[3]) << 16, e[4] | unsigned(e[5]) << 16,
                     e[6] | unsigned(e[7]) << 16);
    }
    *reinterpret_cast<uint4*>(x) = v;
  }
}

__global__ void touch(float* p, size_t n) {  // the write flush
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = 1.0f;
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  struct Case { const char* what; long long rows, cols, src_ld, dst_ld; };
  const Case cases[] = {
      {"B ld N+1 (4096 x 14336, 14337 -> 14336)", 4096, 14336, 14337, 14336},
      {"out ld N+3 copy back (4096 x 14336, 14336 -> 14339)", 4096, 14336, 14336, 14339},
      {"N odd B (14336 x 4095, 4095 -> 4160)", 14336, 4095, 4095, 4160},
      {"aligned rows (4096 x 14336, 14336 -> 14336)", 4096, 14336, 14336, 14336},
  };
  const size_t cap = size_t(4100) * 14400 * 2 + 4096;
  char *src, *dst;
  float* flush;
  const size_t flush_n = size_t(256) << 20 >> 2;
  cudaMalloc(&src, cap); cudaMalloc(&dst, cap); cudaMalloc(&flush, flush_n * 4);
  cudaMemset(src, 1, cap);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto timeit = [&](auto&& launch) {
    std::vector<float> t;
    for (int i = 0; i < 12; ++i) {
      touch<<<sms * 4, 256>>>(flush, flush_n);
      cudaEventRecord(e0); launch(); cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1); if (i >= 2) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  for (const Case& c : cases) {
    const double bytes = 2.0 * c.rows * c.cols * 2;  // read + write
    const int grid8 = (int)std::min<long long>(c.rows, 8LL * sms);
    float ms0 = timeit([&] { repitch16<<<grid8, 256>>>(dst, c.dst_ld, src, c.src_ld, c.rows, c.cols); });
    float ms2 = timeit([&] { repitch_u<2><<<grid8, 256>>>(dst, c.dst_ld, src, c.src_ld, c.rows, c.cols); });
    float ms4 = timeit([&] { repitch_u<4><<<grid8, 256>>>(dst, c.dst_ld, src, c.src_ld, c.rows, c.cols); });
    float ms4b = timeit([&] { repitch_u<4><<<(int)std::min<long long>(c.rows, 4LL * sms), 256>>>(dst, c.dst_ld, src, c.src_ld, c.rows, c.cols); });
    float msf = timeit([&] { repitch_flat<<<sms * 8, 256>>>(dst, c.dst_ld, src, c.src_ld, c.rows, c.cols); });
    float msf4 = timeit([&] { repitch_flat<<<sms * 4, 256>>>(dst, c.dst_ld, src, c.src_ld, c.rows, c.cols); });
    float msf16 = timeit([&] { repitch_flat<<<sms * 16, 256>>>(dst, c.dst_ld, src, c.src_ld, c.rows, c.cols); });
    float msm = timeit([&] { cudaMemcpyAsync(dst, src, size_t(c.rows * c.cols * 2), cudaMemcpyDeviceToDevice); });
    printf("%s: %.1f MB r+w\n", c.what, bytes / 1e6);
    auto pr = [&](const char* n, float ms) { printf("  %-22s %8.1f us %6.2f TB/s\n", n, ms * 1e3, bytes / (ms * 1e-3) / 1e12); };
    pr("repitch16 (main)", ms0); pr("U=2", ms2); pr("U=4", ms4); pr("U=4 grid 4/SM", ms4b); pr("flat 8/SM", msf); pr("flat 4/SM", msf4); pr("flat 16/SM", msf16); pr("memcpy (same bytes)", msm);
  }
  printf("err: %s\n", cudaGetErrorString(cudaGetLastError()));
}
