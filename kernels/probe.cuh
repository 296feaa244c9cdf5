// probe.cuh — a tiny kernel that proves the JIT tool chain works end to end: NVRTC compiles it for sm_90a
// with libcu++ (cuda::ptx mbarrier calls) and an sm_90a-only PTX instruction (wgmma.fence), the embedded
// header mechanism finds it, and (on a GPU) it loads and runs. `tmagemm compile-check` and the jit tests use
// it; it does no GEMM work.
//
// Contract: launch with one CTA of any size that is a multiple of 32 threads (e.g. 128); on return
// out[0] == kProbeSm90a when the sm_90a feature set was compiled in (wgmma.fence executed), else kProbeOther.
#pragma once

#include <cuda/ptx>
#include <cuda/std/cstdint>

namespace tmagemm::kernels {

constexpr int kProbeSm90a = 0x90a;
constexpr int kProbeOther = -1;

__global__ void probe_kernel(int* out) {
  __shared__ alignas(8) cuda::std::uint64_t barrier;
  if (threadIdx.x == 0) {
    cuda::ptx::mbarrier_init(&barrier, 1u);  // one arrival completes phase 0
  }
  __syncthreads();  // makes the initialised barrier visible to the CTA
  if (threadIdx.x == 0) {
    (void)cuda::ptx::mbarrier_arrive(&barrier);
  }
  while (!cuda::ptx::mbarrier_try_wait_parity(&barrier, 0u)) {
  }
  int value = kProbeOther;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // NOTE: wgmma.* exists only on the sm_90a target; .sync.aligned: every thread of the warp executes it.
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  value = kProbeSm90a;
#endif
  if (threadIdx.x == 0) out[0] = value;
}

}  // namespace tmagemm::kernels
