// bcls_probe.cu — one TMA load of a row-class box (B's rows k = 8 q + r, pitch 8 x ld, base aligned down to 16 bytes,
// columns shifted by the misalignment) through a tensor map passed (1) in a struct of 8 maps, (2) alone; prints the
// error or the first elements. Build: nvcc -arch=sm_90a -std=c++17 -o bcls_probe bcls_probe.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>

struct alignas(64) Desc { char b[128]; };
struct Classes { Desc map[8]; int col[8]; };

__device__ void load_box(const void* map, int c0, int c1, unsigned short* out) {
  __shared__ alignas(1024) unsigned short tile[8 * 64];
  __shared__ alignas(8) unsigned long long bar;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"((unsigned)__cvta_generic_to_shared(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(&bar)), "r"(1024));
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
        ::"r"((unsigned)__cvta_generic_to_shared(tile)), "l"(map), "r"(c0), "r"(c1), "r"(0),
        "r"((unsigned)__cvta_generic_to_shared(&bar)) : "memory");
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"((unsigned)__cvta_generic_to_shared(&bar)));
  for (int i = threadIdx.x; i < 512; i += blockDim.x) out[i] = tile[i];
}

__global__ void via_struct(const __grid_constant__ Desc a, const __grid_constant__ Classes bc, int r, unsigned short* out) {
  load_box(&bc.map[r], bc.col[r], 0, out);
}
__global__ void via_single(const __grid_constant__ Desc a, const __grid_constant__ Desc m, int col, unsigned short* out) {
  load_box(&m, col, 0, out);
}

int main() {
  cuInit(0);
  const long long K = 64, N = 391, ld = N;
  std::vector<unsigned short> h(K * ld);
  for (long long i = 0; i < K * ld; ++i) h[i] = (unsigned short)(i & 0xffff);
  unsigned short *dB, *dOut;
  cudaMalloc(&dB, h.size() * 2);
  cudaMalloc(&dOut, 1024);
  cudaMemcpy(dB, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  Classes bc;
  memset(&bc, 0, sizeof(bc));
  for (int r = 0; r < 8; ++r) {
    uintptr_t row = (uintptr_t)dB + r * ld * 2, base = row & ~uintptr_t{15};
    bc.col[r] = (int)((row - base) / 2);
    cuuint64_t dims[3] = {(cuuint64_t)(N + bc.col[r]), (cuuint64_t)((K - r + 7) / 8), 1};
    cuuint64_t strides[2] = {(cuuint64_t)(ld * 8 * 2), 0};
    cuuint32_t box[3] = {64, 8, 1}, es[3] = {1, 1, 1};
    CUresult e = cuTensorMapEncodeTiled((CUtensorMap*)&bc.map[r], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, (void*)base, dims,
                                        strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    printf("class %d: base off %d col %d encode %d\n", r, (int)(base - (uintptr_t)dB), bc.col[r], (int)e);
  }
  Desc dummy;
  memset(&dummy, 0, sizeof(dummy));
  for (int mode = 0; mode < 2; ++mode)
    for (int r = 0; r < 8; ++r) {
      if (mode == 0)
        via_struct<<<1, 128>>>(dummy, bc, r, dOut);
      else
        via_single<<<1, 128>>>(dummy, bc.map[r], bc.col[r], dOut);
      cudaError_t e = cudaDeviceSynchronize();
      unsigned short o[512];
      if (e == cudaSuccess) cudaMemcpy(o, dOut, 1024, cudaMemcpyDeviceToHost);
      // row q of the box = B row 8 q + r; element c (logical, unswizzled: chunk ^ q) should be h[(8q + r) ld + c].
      int bad = 0;
      if (e == cudaSuccess)
        for (int q = 0; q < 8; ++q)
          for (int c = 0; c < 64; ++c) {
            int phys = q * 64 + (((c / 8) ^ q) * 8) + c % 8;
            if (o[phys] != h[(8 * q + r) * ld + c]) ++bad;
          }
      printf("%s r=%d: %s, mismatches %d\n", mode == 0 ? "struct" : "single", r, cudaGetErrorString(e), bad);
      if (e != cudaSuccess) return 1;
    }
  return 0;
}
