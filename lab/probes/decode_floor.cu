// decode_floor.cu — lab probe (issue 21 point 3): how long does it take just to stream a decode GEMM's weight from
// HBM, timed as `tmagemm bench` times a run (L2 flushed by a 256 MiB write or read outside the timed region, CUDA
// events around one launch, median)? The skinny kernel and cuBLASLt both take ~14 µs for a 32 MB weight under the
// read flush (2.4 TB/s) and ~110 µs for 470 MB (4.3 TB/s); this probe gives the floor the kernel has to beat.
//   empty      : an empty kernel on 132 CTAs, unclustered and in clusters of 2 / 4 (launch + cluster cost)
//   bulk S x C : 132 CTAs (or 128, 112, 64: the skinny kernel's grids), one lane streams the CTA's contiguous share through a ring of S stages of C bytes
//                with cp.async.bulk (1-D TMA), nothing consumed (the weight stream alone)
//   ld         : 132 x 4 CTAs of 256 threads, 8 independent 16-byte ld.global.nc per thread in flight
// Build: nvcc -O3 -std=c++17 -arch=sm_90a -o decode_floor decode_floor.cu ; run: ./decode_floor
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "stream_timing.cuh"  // CK, the flushes, time_med, bulk_stream

__global__ void empty_kernel() {}

__global__ void ld_stream(const uint4* w, unsigned long long n, unsigned* sink) {
  unsigned x = 0;
  const unsigned long long stride = gridDim.x * blockDim.x;
  unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 7 * stride < n; i += 8 * stride) {
    uint4 v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = __ldg(w + i + j * stride);
#pragma unroll
    for (int j = 0; j < 8; ++j) x ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  for (; i < n; i += stride) x ^= __ldg(w + i).x;
  if (x == 0x12345678u) *sink = x;
}

void launch_cluster_empty(Ctx& c, int grid, int cluster) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(160);
  cfg.stream = c.st;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = cluster;
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, empty_kernel));
}

template <int S, int C>
void run_bulk(Ctx& c, const unsigned char* w, size_t bytes, int grid, bool read, const char* name) {
  const int smem = S * C;
  CK(cudaFuncSetAttribute(bulk_stream<S, C>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const unsigned long long share = (bytes / grid) / C * C;
  float us = time_med(c, read, 200, [&] { bulk_stream<S, C><<<grid, 32, smem, c.st>>>(w, share, c.sink); });
  std::printf("  %-26s grid %3d: %8.2f us  %5.2f TB/s\n", name, grid, us,
              static_cast<double>(share) * grid / (us * 1e-6) / 1e12);
}

int main() {
  Ctx c = make_ctx();
  const size_t max_bytes = size_t{28672} * 8192 * 2;
  unsigned char* w = make_weight(max_bytes);
  for (int read = 0; read < 2; ++read) {
    std::printf("== flush %s\n", read ? "read" : "write");
    std::printf("  empty 132 CTAs            : %8.2f us\n",
                time_med(c, read, 300, [&] { empty_kernel<<<132, 160, 0, c.st>>>(); }));
    for (int cl : {1, 2, 4, 8})
      std::printf("  empty 128 CTAs cluster %d  : %8.2f us\n", cl,
                  time_med(c, read, 300, [&] { launch_cluster_empty(c, 128, cl); }));
    const size_t sizes[3] = {size_t{4096} * 4096 * 2, size_t{14336} * 4096 * 2, max_bytes};
    for (size_t bytes : sizes) {
      std::printf(" weight %zu MB\n", bytes >> 20);
      run_bulk<8, 16384>(c, w, bytes, 132, read, "bulk 8 x 16 KB");
      run_bulk<8, 16384>(c, w, bytes, 128, read, "bulk 8 x 16 KB");
      run_bulk<12, 16384>(c, w, bytes, 132, read, "bulk 12 x 16 KB");
      run_bulk<4, 32768>(c, w, bytes, 132, read, "bulk 4 x 32 KB");
      run_bulk<6, 32768>(c, w, bytes, 132, read, "bulk 6 x 32 KB");
      run_bulk<16, 8192>(c, w, bytes, 132, read, "bulk 16 x 8 KB");
      run_bulk<4, 16384>(c, w, bytes, 264, read, "bulk 4 x 16 KB, 2 per SM");
      run_bulk<8, 16384>(c, w, bytes, 64, read, "bulk 8 x 16 KB");
      run_bulk<6, 32768>(c, w, bytes, 64, read, "bulk 6 x 32 KB");
      run_bulk<13, 16384>(c, w, bytes, 64, read, "bulk 13 x 16 KB");
      run_bulk<8, 16384>(c, w, bytes, 112, read, "bulk 8 x 16 KB");
      const unsigned long long n = bytes / 16;
      float us = time_med(c, read, 200,
                          [&] { ld_stream<<<132 * 4, 256, 0, c.st>>>(reinterpret_cast<const uint4*>(w), n, c.sink); });
      std::printf("  %-26s          : %8.2f us  %5.2f TB/s\n", "ld.global.nc x8", us, bytes / (us * 1e-6) / 1e12);
    }
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
